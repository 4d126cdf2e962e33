// executor.h: the cuda executor, a device-resident CompiledModel<T> driven by a
// Program's tables (runtime/program.h).
//
// Construction does everything that cannot happen inside a CUDA graph capture, once:
// the session stream and the cuBLAS handles bound to it, the model's kernel images
// (each its cubin, else its PTX: module.h), a handle per kernel table entry (`kernel_names[i]` + "_f32" /
// "_f64") and per executor kernel (below), each Kernel step's argument list checked
// against the kernel's parameter sizes (cudaFuncGetParamInfo) and packed into stable
// storage (Buffer -> T*, Int -> long long, Real -> double, Dims -> vouch::Dims), one
// device buffer per owning BufferDesc (the caching allocator; poisoned with 0xff bytes,
// so an element no step wrote reads as NaN; aliases share their owner's storage),
// optimizer state (m, v) per parameter, the ParamSlot array, the device step counter
// and the loss ring. A launch is then just launch(kernel, grid, block, args) (module.h).
//
// A training step is a fixed sequence of launches, whatever the number of batches:
//   vouch_select_batch_<t>   copies batch (step % num_batches) of the uploaded dataset
//                            into the input and target buffers (reads the device step)
//     or vouch_select_windows_<t>, for a token stream (upload_tokens): each row's window
//                            of the token file, read where it lies in host memory
//                            mapped into the device (reads the device step)
//   forward steps (recording the tape), prologue steps, the tape's VJPs (last first)
//   vouch_grad_norm_<t>      with clip_grad_norm only: the global gradient norm and
//                            the clipping coefficient, one block, fixed order
//   vouch_optimizer_<t>      one launch for every parameter (their quads one range);
//                            its last block to finish stores the loss into ring slot
//                            step % capacity, then advances the step
// captured once (StepGraph) and replayed. enqueue_steps(count) replays a graph of
// steps_per_graph() consecutive steps while count allows and the one-step graph for the
// rest: a graph launch costs about 1 µs of device time beyond its nodes on the H200
// (tools/bench/graph_overhead.cu), which a launch-bound model pays once per graph, not
// per step. RunConfig::cuda_graph = false (--no-cuda-graph) enqueues the same work
// eagerly. No step waits for the device: the host reads losses only through
// read_losses. Evaluation (forward) uploads a host
// batch, runs the forward steps and downloads the loss and prediction (it synchronizes).
#ifndef VOUCH_RUNTIME_CUDA_EXECUTOR_H_
#define VOUCH_RUNTIME_CUDA_EXECUTOR_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/cuda/buffer.h"
#include "runtime/cuda/check.h"
#include "runtime/cuda/gemm_call.h"
#include "runtime/cuda/kernels/counter_rng.h"
#include "runtime/cuda/kernels/param_slot.h"
#include "runtime/cuda/kernels/shuffle.h"
#include "runtime/cuda/kernels/token_windows.h"
#include "runtime/cuda/module.h"
#include "runtime/cuda/stream_graph.h"
#include "runtime/executor.h"
#include "runtime/model_api.h"
#include "runtime/program.h"

