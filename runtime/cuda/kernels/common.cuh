// common.cuh: what every kernel of the library shares: the index map walk, the
// grid-stride loop bounds, and the fixed-order shared-memory tree.
//
// Why here: the index map (a flat position decomposed over a row-major shape, then
// re-weighted with other strides) is used by reductions, broadcasts and permutes; the
// tree is used by every reduction. One definition keeps their numeric order identical
// wherever they appear.
//
// Compiled by NVRTC (codegen gives it the headers by name) and by nvcc (tests, the
// kernel lab), so it includes nothing from the standard library.
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_COMMON_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_COMMON_CUH_

#include "dims.h"

namespace vouch {

// The most axes a Dims carries (rt::kMaxDims; dims.h's arrays).
constexpr int kDimsCapacity = 8;

// 16 bytes of T (4 floats, 2 doubles): one 128-bit load or store (ld.global.v4.f32 /
// v2.f64), a quarter (or half) of the instructions of scalar accesses.
template <class T>
struct alignas(16) Vec16 {
  static constexpr int kWidth = 16 / sizeof(T);
  T v[kWidth];
};

// One rounded product, sum or difference that NVRTC's -fmad=true never contracts into
// an FMA with a neighbouring operation (gelu.cuh's formulas; layer_norm_grad's addend).
__device__ inline float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ inline float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ inline double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ inline float sub_rn(float a, float b) { return __fsub_rn(a, b); }
__device__ inline double sub_rn(double a, double b) { return __dsub_rn(a, b); }

// An f32's bf16 (its upper 16 bits after rounding to nearest, ties to even): what
// cvt.rn.bf16.f32 gives, written out (runtime/cuda/test_util.h's host_bf16 and
// runtime/cpu_kernels.h's round_bf16 round alike). Infinities stay infinite, finite
// values past bf16's largest become infinite, NaN stays NaN (quietened). The one
// definition keeps the executor's operand copies (executor.cuh) and vouch.round_bf16
// (pointwise.cuh's bf16 stores) bitwise alike.
__device__ inline unsigned short round_to_bf16(float x) {
  const unsigned u = __float_as_uint(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);  // NaN
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// N int32 values loaded or stored as one access (an int mask beside a Vec16 of T).
template <int N>
struct alignas(4 * N) IntVec {
  int v[N];
};

// Whether p is 16-byte aligned.
__device__ inline bool aligned16(const void* p) {
  return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

// The dynamic shared memory this launch was given, in bytes (0 when none): a kernel
// whose fast path needs it checks it, so a launch without it takes the other path.
__device__ inline unsigned dynamic_shared_bytes() {
  unsigned bytes;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  return bytes;
}

// The launch's dynamic shared memory, as T (16-byte aligned).
template <class T>
__device__ inline T* dynamic_shared() {
  extern __shared__ __align__(16) unsigned char vouch_dynamic_shared[];
  return reinterpret_cast<T*>(vouch_dynamic_shared);
}

// An asynchronous 16-byte copy from global to shared memory (cp.async, sm_80 and
// later: no register holds the data, so a thread can have dozens in flight); the
// copies a thread issued are complete after cp_async_wait_all. Before sm_80: a plain
// load and store.
__device__ inline void cp_async16(void* shared, const void* global) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(global) : "memory");
#else
  *static_cast<Vec16<float>*>(shared) = *static_cast<const Vec16<float>*>(global);
#endif
}
__device__ inline void cp_async_wait_all() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

// The offset of row-major position `flat` of the shape d.extent[0..rank) under the
// strides d.stride: flat is decomposed from the last (fastest) axis to the first, and
// each coordinate contributes coord * stride. rank 0 gives 0 (a single element).
//
// The loop is unrolled over the 8 slots with a rank guard, so every d.extent[k] /
// d.stride[k] is a constant index (read from the kernel's parameter space, no local
// copy of the struct). Division: 32-bit when both operands fit (the gate keeps
// indices within the UInt32 ABI, and a 64-bit division is a long software sequence);
// the result is the same integer either way.
__device__ inline long long dims_offset(long long flat, const Dims& d) {
  unsigned long long rest = static_cast<unsigned long long>(flat);
  long long offset = 0;
#pragma unroll
  for (int k = kDimsCapacity - 1; k >= 0; --k) {
    if (k < d.rank) {
      const unsigned long long e = static_cast<unsigned long long>(d.extent[k]);
      unsigned long long q;
      if (((rest | e) >> 32) == 0)
        q = static_cast<unsigned>(rest) / static_cast<unsigned>(e);
      else
        q = rest / e;
      offset += static_cast<long long>(rest - q * e) * d.stride[k];
      rest = q;
    }
  }
  return offset;
}

// The stride of d's last axis (0 for rank 0), read with constant indices as
// dims_offset reads them (no local copy of the struct).
__device__ inline long long dims_last_stride(const Dims& d) {
  long long stride = 0;
#pragma unroll
  for (int k = 0; k < kDimsCapacity; ++k)
    if (k == d.rank - 1) stride = d.stride[k];
  return stride;
}

// a / b for non-negative a and positive b: one 32-bit division when both fit (the gate
// keeps indices within the UInt32 ABI; a 64-bit division is a long software sequence
// on the GPU), else the 64-bit one. The quotient is the same integer either way.
__device__ inline long long index_div(long long a, long long b) {
  const unsigned long long ua = static_cast<unsigned long long>(a),
                           ub = static_cast<unsigned long long>(b);
  if (((ua | ub) >> 32) == 0)
    return static_cast<long long>(static_cast<unsigned>(ua) / static_cast<unsigned>(ub));
  return static_cast<long long>(ua / ub);
}

// Grid-stride loops: the first index of this thread, and the step between its indices.
// Any grid covers any n; the grid only chooses the parallelism.
__device__ inline long long grid_stride_begin() {
  return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline long long grid_stride_step() {
  return static_cast<long long>(gridDim.x) * blockDim.x;
}

// The fixed-order tree of a block's partial sums: partial[threadIdx.x] = value, then
// halving steps (partial[i] += partial[i + s] for s = blockDim.x / 2, ..., 1). The
// levels s >= 32 go through shared memory with a barrier after each; the last five
// (s = 16, ..., 1, all inside warp 0) by __shfl_down_sync, which gives lane i the value
// of lane i + s: the same additions, in the same order, so the same bits, with five
// barriers fewer. blockDim.x must be a power of two no larger than the array.
// The total is partial[0] once this returns (for every thread: it ends with a
// barrier); a caller that reuses `partial` afterwards needs another barrier first.
// The order depends only on blockDim.x: no atomics, so results are bitwise repeatable.
template <class T, class Combine>
__device__ inline void block_tree(T* partial, T value, Combine combine) {
  partial[threadIdx.x] = value;
  __syncthreads();
  int s = blockDim.x / 2;
  for (; s >= 32; s >>= 1) {
    if (threadIdx.x < s)
      partial[threadIdx.x] = combine(partial[threadIdx.x], partial[threadIdx.x + s]);
    __syncthreads();
  }
  if (blockDim.x >= 32) {
    if (threadIdx.x < 32) {
      T v = partial[threadIdx.x];
      for (; s > 0; s >>= 1) v = combine(v, __shfl_down_sync(0xffffffffu, v, s));
      if (threadIdx.x == 0) partial[0] = v;
    }
    __syncthreads();
    return;
  }
  for (; s > 0; s >>= 1) {  // a block narrower than a warp
    if (threadIdx.x < s)
      partial[threadIdx.x] = combine(partial[threadIdx.x], partial[threadIdx.x + s]);
    __syncthreads();
  }
}

struct SumCombine {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};

// The tree of sums (block_tree with +).
template <class T>
__device__ inline void block_sum_tree(T* partial, T value) {
  block_tree(partial, value, SumCombine());
}

// The one-launch cross-block sum (cross_entropy, mse_loss, layer_norm's backward):
// every block publishes its partials, then takes a ticket; the block that takes the
// last one sees every block's partials and adds them in a fixed order. True in that
// block only. The ticket (an integer atomic: it picks which block finishes, never an
// order) is set back to 0 at once, since every block has taken its own: the next
// launch (a graph replay) starts from 0. Callers read the partials past L1 (volatile
// or __ldcg): other blocks wrote them.
// arrived_last(ticket, count): the same among `count` blocks that share the ticket.
__device__ inline bool arrived_last(unsigned* ticket, unsigned count) {
  __shared__ bool last;
  __threadfence();  // this thread's partials are visible before its block's ticket
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) {  // one thread of a 1-D or 2-D block
    last = atomicAdd(ticket, 1u) == count - 1;
    if (last) *ticket = 0u;
  }
  __syncthreads();
  if (last) __threadfence();
  return last;
}
__device__ inline bool arrived_last(unsigned* ticket) { return arrived_last(ticket, gridDim.x); }

// Four elements copied as one: 16-byte aligned, one vector access in f32 (two in f64).
// The copy kernels' quad twins (index.cuh, slice.cuh, concat.cuh) move these where a
// layout is whole quads from offsets that are multiples of four; buffers start on
// 16-byte boundaries (cudaMalloc, the data fields' block), so each quad is aligned.
template <class T>
struct alignas(16) Quad {
  T v[4];
};

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_COMMON_CUH_
