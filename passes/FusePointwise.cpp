//===- FusePointwise.cpp - pointwise chains into one kernel -----*- C++ -*-===//
//
// A training step of a small model is launch-bound, and a chain of pointwise
// ops is memory-bound: one kernel per chain removes launches and round trips
// through memory. The pass only decides the grouping; codegen emits it.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace vouch {
#define GEN_PASS_DEF_FUSEPOINTWISE
#include "passes/Passes.h.inc"
} // namespace vouch

using namespace mlir;
using namespace vouch;

bool vouch::isFusible(Operation *op) {
  if (isa<PointwiseOpInterface, FillOp>(op))
    return true;
  auto broadcast = dyn_cast<BroadcastOp>(op);
  return broadcast &&
         cast<RankedTensorType>(broadcast.getInput().getType()).getRank() == 0;
}

namespace {

/// Which kernel sequence an op belongs to: the forward pass (-1), the VJP of
/// one node (its id), or none (ops outside both are never fused).
std::optional<int64_t> segmentOf(Operation *op) {
  if (op->hasAttr(kNodeAttr))
    return -1;
  if (auto of = op->getAttrOfType<IntegerAttr>(kVjpOfAttr))
    return of.getInt();
  return std::nullopt;
}

struct FusePointwisePass
    : public vouch::impl::FusePointwiseBase<FusePointwisePass> {
  /// broadcast(fill c) -> fill c of the broadcast's shape, keeping the
  /// broadcast's tags: a constant needs no load, so it can join a group of
  /// any size (the autodiff seed dL = 1 feeding the loss's VJP, say).
  void foldBroadcastOfFill(ModelOp model) {
    SmallVector<BroadcastOp> broadcasts;
    model.walk([&](BroadcastOp op) { broadcasts.push_back(op); });
    for (BroadcastOp broadcast : broadcasts) {
      auto fill = broadcast.getInput().getDefiningOp<FillOp>();
      if (!fill)
        continue;
      OpBuilder b(broadcast);
      auto folded = b.create<FillOp>(broadcast.getLoc(), broadcast.getType(),
                                     fill.getValueAttr());
      for (NamedAttribute attr : broadcast->getDiscardableAttrs())
        folded->setAttr(attr.getName(), attr.getValue());
      broadcast.getResult().replaceAllUsesWith(folded.getResult());
      broadcast.erase();
      if (fill->use_empty())
        fill.erase();
    }
  }

  void runOnOperation() override {
    ModelOp model = getOperation();
    foldBroadcastOfFill(model);
    // Ops of each segment, in block order.
    std::map<int64_t, SmallVector<Operation *>> segments;
    for (Operation &op : model.getBlock())
      if (auto segment = segmentOf(&op))
        segments[*segment].push_back(&op);

    int groups = 0;
    Builder b(model.getContext());
    auto close = [&](SmallVector<Operation *> &run) {
      if (run.size() >= 2) {
        StringAttr name = b.getStringAttr(model.getSymName() + "_fused" +
                                          std::to_string(groups++));
        for (Operation *op : run)
          op->setAttr(kFusionGroupAttr, name);
      }
      run.clear();
    };
    // Forward first, then backward segments in the order the tape runs them
    // (last node first), so kernel numbers follow execution.
    SmallVector<int64_t> order;
    if (segments.count(-1))
      order.push_back(-1);
    for (auto it = segments.rbegin(); it != segments.rend(); ++it)
      if (it->first != -1)
        order.push_back(it->first);
    for (int64_t segment : order) {
      SmallVector<Operation *> run;
      int64_t runElements = -1;
      for (Operation *op : segments[segment]) {
        int64_t elements = getNumElements(op->getResult(0).getType());
        if (!isFusible(op)) {
          close(run);
          continue;
        }
        if (!run.empty() && elements != runElements)
          close(run);
        run.push_back(op);
        runElements = elements;
      }
      close(run);
    }
  }
};

} // namespace
