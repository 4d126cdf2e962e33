//===- Autodiff.cpp - reverse-mode differentiation of a model ---*- C++ -*-===//
//
// Static reverse mode: the backward graph is built once, at compile time,
// from each op's VJP rule. Each backward op is tagged with the forward node
// it belongs to, which is what lets the runtime record one tape node per
// forward op and run that node's compiled VJP.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "mlir/IR/Builders.h"

namespace vouch {
#define GEN_PASS_DEF_AUTODIFF
#include "passes/Passes.h.inc"
} // namespace vouch

using namespace mlir;
using namespace vouch;

namespace {

/// Values on the gradient path: reachable from a param and reaching the loss.
llvm::DenseSet<Value> findActiveValues(ModelOp model, Value loss) {
  llvm::DenseSet<Value> fromParams;
  for (Operation &op : model.getBlock()) {
    bool active = isa<ParamOp>(op) ||
                  llvm::any_of(op.getOperands(), [&](Value v) {
                    return fromParams.contains(v);
                  });
    if (active)
      fromParams.insert(op.result_begin(), op.result_end());
  }
  llvm::DenseSet<Value> active;
  llvm::DenseSet<Value> toLoss{loss};
  for (Operation &op : llvm::reverse(model.getBlock())) {
    if (!llvm::any_of(op.getResults(),
                      [&](Value v) { return toLoss.contains(v); }))
      continue;
    for (Value operand : op.getOperands())
      toLoss.insert(operand);
  }
  for (Value v : fromParams)
    if (toLoss.contains(v))
      active.insert(v);
  return active;
}

/// The leaves of the sum of gradient contributions rooted at `add`: an
/// operand that is itself such a sum (an add of the backward pass, of the
/// same type, read only here) is expanded.
void contributionLeaves(AddOp add, SmallVectorImpl<Value> &leaves) {
  for (Value v : add->getOperands()) {
    auto inner = v.getDefiningOp<AddOp>();
    if (inner && inner->hasAttr(kVjpOfAttr) && v.hasOneUse() &&
        inner.getType() == add.getType())
      contributionLeaves(inner, leaves);
    else
      leaves.push_back(v);
  }
}

/// add(slice_scatter(a, r1), slice_scatter(b, r2), ...) -> concat(a, b, ...)
/// when the ranges r1, r2, ... of one axis (step 1) tile it exactly: each
/// position gets one piece and zeros, so the concat of the pieces in range
/// order is the same sum without the full-size zeros and additions. Other
/// contributions in the sum (a direct use of the value) are added first,
/// in their order, and the concat last. This is the gradient of a value split
/// into pieces (a transformer's qkv projection into q, k and v).
void foldTilingScatterSums(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block))) {
    auto root = dyn_cast<AddOp>(op);
    if (!root || !root->hasAttr(kVjpOfAttr) || root->use_empty())
      continue;
    SmallVector<Value> leaves, others;
    contributionLeaves(root, leaves);
    SmallVector<SliceScatterOp> pieces;
    for (Value v : leaves) {
      auto scatter = v.getDefiningOp<SliceScatterOp>();
      if (scatter && scatter->hasAttr(kVjpOfAttr) && v.hasOneUse() &&
          scatter.getType() == root.getType() && scatter.getStep() == 1 &&
          (pieces.empty() || scatter.getAxis() == pieces.front().getAxis()))
        pieces.push_back(scatter);
      else
        others.push_back(v);
    }
    if (pieces.size() < 2)
      continue;
    llvm::sort(pieces, [](SliceScatterOp x, SliceScatterOp y) {
      return x.getStart() < y.getStart();
    });
    const int64_t axis = pieces.front().getAxis();
    int64_t covered = 0;
    for (SliceScatterOp piece : pieces)
      covered = static_cast<int64_t>(piece.getStart()) == covered
                    ? static_cast<int64_t>(piece.getEnd())
                    : -1;
    if (covered != cast<RankedTensorType>(root.getType()).getDimSize(axis))
      continue;
    SmallVector<Value> inputs;
    for (SliceScatterOp piece : pieces)
      inputs.push_back(piece.getInput());
    OpBuilder b(root);
    Attribute node = root->getAttr(kVjpOfAttr);
    Value sum = b.create<ConcatOp>(root.getLoc(), root.getType(), inputs,
                                   b.getI64IntegerAttr(axis));
    sum.getDefiningOp()->setAttr(kVjpOfAttr, node);
    if (!others.empty()) {
      Value rest = others.front();
      for (Value v : llvm::drop_begin(others)) {
        rest = b.create<AddOp>(root.getLoc(), root.getType(), rest, v);
        rest.getDefiningOp()->setAttr(kVjpOfAttr, node);
      }
      sum = b.create<AddOp>(root.getLoc(), root.getType(), rest, sum);
      sum.getDefiningOp()->setAttr(kVjpOfAttr, node);
    }
    root.replaceAllUsesWith(sum);
    root.erase(); // its adds and scatters, now unread, go with the dead ops
  }
}

