//===- PadClasses.cpp - an LM head's classes padded to a quantum -*- C++ -*-===//
//
// A tensor-core product whose row pitch is not a multiple of its quantum runs
// padded, the executor copying operands and output around the library call
// (runtime/cuda/gemm_call.h); at GPT-2's vocabulary of 50257 those copies
// are of the [B·T, 50257] logits and their gradient, every step. Padding the
// classes in the model instead (llm.c's padded vocabulary) makes the products
// aligned and the copies disappear; cross_entropy's `classes` and the
// output's `columns` keep the padding out of the loss, the gradients and the
// prediction. The pass only rewrites; ir/VouchOps.td says what the ops
// compute with those attributes.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace vouch {
#define GEN_PASS_DEF_PADCLASSES
#include "passes/Passes.h.inc"
} // namespace vouch

using namespace mlir;
using namespace vouch;

namespace {

struct PadClassesPass : public vouch::impl::PadClassesBase<PadClassesPass> {
  using PadClassesBase::PadClassesBase;

  void runOnOperation() override {
    const int64_t q = quantum; // (an Option streams as no number)
    if (q < 0 || q > kMaxPadClassesQuantum) {
      getOperation()->emitError("vouch-pad-classes: quantum must be in [0, ")
          << kMaxPadClassesQuantum << "], got " << q;
      return signalPassFailure();
    }
    if (quantum <= 1)
      return;
    SmallVector<LinearOp> heads;
    getOperation().walk([&](CrossEntropyOp loss) {
      auto head = loss.getLogits().getDefiningOp<LinearOp>();
      if (head && !llvm::is_contained(heads, head))
        heads.push_back(head);
    });
    for (LinearOp head : heads)
      pad(head);
  }

  /// Pads `head`'s classes where its logits are read only by cross_entropy
  /// ops (as logits, every class counted) and output ops (whole).
  void pad(LinearOp head) {
    auto logits = cast<RankedTensorType>(head.getType());
    const int64_t classes = logits.getShape().back();
    if (classes % quantum == 0)
      return;
    for (Operation *user : head->getUsers()) {
      if (auto loss = dyn_cast<CrossEntropyOp>(user);
          loss && loss.getLogits() == head.getResult() && !loss.getClasses())
        continue;
      if (auto out = dyn_cast<OutputOp>(user); out && !out.getColumns())
        continue;
      return;
    }
    const int64_t padded = (classes + quantum - 1) / quantum * quantum;
    Location loc = head.getLoc();
    OpBuilder b(head);
    // The rows [classes, padded) of the weight and bias zero: x·0 = 0.
    auto zeroRows = [&](Value v) -> Value {
      if (!v)
        return v;
      auto type = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape.front() = padded;
      return b.create<SliceScatterOp>(
          loc, RankedTensorType::get(shape, type.getElementType()), v,
          b.getI64IntegerAttr(0), b.getI64IntegerAttr(0),
          b.getI64IntegerAttr(classes), b.getI64IntegerAttr(1));
    };
    // (One statement each: the weight's first, whichever order a compiler
    // evaluates arguments in.)
    Value weight = zeroRows(head.getWeight());
    Value bias = zeroRows(head.getBias());
    SmallVector<int64_t> shape(logits.getShape());
    shape.back() = padded;
    auto wide = b.create<LinearOp>(
        loc, RankedTensorType::get(shape, logits.getElementType()), head.getInput(),
        weight, bias);
    for (Operation *user : llvm::make_early_inc_range(head->getUsers())) {
      if (auto out = dyn_cast<OutputOp>(user)) {
        out.getValueMutable().assign(wide);
        out.setColumnsAttr(b.getI64IntegerAttr(classes));
        continue;
      }
      auto loss = cast<CrossEntropyOp>(user);
      OpBuilder at(loss);
      auto counted = at.create<CrossEntropyOp>(
          loss.getLoc(), loss.getType(), wide, loss.getLabels(),
          loss.getIgnoreIndexAttr(), at.getI64IntegerAttr(classes));
      loss.getResult().replaceAllUsesWith(counted.getResult());
      loss.erase();
    }
    head.erase();
  }
};

} // namespace
