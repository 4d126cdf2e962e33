// softmax.cuh: softmax / log_softmax along one axis, and their VJPs.
//
// Layout: the axis has extent n; outer is the product of the extents before it, inner
// of those after it. Row (o, i), numbered o * inner + i, is the n elements
// (o * n + k) * inner + i, k = 0..n-1: stride inner (1 for the last axis, the common
// case, where a warp reads contiguous memory).
//
// Why one block per row with fixed trees: the row's max, then its sum of exp(x - max)
// (in the VJP: sum of grad * y, or of grad), are each a per-thread fold over
// k = t, t + blockDim.x, ... (ascending) followed by the fixed tree of common.cuh, so
// every run gives the same bits, with no atomics. Rows grid-stride over the blocks.
// Accumulation is in T (f32 runs in f32, f64 runs in f64).
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

template <class T, class Keep>
__device__ void softmax_rows(const T* in, T* out, long long outer, long long n,
                             long long inner, bool take_log, Keep keep) {
  __shared__ T partial[256];
  const long long rows = outer * inner;
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const long long base = row_base(row, n, inner);
    T m = -positive_infinity<T>();
    for (long long k = threadIdx.x; k < n; k += blockDim.x)
      if (keep(base + k * inner)) m = NanMax<T>()(m, in[base + k * inner]);
    block_tree(partial, m, NanMax<T>());
    m = partial[0];
    __syncthreads();  // partial is rewritten by the sum
    T sum = T(0);
    for (long long k = threadIdx.x; k < n; k += blockDim.x)
      if (keep(base + k * inner)) sum += exp(in[base + k * inner] - m);
    block_sum_tree(partial, sum);
    sum = partial[0];
    const T log_sum = log(sum);
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
      const long long at = base + k * inner;
      out[at] = !keep(at) ? T(0) : take_log ? in[at] - m - log_sum : exp(in[at] - m) / sum;
    }
    __syncthreads();  // partial is rewritten by the next row
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
