//===- program_emitter_test.cpp - codegen bound to the planned capsules ---===//
//
// The Program of a model comes from its accepted plan: every step runs under
// the capsule the plan chose, through the recipe bound to it. A planned
// capsule no recipe can run is a compile-time error naming the capsule and
// the recipe, never a step under another provider's name. Identical kernels
// appear once in the kernel table.
//
//===----------------------------------------------------------------------===//
#include "codegen/ProgramEmitter.h"

#include "capsules/Profile.h"
#include "capsules/Registry.h"
#include "gtest/gtest.h"
#include "passes/GateTestSupport.h"

namespace vouch::codegen {
namespace {

using mlir::failed;
using mlir::FailureOr;
using mlir::succeeded;

class ProgramEmitterTest : public vouch::testing::GateFixture {
protected:
  /// The quickstart, differentiated, fused and planned for checked_cuda
  /// from `registry`.
  FailureOr<AcceptedGraphPlan> planCuda(const capsules::CapsuleRegistry &registry,
                                        ModelOp &model) {
    model = parse(vouch::testing::kQuickstartMlp, /*differentiate=*/true);
    EXPECT_TRUE(model);
    mlir::PassManager pm(&context);
    pm.addNestedPass<ModelOp>(createFusePointwise());
    EXPECT_TRUE(mlir::succeeded(pm.run(model->getParentOfType<mlir::ModuleOp>())));
    capsules::GateOptions options;
    options.registry = &registry;
    return planAndGate(model, *capsules::parseProfileSpec("checked_cuda"),
                       options);
  }
};

TEST_F(ProgramEmitterTest, EveryStepRunsUnderItsPlannedCapsule) {
  ModelOp model;
  auto plan = planCuda(capsules::defaultRegistry(), model);
  ASSERT_TRUE(succeeded(plan)) << joined();
  auto program = buildProgram(model, *plan, Target::Cuda);
  ASSERT_TRUE(succeeded(program)) << joined();
  std::string tables = (*program)->emitTables("p");
  // The quickstart's products are small: linear forward under
  // native_cuda.linear (vouch's product kernel with the bias), its VJP's
  // products under native_cuda.matmul; relu under native_cuda.relu.
  EXPECT_NE(tables.find("\"linear\", \"native_cuda.linear\", \"vouch_small_linear\""),
            std::string::npos)
      << tables;
  EXPECT_NE(tables.find("\"relu\", \"native_cuda.relu\", \"vouch_pointwise_relu\""),
            std::string::npos)
      << tables;
  EXPECT_NE(tables.find("\"vouch_small_product\""), std::string::npos) << tables;
  EXPECT_EQ(tables.find("cublas"), std::string::npos) << tables;
  // At batch 1 a bias gradient sums one row: the same values, so a view of
  // the row and no kernel.
  for (size_t i = 0; i < (*program)->kernelCount(); ++i)
    EXPECT_EQ((*program)->kernelName(i).find("reduce_sum"), std::string::npos)
        << tables;
}

TEST_F(ProgramEmitterTest, LibraryProductsRunTheCallsThePlanNames) {
  // Without the small-product rule the same products run in cuBLAS(Lt), with
  // the calls and transpose flags the plan names.
  ModelOp model = parse(vouch::testing::kQuickstartMlp, /*differentiate=*/true);
  ASSERT_TRUE(model);
  capsules::BackendProfile profile = *capsules::parseProfileSpec("checked_cuda");
  profile.smallProducts = {};
  auto plan = planAndGate(model, profile);
  ASSERT_TRUE(succeeded(plan)) << joined();
  auto program = buildProgram(model, *plan, Target::Cuda);
  ASSERT_TRUE(succeeded(program)) << joined();
  std::string tables = (*program)->emitTables("p");
  EXPECT_NE(tables.find("\"linear\", \"cublaslt.linear\", "
                        "\"cublasLtMatmul(transa=T, transb=N, A=weight, B=input, "
                        "epilogue=BIAS)\""),
            std::string::npos)
      << tables;
  EXPECT_NE(tables.find("cublasGemmEx(transa=N, transb=T, A=rhs, B=lhs)"),
            std::string::npos)
      << tables;
  EXPECT_EQ(tables.find("vouch_small_"), std::string::npos) << tables;
}

TEST_F(ProgramEmitterTest, IdenticalKernelsAreEmittedOnce) {
  // Batch 4: the two bias gradients ([8] and [1] outputs, different
  // extents) share one reduction kernel, extents being arguments.
  std::string text = vouch::testing::kQuickstartMlp;
  for (auto [from, to] : {std::pair<std::string, std::string>{"batch = 1", "batch = 4"},
                          {"tensor<1x2xf32>", "tensor<4x2xf32>"},
                          {"tensor<1x1xf32>", "tensor<4x1xf32>"},
                          {"-> tensor<1x8xf32>", "-> tensor<4x8xf32>"},
                          {"%r = vouch.relu %h : (tensor<1x8xf32>)", "%r = vouch.relu %h : (tensor<4x8xf32>)"},
                          {"(tensor<1x8xf32>, tensor<1x8xf32>, tensor<1xf32>)",
                           "(tensor<4x8xf32>, tensor<1x8xf32>, tensor<1xf32>)"}})
    for (size_t at; (at = text.find(from)) != std::string::npos;)
      text.replace(at, from.size(), to);
  ModelOp model = parse(text, /*differentiate=*/true);
  ASSERT_TRUE(model) << text;
  auto plan = planAndGate(model, *capsules::parseProfileSpec("checked_cuda"));
  ASSERT_TRUE(succeeded(plan)) << joined();
  auto program = buildProgram(model, *plan, Target::Cuda);
  ASSERT_TRUE(succeeded(program)) << joined();
  std::vector<std::string> reductions;
  for (size_t i = 0; i < (*program)->kernelCount(); ++i)
    if ((*program)->kernelName(i).find("reduce_sum") != std::string::npos)
      reductions.push_back((*program)->kernelName(i));
  EXPECT_EQ(reductions, std::vector<std::string>{"vouch_reduce_sum"})
      << (*program)->emitTables("p");
  std::string tables = (*program)->emitTables("p");
  size_t uses = 0;
  const std::string step = "\"vouch_reduce_sum\", \"native_cuda.reduce_sum\", 0, 0}";
  for (size_t at = 0; (at = tables.find(step, at)) != std::string::npos; ++at)
    ++uses;
  EXPECT_EQ(uses, 2u) << tables; // two steps name it, with the capsule they run under
}

TEST_F(ProgramEmitterTest, ACapsuleNoRecipeCanRunIsACompileTimeError) {
  // A registry whose only cuda matmul capsule claims cuFFT: no recipe
  // computes a product as cuFFT, so none can be bound to it.
  capsules::CapsuleRegistry registry = capsules::makeDefaultRegistry();
  capsules::KernelCapsule odd = *registry.find("cublas.matmul");
  odd.name = "cufft.matmul";
  odd.provider = capsules::Provider::Cufft;
  ASSERT_TRUE(registry.remove("cublas.matmul").ok());
  ASSERT_TRUE(registry.remove("native_cuda.matmul").ok());
  ASSERT_TRUE(registry.add(odd).ok());
  ModelOp model;
  auto plan = planCuda(registry, model);
  ASSERT_TRUE(succeeded(plan)) << joined();
  diagnostics.clear();
  EXPECT_TRUE(failed(buildProgram(model, *plan, Target::Cuda)));
  std::string all = joined();
  EXPECT_NE(all.find("handler `gemm` (op=matmul, provider=cublas, device=cuda) "
                     "cannot run capsule `cufft.matmul` (op=matmul, "
                     "provider=cufft, device=cuda): provider differs"),
            std::string::npos)
      << all;
}

TEST_F(ProgramEmitterTest, ACpuRecipeIsNotBoundToACudaPlan) {
  ModelOp model;
  auto plan = planCuda(capsules::defaultRegistry(), model);
  ASSERT_TRUE(succeeded(plan)) << joined();
  diagnostics.clear();
  EXPECT_TRUE(failed(buildProgram(model, *plan, Target::Cpu)));
  EXPECT_NE(joined().find("cannot run capsule `native_cuda.linear`"), std::string::npos)
      << joined();
}

} // namespace
} // namespace vouch::codegen
