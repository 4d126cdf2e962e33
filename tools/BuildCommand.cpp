//===- BuildCommand.cpp - vouch build ---------------------------*- C++ -*-===//
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "capsules/Profile.h"
#include "codegen/ModelDescription.h"
#include "codegen/ModelSource.h"
#include "codegen/NativeBuild.h"
#include "codegen/Nvrtc.h"
#include "codegen/Parallel.h"
#include "codegen/ProgramEmitter.h"
#include "mlir/IR/MLIRContext.h"
#include "runtime/executor.h"
#include "runtime/memory.h"
#include "tools/CommandLine.h"
#include "tools/Commands.h"
#include "tools/Pipeline.h"

using namespace mlir;

namespace vouch::driver {
namespace {

/// `vouch build -v`: the wall time of each phase, on stderr.
class PhaseTimer {
public:
  explicit PhaseTimer(bool enabled) : enabled(enabled) {}
  void done(const char *phase, const std::string &detail = "") {
    auto now = std::chrono::steady_clock::now();
    if (enabled)
      std::fprintf(stderr, "vouch: %-26s %7.3f s%s%s\n", phase,
                   std::chrono::duration<double>(now - last).count(),
                   detail.empty() ? "" : "  ", detail.c_str());
    last = now;
  }
  void total() {
    if (enabled)
      std::fprintf(stderr, "vouch: %-26s %7.3f s\n", "total",
                   std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count());
  }

private:
  bool enabled;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last = start;
};

/// Creates the parent directories of `path` and checks that the output can be
/// written there, before any work; false (with `error`) when that fails or
/// `path` names a directory, the model file or a special file.
bool prepareOutput(const std::string &path, const std::string &input,
                   std::string &error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  error = outputPathProblem(path, input);
  if (!error.empty())
    return false;
  fs::path parent = fs::absolute(fs::path(path), ec).parent_path();
  if (!ec && !parent.empty() && !fs::exists(parent, ec)) {
    fs::create_directories(parent, ec);
    if (ec) {
      error = "cannot create the directory '" + parent.string() +
              "' for -o: " + ec.message();
      return false;
    }
  }
  error = outputDirectoryProblem(path);
  return error.empty();
}

/// Warns when training `program` on cpu in f64 (the cpu default) needs more
/// host memory than this machine has: the executable would refuse to run here
/// (exit 6), by the same estimate (runtime/memory.h).
void warnIfLargerThanMemory(const std::string &model,
                            const codegen::ProgramBuilder &program) {
  rt::Result<uint64_t> total = rt::host_memory_total();
  if (!total.ok())
    return;
  const rt::Program view = program.sizingView();
  const rt::MemoryNeed need = rt::cpu_run_memory(
      rt::mul_bytes(rt::cpu_storage_layout(view, 8, nullptr), 8),
      rt::param_elements(view), 8);
  const uint64_t bytes = rt::MemoryNeed::total(need.host);
  if (bytes <= total.value())
    return;
  std::fprintf(stderr,
               "warning: model `%s` needs %s of host memory to train on cpu in "
               "f64 (%s), more than this machine's %s (MemTotal): its "
               "executable will refuse to run here (exit 6)\n",
               model.c_str(), rt::format_bytes(bytes).c_str(),
               rt::MemoryNeed::describe(need.host).c_str(),
               rt::format_bytes(total.value()).c_str());
}

} // namespace

int runBuild(const std::vector<std::string> &args) {
  CommandLine cl("build",
                 "compile a model description to a native executable that "
                 "trains it (run it with --help for its options)",
                 "[options] FILE -o OUT");
  cl.option("output", "OUT", "the executable (or source, with --emit=cpp, or "
                             "tables, with --emit=tables) to write; also -o. "
                             "Missing directories are created");
  cl.option("target", "cpu|cuda",
            "cpu: reference kernels only; cuda: also NVRTC kernels and "
            "cuBLAS (the executable then runs on either, --device picks)",
            "cpu");
  declarePrecisionOption(cl);
  cl.flag("f64-kernels",
          "cuda: also compile the kernels' f64 entry points, so that the "
          "executable runs --dtype f64 on cuda too (fp32 products only; "
          "about doubles NVRTC's work on a cold kernel cache). Without it "
          "an f64 run on cuda is refused with the reason; on cpu it runs");
  cl.flag("deterministic", "gate the plans under the determinism "
                           "obligation: refuse any capsule whose summation "
                           "order may change from run to run");
  cl.option("emit", "exe|cpp|tables",
            "write an executable, or only its C++ source, or only its "
            "programs' tables as readable text (the executable carries them "
            "as a blob, decoded at startup)",
            "exe");
  cl.option("emit-dir", "DIR", "keep the generated sources in DIR");
  declareImportOptions(cl);
  cl.flag("no-buffer-reuse",
          "give every value its own device / host storage for the whole "
          "step (by default values whose lifetimes within a training step "
          "are disjoint share storage; results are identical either way)");
  cl.option("cxx", "COMPILER", "the host C++ compiler", "g++");
  cl.option("jobs", "N",
            "NVRTC programs and host compiler processes to run at once "
            "(default: one per hardware thread); the output does not depend "
            "on it");
  cl.flag("verbose", "print the time of each phase and the compiler "
                     "commands; also -v");
  if (int code = cl.parseOrExit(args, 1); code >= 0)
    return code;
  if (!cl.has("output")) {
    std::fprintf(stderr, "error: -o OUT is required\n\n%s", cl.help().c_str());
    return 2;
  }
  unsigned jobs = 0; // 0: one per hardware thread
  if (cl.has("jobs")) {
    long long n = 0;
    std::string jobsError;
    if (!cl.getCount("jobs", 1, 1024, n, jobsError)) {
      std::fprintf(stderr, "error: %s\n", jobsError.c_str());
      return 2;
    }
    jobs = static_cast<unsigned>(n);
  }
  auto chosenTarget = cl.choice("target", {"cpu", "cuda"});
  auto chosenEmit = cl.choice("emit", {"exe", "cpp", "tables"});
  if (!chosenTarget || !chosenEmit)
    return 2;
  std::string target = *chosenTarget, emit = *chosenEmit, error;
  bool cuda = target == "cuda";
  std::optional<capsules::ProductPrecision> precision = readPrecisionOption(cl);
  if (!precision)
    return 2;
  if (!cuda && *precision != capsules::ProductPrecision::Fp32) {
    std::fprintf(stderr,
                 "error: --precision %s applies to cuda builds; add --target "
                 "cuda (the cpu backend computes in the model's element "
                 "type)\n",
                 std::string(capsules::toString(*precision)).c_str());
    return 2;
  }
  const bool f64Kernels = cl.has("f64-kernels");
  if (f64Kernels && !cuda) {
    std::fprintf(stderr, "error: --f64-kernels applies to cuda builds; add "
                         "--target cuda (the cpu backend runs f64 always)\n");
    return 2;
  }
  if (f64Kernels && *precision != capsules::ProductPrecision::Fp32) {
    std::fprintf(stderr,
                 "error: --f64-kernels and --precision %s contradict each "
                 "other: a build whose products round runs no f64 model "
                 "(an f64 run would compute other products than its report "
                 "says)\n",
                 std::string(capsules::toString(*precision)).c_str());
    return 2;
  }
  if (!prepareOutput(cl.get("output"), cl.positional()[0], error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 2;
  }
  PhaseTimer timer(cl.has("verbose"));
  MLIRContext context;
  DriverDiagnostics diagnostics(context);
  int exitCode;
  auto module = loadFromCommandLine(cl, /*autodiff=*/true, diagnostics, exitCode);
  if (!module)
    return exitCode;
  FailureOr<rt::ModelDescription> description =
      codegen::describeModel(getModel(*module));
  if (failed(description))
    return 1;
  timer.done("parse, verify, autodiff");

  capsules::GateOptions gate;
  gate.deterministic = cl.has("deterministic");
  // Planning records its choices on the ops: the cpu backend is planned on
  // a copy when the cuda backend is planned on the original.
  OwningOpRef<ModuleOp> cpuModule = cuda ? module->clone() : OwningOpRef<ModuleOp>();
  ModelOp cpuModel = getModel(cuda ? *cpuModule : *module);
  auto cpuPlan =
      planForProfile(cpuModel, *capsules::parseProfileSpec("checked_cpu"), gate);
  if (failed(cpuPlan))
    return 1; // the gate printed every failed obligation
  const bool reuse = !cl.has("no-buffer-reuse");
  auto cpuProgram =
      codegen::buildProgram(cpuModel, *cpuPlan, codegen::Target::Cpu, reuse);
  if (failed(cpuProgram))
    return 1;
  timer.done("plan, gate, tables (cpu)", (*cpuProgram)->storageSummary());
  warnIfLargerThanMemory(description->name, **cpuProgram);

  codegen::ModelSourceInput input;
  input.sourceName = cl.positional()[0];
  input.description = *description;
  input.cpu = {cpuProgram->get(), &*cpuPlan, nullptr};
  FailureOr<AcceptedGraphPlan> cudaPlan = failure();
  std::unique_ptr<codegen::ProgramBuilder> cudaProgram;
  std::vector<codegen::CudaUnit> units;
  std::vector<codegen::CudaBinary> binaries;
  if (cuda) {
    ModelOp model = getModel(*module);
    capsules::ProfileOptions options;
    options.products = *precision;
    cudaPlan = planForProfile(
        model, *capsules::lookupProfile("checked_cuda", options), gate,
        nullptr, cl.has("bias-grad-epilogue"));
    if (failed(cudaPlan))
      return 1;
    auto built =
        codegen::buildProgram(model, *cudaPlan, codegen::Target::Cuda, reuse);
    if (failed(built))
      return 1;
    cudaProgram = std::move(*built);
    timer.done("plan, gate, tables (cuda)", cudaProgram->storageSummary());
    // f64 entry points only where asked for (and the products do not
    // round: checked above).
    auto split = codegen::cudaKernelUnits(*cudaProgram, f64Kernels);
    if (failed(split)) {
      std::fprintf(stderr, "internal error: a generated kernel's f64 entry point "
                           "has no closed body (keep the sources with --emit-dir)\n");
      return 1;
    }
    units = std::move(*split);
    size_t hits = 0;
    const unsigned threads = codegen::buildThreads(units.size(), jobs);
    if (!codegen::compileCudaUnits(units, "sm_90",
                                   codegen::kernelLibraryHeaders(),
                                   codegen::cacheRoot(), threads, binaries, hits,
                                   error)) {
      std::fprintf(stderr, "error: %s", error.c_str());
      return 1;
    }
    const std::string programs = std::to_string(units.size()) + " programs";
    timer.done("NVRTC (cubin + PTX)",
               std::to_string(cudaProgram->kernelCount()) + " kernels in " +
                   (hits == units.size()
                        ? programs + ", from the kernel cache"
                        : programs + " (" + std::to_string(hits) +
                              " from the kernel cache), compiled with NVRTC " +
                              codegen::nvrtcVersionString() + " on " +
                              std::to_string(threads) +
                              (threads == 1 ? " thread" : " threads")));
    input.cuda = {cudaProgram.get(), &*cudaPlan, &binaries, f64Kernels};
  }
  // An executable's binaries are files the assembler includes; --emit=cpp
  // writes one self-contained file.
  std::vector<codegen::SourceBlob> blobs;
  std::string source =
      codegen::emitModelSource(input, emit == "exe" ? &blobs : nullptr);
  if (cl.has("emit-dir")) {
    std::error_code ec;
    std::filesystem::create_directories(cl.get("emit-dir"), ec);
    if (!units.empty() &&
        !codegen::writeFileAtomically(
            (std::filesystem::path(cl.get("emit-dir")) / "kernels.cu").string(),
            codegen::cudaKernelSource(units), error)) {
      std::fprintf(stderr, "error: --emit-dir: %s\n", error.c_str());
      return 2;
    }
  }
  timer.done("emit C++", std::to_string(source.size() / 1024) + " KiB");

  if (emit == "cpp" || emit == "tables") {
    // The tables as the executable will read them: decoded from its blobs.
    if (emit == "tables") {
      source = "// The program tables, decoded from the blobs the executable "
               "carries (runtime/model_tables.h).\n" +
               (*cpuProgram)->emitTables("kCpuProgram");
      if (cudaProgram)
        source += cudaProgram->emitTables("kCudaProgram");
    }
    if (!codegen::writeFileAtomically(cl.get("output"), source, error)) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
      return 2;
    }
    timer.total();
    return 0;
  }
  codegen::NativeBuildOptions buildOptions;
  buildOptions.output = cl.get("output");
  buildOptions.emitDir = cl.get("emit-dir");
  buildOptions.cxx = cl.get("cxx");
  buildOptions.jobs = jobs;
  buildOptions.verbose = cl.has("verbose");
  buildOptions.cuda = cuda;
  if (!codegen::buildExecutable(source, buildOptions, error, blobs)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  timer.done("host C++ compile and link");
  timer.total();
  return 0;
}

} // namespace vouch::driver
