// layernorm.cuh: layer normalisation over the last axis (torch.nn.functional.layer_norm
// with normalized_shape [d]), forward and backward: one kernel each.
//
// Layout: `rows` contiguous rows of d elements; weight and bias are [d] or null.
//
// Statistics: the row's mean, then its biased variance (squared deviations from that
// mean: two passes, no E[x²] - E[x]² cancellation), each a fold per thread and a fixed
// combination: every run gives the same bits, with no atomics. Rows of up to 4096
// (a model's 768 or 3072) are held in registers by a warp (up to 1024) or the block
// (rows.cuh: read once, written once, 16-byte vectors where the length and pointers
// allow; codegen instantiates each kernel for its rows' G and P, template arguments,
// P = 0 for the general path only). Longer rows: the forward one block per row (folds
// over k = t, t + blockDim.x, ..., then common.cuh's tree), the backward a warp per
// row (folds over k = lane, lane + 32, ..., then a butterfly of shuffles). The paths
// differ in order, each within rounding of the exact mean and rstd. The backward
// recomputes the statistics instead of saving them. Accumulation is in T (f32 runs in
// f32, f64 runs in f64).
//
// The backward computes dx, dweight = Σ_rows grad · x̂ and dbias = Σ_rows grad in one
// launch (llm.c's layernorm_backward, made deterministic): each block takes chunks of
// kLayerNormGradChunk rows (chunk c, c + gridDim.x, ...) and writes their dx. Its
// column sums: on the register path each group keeps its columns' sums in registers
// (rows ascending) and a block's warps are added in warp order; on the general path
// thread t folds columns t, t + blockDim.x, ... of each chunk (rows ascending). Either
// way the block's partial sums, partials[block][0..d) (dweight) and [d..2d) (dbias),
// go to global scratch. Then two levels of last-to-arrive sums (layer_norm_grad_finish:
// a __threadfence, then a ticket): the last block of each group of 16 adds the group's
// partials in block order, the last of those adds the groups' sums in group order. A
// fixed order for a given grid, so the result is bitwise the same on every launch, with
// no float atomics; the two levels keep the last block's serial work short. The last
// blocks set their counters back to 0: the per-step CUDA graph replays the launch, and
// the executor gives the counters a zeroed buffer (BufferDesc::zero_init) for the
// first one.
//
// Launch: block 256 (the tree's width; partial[256]). Forward: grid max(1, min(rows,
// 4096)), rows grid-stride over the blocks. Backward: grid
// layer_norm_grad_grid(rows) (below); partials holds (grid + groups) * 2 * d elements
// and arrivals groups + 1 unsigned, groups = layer_norm_grad_groups(grid); both may be
// null when dweight and dbias are.
// Generated entry points (weight / bias / dweight / dbias parameters only where the op
// has them; the others pass nullptr):
//   extern "C" __global__ void k_f32(const float* x, const float* weight,
//       const float* bias, float* y, long long rows, long long d, double eps) {
//     vouch::layer_norm_kernel<float, G, P>(x, weight, bias, y, rows, d, eps); }
//   extern "C" __global__ void k_f32(const float* grad, const float* x,
//       const float* weight, float* dx, float* dweight, float* dbias, long long rows,
//       long long d, double eps, float* partials, unsigned* arrivals) {
//     vouch::layer_norm_grad_kernel<float, G, P>(grad, x, weight, dx, dweight, dbias, rows,
//                                          d, eps, partials, arrivals); }
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_LAYERNORM_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_LAYERNORM_CUH_

#include "common.cuh"
#include "rows.cuh"

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

// Whether every pointer given is 16-byte aligned (null ones are not used).
__device__ inline bool all_aligned16(const void* a, const void* b, const void* c,
                                     const void* e) {
  return aligned16(a) && aligned16(b) && aligned16(c) && aligned16(e);
}

