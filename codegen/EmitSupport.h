//===- EmitSupport.h - small helpers every emitter uses ---------*- C++ -*-===//
#ifndef VOUCH_CODEGEN_EMITSUPPORT_H
#define VOUCH_CODEGEN_EMITSUPPORT_H

#include <string>
#include <vector>

#include "ir/VouchOps.h"

namespace vouch::codegen {

inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType()).getShape();
}

inline int64_t numel(mlir::Value v) { return getNumElements(v.getType()); }

/// Whether `v`'s elements are stored as int32 (i32, and i1 as 0 or 1: see
/// runtime/program.h), not as the run's real type.
inline bool storedAsInt32(mlir::Value v) {
  return llvm::cast<mlir::ShapedType>(v.getType()).getElementType().isSignlessInteger();
}

/// The strides of a row-major `source` read as broadcast to `target` (NumPy:
/// aligned from the last axis; 0 where `source` has no axis or extent 1): a
/// mask's Dims over the scores it masks.
inline std::vector<int64_t> broadcastStrides(llvm::ArrayRef<int64_t> target,
                                             llvm::ArrayRef<int64_t> source) {
  std::vector<int64_t> strides(target.size(), 0);
  int64_t stride = 1;
  for (size_t k = 1; k <= source.size(); ++k) {
    int64_t extent = source[source.size() - k];
    strides[target.size() - k] = extent == 1 ? 0 : stride;
    stride *= extent;
  }
  return strides;
}

/// A double as a literal that reads back exactly.
inline std::string exact(double value) { return exactLiteral(value); }

/// C++ string literal of `text` (for generated sources; also where a name
/// is written into a comment): `"` and `\` escaped, a newline as `\n`,
/// other control bytes (a CR, which compilers read as a line end, a NUL) as
/// three-digit octal escapes, so no byte of `text` ends the line.
std::string cppStringLiteral(llvm::StringRef text);

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_EMITSUPPORT_H