namespace vouch::rt::cuda {

// The executor's own kernels (runtime/cuda/kernels/executor.cuh, compiled by NVRTC into
// every model's module). Base names: the element type's suffix is appended ("_f32",
// "_f64"), except to the step counter, which has none. Signatures (t = float / double):
//   vouch_select_batch_<t>(const unsigned* data, unsigned* batch, const long long* step,
//                          long long num_batches, long long words,
//                          vouch::RowOrder order)  // rows 0: no shuffling
//   vouch_grad_norm_<t>(const vouch::ParamSlot<t>* slots, int num_params, double max_norm,
//                       double* out)                 // out = [norm, clip coefficient]
//   vouch_optimizer_<t>(const vouch::ParamSlot<t>* slots, int num_params, long long* step,
//                       vouch::OptimizerHyper hyper,   // kind, hyper-parameters, schedule
//                       const double* clip,            // null, or vouch_grad_norm's out
//                       const t* loss, t* ring, long long capacity, unsigned* done)
//   vouch_select_windows_<t>(const void* tokens, unsigned* batch, const long long* step,
//                            vouch::TokenWindows windows)  // a token stream's batch
//   vouch_round_bf16_f32(const float* in, unsigned short* out, long long batches,
//                        long long rows, long long cols, long long out_rows,
//                        long long pitch)
//   vouch_repitch_f32(const float* in, float* out, long long batches, long long rows,
//                     long long cols, long long in_rows, long long in_pitch,
//                     long long out_rows, long long out_pitch)
//       Tensor-core products of f32 models (ProductMath::Tf32, Bf16) only: the copies
//       gemm_call.h's ProductPlan makes around a cuBLAS call. Bf16: every operand
//       rounded to bf16 into the executor's scratch (vouch_round_bf16_f32), except one
//       whose buffer is already bf16 (DType::Bf16, rounded once by the step that wrote
//       it), which the product reads where it lies (check_bf16_buffers); Tf32: an
//       operand copied there (vouch_repitch_f32) where an extent it spans is not a
//       multiple of 4 (padded with zeros); either precision: an output whose M or N is
//       padded written at its padded shape into the scratch, then copied out
//       (vouch_repitch_f32), and a linear's bias copied to the padded N. The scratch is
//       two regions: the first factor's copy (lhs, x, dy) then the padded output in
//       one, the second's (rhs, W, x) then the bias in the other, each sized by the
//       program's largest such step. Each copy is its own
//       launch, named on the tape, by --audit-launches and by --profile ("vouch_repitch_f32
//       (C of step 12)"); an operand the scratch already holds unchanged (the same
//       buffer, not written since, in the same layout) is not copied again. A bf16
//       operand read in place takes no scratch (a padded output, a padded bias start
//       its region) and is named in the product's --audit-launches label ("x read as
//       bf16 in place (buffer h16)").
inline constexpr const char kSelectBatchKernel[] = "vouch_select_batch";
inline constexpr const char kSelectWindowsKernel[] = "vouch_select_windows";
inline constexpr const char kGradNormKernel[] = "vouch_grad_norm";
inline constexpr const char kOptimizerKernel[] = "vouch_optimizer";
inline constexpr const char kRoundBf16Kernel[] = "vouch_round_bf16_f32";
inline constexpr const char kRepitchKernel[] = "vouch_repitch_f32";

// "_f32" for float, "_f64" for double: the suffix of a model kernel's symbol.
template <class T>
constexpr const char* element_suffix() {
  return sizeof(T) == 4 ? "_f32" : "_f64";
}

// Steps whose losses the device keeps by default (CompiledModel::loss_capacity).
inline constexpr int64_t kDefaultLossCapacity = 4096;

// Ok when the Bf16 buffers of `program` (check_program(program).ok()) are where a cuda
// run can read them: a run of element type f32 (`f32`) with bf16 products (`math` Bf16)
// only, and there as a product step's factor (Gemm A / B, Linear x / W,
// LinearWeightGrad dy / x) only where its ProductPlan's copy would move no value
// (OperandLayout::in_place_as_bf16: no padded row or pitch), since the product reads it
// where it lies. Else the error names the buffer, or the step, the operand and the
// layout. (Kernel steps may read and write Bf16 buffers as they like: they get the
// device pointer.) The CudaProgramModel constructor refuses a program that fails it.
Status check_bf16_buffers(const Program& program, ProductMath math, bool f32);

// The device bytes of each storage owner (0 for an alias): max(numel, 1) × `real_bytes`
// whatever its dtype (storage slots are sized in elements, codegen/StoragePlan.h), but
// a Bf16 owner only the most its occupants (it and its aliases) take at their dtypes,
// rounded up to whole reals: a value rounded to bf16 costs 2 bytes an element.
// Tolerates a program check_program refuses (memory_need runs before it): an alias that
// leads nowhere counts for nothing.
std::vector<uint64_t> storage_bytes(const Program& program, int64_t real_bytes);

template <class T>
class CudaProgramModel final : public CompiledModel<T> {
 public:
  // `program` and the `image_count` kernel images (module.h) are borrowed and must
  // outlive the model. `math` is what the f32
  // GEMMs round their operands to (gemm_call.h's ProductMath; f64 runs ignore it).
  // Failures (no usable device, an inconsistent program, a kernel missing from the module or taking other arguments than the step passes, out of memory)
  // leave the model unusable with the reason in status() and configure().
  CudaProgramModel(const Program& program, const KernelImage* images, size_t image_count,
                   ProductMath math, int64_t loss_capacity = kDefaultLossCapacity);
  ~CudaProgramModel() override;
  CudaProgramModel(const CudaProgramModel&) = delete;
  CudaProgramModel& operator=(const CudaProgramModel&) = delete;

  // Host mirrors (upload_params / download_params move them); grad(i) downloads.
  T* param(int i) override;
  T* grad(int i) override;
  T* state(int i) override;  // a host mirror, moved with the params
  // Evaluation: uploads x and y, runs the forward steps (recording into `tape` if
  // given), downloads loss and prediction; NaN (and status()) on an error.
  T forward(const T* x, const T* y, Tape* tape) override;
  T forward_fields(const void* const* fields, Tape* tape) override;
  const T* prediction() const override { return prediction_.data(); }
  // The prologue, then tape.backward on the device, then a synchronization (for tests;
  // training uses enqueue_steps).
  void backward(Tape& tape) override;

