//===- Arguments.h - binding call arguments to parameters -------*- C++ -*-===//
//
// Builtins, blocks, initialisers, optimizers and data sources are all called
// the same way, with Python's rules: positional arguments first, then
// `name = value`; optional parameters have defaults. One binder gives all of
// them the same checks and messages (arity, unknown or repeated keywords,
// missing arguments), each message ending with the signature.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_FRONTEND_ARGUMENTS_H
#define VOUCH_FRONTEND_ARGUMENTS_H

#include <optional>
#include <string>

#include "frontend/AST.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/IR/Diagnostics.h"

namespace vouch::frontend {

class SourceDiagnostics;

struct ParamSpec {
  llvm::StringRef name;
  /// How the default reads in a signature ("false", "all"); empty if the
  /// parameter is required.
  llvm::StringRef defaultText = {};

  bool isRequired() const { return defaultText.empty(); }
};

struct Signature {
  /// The callee as the user wrote it ("linear", "adam", a block's name).
  llvm::StringRef name;
  llvm::ArrayRef<ParamSpec> params;
  /// What a parameter is called in messages ("argument", "hyper-parameter").
  llvm::StringRef noun = "argument";

  /// "linear(input, weight, bias = none)".
  std::string format() const;
};

using ErrorEmitter = llvm::function_ref<mlir::InFlightDiagnostic(llvm::SMLoc)>;

/// Binds `args` to the parameters of `signature`. Returns, per parameter, the
/// index of its argument or -1 where an optional one was left out; reports
/// every problem through `emitError` and returns nothing if there was one.
std::optional<llvm::SmallVector<int>>
bindArguments(const Signature &signature, llvm::ArrayRef<ast::Argument> args,
              llvm::SMLoc callLoc, ErrorEmitter emitError,
              const SourceDiagnostics &diagnostics);

} // namespace vouch::frontend

#endif // VOUCH_FRONTEND_ARGUMENTS_H
