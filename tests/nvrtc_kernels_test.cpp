//===- nvrtc_kernels_test.cpp - every emitted kernel compiles ------------===//
//
// Runs without a GPU (NVRTC needs none): each example goes through the
// frontend, autodiff and fusion; its CUDA kernels, instantiated from the
// kernel library, must compile with NVRTC for sm_90, and the PTX must define
// both entry points of every kernel the program names and of the executor's.
//
//===----------------------------------------------------------------------===//
#include <cstdlib>
#include <fstream>
#include <sstream>

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
#include "capsules/Profile.h"
#include "passes/Gate.h"
#include "passes/Passes.h"

using namespace mlir;

namespace {

class NvrtcKernels : public ::testing::TestWithParam<std::string> {};

TEST_P(NvrtcKernels, EveryKernelCompilesForSm90) {
  std::string path = "examples/" + GetParam() + ".vouch";
  MLIRContext context;
  vouch::registerVouchDialect(context);
  llvm::SourceMgr sourceMgr;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(buffer) << path;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  auto module = vouch::frontend::importModel(sourceMgr, context);
  ASSERT_TRUE(module && succeeded(verify(*module)));
  PassManager pm(&context);
  pm.addNestedPass<vouch::ModelOp>(vouch::createAutodiff());
  pm.addNestedPass<vouch::ModelOp>(vouch::createFusePointwise());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  auto model = *module->getOps<vouch::ModelOp>().begin();
  auto plan = vouch::planAndGate(
      model, *vouch::capsules::parseProfileSpec("checked_cuda"));
  ASSERT_TRUE(succeeded(plan));
  auto program =
      vouch::codegen::buildProgram(model, *plan, vouch::codegen::Target::Cuda);
  ASSERT_TRUE(succeeded(program));
  std::string source = vouch::codegen::cudaKernelSource(**program);
  vouch::codegen::CudaBinary binary;
  std::string error;
  ASSERT_TRUE(vouch::codegen::compileCuda(
      source, GetParam() + ".cu", "sm_90",
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
  for (const std::string &symbol : symbols)
    for (const char *suffix : {"_f32", "_f64"})
      EXPECT_NE(binary.ptx.find(".entry " + symbol + suffix), std::string::npos)
          << symbol << suffix << " missing from the PTX";
}

INSTANTIATE_TEST_SUITE_P(Examples, NvrtcKernels,
                         ::testing::Values("quickstart_mlp", "residual_mlp"));

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

} // namespace
