// layernorm.cuh: layer normalisation over the last axis (torch.nn.functional.layer_norm
// with normalized_shape [d]), forward and backward: one kernel each.
//
// Layout: `rows` contiguous rows of d elements; weight and bias are [d] or null.
//
// Why one block per row with fixed trees: the row's mean, then its biased variance
// (squared deviations from that mean: two passes, no E[x²] - E[x]² cancellation), each
// a per-thread fold over k = t, t + blockDim.x, ... (ascending) followed by the fixed
// tree of common.cuh: every run gives the same bits, with no atomics. The backward
// recomputes the statistics instead of saving them, one warp per row (folds over
// k = lane, lane + 32, ..., then a fixed butterfly of shuffles: the same bits every
// run, though not the forward's block-tree bits; both are within rounding of the exact
// mean and rstd). Accumulation is in T (f32 runs in f32, f64 runs in f64).
//
// The backward computes dx, dweight = Σ_rows grad · x̂ and dbias = Σ_rows grad in one
// launch (llm.c's layernorm_backward, made deterministic): each block takes chunks of
// kLayerNormGradChunk rows (chunk c, c + gridDim.x, ...), writes their dx (a warp per
// row, eight rows at a time), then thread t folds columns t, t + blockDim.x, ... of the chunk (rows ascending) into
// the block's partial sums, partials[block][0..d) (dweight) and [d..2d) (dbias), kept
// in global scratch (the partials of d columns need not fit in shared memory; each
// address has one owning thread). The last block to arrive (a __threadfence, then a
// ticket from the arrival counter) adds the blocks' partials in block order 0, 1, ...
// for every column: a fixed order for a given grid, so the result is bitwise the same
// on every launch, with no float atomics. That block then sets the counter back to 0:
// the per-step CUDA graph replays the launch, and the executor gives the counter a
// zeroed buffer (BufferDesc::zero_init) for the first one.
//
// Launch: block 256 (the tree's width; partial[256]). Forward: grid max(1, min(rows,
// 4096)), rows grid-stride over the blocks. Backward: grid
// layer_norm_grad_grid(rows) (below); partials holds grid * 2 * d elements, arrivals
// one unsigned; both may be null when dweight and dbias are.
// Generated entry points (weight / bias / dweight / dbias parameters only where the op
// has them; the others pass nullptr):
//   extern "C" __global__ void k_f32(const float* x, const float* weight,
//       const float* bias, float* y, long long rows, long long d, double eps) {
//     vouch::layer_norm_kernel<float>(x, weight, bias, y, rows, d, eps); }
//   extern "C" __global__ void k_f32(const float* grad, const float* x,
//       const float* weight, float* dx, float* dweight, float* dbias, long long rows,
//       long long d, double eps, float* partials, unsigned* arrivals) {
//     vouch::layer_norm_grad_kernel<float>(grad, x, weight, dx, dweight, dbias, rows,
//                                          d, eps, partials, arrivals); }
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

// The sum of v over the 32 lanes of a warp, in every lane: a butterfly of xor
// shuffles (a fixed pairing, the same bits every run).
template <class T>
__device__ inline T warp_sum(T v) {
  for (int h = 16; h > 0; h >>= 1) v += __shfl_xor_sync(0xffffffffu, v, h);
  return v;
}

