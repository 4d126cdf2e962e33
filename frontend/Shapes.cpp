//===- Shapes.cpp - shape arithmetic shared by the builtins ---------------===//
#include "frontend/Shapes.h"

#include <algorithm>

#include "llvm/Support/CheckedArithmetic.h"

using namespace vouch::frontend;

std::optional<int64_t>
vouch::frontend::countElements(llvm::ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t extent : shape) {
    std::optional<int64_t> product = llvm::checkedMul(count, extent);
    if (!product)
      return std::nullopt;
    count = *product;
  }
  return count;
}

BroadcastResult vouch::frontend::broadcastShapes(llvm::ArrayRef<int64_t> lhs,
                                                 llvm::ArrayRef<int64_t> rhs) {
  BroadcastResult result;
  size_t rank = std::max(lhs.size(), rhs.size());
  result.shape.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t b = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    if (a != b && a != 1 && b != 1) {
      result.ok = false;
      result.conflictAxis = -static_cast<int64_t>(i) - 1;
      return result;
    }
    result.shape[rank - 1 - i] = a == 1 ? b : a;
  }
  return result;
}

llvm::SmallVector<int64_t> vouch::frontend::trailingAxes(int64_t fromRank,
                                                         int64_t toRank) {
  llvm::SmallVector<int64_t> axes;
  for (int64_t i = 0; i < fromRank; ++i)
    axes.push_back(toRank - fromRank + i);
  return axes;
}

std::optional<int64_t> vouch::frontend::normalizeAxis(int64_t axis,
                                                      int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

