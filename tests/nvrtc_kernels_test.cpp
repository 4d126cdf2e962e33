//===- nvrtc_kernels_test.cpp - every emitted kernel compiles ------------===//
//
// Runs without a GPU (NVRTC needs none): each example goes through the
// frontend, autodiff and fusion; its CUDA kernels must compile with NVRTC
// for sm_90, and the PTX must define both entry points of every kernel the
// schedule names.
//
//===----------------------------------------------------------------------===//
#include <fstream>
#include <sstream>

#include "codegen/CudaSchedule.h"
#include "codegen/Nvrtc.h"
#include "frontend/Frontend.h"
#include "gtest/gtest.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
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
  ASSERT_TRUE(succeeded(vouch::planAndGate(
      model, *vouch::capsules::parseProfileSpec("checked_cuda"))));

  auto schedule = vouch::codegen::scheduleForCuda(model);
  ASSERT_TRUE(succeeded(schedule));
  std::string source = vouch::codegen::emitCudaKernels(model, *schedule);
  vouch::codegen::CudaBinary binary;
  std::string error;
  ASSERT_TRUE(vouch::codegen::compileCuda(source, GetParam() + ".cu", "sm_90",
                                          binary, error))
      << error << "\n" << source;
  EXPECT_GT(binary.cubin.size(), 1000u);
  std::vector<std::string> symbols = vouch::codegen::kernelSymbols(*schedule);
  EXPECT_GE(symbols.size(), 4u);
  for (const std::string &symbol : symbols)
    for (const char *suffix : {"_f32", "_f64"})
      EXPECT_NE(binary.ptx.find(".entry " + symbol + suffix), std::string::npos)
          << symbol << suffix << " missing from the PTX";
  EXPECT_NE(binary.ptx.find(".entry " + GetParam() + "_optimizer_f32"),
            std::string::npos);
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
  EXPECT_FALSE(vouch::codegen::compileCuda(source, "bad.cu", "sm_90", binary,
                                           error));
  EXPECT_NE(error.find("bad.cu(2)"), std::string::npos) << error;
  EXPECT_NE(error.find("    |   x[0] = undefined_name;"), std::string::npos)
      << error;
}

} // namespace