  bool device_resident() const override { return true; }
  Status configure(const RunConfig& run) override;
  Status upload_params() override;
  Status download_params() override;
  Status upload_data(const T* x, const T* y, int64_t num_batches) override;
  Status upload_fields(const void* const* fields, int64_t num_batches) override;
  // The token file is not copied to the device: its read-only mapping is registered
  // (cudaHostRegister, mapped and read-only) and the window selection reads it through
  // its device address; where registering is refused, the tokens are copied once into
  // mapped pinned host memory instead (memory_report says which).
  Status upload_tokens(const TokenStream& tokens) override;
  Status enqueue_steps(const OptimizerConfig& optimizer, int64_t count, Tape* tape) override;
  int64_t loss_capacity() const override { return loss_capacity_; }
  Status read_losses(int64_t first, int64_t count, double* out) override;
  Status status() const override { return status_; }
  std::string memory_report() const override;
  std::string launch_audit() const override { return audit_.text(); }
  std::string profile_report() const override { return profile_text_; }
  std::string profile_launches() const override { return profile_launches_text_; }
  // The step --profile times (0-based): after the first captures and warm-up.
  static constexpr int64_t kProfiledStep = 2;
  int64_t launch_audit_problems() const override { return audit_.problems(); }

  // For tests and tools.
  T* device_buffer(int32_t b) const;  // aliases resolved; nullptr when out of range
  int64_t steps_enqueued() const { return enqueued_; }
  const StepGraph* step_graph() const { return graph_.get(); }
  // The graph of steps_per_graph() steps; null until enqueue_steps used it.
  const StepGraph* unrolled_graph() const { return unrolled_.get(); }
  // Steps per unrolled graph: up to kMaxStepsPerGraph, fewer for a program with many
  // launches so an unrolled graph stays under kMaxUnrolledLaunches nodes; 1 = none.
  int64_t steps_per_graph() const { return steps_per_graph_; }
  static constexpr int64_t kMaxStepsPerGraph = 8, kMaxUnrolledLaunches = 512;
  // The optimizer launch's largest grid (blocks of 256 over all params' quads): enough
  // to fill an H200 several times over, few enough end-of-step tickets.
  static constexpr int64_t kOptimizerMaxBlocks = 2048;
  cudaStream_t stream() const { return stream_.get(); }

