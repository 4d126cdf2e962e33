// executor.cc: the cuda executor (executor.h).
#include "runtime/cuda/executor.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <utility>

#include <unistd.h>

#include "runtime/cuda/allocator.h"
#include "runtime/cuda/blas.h"
#include "runtime/cuda/deterministic.h"
#include "runtime/cuda/kernels/dims.h"
#include "runtime/cuda/memcpy.h"
#include "runtime/cuda/status.h"

namespace vouch::rt::cuda {

namespace {

// Bytes of one packed argument of each kind, as the kernel receives it.
size_t packed_size(ArgDesc::Kind kind) {
  switch (kind) {
    case ArgDesc::Buffer: return sizeof(void*);
    case ArgDesc::Int: return sizeof(long long);
    case ArgDesc::Real: return sizeof(double);
    case ArgDesc::Dims: return sizeof(vouch::Dims);
    case ArgDesc::Context: return sizeof(void*);
  }
  return 0;
}

const char* kind_name(ArgDesc::Kind kind) {
  switch (kind) {
    case ArgDesc::Buffer: return "buffer pointer";
    case ArgDesc::Int: return "long long";
    case ArgDesc::Real: return "double";
    case ArgDesc::Dims: return "vouch::Dims";
    case ArgDesc::Context: return "const long long* (step context)";
  }
  return "?";
}

// Whether cudaFuncGetParamInfo answers on this driver (checked once per process).
void note_param_info_unavailable(cudaError_t err) {
  static std::once_flag once;
  std::call_once(once, [err] {
    std::fprintf(stderr,
                 "note: cudaFuncGetParamInfo is unavailable (%s): kernel argument lists are "
                 "not checked against the kernels' parameters\n",
                 cudaGetErrorName(err));
  });
}

// Ok when `kernel` takes exactly `sizes.size()` parameters of these byte sizes; else
// an error naming the kernel, the parameter and what the step passes.
Status check_parameters(cudaKernel_t kernel, const std::string& name,
                        const std::vector<std::pair<size_t, const char*>>& sizes,
                        const std::string& where) {
  // Only the parameters the step passes are probed: asking for one past the
  // last would be an API error (compute-sanitizer reports it), so a kernel
  // taking more parameters than passed is not caught here (the generated
  // kernels and their steps come from one recipe).
  for (size_t i = 0; i < sizes.size(); i++) {
    size_t offset = 0, bytes = 0;
    cudaError_t err = cudaFuncGetParamInfo(reinterpret_cast<const void*>(kernel), i, &offset,
                                           &bytes);
    if (err != cudaSuccess) (void)cudaGetLastError();  // not sticky; clear it
    if (err == cudaErrorInvalidValue)
      return Status::Error(where + ": kernel " + name + " takes " + std::to_string(i) +
                           " parameters, but " + std::to_string(sizes.size()) +
                           " arguments are passed");
    if (err != cudaSuccess) {
      note_param_info_unavailable(err);
      return Status::Ok();
    }
    if (bytes != sizes[i].first)
      return Status::Error(where + ": parameter " + std::to_string(i) + " of kernel " + name +
                           " is " + std::to_string(bytes) + " bytes, but the argument is a " +
                           sizes[i].second + " (" + std::to_string(sizes[i].first) + " bytes)");
  }
  return Status::Ok();
}

// A library step's ProductPlan under `math` (gemm_call.h); a kernel step's is empty.
ProductPlan product_plan(const StepDesc& st, ProductMath math) {
  if (st.kind == StepKind::Linear) return plan_linear(math, st.m, st.k, st.n, st.bias != -1);
  if (st.kind == StepKind::Gemm)
    return plan_gemm(math, st.trans_a, st.trans_b, st.batch, st.m, st.n, st.k, st.stride_a,
                     st.stride_b);
  if (st.kind == StepKind::LinearWeightGrad)  // dW = dyᵀ·x: a product through trans_a
    return plan_gemm(math, true, false, 1, st.m, st.n, st.k, 0, 0);
  return ProductPlan();
}

// A copy's bytes in the scratch, rounded up to 256 so that what follows it in its
// region starts aligned.
size_t copy_bytes(const OperandLayout& l, size_t element_bytes) {
  return (size_t(l.scratch_elements()) * element_bytes + 255) / 256 * 256;
}

// A library step's factor as messages name it: lhs / rhs (Gemm: the row-major left and
// right factors, which its cuBLAS call passes as B and A: never "A" / "B" beside that
// call's own names), x / W (Linear), dy / x (LinearWeightGrad).
const char* operand_name(StepKind kind, int which) {
  if (kind == StepKind::Linear) return which == 0 ? "x" : "W";
  if (kind == StepKind::LinearWeightGrad) return which == 0 ? "dy" : "x";
  return which == 0 ? "lhs" : "rhs";
}

// An OperandLayout as a refusal names it, e.g. "1 x 4 x 7 padded to 1 x 4 x 8 (batches
// x rows x row pitch)".
std::string layout_text(const OperandLayout& l) {
  auto dims = [&](int64_t rows, int64_t cols) {
    return std::to_string(l.batches) + " x " + std::to_string(rows) + " x " +
           std::to_string(cols);
  };
  return dims(l.rows, l.cols) + " padded to " + dims(l.out_rows, l.pitch) +
         " (batches x rows x row pitch)";
}

int optimizer_kind(OptimizerConfig::Kind kind) {
  switch (kind) {
    case OptimizerConfig::Sgd: return 0;
    case OptimizerConfig::Adam: return 1;
    case OptimizerConfig::AdamW: return 2;
    case OptimizerConfig::RmsProp: return 3;
    case OptimizerConfig::Adagrad: return 4;
  }
  return 1;
}

unsigned grid_for(int64_t elements, int64_t block, int64_t max_grid) {
  return unsigned(std::clamp<int64_t>((elements + block - 1) / block, 1, max_grid));
}

// The library calls of a linear's GEMM fallback (linear_fallback_name): cublasGemmEx,
// then with a bias its broadcast GEMM (describe_bias_broadcast's API).
std::vector<std::string> linear_fallback_calls(int64_t rows, int64_t out, bool bias) {
  std::vector<std::string> calls{"cublasGemmEx"};
  Result<GemmCall> bias_call = describe_bias_broadcast(std::max<int64_t>(rows, 1), out);
  if (bias && bias_call.ok())
    calls.push_back(bias_call.value().api == GemmCall::Api::GemmEx ? "cublasGemmEx"
                                                                  : "cublasGemmStridedBatchedEx");
  return calls;
}

}  // namespace

Status check_bf16_buffers(const Program& p, ProductMath math, bool f32) {
  const std::string program = "program `" + std::string(p.name ? p.name : "?") + "`: ";
  const bool bf16_products = f32 && math == ProductMath::Bf16;
  if (!bf16_products) {
    for (int32_t b = 0; b < p.num_buffers; b++)
      if (p.buffers[b].dtype == DType::Bf16)
        return Status::Error(program + "buffer " + std::to_string(b) + " (" + p.buffers[b].name +
                             ") is bf16, but this run's products are " +
                             (f32 ? std::string(product_math_name(math)) + " f32" : "f64") +
                             ": bf16 buffers are read by the bf16 products of an f32 run "
                             "(--precision bf16) only");
    return Status::Ok();
  }
  for (int32_t s = 0; s < p.num_steps; s++) {
    const StepDesc& st = p.steps[s];
    if (st.kind == StepKind::Kernel) continue;
    const ProductPlan plan = product_plan(st, math);
    for (int which : {0, 1}) {
      const int32_t b = which == 0 ? st.a : st.b;
      const OperandLayout& l = which == 0 ? plan.a : plan.b;
      if (p.buffers[b].dtype != DType::Bf16 || l.in_place_as_bf16()) continue;
      return Status::Error(
          program + "step " + std::to_string(s) + " (" + (st.what ? st.what : "?") + "): " +
          operand_name(st.kind, which) + " buffer " + std::to_string(b) + " (" +
          p.buffers[b].name + ") is bf16, but the product reads it through a padded copy, " +
          layout_text(l) +
          ": a bf16 operand is read where it lies, so its layout must pad nothing");
    }
    // A bf16 result: a linear's y that cuBLASLt stores where it lies (padded, it would
    // be copied out of the scratch as f32).
    if (p.buffers[st.c].dtype == DType::Bf16 &&
        (st.kind != StepKind::Linear || plan.padded_output()))
      return Status::Error(program + "step " + std::to_string(s) + " (" +
                           (st.what ? st.what : "?") + "): its result buffer " +
                           std::to_string(st.c) + " (" + p.buffers[st.c].name +
                           ") is bf16, which only a linear whose output is not padded stores");
  }
  return Status::Ok();
}

std::vector<uint64_t> storage_bytes(const Program& p, int64_t real_bytes) {
  const int32_t n = std::max<int32_t>(p.num_buffers, 0);
  std::vector<uint64_t> bytes(size_t(n), 0);
  auto whole_reals = [&](uint64_t b) {
    return mul_bytes((b + uint64_t(real_bytes) - 1) / uint64_t(real_bytes), uint64_t(real_bytes));
  };
  for (int32_t b = 0; b < n; b++) {
    // The owner, in at most n hops (a cycle or a bad index: none).
    int32_t owner = b;
    for (int32_t hops = 0; owner >= 0 && owner < n && p.buffers[owner].alias_of != -1; hops++)
      owner = hops < n ? p.buffers[owner].alias_of : -1;
    if (owner < 0 || owner >= n) continue;
    const BufferDesc& d = p.buffers[b];
    const uint64_t numel = uint64_t(std::max<int64_t>(d.numel, 1));
    const uint64_t need =
        p.buffers[owner].dtype == DType::Bf16
            ? whole_reals(mul_bytes(numel, uint64_t(element_bytes(d.dtype, real_bytes))))
            : owner == b ? mul_bytes(numel, uint64_t(real_bytes)) : 0;
    bytes[size_t(owner)] = std::max(bytes[size_t(owner)], need);
  }
  return bytes;
}

template <class T>
CudaProgramModel<T>::CudaProgramModel(const Program& program, const KernelImage* images,
                                      size_t image_count, ProductMath math,
                                      int64_t loss_capacity)
    : program_(program),
      math_(math),
      loss_capacity_(loss_capacity),
      bf16_products_(std::is_same_v<T, float> && math == ProductMath::Bf16),
      padded_products_(std::is_same_v<T, float> && math != ProductMath::Fp32) {
  status_ = init(images, image_count);
}

template <class T>
CudaProgramModel<T>::~CudaProgramModel() {
  if (stream_.get()) (void)cudaStreamSynchronize(stream_.get());
  graph_.reset();
  unrolled_.reset();
  if (host_ring_) (void)cudaFreeHost(host_ring_);
  (void)release_tokens();
  data_ = DeviceBuffer();
  owned_.clear();
}

template <class T>
Status CudaProgramModel<T>::fail(Status s) {
  if (!s.ok() && status_.ok()) status_ = s;
  return s;
}

template <class T>
Status CudaProgramModel<T>::allocate(T*& ptr, int64_t count) {
  size_t bytes = sizeof(T) * size_t(std::max<int64_t>(count, 1));
  Result<DeviceBuffer> b = DeviceBuffer::allocate(bytes, stream_.get());
  if (!b.ok()) return b.status();
  ptr = b.value().template as<T>();
  // Poisoned (all bits set: NaN) so an element that no step wrote shows.
  VOUCH_CUDA_CHECK_WHAT(cudaMemsetAsync(ptr, 0xff, bytes, stream_.get()),
                        "cudaMemsetAsync(poison " + std::to_string(bytes) + " bytes)");
  owned_.push_back(std::move(b.value()));
  return Status::Ok();
}

template <class T>
Status CudaProgramModel<T>::init(const KernelImage* images, size_t image_count) {
  VOUCH_RETURN_IF_ERROR(require_native_cuda());
  VOUCH_RETURN_IF_ERROR(check_program(program_));
  VOUCH_RETURN_IF_ERROR(check_bf16_buffers(program_, math_, std::is_same_v<T, float>));
  const Program& p = program_;
  if (loss_capacity_ <= 0)
    return Status::Error("the loss ring needs a positive capacity, got " +
                         std::to_string(loss_capacity_));
  for (int32_t s = 0; s < p.num_steps; s++) {
    const StepDesc& st = p.steps[s];
    if (st.kind == StepKind::Kernel && (st.grid_x == 0 || st.block_x == 0 || st.block_y == 0))
      return Status::Error("program `" + std::string(p.name ? p.name : "?") + "`: step " +
                           std::to_string(s) + " (" + p.kernel_names[st.kernel] +
                           ") has an empty launch shape (grid " + std::to_string(st.grid_x) +
                           ", block " + std::to_string(st.block_x) + "x" +
                           std::to_string(st.block_y) + ")");
  }

  Result<Stream> stream = Stream::create();
  if (!stream.ok()) return stream.status();
  stream_ = std::move(stream.value());
  deps_ = CaptureDependencies(stream_.get());
  // Creates the handles and workspaces now: that cannot happen inside a capture.
  VOUCH_RETURN_IF_ERROR(set_blas_stream(stream_.get()));
  Result<KernelModule> module = load_module(images, image_count);
  if (!module.ok()) return module.status();
  module_ = std::move(module.value());
  VOUCH_RETURN_IF_ERROR(load_kernels());
  VOUCH_RETURN_IF_ERROR(plan_launches());

  // Device buffers: one per owner; aliases share their owner's storage. The data
  // fields share one block, each at a 16-byte aligned offset (batch selection copies
  // the block as words).
  pointers_.assign(size_t(p.num_buffers), nullptr);
  std::vector<bool> is_field(size_t(p.num_buffers), false);
  size_t field_bytes = 0;
  field_offset_.clear();
  for (int32_t f = 0; f < p.num_fields; f++) {
    const BufferDesc& d = p.buffers[p.fields[f]];
    is_field[size_t(p.fields[f])] = true;
    field_offset_.push_back(field_bytes);
    field_bytes += (size_t(d.numel * element_bytes(d.dtype, sizeof(T))) + 15) / 16 * 16;
  }
  batch_words_ = int64_t(std::max<size_t>(field_bytes, 16) / 4);
  T* block = nullptr;
  VOUCH_RETURN_IF_ERROR(allocate(block, (batch_words_ * 4 + sizeof(T) - 1) / sizeof(T)));
  batch_ = reinterpret_cast<unsigned*>(block);
  for (int32_t f = 0; f < p.num_fields; f++)
    pointers_[size_t(p.fields[f])] =
        reinterpret_cast<T*>(reinterpret_cast<unsigned char*>(block) + field_offset_[size_t(f)]);
  const std::vector<uint64_t> bytes = storage_bytes(p, int64_t(sizeof(T)));
  for (int32_t b = 0; b < p.num_buffers; b++)
    if (p.buffers[b].alias_of == -1 && !is_field[size_t(b)])
      VOUCH_RETURN_IF_ERROR(
          allocate(pointers_[size_t(b)], int64_t(bytes[size_t(b)] / sizeof(T))));
  for (int32_t b = 0; b < p.num_buffers; b++)
    pointers_[size_t(b)] = pointers_[size_t(storage_owner(p, b))];
  // Scratch that must start at zero (an arrival counter its kernel resets itself).
  for (int32_t b = 0; b < p.num_buffers; b++)
    if (p.buffers[b].zero_init && p.buffers[b].alias_of == -1)
      VOUCH_CUDA_CHECK_WHAT(
          cudaMemsetAsync(pointers_[size_t(b)], 0,
                          size_t(p.buffers[b].numel * element_bytes(p.buffers[b].dtype, sizeof(T))),
                          stream_.get()),
          "cudaMemsetAsync(zeroed scratch)");

  // Optimizer state and the slots of the one optimizer launch.
  m_.assign(size_t(p.num_params), nullptr);
  v_.assign(size_t(p.num_params), nullptr);
  std::vector<vouch::ParamSlot<T>> slots;
  for (int32_t i = 0; i < p.num_params; i++) {
    int64_t n = p.buffers[p.params[i]].numel;
    VOUCH_RETURN_IF_ERROR(allocate(m_[size_t(i)], n));
    VOUCH_RETURN_IF_ERROR(allocate(v_[size_t(i)], n));
    slots.push_back({pointers_[size_t(p.params[i])], pointers_[size_t(p.grads[i])], m_[size_t(i)],
                     v_[size_t(i)], (long long)n});
  }
  // One range of quads over every slot (optimizer.cuh): the grid follows the elements.
  optimizer_blocks_ =
      grid_for(vouch::number_quads(slots.data(), int(slots.size())), 256, kOptimizerMaxBlocks);
  // A step launches about every program step once, plus batch selection and the optimizer.
  steps_per_graph_ =
      std::clamp<int64_t>(kMaxUnrolledLaunches / (int64_t(p.num_steps) + 2), 1, kMaxStepsPerGraph);
  if (!slots.empty()) {
    Result<DeviceBuffer> b =
        DeviceBuffer::allocate(sizeof(vouch::ParamSlot<T>) * slots.size(), stream_.get());
    if (!b.ok()) return b.status();
    slots_ = b.value().template as<vouch::ParamSlot<T>>();
    owned_.push_back(std::move(b.value()));
    VOUCH_RETURN_IF_ERROR(upload(slots_, slots.data(), slots.size(), stream_.get()));
  }
  host_slots_ = std::move(slots);
  {
    // [step, done] for the optimizer, then the random ops' training flag and seed
    // (counter_rng.h's RngContextSlot): the step context they read.
    const size_t bytes = vouch::kRngContextWords * sizeof(long long);
    Result<DeviceBuffer> b = DeviceBuffer::allocate(bytes, stream_.get());
    if (!b.ok()) return b.status();
    step_ = b.value().template as<long long>();
    owned_.push_back(std::move(b.value()));
    VOUCH_CUDA_CHECK(cudaMemsetAsync(step_, 0, bytes, stream_.get()));
  }
  {
    // The grad-norm launch's [norm, clipping coefficient] (read by the optimizer), then
    // its blocks' partial sums and its ticket (0 between launches).
    const size_t bytes = (2 + vouch::kGradNormBlocks) * sizeof(double) + sizeof(unsigned);
    Result<DeviceBuffer> b = DeviceBuffer::allocate(bytes, stream_.get());
    if (!b.ok()) return b.status();
    clip_ = b.value().template as<double>();
    owned_.push_back(std::move(b.value()));
    VOUCH_CUDA_CHECK(cudaMemsetAsync(clip_, 0, bytes, stream_.get()));
  }
  // The loss ring lives in pinned host memory that the optimizer's last block writes
  // through its device address: reading losses is a stream synchronisation
  // and a host read, with no copy to issue after the graph.
  VOUCH_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_ring_),
                                  sizeof(T) * size_t(loss_capacity_)));
  VOUCH_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&ring_), host_ring_, 0));
  std::memset(host_ring_, 0xff, sizeof(T) * size_t(loss_capacity_));

  fallback_.assign(size_t(p.num_steps), {});
  if (padded_products_) {
    // Region 0: the first factor's copy (lhs, x, dy), then the padded output; region 1: the
    // second's (rhs, W, x), then the bias.
    const size_t operand = bf16_products_ ? sizeof(bf16_bits) : sizeof(float);
    plans_.assign(size_t(p.num_steps), ProductPlan());
    size_t largest[2] = {0, 0};
    for (int32_t s = 0; s < p.num_steps; s++) {
      if (p.steps[s].kind == StepKind::Kernel) continue;
      const ProductPlan& pp = plans_[size_t(s)] = product_plan(p.steps[s], math_);
      // An operand read in place as bf16 takes none (operand_copy).
      largest[0] =
          std::max(largest[0], copy_bytes(operand_copy(s, 0), operand) + copy_bytes(pp.c, 4));
      largest[1] =
          std::max(largest[1], copy_bytes(operand_copy(s, 1), operand) + copy_bytes(pp.bias, 4));
      // A bf16 y that cuBLASLt will not store (it refuses the shape, or in = 0): region 0
      // takes the f32 linear that round_linear_output rounds.
      if (bf16_result(s)) {
        const StepDesc& st = p.steps[s];
        Result<LtAlgorithm> lt =
            st.k > 0 ? linear_algorithm(st.m, st.k, st.n, st.bias != -1, math_, 16,
                                        /*bf16_result=*/true)
                     : Result<LtAlgorithm>(Status::Error("in = 0"));
        if (!lt.ok() || lt.value().refused)
          largest[0] = std::max(largest[0], size_t(pp.M * pp.N) * 4);
      }
    }
    for (int which : {0, 1}) {
      if (largest[which] == 0) continue;
      Result<DeviceBuffer> b = DeviceBuffer::allocate(largest[which], stream_.get());
      if (!b.ok()) return b.status();
      scratch_[which].base = b.value().template as<unsigned char>();
      scratch_bytes_[which] = largest[which];
      owned_.push_back(std::move(b.value()));
    }
  }

  VOUCH_RETURN_IF_ERROR(pack_arguments());
  select_args_.batch = batch_;
  select_args_.step = step_;
  select_args_.words = batch_words_;
  optimizer_args_.slots = slots_;
  optimizer_args_.num_params = p.num_params;
  optimizer_args_.step = step_;
  optimizer_args_.loss = pointers_[size_t(p.loss)];
  optimizer_args_.ring = ring_;
  optimizer_args_.capacity = loss_capacity_;
  optimizer_args_.done = reinterpret_cast<unsigned*>(step_ + 1);
  tape_nodes_.build(p, &CudaProgramModel::vjp, int64_t(sizeof(T)));
  // Three pseudo-buffers after the real ones: the device step counter (select reads
  // it, the optimizer's last block writes it), the BLAS handles' workspace and the
  // clipping scalars (the grad-norm launch writes them, the optimizer reads them).
  const int32_t step_counter = p.num_buffers, blas_workspace = p.num_buffers + 1;
  const int32_t clip_scalars = p.num_buffers + 2;
  access_ = step_access(p, blas_workspace);
  select_access_ = {{step_counter}, {}};
  for (int32_t f = 0; f < p.num_fields; f++) select_access_.writes.push_back(p.fields[f]);
  // The optimizer reads every gradient and the loss and writes every parameter; its
  // last block reads the step counter's value and advances it.
  optimizer_access_ = {{storage_owner(p, p.loss), step_counter}, {step_counter}};
  optimizer_access_.reads.push_back(clip_scalars);
  grad_norm_access_ = {{}, {clip_scalars}};
  for (int32_t i = 0; i < p.num_params; i++) {
    optimizer_access_.reads.push_back(storage_owner(p, p.grads[i]));
    optimizer_access_.writes.push_back(storage_owner(p, p.params[i]));
    grad_norm_access_.reads.push_back(storage_owner(p, p.grads[i]));
  }

  for (int32_t i = 0; i < p.num_params; i++) {
    params_.emplace_back(size_t(p.buffers[p.params[i]].numel), T(0));
    grads_.emplace_back(size_t(p.buffers[p.grads[i]].numel), T(0));
  }
  for (int32_t i = 0; i < p.num_states; i++)
    states_.emplace_back(size_t(p.buffers[p.states[i]].numel), T(0));
  prediction_.assign(size_t(prediction_elements(p)), T(0));
  return stream_.synchronize();
}

