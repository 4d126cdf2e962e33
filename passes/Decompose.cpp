//===- Decompose.cpp - composite ops into their composed form ---*- C++ -*-===//
//
// A composite op (CompositeOpInterface) is shorthand the language offers for
// a composition of other ops (its composed form), and may have a fused form
// too; what each stands for is written once, in the op's section of
// ir/VouchOps.cpp. This pass only picks the form and asks the op to build it.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace vouch {
#define GEN_PASS_DEF_DECOMPOSE
#include "passes/Passes.h.inc"
} // namespace vouch

using namespace mlir;
using namespace vouch;

namespace {

struct DecomposePass : public vouch::impl::DecomposeBase<DecomposePass> {
  using DecomposeBase::DecomposeBase;

  void runOnOperation() override {
    if (attention != "composed" && attention != "fused" && attention != "auto") {
      getOperation()->emitError("vouch-decompose: attention must be composed, "
                                "fused or auto, got '")
          << attention << "'";
      return signalPassFailure();
    }
    SmallVector<CompositeOpInterface> composites;
    getOperation().walk(
        [&](CompositeOpInterface op) { composites.push_back(op); });
    for (CompositeOpInterface op : composites) {
      OpBuilder builder(op);
      SmallVector<Value> results;
      // The attention option picks among the forms of ops that have two
      // (a convolution has only its composed form).
      bool twoForms = op.hasFusedForm();
      bool fused = attention != "composed" && twoForms &&
                   succeeded(op.fuse(builder, results));
      if (!fused && attention == "fused" && twoForms) {
        op->emitOpError("has no fused form for these operands (the fused "
                        "attention kernels take heads of at most ")
            << FlashAttentionOp::kMaxHeadDim
            << " features); use --attention composed or auto";
        return signalPassFailure();
      }
      if (!fused && failed(op.decompose(builder, results))) {
        op->emitOpError("could not be decomposed");
        return signalPassFailure();
      }
      assert(results.size() == op->getNumResults() &&
             "one value per result");
      op->replaceAllUsesWith(results);
      op->erase();
    }
  }
};

} // namespace