/// Where the backward pass reads `result` and also reads `operand`, which
/// `result` is computed from, and `result` has at least `minElements`
/// elements: `build` computes it again right before its earliest backward
/// reader (a use list has no order; the earliest in the block runs first),
/// tagged as that reader's, and every backward use reads the new value, so
/// the forward result dies with its last forward reader instead of living
/// until the backward pass. One op of the result's size (a read and a write)
/// buys that size of memory between the two passes, and the peak never
/// grows: the operand and the result have one shape.
void recomputeForBackward(Value result, Value operand, int64_t minElements,
                          function_ref<Value(OpBuilder &)> build) {
  auto backward = [](Operation *user) { return user->hasAttr(kVjpOfAttr); };
  if (cast<RankedTensorType>(result.getType()).getNumElements() < minElements ||
      !llvm::any_of(operand.getUsers(), backward))
    return;
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : result.getUses())
    if (backward(use.getOwner()))
      uses.push_back(&use);
  if (uses.empty())
    return;
  Operation *first = uses.front()->getOwner();
  for (OpOperand *use : uses)
    if (use->getOwner()->isBeforeInBlock(first))
      first = use->getOwner();
  OpBuilder b(first);
  Value again = build(b);
  again.getDefiningOp()->setAttr(kVjpOfAttr, first->getAttr(kVjpOfAttr));
  for (OpOperand *use : uses)
    use->set(again);
}

/// What the backward pass computes again (minElements > 0) instead of
/// keeping from the forward pass (recomputeForBackward):
///  - a one-operand pointwise result, from its operand (GPT-2's gelu: the
///    next linear's VJP reads gelu(h), gelu's own VJP reads h);
///  - with `layerNorms`, a layer_norm's output y (read by a following
///    linear's weight gradient, GPT-2's two a layer), from the x its
///    layer_norm_grad reads anyway (the input, or, with an addend, the `sum`
///    result), as a layer_norm of x alone: the same function of the same x
///    (an addend's sum is x rounded as the fused op rounds it).
void recomputeInBackward(Block &block, int64_t minElements, bool layerNorms) {
  if (minElements <= 0)
    return;
  for (Operation &op : block) {
    if (!op.hasAttr(kNodeAttr))
      continue;
    if (isa<PointwiseOpInterface>(op) && op.getNumOperands() == 1 &&
        op.getNumResults() == 1) {
      recomputeForBackward(op.getResult(0), op.getOperand(0), minElements,
                           [&](OpBuilder &b) {
                             Operation *again = b.clone(op);
                             again->removeAttr(kNodeAttr);
                             return again->getResult(0);
                           });
    } else if (auto norm = dyn_cast<LayerNormOp>(op); norm && layerNorms) {
      Value x = norm.getSum() ? norm.getSum() : norm.getInput();
      recomputeForBackward(norm.getResult(), x, minElements, [&](OpBuilder &b) {
        return b
            .create<LayerNormOp>(norm.getLoc(), norm.getResult().getType(), x,
                                 norm.getWeight(), norm.getBias(), norm.getEpsAttr())
            .getResult();
      });
    }
  }
}

struct AutodiffPass : public vouch::impl::AutodiffBase<AutodiffPass> {
  using AutodiffBase::AutodiffBase;
  void runOnOperation() override;
};