template <class T>
Status CudaProgramModel<T>::plan_launches() {
  const Program& p = program_;
  int device = 0, sms = 0, optin = 0;
  VOUCH_CUDA_CHECK_WHAT(cudaGetDevice(&device), "cudaGetDevice");
  VOUCH_CUDA_CHECK_WHAT(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                        "cudaDeviceGetAttribute(MultiProcessorCount)");
  VOUCH_CUDA_CHECK_WHAT(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
      "cudaDeviceGetAttribute(MaxSharedMemoryPerBlockOptin)");
  step_grid_.assign(size_t(p.num_steps), 0);
  step_shared_.assign(size_t(p.num_steps), 0);
  std::vector<int64_t> static_bytes(size_t(p.num_kernels), -1);  // per kernel, once
  // The limit is the kernel's, not the step's: steps sharing a kernel (extents are
  // arguments) get the largest any of them launches with.
  std::vector<uint32_t> most(size_t(p.num_kernels), 0);
  for (int32_t s = 0; s < p.num_steps; s++) {
    const StepDesc& st = p.steps[s];
    if (st.kind != StepKind::Kernel) continue;
    step_grid_[size_t(s)] = st.grid_x;
    if (st.blocks_per_sm > 0)
      step_grid_[size_t(s)] = uint32_t(std::max<int64_t>(
          1, std::min<int64_t>(st.grid_x, int64_t(st.blocks_per_sm) * sms)));
    const uint32_t shared = sizeof(T) == 8 && st.shared_bytes_f64 ? st.shared_bytes_f64
                                                                   : st.shared_bytes;
    if (shared == 0) continue;
    // Beyond the device's limit (with the kernel's static shared memory), the launch
    // gets none and the kernel takes its other path.
    if (static_bytes[size_t(st.kernel)] < 0) {
      cudaFuncAttributes attributes{};
      VOUCH_CUDA_CHECK_WHAT(
          cudaFuncGetAttributes(&attributes,
                                reinterpret_cast<const void*>(kernels_[size_t(st.kernel)])),
          "cudaFuncGetAttributes(" + std::string(p.kernel_names[st.kernel]) +
              element_suffix<T>() + ")");
      static_bytes[size_t(st.kernel)] = int64_t(attributes.sharedSizeBytes);
    }
    if (int64_t(shared) + static_bytes[size_t(st.kernel)] > optin) continue;
    step_shared_[size_t(s)] = shared;
    most[size_t(st.kernel)] = std::max(most[size_t(st.kernel)], shared);
  }
  for (int32_t k = 0; k < p.num_kernels; k++) {
    if (most[size_t(k)] == 0) continue;
    VOUCH_CUDA_CHECK_WHAT(
        cudaFuncSetAttribute(reinterpret_cast<const void*>(kernels_[size_t(k)]),
                             cudaFuncAttributeMaxDynamicSharedMemorySize, int(most[size_t(k)])),
        "cudaFuncSetAttribute(" + std::string(p.kernel_names[k]) + element_suffix<T>() +
            ", MaxDynamicSharedMemorySize, " + std::to_string(most[size_t(k)]) + ")");
  }
  return Status::Ok();
}

