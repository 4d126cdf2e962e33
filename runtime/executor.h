// executor.h: the cpu executor, a CompiledModel<T> driven by a Program's tables.
//
// Codegen emits a Program (runtime/program.h) and a table of cpu kernels per element
// type; CpuProgramModel does everything else, once at construction: one host buffer per
// owning BufferDesc (aliases share their owner's storage, so views cost nothing), every
// Kernel step's arguments resolved into ArgValues (Buffer -> element pointer, Int,
// Real, Dims -> DimsRef into Program::ints), the tape nodes each forward step completes.
// A step then is one call: kernels[k](args), matmul<T> for Gemm, linear<T> for Linear
// (runtime/cpu_kernels.h), so results are bit-identical to hand-written calls of the
// same kernels in the same order.
//
// forward() runs steps [0, forward_end) and, when given a tape, records after step s
// every NodeDesc with after_step == s (op, capsule, id, saved names, VJP, kernel);
// backward() runs the prologue steps [prologue_begin, prologue_end), then the tape
// backwards: each node's VJP runs its steps [vjp_begin, vjp_end). Nothing is zeroed
// between steps: every buffer is written by the step that produces it (buffers start
// zeroed, once).
//
// The cuda executor is runtime/cuda/executor.h; check_program is shared by both.
#ifndef VOUCH_RUNTIME_EXECUTOR_H_
#define VOUCH_RUNTIME_EXECUTOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/cuda/kernels/counter_rng.h"
#include "runtime/memory.h"
#include "runtime/model_api.h"
#include "runtime/program.h"
#include "runtime/status.h"
#include "runtime/tape.h"

namespace vouch::rt {

// Ok, or the first inconsistency of `program`, naming the table and the index: an
// index out of range (buffers, kernels, arguments, ints, steps), an alias cycle or an
// alias larger than its storage, a GEMM / linear operand smaller than its extents, a
// tape node after a non-forward step or with a duplicate id, a missing name, a Bf16
// buffer where a value is read or written as T (a data field, a param or gradient, a
// state, the loss, the output, a product's output or bias). The executors refuse a
// program that fails it (their status() says why); the cpu executor also refuses any
// Bf16 buffer, the cuda one a Bf16 buffer its products cannot read in place.
Status check_program(const Program& program);

// The cpu executor's storage of `program` in a run whose real type has `real_bytes`
// bytes: every owning buffer (alias_of == -1) one after another, each at least one
// element and starting on a 64-byte boundary. Returns the elements in all; `offsets`
// (when given) receives each owner's first element (-1 for aliases). Sizes saturate
// (memory.h), so a program too large for any machine still gives a number to refuse.
uint64_t cpu_storage_layout(const Program& program, int64_t real_bytes,
                            std::vector<int64_t>* offsets);

// The elements of every parameter of `program`.
uint64_t param_elements(const Program& program);

// The buffer that owns the storage of buffer `b` (follows alias_of; b itself when it
// owns). Precondition: check_program(program).ok().
int32_t storage_owner(const Program& program, int32_t b);

// The storage owners (storage_owner) a step reads and writes: a kernel step's Buffer
// arguments (count 1: written, 0: read), a Gemm / Linear step's a, b and bias (read)
// and c (written). Two pseudo-buffers stand for what is no buffer: a step with a
// Context argument reads `program.num_buffers` (the step counter the optimizer
// advances), and a Gemm / Linear step writes `blas_workspace` (its library handle's
// workspace, which every library call shares). Precondition: check_program(program).ok().
struct StepAccess {
  std::vector<int32_t> reads, writes;
};
std::vector<StepAccess> step_access(const Program& program, int32_t blas_workspace);

// The tape nodes in the order a forward pass records them: by after_step, nodes of
// one step in table order (ProgramTape::build; Tape::backward walks it backwards).
std::vector<int32_t> recorded_node_order(const Program& program);

// The steps one training step runs, in the order both executors run them: the forward
// steps [0, forward_end), the prologue, then each recorded node's VJP steps, the last
// recorded node first. A step in none of these ranges never runs and is not listed.
// Codegen's storage plan reads lifetimes off this order (codegen/StoragePlan.h).
std::vector<int32_t> training_step_order(const Program& program);

// The tape nodes of a Program, grouped by the forward step after which they are
// recorded (nodes of one step in program order), and the node of an id: what both
// executors record and dispatch VJPs with.
class ProgramTape {
 public:
  // Precondition: check_program(program).ok(). `vjp` goes into every node that has VJP
  // steps (vjp_begin < vjp_end); the others get nullptr. Saved buffers get their shape
  // and bytes from the buffer of that name, in the run's element type (4 bytes: f32,
  // 8: f64) for a Real one, else its own (i32, bf16: dtype_name); each node's vjp_ran
  // lists its VJP steps' `what [capsule]`.
  void build(const Program& program, VjpFn vjp, int64_t element_bytes);
  // Records the nodes completed by step `step` (none for a step >= forward_end).
  void record_after(int32_t step, Tape* tape) const {
    if (tape == nullptr || step < 0 || size_t(step) + 1 >= begin_.size()) return;
    for (int32_t i = begin_[size_t(step)]; i < begin_[size_t(step) + 1]; i++)
      tape->record(nodes_[size_t(i)]);
  }
  // What the nodes completed by `step` report as ran (TapeNode::kernel) from now on:
  // a step that ran other calls than its table names (a cuBLASLt fallback) says so. A
  // VJP step: its node's vjp_ran names `ran` for it (tapes already recorded included).
  void note_ran(int32_t step, const std::string& ran);
  // The NodeDesc with this id, or nullptr.
  const NodeDesc* node(int id) const {
    auto it = by_id_.find(id);
    return it == by_id_.end() ? nullptr : it->second;
  }

