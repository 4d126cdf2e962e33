//===- Pipelines.cpp - the pass sequences every build runs -------*- C++ -*-===//
//
// Which passes run, in which order, for every model that trains and for every
// cuda build: the one place that says so (Passes.h documents each sequence);
// each pass says what it does in Passes.td and its own file.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace vouch;

void vouch::addAutodiffPasses(OpPassManager &pm, StringRef attention,
                              int64_t recomputeMinElements, int64_t padClasses,
                              bool recomputeLayerNorm) {
  OpPassManager &model = pm.nest<ModelOp>();
  DecomposeOptions options;
  options.attention = attention.str();
  model.addPass(createDecompose(options));
  model.addPass(createFoldQkvAttention());
  PadClassesOptions pad;
  pad.quantum = padClasses;
  model.addPass(createPadClasses(pad));
  model.addPass(createFoldLayerNormAdd());
  AutodiffOptions autodiff;
  if (recomputeMinElements >= 0)
    autodiff.recomputeMinElements = recomputeMinElements;
  autodiff.recomputeLayerNorm = recomputeLayerNorm;
  model.addPass(createAutodiff(autodiff));
  model.addPass(createFoldLayerNormGradSum());
}

void vouch::addCudaPasses(OpPassManager &modelPm,
                          const capsules::SmallProductRule &small,
                          capsules::ProductPrecision products,
                          bool biasGradEpilogue) {
  if (biasGradEpilogue)
    modelPm.addPass(createFoldLinearBiasGrad(
        FoldLinearBiasGradOptions{small.maxMultiplyAdds, small.maxK}));
  modelPm.addPass(createFoldCol2im());
  if (products == capsules::ProductPrecision::Bf16)
    modelPm.addPass(createRoundBf16Operands(
        RoundBf16OperandsOptions{small.maxMultiplyAdds, small.maxK}));
  modelPm.addPass(createFusePointwise());
}
