//===- Frontend.cpp - model description language → vouch dialect ----------===//
#include "frontend/Frontend.h"

#include "frontend/Diagnostics.h"
#include "frontend/Lowering.h"
#include "frontend/Parser.h"
#include "ir/VouchOps.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/IR/Verifier.h"

using namespace vouch::frontend;

mlir::OwningOpRef<mlir::ModuleOp>
vouch::frontend::importModel(llvm::SourceMgr &sourceMgr,
                             mlir::MLIRContext &context,
                             const ImportOptions &options) {
  vouch::registerVouchDialect(context);
  if (sourceMgr.getNumBuffers() == 0) {
    mlir::emitError(mlir::UnknownLoc::get(&context))
        << "no model description to import";
    return nullptr;
  }
  SourceDiagnostics diagnostics(sourceMgr, context);
  // A file with syntax errors is still lowered: the statements that parsed
  // may hold more errors, and the user wants them all at once.
  ast::File file = parseFile(diagnostics);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      Lowering(diagnostics, options).lowerFile(file);
  if (diagnostics.getErrorCount() > 0 || !module)
    return nullptr;
  // The lowering checks what it builds; a verifier failure here would be a
  // frontend bug, and is reported like any other error.
  if (mlir::failed(mlir::verify(*module)))
    return nullptr;
  return module;
}
