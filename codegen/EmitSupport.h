//===- EmitSupport.h - small helpers every emitter uses ---------*- C++ -*-===//
#ifndef VOUCH_CODEGEN_EMITSUPPORT_H
#define VOUCH_CODEGEN_EMITSUPPORT_H

#include <string>

#include "ir/VouchOps.h"

namespace vouch::codegen {

inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType()).getShape();
}

inline int64_t numel(mlir::Value v) { return getNumElements(v.getType()); }

/// A double as a literal that reads back exactly.
inline std::string exact(double value) { return exactLiteral(value); }

/// C++ string literal of `text` (for generated sources).
std::string cppStringLiteral(llvm::StringRef text);

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_EMITSUPPORT_H
