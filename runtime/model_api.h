// model_api.h: the interface between a generated model and the runtime.
//
// The code generator emits, for each model, a ModelDescription (parameters with their
// shapes and initialisers, batch, data clause, optimizer, defaults) and, per backend, a
// Program (runtime/program.h: buffers, steps, tape nodes as tables). The runtime's
// executors turn a Program into a CompiledModel<T> per element type, which owns the
// parameter, gradient and activation buffers and runs the forward and VJP steps
// (runtime/executor.h for cpu, runtime/cuda/executor.h for cuda). The shared
// executable driver (train_main.h) does everything else: flags, data, initialisation,
// the training loop, checkpoints and the printed output. A generated main() is:
//
//   int main(int argc, char** argv) {
//     static const ModelDescription model = describe();
//     return train_main(argc, argv, model, {cpu_backend(), cuda_backend()});
//   }
//
// where each backend's function hands its executor the Program decoded from the
// executable's tables blob (program_tables_or_exit, runtime/model_tables.h: a blob that
// does not decode and check is refused, the executable exits 1) with its kernels (cpu:
// kCpuKernelsF32 / F64; cuda: the cubin, PTX and product math) and report texts
// (a cpu-only executable passes only cpu_backend() and need not link runtime/cuda).
#ifndef VOUCH_RUNTIME_MODEL_API_H_
#define VOUCH_RUNTIME_MODEL_API_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device.h"
#include "runtime/init.h"
#include "runtime/memory.h"
#include "runtime/status.h"
#include "runtime/optim.h"
#include "runtime/program.h"
#include "runtime/tape.h"

