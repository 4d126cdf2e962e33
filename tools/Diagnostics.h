//===- Diagnostics.h - how the driver prints diagnostics --------*- C++ -*-===//
//
// The model file's text and the printer of every diagnostic against it, owned
// together: diagnostics point into the text until the last command is done
// (codegen and the gate report against source locations too). Declared after
// the MLIRContext it registers with, so it is destroyed first; nothing leaks
// (LeakSanitizer found the old `new SourceMgr` / `new handler`).
//
// It prints as MLIR's SourceMgrDiagnosticHandler does (`file:line:col:
// error: message`, the source line, a caret), except that nothing is printed
// whole that could be megabytes: a source line longer than kMaxExcerptBytes is
// shown as a window around the column, cut with "..." at either end; a
// message line longer than kMaxMessageLineBytes is cut; and a message of more
// than kMaxMessageLines lines (MLIR's "see current operation" note on an op
// with a body: the gate's summary on the model op printed the whole module,
// 31 KB) keeps its first line and says how many were not shown. While an
// error limit is set (the import), errors past it are counted, not printed.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_TOOLS_DIAGNOSTICS_H
#define VOUCH_TOOLS_DIAGNOSTICS_H

#include <cstdint>
#include <memory>
#include <string>

#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

namespace vouch::driver {

class DriverDiagnostics {
public:
  static constexpr size_t kMaxExcerptBytes = 200;
  static constexpr size_t kMaxMessageLineBytes = 400;
  static constexpr size_t kMaxMessageLines = 8;

  /// Registers the printer with `context` (for the printer's lifetime).
  explicit DriverDiagnostics(mlir::MLIRContext &context,
                             llvm::raw_ostream &os = llvm::errs());
  ~DriverDiagnostics();
  DriverDiagnostics(const DriverDiagnostics &) = delete;
  DriverDiagnostics &operator=(const DriverDiagnostics &) = delete;

  mlir::MLIRContext &context() { return context_; }
  llvm::SourceMgr &sourceMgr() { return sourceMgr_; }

  /// Adds the model file's text as the source manager's buffer named `path`,
  /// a UTF-8 byte order mark at its start dropped and CRLF and lone CR line
  /// ends read as LF (lines and columns then count as an editor shows them).
  void addSource(llvm::StringRef text, llvm::StringRef path);

  /// From now on, errors after the first `limit` (0: none) are counted and
  /// not printed, with one line saying so the first time (for `path`).
  void limitErrors(int64_t limit, std::string path);
  /// Every error is printed again.
  void unlimitErrors() { limit_ = 0; }

private:
  mlir::LogicalResult handle(mlir::Diagnostic &diagnostic);
  void print(mlir::Location loc, llvm::StringRef message,
             mlir::DiagnosticSeverity severity);

  mlir::MLIRContext &context_;
  llvm::raw_ostream &os_;
  llvm::SourceMgr sourceMgr_;
  /// Prints a location and message the way MLIR does (its public
  /// emitDiagnostic); its own handler never sees a diagnostic, since ours,
  /// registered after it, runs first and handles every one.
  std::unique_ptr<mlir::SourceMgrDiagnosticHandler> printer_;
  mlir::DiagnosticEngine::HandlerID handler_ = 0;
  int64_t limit_ = 0, errors_ = 0;
  std::string limitedPath_;
};

/// `message` as a diagnostic prints it: at most kMaxMessageLines lines (else
/// the first, and the second when the first only leads into it, as "see
/// current operation: " does; then how many were not shown), each cut at
/// kMaxMessageLineBytes. Exposed for its test.
std::string shortenMessage(llvm::StringRef message);

/// The part of `line` a diagnostic at 1-based byte column `column` shows:
/// the line itself when at most kMaxExcerptBytes long, else a window of about
/// that many bytes around the column (on UTF-8 character boundaries), "..."
/// where it was cut. `caret` receives the column of the caret in the excerpt
/// (0-based, in characters). Exposed for its test.
std::string excerptLine(llvm::StringRef line, unsigned column, unsigned &caret);

} // namespace vouch::driver

#endif // VOUCH_TOOLS_DIAGNOSTICS_H
