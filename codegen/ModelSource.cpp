//===- ModelSource.cpp - the C++ of a model's executable --------*- C++ -*-===//
#include "codegen/ModelSource.h"

#include <algorithm>
#include <sstream>

#include "capsules/Report.h"
#include "codegen/EmitSupport.h"
#include "codegen/ModelDescription.h"

namespace vouch::codegen {
namespace {

/// `bytes` as adjacent string literals, a line of text or 96 characters
/// each: printable characters as themselves (the PTX, and the PTX text a
/// -lineinfo cubin keeps, stay readable, and the file is less than half of
/// what escaping every byte makes), others as three-digit octal escapes,
/// which never run into the next character. '?' is escaped so that no
/// trigraph forms.
std::string bytesLiteral(const std::string &bytes) {
  std::string out = "\n  \"";
  size_t lineStart = out.size();
  for (size_t i = 0; i < bytes.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '"' || c == '\\' || c == '?') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += '\\';
      out += static_cast<char>('0' + (c >> 6));
      out += static_cast<char>('0' + ((c >> 3) & 7));
      out += static_cast<char>('0' + (c & 7));
    }
    if (i + 1 < bytes.size() && (c == '\n' || out.size() - lineStart >= 96)) {
      out += "\"\n  \"";
      lineStart = out.size();
    }
  }
  return out + "\"";
}

/// A backend's header line and capsule reports as constants `k<name>Header`
/// and `k<name>Capsules`, a table of (capsule, report) pairs, and the
/// arguments passing them: a brace list of string pairs would be built by
/// straight-line code that g++ -O2 spends half a second on.
struct BackendText {
  std::string definitions, arguments;
};

/// What the executor's cuBLAS / cuBLASLt calls compute in
/// (runtime/cuda/gemm_call.h's ProductMath, by name): what the plan's library
/// capsules say they compute in under its profile.
/// What the plan's cuBLAS / cuBLASLt products round their operands to: the
/// cuda executable's ProductMath.
capsules::ProductPrecision gemmProductPrecision(const AcceptedGraphPlan &plan) {
  capsules::ProductPrecision math = capsules::ProductPrecision::Fp32;
  for (const capsules::KernelCapsule &c : plan.capsules())
    if (c.provider == capsules::Provider::Cublas ||
        c.provider == capsules::Provider::Cublaslt)
      math = std::max(math, capsules::productPrecisionOf(
                                c.numeric, plan.profile().products));
  return math;
}

/// gemmProductPrecision as the name of its ProductMath enumerator.
const char *gemmProductMath(const AcceptedGraphPlan &plan) {
  // ProductMath's enumerators, in ProductPrecision's order.
  static const char *const kNames[] = {"Fp32", "Tf32", "Bf16"};
  return kNames[static_cast<int>(gemmProductPrecision(plan))];
}

BackendText backendText(const std::string &name, const std::string &header,
                        const AcceptedGraphPlan &plan) {
  std::string headerName = "k" + name + "Header";
  std::string table = "k" + name + "Capsules";
  std::ostringstream out;
  out << "const char " << headerName << "[] = " << cppStringLiteral(header)
      << ";\nconst std::pair<const char*, const char*> " << table << "[] = {";
  for (const capsules::KernelCapsule &c : plan.capsules())
    out << "\n  {" << cppStringLiteral(c.name) << ", "
        << cppStringLiteral(capsules::renderCapsuleEntry(c, plan.profile().products))
        << "},";
  if (plan.capsules().empty())
    out << "{nullptr, nullptr}"; // a placeholder: an array may not be empty
  out << "};\n\n";
  return {out.str(), headerName +
                         ",\n      std::map<std::string, std::string>(" +
                         table + ", " + table + " + " +
                         std::to_string(plan.capsules().size()) + ")"};
}

