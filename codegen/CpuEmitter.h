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

namespace vouch::codegen {

struct CpuEmitOptions {
  std::string sourceName; ///< the model file, named in the header comment
  /// Capsule name per compute op (forward and backward) recorded on the tape;
  /// "unassigned" when absent.
  std::map<mlir::Operation *, std::string> capsules;
};

/// Emits the executable's C++ source. The model must have been through
/// vouch-autodiff. Unsupported constructs are reported through the
/// diagnostic engine at the op's location.
mlir::FailureOr<std::string> emitCpuModel(ModelOp model,
                                          const CpuEmitOptions &options);

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_CPUEMITTER_H