template <class T>
Status CudaProgramModel<T>::load_kernels() {
  const Program& p = program_;
  const std::string suffix = element_suffix<T>();
  auto get = [&](const std::string& name, cudaKernel_t& k) -> Status {
    Result<cudaKernel_t> r = module_.kernel(name.c_str());
    if (!r.ok()) return r.status();
    k = r.value();
    return Status::Ok();
  };
  kernels_.assign(size_t(p.num_kernels), nullptr);
  for (int32_t k = 0; k < p.num_kernels; k++)
    VOUCH_RETURN_IF_ERROR(get(p.kernel_names[k] + suffix, kernels_[size_t(k)]));
  VOUCH_RETURN_IF_ERROR(get(kSelectBatchKernel + suffix, select_batch_));
  VOUCH_RETURN_IF_ERROR(get(kOptimizerKernel + suffix, optimizer_));
  VOUCH_RETURN_IF_ERROR(get(kGradNormKernel + suffix, grad_norm_));

  // Every launch's argument list against the kernel's parameters.
  using Sizes = std::vector<std::pair<size_t, const char*>>;
  const std::pair<size_t, const char*> ptr{sizeof(void*), "pointer"},
      i64{sizeof(long long), "long long"}, f64{sizeof(double), "double"},
      i32{sizeof(int), "int"};
  VOUCH_RETURN_IF_ERROR(check_parameters(
      select_batch_, kSelectBatchKernel + suffix,
      Sizes{ptr, ptr, ptr, i64, i64, {sizeof(vouch::RowOrder), "RowOrder"}}, "executor"));
  VOUCH_RETURN_IF_ERROR(check_parameters(
      optimizer_, kOptimizerKernel + suffix,
      Sizes{ptr, i32, ptr, {sizeof(vouch::OptimizerHyper), "OptimizerHyper"}, ptr, ptr, ptr,
            i64, ptr},
      "executor"));
  VOUCH_RETURN_IF_ERROR(check_parameters(grad_norm_, kGradNormKernel + suffix,
                                         Sizes{ptr, i32, f64, ptr, ptr, ptr}, "executor"));
  if (bf16_products_) {
    VOUCH_RETURN_IF_ERROR(get(kRoundBf16Kernel, round_bf16_));
    VOUCH_RETURN_IF_ERROR(
        check_parameters(round_bf16_, kRoundBf16Kernel,
                         Sizes{ptr, ptr, i64, i64, i64, i64, i64}, "executor"));
  }
  if (padded_products_) {
    VOUCH_RETURN_IF_ERROR(get(kRepitchKernel, repitch_));
    VOUCH_RETURN_IF_ERROR(
        check_parameters(repitch_, kRepitchKernel,
                         Sizes{ptr, ptr, i64, i64, i64, i64, i64, i64, i64}, "executor"));
  }
  for (int32_t s = 0; s < p.num_steps; s++) {
    const StepDesc& st = p.steps[s];
    if (st.kind != StepKind::Kernel) continue;
    Sizes sizes;
    for (int32_t a = st.first_arg; a < st.first_arg + st.num_args; a++)
      sizes.push_back({packed_size(p.args[a].kind), kind_name(p.args[a].kind)});
    VOUCH_RETURN_IF_ERROR(check_parameters(
        kernels_[size_t(st.kernel)], p.kernel_names[st.kernel] + suffix, sizes,
        "program `" + std::string(p.name ? p.name : "?") + "`: step " + std::to_string(s)));
  }
  return Status::Ok();
}

template <class T>
Status CudaProgramModel<T>::pack_arguments() {
  const Program& p = program_;
  std::vector<size_t> offset(size_t(p.num_args));
  size_t total = 0;
  for (int32_t a = 0; a < p.num_args; a++) {
    offset[size_t(a)] = total;
    total += (packed_size(p.args[a].kind) + 7) / 8 * 8;
  }
  arg_storage_ = std::make_unique<unsigned char[]>(std::max<size_t>(total, 1));
  arg_pointers_.assign(size_t(p.num_args), nullptr);
  for (int32_t a = 0; a < p.num_args; a++) {
    const ArgDesc& d = p.args[a];
    unsigned char* at = arg_storage_.get() + offset[size_t(a)];
    switch (d.kind) {
      case ArgDesc::Buffer: {
        T* ptr = pointers_[size_t(d.value)];
        std::memcpy(at, &ptr, sizeof ptr);
        break;
      }
      case ArgDesc::Int: {
        long long v = (long long)d.value;
        std::memcpy(at, &v, sizeof v);
        break;
      }
      case ArgDesc::Real: {
        double v = d.real;
        std::memcpy(at, &v, sizeof v);
        break;
      }
      case ArgDesc::Context: {
        long long* ptr = step_;
        std::memcpy(at, &ptr, sizeof ptr);
        break;
      }
      case ArgDesc::Dims: {
        vouch::Dims dims{};
        dims.rank = d.count;
        for (int32_t i = 0; i < d.count; i++) {
          dims.extent[i] = (long long)p.ints[d.value + i];
          dims.stride[i] = (long long)p.ints[d.value + d.count + i];
        }
        std::memcpy(at, &dims, sizeof dims);
        break;
      }
    }
    arg_pointers_[size_t(a)] = at;
  }
  return Status::Ok();
}

template <class T>
void CudaProgramModel<T>::pack_optimizer(const OptimizerConfig& o) {
  vouch::OptimizerHyper& h = optimizer_args_.hyper;
  h.kind = optimizer_kind(o.kind);
  h.schedule = int(o.schedule);
  h.lr = o.lr;
  h.beta1 = o.beta1;
  h.beta2 = o.beta2;
  h.eps = o.eps;
  h.weight_decay = o.weight_decay;
  h.momentum = o.momentum;
  h.alpha = o.alpha;
  h.lr_decay = o.lr_decay;
  h.step_size = o.step_size;
  h.gamma = o.gamma;
  h.warmup = o.warmup;
  h.total = o.total;
  h.min_lr = o.min_lr;
  optimizer_args_.max_norm = o.clip_grad_norm;
  optimizer_args_.clip = o.clip_grad_norm > 0 ? clip_ : nullptr;
}

