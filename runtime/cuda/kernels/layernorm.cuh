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
// kLayerNormGradChunk rows (chunk c, c + gridDim.x, ...) and writes their dx (the
// block path, one row at a time per block, loads the next row before this one's
// reductions: Prefetch). Its column sums: on the register path each group keeps its
// columns' sums in registers, or in dynamic shared memory when codegen gives it
// (SharedSums: rows of a warp, where registers would spill), rows ascending, and a
// block's warps are added in warp order; on the general path
// thread t folds columns t, t + blockDim.x, ... of each chunk (rows ascending). Either
// way the block's partial sums, partials[block][0..d) (dweight) and [d..2d) (dbias),
// go to global scratch. Then two levels of last-to-arrive sums (layer_norm_grad_finish:
// a __threadfence, then a ticket): the last block of each group of 16 adds the group's
// partials in block order, the last of those adds the groups' sums in group order. A
// fixed order for a given grid, so the result is bitwise the same on every launch, with
// no float atomics; the two levels keep the last block's serial work short, and each
// column's partials are loaded eight at a time before they are added
// (add_partials_in_order). The last blocks set their counters back to 0: the per-step
// CUDA graph replays the launch, and the executor gives the counters a zeroed buffer
// (BufferDesc::zero_init) for the first one.
//
// Launch: block 256 (the tree's width; partial[256]). Forward: grid max(1, min(rows,
// 4096)), rows grid-stride over the blocks. Backward: grid
// layer_norm_grad_grid(rows) (below); partials holds (grid + groups) * 2 * d elements
// and arrivals groups + 1 unsigned, groups = layer_norm_grad_groups(grid); both may be
// null when dweight and dbias are. Rows of a warp (d <= 1024): SharedSums with
// layer_norm_grad_shared_bytes(d, 32, sizeof(double)) of dynamic shared memory
// (NormalizationRecipe.cpp; a launch given less takes the general path).
// Generated entry points (weight / bias / dweight / dbias parameters only where the op
// has them; the others pass nullptr):
//   extern "C" __global__ void k_f32(const float* x, const float* weight,
//       const float* bias, const float* addend, float* y, float* sum, long long rows,
//       long long d, double eps) {
//     vouch::layer_norm_kernel<float, G, P>(x, weight, bias, addend, y, sum, rows, d,
//         eps); }
// addend (forward, may be null): the rows normalised are x + addend, written to sum.
// y stored as bf16 (the op's bf16Result, f32 only): `unsigned short* y` and
// layer_norm_kernel<float, G, P, unsigned short>.
//   extern "C" __global__ void k_f32(const float* grad, const float* x,
//       const float* weight, const float* addend, float* dx, float* dweight,
//       float* dbias, long long rows, long long d, double eps, float* partials,
//       unsigned* arrivals) {
//     vouch::layer_norm_grad_kernel<float, G, P[, true]>(grad, x, weight, addend, dx,
//         dweight, dbias, rows, d, eps, partials, arrivals); }
// addend (may be null): added to dx element by element, after dx is rounded
// (add_rn: never contracted into dx's product), so dx is bitwise the separate add's.
// dx's bf16 twin (the op's bf16Twin, f32 only: a vouch.round_bf16 of dx fused with
// the op): `unsigned short* dx_bf16` after dbias, passed last to the kernel; each
// dx value is stored as f32 and, rounded to nearest even, as bf16 (the same bits as
// round_bf16 of the stored dx).
//   extern "C" __global__ void k_f32(const float* grad, ..., float* dbias,
//       unsigned short* dx_bf16, long long rows, long long d, double eps,
//       float* partials, unsigned* arrivals) {
//     vouch::layer_norm_grad_kernel<float, G, P[, true]>(grad, x, weight, addend, dx,
//         dweight, dbias, rows, d, eps, partials, arrivals, dx_bf16); }
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
                                     const void* e, const void* f = nullptr) {
  return aligned16(a) && aligned16(b) && aligned16(c) && aligned16(e) && aligned16(f);
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

// layer_norm_kernel's rows of d <= G * P in registers (x read once, y written once;
// with an addend, it read once and the sum written once).
template <class T, int G, int P, class O>
__device__ void layer_norm_rows_in_registers(const T* x, const T* weight, const T* bias,
                                             const T* addend, O* y, T* sum, long long rows,
                                             long long d, T eps) {
  __shared__ T scratch[8];
  using Group = RowGroup<G>;
  constexpr int W = RowSlots<T, G, P>::W;
  const int t = Group::rank();
  const bool vec = d % W == 0 && all_aligned16(x, weight, bias, addend, sum) &&
                   row_vec_aligned<W>(y);
  const unsigned inside = in_row_bits<T, G, P>(d, t, vec);
  for (long long r = Group::first(); r < rows; r += Group::step()) {
    RowSlots<T, G, P> v;
    v.load(x + r * d, d, t, vec, T(0));
    if (addend) {
      RowSlots<T, G, P> a;
      a.load(addend + r * d, d, t, vec, T(0));
#pragma unroll
      for (int s = 0; s < P; ++s) v.v[s] = add_rn(v.v[s], a.v[s]);
      v.store(sum + r * d, d, t, vec);
    }
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

// y = (x - mean) * rstd * weight + bias per row (weight 1, bias 0 when null). With an
// addend (not null), the rows normalised are x + addend, written to `sum` (each element
// rounded once, the separate add's bits) and read back by the thread that wrote it.
// G, P: the register path's groups (rows.cuh, row_fits); P = 0: the general path only.
// O: y's element type, T, or (f32 only: layer_norm's bf16Result, a y that only bf16
// products read) bf16 bits, each value rounded to nearest even as it is stored
// (rows.cuh's row_store).
template <class T, int G = 0, int P = 0, class O = T>
__device__ void layer_norm_kernel(const T* x, const T* weight, const T* bias, const T* addend,
                                  O* y, T* sum, long long rows, long long d, double eps) {
  if constexpr (P > 0) {
    if (row_fits<G, P>(d, 1))
      return layer_norm_rows_in_registers<T, G, P>(x, weight, bias, addend, y, sum, rows, d,
                                                   T(eps));
  }
  __shared__ T partial[256];
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * d;
    if (addend) {
      // row_stats and the loop below read element k on the thread that writes it.
      for (long long k = threadIdx.x; k < d; k += blockDim.x)
        sum[r * d + k] = add_rn(xr[k], addend[r * d + k]);
      xr = sum + r * d;
    }
    T mean, rstd;
    row_stats(xr, d, T(eps), partial, mean, rstd);
    for (long long k = threadIdx.x; k < d; k += blockDim.x) {
      T v = (xr[k] - mean) * rstd;
      if (weight) v *= weight[k];
      if (bias) v += bias[k];
      row_store(y + r * d + k, v);
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

// A 16-byte vector loaded through L2 (__ldcg), past this SM's L1.
__device__ inline Vec16<float> load_through_l2(const Vec16<float>* p) {
  const float4 r = __ldcg(reinterpret_cast<const float4*>(p));
  return Vec16<float>{{r.x, r.y, r.z, r.w}};
}
__device__ inline Vec16<double> load_through_l2(const Vec16<double>* p) {
  const double2 r = __ldcg(reinterpret_cast<const double2*>(p));
  return Vec16<double>{{r.x, r.y}};
}

// put(k, Σ_{b < count} from[b * stride + k]) in b order, for k in [0, width), through L2
// (__ldcg: other blocks wrote them). 16-byte vectors of columns where the layout
// allows (thread t takes vectors t, t + blockDim.x, ...), else single columns; the
// partials are loaded eight at a time before they are added, so a vector of columns
// costs ceil(count / 8) round trips, not `count`. The adds are the same either way.
template <class T, class Put>
__device__ void add_partials_in_order(const T* from, long long stride, long long count,
                                      long long width, Put put) {
  constexpr int kBatch = 8, W = Vec16<T>::kWidth;
  if (width % W == 0 && stride % W == 0 && aligned16(from)) {
    const Vec16<T>* vectors = reinterpret_cast<const Vec16<T>*>(from);
    const long long vstride = stride / W;
    for (long long j = threadIdx.x; j < width / W; j += blockDim.x) {
      Vec16<T> total;
      for (long long b0 = 0; b0 < count; b0 += kBatch) {
        Vec16<T> v[kBatch];
#pragma unroll
        for (int b = 0; b < kBatch; ++b)
          if (b0 + b < count) v[b] = load_through_l2(vectors + (b0 + b) * vstride + j);
#pragma unroll
        for (int b = 0; b < kBatch; ++b)
          if (b0 + b < count) {
#pragma unroll
            for (int e = 0; e < W; ++e)
              total.v[e] = b0 + b == 0 ? v[b].v[e] : total.v[e] + v[b].v[e];
          }
      }
#pragma unroll
      for (int e = 0; e < W; ++e) put(j * W + e, total.v[e]);
    }
    return;
  }
  for (long long k = threadIdx.x; k < width; k += blockDim.x) {
    T total = T(0);
    for (long long b0 = 0; b0 < count; b0 += kBatch) {
      T v[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b)
        if (b0 + b < count) v[b] = __ldcg(from + (b0 + b) * stride + k);
#pragma unroll
      for (int b = 0; b < kBatch; ++b)
        if (b0 + b < count) total = b0 + b == 0 ? v[b] : total + v[b];
    }
    put(k, total);
  }
}

// After every block has put its partial column sums in partials[block][0..2d): the
// last block of each group to arrive adds the group's partials in block order into
// partials[grid + group]; the last of those to arrive adds the groups' sums in group
// order into dweight (columns 0..d) and dbias (d..2d). A fixed order for a given
// grid, the same bits every launch; the tickets are reset by arrived_last.
// (Not inlined: its registers are then not the row loop's, which they made spill.)
template <class T>
__device__ __noinline__ void layer_norm_grad_finish(T* partials, unsigned* arrivals,
                                                    long long d, T* dweight, T* dbias) {
  const long long grid = gridDim.x, groups = layer_norm_grad_groups(grid);
  const long long group = blockIdx.x / kLayerNormGradGroup;
  const long long first = group * kLayerNormGradGroup;
  const long long members =
      grid - first < kLayerNormGradGroup ? grid - first : kLayerNormGradGroup;
  if (!arrived_last(arrivals + group, unsigned(members))) return;
  T* group_sum = partials + (grid + group) * 2 * d;
  add_partials_in_order(partials + first * 2 * d, 2 * d, members, 2 * d,
                        [&](long long k, T sum) { group_sum[k] = sum; });
  if (!arrived_last(arrivals + groups, unsigned(groups))) return;
  add_partials_in_order(partials + grid * 2 * d, 2 * d, groups, 2 * d, [&](long long k, T sum) {
    if (k < d) {
      if (dweight) dweight[k] = sum;
    } else if (dbias) {
      dbias[k - d] = sum;
    }
  });
}

// The dynamic shared memory layer_norm_grad's register path keeps its column sums in
// (SharedSums): 2 * d elements per group of the block (a warp: 8 groups; the block: 1).
__host__ __device__ constexpr long long layer_norm_grad_shared_bytes(long long d, int G,
                                                                     int size) {
  return (G == 32 ? 8 : 1) * 2 * d * size;
}

// sum_w[k] += g[k] · x̂[k] and sum_b[k] += g[k] for the columns k of slots inside the
// row, the sums in shared memory at the row's element indices. With vectors, one
// 16-byte access per vector: a warp's lanes then touch consecutive 16-byte words (no
// bank conflicts), where a scalar access per element was a 4-way conflict (f32).
template <class T, int G, int P>
__device__ inline void add_column_sums(T* sum_w, T* sum_b, const RowSlots<T, G, P>& g,
                                       const RowSlots<T, G, P>& xhat, unsigned inside, int t,
                                       bool vec) {
  using Slots = RowSlots<T, G, P>;
  constexpr int W = Slots::W;
  if (vec) {
#pragma unroll
    for (int j = 0; j < P / W; ++j) {
      if (!(inside >> (j * W) & 1u)) continue;  // with vectors, a whole vector is in or out
      Vec16<T>* at_w = reinterpret_cast<Vec16<T>*>(sum_w) + j * G + t;
      Vec16<T>* at_b = reinterpret_cast<Vec16<T>*>(sum_b) + j * G + t;
      Vec16<T> a = *at_w, b = *at_b;
#pragma unroll
      for (int e = 0; e < W; ++e) {
        a.v[e] += g.v[j * W + e] * xhat.v[j * W + e];
        b.v[e] += g.v[j * W + e];
      }
      *at_w = a;
      *at_b = b;
    }
    return;
  }
#pragma unroll
  for (int s = 0; s < P; ++s)
    if (inside >> s & 1u) {
      const int k = Slots::index(s, t, false);
      sum_w[k] += g.v[s] * xhat.v[s];
      sum_b[k] += g.v[s];
    }
}

// layer_norm_grad_kernel's rows of d <= G * P in registers (grad and x read once, dx
// written once): each group takes the rows of the block's chunks (a warp: rows w,
// w + 8, ... of each chunk; the block: every row in turn) and keeps its columns'
// Σ grad · x̂ and Σ grad, rows ascending, in registers or (SharedSums) in its own
// region of the dynamic shared memory: no spills at 768, where the registers would
// hold four rows' worth; a block's groups are then added in group order into the
// block's partial sums (the same adds either way).
template <class T, int G, int P, bool SharedSums, bool Prefetch>
__device__ void layer_norm_grad_rows_in_registers(const T* grad, const T* x, const T* weight,
                                                  const T* addend, T* dx, T* dweight,
                                                  T* dbias, long long rows, long long d, T eps,
                                                  T* partials, unsigned* arrivals,
                                                  unsigned short* dx_bf16) {
  __shared__ T scratch[8];
  using Group = RowGroup<G>;
  using Slots = RowSlots<T, G, P>;
  const int t = Group::rank();
  // (The twin's rows, of d % W == 0 bf16s, are 8-byte aligned where its start is.)
  const bool vec = d % Slots::W == 0 && all_aligned16(grad, x, dx, weight, addend) &&
                   (dx_bf16 == nullptr || row_vec_aligned<Slots::W>(dx_bf16));
  const unsigned inside = in_row_bits<T, G, P>(d, t, vec);
  const bool params = dweight != nullptr || dbias != nullptr;
  const int group_in_block = G == 32 ? int(threadIdx.x >> 5) : 0;
  Slots sum_w, sum_b;  // this group's Σ grad · x̂ and Σ grad (in registers)
  // (In shared memory:) the block's groups' sums, this group's at [0, d) and [d, 2d).
  T* sums = SharedSums ? dynamic_shared<T>() : nullptr;
  T* group_sums = SharedSums ? sums + group_in_block * 2 * d : nullptr;
#pragma unroll
  for (int s = 0; s < P; ++s) {
    if (SharedSums) {
      if (inside >> s & 1u)
        group_sums[Slots::index(s, t, vec)] = group_sums[d + Slots::index(s, t, vec)] = T(0);
    } else {
      sum_w.v[s] = sum_b.v[s] = T(0);
    }
  }
  // The group's rows: in chunk c0 (c0 = blockIdx.x * Chunk, + gridDim.x * Chunk, ...,
  // Chunk = kLayerNormGradChunk)
  // rows c0 + group_in_block, + kGroupsPerBlock, ...; `rows` when there is none.
  constexpr long long Chunk = kLayerNormGradChunk;
  auto next_row = [&](long long r) {
    const long long c0 = r / Chunk * Chunk;
    if (r + Group::kGroupsPerBlock < c0 + Chunk && r + Group::kGroupsPerBlock < rows)
      return r + Group::kGroupsPerBlock;
    const long long first = c0 + (long long)gridDim.x * Chunk + group_in_block;
    return first < rows ? first : rows;
  };
  long long r = (long long)blockIdx.x * Chunk + group_in_block;
  if (group_in_block >= Chunk || r >= rows) r = rows;
  Slots xs, gs;
  if (r < rows) {
    xs.load(x + r * d, d, t, vec, T(0));
    gs.load(grad + r * d, d, t, vec, T(0));
  }
  while (r < rows) {
    // Prefetch: the next row's loads are issued before this row's reductions, so
    // their latency hides behind them (the block path: one row per block at a time).
    const long long next = next_row(r);
    Slots next_x, next_g;
    if (Prefetch && next < rows) {
      next_x.load(x + next * d, d, t, vec, T(0));
      next_g.load(grad + next * d, d, t, vec, T(0));
    }
    T mean, rstd;
    row_stats_in_registers(xs, inside, d, eps, scratch, mean, rstd);
    Slots w;  // weight per row, from cache, live only in the loop below
    if (weight) {
      w.load(weight, d, t, vec, T(1));
    } else {
#pragma unroll
      for (int s = 0; s < P; ++s) w.v[s] = T(1);
    }
#pragma unroll
    for (int s = 0; s < P; ++s) xs.v[s] = (xs.v[s] - mean) * rstd;  // x̂
    if (params) {
      if constexpr (SharedSums) {
        add_column_sums<T, G, P>(group_sums, group_sums + d, gs, xs, inside, t, vec);
      } else {
#pragma unroll
        for (int s = 0; s < P; ++s)
          if (inside >> s & 1u) {
            sum_w.v[s] += gs.v[s] * xs.v[s];
            sum_b.v[s] += gs.v[s];
          }
      }
    }
    T sum_g = T(0), sum_gx = T(0);
#pragma unroll
    for (int s = 0; s < P; ++s) {
      gs.v[s] *= w.v[s];  // g = grad · weight from here on
      sum_g += gs.v[s];
      sum_gx += gs.v[s] * xs.v[s];
    }
    const T mean_g = Group::sum(sum_g, scratch) / T(d);
    const T mean_gx = Group::sum(sum_gx, scratch) / T(d);
#pragma unroll
    for (int s = 0; s < P; ++s) gs.v[s] = rstd * (gs.v[s] - mean_g - xs.v[s] * mean_gx);
    if (addend) {
      Slots a;
      a.load(addend + r * d, d, t, vec, T(0));
#pragma unroll
      for (int s = 0; s < P; ++s) gs.v[s] = add_rn(a.v[s], gs.v[s]);
    }
    gs.store(dx + r * d, d, t, vec);
    if constexpr (sizeof(T) == sizeof(float))
      if (dx_bf16) gs.store(dx_bf16 + r * d, d, t, vec);
    if (Prefetch) {
      xs = next_x;
      gs = next_g;
    } else if (next < rows) {
      xs.load(x + next * d, d, t, vec, T(0));
      gs.load(grad + next * d, d, t, vec, T(0));
    }
    r = next;
  }
  if (!params) return;
  T* mine = partials + (long long)blockIdx.x * 2 * d;
  if constexpr (SharedSums) {
    __syncthreads();  // every group's sums are in
    for (long long k = threadIdx.x; k < 2 * d; k += blockDim.x) {
      T total = sums[k];
      for (int g = 1; g < Group::kGroupsPerBlock; ++g) total += sums[g * 2 * d + k];
      mine[k] = total;
    }
  } else if constexpr (G == 32) {
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

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) per row (+ addend where not null),
// xhat = (x - mean) * rstd, g = grad * weight (grad when weight is null); dweight = Σ_rows grad * xhat and
// dbias = Σ_rows grad where they are not null (see the top of the file for the order);
// dx_bf16, where not null (f32 only), dx's bf16 twin.
// G, P: the register path's groups (rows.cuh, row_fits); P = 0: the general path only.
// SharedSums: the register path keeps its column sums in dynamic shared memory; a
// launch given less than layer_norm_grad_shared_bytes takes the general path.
template <class T, int G = 0, int P = 0, bool SharedSums = false, bool Prefetch = (G == 256)>
__device__ void layer_norm_grad_kernel(const T* grad, const T* x, const T* weight,
                                       const T* addend, T* dx, T* dweight, T* dbias,
                                       long long rows, long long d, double eps, T* partials,
                                       unsigned* arrivals, unsigned short* dx_bf16 = nullptr) {
  if constexpr (P > 0) {
    if (row_fits<G, P>(d, 1) && blockDim.x == 256 &&  // 8 warps: kGroupsPerBlock
        (!SharedSums || dynamic_shared_bytes() >= layer_norm_grad_shared_bytes(d, G, sizeof(T))))
      return layer_norm_grad_rows_in_registers<T, G, P, SharedSums, Prefetch>(
          grad, x, weight, addend, dx, dweight, dbias, rows, d, T(eps), partials, arrivals,
          dx_bf16);
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
        const T v = rstd * (g - mean_g - xhat * mean_gx);
        const T out = addend ? add_rn(addend[r * d + k], v) : v;
        dx[r * d + k] = out;
        if constexpr (sizeof(T) == sizeof(float))
          if (dx_bf16) row_store(dx_bf16 + r * d + k, out);  // rounded as stored
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