 private:
  std::vector<int32_t> begin_;    // per forward step s: nodes_[begin_[s], begin_[s+1])
  std::vector<TapeNode> nodes_;
  std::unordered_map<int, const NodeDesc*> by_id_;
  // What nodes_ point at (filled before any node takes a view, never resized after).
  std::vector<std::vector<SavedBuffer>> saved_, state_;
  std::vector<std::string> vjp_ran_;  // per recorded node (never resized after build)
  const Program* program_ = nullptr;
  std::vector<int32_t> order_;                        // recorded_node_order
  std::unordered_map<int32_t, std::string> vjp_notes_;  // VJP step -> what really ran
  // VJP step -> the recorded nodes (indices into order_) whose VJP steps include it.
  std::unordered_map<int32_t, std::vector<size_t>> vjp_step_nodes_;
  // vjp_ran_[k] from its node's VJP steps, vjp_notes_ in place of their `what`.
  void describe_vjp(size_t k);
  std::vector<std::unique_ptr<std::string>> notes_;  // note_ran's texts (stable addresses)
};

// Ok when `p` feeds exactly two real fields (one input, one target): the programs
// CompiledModel::forward(x, y) and upload_data(x, y) can serve.
Status two_real_fields(const Program& p);

template <class T>
class CpuProgramModel final : public CompiledModel<T> {
 public:
  // `program` and `kernels` (Program::num_kernels entries for element type T) are
  // borrowed and must outlive the model (generated code keeps them as constants). An
  // inconsistent program, a null kernel entry or a Bf16 buffer (a cuda bf16-products
  // feature) leaves the model unusable with the reason in status() (and configure()).
  CpuProgramModel(const Program& program, const CpuKernelFn* kernels);
  CpuProgramModel(const CpuProgramModel&) = delete;
  CpuProgramModel& operator=(const CpuProgramModel&) = delete;

  T* param(int i) override;  // nullptr when i is out of range or status() is an error
  T* grad(int i) override;
  T* state(int i) override;  // the state buffer itself (Program::states)
  // Copies the fields' rows into their buffers, runs the forward steps; returns the
  // loss (NaN when status() is an error). forward(x, y) serves a program of one real
  // input and one real target (else status() says why).
  T forward(const T* x, const T* y, Tape* tape) override;
  T forward_fields(const void* const* fields, Tape* tape) override;
  // The output buffer (its rows without their padding where Program::output_pitch is set).
  const T* prediction() const override;
  void backward(Tape& tape) override;
  // Takes the run seed of the random ops (RunConfig::seed).
  Status configure(const RunConfig& run) override {
    rng_context_[vouch::kRngSeed] = (long long)run.seed;
    return status_;
  }
  Status status() const override { return status_; }

  // The storage of buffer b (aliases resolved), or nullptr: for tests and tools.
  T* buffer(int32_t b) const;

 private:
  static void vjp(void* self, int node_id);
  void run_steps(int32_t begin, int32_t end, Tape* tape);
  Status init();

  const Program& program_;
  const CpuKernelFn* kernels_;
  Status status_ = Status::Ok();
  std::vector<T> storage_;             // every owning buffer, one after another
  std::vector<T*> pointers_;           // per buffer (aliases: their owner's storage)
  std::vector<ArgValue> args_;         // Program::args resolved, same indices
  ProgramTape tape_;
  // The random ops' step context (counter_rng.h): the training steps completed (one
  // per backward), whether the running forward records a tape, the run seed.
  long long rng_context_[vouch::kRngContextWords] = {0, 0, 0, 0};
  mutable std::vector<T> unpadded_prediction_;  // prediction() of a padded output
};

extern template class CpuProgramModel<float>;
extern template class CpuProgramModel<double>;

// The cpu Backend of a generated executable: CpuProgramModel<float> over f32 and
// CpuProgramModel<double> over f64 (either table may be nullptr: that element type is
// not built). --show-backend prints `header`, then Program::schedule when it is not
// empty, then the capsule reports. `program` and the tables must outlive the backend.
Backend cpu_program_backend(const Program& program, const CpuKernelFn* f32,
                            const CpuKernelFn* f64, std::string header,
                            std::map<std::string, std::string> capsule_reports);

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_EXECUTOR_H_