template <class T>
Status CudaProgramModel<T>::update_decay_flags(const OptimizerConfig& o) {
  bool changed = false;
  for (size_t i = 0; i < host_slots_.size(); i++) {
    const int decay = decays_param(o, i) ? 1 : 0;
    changed |= host_slots_[i].decay != decay;
    host_slots_[i].decay = decay;
  }
  if (!changed) return Status::Ok();
  return upload(slots_, host_slots_.data(), host_slots_.size(), stream_.get());
}

template <class T>
T* CudaProgramModel<T>::device_buffer(int32_t b) const {
  if (!status_.ok() || b < 0 || b >= program_.num_buffers) return nullptr;
  return pointers_[size_t(b)];
}

template <class T>
Status CudaProgramModel<T>::linear(const StepDesc& st, int32_t s) {
  const T* x = pointers_[size_t(st.a)];
  const T* w = pointers_[size_t(st.b)];
  const T* bias = st.bias == -1 ? nullptr : pointers_[size_t(st.bias)];
  T* y = pointers_[size_t(st.c)];
  LinearPath path = LinearPath::None;
  std::string refusal;
  if constexpr (std::is_same_v<T, float>) {
    if (padded_products_) {
      // The copies and the padded output where the plan has them (copy_operands made
      // the copies; copy_output copies y out).
      const ProductPlan& pp = plans_[size_t(s)];
      const size_t operand = bf16_products_ ? sizeof(bf16_bits) : sizeof(float);
      unsigned char* const r0 = scratch_[0].base;
      unsigned char* const r1 = scratch_[1].base;
      if (pp.bias.rows > 0)
        bias = reinterpret_cast<const float*>(r1 + copy_bytes(operand_copy(s, 1), operand));
      if (pp.padded_output())
        y = reinterpret_cast<float*>(r0 + copy_bytes(operand_copy(s, 0), operand));
      if (bf16_result(s)) {
        // cuBLASLt stores y as bf16; where it will not, the f32 linear goes to region 0
        // (sized for it at set-up; both operands are read in place) and
        // round_linear_output rounds it into y.
        float* y_f32 = nullptr;
        if (scratch_[0].base != nullptr && scratch_bytes_[0] >= size_t(pp.M * pp.N) * 4) {
          y_f32 = reinterpret_cast<float*>(r0);
          scratch_[0].owner = -1;
        }
        // Its bias is bf16 too (check_step; never copied: nothing of y is padded).
        VOUCH_RETURN_IF_ERROR(linear_bias_row_major(
            pp.M, pp.K, pp.N, bf16_operand(s, 0, r0), bf16_operand(s, 1, r1),
            reinterpret_cast<const bf16_bits*>(bias),
            reinterpret_cast<bf16_bits*>(pointers_[size_t(st.c)]), y_f32, &path, &refusal));
      } else if (bf16_products_)
        VOUCH_RETURN_IF_ERROR(linear_bias_row_major(
            pp.M, pp.K, pp.N, bf16_operand(s, 0, r0), bf16_operand(s, 1, r1), bias, y, &path,
            &refusal));
      else
        VOUCH_RETURN_IF_ERROR(linear_bias_row_major(
            pp.M, pp.K, pp.N, pp.a.rows > 0 ? reinterpret_cast<const float*>(r0) : x,
            pp.b.rows > 0 ? reinterpret_cast<const float*>(r1) : w, bias, y, math_, &path,
            &refusal));
    }
  }
  if (!padded_products_)
    VOUCH_RETURN_IF_ERROR(
        linear_bias_row_major(st.m, st.k, st.n, x, w, bias, y, math_, &path, &refusal));
  // cuBLASLt refused its epilogue for this shape and type: the step ran other calls
  // than the one it names, which the tape and the launch audit say, with the reason.
  Fallback& f = fallback_[size_t(s)];
  f.round_y = path == LinearPath::F32ThenRound || path == LinearPath::F32GemmThenRound;
  if (f.round_y && f.ran.empty()) {
    // What computed the f32 y (blas.cc says): its own cublasLtMatmul, or where that too
    // was refused (or in = 0) the GEMM fallback.
    const bool lt = path == LinearPath::F32ThenRound;
    f.calls = lt ? std::vector<std::string>{"cublasLtMatmul"}
                 : linear_fallback_calls(st.m, st.n, bias != nullptr);
    f.ran = std::string(st.what ? st.what : "?") + " FELL BACK to " +
            (lt ? std::string("cublasLtMatmul with an f32 D")
                : std::string(linear_fallback_name(bias != nullptr))) +
            " into the executor's scratch, then " + kRoundBf16Kernel + " into y (cuBLASLt: " +
            (refusal.empty() ? std::string("in = 0") : refusal) + ")";
  }
  if (path == LinearPath::GemmFallback && f.ran.empty()) {
    f.calls = linear_fallback_calls(st.m, st.n, bias != nullptr);
    f.ran = std::string(st.what ? st.what : "?") + " FELL BACK to " +
            linear_fallback_name(bias != nullptr) +
            " (cuBLASLt: " + refusal + ")";
  }
  return Status::Ok();
}

template <class T>
Status CudaProgramModel<T>::linear_weight_grad(const StepDesc& st, int32_t s) {
  const T* dy = pointers_[size_t(st.a)];
  const T* x = pointers_[size_t(st.b)];
  T* dw = pointers_[size_t(st.c)];
  T* db = pointers_[size_t(st.bias)];
  const int64_t rows = st.k, in = st.n, out = st.m;
  LinearPath path = LinearPath::None;
  std::string refusal;
  if constexpr (std::is_same_v<T, float>) {
    if (padded_products_) {
      // Operand copies only (bf16 roundings): vouch-fold-linear-bias-grad folds only
      // products that plan_gemm pads under no precision, so dW and db are written in
      // place. A guard, for tables not built by that pass.
      const ProductPlan& pp = plans_[size_t(s)];
      if (pp.padded_output() || pp.pitch_a != 0 || pp.pitch_b != 0 || pp.M != out ||
          pp.N != in || pp.K != rows)
        return Status::Error(
            "step " + std::to_string(s) +
            ": linear_weight_grad with padded extents, which vouch-fold-linear-bias-grad "
            "never folds (it asks plan_gemm under tf32 and bf16 for no padding): " +
            describe_padding(pp, math_, false, out, in, rows));
      const unsigned char* const r0 = scratch_[0].base;
      const unsigned char* const r1 = scratch_[1].base;
      if (bf16_products_)
        VOUCH_RETURN_IF_ERROR(linear_weight_grad_row_major(
            rows, in, out, bf16_operand(s, 0, r0), bf16_operand(s, 1, r1), dw, db, &path,
            &refusal));
      else
        VOUCH_RETURN_IF_ERROR(linear_weight_grad_row_major(
            rows, in, out, pp.a.rows > 0 ? reinterpret_cast<const float*>(r0) : dy,
            pp.b.rows > 0 ? reinterpret_cast<const float*>(r1) : x, dw, db, math_, &path,
            &refusal));
    }
  }
  if (!padded_products_)
    VOUCH_RETURN_IF_ERROR(
        linear_weight_grad_row_major(rows, in, out, dy, x, dw, db, math_, &path, &refusal));
  // cuBLASLt refused BGRADB for this shape and type: the tape and the launch audit say
  // what ran instead, with the reason.
  Fallback& f = fallback_[size_t(s)];
  if (path == LinearPath::GemmFallback && f.ran.empty()) {
    // The calls weight_grad's fallback makes (blas.cc): dW's, then one per slab of db.
    auto api_of = [](const Result<GemmCall>& c) -> const char* {
      if (!c.ok()) return nullptr;
      switch (c.value().api) {
        case GemmCall::Api::MemsetZero: return "cudaMemsetAsync";
        case GemmCall::Api::GemmEx: return "cublasGemmEx";
        case GemmCall::Api::GemmStridedBatchedEx: return "cublasGemmStridedBatchedEx";
        case GemmCall::Api::None: break;
      }
      return nullptr;
    };
    const GemmDType dtype = std::is_same_v<T, double> ? GemmDType::F64 : GemmDType::F32;
    f.calls.clear();
    if (const char* api = api_of(describe_gemm(true, false, 1, out, in, rows, 0, 0, false,
                                               math_, dtype)))
      f.calls.push_back(api);
    const int64_t slab = column_sum_slab_rows();
    for (int64_t first = 0; first == 0 || first < rows; first += slab)
      if (const char* api = api_of(describe_column_sums(std::min(slab, rows - first), out,
                                                        first > 0, math_, dtype)))
        f.calls.push_back(api);
    f.ran = std::string(st.what ? st.what : "?") +
            " FELL BACK to " + weight_grad_fallback_name() + " (cuBLASLt: " + refusal + ")";
  }
  return Status::Ok();
}

template <class T>
Status CudaProgramModel<T>::copy_launch(int32_t s, const std::string& what, bool round,
                                        const void* in, void* out, const OperandLayout& l,
                                        bool to_padded) {
  const StepDesc& st = program_.steps[s];
  const char* capsule = st.capsule ? st.capsule : "unassigned";
  const char* kernel = round ? kRoundBf16Kernel : kRepitchKernel;
  if (audit_.active() || profile_) {  // the launch's name, only where one is kept
    const std::string name =
        std::string(kernel) + " (" + what + " of step " + std::to_string(s) + ")";
    if (audit_.active())
      VOUCH_RETURN_IF_ERROR(audit_.before(
          "step " + std::to_string(s) + " " + name + " [" + capsule + "]", kernel, {}));
    VOUCH_RETURN_IF_ERROR(mark(capsule, name, s));
  }
  long long batches = l.batches, rows = l.rows, cols = l.cols;
  long long in_rows = to_padded ? l.rows : l.out_rows, in_pitch = to_padded ? l.cols : l.pitch;
  long long out_rows = to_padded ? l.out_rows : l.rows, out_pitch = to_padded ? l.pitch : l.cols;
  const unsigned grid = grid_for(l.batches * out_rows * ((out_pitch + 1023) / 1024), 1, 4096);
  if (round) {
    void* args[] = {&in, &out, &batches, &rows, &cols, &out_rows, &out_pitch};
    VOUCH_RETURN_IF_ERROR(launch(round_bf16_, dim3(grid), dim3(256), 0, stream_.get(), args));
  } else {
    void* args[] = {&in,      &out,      &batches,  &rows,     &cols,
                    &in_rows, &in_pitch, &out_rows, &out_pitch};
    VOUCH_RETURN_IF_ERROR(launch(repitch_, dim3(grid), dim3(256), 0, stream_.get(), args));
  }
  return audit_.after();
}

template <class T>
bool CudaProgramModel<T>::bf16_in_place(int32_t s, int which) const {
  const StepDesc& st = program_.steps[s];
  return bf16_products_ && st.kind != StepKind::Kernel &&
         program_.buffers[which == 0 ? st.a : st.b].dtype == DType::Bf16;
}

