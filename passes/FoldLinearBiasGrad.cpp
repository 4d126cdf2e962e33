//===- FoldLinearBiasGrad.cpp - a linear's dW and db as one product -*- C++ -*-===//
//
// A linear's VJP (ir/VouchOps.cpp, LinearOp::buildVJP) reads its result's
// gradient dy [rows, out] twice: once as the weight's product dyᵀ·x, once
// for the bias's column sums. On cuda the second read is a separate kernel
// over all of dy; linear_weight_grad computes both in one cuBLASLt call,
// its BGRADB epilogue summing the columns as the product reads them. It runs
// only under `--bias-grad-epilogue` (Passes.td says why it is not the
// default). The pass only rewrites; ir/VouchOps.td's linear_weight_grad says
// what it computes and codegen's gemm recipe emits it.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "capsules/Profile.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "runtime/cuda/gemm_call.h"

namespace vouch {
#define GEN_PASS_DEF_FOLDLINEARBIASGRAD
#include "passes/Passes.h.inc"
} // namespace vouch

using namespace mlir;
using namespace vouch;

namespace {

/// Whether no tensor-core precision pads dW = dyᵀ·x (the executor's own
/// rule, gemm_call.h's plan_gemm): the fused call then runs on the operands
/// as they are, or on their bf16 copies, and writes dW and db in place
/// (runtime/cuda/executor.cc refuses a padded one). Out and in multiples of
/// 8.
bool unpadded(int64_t out, int64_t in, int64_t rows) {
  using rt::cuda::ProductMath;
  for (ProductMath math : {ProductMath::Tf32, ProductMath::Bf16}) {
    rt::cuda::ProductPlan p =
        rt::cuda::plan_gemm(math, true, false, 1, out, in, rows, 0, 0);
    if (p.M != out || p.N != in || p.K != rows || p.pitch_a != 0 ||
        p.pitch_b != 0 || p.padded_output())
      return false;
  }
  return true;
}

struct FoldLinearBiasGradPass
    : public vouch::impl::FoldLinearBiasGradBase<FoldLinearBiasGradPass> {
  using FoldLinearBiasGradBase::FoldLinearBiasGradBase;

  /// The column sums of `product`'s transposed lhs in the same VJP, when
  /// the pair is one linear_weight_grad (see Passes.td).
  ReduceSumOp foldableSums(MatmulOp product) const {
    if (!product.getTransposeLhs() || product.getTransposeRhs())
      return nullptr;
    Attribute vjpOf = product->getAttr(kVjpOfAttr);
    if (!vjpOf)
      return nullptr;
    auto dy = cast<RankedTensorType>(product.getLhs().getType());
    auto x = cast<RankedTensorType>(product.getRhs().getType());
    if (dy.getRank() != 2 || x.getRank() != 2)
      return nullptr;
    int64_t rows = dy.getDimSize(0), out = dy.getDimSize(1), in = x.getDimSize(1);
    if (rows == 0 || !unpadded(out, in, rows))
      return nullptr;
    capsules::SmallProductRule small{smallMultiplyAdds, smallMaxK};
    if (small.covers({1, out, in, rows}))
      return nullptr;
    for (Operation *user : product.getLhs().getUsers()) {
      auto sums = dyn_cast<ReduceSumOp>(user);
      if (sums && sums.getAxes() == ArrayRef<int64_t>{0} &&
          sums->getAttr(kVjpOfAttr) == vjpOf &&
          sums->getBlock() == product->getBlock())
        return sums;
    }
    return nullptr;
  }

  void runOnOperation() override {
    SmallVector<MatmulOp> products;
    getOperation().walk([&](MatmulOp op) { products.push_back(op); });
    for (MatmulOp product : products) {
      ReduceSumOp sums = foldableSums(product);
      if (!sums)
        continue;
      // Both read only values defined before either: the earlier one's place
      // comes before every use of both results.
      Operation *first = product->isBeforeInBlock(sums) ? product.getOperation()
                                                         : sums.getOperation();
      OpBuilder b(first);
      auto folded = b.create<LinearWeightGradOp>(product.getLoc(), product.getLhs(),
                                                 product.getRhs());
      // The product's node and tags (vjp_of): the sums' are the same.
      for (NamedAttribute attr : product->getDiscardableAttrs())
        folded->setAttr(attr.getName(), attr.getValue());
      product.getResult().replaceAllUsesWith(folded.getWeightGrad());
      sums.getResult().replaceAllUsesWith(folded.getBiasGrad());
      product.erase();
      sums.erase();
    }
  }
};

} // namespace
