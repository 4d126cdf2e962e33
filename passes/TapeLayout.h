//===- TapeLayout.h - which op runs where on the tape -----------*- C++ -*-===//
//
// One analysis of a differentiated model's layout, read by planning, fusion
// and both emitters so they cannot disagree: the forward nodes in tape
// order, the backward ops of each node (its VJP, what the tape calls), and
// the prologue (compute ops of no node: autodiff's constant gradients of
// params off the loss path, run before the VJPs each step).
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_PASSES_TAPELAYOUT_H
#define VOUCH_PASSES_TAPELAYOUT_H

#include <vector>

#include "ir/VouchOps.h"

namespace vouch {

struct TapeLayout {
  struct Node {
    int64_t id;                                  ///< vouch.node
    mlir::Operation *op;                         ///< the forward op
    llvm::SmallVector<mlir::Operation *> vjp;    ///< vouch.vjp_of = id, op order
  };
  std::vector<Node> nodes;                       ///< by id: the forward order
  llvm::SmallVector<mlir::Operation *> prologue; ///< neither attribute, op order

  /// The forward ops in tape order.
  llvm::SmallVector<mlir::Operation *> forwardOps() const;
};

/// The layout of `model`'s compute ops (structural ops are not in it). Ops
/// of a model not differentiated yet have no vouch.node: they all land in
/// the prologue.
TapeLayout computeTapeLayout(ModelOp model);

} // namespace vouch

#endif // VOUCH_PASSES_TAPELAYOUT_H
