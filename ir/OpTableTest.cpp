//===- OpTableTest.cpp - the op table against the registered dialect -----===//
//
// The table is generated from the ODS records, so it cannot drift from them
// by accident; these tests check that what the rows claim is what the
// dialect registers: one row per op, families that match the ops' traits
// and interfaces, hasVjp exactly where VJPOpInterface is, and builtins whose
// parameters the generic lowerings can bind.
//
//===----------------------------------------------------------------------===//
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "ir/ClauseTable.h"
#include "ir/OpTable.h"
#include "ir/VouchOps.h"
#include "mlir/IR/MLIRContext.h"

namespace vouch {
namespace {

class OpTableTest : public ::testing::Test {
protected:
  OpTableTest() { registerVouchDialect(context); }

  std::vector<mlir::RegisteredOperationName> vouchOps() {
    std::vector<mlir::RegisteredOperationName> ops;
    for (mlir::RegisteredOperationName name :
         context.getRegisteredOperations())
      if (name.getDialectNamespace() == "vouch")
        ops.push_back(name);
    return ops;
  }

  static bool hasAttribute(mlir::RegisteredOperationName name,
                           llvm::StringRef attr) {
    return llvm::any_of(name.getAttributeNames(), [&](mlir::StringAttr a) {
      return a.getValue() == attr;
    });
  }

