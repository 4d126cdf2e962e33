//===- ModelDescription.h - a model's declarations for the runtime -*- C++ -*-===//
//
// The one reader of a vouch.model's declarations (params and initialisers,
// the input and target, the data and train clauses): it produces the
// runtime's ModelDescription, which codegen emits into every executable and
// `vouch run --interpret` starts from, so both see the same model.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CODEGEN_MODELDESCRIPTION_H
#define VOUCH_CODEGEN_MODELDESCRIPTION_H

#include <string>

#include "ir/VouchOps.h"
#include "runtime/model_api.h"

namespace vouch::codegen {

/// The runtime's description of `model`. Fails with a diagnostic on the
/// model unless it has at least one input and one target, each f32, f64 or i32
/// with the batch as its first axis (what the runtime's training loop feeds).
mlir::FailureOr<rt::ModelDescription> describeModel(ModelOp model);

/// The values an executable is built around, after vouch-autodiff.
struct TrainingSignature {
  llvm::SmallVector<ParamOp> params;     ///< declaration order
  llvm::SmallVector<StateOp> states;     ///< program order (ModelDescription::states)
  llvm::SmallVector<mlir::Value> grads;  ///< grads[i]: params[i]'s gradient
  llvm::SmallVector<mlir::Operation *> fields;  ///< the inputs, then the targets
  mlir::Value loss, output;
  /// The output op's `columns` (its value's rows padded past them); 0: unset.
  int64_t outputColumns = 0;
};

/// The signature of a differentiated model, checked: its data fields,
/// one output, a loss, a gradient per param (diagnostics on failure).
mlir::FailureOr<TrainingSignature> trainingSignature(ModelOp model);

/// `ModelDescription describe()` rebuilding `d`, as C++ for generated code.
std::string emitDescribeFunction(const rt::ModelDescription &d);

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_MODELDESCRIPTION_H
