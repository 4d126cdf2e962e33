//===- FoldLayerNormGradSum.cpp - a residual's gradient sum in its LN VJP -===//
//
// A value read by a layer_norm and by something else (a transformer's
// residual stream: x feeds both the block's layer_norm and the residual add)
// gets its gradient as a sum: vouch-autodiff adds the layer_norm's dx to the
// gradient from the other readers. The add reads both tensors and writes a
// third; layer_norm_grad can add its addend as it writes dx instead (one
// kernel, one tensor fewer), with the same bits: dx is rounded first and
// floating-point addition commutes. ir/VouchOps.td's layer_norm_grad says
// what `addend` means; the pass only rewrites.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"

namespace vouch {
#define GEN_PASS_DEF_FOLDLAYERNORMGRADSUM
#include "passes/Passes.h.inc"
} // namespace vouch

using namespace mlir;
using namespace vouch;

namespace {

/// The layer_norm_grad whose dx is operand `i` of `add`, when the add can
/// become its addend: the add is of the same VJP (vouch.vjp_of) as the
/// layer_norm_grad, dx is read only here, the layer_norm_grad has no addend
/// yet, and the other operand already exists where it is. (An add's operands
/// and result have one type: its verifier says so.)
LayerNormGradOp foldableGrad(AddOp add, unsigned i, const DominanceInfo &dominance) {
  Value dx = add->getOperand(i), other = add->getOperand(1 - i);
  auto grad = dx.getDefiningOp<LayerNormGradOp>();
  if (!grad || grad.getDx() != dx || !dx.hasOneUse() || grad.getAddend())
    return nullptr;
  Attribute node = add->getAttr(kVjpOfAttr);
  if (!node || grad->getAttr(kVjpOfAttr) != node)
    return nullptr;
  if (!dominance.properlyDominates(other, grad))
    return nullptr;
  return grad;
}

struct FoldLayerNormGradSumPass
    : public vouch::impl::FoldLayerNormGradSumBase<FoldLayerNormGradSumPass> {
  void runOnOperation() override {
    SmallVector<AddOp> adds;
    getOperation().walk([&](AddOp op) { adds.push_back(op); });
    DominanceInfo dominance(getOperation());
    for (AddOp add : adds) {
      for (unsigned i : {0u, 1u}) {
        LayerNormGradOp grad = foldableGrad(add, i, dominance);
        if (!grad)
          continue;
        OpBuilder b(grad);
        auto folded = b.create<LayerNormGradOp>(
            grad.getLoc(), grad.getGrad(), grad.getInput(), grad.getWeight(),
            grad.getWithBias(), grad.getEpsAttr(), add->getOperand(1 - i));
        for (NamedAttribute attr : grad->getDiscardableAttrs())
          folded->setAttr(attr.getName(), attr.getValue());
        add.getResult().replaceAllUsesWith(folded.getDx());
        for (auto [from, to] :
             llvm::zip(grad.getParamGrads(), folded.getParamGrads()))
          from.replaceAllUsesWith(to);
        add.erase();
        grad.erase();
        break;
      }
    }
  }
};

} // namespace