void AutodiffPass::runOnOperation() {
  ModelOp model = getOperation();
  Block &block = model.getBlock();
  LossOp lossOp;
  for (Operation &op : block)
    if (auto l = dyn_cast<LossOp>(op))
      lossOp = l;
  if (!lossOp) {
    model.emitOpError("has no vouch.loss: there is nothing to differentiate");
    return signalPassFailure();
  }
  for (Operation &op : block)
    if (isa<ParamGradOp>(op) || op.hasAttr(kVjpOfAttr)) {
      op.emitOpError("model is already differentiated");
      return signalPassFailure();
    }

  // Number the forward compute ops: the tape's node ids.
  SmallVector<Operation *> forward;
  Builder attrs(model.getContext());
  for (Operation &op : block) {
    // Every op that computes gets a node, foreign ones too: an op without
    // a VJP rule must be seen to be reported.
    if (isStructuralOp(&op))
      continue;
    op.setAttr(kNodeAttr, attrs.getI64IntegerAttr(forward.size()));
    forward.push_back(&op);
  }

  Value loss = lossOp.getValue();
  llvm::DenseSet<Value> active = findActiveValues(model, loss);
  OpBuilder b = OpBuilder::atBlockEnd(&block);
  llvm::DenseMap<Value, Value> grads;

  // Tags every op built since `mark` as belonging to node `node`.
  auto tagSince = [&](Operation *mark, IntegerAttr node) {
    for (Operation *op = mark ? mark->getNextNode() : &block.front(); op;
         op = op->getNextNode())
      op->setAttr(kVjpOfAttr, node);
  };

  if (active.contains(loss)) {
    Operation *mark = &block.back();
    grads[loss] = b.create<FillOp>(lossOp.getLoc(), loss.getType(),
                                   b.getF64FloatAttr(1.0));
    tagSince(mark, loss.getDefiningOp()->getAttrOfType<IntegerAttr>(kNodeAttr));
  }

  bool failed = false;
  for (Operation *op : llvm::reverse(forward)) {
    if (!llvm::any_of(op->getResults(), [&](Value v) {
          return active.contains(v) && grads.count(v);
        }))
      continue;
    auto vjp = dyn_cast<VJPOpInterface>(op);
    if (!vjp) {
      op->emitOpError("has no VJP rule, but lies on the gradient path from "
                      "the loss to the parameters");
      failed = true;
      continue;
    }
    // The zero gradients of results none flows to count as the VJP's ops,
    // so those its rule leaves unread are erased with its other dead ops
    // (flash_attention's lse).
    Operation *mark = &block.back();
    SmallVector<Value> resultGrads;
    for (Value result : op->getResults()) {
      Value g = grads.lookup(result);
      if (!g)
        g = b.create<FillOp>(op->getLoc(), result.getType(),
                             b.getF64FloatAttr(0.0));
      resultGrads.push_back(g);
    }
    SmallVector<Value> operandGrads;
    if (mlir::failed(vjp.buildVJP(b, resultGrads, operandGrads)) ||
        operandGrads.size() != op->getNumOperands()) {
      op->emitOpError("VJP rule failed");
      failed = true;
      continue;
    }
    for (auto [operand, g] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!g || !active.contains(operand))
        continue;
      Value &slot = grads[operand];
      slot = slot ? b.create<AddOp>(op->getLoc(), g.getType(), slot, g) : g;
    }
    tagSince(mark, op->getAttrOfType<IntegerAttr>(kNodeAttr));
  }
  if (failed)
    return signalPassFailure();

  // Parameters with no gradient path get an explicit zero gradient.
  SmallVector<ParamOp> params;
  for (Operation &op : block)
    if (auto p = dyn_cast<ParamOp>(op))
      params.push_back(p);
  for (ParamOp param : params) {
    Value g = grads.lookup(param.getResult());
    if (!g)
      g = b.create<FillOp>(param.getLoc(), param.getType(),
                           b.getF64FloatAttr(0.0));
    b.create<ParamGradOp>(param.getLoc(), param.getNameAttr(), g);
  }

  foldTilingScatterSums(block);
  recomputeInBackward(block, recomputeMinElements, recomputeLayerNorm);

  // VJP rules build every operand's gradient; drop those nobody reads (the
  // gradient of a target or an input, say).
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (op.hasAttr(kVjpOfAttr) && op.use_empty())
      op.erase();
}

} // namespace
