//===- Diagnostics.h - source locations and error reporting -----*- C++ -*-===//
//
// Every error the frontend finds leaves through one object: it turns a point
// in the source buffer into an MLIR FileLineColLoc (1-based line and column,
// file name = the buffer identifier), emits through MLIR's diagnostic engine,
// and counts, so importModel knows whether to return a module at all.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_FRONTEND_DIAGNOSTICS_H
#define VOUCH_FRONTEND_DIAGNOSTICS_H

#include <optional>
#include <string>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace vouch::frontend {

class SourceDiagnostics {
public:
  /// Reports on the main buffer of `sourceMgr`.
  SourceDiagnostics(llvm::SourceMgr &sourceMgr, mlir::MLIRContext &context);

  mlir::MLIRContext &getContext() const { return context; }
  llvm::StringRef getBuffer() const { return buffer; }
  llvm::StringRef getBufferIdentifier() const { return fileName.getValue(); }

  /// The FileLineColLoc of a point in the buffer (its end included).
  mlir::Location getLocation(llvm::SMLoc loc) const;

  /// Starts an error at `loc`; the caller streams the message into it.
  mlir::InFlightDiagnostic emitError(llvm::SMLoc loc);

  unsigned getErrorCount() const { return errorCount; }

private:
  llvm::SourceMgr &sourceMgr;
  mlir::MLIRContext &context;
  unsigned bufferId;
  llvm::StringRef buffer;
  mlir::StringAttr fileName;
  unsigned errorCount = 0;
};

/// The candidate closest to `name` by edit distance, if it is close enough to
/// be a plausible typo (a third of the name's length, at least one edit).
std::optional<llvm::StringRef>
findClosestName(llvm::StringRef name, llvm::ArrayRef<llvm::StringRef> candidates);

/// "a, b, c": the list of known names that error messages end with.
std::string joinNames(llvm::ArrayRef<llvm::StringRef> names);

} // namespace vouch::frontend

#endif // VOUCH_FRONTEND_DIAGNOSTICS_H
