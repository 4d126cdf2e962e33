//===- ProgramEmitter.h - an accepted plan as a runtime Program -*- C++ -*-===//
//
// Walks a planned, gated model in tape layout (passes/TapeLayout.h) and lets
// the recipe bound to each op's capsule add its steps: the forward pass, the
// prologue, each node's VJP. The result is one ProgramBuilder per backend,
// written out by ModelSource.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CODEGEN_PROGRAMEMITTER_H
#define VOUCH_CODEGEN_PROGRAMEMITTER_H

#include <memory>

#include "codegen/ProgramBuilder.h"
#include "passes/Gate.h"

namespace vouch::codegen {

/// The Program of `model` for `target`, from the plan the gate accepted for
/// it (the model carries that plan's vouch.capsule / vouch.kernel). Fails
/// with a diagnostic when a planned capsule has no recipe on `target` or
/// the recipe cannot be bound to it. `reuseStorage`: buffers whose
/// lifetimes are disjoint share storage (ProgramBuilder::reuseStorage);
/// false gives every value its own (vouch build --no-buffer-reuse).
mlir::FailureOr<std::unique_ptr<ProgramBuilder>>
buildProgram(ModelOp model, const AcceptedGraphPlan &plan, Target target,
             bool reuseStorage = true);

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_PROGRAMEMITTER_H
