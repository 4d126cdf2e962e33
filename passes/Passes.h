//===- Passes.h - every vouch pass ------------------------------*- C++ -*-===//
#ifndef VOUCH_PASSES_PASSES_H
#define VOUCH_PASSES_PASSES_H

#include <memory>

#include "capsules/Profile.h"
#include "ir/VouchOps.h"
#include "passes/Attributes.h"
#include "mlir/Pass/Pass.h"

namespace vouch {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"


/// vouch-decompose, vouch-fold-qkv-attention, vouch-pad-classes,
/// vouch-fold-layer-norm-add, vouch-autodiff, then
/// vouch-fold-layer-norm-grad-sum, nested on every model: what every pipeline
/// that trains runs first. `attention` is vouch-decompose's option (composed, fused or
/// auto); `recomputeMinElements` vouch-autodiff's recompute-min-elements (-1:
/// its default); `padClasses` vouch-pad-classes' quantum (0: off);
/// `recomputeLayerNorm` vouch-autodiff's recompute-layer-norm.
void addAutodiffPasses(mlir::OpPassManager &pm,
                       llvm::StringRef attention = "composed",
                       int64_t recomputeMinElements = -1,
                       int64_t padClasses = 0, bool recomputeLayerNorm = false);

/// What a cuda profile runs after autodiff, before planning, nested on a
/// model: vouch-fold-linear-bias-grad where `biasGradEpilogue` asks for it
/// (leaving the products `small` covers to vouch's own kernel: the profile's
/// small-product rule; off by default: measured no faster, Passes.td),
/// vouch-fold-col2im, vouch-round-bf16-operands under bf16 `products`
/// (the same rule), then vouch-fuse-pointwise.
void addCudaPasses(mlir::OpPassManager &modelPm,
                   const capsules::SmallProductRule &small,
                   capsules::ProductPrecision products,
                   bool biasGradEpilogue = false);

/// The largest multiple vouch-pad-classes pads to (a tensor-core product's
/// quantum is 4 or 8; a tile's up to 128): a larger one buys nothing and
/// could overflow the padded extent.
inline constexpr int64_t kMaxPadClassesQuantum = 1024;

/// True for ops the fusion pass may put into a pointwise kernel.
bool isFusible(mlir::Operation *op);

/// The most ops vouch-fuse-pointwise puts into one group, and the most
/// values a group may read from outside it (the kernel's scalar mask has a
/// bit per value read). A longer run becomes several groups: one kernel's
/// size, NVRTC's time on it and its parameter list stay bounded (a repeat of
/// 10,000 pointwise ops was one kernel NVRTC did not finish in 7 minutes),
/// and runs of a repeated body give repeated groups, which share kernels.
inline constexpr int kMaxFusedOps = 64;
inline constexpr int kMaxFusedLoads = 64;

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace vouch

#endif // VOUCH_PASSES_PASSES_H