/// `bytes` and a NUL after them as the read-only array `symbol` (C
/// linkage, aligned to `align`): a string literal, or, where `blobs`
/// collects them, the file `<symbol>.bin` the assembler includes
/// (`.incbin`, found through the build's `-Xassembler -I<its directory>`).
/// g++ reads a literal at about 6 MB/s; the assembler copies a file: GPT-2's
/// cubin and PTX are 17 MB of literal, 3 s of g++.
std::string byteArray(const std::string &symbol, const std::string &bytes,
                      int align, std::vector<SourceBlob> *blobs) {
  if (!blobs)
    return "extern \"C\" alignas(" + std::to_string(align) + ") const char " +
           symbol + "[] = " + bytesLiteral(bytes) + ";\n";
  blobs->push_back({symbol + ".bin", bytes});
  const std::string a = std::to_string(align);
  return "asm(\".pushsection .rodata." + symbol + ",\\\"a\\\"\\n\"\n"
         "    \".balign " + a + "\\n\"\n"
         "    \".globl " + symbol + "\\n\"\n"
         "    \".type " + symbol + ", @object\\n\"\n"
         "    \"" + symbol + ":\\n\"\n"
         "    \".incbin \\\"" + symbol + ".bin\\\"\\n\"  // " +
         std::to_string(bytes.size()) + " bytes\n"
         "    \".byte 0\\n\"\n"
         "    \".size " + symbol + ", .-" + symbol + "\\n\"\n"
         "    \".popsection\\n\");\n"
         "extern \"C\" const char " + symbol + "[];\n";
}

/// The symbol of kernel image `i`'s cubin or PTX ("Cubin" / "Ptx").
std::string imageSymbol(const char *what, size_t i) {
  return std::string("vouch_model_k") + what + std::to_string(i);
}

/// A Program's tables as the blob runtime/model_tables.h decodes: the array
/// `<symbol>` (byteArray: its size is linear in the model's ops, and so is
/// the time g++ or the assembler takes) and `<symbol>Bytes`, its length.
std::string tablesBlob(const std::string &symbol, const ProgramBuilder &program,
                       std::vector<SourceBlob> *blobs) {
  std::string blob = program.encodeTables();
  return "// ---- the tables of program `" + program.modelName() + "` (" +
         std::to_string(blob.size()) + " bytes, runtime/model_tables.h) ----\n" +
         byteArray(symbol, blob, 8, blobs) + "const unsigned long long " + symbol +
         "Bytes = " + std::to_string(blob.size()) + ";\n\n";
}

/// The cpu kernel functions, private to part 1, and their tables for float
/// and double.
std::string cpuKernels(const ProgramBuilder &program) {
  std::ostringstream out;
  out << "namespace {\n// ---- cpu kernels: " << program.kernelCount()
      << " ----\n"
      << program.kernelSources() << "}  // namespace\n\n";
  for (const char *t : {"float", "double"}) {
    out << "const vouch::rt::CpuKernelFn kCpuKernels"
        << (t[0] == 'f' ? "F32" : "F64") << "[] = {";
    for (size_t i = 0; i < program.kernelCount(); ++i)
      out << (i ? ", " : "") << "&" << program.kernelName(i) << "<" << t << ">";
    if (program.kernelCount() == 0)
      out << "nullptr";
    out << "};\n";
  }
  return out.str() + "\n";
}

} // namespace

bool cudaRunsF64(const AcceptedGraphPlan &plan) {
  return gemmProductPrecision(plan) == capsules::ProductPrecision::Fp32;
}

mlir::FailureOr<std::string> withoutF64Entries(const std::string &source) {
  static const std::string kEntry = "extern \"C\" __global__ ";
  std::string out;
  size_t done = 0;
  for (size_t at; (at = source.find(kEntry, done)) != std::string::npos;) {
    // The name is what precedes the parameter list: the parenthesis that
    // closes last before the body (attributes such as __launch_bounds__(..)
    // come before it).
    size_t body = source.find('{', at);
    size_t close = body == std::string::npos ? body : source.rfind(')', body);
    if (close == std::string::npos || close < at)
      return mlir::failure();
    size_t open = close;
    for (int nest = 0;; --open) {
      if (source[open] == ')')
        ++nest;
      else if (source[open] == '(' && --nest == 0)
        break;
      if (open == at)
        return mlir::failure();
    }
    if (source.compare(open - 4, 4, "_f64") != 0) {
      out.append(source, done, body - done);
      done = body;
      continue;
    }
    int depth = 0;
    size_t end = body;
    for (; end < source.size(); ++end) {
      if (source[end] == '{')
        ++depth;
      else if (source[end] == '}' && --depth == 0)
        break;
    }
    if (end == source.size())
      return mlir::failure();
    out.append(source, done, at - done);
    done = end + 1;
    if (done < source.size() && source[done] == '\n')
      ++done;
  }
  out.append(source, done, std::string::npos);
  return out;
}