template <class T>
OperandLayout CudaProgramModel<T>::operand_copy(int32_t s, int which) const {
  if (bf16_in_place(s, which)) return OperandLayout();
  return which == 0 ? plans_[size_t(s)].a : plans_[size_t(s)].b;
}

template <class T>
const bf16_bits* CudaProgramModel<T>::bf16_operand(int32_t s, int which,
                                                   const unsigned char* copy) const {
  const StepDesc& st = program_.steps[s];
  if (bf16_in_place(s, which))
    return reinterpret_cast<const bf16_bits*>(pointers_[size_t(which == 0 ? st.a : st.b)]);
  return reinterpret_cast<const bf16_bits*>(copy);
}

template <class T>
Status CudaProgramModel<T>::copy_operands(int32_t s) {
  const StepDesc& st = program_.steps[s];
  const ProductPlan& pp = plans_[size_t(s)];
  for (int which : {0, 1}) {
    const OperandLayout l = operand_copy(s, which);
    ScratchRegion& r = scratch_[which];
    if (l.rows == 0) continue;  // read in place (f32, or a bf16 buffer)
    const int32_t buffer = which == 0 ? st.a : st.b;
    const int32_t owner = storage_owner(program_, buffer);
    if (r.owner == owner && r.layout == l) continue;
    VOUCH_RETURN_IF_ERROR(copy_launch(s, operand_name(st.kind, which),
                                      bf16_products_, pointers_[size_t(buffer)], r.base, l,
                                      /*to_padded=*/true));
    r.owner = owner;
    r.layout = l;
  }
  // The bias and the padded output follow the operand's copy in its region: a region
  // whose operand this step reads in place (f32, or a bf16 buffer) loses what it held.
  const size_t operand = bf16_products_ ? sizeof(bf16_bits) : sizeof(float);
  const OperandLayout a = operand_copy(s, 0), b = operand_copy(s, 1);
  if (pp.bias.rows > 0) {
    if (b.rows == 0) scratch_[1].owner = -1;
    VOUCH_RETURN_IF_ERROR(copy_launch(s, "bias", false, pointers_[size_t(st.bias)],
                                      scratch_[1].base + copy_bytes(b, operand), pp.bias,
                                      /*to_padded=*/true));
  }
  if (pp.padded_output() && a.rows == 0) scratch_[0].owner = -1;
  return Status::Ok();
}

template <class T>
Status CudaProgramModel<T>::copy_output(int32_t s) {
  const ProductPlan& pp = plans_[size_t(s)];
  if (!pp.padded_output()) return Status::Ok();
  const StepDesc& st = program_.steps[s];
  const size_t operand = bf16_products_ ? sizeof(bf16_bits) : sizeof(float);
  return copy_launch(s, st.kind == StepKind::Linear ? "y" : "C", false,
                     scratch_[0].base + copy_bytes(operand_copy(s, 0), operand),
                     pointers_[size_t(st.c)], pp.c,
                     /*to_padded=*/false);
}

template <class T>
Status CudaProgramModel<T>::round_linear_output(int32_t s) {
  if (!fallback_[size_t(s)].round_y) return Status::Ok();
  const ProductPlan& pp = plans_[size_t(s)];
  OperandLayout y;
  y.batches = 1;
  y.rows = y.out_rows = pp.M;
  y.cols = y.pitch = pp.N;
  return copy_launch(s, "y", true, scratch_[0].base, pointers_[size_t(program_.steps[s].c)], y,
                     /*to_padded=*/true);
}

template <class T>
bool CudaProgramModel<T>::bf16_result(int32_t s) const {
  const StepDesc& st = program_.steps[s];
  return bf16_products_ && st.kind == StepKind::Linear &&
         program_.buffers[size_t(st.c)].dtype == DType::Bf16;
}

template <class T>
void CudaProgramModel<T>::forget_copies(int32_t s) {
  if (!padded_products_) return;
  for (int32_t w : access_[size_t(s)].writes)
    for (ScratchRegion& r : scratch_)
      if (r.owner == w) r.owner = -1;
}

template <class T>
Status CudaProgramModel<T>::run_step(int32_t s) {
  const StepDesc& st = program_.steps[s];
  switch (st.kind) {
    case StepKind::Kernel:
      return launch(kernels_[size_t(st.kernel)], dim3(step_grid_[size_t(s)]),
                    dim3(st.block_x, st.block_y), step_shared_[size_t(s)], stream_.get(),
                    arg_pointers_.data() + st.first_arg);
    case StepKind::Gemm:
      if constexpr (std::is_same_v<T, float>) {
        if (padded_products_) {
          const ProductPlan& pp = plans_[size_t(s)];
          const size_t operand = bf16_products_ ? sizeof(bf16_bits) : sizeof(float);
          unsigned char* const r0 = scratch_[0].base;
          unsigned char* const r1 = scratch_[1].base;
          float* c = pp.padded_output()
                         ? reinterpret_cast<float*>(r0 + copy_bytes(operand_copy(s, 0), operand))
                         : pointers_[size_t(st.c)];
          if (bf16_products_)
            return gemm_row_major(st.trans_a, st.trans_b, st.batch, pp.M, pp.N, pp.K,
                                  bf16_operand(s, 0, r0), pp.stride_a, bf16_operand(s, 1, r1),
                                  pp.stride_b, c, false, pp.pitch_a, pp.pitch_b);
          return gemm_row_major(
              st.trans_a, st.trans_b, st.batch, pp.M, pp.N, pp.K,
              pp.a.rows > 0 ? reinterpret_cast<const float*>(r0) : pointers_[size_t(st.a)],
              pp.stride_a,
              pp.b.rows > 0 ? reinterpret_cast<const float*>(r1) : pointers_[size_t(st.b)],
              pp.stride_b, c, false, math_);
        }
      }
      return gemm_row_major(st.trans_a, st.trans_b, st.batch, st.m, st.n, st.k,
                            static_cast<const T*>(pointers_[size_t(st.a)]), st.stride_a,
                            static_cast<const T*>(pointers_[size_t(st.b)]), st.stride_b,
                            pointers_[size_t(st.c)], false, math_);
    case StepKind::Linear:
      return linear(st, s);
    case StepKind::LinearWeightGrad:
      return linear_weight_grad(st, s);
  }
  return Status::Error("step " + std::to_string(s) + ": unknown step kind");
}

template <class T>
Status CudaProgramModel<T>::run_steps(int32_t begin, int32_t end, Tape* tape) {
  // A forward pass starts anew: the scratch holds what an earlier pass rounded, from
  // buffers (inputs, parameters) that may have changed since.
  if (begin == 0)
    for (ScratchRegion& r : scratch_) r.owner = -1;
  for (int32_t s = begin; s < end; s++) {
    const StepAccess& a = access_[size_t(s)];
    VOUCH_RETURN_IF_ERROR(deps_.before(a.reads, a.writes));
    const bool library = program_.steps[s].kind != StepKind::Kernel;
    if (padded_products_ && library) {
      Status copied = copy_operands(s);
      if (!copied.ok()) {
        const char* what = program_.steps[s].what;
        return Status::Error("step " + std::to_string(s) + " (" + (what ? what : "?") +
                             "): " + copied.message());
      }
    }
    if (audit_.active()) VOUCH_RETURN_IF_ERROR(audit_before_step(s));
    std::optional<BlasCallLog> calls;  // the library calls the audit compares
    if (audit_.active()) calls.emplace();
    if (profile_) {
      const StepDesc& st = program_.steps[s];
      VOUCH_RETURN_IF_ERROR(
          mark(st.capsule ? st.capsule : "unassigned", st.what ? st.what : "?", s));
    }
    Status st = run_step(s);
    const Fallback& f = fallback_[size_t(s)];
    if (st.ok() && calls) st = audit_.after(calls->calls(), f.ran, f.calls);
    calls.reset();
    if (st.ok() && padded_products_ && library) st = copy_output(s);
    if (st.ok() && padded_products_ && library) st = round_linear_output(s);
    if (st.ok()) st = deps_.after(a.reads, a.writes);
    forget_copies(s);
    if (st.ok() && !f.ran.empty()) tape_nodes_.note_ran(s, f.ran);
    if (!st.ok()) {
      const char* what = program_.steps[s].what;
      return Status::Error("step " + std::to_string(s) + " (" + (what ? what : "?") + "): " +
                           st.message());
    }
    tape_nodes_.record_after(s, tape);
  }
  return Status::Ok();
}

template <class T>
void CudaProgramModel<T>::vjp(void* self, int node_id) {
  auto* model = static_cast<CudaProgramModel*>(self);
  if (!model->vjp_status_.ok()) return;
  const NodeDesc* n = model->tape_nodes_.node(node_id);
  if (n == nullptr) return;  // not a node of this program
  model->vjp_status_ = model->run_steps(n->vjp_begin, n->vjp_end, nullptr);
}

