//===- PlanTest.cpp - capsule selection and kernel symbols ---------------===//
//
// The catalogs cover the dialect's compute ops; planning picks the
// profile's providers on the profile's device only, never another device;
// kernel symbols are the names codegen emits, unique per model.
//
//===----------------------------------------------------------------------===//
#include <set>

#include "capsules/Catalog.h"
#include "passes/GateTestSupport.h"

namespace vouch {
namespace {

using capsules::Direction;
using testing::GateFixture;
using testing::kQuickstartMlp;

class Plan : public GateFixture {};

// The capsule catalogs derive from the op table (ir/OpTable.h): every op
// the planner plans has a capsule on every maintained device, so
// an op added to the dialect without them fails here.
TEST_F(Plan, CatalogCoversExactlyTheDialectsComputeOps) {
  std::set<std::string> dialect, catalog;
  const capsules::CapsuleRegistry &registry = capsules::defaultRegistry();
  for (mlir::RegisteredOperationName name :
       context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "vouch" || !isPlannedOp(name))
      continue;
    std::string op = name.stripDialect().str();
    if (findOpFacts(op)->family == OpFamily::Composite) {
      // vouch-decompose replaces it before planning: planned anyway, it
      // finds no capsule and the gate rejects it.
      EXPECT_TRUE(registry.forOp(op, capsules::Device::Cpu).empty()) << op;
      continue;
    }
    dialect.insert(op);
    // (The rows themselves: ir/OpTableTest; the capsules per provider:
    // capsules/catalog_test.)
    for (capsules::Device device :
         {capsules::Device::Cpu, capsules::Device::Cuda})
      EXPECT_FALSE(registry.forOp(op, device).empty())
          << "vouch." << op << " has no capsule on "
          << capsules::toString(device);
  }
  for (const OpFacts *facts : capsules::computeOpFacts())
    catalog.insert(std::string(facts->mnemonic));
  EXPECT_EQ(dialect, catalog);
  EXPECT_FALSE(isPlannedOp(mlir::OperationName("vouch.param", &context)));
  EXPECT_FALSE(isPlannedOp(mlir::OperationName("vouch.model", &context)));
}

TEST_F(Plan, AttributeSpellingsAgreeWithAutodiff) {
  // Plan.cpp spells vouch.node / vouch.vjp_of itself (it cannot include
  // passes/Passes.h); positions read after autodiff must be its ids.
  ModelOp model = parse(kQuickstartMlp, /*differentiate=*/true);
  for (auto &[op, position] : planPositions(model)) {
    if (auto node = op->getAttrOfType<mlir::IntegerAttr>(kNodeAttr)) {
      EXPECT_EQ(position.direction, Direction::Forward);
      EXPECT_EQ(position.node, node.getInt());
    }
    if (auto of = op->getAttrOfType<mlir::IntegerAttr>(kVjpOfAttr)) {
      EXPECT_EQ(position.direction, Direction::Backward);
      EXPECT_EQ(position.node, of.getInt());
    }
  }
}

TEST_F(Plan, QuickstartSymbolsAndCapsulesOnCuda) {
  ModelOp model = parse(kQuickstartMlp, /*differentiate=*/true);
  capsules::BackendProfile cuda = *capsules::lookupProfile("checked_cuda");
  planModel(model, cuda, capsules::defaultRegistry());
  EXPECT_EQ(model->getAttrOfType<mlir::StringAttr>(kProfileAttr).getValue(),
            "checked_cuda");
  auto attr = [](mlir::Operation *op, const char *name) {
    return op->getAttrOfType<mlir::StringAttr>(name).getValue().str();
  };
  mlir::Operation *linear0 = nth(model, "linear", 0);
  // Its products are small (at most 16 multiply-adds): vouch's own kernel.
  EXPECT_EQ(attr(linear0, kCapsuleAttr), "native_cuda.linear");
  EXPECT_EQ(attr(linear0, kKernelAttr), "quickstart_mlp_n0_linear");
  EXPECT_EQ(attr(nth(model, "relu"), kKernelAttr), "quickstart_mlp_n1_relu");
  EXPECT_EQ(attr(nth(model, "relu"), kCapsuleAttr), "native_cuda.relu");
  EXPECT_EQ(attr(nth(model, "mse_loss"), kKernelAttr),
            "quickstart_mlp_n3_mse_loss");
  // The backward of node 2 (the second linear) is two matmuls and a sum.
  mlir::Operation *dx = nth(model, "matmul", 0);
  EXPECT_EQ(attr(dx, kCapsuleAttr), "native_cuda.matmul");
  EXPECT_EQ(attr(dx, kKernelAttr), "quickstart_mlp_b2_0_matmul");
  EXPECT_EQ(attr(nth(model, "matmul", 1), kKernelAttr),
            "quickstart_mlp_b2_1_matmul");
  EXPECT_EQ(attr(nth(model, "reduce_sum", 0), kKernelAttr),
            "quickstart_mlp_b2_2_reduce_sum");

  std::set<std::string> symbols;
  int planned = 0;
  for (auto &[op, position] : planPositions(model)) {
    ++planned;
    EXPECT_TRUE(symbols.insert(attr(op, kKernelAttr)).second);
    EXPECT_TRUE(attr(op, kCapsuleAttr).find("reference.") == std::string::npos)
        << "a cpu capsule planned for cuda";
  }
  EXPECT_GT(planned, 8);
}

// The small-product rule of checked_cuda (k ≤ 256, batch·m·n·k ≤ 65536):
// at its edges a product runs as vouch's kernel, one past them in cuBLAS.
TEST_F(Plan, SmallProductsRunNativeUpToTheProfilesLimit) {
  capsules::BackendProfile cuda = *capsules::lookupProfile("checked_cuda");
  ASSERT_EQ(cuda.smallProducts.maxMultiplyAdds, 65536);
  ASSERT_EQ(cuda.smallProducts.maxK, 256);
  struct Case {
    const char *lhs, *rhs, *result;
    const char *capsule;
  } cases[] = {
      {"16x256", "256x16", "16x16", "native_cuda.matmul"}, // 65536, k = 256
      {"1x257", "257x1", "1x1", "cublas.matmul"},          // k = 257
      {"17x256", "256x16", "17x16", "cublas.matmul"},      // 69632
      {"4x16x64", "4x64x16", "4x16x16", "native_cuda.matmul"}, // batched 65536
      {"5x16x64", "5x64x16", "5x16x16", "cublas.matmul"},      // 81920
  };
  for (const Case &c : cases) {
    std::string text =
        std::string("vouch.model \"m\" attributes {batch = 1 : i64} {\n") + "  %a = vouch.param \"a\" = \"zeros\" : tensor<" +
        c.lhs + "xf32>\n  %b = vouch.param \"b\" = \"zeros\" : tensor<" + c.rhs +
        "xf32>\n  %c = vouch.matmul %a, %b : (tensor<" + c.lhs + "xf32>, tensor<" +
        c.rhs + "xf32>) -> tensor<" + c.result + "xf32>\n  vouch.output \"c\" %c : tensor<" +
        c.result + "xf32>\n}\n";
    ModelOp model = parse(text);
    ASSERT_TRUE(model) << text;
    planModel(model, cuda, capsules::defaultRegistry());
    EXPECT_EQ(nth(model, "matmul")->getAttrOfType<mlir::StringAttr>(kCapsuleAttr).getValue(),
              c.capsule)
        << c.lhs << " · " << c.rhs;
  }
}

TEST_F(Plan, CpuProfilePlansReferenceCapsules) {
  ModelOp model = parse(kQuickstartMlp, /*differentiate=*/true);
  planModel(model, *capsules::lookupProfile("checked_cpu"),
            capsules::defaultRegistry());
  for (auto &[op, position] : planPositions(model))
    EXPECT_EQ(op->getAttrOfType<mlir::StringAttr>(kCapsuleAttr).getValue(),
              "reference." + op->getName().stripDialect().str());
}

TEST_F(Plan, UndifferentiatedModelsAreNumberedInOpOrder) {
  ModelOp model = parse(kQuickstartMlp);
  std::vector<int64_t> nodes;
  for (auto &[op, position] : planPositions(model)) {
    EXPECT_EQ(position.direction, Direction::Forward);
    nodes.push_back(position.node);
  }
  EXPECT_EQ(nodes, (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST_F(Plan, ZeroGradientsOfUnusedParamsGetFreshNodes) {
  ModelOp model = parse(R"mlir(vouch.model "unused" attributes {batch = 1 : i64} {
  %a = vouch.param "a" = "ones" : tensor<3xf32>
  %u = vouch.param "u" = "ones" : tensor<2xf32>
  %s = vouch.reduce_sum %a axes [0] : (tensor<3xf32>) -> tensor<f32>
  vouch.loss %s : tensor<f32>
}
)mlir",
                        /*differentiate=*/true);
  planModel(model, *capsules::lookupProfile("checked_cpu"),
            capsules::defaultRegistry());
  std::vector<std::string> symbols;
  for (auto &[op, position] : planPositions(model))
    symbols.push_back(
        op->getAttrOfType<mlir::StringAttr>(kKernelAttr).getValue().str());
  // Node 0's backward is the seed and the broadcast of it; the zero
  // gradient of `u` has no autodiff tag and becomes node 1.
  ASSERT_FALSE(symbols.empty());
  EXPECT_EQ(symbols.front(), "unused_n0_reduce_sum");
  EXPECT_EQ(symbols.back(), "unused_n1_fill");
}

TEST(KernelSymbol, ModelNamesBecomeIdentifiers) {
  PlanPosition forward{3, Direction::Forward, 0};
  PlanPosition backward{3, Direction::Backward, 2};
  EXPECT_EQ(kernelSymbol("mlp", forward, "add"), "mlp_n3_add");
  EXPECT_EQ(kernelSymbol("mlp", backward, "matmul"), "mlp_b3_2_matmul");
  EXPECT_EQ(kernelSymbol("my-model.v2", forward, "add"), "my_model_v2_n3_add");
  EXPECT_EQ(kernelSymbol("2net", forward, "add"), "model_2net_n3_add");
  EXPECT_EQ(kernelSymbol("", forward, "add"), "model__n3_add");
}

TEST(SelectCapsule, NeverCrossesDevices) {
  capsules::CapsuleRegistry registry = capsules::makeDefaultRegistry();
  capsules::BackendProfile cuda = *capsules::lookupProfile("checked_cuda");
  EXPECT_EQ(selectCapsule("relu", cuda, registry)->name, "native_cuda.relu");
  ASSERT_TRUE(registry.remove("native_cuda.relu").ok());
  EXPECT_EQ(selectCapsule("relu", cuda, registry), nullptr);
  // A provider the profile does not prefer is still chosen on its device
  // (for the gate to judge), never one of another device.
  capsules::KernelCapsule odd = *registry.find("reference.relu");
  odd.name = "odd.relu";
  odd.device = capsules::Device::Cuda;
  ASSERT_TRUE(registry.add(odd).ok());
  EXPECT_EQ(selectCapsule("relu", cuda, registry)->name, "odd.relu");
}

TEST_F(Plan, LocationsAreFileLineColumn) {
  ModelOp model = parse(kQuickstartMlp, false, "quickstart.mlir");
  EXPECT_EQ(locationString(nth(model, "relu")->getLoc()),
            "quickstart.mlir:9:8");
  EXPECT_EQ(locationString(mlir::UnknownLoc::get(&context)), "unknown");
  mlir::Location named = mlir::NameLoc::get(
      mlir::StringAttr::get(&context, "h"), nth(model, "relu")->getLoc());
  EXPECT_EQ(locationString(named), "quickstart.mlir:9:8");
}

TEST_F(Plan, PassRecordsTheProfileSpec) {
  parse(kQuickstartMlp, /*differentiate=*/true);
  ASSERT_TRUE(mlir::succeeded(
      runPipeline("builtin.module(vouch.model(vouch-plan{profile=checked_cuda+tf32}))")))
      << joined();
  ModelOp model = mlir::cast<ModelOp>(module->getBody()->front());
  EXPECT_EQ(model->getAttrOfType<mlir::StringAttr>(kProfileAttr).getValue(),
            "checked_cuda+tf32");
}

TEST_F(Plan, PassRefusesUnknownProfiles) {
  parse(kQuickstartMlp);
  EXPECT_TRUE(mlir::failed(
      runPipeline("builtin.module(vouch.model(vouch-plan{profile=fast}))")));
  EXPECT_TRUE(hasDiagnostic(
      "gate.mlir:1:1: unknown profile `fast` (known profiles: checked_cpu, "
      "checked_cuda, libtorch_forward_cuda)"))
      << joined();
}

} // namespace
} // namespace vouch
