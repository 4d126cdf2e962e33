//===- Shapes.h - shape arithmetic shared by the builtins -------*- C++ -*-===//
//
// Pure functions on static shapes: NumPy broadcasting, element counts that
// refuse to overflow, axis normalisation. The lowering turns their failures
// into diagnostics that name the op and the shapes involved.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_FRONTEND_SHAPES_H
#define VOUCH_FRONTEND_SHAPES_H

#include <cstdint>
#include <optional>
#include <string>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

namespace vouch::frontend {

/// The product of the extents, or nothing if it overflows int64.
std::optional<int64_t> countElements(llvm::ArrayRef<int64_t> shape);

/// NumPy broadcasting: shapes are aligned at their trailing axes, and each
/// pair of extents must be equal or contain a 1.
struct BroadcastResult {
  llvm::SmallVector<int64_t> shape;
  /// On failure: the offending axis counted from the end (-1 is the last).
  int64_t conflictAxis = 0;
  bool ok = true;
};
BroadcastResult broadcastShapes(llvm::ArrayRef<int64_t> lhs,
                                llvm::ArrayRef<int64_t> rhs);

/// The result axes the axes of a rank-`fromRank` tensor occupy when it is
/// broadcast (trailing-aligned) to rank `toRank`: the `dims` of
/// vouch.broadcast.
llvm::SmallVector<int64_t> trailingAxes(int64_t fromRank, int64_t toRank);

/// Maps an axis in [-rank, rank) to [0, rank); nothing if out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

} // namespace vouch::frontend

#endif // VOUCH_FRONTEND_SHAPES_H
