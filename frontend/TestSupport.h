//===- TestSupport.h - importing snippets in the frontend's tests -*- C++ -*-===//
//
// Imports a description from a string and keeps what the frontend reported,
// as "line:col: severity: message" strings, so tests can check messages and
// their positions word for word.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_FRONTEND_TESTSUPPORT_H
#define VOUCH_FRONTEND_TESTSUPPORT_H

#include <string>
#include <vector>

#include "frontend/Frontend.h"
#include "ir/VouchOps.h"
#include "llvm/ADT/StringRef.h"
#include "mlir/IR/MLIRContext.h"

namespace vouch::frontend::testing {

struct CapturedDiagnostic {
  unsigned line = 0, column = 0;
  std::string severity; // "error", "note", "warning", "remark"
  std::string message;
  std::vector<CapturedDiagnostic> notes;

  /// "3:12: error: unknown name 'w3'".
  std::string str() const;
};

struct ImportResult {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<CapturedDiagnostic> diagnostics;

  /// The module's vouch.model (null when there is no module).
  ModelOp model();
  /// Every diagnostic and note, one per line, for failure messages.
  std::string dump() const;
  /// The error diagnostics (notes excluded) as str() strings.
  std::vector<std::string> errors() const;
};

ImportResult importSource(mlir::MLIRContext &context, llvm::StringRef source,
                          llvm::StringRef fileName = "test.vouch",
                          const ImportOptions &options = {});

/// The contents of a file of the test's runfiles (e.g. an example).
std::string readRunfile(const std::string &path);

} // namespace vouch::frontend::testing

#endif // VOUCH_FRONTEND_TESTSUPPORT_H
