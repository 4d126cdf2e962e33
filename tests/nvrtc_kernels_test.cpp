//===- nvrtc_kernels_test.cpp - every emitted kernel compiles ------------===//
//
// Runs without a GPU (NVRTC needs none): each model this test's citations
// name (capsules/Evidence.cpp, keys "nvrtc": the GPU suite's models, and
// "nvrtc-bf16": its bf16 builds) goes
// through the frontend, autodiff and fusion and is planned under each of
// its profiles; its CUDA kernels, instantiated from the kernel library,
// must compile with NVRTC for sm_90, and the PTX must define both entry
// points of every kernel the program names and of the executor's. Taking
// the models from the citation keeps what the test runs and what
// tools/check_evidence.sh says it exercises one list.
//
//===----------------------------------------------------------------------===//
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/ModelSource.h"
#include "codegen/Nvrtc.h"
#include "codegen/ProgramEmitter.h"
#include "frontend/Frontend.h"
#include "gtest/gtest.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "capsules/Catalog.h"
#include "capsules/Evidence.h"
#include "capsules/Profile.h"
#include "passes/Gate.h"
#include "passes/Passes.h"

using namespace mlir;

namespace {

struct Case {
  std::string profile, path;
  /// vouch-decompose's form: auto (what a cuda build does: the fused
  /// attention), or composed.
  std::string attention = "auto";
};

/// Whether the model file calls scaled_dot_product_attention.
bool usesAttention(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str().find("scaled_dot_product_attention") != std::string::npos;
}

/// Every model of the test's citations (the GPU suite's models under
/// checked_cuda, its bf16 builds' under checked_cuda+bf16) under every
/// profile of each; a model with attention also in its composed form
/// (`vouch build --attention composed`).
std::vector<Case> citedCases() {
  std::vector<Case> cases;
  for (const char *key : {"nvrtc", "nvrtc-bf16"}) {
    const vouch::capsules::Citation *citation =
        vouch::capsules::findCitation(key);
    if (!citation)
      return {};
    for (std::string_view profile :
         vouch::capsules::splitWords(citation->exercises.profiles))
      for (const std::string &path : vouch::capsules::citedModels(*citation)) {
        cases.push_back({std::string(profile), path});
        if (usesAttention(path))
          cases.push_back({std::string(profile), path, "composed"});
      }
  }
  return cases;
}

/// `ops_shape` of tests/gpu/ops_shape.vouch, plus the profile.
std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  std::string name = info.param.path;
  name = name.substr(name.rfind('/') + 1);
  name = name.substr(0, name.find('.')) + "_" + info.param.profile +
         (info.param.attention == "auto" ? "" : "_" + info.param.attention);
  for (char &c : name)
    if (!isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

TEST(NvrtcKernelsCitation, NamesModelsAndProfiles) {
  // The citation's models exist here (the BUILD file's data holds them).
  EXPECT_GE(citedCases().size(), 2u);
}

class NvrtcKernels : public ::testing::TestWithParam<Case> {
protected:
  /// The cuda Program of the case's model under its profile, in program_.
  void buildCudaProgram() {
    const std::string &path = GetParam().path;
    vouch::registerVouchDialect(context_);
    llvm::SourceMgr sourceMgr;
    auto buffer = llvm::MemoryBuffer::getFile(path);
    ASSERT_TRUE(buffer) << path;
    sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
    module_ = vouch::frontend::importModel(sourceMgr, context_);
    ASSERT_TRUE(module_ && succeeded(verify(*module_)));
    auto profile = vouch::capsules::parseProfileSpec(GetParam().profile);
    ASSERT_TRUE(profile.ok()) << profile.error();
    PassManager pm(&context_);
    vouch::addAutodiffPasses(pm, GetParam().attention);
    vouch::addCudaPasses(pm.nest<vouch::ModelOp>(), profile->smallProducts,
                         profile->products);
    ASSERT_TRUE(succeeded(pm.run(*module_)));
    auto model = *module_->getOps<vouch::ModelOp>().begin();
    auto plan = vouch::planAndGate(model, *profile);
    ASSERT_TRUE(succeeded(plan)) << path;
    auto program =
        vouch::codegen::buildProgram(model, *plan, vouch::codegen::Target::Cuda);
    ASSERT_TRUE(succeeded(program));
    program_ = std::move(*program);
    runsF64_ = vouch::codegen::cudaRunsF64(*plan);
  }

  MLIRContext context_;
  OwningOpRef<ModuleOp> module_;
  std::unique_ptr<vouch::codegen::ProgramBuilder> program_;
  bool runsF64_ = true;
};

TEST_P(NvrtcKernels, EveryKernelCompilesForSm90) {
  const std::string &path = GetParam().path;
  buildCudaProgram();
  if (HasFatalFailure())
    return;
  auto *program = &program_;
  std::string source = vouch::codegen::cudaKernelSource(**program);
  vouch::codegen::CudaBinary binary;
  std::string error;
  std::string name = path.substr(path.rfind('/') + 1);
  ASSERT_TRUE(vouch::codegen::compileCuda(
      source, name.substr(0, name.find('.')) + ".cu", "sm_90",
      vouch::codegen::kernelLibraryHeaders(), binary, error))
      << error << "\n" << source;
  EXPECT_GT(binary.cubin.size(), 1000u);
  // Every kernel of the program, and the executor's own, in both types.
  std::vector<std::string> symbols;
  for (size_t i = 0; i < (*program)->kernelCount(); ++i)
    symbols.push_back((*program)->kernelName(i));
  EXPECT_GE(symbols.size(), 4u);
  for (const char *executor : {"vouch_select_batch", "vouch_optimizer"})
    symbols.push_back(executor);
  // A build that runs no f64 model (its products round) may have kernels of
  // f32 only (vouch.round_bf16's: bf16 operands exist only there); every
  // other kernel has both entries.
  for (const std::string &symbol : symbols) {
    EXPECT_NE(binary.ptx.find(".entry " + symbol + "_f32"), std::string::npos)
        << symbol << "_f32 missing from the PTX";
    if (runsF64_ || source.find(" " + symbol + "_f64(") != std::string::npos)
      EXPECT_NE(binary.ptx.find(".entry " + symbol + "_f64"), std::string::npos)
          << symbol << "_f64 missing from the PTX";
  }
}

// The units NVRTC compiles side by side (cudaKernelUnits): the executor's
// kernels first, then each kernel of the table in its own unit, in table
// order; together they are the one source --emit-dir writes.
TEST_P(NvrtcKernels, UnitsHoldEachKernelOnceInTableOrder) {
  buildCudaProgram();
  if (HasFatalFailure())
    return;
  auto *program = &program_;
  std::vector<vouch::codegen::CudaUnit> units =
      *vouch::codegen::cudaKernelUnits(**program);
  const size_t kernels = (*program)->kernelCount();
  ASSERT_LT(kernels, vouch::codegen::kMaxCudaUnits);
  ASSERT_EQ(units.size(), kernels + 1);
  EXPECT_NE(units[0].source.find("#include \"executor.cuh\""), std::string::npos);
  std::string joined;
  for (size_t u = 0; u < units.size(); ++u) {
    joined += units[u].source;
    EXPECT_EQ(units[u].name, (*program)->modelName() + "." + std::to_string(u) + ".cu");
    for (size_t k = 0; k < kernels; ++k) {
      const std::string entry = " " + (*program)->kernelName(k) + "_f32(";
      EXPECT_EQ(units[u].source.find(entry) != std::string::npos, u == k + 1)
          << (*program)->kernelName(k) << " in unit " << u;
    }
  }
  EXPECT_EQ(joined, vouch::codegen::cudaKernelSource(**program));

  // Without f64 (a build whose products round): each kernel's f32 entry
  // stays and its f64 entry goes; the executor's unit is unchanged.
  auto f32Units = vouch::codegen::cudaKernelUnits(**program, /*withF64=*/false);
  ASSERT_TRUE(succeeded(f32Units));
  ASSERT_EQ(f32Units->size(), units.size());
  for (size_t k = 0; k < kernels; ++k) {
    const std::string name = " " + (*program)->kernelName(k);
    EXPECT_NE((*f32Units)[k + 1].source.find(name + "_f32("), std::string::npos) << name;
    EXPECT_EQ((*f32Units)[k + 1].source.find(name + "_f64("), std::string::npos) << name;
    if (runsF64_) // else a kernel may be f32 only (above)
      EXPECT_NE(units[k + 1].source.find(name + "_f64("), std::string::npos) << name;
  }
  EXPECT_NE((*f32Units)[0].source.find("#include \"executor.cuh\""), std::string::npos);
  if (runsF64_)
    return;
  // Where the build leaves them out (its products round), the f32-only units
  // compile, with every f32 entry point and none of the program's f64 ones.
  std::vector<vouch::codegen::CudaBinary> binaries;
  size_t hits = 0;
  std::string error;
  ASSERT_TRUE(vouch::codegen::compileCudaUnits(
      *f32Units, "sm_90", vouch::codegen::kernelLibraryHeaders(),
      std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") +
          "/f32-units-cache",
      0, binaries, hits, error))
      << error;
  for (size_t k = 0; k < kernels; ++k) {
    const std::string entry = ".entry " + (*program)->kernelName(k);
    EXPECT_NE(binaries[k + 1].ptx.find(entry + "_f32("), std::string::npos) << entry;
    EXPECT_EQ(binaries[k + 1].ptx.find(entry + "_f64("), std::string::npos) << entry;
  }
}

// withoutF64Entries takes out each f64 entry point whole, attributes and
// nested braces included, keeps everything else byte for byte, and fails on
// a body that does not close.
TEST(Nvrtc, F64EntriesComeOutWhole) {
  const std::string kept =
      "#include \"x.cuh\"\nstruct op { template <class T> __device__ void f() { if (1) {} } };\n"
      "extern \"C\" __global__ void __launch_bounds__(256, 2) k_f32(float* x, vouch::Dims d) {\n"
      "  vouch::run<float>(x, vouch::Dims{});\n}\n";
  const std::string f64 =
      "extern \"C\" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(512, 2) "
      "k_f64(double* x, vouch::Dims d) {\n  if (x) { vouch::run<double>(x, vouch::Dims{}); }\n}\n";
  const std::string tail = "extern \"C\" __global__ void j_f32(float* x) { x[0] = 1; }\n";
  auto out = vouch::codegen::withoutF64Entries(kept + f64 + tail + f64);
  ASSERT_TRUE(succeeded(out));
  EXPECT_EQ(*out, kept + tail);
  EXPECT_TRUE(failed(vouch::codegen::withoutF64Entries(kept + f64.substr(0, f64.size() - 3))));
}

INSTANTIATE_TEST_SUITE_P(CitedModels, NvrtcKernels,
                         ::testing::ValuesIn(citedCases()), caseName);
// Builds whose products round (--precision tf32 / bf16) run no f64 model, so
// their units leave the f64 entry points out: the cuBLAS models and the
// attention, which such builds run on tensor cores, under tf32 (the bf16
// builds are the nvrtc-bf16 citation's, above).
INSTANTIATE_TEST_SUITE_P(
    RoundedProducts, NvrtcKernels,
    ::testing::Values(Case{"checked_cuda+tf32", "tests/gpu/ops_library.vouch"},
                      Case{"checked_cuda+tf32", "tests/gpu/ops_attention.vouch"},
                      Case{"checked_cuda+tf32", "tests/gpu/ops_classes.vouch"}),
    caseName);

// A compile error in generated code comes back with NVRTC's log and the
// offending generated line quoted under it.
TEST(Nvrtc, FailedCompileShowsTheGeneratedSourceLine) {
  vouch::codegen::CudaBinary binary;
  std::string error;
  std::string source = "extern \"C\" __global__ void k(float* x) {\n"
                       "  x[0] = undefined_name;\n}\n";
  EXPECT_FALSE(vouch::codegen::compileCuda(source, "bad.cu", "sm_90", {},
                                           binary, error));
  EXPECT_NE(error.find("bad.cu(2)"), std::string::npos) << error;
  EXPECT_NE(error.find("    |   x[0] = undefined_name;"), std::string::npos)
      << error;
}

// The native capsules' contract= comes from capsules::kNativeCudaFmad; the
// options NVRTC really gets must agree: a·b + c compiles to one fma
// instruction exactly when the capsules say contract=fma.
TEST(Nvrtc, ContractionIsWhatTheNativeCapsulesState) {
  vouch::codegen::CudaBinary binary;
  std::string error;
  std::string source =
      "extern \"C\" __global__ void k(const float* a, const float* b, "
      "const float* c, float* d) {\n  d[0] = a[0] * b[0] + c[0];\n}\n";
  ASSERT_TRUE(vouch::codegen::compileCuda(source, "fma.cu", "sm_90", {},
                                          binary, error))
      << error;
  bool fused = binary.ptx.find("fma.rn.f32") != std::string::npos;
  EXPECT_EQ(fused, vouch::capsules::kNativeCudaFmad) << binary.ptx;
  EXPECT_EQ(binary.ptx.find("mul.rn.f32") == std::string::npos,
            vouch::capsules::kNativeCudaFmad)
      << binary.ptx;
}

// gelu's native capsule says contract=none (its ODS record), though NVRTC gets
// -fmad=true for every kernel: the arithmetic of its formula (gelu.cuh's
// gelu_tanh_inner and gelu_outer, all of it but tanh / erf) is written with
// __fmul_rn / __fadd_rn, which are never contracted. Their PTX holds no fma;
// the same arithmetic written plainly does (the control), so a contraction
// would be seen.
TEST(Nvrtc, GeluArithmeticIsNotContracted) {
  ASSERT_TRUE(vouch::capsules::kNativeCudaFmad)
      << "the control below expects -fmad=true";
  for (std::string type : {"float", "double"}) {
    std::string width = type == "float" ? "f32" : "f64";
    std::string head = "#include \"gelu.cuh\"\nextern \"C\" __global__ void k(const " +
                       type + "* x, const " + type + "* t, " + type + "* u, " +
                       type + "* g) {\n  using T = " + type + ";\n";
    std::string helpers = head + "  u[0] = vouch::gelu_tanh_inner(x[0]);\n"
                                 "  g[0] = vouch::gelu_outer(x[0], t[0]);\n}\n";
    std::string plain = head + "  u[0] = T(0.7978845608028654) * (x[0] + "
                               "T(0.044715) * ((x[0] * x[0]) * x[0]));\n"
                               "  g[0] = (T(0.5) * x[0]) * (T(1) + t[0]);\n}\n";
    vouch::codegen::CudaBinary uncontracted, control;
    std::string error;
    ASSERT_TRUE(vouch::codegen::compileCuda(helpers, "gelu.cu", "sm_90",
                                            vouch::codegen::kernelLibraryHeaders(),
                                            uncontracted, error))
        << error;
    ASSERT_TRUE(vouch::codegen::compileCuda(plain, "plain.cu", "sm_90",
                                            vouch::codegen::kernelLibraryHeaders(),
                                            control, error))
        << error;
    EXPECT_EQ(uncontracted.ptx.find("fma.rn."), std::string::npos)
        << type << ":\n" << uncontracted.ptx;
    EXPECT_NE(uncontracted.ptx.find("mul.rn." + width), std::string::npos)
        << type << ":\n" << uncontracted.ptx;
    EXPECT_NE(control.ptx.find("fma.rn." + width), std::string::npos)
        << type << ": the control has no fma, so the check proves nothing:\n"
        << control.ptx;
  }
}

// Identical kernels are compiled once: a second compile of the same source
// is answered by the cache, and a changed source is not.
TEST(Nvrtc, TheCacheAnswersAnIdenticalCompileOnly) {
  std::string dir = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR")
                                                           : "/tmp") +
                    "/nvrtc-cache";
  std::string source = "extern \"C\" __global__ void k(float* x) { x[0] = 1; }\n";
  vouch::codegen::CudaBinary first, second, third;
  std::string error;
  bool hit = true;
  ASSERT_TRUE(vouch::codegen::compileCudaCached(source, "k.cu", "sm_90", {}, dir,
                                                first, hit, error)) << error;
  EXPECT_FALSE(hit);
  ASSERT_TRUE(vouch::codegen::compileCudaCached(source, "k.cu", "sm_90", {}, dir,
                                                second, hit, error)) << error;
  EXPECT_TRUE(hit);
  EXPECT_EQ(first.cubin, second.cubin);
  EXPECT_EQ(first.ptx, second.ptx);
  ASSERT_TRUE(vouch::codegen::compileCudaCached(source + "// changed\n", "k.cu",
                                                "sm_90", {}, dir, third, hit, error));
  EXPECT_FALSE(hit);
}

// Past kMaxCudaUnits - 1 kernels, consecutive kernels share units, and the
// units never number more than kMaxCudaUnits.
TEST(Nvrtc, KernelsShareUnitsOnlyPastTheCap) {
  using vouch::codegen::kernelsPerCudaUnit;
  using vouch::codegen::kMaxCudaUnits;
  EXPECT_EQ(kernelsPerCudaUnit(0), 1u);
  EXPECT_EQ(kernelsPerCudaUnit(1), 1u);
  EXPECT_EQ(kernelsPerCudaUnit(kMaxCudaUnits - 1), 1u);
  EXPECT_EQ(kernelsPerCudaUnit(kMaxCudaUnits), 2u);
  EXPECT_EQ(kernelsPerCudaUnit(2 * (kMaxCudaUnits - 1)), 2u);
  EXPECT_EQ(kernelsPerCudaUnit(2 * (kMaxCudaUnits - 1) + 1), 3u);
  for (size_t n : {0, 1, 5, 63, 64, 100, 127, 406, 10000}) {
    const size_t per = kernelsPerCudaUnit(n);
    const size_t units = 1 + (n + per - 1) / per; // the executor's, then groups
    EXPECT_LE(units, kMaxCudaUnits) << n << " kernels";
    if (per > 1) // one fewer per unit would overflow the cap
      EXPECT_GT(1 + (n + per - 2) / (per - 1), kMaxCudaUnits) << n << " kernels";
  }
}

// Units compile side by side through the cache: each result is its own
// unit's, whatever the order they finish in; a second compile is answered
// by the cache unit by unit; a broken unit fails the compile with its own
// name and line in the error.
TEST(Nvrtc, UnitsCompileSideBySideThroughTheCache) {
  std::string dir = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR")
                                                           : "/tmp") +
                    "/nvrtc-units-cache";
  std::vector<vouch::codegen::CudaUnit> units;
  for (int i = 0; i < 6; ++i)
    units.push_back({"m." + std::to_string(i) + ".cu",
                     "extern \"C\" __global__ void unit_kernel_" + std::to_string(i) +
                         "(float* x) { x[0] = " + std::to_string(i) + "; }\n"});
  std::vector<vouch::codegen::CudaBinary> first, second, serial;
  size_t hits = 99;
  std::string error;
  ASSERT_TRUE(vouch::codegen::compileCudaUnits(units, "sm_90", {}, dir, 4, first,
                                               hits, error)) << error;
  EXPECT_EQ(hits, 0u);
  ASSERT_EQ(first.size(), units.size());
  for (size_t i = 0; i < units.size(); ++i) {
    EXPECT_EQ(first[i].arch, "sm_90");
    EXPECT_NE(first[i].ptx.find(".entry unit_kernel_" + std::to_string(i) + "("),
              std::string::npos) << i;
    for (size_t j = 0; j < units.size(); ++j)
      if (j != i)
        EXPECT_EQ(first[i].ptx.find("unit_kernel_" + std::to_string(j) + "("),
                  std::string::npos) << i << " holds " << j;
  }
  ASSERT_TRUE(vouch::codegen::compileCudaUnits(units, "sm_90", {}, dir, 4, second,
                                               hits, error)) << error;
  EXPECT_EQ(hits, units.size());
  // One thread, no cache: the same bytes as the parallel compile.
  ASSERT_TRUE(vouch::codegen::compileCudaUnits(units, "sm_90", {}, dir + "-serial", 1,
                                               serial, hits, error)) << error;
  EXPECT_EQ(hits, 0u);
  for (size_t i = 0; i < units.size(); ++i) {
    EXPECT_EQ(first[i].cubin, second[i].cubin) << i;
    EXPECT_EQ(first[i].cubin, serial[i].cubin) << i;
    EXPECT_EQ(first[i].ptx, serial[i].ptx) << i;
  }

  units[4].source = "extern \"C\" __global__ void k(float* x) {\n  x[0] = undefined_name;\n}\n";
  EXPECT_FALSE(vouch::codegen::compileCudaUnits(units, "sm_90", {}, dir, 4, first,
                                                hits, error));
  EXPECT_NE(error.find("m.4.cu(2)"), std::string::npos) << error;
  EXPECT_NE(error.find("    |   x[0] = undefined_name;"), std::string::npos) << error;
}

} // namespace
