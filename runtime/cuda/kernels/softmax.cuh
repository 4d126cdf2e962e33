// softmax.cuh: softmax / log_softmax along one axis, and their VJPs.
//
// Layout: the axis has extent n; outer is the product of the extents before it, inner
// of those after it. Row (o, i), numbered o * inner + i, is the n elements
// (o * n + k) * inner + i, k = 0..n-1: stride inner (1 for the last axis, the common
// case, where a warp reads contiguous memory).
//
// Why one block per row with fixed trees: softmax's statistics are gathered in one
// pass: each thread folds its elements k = t, t + blockDim.x, ... (ascending; eight
// loads in flight) into a running (max, sum of exp(x - max)) pair, rescaling the sum
// when the max grows (online softmax), and the block's pairs are combined by a fixed
// halving tree; a second pass writes the row. (The VJP's sum is common.cuh's tree.)
// So every run gives the same bits, with no atomics, and the input is read twice, not
// three times (rows of 50257 do not stay in L2). Rows grid-stride over the blocks.
// Accumulation is in T (f32 runs in f32, f64 runs in f64). classifier.cuh uses the
// same row statistics.
//
// A mask (masked_softmax) enters through softmax_rows' `keep` predicate on the element
// index: blocked elements are left out of the max and the sum and written as exact
// zeros, so a fully blocked row comes out all zeros (TorchLean's hard mask: no -inf or
// finite sentinel is added to x). softmax / log_softmax pass KeepAll; masked_softmax
// passes MaskKeep, which reads an int32 0 / 1 mask (an i1 value) broadcast to the input
// through a Dims (the input's extents, the mask's strides, 0 where it broadcasts). Its
// VJP is softmax_grad_kernel on its result (0 wherever the mask blocks).
//
// Launch: block 256 (the tree's width; partial[256]), grid max(1, min(rows, 4096)).
// Generated entry points:
//   extern "C" __global__ void k_f32(const float* in, float* out, long long outer,
//       long long n, long long inner) { vouch::softmax_kernel<float>(in, out, outer, n,
//       inner, false); }      // true: log_softmax
//   extern "C" __global__ void k_f32(const float* in, const int* mask, vouch::Dims mask_dims,
//       float* out, long long outer, long long n, long long inner) {
//     vouch::masked_softmax_kernel<float>(in, mask, mask_dims, out, outer, n, inner); }
//   extern "C" __global__ void k_f32(const float* grad, const float* output, float* out,
//       long long outer, long long n, long long inner) {
//     vouch::softmax_grad_kernel<float>(grad, output, out, outer, n, inner, false); }
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_SOFTMAX_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_SOFTMAX_CUH_

#include "common.cuh"
#include "reduce.cuh"  // positive_infinity