template <class T>
Status CudaProgramModel<T>::step_body(Tape& tape) {
  cudaStream_t s = stream_.get();
  const Program& p = program_;
  // Launch dependencies matter only in a captured graph (a stream runs in order).
  if (run_.cuda_graph) VOUCH_RETURN_IF_ERROR(deps_.begin(p.num_buffers + 3));
  // The first captured step is audited when asked (--audit-launches).
  if (run_.audit_launches && !audit_.done()) VOUCH_RETURN_IF_ERROR(audit_.begin(s));
  const std::string suffix = audit_.active() ? element_suffix<T>() : "";
  auto named = [](const char* capsule) { return capsule ? capsule : "unassigned"; };
  VOUCH_RETURN_IF_ERROR(deps_.before(select_access_.reads, select_access_.writes));
  const char* select_name = streaming_ ? kSelectWindowsKernel : kSelectBatchKernel;
  if (audit_.active())
    VOUCH_RETURN_IF_ERROR(audit_.before(select_name + suffix + " [" +
                                            named(p.batch_capsule) + "]",
                                        select_name + suffix, {}));
  VOUCH_RETURN_IF_ERROR(mark(named(p.batch_capsule), "batch selection"));
  if (streaming_) {
    void* windows[] = {&windows_args_.tokens, &windows_args_.batch, &windows_args_.step,
                       &windows_args_.windows};
    const unsigned grid =
        grid_for(windows_args_.windows.batch * windows_args_.windows.context, 256, 1024);
    VOUCH_RETURN_IF_ERROR(launch(select_windows_, dim3(grid), dim3(256), 0, s, windows));
  } else {
    void* select[] = {&select_args_.data,        &select_args_.batch,
                      &select_args_.step,        &select_args_.num_batches,
                      &select_args_.words,       &select_args_.order};
    unsigned select_grid = grid_for(select_args_.words, 256, 1024);
    VOUCH_RETURN_IF_ERROR(launch(select_batch_, dim3(select_grid), dim3(256), 0, s, select));
  }
  VOUCH_RETURN_IF_ERROR(deps_.after(select_access_.reads, select_access_.writes));
  VOUCH_RETURN_IF_ERROR(audit_.after());
  VOUCH_RETURN_IF_ERROR(run_steps(0, program_.forward_end, &tape));
  VOUCH_RETURN_IF_ERROR(run_backward(tape));
  if (optimizer_args_.clip) {
    // Clipping: the global norm of every gradient, a fixed grid, before the update.
    VOUCH_RETURN_IF_ERROR(deps_.before(grad_norm_access_.reads, grad_norm_access_.writes));
    if (audit_.active())
      VOUCH_RETURN_IF_ERROR(audit_.before(kGradNormKernel + suffix + " [" +
                                              named(p.clip_capsule) + "]",
                                          kGradNormKernel + suffix, {}));
    int num_params = p.num_params;
    double* out = clip_;
    double* partials = clip_ + 2;
    unsigned* ticket = reinterpret_cast<unsigned*>(clip_ + 2 + vouch::kGradNormBlocks);
    void* norm[] = {&optimizer_args_.slots, &num_params, &optimizer_args_.max_norm, &out,
                    &partials, &ticket};
    VOUCH_RETURN_IF_ERROR(mark(named(p.clip_capsule), "gradient norm"));
    VOUCH_RETURN_IF_ERROR(launch(grad_norm_, dim3(vouch::kGradNormBlocks),
                                 dim3(vouch::kGradNormThreads), 0, s, norm));
    VOUCH_RETURN_IF_ERROR(deps_.after(grad_norm_access_.reads, grad_norm_access_.writes));
    VOUCH_RETURN_IF_ERROR(audit_.after());
  }
  VOUCH_RETURN_IF_ERROR(deps_.before(optimizer_access_.reads, optimizer_access_.writes));
  if (audit_.active())
    VOUCH_RETURN_IF_ERROR(audit_.before(kOptimizerKernel + suffix + " [" +
                                            named(p.optimizer_capsule) + "]",
                                        kOptimizerKernel + suffix, {}));
  void* opt[] = {&optimizer_args_.slots,    &optimizer_args_.num_params,
                 &optimizer_args_.step,     &optimizer_args_.hyper,
                 &optimizer_args_.clip,     &optimizer_args_.loss,
                 &optimizer_args_.ring,     &optimizer_args_.capacity,
                 &optimizer_args_.done};
  VOUCH_RETURN_IF_ERROR(mark(named(p.optimizer_capsule), "optimizer"));
  VOUCH_RETURN_IF_ERROR(launch(optimizer_,
                               dim3(optimizer_blocks_),
                               dim3(256), 0, s, opt));
  VOUCH_RETURN_IF_ERROR(deps_.after(optimizer_access_.reads, optimizer_access_.writes));
  VOUCH_RETURN_IF_ERROR(audit_.after());
  VOUCH_RETURN_IF_ERROR(deps_.finish());
  return audit_.finish();
}

template <class T>
Status CudaProgramModel<T>::audit_before_step(int32_t s) {
  const StepDesc& st = program_.steps[s];
  std::string label = std::string(st.what ? st.what : "?") + " [" +
                      (st.capsule ? st.capsule : "unassigned") + "]";
  // A kernel step runs exactly its kernel; a library step exactly the call it names
  // (the entry point before the "(" of `what`), whatever kernels the library runs.
  if (st.kind == StepKind::Kernel)
    return audit_.before("step " + std::to_string(s) + " " + label,
                         std::string(program_.kernel_names[st.kernel]) + element_suffix<T>(), {});
  // A bf16 operand read where it lies has no rounding launch of its own: the label
  // says so (beside the vouch_round_bf16_f32 launches of the operands it rounds).
  for (int which : {0, 1})
    if (bf16_in_place(s, which)) {
      const int32_t b = which == 0 ? st.a : st.b;
      label += std::string(", ") + operand_name(st.kind, which) +
               " read as bf16 in place (buffer " + program_.buffers[b].name + ")";
    }
  std::string what = st.what ? st.what : "";
  return audit_.before("step " + std::to_string(s) + " " + label, "",
                       {what.substr(0, what.find('('))});
}

template <class T>
Status CudaProgramModel<T>::drop_graphs() {
  for (StepGraph* g : {graph_.get(), unrolled_.get()})
    if (g) VOUCH_RETURN_IF_ERROR(fail(g->reset()));
  return Status::Ok();
}

template <class T>
Status CudaProgramModel<T>::enqueue_through(std::unique_ptr<StepGraph>& graph, int64_t steps) {
  if (!graph)
    graph = std::make_unique<StepGraph>(
        stream_.get(), run_.cuda_graph ? StepGraph::Mode::Graph : StepGraph::Mode::Disabled);
  // The body runs at capture (or every step without a graph) and records the tape;
  // a failure poisons the model, so a half-recorded tape is never read.
  Status st = graph->run([this, steps] {
    for (int64_t k = 0; k < steps; k++) {
      recorded_.clear();
      VOUCH_RETURN_IF_ERROR(step_body(recorded_));
    }
    return Status::Ok();
  });
  if (!st.ok()) return fail(Status::Error("training step " + std::to_string(enqueued_) + ": " +
                                          st.message()));
  enqueued_ += steps;
  return Status::Ok();
}

template <class T>
Status CudaProgramModel<T>::enqueue_steps(const OptimizerConfig& o, int64_t count, Tape* tape) {
  VOUCH_RETURN_IF_ERROR(status_);
  if (num_batches_ <= 0) return Status::Error("enqueue_steps: no data uploaded");
  if (count < 0) return Status::Error("enqueue_steps: " + std::to_string(count) + " steps");
  OptimizerArgs before = optimizer_args_;
  pack_optimizer(o);
  VOUCH_RETURN_IF_ERROR(fail(update_decay_flags(o)));
  // A captured graph holds the arguments it was captured with: capture again.
  if (before.hyper_parameters() != optimizer_args_.hyper_parameters())
    VOUCH_RETURN_IF_ERROR(drop_graphs());
  // Outside the graphs, which read it: these forwards are training steps.
  VOUCH_RETURN_IF_ERROR(fail(set_training(true)));
  int64_t left = count;
  if (run_.profile && profile_text_.empty() && enqueued_ <= kProfiledStep &&
      enqueued_ + count > kProfiledStep) {
    const int64_t before = kProfiledStep - enqueued_;
    VOUCH_RETURN_IF_ERROR(enqueue_plain(before));
    VOUCH_RETURN_IF_ERROR(profile_step());
    left = count - before - 1;
  }
  VOUCH_RETURN_IF_ERROR(enqueue_plain(left));
  // Every step's tape is the same (the program is static); the last body that ran on the
  // host recorded it.
  if (tape && count > 0) *tape = recorded_;
  return Status::Ok();
}

template <class T>
Status CudaProgramModel<T>::enqueue_plain(int64_t steps) {
  for (; steps >= steps_per_graph_ && steps_per_graph_ > 1; steps -= steps_per_graph_)
    VOUCH_RETURN_IF_ERROR(enqueue_through(unrolled_, steps_per_graph_));
  for (; steps > 0; steps--) VOUCH_RETURN_IF_ERROR(enqueue_through(graph_, 1));
  return Status::Ok();
}

template <class T>
Status CudaProgramModel<T>::mark(const char* capsule, const std::string& what,
                                 int32_t step) {
  if (!profile_) return Status::Ok();
  // The events exist before the step runs (profile_step): no creation between launches.
  if (profile_->capsules.size() == profile_->events.size())
    return Status::Error("--profile: more launches than events");
  cudaEvent_t e = profile_->events[profile_->capsules.size()];
  VOUCH_CUDA_CHECK_WHAT(cudaEventRecord(e, stream_.get()), "cudaEventRecord(--profile)");
  profile_->capsules.push_back(capsule);
  profile_->whats.push_back(what);
  profile_->steps.push_back(step);
  return Status::Ok();
}

