// loss.cuh: the mean squared error of a prediction against its target, forward.
//
// Why one block: the loss is one number per step; a single block of 256 threads with
// per-thread strided sums and the fixed tree (common.cuh) gives the same bits every
// run, with no atomics and no second pass. (Its gradient is a fused pointwise chain:
// sub, scale, mul.)
//
// Launch: grid 1, block 256 (the tree's width; partial[256]).
// Generated entry point:
//   extern "C" __global__ void k_f32(const float* pred, const float* target, float* out,
//       long long n) { vouch::mse_loss_kernel<float>(pred, target, out, n); }
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_LOSS_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_LOSS_CUH_

#include "common.cuh"

namespace vouch {

// out[0] = sum over i of (pred[i] - target[i])^2, divided by T(n). Thread t adds the
// squares of i = t, t + blockDim.x, ... (ascending), then the tree adds the partials.
template <class T>
__device__ void mse_loss_kernel(const T* pred, const T* target, T* out, long long n) {
  __shared__ T partial[256];
  T sum = T(0);
  for (long long i = threadIdx.x; i < n; i += blockDim.x) {
    const T d = pred[i] - target[i];
    sum += d * d;
  }
  block_sum_tree(partial, sum);
  if (threadIdx.x == 0) out[0] = partial[0] / T(n);
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_LOSS_CUH_
