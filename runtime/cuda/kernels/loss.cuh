// loss.cuh: the mean squared error of a prediction against its target, forward.
//
// One launch of min(ceil(n / 2048), 1024) blocks (mse_loss_grid): block b's thread t
// adds the squares of i = b·256 + t, then every G·256 after it (ascending); the
// block's fixed tree (common.cuh) gives its partial, parked as a double in a
// per-block slot; the last block to take a ticket (an integer atomic: it only picks
// which block finishes) adds the slots, thread t taking slots t, t + 256, ... in
// order, in the fixed tree, and divides by n. The same bits every run, no float
// atomics, no second launch; with one block the order is the single-block kernel's.
// (Its gradient is a fused pointwise chain: sub, scale, mul.)
//
// Launch: grid mse_loss_grid(n) (below), block 256 (the tree's width; partial[256]).
// Generated entry point:
//   extern "C" __global__ void k_f32(const float* pred, const float* target, float* out,
//       long long n) { vouch::mse_loss_kernel<float>(pred, target, out, n); }
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_LOSS_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_LOSS_CUH_

#include "common.cuh"

namespace vouch {

// The per-block partial sums and the ticket. Module globals: NVRTC and nvcc zero them
// at load; arrived_last (common.cuh) resets the ticket for the next launch.
constexpr unsigned kMseLossMaxBlocks = 1024;

// The launch's grid: a block per 2,048 elements (8 per thread), at most
// kMseLossMaxBlocks, at least one. codegen/recipes/LossRecipe.cpp launches with the
// same rule (mseLossGrid); the kernel lab and tools/bench/kernels call this one.
__host__ __device__ inline long long mse_loss_grid(long long n) {
  const long long g = (n + 2047) / 2048;
  return g < 1 ? 1 : g > kMseLossMaxBlocks ? kMseLossMaxBlocks : g;
}
__device__ double mse_loss_block_sum[kMseLossMaxBlocks];
__device__ unsigned mse_loss_ticket;

// out[0] = sum over i of (pred[i] - target[i])^2, divided by T(n).
template <class T>
__device__ void mse_loss_kernel(const T* pred, const T* target, T* out, long long n) {
  __shared__ T partial[256];
  const unsigned blocks = gridDim.x < kMseLossMaxBlocks ? gridDim.x : kMseLossMaxBlocks;
  if (blockIdx.x < blocks) {
    T sum = T(0);
    const long long stride = (long long)blocks * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {  // four pairs in flight, added in order
      T d[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) d[k] = pred[i + k * stride] - target[i + k * stride];
#pragma unroll
      for (int k = 0; k < 4; ++k) sum += d[k] * d[k];
    }
    for (; i < n; i += stride) {
      const T d = pred[i] - target[i];
      sum += d * d;
    }
    block_sum_tree(partial, sum);
    if (threadIdx.x == 0) mse_loss_block_sum[blockIdx.x] = double(partial[0]);
  }
  if (!arrived_last(&mse_loss_ticket)) return;
  const volatile double* slots = mse_loss_block_sum;  // past this SM's L1
  T s = T(0);
  for (unsigned b = threadIdx.x; b < blocks; b += blockDim.x) s += T(slots[b]);
  block_sum_tree(partial, s);
  if (threadIdx.x == 0) out[0] = partial[0] / T(n);
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_LOSS_CUH_
