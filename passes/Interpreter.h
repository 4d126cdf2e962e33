//===- Interpreter.h - the float64 reference interpreter --------*- C++ -*-===//
//
// Executes a verified vouch.model on the host, one op at a time, with the
// plainest possible semantics: row-major tensors of doubles, sums as left
// folds from index 0. It is the oracle that codegen, kernels and gradients
// are tested against, so it shares no code with them.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_PASSES_INTERPRETER_H
#define VOUCH_PASSES_INTERPRETER_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/VouchOps.h"
#include "llvm/ADT/DenseMap.h"

namespace vouch {

struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<double> data;
};

enum class Precision {
  F64, ///< every op computed and stored in float64
  F32  ///< every op's result rounded to float32 (storage precision)
};

/// What a run produced, by name.
struct InterpreterResult {
  double loss = 0;
  bool hasLoss = false;
  std::map<std::string, HostTensor> outputs;
  std::map<std::string, HostTensor> paramGrads;
  /// The model's state (batch_norm's running statistics) by name after the
  /// run: updated by a training forward (RandomContext::training), as fed
  /// (or initialised: zeros / ones) otherwise.
  std::map<std::string, HostTensor> states;
  llvm::DenseMap<mlir::Value, HostTensor> values;
};

/// What the random ops draw from (docs/language.md, "Random ops"): the run
/// seed, the training step, and whether this forward is a training step
/// (dropout is the identity otherwise; batch_norm uses the batch's statistics
/// and updates its running statistics in one, the running statistics
/// otherwise). `vouch run --interpret` runs a plain forward: not a training
/// step.
struct RandomContext {
  uint64_t seed = 0;
  uint64_t step = 0;
  bool training = false;
};

/// Runs `model` with `feeds` (inputs, targets, params and, optionally, state
/// by name: a state not fed starts at its initial value). Reports
/// missing or mis-shaped feeds and unsupported ops through the diagnostic
/// engine and returns failure.
mlir::FailureOr<InterpreterResult>
interpret(ModelOp model, const std::map<std::string, HostTensor> &feeds,
          Precision precision = Precision::F64,
          const RandomContext &random = RandomContext());

} // namespace vouch

#endif // VOUCH_PASSES_INTERPRETER_H