// Rows per chunk of the backward (each block's unit of work) and its grid: one block
// per chunk, at most kLayerNormGradMaxBlocks (the last block reads every block's
// partials, so their number is bounded). codegen/recipes/NormalizationRecipe.cpp
// launches with this rule and sizes the partials from it.
constexpr long long kLayerNormGradChunk = 32;
constexpr long long kLayerNormGradMaxBlocks = 512;
__host__ __device__ inline long long layer_norm_grad_grid(long long rows) {
  const long long chunks = (rows + kLayerNormGradChunk - 1) / kLayerNormGradChunk;
  return chunks < 1 ? 1 : chunks > kLayerNormGradMaxBlocks ? kLayerNormGradMaxBlocks : chunks;
}

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) per row, xhat = (x - mean) * rstd,
// g = grad * weight (grad when weight is null); dweight = Σ_rows grad * xhat and
// dbias = Σ_rows grad where they are not null (see the top of the file for the order).
template <class T>
__device__ void layer_norm_grad_kernel(const T* grad, const T* x, const T* weight, T* dx,
                                       T* dweight, T* dbias, long long rows, long long d,
                                       double eps, T* partials, unsigned* arrivals) {
  __shared__ T stats[2 * kLayerNormGradChunk];  // mean, rstd of each row of the chunk
  const bool params = dweight != nullptr || dbias != nullptr;
  T* mine = params ? partials + (long long)blockIdx.x * 2 * d : nullptr;
  bool first = true;
  for (long long c0 = (long long)blockIdx.x * kLayerNormGradChunk; c0 < rows;
       c0 += (long long)gridDim.x * kLayerNormGradChunk) {
    const long long n = rows - c0 < kLayerNormGradChunk ? rows - c0 : kLayerNormGradChunk;
    // dx: warp w takes rows w, w + 8, ... of the chunk (eight rows at a time, no block
    // barrier per row); its lanes fold k = lane, lane + 32, ... and warp_sum adds them.
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    for (long long i = warp; i < n; i += warps) {
      const long long r = c0 + i;
      const T* xr = x + r * d;
      const T* gr = grad + r * d;
      T sum = T(0);
      for (long long k = lane; k < d; k += 32) sum += xr[k];
      const T mean = warp_sum(sum) / T(d);
      T sq = T(0);
      for (long long k = lane; k < d; k += 32) sq += (xr[k] - mean) * (xr[k] - mean);
      const T rstd = T(1) / sqrt(warp_sum(sq) / T(d) + T(eps));
      T sum_g = T(0), sum_gx = T(0);
      for (long long k = lane; k < d; k += 32) {
        const T g = weight ? gr[k] * weight[k] : gr[k];
        sum_g += g;
        sum_gx += g * (xr[k] - mean) * rstd;
      }
      const T mean_g = warp_sum(sum_g) / T(d);
      const T mean_gx = warp_sum(sum_gx) / T(d);
      for (long long k = lane; k < d; k += 32) {
        const T g = weight ? gr[k] * weight[k] : gr[k];
        const T xhat = (xr[k] - mean) * rstd;
        dx[r * d + k] = rstd * (g - mean_g - xhat * mean_gx);
      }
      if (lane == 0) {
        stats[2 * i] = mean;
        stats[2 * i + 1] = rstd;
      }
    }
    if (!params) continue;
    __syncthreads();  // the chunk's stats are visible
    for (long long k = threadIdx.x; k < d; k += blockDim.x) {
      T sw = T(0), sb = T(0);
      for (long long i = 0; i < n; i++) {
        const long long at = (c0 + i) * d + k;
        sw += grad[at] * ((x[at] - stats[2 * i]) * stats[2 * i + 1]);
        sb += grad[at];
      }
      mine[k] = first ? sw : mine[k] + sw;
      mine[d + k] = first ? sb : mine[d + k] + sb;
    }
    __syncthreads();  // stats are rewritten by the next chunk
    first = false;
  }
  if (!params) return;
  if (first)  // no chunk for this block (not with layer_norm_grad_grid's launch)
    for (long long k = threadIdx.x; k < 2 * d; k += blockDim.x) mine[k] = T(0);
  // The block that arrives last sees every block's partials.
  if (!arrived_last(arrivals)) return;
  // Loads through L2 (__ldcg): the other blocks' partials never sat in this SM's L1.
  for (long long k = threadIdx.x; k < d; k += blockDim.x) {
    T sw = T(0), sb = T(0);
#pragma unroll 8
    for (unsigned b = 0; b < gridDim.x; b++) {  // loads issued ahead, adds in order
      sw += __ldcg(partials + (long long)b * 2 * d + k);
      sb += __ldcg(partials + (long long)b * 2 * d + d + k);
    }
    if (dweight) dweight[k] = sw;
    if (dbias) dbias[k] = sb;
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_LAYERNORM_CUH_