  mlir::MLIRContext context;
};

TEST_F(OpTableTest, EveryRegisteredOpHasExactlyOneRow) {
  std::set<std::string> registered, rows;
  for (mlir::RegisteredOperationName name : vouchOps()) {
    std::string op = name.stripDialect().str();
    registered.insert(op);
    const OpFacts *facts = findOpFacts(op);
    ASSERT_NE(facts, nullptr) << "vouch." << op << " has no row";
    EXPECT_EQ(facts->hasVjp, name.hasInterface<VJPOpInterface>()) << op;
    EXPECT_EQ(facts->family == OpFamily::Pointwise,
              name.hasInterface<PointwiseOpInterface>())
        << op;
    EXPECT_EQ(facts->transposeFlags, hasAttribute(name, "transpose_lhs") ||
                                         hasAttribute(name, "transpose_rhs"))
        << op;
  }
  for (const OpFacts &facts : opTable())
    EXPECT_TRUE(rows.insert(std::string(facts.mnemonic)).second)
        << facts.mnemonic << " has two rows";
  EXPECT_EQ(registered, rows);
  EXPECT_EQ(findOpFacts("no_such_op"), nullptr);
}

TEST_F(OpTableTest, RowsFollowTheOdsDefinitionOrder) {
  // VouchOps.td defines the structure first, then the compute ops; the
  // catalogs list capsules, and the frontend its builtins, in this order.
  // (A subsequence: a new op anywhere keeps it.)
  std::vector<std::string_view> expected = {
      "model", "input", "param", "fill", "linear", "matmul", "relu", "add",
      "sub", "mul", "scale", "reshape", "permute", "broadcast", "reduce_sum",
      "reduce_mean", "mse_loss"};
  size_t next = 0;
  for (const OpFacts &facts : opTable())
    if (next < expected.size() && facts.mnemonic == expected[next])
      ++next;
  EXPECT_EQ(next, expected.size())
      << "out of ODS order from '" << expected[next] << "' on";
  EXPECT_EQ(opTable().front().mnemonic, "model");
}

TEST_F(OpTableTest, FamiliesMatchTheOps) {
  std::set<std::string> structural;
  for (mlir::RegisteredOperationName name : vouchOps()) {
    const OpFacts &facts = *findOpFacts(name.stripDialect());
    std::string op(facts.mnemonic);
    if (facts.isStructural()) {
      structural.insert(op);
      // Structure is never planned: no contract, no capsule, no builtin.
      EXPECT_EQ(facts.formula, "") << op;
      EXPECT_EQ(facts.builtin, "") << op;
      EXPECT_EQ(facts.cudaProviders, "") << op;
      EXPECT_EQ(facts.cpuKernel, "") << op;
      EXPECT_FALSE(facts.hasVjp) << op;
      continue;
    }
    EXPECT_NE(facts.formula, "") << op;
    if (facts.family == OpFamily::Composite) {
      // Its composed form's ops have the kernels and the VJP rules.
      EXPECT_TRUE(name.hasInterface<CompositeOpInterface>()) << op;
      EXPECT_EQ(facts.cudaProviders, "") << op;
      EXPECT_EQ(facts.cpuKernel, "") << op;
      EXPECT_FALSE(facts.hasVjp) << op;
      continue;
    }
    EXPECT_FALSE(name.hasInterface<CompositeOpInterface>()) << op;
    ASSERT_FALSE(splitList(facts.cudaProviders).empty()) << op;
    // One result or several (layer_norm_grad: dx, dweight, dbias): the
    // stages after the frontend read every result of an op.
    EXPECT_FALSE(name.hasTrait<mlir::OpTrait::ZeroResults>()) << op;
    EXPECT_EQ(facts.family == OpFamily::Generator,
              name.hasTrait<mlir::OpTrait::ZeroOperands>())
        << op;
    // Every op with operands has a VJP rule (the coverage test of
    // tests/gradcheck_test.cpp then demands a gradient check for it), but
    // round_bf16: vouch-round-bf16-operands makes it after autodiff, for the
    // products of forward and VJP alike, so no gradient is taken through it.
    EXPECT_EQ(facts.hasVjp,
              facts.family != OpFamily::Generator && op != "round_bf16")
        << op;
    if (facts.family == OpFamily::Reduction) {
      EXPECT_TRUE(hasAttribute(name, "axes")) << op;
    }
    if (facts.family == OpFamily::Gemm) {
      EXPECT_NE(splitList(facts.cudaProviders).front(), "native-cuda")
          << op << ": a product prefers a BLAS library";
    }
    if (!facts.cpuKernel.empty()) {
      EXPECT_EQ(facts.cpuKernel.substr(0, 11), "vouch::rt::") << op;
    }
  }
  EXPECT_EQ(structural,
            (std::set<std::string>{"model", "input", "target", "param", "state",
                                   "loss", "output", "param_grad"}));
}

// inPlaceOperand names an operand of an op with one result, and is set where
// the kernels were checked for it (cross_entropy_grad: dlogits over the
// logits); the generator refuses an index past the operands.
TEST_F(OpTableTest, InPlaceOperandsAreOperandsOfOneResultOps) {
  for (mlir::RegisteredOperationName name : vouchOps()) {
    const OpFacts *facts = findOpFacts(name.stripDialect().str());
    ASSERT_NE(facts, nullptr);
    EXPECT_GE(facts->inPlaceOperand, -1) << facts->mnemonic;
  }
  const OpFacts *grad = findOpFacts("cross_entropy_grad");
  ASSERT_NE(grad, nullptr);
  EXPECT_EQ(grad->inPlaceOperand, 0); // the logits
  // An op without the fact: none.
  EXPECT_EQ(findOpFacts("matmul")->inPlaceOperand, -1);
  EXPECT_EQ(findOpFacts("cross_entropy")->inPlaceOperand, -1);
}

// bf16Result names a result of the op, and is set where the cuda kernel's
// bf16 store was built (cross_entropy_grad: its dlogits; layer_norm: its y)
// or cuBLASLt's (linear: its y); the generator refuses an index past the
// results.
TEST_F(OpTableTest, Bf16ResultsAreResultsOfTheirOps) {
  for (mlir::RegisteredOperationName name : vouchOps()) {
    const OpFacts *facts = findOpFacts(name.stripDialect().str());
    ASSERT_NE(facts, nullptr);
    EXPECT_GE(facts->bf16Result, -1) << facts->mnemonic;
  }
  EXPECT_EQ(findOpFacts("cross_entropy_grad")->bf16Result, 0);
  EXPECT_EQ(findOpFacts("layer_norm")->bf16Result, 0);
  EXPECT_EQ(findOpFacts("linear")->bf16Result, 0);
  // Ops without the fact: none (layer_norm_grad's and softmax's kernels store
  // f32 only).
  EXPECT_EQ(findOpFacts("layer_norm_grad")->bf16Result, -1);
  EXPECT_EQ(findOpFacts("softmax")->bf16Result, -1);
  EXPECT_EQ(findOpFacts("cross_entropy")->bf16Result, -1);
}

// bf16Operand is set where the cuda recipe emits bf16-reading entry points
// (qkv_attention's qkv, qkv_attention_grad's qkv), and only on attention ops
// (bf16OperandOf reads their heads).
TEST_F(OpTableTest, Bf16OperandsAreAttentionQkvs) {
  for (mlir::RegisteredOperationName name : vouchOps()) {
    const OpFacts *facts = findOpFacts(name.stripDialect().str());
    ASSERT_NE(facts, nullptr);
    EXPECT_TRUE(facts->bf16Operand == -1 || facts->family == OpFamily::Attention)
        << facts->mnemonic;
  }
  EXPECT_EQ(findOpFacts("qkv_attention")->bf16Operand, 0);
  EXPECT_EQ(findOpFacts("qkv_attention_grad")->bf16Operand, 1);
  EXPECT_EQ(findOpFacts("flash_attention")->bf16Operand, -1);
  EXPECT_EQ(findOpFacts("linear")->bf16Operand, -1);
}

// bf16Twin is set where the cuda recipe emits twin-storing entry points
// (layer_norm_grad's dx; not qkv_attention_grad's dqkv: attention64's twin
// stores measured slower than the rounding launch, docs/performance.md),
// never beside a bf16Result of the same op (a result read by bf16 products
// alone is stored as bf16 only).
TEST_F(OpTableTest, Bf16TwinsAreWhereKernelsStoreThem) {
  for (mlir::RegisteredOperationName name : vouchOps()) {
    const OpFacts *facts = findOpFacts(name.stripDialect().str());
    ASSERT_NE(facts, nullptr) << name.getStringRef().str();
    EXPECT_TRUE(facts->bf16Twin == -1 || facts->bf16Result == -1) << facts->mnemonic;
  }
  EXPECT_EQ(findOpFacts("layer_norm_grad")->bf16Twin, 0);
  EXPECT_EQ(findOpFacts("qkv_attention_grad")->bf16Twin, -1);
  EXPECT_EQ(findOpFacts("flash_attention_grad")->bf16Twin, -1);
  EXPECT_EQ(findOpFacts("layer_norm")->bf16Twin, -1);
  EXPECT_EQ(findOpFacts("linear")->bf16Twin, -1);
}

TEST_F(OpTableTest, BuiltinsHaveSignaturesTheLoweringsCanBind) {
  std::set<std::string> builtins;
  for (mlir::RegisteredOperationName name : vouchOps()) {
    const OpFacts &facts = *findOpFacts(name.stripDialect());
    if (facts.builtin.empty()) {
      EXPECT_EQ(facts.builtinParams, "") << facts.mnemonic;
      continue;
    }
    EXPECT_TRUE(builtins.insert(std::string(facts.builtin)).second);
    EXPECT_EQ(findBuiltinOp(facts.builtin), &facts);
    std::vector<SignatureParam> params = parseSignature(facts.builtinParams);
    ASSERT_FALSE(params.empty()) << facts.mnemonic;
    bool optional = false;
    for (const SignatureParam &p : params) {
      EXPECT_FALSE(p.name.empty()) << facts.builtinParams;
      EXPECT_FALSE(optional && p.defaultText.empty())
          << facts.mnemonic << ": a required parameter after an optional one";
      optional = optional || !p.defaultText.empty();
    }
    // The generic reduction lowering binds (x, axes = all).
    if (facts.family == OpFamily::Reduction) {
      EXPECT_EQ(facts.builtinParams, "x, axes = all") << facts.mnemonic;
    }
  }
  EXPECT_EQ(findBuiltinOp(""), nullptr);
  EXPECT_EQ(findBuiltinOp("step"), nullptr) << "step is no builtin";
  EXPECT_EQ(findBuiltinOp("relu")->mnemonic, "relu");
}

// The clause table is generated from the same ODS enums mlir-tblgen turns
// into vouch::InitKind, OptimizerKind, DataKind and ScheduleKind.
TEST(ClauseTable, IsTheOdsEnums) {
  for (const ClauseFacts &row : clauseTable()) {
    std::optional<int> value;
    switch (row.clause) {
    case ClauseKind::Initializer:
      if (auto kind = symbolizeInitKind(row.name))
        value = static_cast<int>(*kind);
      break;
    case ClauseKind::Optimizer:
      if (auto kind = symbolizeOptimizerKind(row.name))
        value = static_cast<int>(*kind);
      break;
    case ClauseKind::DataSource:
      if (auto kind = symbolizeDataKind(row.name))
        value = static_cast<int>(*kind);
      break;
    case ClauseKind::Schedule:
      if (auto kind = symbolizeScheduleKind(row.name))
        value = static_cast<int>(*kind);
      break;
    }
    EXPECT_EQ(value, row.value) << row.name;
  }
  EXPECT_EQ(getMaxEnumValForInitKind() + 1,
            clauseCallees(ClauseKind::Initializer).size());
  EXPECT_EQ(getMaxEnumValForOptimizerKind() + 1,
            clauseCallees(ClauseKind::Optimizer).size());
  EXPECT_EQ(getMaxEnumValForDataKind() + 1,
            clauseCallees(ClauseKind::DataSource).size());
  EXPECT_EQ(getMaxEnumValForScheduleKind() + 1,
            clauseCallees(ClauseKind::Schedule).size());
}

TEST(OpTableSupport, SignaturesAndLists) {
  std::vector<SignatureParam> p =
      parseSignature("x, axes = all, beta1 = 0.9 , eps=1e-8");
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].name, "x");
  EXPECT_EQ(p[0].defaultText, "");
  EXPECT_EQ(p[1].name, "axes");
  EXPECT_EQ(p[1].defaultText, "all");
  EXPECT_EQ(p[2].defaultText, "0.9");
  EXPECT_EQ(p[3].name, "eps");
  EXPECT_EQ(p[3].defaultText, "1e-8");
  EXPECT_TRUE(parseSignature("").empty());
  EXPECT_EQ(splitList("cublas, cublaslt,native-cuda"),
            (std::vector<std::string_view>{"cublas", "cublaslt",
                                           "native-cuda"}));
  EXPECT_EQ(toString(OpFamily::Gemm), "gemm");
}

} // namespace
} // namespace vouch
