//===- TestSupport.cpp - importing snippets in the frontend's tests -------===//
#include "frontend/TestSupport.h"

#include <fstream>
#include <sstream>

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"

using namespace vouch::frontend::testing;

std::string CapturedDiagnostic::str() const {
  return std::to_string(line) + ":" + std::to_string(column) + ": " +
         severity + ": " + message;
}

static CapturedDiagnostic capture(mlir::Diagnostic &diag) {
  CapturedDiagnostic result;
  if (auto loc = llvm::dyn_cast<mlir::FileLineColLoc>(diag.getLocation())) {
    result.line = loc.getLine();
    result.column = loc.getColumn();
  }
  switch (diag.getSeverity()) {
  case mlir::DiagnosticSeverity::Error: result.severity = "error"; break;
  case mlir::DiagnosticSeverity::Warning: result.severity = "warning"; break;
  case mlir::DiagnosticSeverity::Note: result.severity = "note"; break;
  case mlir::DiagnosticSeverity::Remark: result.severity = "remark"; break;
  }
  result.message = diag.str();
  for (mlir::Diagnostic &note : diag.getNotes())
    result.notes.push_back(capture(note));
  return result;
}

vouch::ModelOp ImportResult::model() {
  if (!module)
    return nullptr;
  for (mlir::Operation &op : module->getBody()->getOperations())
    if (auto model = llvm::dyn_cast<ModelOp>(op))
      return model;
  return nullptr;
}

std::string ImportResult::dump() const {
  std::string text;
  for (const CapturedDiagnostic &diag : diagnostics) {
    text += diag.str() + "\n";
    for (const CapturedDiagnostic &note : diag.notes)
      text += "  " + note.str() + "\n";
  }
  return text;
}

std::vector<std::string> ImportResult::errors() const {
  std::vector<std::string> result;
  for (const CapturedDiagnostic &diag : diagnostics)
    if (diag.severity == "error")
      result.push_back(diag.str());
  return result;
}

ImportResult vouch::frontend::testing::importSource(
    mlir::MLIRContext &context, llvm::StringRef source, llvm::StringRef fileName,
    const ImportOptions &options) {
  ImportResult result;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, fileName), llvm::SMLoc());
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    result.diagnostics.push_back(capture(diag));
    return mlir::success();
  });
  result.module = importModel(sourceMgr, context, options);
  return result;
}

std::string vouch::frontend::testing::readRunfile(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}
