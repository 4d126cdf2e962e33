//===- FusePointwise.cpp - pointwise chains into one kernel -----*- C++ -*-===//
//
// A training step of a small model is launch-bound, and a chain of pointwise
// ops is memory-bound: one kernel per chain removes launches and round trips
// through memory. The pass only decides the grouping; codegen emits it.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/IR/Builders.h"
#include "passes/TapeLayout.h"

namespace vouch {
#define GEN_PASS_DEF_FUSEPOINTWISE
#include "passes/Passes.h.inc"
} // namespace vouch

using namespace mlir;
using namespace vouch;

bool vouch::isFusible(Operation *op) {
  // round_bf16: the identity in the chain, a bf16 store of its kernel.
  if (isa<PointwiseOpInterface, FillOp, RoundBf16Op>(op))
    return true;
  auto broadcast = dyn_cast<BroadcastOp>(op);
  return broadcast &&
         cast<RankedTensorType>(broadcast.getInput().getType()).getRank() == 0;
}

namespace {

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
    // The kernel sequences: the forward pass, then each node's VJP (ops
    // outside both, the prologue, are never fused).
    TapeLayout layout = computeTapeLayout(model);
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
    // Forward first, then the VJPs in the order the tape runs them (last
    // node first), so kernel numbers follow execution.
    SmallVector<SmallVector<Operation *>> segments = {layout.forwardOps()};
    for (auto it = layout.nodes.rbegin(); it != layout.nodes.rend(); ++it)
      segments.push_back(it->vjp);
    for (ArrayRef<Operation *> segment : segments) {
      SmallVector<Operation *> run;
      // The run's ops, and the values it reads from outside (the kernel's
      // loads, as codegen's PointwiseRecipe counts them).
      llvm::SmallPtrSet<Operation *, 16> inside;
      llvm::SmallDenseSet<Value, 16> loads;
      auto closeRun = [&] {
        close(run);
        inside.clear();
        loads.clear();
      };
      int64_t runElements = -1;
      for (Operation *op : segment) {
        int64_t elements = getNumElements(op->getResult(0).getType());
        // An op already grouped (a bf16 twin's rounding with its op, by
        // vouch-round-bf16-operands) is no pointwise chain's.
        if (!isFusible(op) || op->hasAttr(kFusionGroupAttr)) {
          closeRun();
          continue;
        }
        if (!run.empty() && elements != runElements)
          closeRun();
        // A run at its limits (kMaxFusedOps, kMaxFusedLoads) ends before
        // this op, which starts the next.
        auto newLoads = [&] {
          llvm::SmallDenseSet<Value, 4> fresh;
          for (Value v : op->getOperands())
            if (!inside.contains(v.getDefiningOp()) && !loads.contains(v))
              fresh.insert(v);
          return fresh.size();
        };
        if (run.size() >= static_cast<size_t>(kMaxFusedOps) ||
            loads.size() + newLoads() > static_cast<size_t>(kMaxFusedLoads))
          closeRun();
        run.push_back(op);
        inside.insert(op);
        for (Value v : op->getOperands())
          if (!inside.contains(v.getDefiningOp()))
            loads.insert(v);
        runElements = elements;
      }
      closeRun();
    }
  }
};

} // namespace
