//===- CpuEmitter.h - host C++ for the cpu target ---------------*- C++ -*-===//
//
// Turns a differentiated vouch.model into one C++ translation unit: a
// CompiledModel<T> (runtime/model_api.h) with one buffer per value, one
// function per forward node, one VJP function per tape node, and a main()
// that hands everything to the runtime's train_main.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CODEGEN_CPUEMITTER_H
#define VOUCH_CODEGEN_CPUEMITTER_H

#include <map>
#include <string>

#include "ir/VouchOps.h"
#include "passes/Gate.h"

namespace vouch::codegen {

struct CpuEmitOptions {
  std::string sourceName; ///< the model file, named in the header comment
  /// Emit main() with the cpu backend only. The cuda target emits its own
  /// main() carrying both backends.
  bool emitMain = true;
};

/// Emits the executable's C++ source for a model the assurance gate
/// accepted: codegen takes an AcceptedGraphPlan, never a bare model. Each
/// tape node names its op's capsule and kernel from the plan. Unsupported
/// constructs are reported through the diagnostic engine at the op.
mlir::FailureOr<std::string> emitCpuModel(ModelOp model,
                                          const AcceptedGraphPlan &plan,
                                          const CpuEmitOptions &options);

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_CPUEMITTER_H