namespace vouch::rt {

struct ParamInfo {
  std::string name;            // also its name in safetensors checkpoints
  std::vector<int64_t> shape;  // weights [out, in, ...]
  int64_t numel = 0;           // product of shape
  InitSpec init;
};

// A piece of non-trainable state (batch_norm's running statistics): persists across
// steps, starts at `init` (0: a running mean, 1: a running variance), is saved in and
// loaded from checkpoints by `name` beside the params, and has no gradient.
struct StateInfo {
  std::string name;            // "<weight>.running_mean", also its checkpoint name
  std::vector<int64_t> shape;  // [C]
  int64_t numel = 0;
  double init = 0;
  bool nonnegative = false;  // a variance: a checkpoint's negative value is refused
};

struct DataSpec {
  enum Kind { RegressionGrid, Csv, Npy, Tokens } kind = RegressionGrid;
  double lo = -1, hi = 1;  // RegressionGrid: linspace(lo, hi, n) squared
  int64_t n = 5;
  std::string path;        // Csv: "file.csv"; Npy: one file per field, comma-separated,
                           // in field order ("x.npy,labels.npy"); Tokens: the token file
  bool random = false;     // Tokens: order = random (else sequential windows)
};

// A token stream (`data tokens(...)`, runtime/tokens.h) as a device-resident model
// reads it: `count` token ids of `token_bytes` (2: uint16, 4: uint32 / int32, every
// value checked to be a valid id) at `tokens`, in host memory that `keep` keeps alive
// (a read-only mapping of the file). Step k's row r is the window of context + 1
// tokens at token_window_start (runtime/cuda/kernels/token_windows.h) of (k, r):
// input row = window[0, context), target row = window[1, context].
struct TokenStream {
  std::shared_ptr<const void> keep;
  const void* tokens = nullptr;
  int64_t count = 0;
  int token_bytes = 2;
  int64_t context = 0;
  bool random = false;
  // The whole read-only mapping `tokens` lies in (the cuda executor registers it).
  const void* mapping = nullptr;
  size_t mapping_bytes = 0;
};

// One data field: an input or a target, fed [batch, ...] rows at a time.
struct FieldInfo {
  std::string name;
  DType dtype = DType::Real;  // Real: the run's element type; I32: int32 in every run
  int64_t row_elems = 1;      // elements per row (the product of the axes after batch)
  bool target = false;
  // I32 fields: the values the model's ops accept, [min_value, max_value] or
  // `also` (an ignore_index); `use` says why ("cross_entropy's labels (10 classes)").
  // The loader refuses any other value before training.
  int64_t min_value = INT32_MIN, max_value = INT32_MAX;
  int64_t also = INT64_MIN;  // INT64_MIN: none
  std::string use;
};

struct ModelDescription {
  std::string name;
  std::vector<ParamInfo> params;  // declaration order: param i is seeded with index i
  std::vector<StateInfo> states;  // program order (Program::states)
  // The inputs, then the targets, in declaration order. in_features / out_features
  // are their rows' element counts summed: a dataset row holds the inputs' columns,
  // then the targets' (runtime/dataset.h).
  std::vector<FieldInfo> fields;
  int64_t batch = 1, in_features = 0, out_features = 0;
  DataSpec data;
  OptimizerConfig optimizer;
  int64_t steps = 200, log_every = 25;  // defaults of --steps and --log-every
  // A classifier: the output holds [batch, classes] logits of cross_entropy against
  // the integer field `label_field`; -1: not a classifier (no accuracy is printed).
  int32_t label_field = -1;
  // The output's shape ([batch, ...]; --predict writes [rows, ...]).
  std::vector<int64_t> output_shape;
  int64_t classes = 0, ignore_index = -100;
  // The train clause's `shuffle = true`: each epoch visits the rows in the order of
  // shuffled_row (runtime/cuda/kernels/shuffle.h) keyed by the run seed and the epoch.
  bool shuffle = false;
  int64_t eval_every = 0;  // default of --eval-every (0: evaluate after training only)
  // The eval clause: the held-out data, a fraction of the data's rows (the last
  // ones, see split_held_out) or a file of its own (eval_data.path, Csv or Npy);
  // neither: no evaluation unless --eval asks.
  double eval_fraction = 0;
  DataSpec eval_data{DataSpec::Npy};
};

// Choices of a run that a model implementation may need (the cuda target).
struct RunConfig {
  bool cuda_graph = true;      // --no-cuda-graph turns it off
  bool deterministic = false;  // --deterministic (the cuda runtime also reads its env var)
  bool audit_launches = false;  // --audit-launches: audit the first captured step's graph
  bool profile = false;         // --profile: time every launch of one step (profile_report)
  // The train clause's `shuffle = true` (unless --no-shuffle): step k trains on the rows
  // of a per-epoch order keyed by `seed` (runtime/cuda/kernels/shuffle.h); `batch` is
  // the model's batch size.
  bool shuffle = false;
  uint64_t seed = 0;  // --seed: the shuffled order's and the random ops' (counter_rng.h)
  int64_t batch = 1;
};

template <class T>
struct CompiledModel {
  virtual ~CompiledModel() = default;
  // Storage of parameter i (ParamInfo::numel elements) and of its gradient.
  // Device-resident models return host mirrors (see upload/download_params).
  virtual T* param(int i) = 0;
  virtual T* grad(int i) = 0;
  // Storage of state i (StateInfo::numel elements; Program::states), nullptr when i is
  // out of range. Device-resident models return host mirrors, which upload_params and
  // download_params move with the params. A model without state keeps the default.
  virtual T* state(int /*i*/) { return nullptr; }
  // One batch of a model with one real input and one real target: x [batch,
  // in_features], y [batch, out_features]. Records one tape node per executed op when
  // tape != nullptr. Returns the loss.
  virtual T forward(const T* x, const T* y, Tape* tape) = 0;
  // One batch of any model: fields[i] holds field i's [batch, row_elems] rows
  // (ModelDescription::fields order) as T (DType::Real) or int32_t (DType::I32).
  // The default serves models of one real input and one real target.
  virtual T forward_fields(const void* const* fields, Tape* tape) {
    return forward(static_cast<const T*>(fields[0]), static_cast<const T*>(fields[1]), tape);
  }
  // [batch, out_features]: the prediction of the last forward.
  virtual const T* prediction() const = 0;
  // The VJPs of the last forward (tape.backward on the model's state, last node
  // first); afterwards grad(i) holds the loss's gradient for param i. The executors
  // (runtime/executor.h, runtime/cuda/executor.h) first run the Program's
  // constant-gradient prologue and zero nothing: every gradient buffer is written (not
  // accumulated into) by the step that produces it, each step. A hand-written model
  // may instead zero its gradients and accumulate into them (the runtime's tests do).
  virtual void backward(Tape& tape) = 0;

