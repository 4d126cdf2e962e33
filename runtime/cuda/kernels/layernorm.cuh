// layernorm.cuh: layer normalisation over the last axis (torch.nn.functional.layer_norm
// with normalized_shape [d]), forward and input gradient: one kernel each.
//
// Layout: `rows` contiguous rows of d elements; weight and bias are [d] or null.
//
// Why one block per row with fixed trees: the row's mean, then its biased variance
// (squared deviations from that mean: two passes, no E[x²] - E[x]² cancellation), each
// a per-thread fold over k = t, t + blockDim.x, ... (ascending) followed by the fixed
// tree of common.cuh: every run gives the same bits, with no atomics. The backward
// kernel recomputes the statistics with the same code (row_stats), so it sees the
// forward's exact mean and rstd without saving them; the weight and bias gradients are
// separate fixed-order column sums (reduce.cuh) built by the VJP rule
// (ir/VouchOps.cpp). Accumulation is in T (f32 runs in f32, f64 runs in f64).
//
// Launch: block 256 (the tree's width; partial[256]), grid max(1, min(rows, 4096));
// rows grid-stride over the blocks.
// Generated entry points (weight / bias parameters only where the op has them; the
// others pass nullptr):
//   extern "C" __global__ void k_f32(const float* x, const float* weight,
//       const float* bias, float* y, long long rows, long long d, double eps) {
//     vouch::layer_norm_kernel<float>(x, weight, bias, y, rows, d, eps); }
//   extern "C" __global__ void k_f32(const float* grad, const float* x,
//       const float* weight, float* dx, long long rows, long long d, double eps) {
//     vouch::layer_norm_grad_kernel<float>(grad, x, weight, dx, rows, d, eps); }
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_LAYERNORM_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_LAYERNORM_CUH_

#include "common.cuh"

namespace vouch {

// mean and rstd = 1 / sqrt(var + eps) of the row x[0..d), for every thread of the block.
// Leaves `partial` free for reuse (ends with a barrier).
template <class T>
__device__ inline void row_stats(const T* x, long long d, T eps, T* partial, T& mean,
                                 T& rstd) {
  T sum = T(0);
  for (long long k = threadIdx.x; k < d; k += blockDim.x) sum += x[k];
  block_sum_tree(partial, sum);
  mean = partial[0] / T(d);
  __syncthreads();  // partial is rewritten by the variance
  T sq = T(0);
  for (long long k = threadIdx.x; k < d; k += blockDim.x) sq += (x[k] - mean) * (x[k] - mean);
  block_sum_tree(partial, sq);
  rstd = T(1) / sqrt(partial[0] / T(d) + eps);
  __syncthreads();
}

// y = (x - mean) * rstd * weight + bias per row (weight 1, bias 0 when null).
template <class T>
__device__ void layer_norm_kernel(const T* x, const T* weight, const T* bias, T* y,
                                  long long rows, long long d, double eps) {
  __shared__ T partial[256];
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * d;
    T mean, rstd;
    row_stats(xr, d, T(eps), partial, mean, rstd);
    for (long long k = threadIdx.x; k < d; k += blockDim.x) {
      T v = (xr[k] - mean) * rstd;
      if (weight) v *= weight[k];
      if (bias) v += bias[k];
      y[r * d + k] = v;
    }
  }
}

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) per row, xhat = (x - mean) * rstd,
// g = grad * weight (grad when weight is null).
template <class T>
__device__ void layer_norm_grad_kernel(const T* grad, const T* x, const T* weight, T* dx,
                                       long long rows, long long d, double eps) {
  __shared__ T partial[256];
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * d;
    const T* gr = grad + r * d;
    T mean, rstd;
    row_stats(xr, d, T(eps), partial, mean, rstd);
    T sum_g = T(0), sum_gx = T(0);
    for (long long k = threadIdx.x; k < d; k += blockDim.x) {
      const T g = weight ? gr[k] * weight[k] : gr[k];
      sum_g += g;
      sum_gx += g * (xr[k] - mean) * rstd;
    }
    block_sum_tree(partial, sum_g);
    const T mean_g = partial[0] / T(d);
    __syncthreads();  // partial is rewritten by the second sum
    block_sum_tree(partial, sum_gx);
    const T mean_gx = partial[0] / T(d);
    __syncthreads();  // partial is rewritten by the next row
    for (long long k = threadIdx.x; k < d; k += blockDim.x) {
      const T g = weight ? gr[k] * weight[k] : gr[k];
      const T xhat = (xr[k] - mean) * rstd;
      dx[r * d + k] = rstd * (g - mean_g - xhat * mean_gx);
    }
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_LAYERNORM_CUH_
