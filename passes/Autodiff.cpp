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

struct AutodiffPass : public vouch::impl::AutodiffBase<AutodiffPass> {
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

  // VJP rules build every operand's gradient; drop those nobody reads (the
  // gradient of a target or an input, say).
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (op.hasAttr(kVjpOfAttr) && op.use_empty())
      op.erase();
}

} // namespace