namespace vouch {

// The larger of a and b; NaN if either is (a NaN row comes out NaN, as in PyTorch).
template <class T>
struct NanMax {
  __device__ T operator()(T a, T b) const { return (a != a || b <= a) ? a : b; }
};

// Every element takes part (no mask).
struct KeepAll {
  __device__ bool operator()(long long) const { return true; }
};

// The offset of row `row`'s first element.
__device__ inline long long row_base(long long row, long long n, long long inner) {
  const long long o = index_div(row, inner);
  return o * n * inner + (row - o * inner);
}

// One element into a thread's running (max, sum of exp(x - max)), from (-inf, 0). A
// NaN never raises the max but makes the sum NaN, so a NaN element makes its row NaN.
// -inf adds exp(-inf) = 0, skipped: before any finite element exp(-inf - -inf) would
// be NaN (a row masked with -inf logits must not turn NaN).
template <class T>
__device__ inline void online_add(T x, T& max, T& sum) {
  if (x > max) {
    sum = sum * exp(max - x) + T(1);
    max = x;
  } else if (x != -positive_infinity<T>()) {
    sum += exp(x - max);
  }
}

// Two (max, sum) pairs as one; a side with nothing (sum 0) contributes 0.
template <class T>
__device__ inline void online_combine(T& max, T& sum, T other_max, T other_sum) {
  const T m = NanMax<T>()(max, other_max);
  const T a = sum == T(0) ? T(0) : sum * exp(max - m);
  const T b = other_sum == T(0) ? T(0) : other_sum * exp(other_max - m);
  max = m;
  sum = a + b;
}

// The max and sum of exp(x - max) over the kept elements base + k * inner of a row of
// n, for every thread of the block: per thread ascending k = t, t + blockDim.x, ...,
// then the fixed halving tree. `pm`, `ps` hold blockDim.x (= 256, a power of two
// >= 32) values each. No kept element: max -inf, sum 0.
template <class T, class Keep>
__device__ void row_online_stats(const T* in, long long base, long long n, long long inner,
                                 Keep keep, T* pm, T* ps, T& max, T& sum) {
  T m = -positive_infinity<T>(), s = T(0);
  const long long step = blockDim.x;
  long long k = threadIdx.x;
  for (; k + 7 * step < n; k += 8 * step) {
    T v[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = in[base + (k + j * step) * inner];
#pragma unroll
    for (int j = 0; j < 8; ++j)
      if (keep(base + (k + j * step) * inner)) online_add(v[j], m, s);
  }
  for (; k < n; k += step)
    if (keep(base + k * inner)) online_add(in[base + k * inner], m, s);
  // The halving tree (common.cuh's shape): levels h >= 32 in shared memory, the last
  // five in warp 0 by shuffles (lane i + h's pair into lane i's: the same order).
  pm[threadIdx.x] = m;
  ps[threadIdx.x] = s;
  __syncthreads();
  int h = blockDim.x / 2;
  for (; h >= 32; h >>= 1) {
    if (threadIdx.x < h) {
      T a = pm[threadIdx.x], b = ps[threadIdx.x];
      online_combine(a, b, pm[threadIdx.x + h], ps[threadIdx.x + h]);
      pm[threadIdx.x] = a;
      ps[threadIdx.x] = b;
    }
    __syncthreads();
  }
  if (threadIdx.x < 32) {  // blockDim.x >= 32 (launch: 256)
    T a = pm[threadIdx.x], b = ps[threadIdx.x];
    for (; h > 0; h >>= 1) {
      const T other_m = __shfl_down_sync(0xffffffffu, a, h);
      const T other_s = __shfl_down_sync(0xffffffffu, b, h);
      online_combine(a, b, other_m, other_s);
    }
    if (threadIdx.x == 0) {
      pm[0] = a;
      ps[0] = b;
    }
  }
  __syncthreads();
  max = pm[0];
  sum = ps[0];
  __syncthreads();  // pm, ps are rewritten by the next row
}

template <class T, class Keep>
__device__ void softmax_rows(const T* in, T* out, long long outer, long long n,
                             long long inner, bool take_log, Keep keep) {
  __shared__ T pm[256], ps[256];
  const long long rows = outer * inner;
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const long long base = row_base(row, n, inner);
    T m, sum;
    row_online_stats(in, base, n, inner, keep, pm, ps, m, sum);
    const T log_sum = log(sum);
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
      const long long at = base + k * inner;
      out[at] = !keep(at) ? T(0) : take_log ? in[at] - m - log_sum : exp(in[at] - m) / sum;
    }
  }
}

// out = softmax (take_log = false) or log_softmax of each row of in.
template <class T>
__device__ void softmax_kernel(const T* in, T* out, long long outer, long long n,
                               long long inner, bool take_log) {
  softmax_rows(in, out, outer, n, inner, take_log, KeepAll());
}

// Keeps element `at` of the input where the mask, broadcast by `dims`, is nonzero.
struct MaskKeep {
  const int* mask;
  const Dims& dims;
  __device__ bool operator()(long long at) const { return mask[dims_offset(at, dims)] != 0; }
};

// out = softmax of each row of in over the elements the mask keeps; 0 elsewhere.
template <class T>
__device__ void masked_softmax_kernel(const T* in, const int* mask, const Dims& mask_dims,
                                      T* out, long long outer, long long n, long long inner) {
  softmax_rows(in, out, outer, n, inner, false, MaskKeep{mask, mask_dims});
}

// The VJP from the forward result y = output, per row: softmax: out = y * (grad - s),
// s = sum of grad * y; log_softmax: out = grad - exp(y) * s, s = sum of grad.
template <class T>
__device__ void softmax_grad_kernel(const T* grad, const T* output, T* out, long long outer,
                                    long long n, long long inner, bool take_log) {
  __shared__ T partial[256];
  const long long rows = outer * inner;
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const long long base = row_base(row, n, inner);
    T s = T(0);
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
      const long long at = base + k * inner;
      s += take_log ? grad[at] : grad[at] * output[at];
    }
    block_sum_tree(partial, s);
    s = partial[0];
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
      const long long at = base + k * inner;
      out[at] = take_log ? grad[at] - exp(output[at]) * s : output[at] * (grad[at] - s);
    }
    __syncthreads();  // partial is rewritten by the next row
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_SOFTMAX_CUH_
