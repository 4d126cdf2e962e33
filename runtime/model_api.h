// model_api.h: the interface between a generated model and the runtime.
//
// The code generator emits, for each model, a ModelDescription (parameters with their
// shapes and initialisers, batch, data clause, optimizer, defaults) and a
// CompiledModel<T> per element type that owns the parameter, gradient and activation
// buffers and runs the compiled forward and VJP code. The shared executable driver
// (train_main.h) does everything else: flags, data, initialisation, the training
// loop, checkpoints and the printed output.
#ifndef VOUCH_RUNTIME_MODEL_API_H_
#define VOUCH_RUNTIME_MODEL_API_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/init.h"
#include "runtime/optim.h"
#include "runtime/tape.h"

namespace vouch::rt {

struct ParamInfo {
  std::string name;            // also its name in safetensors checkpoints
  std::vector<int64_t> shape;  // weights [out, in, ...]
  int64_t numel = 0;           // product of shape
  InitSpec init;
};

struct DataSpec {
  enum Kind { RegressionGrid, Csv, Npy } kind = RegressionGrid;
  double lo = -1, hi = 1;  // RegressionGrid: linspace(lo, hi, n) squared
  int64_t n = 5;
  std::string path;        // Csv: "file.csv"; Npy: "x.npy,y.npy"
};

struct ModelDescription {
  std::string name;
  std::vector<ParamInfo> params;  // declaration order: param i is seeded with index i
  int64_t batch = 1, in_features = 0, out_features = 0;
  DataSpec data;
  OptimizerConfig optimizer;
  int64_t steps = 200, log_every = 25;  // defaults of --steps and --log-every
};

template <class T>
struct CompiledModel {
  virtual ~CompiledModel() = default;
  // Storage of parameter i (ParamInfo::numel elements) and of its gradient.
  virtual T* param(int i) = 0;
  virtual T* grad(int i) = 0;
  // One batch: x [batch, in_features], y [batch, out_features]. Records one tape node
  // per executed op when tape != nullptr. Returns the loss.
  virtual T forward(const T* x, const T* y, Tape* tape) = 0;
  // [batch, out_features]: the prediction of the last forward.
  virtual const T* prediction() const = 0;
  // Zeroes the gradients, then runs tape.backward on the model's state.
  virtual void backward(Tape& tape) = 0;
};

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_MODEL_API_H_