size_t kernelsPerCudaUnit(size_t kernelCount) {
  return std::max<size_t>(1, (kernelCount + kMaxCudaUnits - 2) /
                                 (kMaxCudaUnits - 1)); // ceil
}

mlir::FailureOr<std::vector<CudaUnit>>
cudaKernelUnits(const ProgramBuilder &program, bool withF64) {
  const std::string model = program.modelName();
  std::vector<CudaUnit> units;
  units.push_back(
      {model + ".0.cu",
       "// Generated by vouch: the CUDA kernels of model '" + model +
           "', instantiated from the kernel library (runtime/cuda/kernels/). "
           "Compiled by NVRTC. Do not edit.\n"
           "// The executor's own kernels; each kernel below includes the\n"
           "// library header it instantiates.\n" +
           (withF64 ? "" : "// f32 entry points only: this executable runs no f64 model on "
                           "cuda (vouch build --f64-kernels adds them, fp32 products only).\n") +
           "#include \"executor.cuh\"\n\n"});
  const size_t kernels = program.kernelCount();
  const size_t perUnit = kernelsPerCudaUnit(kernels);
  for (size_t first = 0; first < kernels; first += perUnit) {
    CudaUnit unit{model + "." + std::to_string(units.size()) + ".cu", ""};
    for (size_t k = first; k < std::min(kernels, first + perUnit); ++k) {
      mlir::FailureOr<std::string> text = program.kernelSource(k);
      if (!withF64)
        text = withoutF64Entries(*text);
      if (mlir::failed(text))
        return mlir::failure();
      unit.source += *text + "\n";
    }
    units.push_back(std::move(unit));
  }
  return units;
}

std::string cudaKernelSource(const std::vector<CudaUnit> &units) {
  std::string out;
  for (const CudaUnit &unit : units)
    out += unit.source;
  return out;
}

std::string cudaKernelSource(const ProgramBuilder &program) {
  return cudaKernelSource(*cudaKernelUnits(program));
}