 private:
  Status init(const KernelImage* images, size_t image_count);
  Status load_kernels();
  // step_grid_ / step_shared_ from the steps and the device (after load_kernels).
  Status plan_launches();
  Status allocate(T*& ptr, int64_t count);  // poisoned; kept in owned_
  Status pack_arguments();
  void pack_optimizer(const OptimizerConfig& o);
  // Sets each slot's decay flag from o (decays_param) and uploads the slots if one
  // changed; the kernel reads them at run time, so captured graphs stay valid.
  Status update_decay_flags(const OptimizerConfig& o);
  Status run_steps(int32_t begin, int32_t end, Tape* tape);
  Status run_step(int32_t s);
  Status linear(const StepDesc& st, int32_t s);
  Status linear_weight_grad(const StepDesc& st, int32_t s);
  // Tensor-core products: copies step s's operands (and bias) into the scratch as its
  // ProductPlan says (where it does not hold them already), each launch bracketed for
  // the audit and the profile.
  Status copy_operands(int32_t s);
  // Whether operand `which` (0: a, 1: b) of library step s is a Bf16 buffer, read where
  // it lies (bf16 products only; check_bf16_buffers checked its layout).
  bool bf16_in_place(int32_t s, int which) const;
  // The copy step s makes of operand `which`: its plan's, or none (rows 0) for an
  // operand read in place as bf16, which takes no scratch.
  OperandLayout operand_copy(int32_t s, int which) const;
  // What a bf16 product of step s reads as operand `which`: the buffer itself where it
  // is read in place, else its copy at the start of scratch region `copy`.
  const bf16_bits* bf16_operand(int32_t s, int which, const unsigned char* copy) const;
  // After step s's library call: its padded output copied out of the scratch.
  Status copy_output(int32_t s);
  // A linear's bf16 y computed in f32 into region 0 (its Fallback's round_y): rounded
  // into y by a vouch_round_bf16 launch, after the step's library calls.
  Status round_linear_output(int32_t s);
  // Whether step s is a linear storing its y as bf16 (its buffer's dtype).
  bool bf16_result(int32_t s) const;
  // One copy launch: `what` names it ("W of step 12"), `in` / `out` its layouts.
  Status copy_launch(int32_t s, const std::string& what, bool round, const void* in,
                     void* out, const OperandLayout& l, bool to_padded);
  // The scratch's holding ends where step s wrote its buffer.
  void forget_copies(int32_t s);
  Status step_body(Tape& tape);
  // Sets the random ops' training flag on the device (stream-ordered; a no-op when
  // it already holds that value).
  Status set_training(bool training);
  Status audit_before_step(int32_t s);
  // Runs `steps` step bodies through `graph` (created on first use; a captured graph
  // replays them); advances enqueued_.
  Status enqueue_through(std::unique_ptr<StepGraph>& graph, int64_t steps);
  // Enqueues `steps` steps through the graphs (or directly without them).
  Status enqueue_plain(int64_t steps);
  // --profile: runs the next step without a graph, a CUDA event before each launch and
  // one after the last, waits for it, and writes profile_text_.
  Status profile_step();
  // Before a launch while profile_step runs: records an event and what runs next, for
  // program step `step` (-1: none).
  Status mark(const char* capsule, const std::string& what, int32_t step = -1);
  Status drop_graphs();  // the next enqueue captures again (the counts stay)
  // The prologue (constant gradients), then the tape's VJPs, last node first.
  Status run_backward(const Tape& tape);
  static void vjp(void* self, int node_id);
  Status fail(Status s);  // keeps the first error in status_
  // Orders the captured launches by the buffers they read and write (stream_graph.h).
  CaptureDependencies deps_{nullptr};
  LaunchAudit audit_;  // of the first captured step, with RunConfig::audit_launches
  // The profiled step's events (events[i] before launch i, the last after them all)
  // and what each launch ran as; live only during profile_step.
  struct StepProfile {
    std::vector<cudaEvent_t> events;
    std::vector<std::string> capsules, whats;
    std::vector<int32_t> steps;
  };
  std::unique_ptr<StepProfile> profile_;
  std::string profile_text_, profile_launches_text_;
  // Per step: a linear whose cuBLASLt epilogue was refused, what it ran instead.
  struct Fallback {
    std::string ran;                 // empty: none
    std::vector<std::string> calls;  // the library calls it makes
    bool round_y = false;            // a bf16 y computed in f32 to round (round_linear_output)
  };
  std::vector<Fallback> fallback_;
  std::vector<StepAccess> access_;  // per Program step
  StepAccess select_access_, optimizer_access_, grad_norm_access_;

  const Program& program_;
  const ProductMath math_;
  const int64_t loss_capacity_;
  Status status_ = Status::Ok();
  RunConfig run_;
  // Declaration order is destruction order reversed: the stream outlives the buffers
  // (they are released on it) and the module outlives the graph.
  Stream stream_;
  KernelModule module_;
  std::vector<DeviceBuffer> owned_;
  std::vector<cudaKernel_t> kernels_;  // per Program kernel
  // Per step: the grid and dynamic shared memory it launches with (StepDesc's
  // blocks_per_sm and shared_bytes against this device; plan_launches).
  std::vector<uint32_t> step_grid_, step_shared_;
  cudaKernel_t select_batch_ = nullptr, optimizer_ = nullptr, grad_norm_ = nullptr;
  // Tensor-core products of an f32 model (ProductMath::Tf32, Bf16): each library step's
  // ProductPlan (gemm_call.h), the scratch's two regions and what each holds now: a
  // storage owner's copy in that layout at the region's start (owner -1: nothing).
  const bool bf16_products_;  // f32 and ProductMath::Bf16
  const bool padded_products_;  // f32 and ProductMath::Tf32 or Bf16
  cudaKernel_t round_bf16_ = nullptr, repitch_ = nullptr;
  std::vector<ProductPlan> plans_;  // per step (library steps only)
  struct ScratchRegion {
    unsigned char* base = nullptr;
    int32_t owner = -1;
    OperandLayout layout;
  } scratch_[2];
  size_t scratch_bytes_[2] = {0, 0};  // each region's size
  std::vector<T*> pointers_;             // device storage per buffer
  std::vector<T*> m_, v_;                // optimizer state per param
  vouch::ParamSlot<T>* slots_ = nullptr;
  std::vector<vouch::ParamSlot<T>> host_slots_;  // what slots_ holds

