//===- Passes.h - every vouch pass ------------------------------*- C++ -*-===//
#ifndef VOUCH_PASSES_PASSES_H
#define VOUCH_PASSES_PASSES_H

#include <memory>

#include "ir/VouchOps.h"
#include "passes/Attributes.h"
#include "mlir/Pass/Pass.h"

namespace vouch {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"


/// vouch-decompose then vouch-autodiff, nested on every model: what every
/// pipeline that trains runs first. `attention` is vouch-decompose's option
/// (composed, fused or auto); `recomputeMinElements` vouch-autodiff's
/// recompute-min-elements (-1: its default).
void addAutodiffPasses(mlir::OpPassManager &pm,
                       llvm::StringRef attention = "composed",
                       int64_t recomputeMinElements = -1);

/// True for ops the fusion pass may put into a pointwise kernel.
bool isFusible(mlir::Operation *op);

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace vouch

#endif // VOUCH_PASSES_PASSES_H
