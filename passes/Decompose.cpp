//===- Decompose.cpp - composite ops into their composed form ---*- C++ -*-===//
//
// A composite op (CompositeOpInterface) is shorthand the language offers for
// a composition of other ops; what it stands for is written once, in the
// op's section of ir/VouchOps.cpp. This pass only asks each one to build it.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"

namespace vouch {
#define GEN_PASS_DEF_DECOMPOSE
#include "passes/Passes.h.inc"
} // namespace vouch

using namespace mlir;
using namespace vouch;

void vouch::addAutodiffPasses(OpPassManager &pm) {
  OpPassManager &model = pm.nest<ModelOp>();
  model.addPass(createDecompose());
  model.addPass(createAutodiff());
}

namespace {

struct DecomposePass : public vouch::impl::DecomposeBase<DecomposePass> {
  void runOnOperation() override {
    SmallVector<CompositeOpInterface> composites;
    getOperation().walk(
        [&](CompositeOpInterface op) { composites.push_back(op); });
    for (CompositeOpInterface op : composites) {
      OpBuilder builder(op);
      SmallVector<Value> results;
      if (failed(op.decompose(builder, results))) {
        op->emitOpError("could not be decomposed");
        return signalPassFailure();
      }
      assert(results.size() == op->getNumResults() &&
             "decompose gives one value per result");
      op->replaceAllUsesWith(results);
      op->erase();
    }
  }
};

} // namespace