// The time between two consecutive events is the launch between them (the stream
// runs them in order), library calls with every kernel they make; the gaps between
// launches (host launch overhead a graph hides) count to the launch after them.
template <class T>
Status CudaProgramModel<T>::profile_step() {
  const int64_t step = enqueued_;
  profile_ = std::make_unique<StepProfile>();
  // One per launch (the program's steps, batch selection, gradient norm, optimizer)
  // and the end.
  // Up to five per library step with tensor-core products: x, W, bias, the call, y.
  profile_->events.resize(size_t(program_.num_steps) * (padded_products_ ? 5 : 1) + 4);
  for (cudaEvent_t& e : profile_->events)
    VOUCH_CUDA_CHECK_WHAT(cudaEventCreate(&e), "cudaEventCreate(--profile)");
  std::unique_ptr<StepGraph> direct;
  {
    const bool graphs = run_.cuda_graph;
    run_.cuda_graph = false;  // enqueue_through builds `direct` without a graph
    Status st = enqueue_through(direct, 1);
    run_.cuda_graph = graphs;
    if (st.ok()) st = mark("", "end");
    if (st.ok()) st = stream_.synchronize();
    if (!st.ok()) {
      for (cudaEvent_t e : profile_->events) cudaEventDestroy(e);
      profile_.reset();
      return fail(st);
    }
  }
  const StepProfile& p = *profile_;
  struct Total {
    double ms = 0;
    int launches = 0;
  };
  std::map<std::string, Total> by_capsule;
  std::vector<std::pair<double, std::string>> launches;
  double total = 0;
  char line[512];
  std::string in_order = "# launch\tms\tstep\tcapsule\twhat\n";
  for (size_t i = 0; i + 1 < p.capsules.size(); i++) {  // the events recorded
    float ms = 0;
    VOUCH_CUDA_CHECK_WHAT(cudaEventElapsedTime(&ms, p.events[i], p.events[i + 1]),
                          "cudaEventElapsedTime(--profile)");
    by_capsule[p.capsules[i]].ms += ms;
    by_capsule[p.capsules[i]].launches++;
    launches.push_back({ms, p.whats[i] + " [" + p.capsules[i] + "]"});
    std::snprintf(line, sizeof(line), "%zu\t%.6f\t%d\t", i, double(ms), int(p.steps[i]));
    in_order += line + p.capsules[i] + "\t" + p.whats[i] + "\n";
    total += ms;
  }
  for (cudaEvent_t e : p.events) cudaEventDestroy(e);
  profile_.reset();
  std::vector<std::pair<std::string, Total>> rows(by_capsule.begin(), by_capsule.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
  std::stable_sort(launches.begin(), launches.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string text;
  std::snprintf(line, sizeof(line),
                "profile of training step %lld (no CUDA graph; a CUDA event before every "
                "launch): %.3f ms, %zu launches\n",
                (long long)step, total, launches.size());
  text += line;
  text += "  by capsule:        ms      %  launches\n";
  for (const auto& [capsule, t] : rows) {
    std::snprintf(line, sizeof(line), "  %-28s %9.3f %6.1f %9d\n", capsule.c_str(), t.ms,
                  total > 0 ? 100.0 * t.ms / total : 0.0, t.launches);
    text += line;
  }
  text += "  slowest launches:\n";
  for (size_t i = 0; i < launches.size() && i < 10; i++) {
    std::snprintf(line, sizeof(line), "  %9.3f ms  %s\n", launches[i].first,
                  launches[i].second.c_str());
    text += line;
  }
  profile_text_ = text;
  profile_launches_text_ = in_order;
  return Status::Ok();
}

template <class T>
Status CudaProgramModel<T>::read_losses(int64_t first, int64_t count, double* out) {
  VOUCH_RETURN_IF_ERROR(status_);
  if (first < 0 || count < 0 || first + count > enqueued_)
    return Status::Error("read_losses: steps [" + std::to_string(first) + ", " +
                         std::to_string(first + count) + ") were not all enqueued (" +
                         std::to_string(enqueued_) + " steps so far)");
  if (count > 0 && first < enqueued_ - loss_capacity_)
    return Status::Error("read_losses: the loss of step " + std::to_string(first) +
                         " was overwritten (the ring keeps the last " +
                         std::to_string(loss_capacity_) + " of " + std::to_string(enqueued_) +
                         " steps)");
  Status synced = stream_.synchronize();
  if (!synced.ok())
    return fail(Status::Error("reading the losses of steps [" + std::to_string(first) + ", " +
                              std::to_string(first + count) + "): " + synced.message()));
  for (int64_t i = 0; i < count; i++)
    out[i] = double(host_ring_[(first + i) % loss_capacity_]);
  return Status::Ok();
}

template <class T>
T CudaProgramModel<T>::forward(const T* x, const T* y, Tape* tape) {
  Status fits = two_real_fields(program_);
  if (!fits.ok()) {
    fail(fits);
    return std::numeric_limits<T>::quiet_NaN();
  }
  const void* fields[] = {x, y};
  return forward_fields(fields, tape);
}

template <class T>
T CudaProgramModel<T>::forward_fields(const void* const* fields, Tape* tape) {
  const Program& p = program_;
  cudaStream_t s = stream_.get();
  Status st = status_;
  for (int32_t f = 0; f < p.num_fields && st.ok(); f++) {
    const BufferDesc& d = p.buffers[p.fields[f]];
    st = upload(reinterpret_cast<unsigned char*>(pointers_[size_t(p.fields[f])]),
                static_cast<const unsigned char*>(fields[f]),
                size_t(d.numel * element_bytes(d.dtype, sizeof(T))), s);
  }
  // A forward that records the tape is a training step: dropout draws its mask.
  if (st.ok()) st = set_training(tape != nullptr);
  if (st.ok()) st = run_steps(0, p.forward_end, tape);
  const T* output = static_cast<const T*>(pointers_[size_t(p.output)]);
  if (st.ok() && p.output_pitch == 0) st = download(prediction_.data(), output, prediction_.size(), s);
  if (st.ok() && p.output_pitch > 0)  // the rows without their padding
    st = download_rows(prediction_.data(), output, prediction_.size() / size_t(p.output_columns),
                       size_t(p.output_columns), size_t(p.output_pitch), s);
  if (st.ok()) {
    // Synchronizes: the prediction's download, enqueued before, is done too.
    Result<T> loss = download_scalar(static_cast<const T*>(pointers_[size_t(p.loss)]), s);
    if (loss.ok()) return loss.value();
    st = loss.status();
  }
  fail(st);
  return std::numeric_limits<T>::quiet_NaN();
}

template <class T>
Status CudaProgramModel<T>::run_backward(const Tape& tape) {
  VOUCH_RETURN_IF_ERROR(run_steps(program_.prologue_begin, program_.prologue_end, nullptr));
  vjp_status_ = Status::Ok();
  tape.backward(this);
  return vjp_status_;
}

template <class T>
void CudaProgramModel<T>::backward(Tape& tape) {
  if (!status_.ok()) return;
  Status st = run_backward(tape);
  if (st.ok()) st = stream_.synchronize();
  fail(st);
}

template <class T>
T* CudaProgramModel<T>::param(int i) {
  if (i < 0 || size_t(i) >= params_.size()) return nullptr;
  return params_[size_t(i)].data();
}

template <class T>
T* CudaProgramModel<T>::grad(int i) {
  if (i < 0 || size_t(i) >= grads_.size()) return nullptr;
  Status s = download(grads_[size_t(i)].data(),
                      static_cast<const T*>(pointers_[size_t(program_.grads[i])]),
                      grads_[size_t(i)].size(), stream_.get());
  if (s.ok()) s = stream_.synchronize();
  fail(s);
  return grads_[size_t(i)].data();
}

template <class T>
T* CudaProgramModel<T>::state(int i) {
  if (i < 0 || size_t(i) >= states_.size()) return nullptr;
  return states_[size_t(i)].data();
}

template <class T>
Status CudaProgramModel<T>::set_training(bool training) {
  if (training_ == (training ? 1 : 0)) return Status::Ok();
  training_ = training ? 1 : 0;
  // Stream-ordered after the work already enqueued; the host word is a member, so it
  // outlives the copy.
  return upload(step_ + vouch::kRngTraining, &training_, 1, stream_.get());
}

template <class T>
Status CudaProgramModel<T>::configure(const RunConfig& run) {
  if (run.deterministic) set_deterministic_reductions(true);
  if (status_.ok()) {
    seed_ = (long long)run.seed;
    Status st = upload(step_ + vouch::kRngSeed, &seed_, 1, stream_.get());
    if (st.ok()) st = stream_.synchronize();
    if (!st.ok()) return fail(st);
  }
  if (run.cuda_graph != run_.cuda_graph) {  // made again in the new mode
    graph_.reset();
    unrolled_.reset();
  }
  run_ = run;
  // The shuffled order's field layout (shuffle.h); its rows are set with the data.
  const Program& p = program_;
  vouch::RowOrder& order = select_args_.order;
  order = vouch::RowOrder{};
  if (run.shuffle) {
    if (p.num_fields > vouch::kMaxShuffledFields)
      return fail(Status::Error("shuffle: at most " +
                                std::to_string(vouch::kMaxShuffledFields) +
                                " data fields, this model has " +
                                std::to_string(p.num_fields)));
    if (run.batch < 1) return fail(Status::Error("shuffle: batch size must be positive"));
    order.seed = run.seed;
    order.batch = run.batch;
    order.num_fields = p.num_fields;
    for (int32_t f = 0; f < p.num_fields; f++) {
      const BufferDesc& d = p.buffers[p.fields[f]];
      order.word_offset[f] = (long long)(field_offset_[size_t(f)] / 4);
      order.row_words[f] = d.numel * element_bytes(d.dtype, sizeof(T)) / 4 / run.batch;
    }
  }
  return status_;
}

template <class T>
Status CudaProgramModel<T>::upload_params() {
  VOUCH_RETURN_IF_ERROR(status_);
  const Program& p = program_;
  cudaStream_t s = stream_.get();
  for (int32_t i = 0; i < p.num_params; i++) {
    size_t n = params_[size_t(i)].size();
    VOUCH_RETURN_IF_ERROR(fail(upload(pointers_[size_t(p.params[i])], params_[size_t(i)].data(), n, s)));
    VOUCH_RETURN_IF_ERROR(fail(check_cuda(cudaMemsetAsync(m_[size_t(i)], 0, sizeof(T) * n, s),
                                          "cudaMemsetAsync(optimizer state)")));
    VOUCH_RETURN_IF_ERROR(fail(check_cuda(cudaMemsetAsync(v_[size_t(i)], 0, sizeof(T) * n, s),
                                          "cudaMemsetAsync(optimizer state)")));
  }
  // The model's state (running statistics): the steps update it on the device.
  for (int32_t i = 0; i < p.num_states; i++)
    VOUCH_RETURN_IF_ERROR(fail(upload(pointers_[size_t(p.states[i])], states_[size_t(i)].data(),
                                      states_[size_t(i)].size(), s)));
  VOUCH_RETURN_IF_ERROR(fail(check_cuda(cudaMemsetAsync(step_, 0, 2 * sizeof(long long), s),
                                        "cudaMemsetAsync(step counter)")));
  enqueued_ = 0;
  VOUCH_RETURN_IF_ERROR(fail(stream_.synchronize()));
  // Poisoned (NaN) so a loss no step recorded shows; nothing writes it now.
  std::memset(host_ring_, 0xff, sizeof(T) * size_t(loss_capacity_));
  return Status::Ok();
}

template <class T>
Status CudaProgramModel<T>::download_params() {
  VOUCH_RETURN_IF_ERROR(status_);
  const Program& p = program_;
  for (int32_t i = 0; i < p.num_params; i++)
    VOUCH_RETURN_IF_ERROR(fail(download(params_[size_t(i)].data(),
                                        static_cast<const T*>(pointers_[size_t(p.params[i])]),
                                        params_[size_t(i)].size(), stream_.get())));
  for (int32_t i = 0; i < p.num_states; i++)
    VOUCH_RETURN_IF_ERROR(fail(download(states_[size_t(i)].data(),
                                        static_cast<const T*>(pointers_[size_t(p.states[i])]),
                                        states_[size_t(i)].size(), stream_.get())));
  return fail(stream_.synchronize());
}

template <class T>
Status CudaProgramModel<T>::upload_data(const T* x, const T* y, int64_t num_batches) {
  VOUCH_RETURN_IF_ERROR(fail(two_real_fields(program_)));
  const void* fields[] = {x, y};
  return upload_fields(fields, num_batches);
}

template <class T>
Status CudaProgramModel<T>::upload_fields(const void* const* fields, int64_t num_batches) {
  VOUCH_RETURN_IF_ERROR(status_);
  if (num_batches <= 0)
    return Status::Error("upload_fields: " + std::to_string(num_batches) + " batches");
  const Program& p = program_;
  cudaStream_t s = stream_.get();
  // Packed on the host as the device block is laid out (init): batch b's block holds
  // every field's rows of batch b at the field's offset.
  const size_t block_bytes = size_t(batch_words_) * 4;
  std::vector<unsigned char> packed(size_t(num_batches) * block_bytes, 0);
  for (int32_t f = 0; f < p.num_fields; f++) {
    const BufferDesc& d = p.buffers[p.fields[f]];
    const size_t bytes = size_t(d.numel * element_bytes(d.dtype, sizeof(T)));
    const auto* from = static_cast<const unsigned char*>(fields[f]);
    for (int64_t b = 0; b < num_batches; b++)
      std::memcpy(packed.data() + size_t(b) * block_bytes + field_offset_[size_t(f)],
                  from + size_t(b) * bytes, bytes);
  }
  // The graphs read the old data's address: drop them before it goes.
  VOUCH_RETURN_IF_ERROR(drop_graphs());
  VOUCH_RETURN_IF_ERROR(fail(stream_.synchronize()));
  Result<DeviceBuffer> b = DeviceBuffer::allocate(packed.size(), s);
  if (!b.ok()) return fail(b.status());
  data_ = std::move(b.value());
  VOUCH_RETURN_IF_ERROR(
      fail(upload(data_.template as<unsigned char>(), packed.data(), packed.size(), s)));
  select_args_.data = data_.template as<unsigned>();
  select_args_.num_batches = num_batches;
  select_args_.order.rows = run_.shuffle ? num_batches * run_.batch : 0;
  num_batches_ = num_batches;
  streaming_ = false;
  return fail(stream_.synchronize());
}

template <class T>
Status CudaProgramModel<T>::release_tokens() {
  Status st = Status::Ok();
  if (registered_) st = check_cuda(cudaHostUnregister(registered_), "cudaHostUnregister(tokens)");
  if (pinned_tokens_ && st.ok())
    st = check_cuda(cudaFreeHost(pinned_tokens_), "cudaFreeHost(tokens)");
  registered_ = pinned_tokens_ = nullptr;
  tokens_ = TokenStream();
  streaming_ = false;
  return st;
}

template <class T>
Status CudaProgramModel<T>::upload_tokens(const TokenStream& tokens) {
  VOUCH_RETURN_IF_ERROR(status_);
  const Program& p = program_;
  // The input (field 0) and the target (field 1), both int32 [batch, context].
  if (p.num_fields != 2)
    return fail(Status::Error("upload_tokens: a token stream feeds one input and one target, "
                              "the program has " + std::to_string(p.num_fields) + " fields"));
  for (int32_t f = 0; f < 2; f++) {
    const BufferDesc& d = p.buffers[p.fields[f]];
    if (d.dtype != DType::I32 || d.numel != run_.batch * tokens.context)
      return fail(Status::Error("upload_tokens: field " + std::to_string(f) +
                                " is not int32 [batch " + std::to_string(run_.batch) +
                                ", context " + std::to_string(tokens.context) + "]"));
  }
  if (tokens.count < tokens.context + 1 || tokens.context < 1 ||
      (tokens.token_bytes != 2 && tokens.token_bytes != 4) || tokens.mapping == nullptr)
    return fail(Status::Error("upload_tokens: an empty or malformed token stream"));
  const std::string suffix = element_suffix<T>();
  if (!select_windows_) {
    Result<cudaKernel_t> k = module_.kernel((kSelectWindowsKernel + suffix).c_str());
    if (!k.ok()) return fail(k.status());
    using Sizes = std::vector<std::pair<size_t, const char*>>;
    const std::pair<size_t, const char*> ptr{sizeof(void*), "pointer"};
    VOUCH_RETURN_IF_ERROR(fail(check_parameters(
        k.value(), kSelectWindowsKernel + suffix,
        Sizes{ptr, ptr, ptr, {sizeof(vouch::TokenWindows), "TokenWindows"}}, "executor")));
    select_windows_ = k.value();
  }
  // The graphs read the old data's address: drop them before it goes.
  VOUCH_RETURN_IF_ERROR(drop_graphs());
  VOUCH_RETURN_IF_ERROR(fail(stream_.synchronize()));
  VOUCH_RETURN_IF_ERROR(fail(release_tokens()));
  const size_t token_offset = size_t(static_cast<const unsigned char*>(tokens.tokens) -
                                     static_cast<const unsigned char*>(tokens.mapping));
  const size_t token_bytes = size_t(tokens.count) * size_t(tokens.token_bytes);
  // The mapping as the kernel reads it: registered in place (pinned, mapped into the
  // device's address space, read-only as the file's mapping is), whole pages.
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  const size_t mapped = (tokens.mapping_bytes + page - 1) / page * page;
  void* host = const_cast<void*>(tokens.mapping);
  const unsigned char* device_tokens = nullptr;
  cudaError_t registered =
      cudaHostRegister(host, mapped, cudaHostRegisterMapped | cudaHostRegisterReadOnly);
  if (registered == cudaSuccess) {
    registered_ = host;
    void* device = nullptr;
    VOUCH_RETURN_IF_ERROR(fail(check_cuda(cudaHostGetDevicePointer(&device, host, 0),
                                          "cudaHostGetDevicePointer(tokens)")));
    device_tokens = static_cast<const unsigned char*>(device) + token_offset;
    token_memory_ = "read in place from the file's mapping (cudaHostRegister, mapped, "
                    "read-only)";
  } else {
    // Refused (a filesystem or driver that cannot pin file pages, no read-only
    // registration on this device): one copy into mapped pinned host memory.
    (void)cudaGetLastError();
    const std::string why = cudaGetErrorString(registered);
    VOUCH_RETURN_IF_ERROR(fail(check_cuda(
        cudaHostAlloc(&pinned_tokens_, std::max<size_t>(token_bytes, 4), cudaHostAllocMapped),
        "cudaHostAlloc(tokens, " + std::to_string(token_bytes) + " bytes)")));
    std::memcpy(pinned_tokens_, tokens.tokens, token_bytes);
    void* device = nullptr;
    VOUCH_RETURN_IF_ERROR(fail(check_cuda(cudaHostGetDevicePointer(&device, pinned_tokens_, 0),
                                          "cudaHostGetDevicePointer(tokens)")));
    device_tokens = static_cast<const unsigned char*>(device);
    token_memory_ = "copied into mapped pinned host memory (cudaHostRegister refused the "
                    "file's mapping: " + why + ")";
  }
  tokens_ = tokens;
  windows_args_.tokens = device_tokens;
  windows_args_.batch = batch_;
  windows_args_.step = step_;
  vouch::TokenWindows& w = windows_args_.windows;
  w = vouch::TokenWindows{};
  w.seed = run_.seed;
  w.count = tokens.count;
  w.context = tokens.context;
  w.batch = run_.batch;
  w.input_word = (long long)(field_offset_[0] / 4);
  w.target_word = (long long)(field_offset_[1] / 4);
  w.token_bytes = tokens.token_bytes;
  w.random = tokens.random ? 1 : 0;
  streaming_ = true;
  num_batches_ = 1;  // enqueue_steps' "data uploaded"; the windows come from the step
  return fail(stream_.synchronize());
}

template <class T>
std::string CudaProgramModel<T>::memory_report() const {
  // The step graphs' counts: one capture serves every batch.
  auto count = [](const std::unique_ptr<StepGraph>& g, int64_t (StepGraph::*what)() const) {
    return g ? (g.get()->*what)() : 0;
  };
  std::string graphs =
      "cuda graph: " +
      std::to_string(count(graph_, &StepGraph::captures) + count(unrolled_, &StepGraph::captures)) +
      " captured, " + std::to_string(count(unrolled_, &StepGraph::launches)) + " launches of " +
      std::to_string(steps_per_graph_) + " steps and " +
      std::to_string(count(graph_, &StepGraph::launches)) + " of 1 for " +
      (streaming_ ? std::string("a token stream\n") : std::to_string(num_batches_) + " batches\n");
  if (streaming_)
    graphs += "tokens: " + std::to_string(tokens_.count) + " of " +
              std::to_string(tokens_.token_bytes) + " bytes, " + token_memory_ + "\n";
  return graphs + format(stats());
}

template class CudaProgramModel<float>;
template class CudaProgramModel<double>;

Backend cuda_program_backend(const Program& program, const KernelImage* images,
                             size_t image_count, ProductMath math, bool f64_kernels,
                             std::string header,
                             std::map<std::string, std::string> capsule_reports) {
  Backend b;
  b.device = Device::Cuda;
  const Program* p = &program;
  b.make_f32 = [=]() -> std::unique_ptr<CompiledModel<float>> {
    return std::make_unique<CudaProgramModel<float>>(*p, images, image_count, math);
  };
  // Rounded products are an f32 policy: an f64 run would compute exact f64 products
  // while the schedule and the report say tf32 / bf16, so there is none.
  if (math != ProductMath::Fp32)
    b.no_f64_reason = std::string("this executable was built with --precision ") +
                      product_math_name(math) +
                      " (its f32 products round their operands, as its report says); an "
                      "f64 run would compute other products: build without --precision and "
                      "with --f64-kernels for one";
  else if (!f64_kernels)
    b.no_f64_reason =
        "this executable was built without the kernels' f64 entry points (vouch build "
        "compiles them only under --f64-kernels, which about doubles NVRTC's work): "
        "rebuild with --f64-kernels for an f64 run on cuda, or run f64 with --device cpu";
  else
    b.make_f64 = [=]() -> std::unique_ptr<CompiledModel<double>> {
      return std::make_unique<CudaProgramModel<double>>(*p, images, image_count, math);
    };
  b.ready = [] { return require_native_cuda(); };
  // What init() allocates: a device buffer per owner (the fields share one block; each
  // at least one element), m and v for every param, the BLAS handles' two workspaces;
  // on the host the params' and gradients' mirrors and the float64 copies of the params
  // that initialisation and checkpoints make. Not the dataset (uploaded later) nor the
  // small scratch of padded products.
  b.memory_need = [p](int64_t real_bytes) {
    uint64_t storage = 0;
    for (uint64_t bytes : storage_bytes(*p, real_bytes)) storage = add_bytes(storage, bytes);
    const uint64_t params = param_elements(*p);
    MemoryNeed need;
    need.device.push_back({"buffers (params, gradients, activations)", storage});
    need.device.push_back({"optimizer state", mul_bytes(mul_bytes(2, params), uint64_t(real_bytes))});
    need.device.push_back({"BLAS workspaces", 2 * kBlasWorkspaceBytes});
    need.host.push_back({"host copies of the params and gradients",
                         mul_bytes(mul_bytes(2, params), uint64_t(real_bytes))});
    need.host.push_back({"float64 copies of the params (initialisation, checkpoints)",
                         mul_bytes(16, params)});
    return need;
  };
  b.device_memory_free = []() -> Result<uint64_t> {
    size_t free_bytes = 0, total_bytes = 0;
    const cudaError_t e = cudaMemGetInfo(&free_bytes, &total_bytes);
    if (e != cudaSuccess) return cuda_failure("cudaMemGetInfo", e);
    return uint64_t(free_bytes);
  };
  b.header = std::move(header);
  if (program.schedule && *program.schedule) b.header += "\n" + std::string(program.schedule);
  b.header += "\n  replayed as a CUDA graph of 1 step, or of up to " +
              std::to_string(CudaProgramModel<float>::kMaxStepsPerGraph) +
              " back-to-back steps between loss reads; launches ordered by the buffers they "
              "read and write (<t> = f32 or f64, the run's dtype)";
  b.capsule_reports = std::move(capsule_reports);
  return b;
}

}  // namespace vouch::rt::cuda