  // --- Device-resident models (the cuda target) --------------------------------------
  // They keep params, gradients, optimizer state and the whole dataset on the device
  // and run a whole training step there (batch selection, forward recording the tape,
  // the tape's VJPs, one optimizer kernel, the loss into a ring buffer, the step
  // counter), possibly replayed from a CUDA graph. train_main then calls these instead
  // of forward/backward and the host Optimizer:
  //
  //   configure(run); upload_params(); upload_fields(fields, num_batches);
  //   enqueue_steps(opt, 1, &tape); then enqueue_steps(opt, n, nullptr) for the rest;
  //       ... read_losses(first, count, out) when it needs losses (log points, the last
  //       step, and before loss_capacity() unread steps would be overwritten);
  //   download_params().
  //
  // enqueue_steps only enqueues: it never waits for the device, so steps pipeline and
  // the host reads losses only when asked. Step k (the k-th step enqueued since
  // upload_params, from 0) trains on batch k % num_batches and keeps its loss (before
  // its update) in ring slot k % loss_capacity() until step k + loss_capacity()
  // overwrites it.
  virtual bool device_resident() const { return false; }
  virtual Status configure(const RunConfig&) { return Status::Ok(); }
  // param() and state() mirrors -> device; also zeroes the optimizer state and the step
  // counter.
  virtual Status upload_params() { return Status::Ok(); }
  // device -> param() and state() mirrors
  virtual Status download_params() { return Status::Ok(); }
  // The whole dataset: x [num_batches * batch, in_features], y likewise, uploaded once.
  virtual Status upload_data(const T* /*x*/, const T* /*y*/, int64_t /*num_batches*/) {
    return Status::Ok();
  }
  // The whole dataset of any model: fields[i] holds field i's num_batches * batch rows,
  // stored as forward_fields takes them. The default serves one real input and target.
  virtual Status upload_fields(const void* const* fields, int64_t num_batches) {
    return upload_data(static_cast<const T*>(fields[0]), static_cast<const T*>(fields[1]),
                       num_batches);
  }
  // Training data of a token stream instead of upload_fields: the model's first field
  // is the input, its second the target (both int32 [batch, context]); each step
  // computes its windows from the device step counter and reads the tokens where they
  // lie (the cuda executor maps the host memory; it is never copied to the device
  // whole). `run.seed` (configure) keys the random order.
  virtual Status upload_tokens(const TokenStream& /*tokens*/) {
    return Status::Error("this model cannot stream tokens");
  }
  // Enqueues the next `count` training steps and returns without waiting for them
  // (several at once let the cuda executor replay them as fewer, larger CUDA graphs).
  // When `tape` is given it receives the step's tape (the same every step: the program
  // is static).
  virtual Status enqueue_steps(const OptimizerConfig&, int64_t /*count*/, Tape* /*tape*/) {
    return Status::Error("this model is not device-resident");
  }
  Status enqueue_step(const OptimizerConfig& o, Tape* tape) { return enqueue_steps(o, 1, tape); }
  // With RunConfig::audit_launches, after the first step: every node of its CUDA graph
  // and the named launch that made it, then a summary line (empty when nothing was
  // audited); and how many nodes no named launch made or that are not the kernel named.
  virtual std::string launch_audit() const { return ""; }
  virtual int64_t launch_audit_problems() const { return 0; }
  // How many consecutive steps' losses the device keeps (> 0 for a device-resident
  // model).
  virtual int64_t loss_capacity() const { return 0; }
  // Waits for the enqueued work, then writes the losses of steps [first, first+count)
  // to out[0..count). Errors (and writes nothing) when a step was not enqueued yet or
  // its slot was overwritten (first < steps enqueued - loss_capacity()); also returns
  // the first error of the device work enqueued so far.
  virtual Status read_losses(int64_t /*first*/, int64_t /*count*/, double* /*out*/) {
    return Status::Error("this model is not device-resident");
  }
  // The first error of forward() (which returns a bare T) or of the model's
  // construction, or Ok.
  virtual Status status() const { return Status::Ok(); }
  // Allocator telemetry for --mem-stats (empty where there is none).
  virtual std::string memory_report() const { return ""; }
  // With RunConfig::profile, after training: the device time of every launch of one
  // training step, by capsule (empty when no step was profiled).
  virtual std::string profile_report() const { return ""; }
  // The same step's launches in the order they ran, one line each: "launch\tms\tstep\t
  // capsule\twhat\n" (step: the program step, -1 for batch selection, gradient norm and
  // optimizer), after a header line starting with '#'; empty when no step was profiled.
  virtual std::string profile_launches() const { return ""; }
};

// One implementation of the model on one device. An executable built for the
// cuda target carries a cpu and a cuda backend; `--device auto` picks cuda only
// when `ready()` says a device is usable. The factories may capture state (a Program,
// kernel tables, module bytes: see runtime/executor.h's cpu_program_backend and
// runtime/cuda/executor.h's cuda_program_backend); a missing one means the
// executable was built without that element type.
struct Backend {
  Device device = Device::Cpu;
  std::function<std::unique_ptr<CompiledModel<float>>()> make_f32;
  std::function<std::unique_ptr<CompiledModel<double>>()> make_f64;
  // Why make_f64 is missing, when the backend says more than "not built".
  std::string no_f64_reason;
  std::function<Status()> ready;  // empty: always usable
  // What a model of this backend allocates in a run whose real type has `real_bytes`
  // bytes (4: f32, 8: f64), host and device (memory.h); train_main refuses a run that
  // does not fit before making the model. Empty: not known (hand-written backends).
  std::function<MemoryNeed(int64_t real_bytes)> memory_need;
  // A device backend's device memory free now (cuda: cudaMemGetInfo); empty for cpu.
  std::function<Result<uint64_t>()> device_memory_free;
  // --show-backend: `header` first, then each capsule's report block by capsule name,
  // printed at the capsule's first use on the tape.
  std::string header;
  std::map<std::string, std::string> capsule_reports;
};

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_MODEL_API_H_