// A row's mean and rstd from its slots (zeros outside the row): the sum, then the
// squared deviations of the slots inside the row, each a fold in slot order and the
// group's fixed combination.
template <class T, int G, int P>
__device__ inline void row_stats_in_registers(const RowSlots<T, G, P>& x, unsigned inside,
                                              long long d, T eps, T* scratch, T& mean,
                                              T& rstd) {
  using Group = RowGroup<G>;
  T sum = T(0);
#pragma unroll
  for (int s = 0; s < P; ++s) sum += x.v[s];
  mean = Group::sum(sum, scratch) / T(d);
  T sq = T(0);
#pragma unroll
  for (int s = 0; s < P; ++s)
    if (inside >> s & 1u) sq += (x.v[s] - mean) * (x.v[s] - mean);
  rstd = T(1) / sqrt(Group::sum(sq, scratch) / T(d) + eps);
}

// layer_norm_kernel's rows of d <= G * P in registers (x read once, y written once).
template <class T, int G, int P>
__device__ void layer_norm_rows_in_registers(const T* x, const T* weight, const T* bias, T* y,
                                             long long rows, long long d, T eps) {
  __shared__ T scratch[8];
  using Group = RowGroup<G>;
  const int t = Group::rank();
  const bool vec = d % RowSlots<T, G, P>::W == 0 && all_aligned16(x, y, weight, bias);
  const unsigned inside = in_row_bits<T, G, P>(d, t, vec);
  for (long long r = Group::first(); r < rows; r += Group::step()) {
    RowSlots<T, G, P> v;
    v.load(x + r * d, d, t, vec, T(0));
    T mean, rstd;
    row_stats_in_registers(v, inside, d, eps, scratch, mean, rstd);
#pragma unroll
    for (int s = 0; s < P; ++s) v.v[s] = (v.v[s] - mean) * rstd;
    if (weight) {  // weight and bias per row, from cache: fewer registers, more rows
      RowSlots<T, G, P> w;
      w.load(weight, d, t, vec, T(1));
#pragma unroll
      for (int s = 0; s < P; ++s) v.v[s] *= w.v[s];
    }
    if (bias) {
      RowSlots<T, G, P> b;
      b.load(bias, d, t, vec, T(0));
#pragma unroll
      for (int s = 0; s < P; ++s) v.v[s] += b.v[s];
    }
    v.store(y + r * d, d, t, vec);
  }
}

