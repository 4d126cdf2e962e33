//===- FoldLayerNormAdd.cpp - a residual add in its layer_norm ----*- C++ -*-===//
//
// A transformer block's residual stream adds a branch to the stream and
// normalises the sum for the next branch: add then layer_norm, the add
// writing the sum and the layer_norm reading it back. layer_norm can take
// the add's second term as its addend and write the sum itself (one kernel,
// one read of the sum fewer), with the same bits: the sum is rounded as the
// add rounds it and then normalised. ir/VouchOps.td's layer_norm says what
// `addend` means and its VJP how the gradient flows; the pass only rewrites.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"

namespace vouch {
#define GEN_PASS_DEF_FOLDLAYERNORMADD
#include "passes/Passes.h.inc"
} // namespace vouch

using namespace mlir;
using namespace vouch;

namespace {

/// The add whose sum `norm` normalises, when `norm` can take its terms: the
/// layer_norm has no addend yet and both are of one block. (An add's operands
/// and result have one type: its verifier says so.)
AddOp foldableAdd(LayerNormOp norm) {
  if (norm.getAddend())
    return nullptr;
  auto add = norm.getInput().getDefiningOp<AddOp>();
  if (!add || add->getBlock() != norm->getBlock())
    return nullptr;
  return add;
}

struct FoldLayerNormAddPass
    : public vouch::impl::FoldLayerNormAddBase<FoldLayerNormAddPass> {
  void runOnOperation() override {
    SmallVector<LayerNormOp> norms;
    getOperation().walk([&](LayerNormOp op) { norms.push_back(op); });
    DominanceInfo dominance(getOperation());
    // Whether `v` (null: none) already exists where `op` is.
    auto existsAt = [&](Value v, Operation *op) {
      return !v || dominance.properlyDominates(v, op);
    };
    for (LayerNormOp norm : norms) {
      AddOp add = foldableAdd(norm);
      if (!add)
        continue;
      Value sum = add.getResult(), weight = norm.getWeight(), bias = norm.getBias();
      // The fused op writes the sum, so it goes where the add was, before the
      // sum's other readers (the next residual add, say), where its weight and
      // bias already exist; else where the layer_norm was, if no other reader
      // of the sum comes between the two.
      Operation *at = add;
      if (!existsAt(weight, add) || !existsAt(bias, add)) {
        at = norm;
        if (llvm::any_of(sum.getUsers(), [&](Operation *user) {
              return user != norm && user->isBeforeInBlock(norm);
            }))
          continue;
      }
      OpBuilder b(at);
      // Both places, the layer_norm's first: the report names each.
      Location loc = b.getFusedLoc({norm.getLoc(), add.getLoc()});
      auto folded = b.create<LayerNormOp>(
          loc, norm.getResult().getType(), sum.getType(), add.getLhs(),
          add.getRhs(), weight, bias, norm.getEpsAttr());
      for (NamedAttribute attr : norm->getDiscardableAttrs())
        folded->setAttr(attr.getName(), attr.getValue());
      norm.getResult().replaceAllUsesWith(folded.getResult());
      norm.erase();
      sum.replaceAllUsesWith(folded.getSum());
      add.erase();
    }
  }
};

} // namespace