  double* clip_ = nullptr;               // [global gradient norm, clipping coefficient]
  long long training_ = 0, seed_ = 0;    // host words of the step context's flag, seed
  long long* step_ = nullptr;            // the device step counter, then the optimizer's
                                         // block ticket (an unsigned in the next 8 bytes)
  T* ring_ = nullptr;                    // host_ring_'s device address
  // The data fields' buffers share one block: field f at byte field_offset_[f] of
  // batch_ (batch_words_ 32-bit words), so one launch selects a batch of every field.
  unsigned* batch_ = nullptr;
  std::vector<size_t> field_offset_;
  int64_t batch_words_ = 0;
  DeviceBuffer data_;                    // the dataset: num_batches packed blocks
  // A token stream (upload_tokens): its host memory, registered or copied.
  bool streaming_ = false;
  TokenStream tokens_;                   // keeps the file's mapping alive
  void* registered_ = nullptr;           // the mapping, while cudaHostRegister'ed
  void* pinned_tokens_ = nullptr;        // else a cudaHostAlloc'ed copy of the tokens
  std::string token_memory_;             // how the device reads the tokens
  cudaKernel_t select_windows_ = nullptr;
  struct SelectWindowsArgs {
    const void* tokens = nullptr;        // the device address of the first token
    unsigned* batch = nullptr;
    const long long* step = nullptr;
    vouch::TokenWindows windows{};
  } windows_args_;
  Status release_tokens();
  // Packed kernel arguments: storage, one pointer per Program::args entry.
  std::unique_ptr<unsigned char[]> arg_storage_;
  std::vector<void*> arg_pointers_;
  // The executor kernels' arguments (their addresses are what the launches read).
  struct SelectBatchArgs {
    const unsigned* data = nullptr;
    unsigned* batch = nullptr;
    const long long* step = nullptr;
    long long num_batches = 0, words = 0;
    vouch::RowOrder order{};
  } select_args_;
  struct OptimizerArgs {
    const vouch::ParamSlot<T>* slots = nullptr;
    int num_params = 0;
    long long* step = nullptr;
    vouch::OptimizerHyper hyper{};
    // Null without clipping; else clip_ (the grad-norm launch's [norm, coefficient]).
    const double* clip = nullptr;
    double max_norm = 0;
    // The end of the step, by the last block to finish.
    const T* loss = nullptr;
    T* ring = nullptr;
    long long capacity = 0;
    unsigned* done = nullptr;
    // What a captured graph bakes in besides the addresses.
    auto hyper_parameters() const {
      return std::tie(hyper.kind, hyper.schedule, hyper.lr, hyper.beta1, hyper.beta2,
                      hyper.eps, hyper.weight_decay, hyper.momentum, hyper.alpha,
                      hyper.lr_decay, hyper.step_size, hyper.gamma, hyper.warmup,
                      hyper.total, hyper.min_lr, clip, max_norm);
    }
  } optimizer_args_;
  unsigned optimizer_blocks_ = 1;
  std::unique_ptr<StepGraph> graph_;     // one step
  std::unique_ptr<StepGraph> unrolled_;  // steps_per_graph_ steps
  int64_t steps_per_graph_ = 1;
  ProgramTape tape_nodes_;
  Tape recorded_;            // the tape of the last step whose body ran on the host
  Status vjp_status_ = Status::Ok();
  int64_t enqueued_ = 0;     // steps enqueued since upload_params
  int64_t num_batches_ = 0;
  std::vector<std::vector<T>> params_, grads_;  // host mirrors
  std::vector<std::vector<T>> states_;          // host mirrors of Program::states
  std::vector<T> prediction_;
  T* host_ring_ = nullptr;   // pinned, loss_capacity_ losses, written by the optimizer's last block
};

extern template class CudaProgramModel<float>;
extern template class CudaProgramModel<double>;

// The cuda Backend of a generated executable: CudaProgramModel<float> and <double>
// over `program` and its kernel images (<double> only when `math` is Fp32, rounded
// products being an f32 policy, and the images hold the kernels' f64 entry points,
// `f64_kernels`: vouch build compiles them under --f64-kernels only; otherwise
// no_f64_reason says which), ready() =
// require_native_cuda(). --show-backend
// prints `header`, then Program::schedule when not empty, then one line naming the
// executor's own launches, then the capsule reports. Everything passed by pointer must
// outlive the backend.
Backend cuda_program_backend(const Program& program, const KernelImage* images,
                             size_t image_count, ProductMath math, bool f64_kernels,
                             std::string header,
                             std::map<std::string, std::string> capsule_reports);

}  // namespace vouch::rt::cuda

#endif  // VOUCH_RUNTIME_CUDA_EXECUTOR_H_