std::string emitModelSource(const ModelSourceInput &input,
                            std::vector<SourceBlob> *blobs) {
  bool cuda = input.cuda.program != nullptr;
  std::string imageDeclarations;
  if (cuda)
    for (size_t i = 0; i < input.cuda.binaries->size(); ++i)
      imageDeclarations +=
          ", " + imageSymbol("Cubin", i) + "[], " + imageSymbol("Ptx", i) + "[]";
  std::ostringstream out;
  // The path as a C string literal: a newline, backslash or other control
  // byte in a directory name cannot end the comment or continue it onto the
  // next line.
  out << "// Generated by vouch from " << cppStringLiteral(input.sourceName) << " ("
      << (cuda ? "cuda" : "cpu") << " target). Do not edit.\n"
      << "// Compiled as it is, this file is the whole program; vouch build "
         "compiles\n// its two parts side by side instead (-DVOUCH_PART=1, "
         "-DVOUCH_PART=2).\n"
      << "#include \"runtime/program.h\"\n\n"
      << (blobs ? "// The binaries are files beside this one (<symbol>.bin), "
                  "which the\n// assembler includes: compile with -Xassembler "
                  "-I<their directory>.\n"
                : "")
      << "// Defined by part 1 for part 2.\n"
      << "extern \"C\" const char vouch_model_kCpuTables[]"
      << imageDeclarations << ";\n"
      << "namespace vouch_model {\n"
      << "extern const vouch::rt::CpuKernelFn kCpuKernelsF32[], "
         "kCpuKernelsF64[];\n"
      << "extern const unsigned long long vouch_model_kCpuTablesBytes;\n"
      << "}  // namespace vouch_model\n\n";

  // Part 1: the cpu kernels (what -O2 spends its time on), the cpu tables
  // (a blob: runtime/model_tables.h) and the cubin and PTX.
  out << "#if !defined(VOUCH_PART) || VOUCH_PART == 1\n"
      << "#include <cmath>\n#include <cstdint>\n#include <vector>\n\n"
      << "#include \"runtime/cpu_kernels.h\"\n\n"
      << "namespace vouch_model {\n"
      << cpuKernels(*input.cpu.program)
      << tablesBlob("vouch_model_kCpuTables", *input.cpu.program, blobs);
  if (cuda) {
    const std::vector<CudaBinary> &binaries = *input.cuda.binaries;
    out << "// ---- cuda: " << input.cuda.program->kernelCount()
        << " kernels in " << binaries.size() << " images compiled by NVRTC "
        << nvrtcVersionString() << " for " << binaries.front().arch
        << ", PTX embedded for newer GPUs ----\n";
    for (size_t i = 0; i < binaries.size(); ++i)
      out << byteArray(imageSymbol("Cubin", i), binaries[i].cubin, 64, blobs)
          << byteArray(imageSymbol("Ptx", i), binaries[i].ptx, 1, blobs);
  }
  out << "}  // namespace vouch_model\n#endif\n\n";

  // Part 2: the runtime's heavy headers, the cuda tables, the description,
  // the backends and main().
  out << "#if !defined(VOUCH_PART) || VOUCH_PART == 2\n"
      << "#include <map>\n#include <string>\n#include <utility>\n"
      << "#include <vector>\n\n"
      << "#include \"runtime/executor.h\"\n"
      << "#include \"runtime/model_api.h\"\n"
      << "#include \"runtime/model_tables.h\"\n"
      << "#include \"runtime/train_main.h\"\n";
  if (cuda)
    out << "#include \"runtime/cuda/executor.h\"\n";
  out << "\n";
  if (cuda)
    out << tablesBlob("vouch_model_kCudaTables", *input.cuda.program, blobs);
  out << "namespace {\nusing namespace vouch::rt;\n\n";
  out << emitDescribeFunction(input.description) << "\n";

  const AcceptedGraphPlan &cpuPlan = *input.cpu.plan;
  BackendText cpuText = backendText(
      "Cpu",
      "backend: cpu, profile " + cpuPlan.profile().spec() +
          " (reference kernels compiled from C++)",
      cpuPlan);
  out << cpuText.definitions
      << "Backend cpu_backend() {\n  return cpu_program_backend(\n      "
         "program_tables_or_exit(\"cpu\", vouch_model_kCpuTables, "
         "vouch_model::vouch_model_kCpuTablesBytes),\n      "
         "vouch_model::kCpuKernelsF32, "
         "vouch_model::kCpuKernelsF64, "
      << cpuText.arguments << ");\n}\n\n";
  if (cuda) {
    const AcceptedGraphPlan &plan = *input.cuda.plan;
    BackendText cudaText = backendText(
        "Cuda",
        "backend: cuda, profile " + plan.profile().spec() + " (NVRTC " +
            nvrtcVersionString() + ", " + input.cuda.binaries->front().arch +
            " cubin + PTX in " + std::to_string(input.cuda.binaries->size()) +
            " images; cuBLAS/cuBLASLt; reductions: vouch kernels "
            "fixed-order-tree or left-fold, cuBLAS library-fixed" +
            (plan.deterministic() ? "; built --deterministic)" : ")"),
        plan);
    const std::vector<CudaBinary> &binaries = *input.cuda.binaries;
    out << cudaText.definitions
        << "// The kernel images, one per NVRTC program (module.h).\n"
           "const vouch::rt::cuda::KernelImage kKernelImages[] = {\n";
    for (size_t i = 0; i < binaries.size(); ++i)
      out << "    {" << imageSymbol("Cubin", i) << ", "
          << binaries[i].cubin.size() << ", " << imageSymbol("Ptx", i)
          << "},\n";
    out << "};\n\n"
        << "Backend cuda_backend() {\n  return vouch::rt::cuda::cuda_program_backend(\n"
           "      program_tables_or_exit(\"cuda\", vouch_model_kCudaTables, "
           "vouch_model_kCudaTablesBytes),\n"
           "      kKernelImages, "
        << binaries.size() << ", "
        << "vouch::rt::cuda::ProductMath::" << gemmProductMath(plan)
        << ", /*f64_kernels=*/" << (input.cuda.f64Kernels ? "true" : "false")
        << ", " << cudaText.arguments << ");\n}\n\n";
  }
  out << "}  // namespace\n\n"
      << "int main(int argc, char** argv) {\n"
      << "  static const ModelDescription model = describe();\n"
      << "  return train_main(argc, argv, model, {cpu_backend()"
      << (cuda ? ", cuda_backend()" : "") << "});\n}\n#endif\n";
  return out.str();
}

} // namespace vouch::codegen