// y = (x - mean) * rstd * weight + bias per row (weight 1, bias 0 when null).
// G, P: the register path's groups (rows.cuh, row_fits); P = 0: the general path only.
template <class T, int G = 0, int P = 0>
__device__ void layer_norm_kernel(const T* x, const T* weight, const T* bias, T* y,
                                  long long rows, long long d, double eps) {
  if constexpr (P > 0) {
    if (row_fits<G, P>(d, 1))
      return layer_norm_rows_in_registers<T, G, P>(x, weight, bias, y, rows, d, T(eps));
  }
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

// Rows per chunk of the backward (each block's unit of work) and its grid: one block
// per chunk, at most kLayerNormGradMaxBlocks. The blocks' column partials are added
// in two levels: groups of kLayerNormGradGroup consecutive blocks, then the groups.
// codegen/recipes/NormalizationRecipe.cpp launches with this rule and sizes the
// scratch from it: partials (grid + groups) * 2 * d elements, arrivals groups + 1.
constexpr long long kLayerNormGradChunk = 32;
constexpr long long kLayerNormGradMaxBlocks = 512;
constexpr long long kLayerNormGradGroup = 16;
__host__ __device__ inline long long layer_norm_grad_grid(long long rows) {
  const long long chunks = (rows + kLayerNormGradChunk - 1) / kLayerNormGradChunk;
  return chunks < 1 ? 1 : chunks > kLayerNormGradMaxBlocks ? kLayerNormGradMaxBlocks : chunks;
}
__host__ __device__ inline long long layer_norm_grad_groups(long long grid) {
  return (grid + kLayerNormGradGroup - 1) / kLayerNormGradGroup;
}

// After every block has put its partial column sums in partials[block][0..2d): the
// last block of each group to arrive adds the group's partials in block order into
// partials[grid + group]; the last of those to arrive adds the groups' sums in group
// order into dweight (columns 0..d) and dbias (d..2d). A fixed order for a given
// grid, the same bits every launch; the tickets are reset by arrived_last.
template <class T>
__device__ void layer_norm_grad_finish(T* partials, unsigned* arrivals, long long d,
                                       T* dweight, T* dbias) {
  const long long grid = gridDim.x, groups = layer_norm_grad_groups(grid);
  const long long group = blockIdx.x / kLayerNormGradGroup;
  const long long first = group * kLayerNormGradGroup;
  const long long members =
      grid - first < kLayerNormGradGroup ? grid - first : kLayerNormGradGroup;
  if (!arrived_last(arrivals + group, unsigned(members))) return;
  // Loads through L2 (__ldcg): other blocks' partials never sat in this SM's L1.
  T* group_sum = partials + (grid + group) * 2 * d;
  for (long long k = threadIdx.x; k < 2 * d; k += blockDim.x) {
    T sum = T(0);
#pragma unroll 8
    for (long long b = 0; b < members; ++b)  // loads issued ahead, adds in order
      sum += __ldcg(partials + (first + b) * 2 * d + k);
    group_sum[k] = sum;
  }
  if (!arrived_last(arrivals + groups, unsigned(groups))) return;
  for (long long k = threadIdx.x; k < 2 * d; k += blockDim.x) {
    T sum = T(0);
#pragma unroll 8
    for (long long g = 0; g < groups; ++g) sum += __ldcg(partials + (grid + g) * 2 * d + k);
    if (k < d) {
      if (dweight) dweight[k] = sum;
    } else if (dbias) {
      dbias[k - d] = sum;
    }
  }
}

// layer_norm_grad_kernel's rows of d <= G * P in registers (grad and x read once, dx
// written once): each group takes the rows of the block's chunks (a warp: rows w,
// w + 8, ... of each chunk; the block: every row in turn) and keeps its columns'
// Σ grad · x̂ and Σ grad in registers, rows ascending; a block's warps are then added
// in warp order (through shared memory) into the block's partial sums.
template <class T, int G, int P>
__device__ void layer_norm_grad_rows_in_registers(const T* grad, const T* x, const T* weight,
                                                  T* dx, T* dweight, T* dbias, long long rows,
                                                  long long d, T eps, T* partials,
                                                  unsigned* arrivals) {
  __shared__ T scratch[8];
  using Group = RowGroup<G>;
  using Slots = RowSlots<T, G, P>;
  const int t = Group::rank();
  const bool vec = d % Slots::W == 0 && all_aligned16(grad, x, dx, weight);
  const unsigned inside = in_row_bits<T, G, P>(d, t, vec);
  const bool params = dweight != nullptr || dbias != nullptr;
  Slots sum_w, sum_b;  // this group's Σ grad · x̂ and Σ grad
#pragma unroll
  for (int s = 0; s < P; ++s) sum_w.v[s] = sum_b.v[s] = T(0);
  const int group_in_block = G == 32 ? int(threadIdx.x >> 5) : 0;
  for (long long c0 = (long long)blockIdx.x * kLayerNormGradChunk; c0 < rows;
       c0 += (long long)gridDim.x * kLayerNormGradChunk) {
    const long long n = rows - c0 < kLayerNormGradChunk ? rows - c0 : kLayerNormGradChunk;
    for (long long i = group_in_block; i < n; i += Group::kGroupsPerBlock) {
      const long long r = c0 + i;
      Slots xs, gs;
      xs.load(x + r * d, d, t, vec, T(0));
      gs.load(grad + r * d, d, t, vec, T(0));
      T mean, rstd;
      row_stats_in_registers(xs, inside, d, eps, scratch, mean, rstd);
      Slots w;  // weight per row, from cache: fewer registers, more rows in flight
      if (weight) {
        w.load(weight, d, t, vec, T(1));
      } else {
#pragma unroll
        for (int s = 0; s < P; ++s) w.v[s] = T(1);
      }
      T sum_g = T(0), sum_gx = T(0);
#pragma unroll
      for (int s = 0; s < P; ++s) {
        xs.v[s] = (xs.v[s] - mean) * rstd;  // x̂
        const T g = gs.v[s] * w.v[s];
        sum_g += g;
        sum_gx += g * xs.v[s];
      }
      const T mean_g = Group::sum(sum_g, scratch) / T(d);
      const T mean_gx = Group::sum(sum_gx, scratch) / T(d);
#pragma unroll
      for (int s = 0; s < P; ++s) {
        if (params && (inside >> s & 1u)) {
          sum_w.v[s] += gs.v[s] * xs.v[s];
          sum_b.v[s] += gs.v[s];
        }
        gs.v[s] = rstd * (gs.v[s] * w.v[s] - mean_g - xs.v[s] * mean_gx);
      }
      gs.store(dx + r * d, d, t, vec);
    }
  }
  if (!params) return;
  T* mine = partials + (long long)blockIdx.x * 2 * d;
  if constexpr (G == 32) {
    __shared__ T acc[2 * G * P];  // the block's partials, warps added in order
    for (int warp = 0; warp < 8; ++warp) {
      if (group_in_block == warp) {
#pragma unroll
        for (int s = 0; s < P; ++s) {
          if (!(inside >> s & 1u)) continue;
          const long long k = Slots::index(s, t, vec);
          acc[k] = warp == 0 ? sum_w.v[s] : acc[k] + sum_w.v[s];
          acc[d + k] = warp == 0 ? sum_b.v[s] : acc[d + k] + sum_b.v[s];
        }
      }
      __syncthreads();
    }
    for (long long k = threadIdx.x; k < 2 * d; k += blockDim.x) mine[k] = acc[k];
  } else {
#pragma unroll
    for (int s = 0; s < P; ++s) {
      if (!(inside >> s & 1u)) continue;
      const long long k = Slots::index(s, t, vec);
      mine[k] = sum_w.v[s];
      mine[d + k] = sum_b.v[s];
    }
  }
  layer_norm_grad_finish(partials, arrivals, d, dweight, dbias);
}

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) per row, xhat = (x - mean) * rstd,
// g = grad * weight (grad when weight is null); dweight = Σ_rows grad * xhat and
// dbias = Σ_rows grad where they are not null (see the top of the file for the order).
// G, P: the register path's groups (rows.cuh, row_fits); P = 0: the general path only.
template <class T, int G = 0, int P = 0>
__device__ void layer_norm_grad_kernel(const T* grad, const T* x, const T* weight, T* dx,
                                       T* dweight, T* dbias, long long rows, long long d,
                                       double eps, T* partials, unsigned* arrivals) {
  if constexpr (P > 0) {
    if (row_fits<G, P>(d, 1))
      return layer_norm_grad_rows_in_registers<T, G, P>(grad, x, weight, dx, dweight, dbias,
                                                        rows, d, T(eps), partials, arrivals);
  }
  __shared__ T stats[2 * kLayerNormGradChunk];  // mean, rstd of each row of the chunk
  const bool params = dweight != nullptr || dbias != nullptr;
  T* mine = params ? partials + (long long)blockIdx.x * 2 * d : nullptr;
  bool first = true;
  for (long long c0 = (long long)blockIdx.x * kLayerNormGradChunk; c0 < rows;
       c0 += (long long)gridDim.x * kLayerNormGradChunk) {
    const long long n = rows - c0 < kLayerNormGradChunk ? rows - c0 : kLayerNormGradChunk;
    // dx: warp w takes rows w, w + 8, ... of the chunk (eight rows at a time, no block
    // barrier per row); its lanes fold k = lane, lane + 32, ... and the warp's butterfly
    // (rows.cuh's RowGroup<32>::sum) adds them.
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    for (long long i = warp; i < n; i += warps) {
      const long long r = c0 + i;
      const T* xr = x + r * d;
      const T* gr = grad + r * d;
      T sum = T(0);
      for (long long k = lane; k < d; k += 32) sum += xr[k];
      const T mean = RowGroup<32>::sum(sum) / T(d);
      T sq = T(0);
      for (long long k = lane; k < d; k += 32) sq += (xr[k] - mean) * (xr[k] - mean);
      const T rstd = T(1) / sqrt(RowGroup<32>::sum(sq) / T(d) + T(eps));
      T sum_g = T(0), sum_gx = T(0);
      for (long long k = lane; k < d; k += 32) {
        const T g = weight ? gr[k] * weight[k] : gr[k];
        sum_g += g;
        sum_gx += g * (xr[k] - mean) * rstd;
      }
      const T mean_g = RowGroup<32>::sum(sum_g) / T(d);
      const T mean_gx = RowGroup<32>::sum(sum_gx) / T(d);
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
  layer_norm_grad_finish(partials, arrivals, d, dweight, dbias);
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_LAYERNORM_CUH_
