//===- frontend_fuzzer.cc - the frontend and autodiff on any text ---------===//
//
// Coverage-guided companion of //frontend:fuzz_test (which replays a fixed set
// of seeded mutations in every build): the input is a .vouch text, imported
// with frontend::importModel as the driver does, then differentiated with
// vouch-decompose and vouch-autodiff (addAutodiffPasses, what `vouch build`
// runs next) when it imported. Properties, besides "no crash, no assertion, no
// sanitizer report, no hang": an import ends in a module that verifies and no
// error, or in no module and at least one error; every error has a
// file:line:col location inside the text (line >= 1, column >= 1); the
// differentiated module verifies, or the passes said why.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <string>

#include "frontend/Frontend.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "tests/fuzz/fuzz_file.h"

using vouch::fuzz::fail;

namespace {

// Bounds what one input may ask for, so that executions stay fast: the
// language's own limits (100,000 ops) are reachable from a few bytes, and such
// a model takes seconds to import and differentiate. Larger inputs are still
// imported; only the passes are skipped past this many ops.
constexpr int64_t kMaxOpsDifferentiated = 2000;

struct Errors {
  int count = 0;
  std::string first;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  const unsigned lines = 1 + text.count('\n') + text.count('\r');

  mlir::MLIRContext context;
  context.allowUnregisteredDialects(false);
  Errors errors;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() != mlir::DiagnosticSeverity::Error)
      return mlir::success();
    ++errors.count;
    const std::string message = diag.str();
    if (errors.first.empty())
      errors.first = message;
    auto loc = llvm::dyn_cast<mlir::FileLineColLoc>(diag.getLocation());
    if (!loc)
      fail("an error without file:line:col: " + message);
    if (loc.getLine() < 1 || loc.getLine() > lines || loc.getColumn() < 1)
      fail("an error at " + std::to_string(loc.getLine()) + ":" +
           std::to_string(loc.getColumn()) + ", outside the text's " +
           std::to_string(lines) + " lines: " + message);
    return mlir::success();
  });

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.vouch"), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      vouch::frontend::importModel(sourceMgr, context);
  if (!module) {
    if (errors.count == 0)
      fail("no module and no error");
    return 0;
  }
  if (errors.count != 0)
    fail("a module and an error: " + errors.first);
  if (mlir::failed(mlir::verify(*module)))
    fail("the imported module does not verify: " + errors.first);

  int64_t ops = 0;
  module->walk([&](mlir::Operation *) { ++ops; });
  if (ops > kMaxOpsDifferentiated)
    return 0;
  mlir::PassManager pm(&context);
  vouch::addAutodiffPasses(pm);
  if (mlir::failed(pm.run(*module))) {
    if (errors.count == 0)
      fail("autodiff failed without an error");
    return 0;
  }
  if (mlir::failed(mlir::verify(*module)))
    fail("the differentiated module does not verify: " + errors.first);
  return 0;
}
