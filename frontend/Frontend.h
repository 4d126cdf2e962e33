//===- Frontend.h - model description language → vouch dialect -*- C++ -*-===//
//
// The one entry point of the frontend. Everything it reports goes through
// MLIR's diagnostic engine with FileLineColLoc locations, so a driver that
// installs a SourceMgrDiagnosticHandler prints `file:line:col: error: …`
// with the source line and a caret.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_FRONTEND_FRONTEND_H
#define VOUCH_FRONTEND_FRONTEND_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace vouch::frontend {

struct ImportOptions {
  /// Replaces the batch size of the description's `train` clause.
  std::optional<int64_t> batch;
  /// Replaces the values of the description's configs of these names (the
  /// driver's --config NAME=VALUE); a name the description does not declare
  /// as a config is an error.
  std::map<std::string, double> configs;
};

/// Parses the model description in `sourceMgr`'s main buffer and lowers it to
/// a builtin module holding one `vouch.model`. Reports every error it finds
/// (not only the first) and returns null if there was any.
mlir::OwningOpRef<mlir::ModuleOp> importModel(llvm::SourceMgr &sourceMgr,
                                              mlir::MLIRContext &context,
                                              const ImportOptions &options = {});

/// The builtin functions of the language, in the op table's order: one per
/// row of ir/OpTable.h with a builtin name.
std::vector<llvm::StringRef> builtinFunctionNames();

} // namespace vouch::frontend

#endif // VOUCH_FRONTEND_FRONTEND_H
