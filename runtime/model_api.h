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
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device.h"
#include "runtime/init.h"
#include "runtime/status.h"
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

// Choices of a run that a model implementation may need (the cuda target).
struct RunConfig {
  bool cuda_graph = true;      // --no-cuda-graph turns it off
  bool deterministic = false;  // --deterministic or TORCHLEAN_CUDA_DETERMINISTIC_REDUCTIONS=1
};

template <class T>
struct CompiledModel {
  virtual ~CompiledModel() = default;
  // Storage of parameter i (ParamInfo::numel elements) and of its gradient.
  // Device-resident models return host mirrors (see upload/download_params).
  virtual T* param(int i) = 0;
  virtual T* grad(int i) = 0;
  // One batch: x [batch, in_features], y [batch, out_features]. Records one tape node
  // per executed op when tape != nullptr. Returns the loss.
  virtual T forward(const T* x, const T* y, Tape* tape) = 0;
  // [batch, out_features]: the prediction of the last forward.
  virtual const T* prediction() const = 0;
  // Zeroes the gradients, then runs tape.backward on the model's state.
  virtual void backward(Tape& tape) = 0;

  // --- Device-resident models (the cuda target) --------------------------------------
  // They keep params, gradients and optimizer state on the device and run a whole
  // training step there (forward recording the tape, the tape's VJPs, one optimizer
  // kernel), possibly replayed as one CUDA graph. train_main then calls these instead
  // of backward() and the host Optimizer.
  virtual bool device_resident() const { return false; }
  virtual Status configure(const RunConfig&) { return Status::Ok(); }
  virtual Status upload_params() { return Status::Ok(); }    // param() mirrors -> device
  virtual Status download_params() { return Status::Ok(); }  // device -> param() mirrors
  virtual Status upload_data(const T* /*x*/, const T* /*y*/, int64_t /*rows*/) {
    return Status::Ok();
  }
  // Trains on batch `batch` of the uploaded data; returns its loss before the update.
  virtual Result<double> train_step(int64_t /*batch*/, const OptimizerConfig&, Tape*) {
    return Status::Error("this model is not device-resident");
  }
  // The first error of forward() (which returns a bare T), or Ok.
  virtual Status status() const { return Status::Ok(); }
  // Allocator telemetry for --mem-stats (empty where there is none).
  virtual std::string memory_report() const { return ""; }
};

// One implementation of the model on one device. An executable built for the
// cuda target carries a cpu and a cuda backend; `--device auto` picks cuda only
// when `ready()` says a device is usable.
struct Backend {
  Device device = Device::Cpu;
  std::unique_ptr<CompiledModel<float>> (*make_f32)() = nullptr;
  std::unique_ptr<CompiledModel<double>> (*make_f64)() = nullptr;
  Status (*ready)() = nullptr;  // nullptr: always usable
  // --show-backend: each capsule's report block by capsule name, printed at the
  // capsule's first use on the tape; `header` first.
  std::string header;
  std::map<std::string, std::string> capsule_reports;
};

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_MODEL_API_H_
