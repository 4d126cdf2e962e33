// attention.cuh: fused scaled-dot-product attention (torch's
// scaled_dot_product_attention with a hard mask), forward and backward, flash style:
// no Tq × Tk matrix ever reaches global memory.
//
// Semantics, per batch: S = scale · Q Kᵀ; keep(i, j) = (no mask or mask(i, j) != 0) and
// (not causal or j <= i: top-left aligned, torch's is_causal / tril(ones(Tq, Tk)));
// P(i, j) = exp(S(i, j) - m_i) / Σ_{kept j'} exp(S(i, j') - m_i) on kept entries and
// exactly 0 on blocked ones (no -inf or finite sentinel is ever added to S);
// O = P V; lse_i = m_i + log(l_i) over the kept keys. A row with no kept key ("fully
// blocked") gives an O row of exact zeros, lse -inf, a dq row of exact zeros and
// nothing in dk / dv. Tq may differ from Tk, D (q, k features) from Dv (v features).
//
// Layout: q [batch..., Tq, D], k [batch..., Tk, D], v [batch..., Tk, Dv],
// out [batch..., Tq, Dv] (dq, dk, dv, dout like q, k, v, out), each described by its own
// vouch::Dims of rank r in 3..8: axes 0..r-3 the batch (the same extents for every
// tensor; a linear batch index b walks them row-major, a stride may be 0), axis r-2
// the sequence, axis r-1 the features (any stride; stride 1, the common case, loads
// without the multiply). The mask (int32 0 / 1, pointer null: no mask) has its own
// Dims of the same rank, extents [batch..., Tq, Tk], stride 0 where it broadcasts. lse
// and delta are contiguous [batch_count × Tq] arrays of T.
//
// Work: a block of 256 threads (16 × 16) takes one 64-row tile and walks the other
// operand's 64-row tiles in ascending order; features go through shared memory in
// chunks of 64 (a [64][65] tile per operand: the odd row pitch makes both operand
// reads of the tile products conflict-free). Thread (ty, tx) owns rows ty + 16·i and
// columns tx + 16·j (i, j < 4) of every 64 × 64 product, and its accumulators' columns
// tx + 16·j of each 64-feature chunk of the output, in registers. A product term is a
// fold over the reduction index ascending (chunks ascending), so every result has a
// fixed order: the same bits every run, no atomics. Accumulation is in T.
//  - forward: a block per query tile; per key tile S (chunks of D), the online softmax
//    (each row's running max m and sum l, the tile's row max and row sum a butterfly
//    of xor shuffles over the row's 16 threads, O rescaled by exp(m_old - m_new)), P to
//    shared memory, O += P V (chunks of Dv). Then O / l and lse = m + log(l).
//  - delta (FlashAttention-2's D_i = Σ_d dO · O): a block per 64 query rows of a batch,
//    half a warp per row, four rows each (float4 where the views allow), then a butterfly.
//  - dkdv: a block per key tile; per query tile ascending Sᵀ, Pᵀ = exp(Sᵀ - lse) (0 on
//    blocked entries and rows whose lse is -inf), dPᵀ = V dOᵀ, dSᵀ = Pᵀ ∘ (dPᵀ - delta);
//    dV += Pᵀ dO and dK += dSᵀ Q in registers; dK scaled once at the end; each written
//    once.
//  - dq: a block per query tile; per key tile ascending the same S, P, dP, dS, then
//    dQ += dS K; scaled once at the end, written once.
// Causal: key tiles past a query tile's last row (forward, dq) and query tiles before
// a key tile's first key (dkdv) are skipped whole; tiles cut by the diagonal are masked
// per element. Blocks take the tiles with the most work first.
//
// Template arguments: DV (forward: output chunks held in registers, ceil(Dv / 64)),
// DK (dkdv: dK chunks, ceil(D / 64); dq: dQ chunks), all defaulting to 4 (any D, Dv up
// to kAttentionMaxHeadDim = 256); attention_chunks(d) gives the fastest (1 for
// GPT-2's 64). A launch whose D or Dv needs more chunks than instantiated traps.
//
// Launch (every kernel a block of kAttentionThreads = 256, tiles grid-stride, so any
// grid is correct): forward and dq grid attention_tile_grid(batch_count, Tq), dkdv
// attention_tile_grid(batch_count, Tk), delta attention_delta_grid(batch_count, Tq);
// dynamic shared memory attention_forward_shared_bytes(sizeof(T)) (4 tiles: f32
// 66,560 bytes, f64 133,120) and attention_backward_shared_bytes(sizeof(T)) for dkdv
// and dq (5 tiles: f32 83,200, f64 166,400): above 48 KiB, so the host sets
// cudaFuncAttributeMaxDynamicSharedMemorySize; a launch given less traps. delta takes
// none. GPT-2 (batch 8 × 12 heads, T 1024, D 64): grids 96 · 16 = 1536, delta 96 · 16 = 1,536.
// Codegen gives the f32 entry points with DV = DK = 1 __launch_bounds__(256, 2) (128
// registers, two blocks per SM, no spills; the compiler's own choice takes ~145-250
// and one block). Measured on an H200 (kernel_lab --bench, GPT-2's shape, causal,
// f32, those entry points): forward 0.71 ms (12.9 GFLOP of useful work: ~18 TFLOP/s),
// backward 2.42 ms (delta + dkdv 1.33 ms + dq 1.02 ms).
// Generated entry points (DV, DK: attention_chunks of Dv, D):
//   extern "C" __global__ void k_f32(const float* q, vouch::Dims qd, const float* k,
//       vouch::Dims kd, const float* v, vouch::Dims vd, const int* mask, vouch::Dims md,
//       float* out, vouch::Dims od, float* lse, long long causal, double scale) {
//     vouch::attention_forward_kernel<float, DV>(q, qd, k, kd, v, vd, mask, md, out, od,
//                                                lse, causal, scale); }
//   extern "C" __global__ void k_f32(const float* dout, vouch::Dims dod, const float* out,
//       vouch::Dims od, float* delta) {
//     vouch::attention_delta_kernel<float>(dout, dod, out, od, delta); }
//   extern "C" __global__ void k_f32(const float* q, vouch::Dims qd, const float* k,
//       vouch::Dims kd, const float* v, vouch::Dims vd, const int* mask, vouch::Dims md,
//       const float* dout, vouch::Dims dod, const float* lse, const float* delta,
//       float* dk, vouch::Dims dkd, float* dv, vouch::Dims dvd, long long causal,
//       double scale) {
//     vouch::attention_dkdv_kernel<float, DK, DV>(q, qd, k, kd, v, vd, mask, md, dout,
//         dod, lse, delta, dk, dkd, dv, dvd, causal, scale); }
//   extern "C" __global__ void k_f32(const float* q, vouch::Dims qd, const float* k,
//       vouch::Dims kd, const float* v, vouch::Dims vd, const int* mask, vouch::Dims md,
//       const float* dout, vouch::Dims dod, const float* lse, const float* delta,
//       float* dq, vouch::Dims dqd, long long causal, double scale) {
//     vouch::attention_dq_kernel<float, DK>(q, qd, k, kd, v, vd, mask, md, dout, dod,
//         lse, delta, dq, dqd, causal, scale); }
// (mask nullptr with any md: no mask; causal 0 or 1; scale e.g. 1 / sqrt(D).)
// Tensor-core variants (f32 only; "Tensor-core variants" below says what they compute):
// TF32 products attention_forward_tf32_kernel<DV>, attention_dkdv_tf32_kernel<DK, DV>,
// attention_dq_tf32_kernel<DK> and their bf16-product twins (f32 storage)
// attention_forward_bf16_kernel<DV>, attention_dkdv_bf16_kernel<DK, DV>,
// attention_dq_bf16_kernel<DK>, all with the same argument lists as the f32 entries
// above and no T (an f64 instantiation does not exist; f64 stays SIMT); delta stays
// attention_delta_kernel<float>. Any D, Dv up to 256 (no SIMT fallback needed; D need
// not be a multiple of 8). Block 256, grids attention_tile_grid as above, dynamic
// shared memory (both precisions) attention_tf32_forward_shared_bytes() (70,656 bytes)
// for the forward and attention_tf32_backward_shared_bytes() (87,040) for dkdv and dq
// (the host sets cudaFuncAttributeMaxDynamicSharedMemorySize); sm_80 or newer.
// Generated entry points (DV, DK: attention_chunks of Dv, D; codegen's d64 entries, DV
// = DK = 1, with __launch_bounds__(256, 2) as the SIMT ones; bf16: _bf16_ for _tf32_ in
// the kernel names):
//   extern "C" __global__ void __launch_bounds__(256, 2) k_f32(const float* q,
//       vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
//       const int* mask, vouch::Dims md, float* out, vouch::Dims od, float* lse,
//       long long causal, double scale) {
//     vouch::attention_forward_tf32_kernel<DV>(q, qd, k, kd, v, vd, mask, md, out, od,
//                                              lse, causal, scale); }
//   extern "C" __global__ void __launch_bounds__(256, 2) k_f32(const float* q,
//       vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
//       const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod,
//       const float* lse, const float* delta, float* dk, vouch::Dims dkd, float* dv,
//       vouch::Dims dvd, long long causal, double scale) {
//     vouch::attention_dkdv_tf32_kernel<DK, DV>(q, qd, k, kd, v, vd, mask, md, dout, dod,
//         lse, delta, dk, dkd, dv, dvd, causal, scale); }
//   extern "C" __global__ void __launch_bounds__(256, 2) k_f32(const float* q,
//       vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
//       const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod,
//       const float* lse, const float* delta, float* dq, vouch::Dims dqd, long long causal,
//       double scale) {
//     vouch::attention_dq_tf32_kernel<DK>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse,
//         delta, dq, dqd, causal, scale); }
// Launch: k<<<attention_tile_grid(batch_count, Tq), attention_block(),
// attention_tf32_forward_shared_bytes()>>> (forward), the same grid with
// attention_tf32_backward_shared_bytes() (dq), attention_tile_grid(batch_count, Tk)
// with attention_tf32_backward_shared_bytes() (dkdv); delta as above, before dkdv and dq.
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_ATTENTION_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_ATTENTION_CUH_

#include "common.cuh"
#include "reduce.cuh"  // positive_infinity
#include "tensor_cores.cuh"

namespace vouch {

constexpr int kAttentionMaxHeadDim = 256;  // D and Dv
constexpr int kAttentionTile = 64;         // rows of a tile; features of a chunk
constexpr int kAttentionPitch = 65;        // a tile row in shared memory (odd: no conflicts)
constexpr int kAttentionThreads = 256;     // 16 × 16
constexpr int kAttentionDeltaPasses = 4;   // delta: rows a half warp takes
constexpr int kAttentionDeltaRows = 16 * kAttentionDeltaPasses;  // delta: rows a block

// 64-feature chunks of a head dimension (the template arguments DV / DK), 1..4.
__host__ __device__ constexpr int attention_chunks(long long d) {
  return d <= 64 ? 1 : d <= 128 ? 2 : d <= 192 ? 3 : 4;
}
__host__ __device__ constexpr long long attention_tiles(long long t) {
  return (t + kAttentionTile - 1) / kAttentionTile;
}
// Blocks of the tile kernels: one per (batch, tile) of the side they own.
__host__ __device__ constexpr long long attention_tile_grid(long long batch_count,
                                                            long long t) {
  return batch_count * attention_tiles(t) < 1 ? 1 : batch_count * attention_tiles(t);
}
// delta: a block per (batch, 64 query rows), at most 65,535 (the kernel grid-strides).
__host__ __device__ constexpr long long attention_delta_grid(long long batch_count,
                                                             long long tq) {
  return batch_count * ((tq + kAttentionDeltaRows - 1) / kAttentionDeltaRows) < 1 ? 1
         : batch_count * ((tq + kAttentionDeltaRows - 1) / kAttentionDeltaRows) > 65535
             ? 65535
             : batch_count * ((tq + kAttentionDeltaRows - 1) / kAttentionDeltaRows);
}
__host__ __device__ constexpr int attention_block() { return kAttentionThreads; }
__host__ __device__ constexpr long long attention_tile_bytes(int size) {
  return (long long)kAttentionTile * kAttentionPitch * size;
}
__host__ __device__ constexpr long long attention_forward_shared_bytes(int size) {
  return 4 * attention_tile_bytes(size);
}
__host__ __device__ constexpr long long attention_backward_shared_bytes(int size) {
  return 5 * attention_tile_bytes(size);
}

// ---- Shapes read from a Dims (constant indices: no local copy of the struct).

__device__ inline long long attention_extent(const Dims& d, int axis) {
  long long e = 0;
#pragma unroll
  for (int k = 0; k < kDimsCapacity; ++k)
    if (k == axis) e = d.extent[k];
  return e;
}
__device__ inline long long attention_stride(const Dims& d, int axis) {
  long long s = 0;
#pragma unroll
  for (int k = 0; k < kDimsCapacity; ++k)
    if (k == axis) s = d.stride[k];
  return s;
}
// Product of the batch extents (axes 0..rank-3).
__device__ inline long long attention_batch_count(const Dims& d) {
  long long n = 1;
#pragma unroll
  for (int k = 0; k < kDimsCapacity; ++k)
    if (k < d.rank - 2) n *= d.extent[k];
  return n;
}
// Offset of batch b (row-major over axes 0..rank-3, each with its own stride).
__device__ inline long long attention_batch_offset(long long b, const Dims& d) {
  unsigned long long rest = static_cast<unsigned long long>(b);
  long long offset = 0;
#pragma unroll
  for (int k = kDimsCapacity - 1; k >= 0; --k) {
    if (k < d.rank - 2) {
      const unsigned long long e = static_cast<unsigned long long>(d.extent[k]);
      const unsigned long long q = rest / e;
      offset += static_cast<long long>(rest - q * e) * d.stride[k];
      rest = q;
    }
  }
  return offset;
}

// One tensor's view for a batch: element (row, feature) at p[row·rs + f·fs].
template <class T>
struct AttnView {
  const T* p;
  long long rs, fs;
  __device__ AttnView(const T* ptr, const Dims& d, long long b)
      : p(ptr + attention_batch_offset(b, d)),
        rs(attention_stride(d, d.rank - 2)),
        fs(attention_stride(d, d.rank - 1)) {}
};

// Whether attention_delta_kernel reads both rows as float4: float, feature stride 1,
// row strides and the width multiples of 4, the batch's rows 16-byte aligned.
template <class T>
__device__ inline bool attention_delta_vector(const AttnView<T>& g, const AttnView<T>& o,
                                              long long dv) {
  if constexpr (sizeof(T) != 4) {
    return false;
  } else {
    return g.fs == 1 && o.fs == 1 && (g.rs & 3) == 0 && (o.rs & 3) == 0 && (dv & 3) == 0 &&
           (reinterpret_cast<unsigned long long>(g.p) & 15) == 0 &&
           (reinterpret_cast<unsigned long long>(o.p) & 15) == 0;
  }
}

// The kept entries of a 64 × 64 tile (queries q0 + ty + 16i, keys k0 + tx + 16j, or
// transposed: keys k0 + ty + 16i, queries q0 + tx + 16j) as 16 bits, bit 4i + j: inside
// [Tq) × [Tk), j <= i if causal, and mask != 0 if there is a mask.
struct AttnKeep {
  const int* mask;
  long long rs, cs, tq, tk;
  bool causal;
  __device__ AttnKeep(const int* m, const Dims& md, long long b, long long tq_, long long tk_,
                      long long causal_)
      : mask(m), rs(0), cs(0), tq(tq_), tk(tk_), causal(causal_ != 0) {
    if (m != nullptr) {
      mask = m + attention_batch_offset(b, md);
      rs = attention_stride(md, md.rank - 2);
      cs = attention_stride(md, md.rank - 1);
    }
  }
  template <bool Transposed>
  __device__ unsigned bits(long long q0, long long k0) const {
    const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
    const int qn = int(tq - q0 < 64 ? tq - q0 : 64), kn = int(tk - k0 < 64 ? tk - k0 : 64);
    // j <= i: key index - query index <= q0 - k0 (clamped: tiles are 64 apart at least).
    const long long gap = q0 - k0;
    const int diag = !causal ? 1 << 20 : gap > 128 ? 128 : gap < -128 ? -128 : int(gap);
    const int* const m = mask == nullptr ? nullptr : mask + q0 * rs + k0 * cs;
    unsigned kept = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int qi = Transposed ? tx + 16 * j : ty + 16 * i;
        const int kj = Transposed ? ty + 16 * i : tx + 16 * j;
        bool ok = qi < qn && kj < kn && kj - qi <= diag;
        if (ok && m != nullptr) ok = m[qi * rs + kj * cs] != 0;
        if (ok) kept |= 1u << (4 * i + j);
      }
    return kept;
  }
};

// tile[r][c] = rows row0 + r, features f0 + c of v (r, c < 64), 0 outside [rows) × [feats).
// Thread t loads column t % 64 of rows t / 64, t / 64 + 4, ...: one pointer stepping by
// 4 rows (a warp reads 32 consecutive features where the feature stride is 1).
template <class T>
__device__ inline void attention_load_tile(T* tile, const AttnView<T>& v, long long row0,
                                           long long rows, long long f0, long long feats) {
  const int c = threadIdx.x & 63, r0 = threadIdx.x >> 6;
  const long long f = f0 + c;
  const int rn = int(rows - row0 < 64 ? rows - row0 : 64);
  const T* src = v.p + (row0 + r0) * v.rs + (v.fs == 1 ? f : f * v.fs);
  const long long step = 4 * v.rs;
  T* dst = tile + r0 * kAttentionPitch + c;
  const bool in = f < feats;
#pragma unroll
  for (int n = 0; n < 16; ++n) {
    dst[n * 4 * kAttentionPitch] = (in && r0 + 4 * n < rn) ? src[0] : T(0);
    src += step;
  }
}

// acc[i][j] += Σ_{x < n} a[ty + 16i][x] · b[tx + 16j][x] (x ascending).
template <class T>
__device__ inline void attention_mma_nt(T (&acc)[4][4], const T* a, const T* b, int n) {
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
  const T* ar = a + ty * kAttentionPitch;
  const T* br = b + tx * kAttentionPitch;
#pragma unroll 2
  for (int x = 0; x < n; ++x) {
    T av[4], bv[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) av[i] = ar[16 * i * kAttentionPitch + x];
#pragma unroll
    for (int j = 0; j < 4; ++j) bv[j] = br[16 * j * kAttentionPitch + x];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
  }
}

// acc[i][j] += Σ_{x < n} a[ty + 16i][x] · b[x][tx + 16j] (x ascending).
template <class T>
__device__ inline void attention_mma_nn(T (&acc)[4][4], const T* a, const T* b, int n) {
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
  const T* ar = a + ty * kAttentionPitch;
  const T* bc = b + tx;
#pragma unroll 2
  for (int x = 0; x < n; ++x) {
    T av[4], bv[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) av[i] = ar[16 * i * kAttentionPitch + x];
#pragma unroll
    for (int j = 0; j < 4; ++j) bv[j] = bc[x * kAttentionPitch + 16 * j];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
  }
}

// The combination over the 16 threads of a row (lanes differing in their low 4 bits):
// a butterfly of xor shuffles, h = 8, 4, 2, 1; every lane ends with the same bits.
template <class T>
__device__ inline T attention_row_max(T v) {
#pragma unroll
  for (int h = 8; h > 0; h >>= 1) {
    const T o = __shfl_xor_sync(0xffffffffu, v, h);
    v = o > v ? o : v;
  }
  return v;
}
template <class T>
__device__ inline T attention_row_sum(T v) {
#pragma unroll
  for (int h = 8; h > 0; h >>= 1) v += __shfl_xor_sync(0xffffffffu, v, h);
  return v;
}

__device__ inline int attention_min(long long a, long long b) { return int(a < b ? a : b); }

__device__ inline void attention_require(bool ok) {
  if (!ok) __trap();
}

// ---- Forward.

template <class T, int DV = 4>
__device__ void attention_forward_kernel(const T* q, Dims qd, const T* k, Dims kd, const T* v,
                                         Dims vd, const int* mask, Dims md, T* out, Dims od,
                                         T* lse, long long causal, double scale) {
  constexpr int kT = kAttentionTile, kP = kAttentionPitch;
  const int r = qd.rank;
  const long long tq = attention_extent(qd, r - 2), d = attention_extent(qd, r - 1);
  const long long tk = attention_extent(kd, r - 2), dv = attention_extent(vd, r - 1);
  const long long batches = attention_batch_count(qd);
  const int nd = attention_chunks(d), nv = attention_chunks(dv);
  attention_require(blockDim.x == kAttentionThreads && nv <= DV &&
                    dynamic_shared_bytes() >= attention_forward_shared_bytes(sizeof(T)));
  T* const sq = dynamic_shared<T>();
  T* const sk = sq + kT * kP;
  T* const sv = sk + kT * kP;
  T* const sp = sv + kT * kP;
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
  const T sc = T(scale);
  const T ninf = -positive_infinity<T>();
  const long long q_tiles = attention_tiles(tq);
  for (long long tile = blockIdx.x; tile < batches * q_tiles; tile += gridDim.x) {
    const long long b = tile % batches;
    const long long q0 = (q_tiles - 1 - tile / batches) * kT;  // the longest rows first
    const AttnView<T> Q(q, qd, b), K(k, kd, b), V(v, vd, b);
    const AttnKeep keep(mask, md, b, tq, tk, causal);
    T o[DV][4][4];
#pragma unroll
    for (int c = 0; c < DV; ++c)
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) o[c][i][j] = T(0);
    T m[4], l[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) m[i] = ninf, l[i] = T(0);
    if (nd == 1) {
      __syncthreads();  // the previous tile's reads of sq are done
      attention_load_tile(sq, Q, q0, tq, 0, d);
    }
    const long long k_end = causal ? (tk < q0 + kT ? tk : q0 + kT) : tk;
    for (long long k0 = 0; k0 < k_end; k0 += kT) {
      T s[4][4];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) s[i][j] = T(0);
      for (int c = 0; c < nd; ++c) {
        __syncthreads();
        if (nd > 1) attention_load_tile(sq, Q, q0, tq, c * kT, d);
        attention_load_tile(sk, K, k0, tk, c * kT, d);
        __syncthreads();
        attention_mma_nt(s, sq, sk, attention_min(kT, d - c * kT));
      }
      // The online softmax of the tile's rows.
      const unsigned kept = keep.bits<false>(q0, k0);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        T mx = ninf;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          s[i][j] *= sc;
          if ((kept >> (4 * i + j) & 1u) && !(s[i][j] <= mx)) mx = s[i][j];
        }
        mx = attention_row_max(mx);
        const T m_new = mx > m[i] ? mx : m[i];
        T alpha = T(1), sum = T(0);
        if (m_new == ninf) {  // nothing kept yet in this row
#pragma unroll
          for (int j = 0; j < 4; ++j) s[i][j] = T(0);
        } else {
          alpha = exp(m[i] - m_new);  // 0 while m is -inf
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            s[i][j] = (kept >> (4 * i + j) & 1u) ? exp(s[i][j] - m_new) : T(0);
            sum += s[i][j];
          }
        }
        sum = attention_row_sum(sum);
        l[i] = l[i] * alpha + sum;
        m[i] = m_new;
#pragma unroll
        for (int c = 0; c < DV; ++c)
#pragma unroll
          for (int j = 0; j < 4; ++j) o[c][i][j] *= alpha;
#pragma unroll
        for (int j = 0; j < 4; ++j) sp[(ty + 16 * i) * kP + tx + 16 * j] = s[i][j];
      }
      const int kn = attention_min(kT, tk - k0);
#pragma unroll
      for (int c = 0; c < DV; ++c) {
        if (c < nv) {
          __syncthreads();  // sp written; the previous chunk's reads of sv done
          attention_load_tile(sv, V, k0, tk, c * kT, dv);
          __syncthreads();
          attention_mma_nn(o[c], sp, sv, kn);
        }
      }
    }
    // O = acc / l (exact zeros where nothing was kept), lse = m + log(l).
    const long long ob = attention_batch_offset(b, od);
    const long long ors = attention_stride(od, r - 2), ofs = attention_stride(od, r - 1);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const long long row = q0 + ty + 16 * i;
      if (row >= tq) continue;
      const bool any = l[i] > T(0);
#pragma unroll
      for (int c = 0; c < DV; ++c)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const long long f = c * kT + tx + 16 * j;
          if (c < nv && f < dv) out[ob + row * ors + f * ofs] = any ? o[c][i][j] / l[i] : T(0);
        }
      if (tx == 0) lse[b * tq + row] = any ? m[i] + log(l[i]) : ninf;
    }
  }
}

// ---- delta[row] = Σ_f dout[row][f] · out[row][f], rows = batch_count × Tq.
// A block per (batch, 64 query rows) (attention_delta_grid), grid-stride: the batch's
// offsets are found once a tile, not once a row (64-bit divisions cost more than the
// row's loads: with a tile of 16 rows the kernel spent its time on them, 51 µs at
// GPT-2's shape, 1 TB/s). Half a warp per row, kAttentionDeltaPasses rows a half warp
// (rows i, i + 16, ...), their loads issued together: lane l of the half takes features
// 4l.. 4l + 3, then 4l + 64.., as float4 where both views allow it (float, feature
// stride 1, row strides multiples of 4, 16-byte aligned), else features l, l + 16, ...;
// each row's products added in ascending feature order, then a butterfly over the 16
// lanes (xor 8, 4, 2, 1): the same sums whatever the tile.
template <class T>
__device__ void attention_delta_kernel(const T* dout, Dims dod, const T* out, Dims od,
                                       T* delta) {
  constexpr int kPasses = kAttentionDeltaPasses;
  const int r = od.rank;
  const long long tq = attention_extent(od, r - 2), dv = attention_extent(od, r - 1);
  const long long per_batch = (tq + kAttentionDeltaRows - 1) / kAttentionDeltaRows;
  const long long tiles = attention_batch_count(od) * per_batch;
  const int l = threadIdx.x & 15;
  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const long long b = tile / per_batch;
    const long long i0 = (tile - b * per_batch) * kAttentionDeltaRows + (threadIdx.x >> 4);
    const AttnView<T> G(dout, dod, b), O(out, od, b);
    T sum[kPasses];
#pragma unroll
    for (int p = 0; p < kPasses; ++p) sum[p] = T(0);
    if (attention_delta_vector<T>(G, O, dv)) {
      for (long long f = 4 * l; f < dv; f += 64) {
        float4 a[kPasses], c[kPasses];
#pragma unroll
        for (int p = 0; p < kPasses; ++p) {
          const long long i = i0 + 16 * p;
          a[p] = i < tq ? *reinterpret_cast<const float4*>(G.p + i * G.rs + f)
                        : make_float4(0.f, 0.f, 0.f, 0.f);
          c[p] = i < tq ? *reinterpret_cast<const float4*>(O.p + i * O.rs + f)
                        : make_float4(0.f, 0.f, 0.f, 0.f);
        }
#pragma unroll
        for (int p = 0; p < kPasses; ++p) {
          sum[p] += a[p].x * c[p].x;
          sum[p] += a[p].y * c[p].y;
          sum[p] += a[p].z * c[p].z;
          sum[p] += a[p].w * c[p].w;
        }
      }
    } else {
#pragma unroll
      for (int p = 0; p < kPasses; ++p) {
        const long long i = i0 + 16 * p;
        if (i >= tq) continue;
        const T* const g = G.p + i * G.rs;
        const T* const o = O.p + i * O.rs;
        for (long long f = l; f < dv; f += 16) sum[p] += g[f * G.fs] * o[f * O.fs];
      }
    }
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
#pragma unroll
      for (int h = 8; h > 0; h >>= 1) sum[p] += __shfl_xor_sync(0xffffffffu, sum[p], h);
      const long long i = i0 + 16 * p;
      if (l == 0 && i < tq) delta[b * tq + i] = sum[p];
    }
  }
}

// P (or Pᵀ) of one 64 × 64 tile from the scores s: exp(s · scale - lse) where kept and
// the row's lse is finite, else 0. Row / column numbering by the caller's orientation.
template <class T>
__device__ inline T attention_prob(T s, T sc, T row_lse, unsigned kept) {
  return (kept != 0u && row_lse != -positive_infinity<T>()) ? exp(s * sc - row_lse) : T(0);
}

// ---- dK, dV: a block per key tile, query tiles ascending.

template <class T, int DK = 4, int DV = 4>
__device__ void attention_dkdv_kernel(const T* q, Dims qd, const T* k, Dims kd, const T* v,
                                      Dims vd, const int* mask, Dims md, const T* dout,
                                      Dims dod, const T* lse, const T* delta, T* dk, Dims dkd,
                                      T* dv_out, Dims dvd, long long causal, double scale) {
  constexpr int kT = kAttentionTile, kP = kAttentionPitch;
  const int r = qd.rank;
  const long long tq = attention_extent(qd, r - 2), d = attention_extent(qd, r - 1);
  const long long tk = attention_extent(kd, r - 2), dv = attention_extent(vd, r - 1);
  const long long batches = attention_batch_count(qd);
  const int nd = attention_chunks(d), nv = attention_chunks(dv);
  attention_require(blockDim.x == kAttentionThreads && nd <= DK && nv <= DV &&
                    dynamic_shared_bytes() >= attention_backward_shared_bytes(sizeof(T)));
  T* const sk = dynamic_shared<T>();
  T* const sv = sk + kT * kP;
  T* const sq = sv + kT * kP;
  T* const sdo = sq + kT * kP;
  T* const sp = sdo + kT * kP;
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
  const T sc = T(scale);
  const long long k_tiles = attention_tiles(tk);
  for (long long tile = blockIdx.x; tile < batches * k_tiles; tile += gridDim.x) {
    const long long b = tile % batches;
    const long long k0 = (tile / batches) * kT;  // causal: the first key tiles have the most
    const AttnView<T> Q(q, qd, b), K(k, kd, b), V(v, vd, b), G(dout, dod, b);
    const AttnKeep keep(mask, md, b, tq, tk, causal);
    T ak[DK][4][4], av[DV][4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int c = 0; c < DK; ++c) ak[c][i][j] = T(0);
#pragma unroll
        for (int c = 0; c < DV; ++c) av[c][i][j] = T(0);
      }
    __syncthreads();  // the previous tile's reads are done
    if (nd == 1) attention_load_tile(sk, K, k0, tk, 0, d);
    if (nv == 1) attention_load_tile(sv, V, k0, tk, 0, dv);
    for (long long q0 = causal ? k0 : 0; q0 < tq; q0 += kT) {
      // Sᵀ[key][query]: keys ty + 16i, queries tx + 16j.
      T s[4][4], dp[4][4];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) s[i][j] = T(0), dp[i][j] = T(0);
      for (int c = 0; c < nd; ++c) {
        __syncthreads();
        if (nd > 1) attention_load_tile(sk, K, k0, tk, c * kT, d);
        attention_load_tile(sq, Q, q0, tq, c * kT, d);
        __syncthreads();
        attention_mma_nt(s, sk, sq, attention_min(kT, d - c * kT));
      }
      // dPᵀ[key][query] = Σ_f V[key][f] dO[query][f].
      for (int c = 0; c < nv; ++c) {
        __syncthreads();
        if (nv > 1) attention_load_tile(sv, V, k0, tk, c * kT, dv);
        attention_load_tile(sdo, G, q0, tq, c * kT, dv);
        __syncthreads();
        attention_mma_nt(dp, sv, sdo, attention_min(kT, dv - c * kT));
      }
      T row_lse[4], row_delta[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const long long row = q0 + tx + 16 * j;
        row_lse[j] = row < tq ? lse[b * tq + row] : -positive_infinity<T>();
        row_delta[j] = row < tq ? delta[b * tq + row] : T(0);
      }
      // Pᵀ into shared memory (dS kept in dp).
      const unsigned kept = keep.bits<true>(q0, k0);
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const T p = attention_prob(s[i][j], sc, row_lse[j], kept >> (4 * i + j) & 1u);
          dp[i][j] = p * (dp[i][j] - row_delta[j]);
          sp[(ty + 16 * i) * kP + tx + 16 * j] = p;
        }
      const int qn = attention_min(kT, tq - q0);
      // dV[key][f] += Σ_query Pᵀ[key][query] dO[query][f].
      for (int c = 0; c < DV; ++c) {
        if (c < nv) {
          __syncthreads();
          if (nv > 1) attention_load_tile(sdo, G, q0, tq, c * kT, dv);
          __syncthreads();
          attention_mma_nn(av[c], sp, sdo, qn);
        }
      }
      __syncthreads();  // the reads of Pᵀ are done
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) sp[(ty + 16 * i) * kP + tx + 16 * j] = dp[i][j];
      // dK[key][f] += Σ_query dSᵀ[key][query] Q[query][f].
#pragma unroll
      for (int c = 0; c < DK; ++c) {
        if (c < nd) {
          __syncthreads();
          if (nd > 1) attention_load_tile(sq, Q, q0, tq, c * kT, d);
          __syncthreads();
          attention_mma_nn(ak[c], sp, sq, qn);
        }
      }
    }
    const long long kb = attention_batch_offset(b, dkd), vb = attention_batch_offset(b, dvd);
    const long long krs = attention_stride(dkd, r - 2), kfs = attention_stride(dkd, r - 1);
    const long long vrs = attention_stride(dvd, r - 2), vfs = attention_stride(dvd, r - 1);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const long long key = k0 + ty + 16 * i;
      if (key >= tk) continue;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int c = 0; c < DK; ++c) {
          const long long f = c * kT + tx + 16 * j;
          if (c < nd && f < d) dk[kb + key * krs + f * kfs] = ak[c][i][j] * sc;
        }
#pragma unroll
        for (int c = 0; c < DV; ++c) {
          const long long f = c * kT + tx + 16 * j;
          if (c < nv && f < dv) dv_out[vb + key * vrs + f * vfs] = av[c][i][j];
        }
      }
    }
  }
}

// ---- dQ: a block per query tile, key tiles ascending.

template <class T, int DK = 4>
__device__ void attention_dq_kernel(const T* q, Dims qd, const T* k, Dims kd, const T* v,
                                    Dims vd, const int* mask, Dims md, const T* dout, Dims dod,
                                    const T* lse, const T* delta, T* dq, Dims dqd,
                                    long long causal, double scale) {
  constexpr int kT = kAttentionTile, kP = kAttentionPitch;
  const int r = qd.rank;
  const long long tq = attention_extent(qd, r - 2), d = attention_extent(qd, r - 1);
  const long long tk = attention_extent(kd, r - 2), dv = attention_extent(vd, r - 1);
  const long long batches = attention_batch_count(qd);
  const int nd = attention_chunks(d), nv = attention_chunks(dv);
  attention_require(blockDim.x == kAttentionThreads && nd <= DK &&
                    dynamic_shared_bytes() >= attention_backward_shared_bytes(sizeof(T)));
  T* const sq = dynamic_shared<T>();
  T* const sdo = sq + kT * kP;
  T* const sk = sdo + kT * kP;
  T* const sv = sk + kT * kP;
  T* const sp = sv + kT * kP;
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
  const T sc = T(scale);
  const long long q_tiles = attention_tiles(tq);
  for (long long tile = blockIdx.x; tile < batches * q_tiles; tile += gridDim.x) {
    const long long b = tile % batches;
    const long long q0 = (q_tiles - 1 - tile / batches) * kT;
    const AttnView<T> Q(q, qd, b), K(k, kd, b), V(v, vd, b), G(dout, dod, b);
    const AttnKeep keep(mask, md, b, tq, tk, causal);
    T aq[DK][4][4];
#pragma unroll
    for (int c = 0; c < DK; ++c)
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) aq[c][i][j] = T(0);
    T row_lse[4], row_delta[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const long long row = q0 + ty + 16 * i;
      row_lse[i] = row < tq ? lse[b * tq + row] : -positive_infinity<T>();
      row_delta[i] = row < tq ? delta[b * tq + row] : T(0);
    }
    __syncthreads();
    if (nd == 1) attention_load_tile(sq, Q, q0, tq, 0, d);
    if (nv == 1) attention_load_tile(sdo, G, q0, tq, 0, dv);
    const long long k_end = causal ? (tk < q0 + kT ? tk : q0 + kT) : tk;
    for (long long k0 = 0; k0 < k_end; k0 += kT) {
      T s[4][4], dp[4][4];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) s[i][j] = T(0), dp[i][j] = T(0);
      for (int c = 0; c < nd; ++c) {
        __syncthreads();
        if (nd > 1) attention_load_tile(sq, Q, q0, tq, c * kT, d);
        attention_load_tile(sk, K, k0, tk, c * kT, d);
        __syncthreads();
        attention_mma_nt(s, sq, sk, attention_min(kT, d - c * kT));
      }
      for (int c = 0; c < nv; ++c) {
        __syncthreads();
        if (nv > 1) attention_load_tile(sdo, G, q0, tq, c * kT, dv);
        attention_load_tile(sv, V, k0, tk, c * kT, dv);
        __syncthreads();
        attention_mma_nt(dp, sdo, sv, attention_min(kT, dv - c * kT));
      }
      const unsigned kept = keep.bits<false>(q0, k0);
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const T p = attention_prob(s[i][j], sc, row_lse[i], kept >> (4 * i + j) & 1u);
          sp[(ty + 16 * i) * kP + tx + 16 * j] = p * (dp[i][j] - row_delta[i]);
        }
      const int kn = attention_min(kT, tk - k0);
      // dQ[query][f] += Σ_key dS[query][key] K[key][f].
#pragma unroll
      for (int c = 0; c < DK; ++c) {
        if (c < nd) {
          __syncthreads();
          if (nd > 1) attention_load_tile(sk, K, k0, tk, c * kT, d);
          __syncthreads();
          attention_mma_nn(aq[c], sp, sk, kn);
        }
      }
    }
    const long long qb = attention_batch_offset(b, dqd);
    const long long qrs = attention_stride(dqd, r - 2), qfs = attention_stride(dqd, r - 1);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const long long row = q0 + ty + 16 * i;
      if (row >= tq) continue;
#pragma unroll
      for (int c = 0; c < DK; ++c)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const long long f = c * kT + tx + 16 * j;
          if (c < nd && f < d) dq[qb + row * qrs + f * qfs] = aq[c][i][j] * sc;
        }
    }
  }
}

// ---- Tensor-core variants (float only): TF32 or bf16 products.
//
// attention_forward_tf32_kernel<DV>, attention_dkdv_tf32_kernel<DK, DV>,
// attention_dq_tf32_kernel<DK> and their bf16 twins attention_forward_bf16_kernel<DV>,
// attention_dkdv_bf16_kernel<DK, DV>, attention_dq_bf16_kernel<DK> are thin
// instantiations of one implementation, attention_{forward,dkdv,dq}_tc_kernel<Tc, ...>,
// over a products policy Tc (AttnTf32 / AttnBf16: the operands' rounding, the mma's k
// and its fragment packing). The same semantics, arguments, tiles, tile order, causal
// skipping and per-chunk structure as the SIMT kernels above, but the six tile products
// (S = Q Kᵀ, O += P V, dP = dO Vᵀ, dV += Pᵀ dO, dK += dSᵀ Q, dQ += dS K) run on tensor
// cores with FP32 accumulation:
//  - TF32: PTX mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32, every operand rounded
//    to TF32 (cvt.rna.tf32.f32, round to nearest, ties away: what cuBLAS's TF32 mode
//    does to its inputs);
//  - bf16 (the policy "bf16 products, f32 storage"): PTX
//    mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32, every operand rounded to bf16
//    (cvt.rn.bf16x2.f32, round to nearest even, as __float2bfloat16_rn); inputs, outputs
//    and shared memory stay float.
// An operand is rounded once, when it is written to shared memory (Q, K, V, dO tiles as
// loaded; P and dS as stored), and stays a float there (a bf16 value is a float whose
// low 16 bits are zero), so both policies share the tiles, their layout and the shared
// memory sizes; a bf16 k-step packs two upper halves per register (exact). The softmax
// statistics, exp, rescaling, lse, delta (attention_delta_kernel, unchanged) and
// masking stay FP32 exactly as in the SIMT kernels; P's row sum l is over the unrounded
// FP32 P.
// Layout: tiles in shared memory with a row pitch of 68 floats (kAttentionTcPitch: the
// fragment reads a[row g][col t], g < 8, t < 4, fall in 32 distinct banks). Warp w of
// the 8 owns rows 16·(w / 2) .. +16 and columns 32·(w % 2) .. +32 of every 64 × 64
// product: four m16n8 accumulator tiles, thread (g = lane / 4, t = lane % 4) holding
// rows g, g + 8 and columns 8j + 2t, 8j + 2t + 1 of tile j. The bf16 k-step of 16
// columns x.. gives lane t's k slots 2t, 2t + 1, 2t + 8, 2t + 9 (PTX's A and B layouts)
// the columns x + t, + 4, + 8, + 12: an mma sums over all 16 slots, so any permutation
// of them that A and B share gives the same product, and this one reads shared memory
// as the TF32 k-steps do (a[g][x + t + 4u]: no bank conflicts). The forward's row max
// and row sum: the 4 lanes of a row by a xor butterfly (1, 2), then the two warps of a
// row band through shared memory, left half + right half (both warps get the same
// bits). The reduction index of each product runs over all 64 entries of the tile (the
// tiles' padding is zeros, P and dS are 0 outside [Tq) × [Tk)), in k-steps ascending
// (TF32: 8 of 8, bf16: 4 of 16): a fixed order, the same bits every run, no atomics. Any
// D, Dv up to 256 (chunks of 64 as above; D, Dv need not be multiples of 8 or 16: the
// zero padding covers them). A fully blocked row: O and dQ exact +0 (the dQ row is
// written 0 where lse is -inf), lse -inf. Accuracy: TF32 keeps 10 mantissa bits, so the
// products carry a relative error of ~1e-3 of their magnitudes (the lab's tolerance:
// 5e-3 of the largest |reference| of each output), as cuBLAS in TF32 mode; bf16 keeps 8
// (7 stored), a relative error of ~4e-3 of the magnitudes (the lab's tolerance: 2e-2 of
// the largest |reference| of each output; a CPU model of these roundings gives ~6e-3).
// Launch (both policies): block kAttentionThreads = 256; grids as the SIMT kernels
// (attention_tile_grid); dynamic shared memory attention_tf32_forward_shared_bytes()
// (70,656 bytes: 4 tiles of 64 × 68 floats + 2 × 2 × 64 floats of row partials) and
// attention_tf32_backward_shared_bytes() (87,040: 5 tiles) for dkdv and dq, above 48
// KiB, so the host sets cudaFuncAttributeMaxDynamicSharedMemorySize; a launch given
// less traps (so does a launch whose D or Dv needs more chunks than instantiated).
// Requires sm_80 or newer (traps below). Codegen's d64 entries (DV = DK =
// attention_chunks(...) = 1) take __launch_bounds__(256, 2) (two blocks per SM; 128
// registers, with some spills in dkdv and dq). Measured on an H200 (kernel_lab --bench,
// GPT-2's shape, causal; 2026-12-02), TF32: forward 0.417 ms (SIMT d64 0.711), backward
// 1.408 ms (SIMT 2.418): dkdv 0.766 (SIMT 1.322), dq 0.563 (SIMT 1.025). With
// __launch_bounds__(256, 1) instead: forward 0.579, dkdv 0.702, dq 0.556, backward
// 1.338 (so dkdv alone is ~8% faster at one block per SM). bf16: not measured yet.
constexpr int kAttentionTcPitch = 68;

__host__ __device__ constexpr long long attention_tf32_tile_bytes() {
  return (long long)kAttentionTile * kAttentionTcPitch * 4;
}
__host__ __device__ constexpr long long attention_tf32_forward_shared_bytes() {
  return 4 * attention_tf32_tile_bytes() + 2 * 2 * kAttentionTile * 4;
}
__host__ __device__ constexpr long long attention_tf32_backward_shared_bytes() {
  return 5 * attention_tf32_tile_bytes();
}

// x rounded to TF32 (10 mantissa bits; nearest, ties away from zero), as a float.
__device__ inline float attention_tf32(float x) { return tf32_round(x); }

// x rounded to bf16 (8 bits; nearest, ties to even), as a float: cvt puts its first
// source in the upper half, and bf16(0) = 0 fills the lower.
__device__ inline float attention_bf16(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(x), "f"(0.f));
  return __uint_as_float(r);
#else
  __trap();
  return x;
#endif
}

// Two bf16-valued floats as one bf16x2 register, lo in the lower half: their upper halves.
__device__ inline unsigned attention_pack_bf16(float lo, float hi) {
  return __byte_perm(__float_as_uint(lo), __float_as_uint(hi), 0x7632);
}

// The products' policies. A k-step of kStep columns x.. of a 64-wide product: load_a
// takes the A fragment from p = &a[row g][x + t] and p8 = &a[row g + 8][x + t], load_b
// the B fragment from p = &b(k = x + t, n = g), where k steps by ks floats; the values
// are already rounded (round() on the way into shared memory).
struct AttnTf32 {
  static constexpr int kStep = 8;
  struct A { unsigned r[4]; };
  struct B { unsigned r[2]; };
  __device__ static float round(float x) { return attention_tf32(x); }
  // k slots t, t + 4 (PTX's m16n8k8 tf32 layout): a0 row g, a1 row g + 8, a2, a3 slot t + 4.
  __device__ static A load_a(const float* p, const float* p8) {
    return {{__float_as_uint(p[0]), __float_as_uint(p8[0]), __float_as_uint(p[4]),
             __float_as_uint(p8[4])}};
  }
  __device__ static B load_b(const float* p, int ks) {
    return {{__float_as_uint(p[0]), __float_as_uint(p[4 * ks])}};
  }
  // c += a · b for one m16n8k8 tile.
  __device__ static void mma(float (&c)[4], const A& a, const B& b) {
    mma_tf32_m16n8k8(c, a.r[0], a.r[1], a.r[2], a.r[3], b.r[0], b.r[1]);
  }
};

struct AttnBf16 {
  static constexpr int kStep = 16;
  struct A { unsigned r[4]; };
  struct B { unsigned r[2]; };
  __device__ static float round(float x) { return attention_bf16(x); }
  // PTX's m16n8k16 bf16 layout: a0 = (row g, slots 2t, 2t + 1), a1 = (row g + 8, the
  // same), a2 = (row g, slots 2t + 8, 2t + 9), a3 = (row g + 8, the same); b0 = (slots
  // 2t, 2t + 1, column g), b1 = (slots 2t + 8, 2t + 9); the lower slot in the lower half.
  // Slots 2t, 2t + 1, 2t + 8, 2t + 9 hold columns x + t, + 4, + 8, + 12 (see above).
  __device__ static A load_a(const float* p, const float* p8) {
    return {{attention_pack_bf16(p[0], p[4]), attention_pack_bf16(p8[0], p8[4]),
             attention_pack_bf16(p[8], p[12]), attention_pack_bf16(p8[8], p8[12])}};
  }
  __device__ static B load_b(const float* p, int ks) {
    return {{attention_pack_bf16(p[0], p[4 * ks]), attention_pack_bf16(p[8 * ks], p[12 * ks])}};
  }
  // c += a · b for one m16n8k16 tile.
  __device__ static void mma(float (&c)[4], const A& a, const B& b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.r[0]), "r"(b.r[1]));
#else
    __trap();
#endif
  }
};

// The warp's place in a 64 × 64 product and the thread's in the m16n8 tiles.
struct AttnTcLane {
  int g, t, wr, wc;
  __device__ AttnTcLane() {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    g = lane >> 2;
    t = lane & 3;
    wr = 16 * (warp >> 1);
    wc = 32 * (warp & 1);
  }
  // Element e of tile j: row wr + g + 8(e / 2), column wc + 8j + 2t + e % 2.
  __device__ int row(int e) const { return wr + g + 8 * (e >> 1); }
  __device__ int col(int j, int e) const { return wc + 8 * j + 2 * t + (e & 1); }
};

// acc[j] += Σ_{x < 64} a[row][x] · b[col][x] (x ascending, Tc::kStep at a time).
template <class Tc>
__device__ inline void attention_tc_nt(float (&acc)[4][4], const float* a, const float* b) {
  constexpr int kP = kAttentionTcPitch;
  const AttnTcLane L;
  const float* ar = a + (L.wr + L.g) * kP + L.t;
  const float* br = b + (L.wc + L.g) * kP + L.t;
#pragma unroll
  for (int x = 0; x < kAttentionTile; x += Tc::kStep) {
    const typename Tc::A fa = Tc::load_a(ar + x, ar + 8 * kP + x);
#pragma unroll
    for (int j = 0; j < 4; ++j) Tc::mma(acc[j], fa, Tc::load_b(br + 8 * j * kP + x, 1));
  }
}

// acc[j] += Σ_{x < 64} a[row][x] · b[x][col] (x ascending, Tc::kStep at a time).
template <class Tc>
__device__ inline void attention_tc_nn(float (&acc)[4][4], const float* a, const float* b) {
  constexpr int kP = kAttentionTcPitch;
  const AttnTcLane L;
  const float* ar = a + (L.wr + L.g) * kP + L.t;
  const float* bc = b + L.t * kP + L.wc + L.g;
#pragma unroll
  for (int x = 0; x < kAttentionTile; x += Tc::kStep) {
    const typename Tc::A fa = Tc::load_a(ar + x, ar + 8 * kP + x);
#pragma unroll
    for (int j = 0; j < 4; ++j) Tc::mma(acc[j], fa, Tc::load_b(bc + x * kP + 8 * j, kP));
  }
}

// attention_load_tile into a pitch-68 tile, each value rounded by Tc::round. Where the
// feature stride is 1, the row stride a multiple of 4, the base 16-byte aligned and the
// chunk whole: float4 loads (thread t: features 4(t % 16).., rows t / 16 + 16n).
template <class Tc>
__device__ inline void attention_tc_load_tile(float* tile, const AttnView<float>& v,
                                              long long row0, long long rows, long long f0,
                                              long long feats) {
  constexpr int kP = kAttentionTcPitch;
  const int rn = int(rows - row0 < 64 ? rows - row0 : 64);
  const bool vec = v.fs == 1 && (v.rs & 3) == 0 && (f0 & 3) == 0 && f0 + 64 <= feats &&
                   (reinterpret_cast<unsigned long long>(v.p) & 15) == 0;
  if (vec) {
    const int c4 = threadIdx.x & 15, r0 = threadIdx.x >> 4;
    const float* src = v.p + (row0 + r0) * v.rs + f0 + 4 * c4;
    float* dst = tile + r0 * kP + 4 * c4;
#pragma unroll
    for (int n = 0; n < 4; ++n) {
      float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
      if (r0 + 16 * n < rn) x = *reinterpret_cast<const float4*>(src + 16 * n * v.rs);
      x.x = Tc::round(x.x);
      x.y = Tc::round(x.y);
      x.z = Tc::round(x.z);
      x.w = Tc::round(x.w);
      *reinterpret_cast<float4*>(dst + 16 * n * kP) = x;
    }
    return;
  }
  const int c = threadIdx.x & 63, r0 = threadIdx.x >> 6;
  const long long f = f0 + c;
  const float* src = v.p + (row0 + r0) * v.rs + (v.fs == 1 ? f : f * v.fs);
  const long long step = 4 * v.rs;
  float* dst = tile + r0 * kP + c;
  const bool in = f < feats;
#pragma unroll 4
  for (int n = 0; n < 16; ++n) {
    dst[n * 4 * kP] = (in && r0 + 4 * n < rn) ? Tc::round(src[0]) : 0.f;
    src += step;
  }
}

// The kept entries of a tile's elements as bits, bit 4j + e for element e (< 4) of
// n-tile j (< Tiles), at tile row row(e) and column col(j, e): rows are queries and
// columns keys, or (transposed) rows keys and columns queries. The rules of
// AttnKeep::bits; the tensor-core kernels' layouts give row and col.
template <int Tiles, class Row, class Col>
__device__ inline unsigned attention_kept_bits(const AttnKeep& K, long long q0, long long k0,
                                               bool transposed, Row row, Col col) {
  const int qn = int(K.tq - q0 < 64 ? K.tq - q0 : 64), kn = int(K.tk - k0 < 64 ? K.tk - k0 : 64);
  const long long gap = q0 - k0;
  const int diag = !K.causal ? 1 << 20 : gap > 128 ? 128 : gap < -128 ? -128 : int(gap);
  const int* const m = K.mask == nullptr ? nullptr : K.mask + q0 * K.rs + k0 * K.cs;
  // A whole tile inside the causal triangle (kj - qi <= 63 <= diag) with no mask: every
  // entry, without testing each (most tiles of a long causal sequence).
  if (m == nullptr && qn == 64 && kn == 64 && diag >= 63)
    return Tiles * 4 >= 32 ? 0xffffffffu : (1u << (Tiles * 4)) - 1u;
  unsigned kept = 0;
#pragma unroll
  for (int j = 0; j < Tiles; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int qi = transposed ? col(j, e) : row(e);
      const int kj = transposed ? row(e) : col(j, e);
      bool ok = qi < qn && kj < kn && kj - qi <= diag;
      if (ok && m != nullptr) ok = m[qi * K.rs + kj * K.cs] != 0;
      if (ok) kept |= 1u << (4 * j + e);
    }
  return kept;
}

// The kept entries of a 64 × 64 tile in the tensor-core layout (AttnTcLane).
__device__ inline unsigned attention_tc_kept(const AttnKeep& K, long long q0, long long k0,
                                             bool transposed) {
  const AttnTcLane L;
  return attention_kept_bits<4>(
      K, q0, k0, transposed, [&](int e) { return L.row(e); },
      [&](int j, int e) { return L.col(j, e); });
}

template <class Tc, int DV>
__device__ void attention_forward_tc_kernel(const float* q, Dims qd, const float* k, Dims kd,
                                            const float* v, Dims vd, const int* mask, Dims md,
                                            float* out, Dims od, float* lse, long long causal,
                                            double scale) {
  constexpr int kT = kAttentionTile, kP = kAttentionTcPitch;
  const int r = qd.rank;
  const long long tq = attention_extent(qd, r - 2), d = attention_extent(qd, r - 1);
  const long long tk = attention_extent(kd, r - 2), dv = attention_extent(vd, r - 1);
  const long long batches = attention_batch_count(qd);
  const int nd = attention_chunks(d), nv = attention_chunks(dv);
  attention_require(blockDim.x == kAttentionThreads && nv <= DV &&
                    dynamic_shared_bytes() >= attention_tf32_forward_shared_bytes());
  float* const sq = dynamic_shared<float>();
  float* const sk = sq + kT * kP;
  float* const sv = sk + kT * kP;
  float* const sp = sv + kT * kP;
  float* const red_max = sp + kT * kP;   // [2][64]: each column half's row maxima
  float* const red_sum = red_max + 2 * kT;  // [2][64]: its row sums
  const AttnTcLane L;
  const int half = (threadIdx.x >> 5) & 1;
  const float sc = float(scale);
  const float ninf = -positive_infinity<float>();
  const long long q_tiles = attention_tiles(tq);
  for (long long tile = blockIdx.x; tile < batches * q_tiles; tile += gridDim.x) {
    const long long b = tile % batches;
    const long long q0 = (q_tiles - 1 - tile / batches) * kT;  // the longest rows first
    const AttnView<float> Q(q, qd, b), K(k, kd, b), V(v, vd, b);
    const AttnKeep keep(mask, md, b, tq, tk, causal);
    float o[DV][4][4];
#pragma unroll
    for (int c = 0; c < DV; ++c)
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) o[c][j][e] = 0.f;
    float m[2], l[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) m[h] = ninf, l[h] = 0.f;
    if (nd == 1) {
      __syncthreads();  // the previous tile's reads of sq are done
      attention_tc_load_tile<Tc>(sq, Q, q0, tq, 0, d);
    }
    const long long k_end = causal ? (tk < q0 + kT ? tk : q0 + kT) : tk;
    for (long long k0 = 0; k0 < k_end; k0 += kT) {
      float s[4][4];
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[j][e] = 0.f;
      for (int c = 0; c < nd; ++c) {
        __syncthreads();
        if (nd > 1) attention_tc_load_tile<Tc>(sq, Q, q0, tq, c * kT, d);
        attention_tc_load_tile<Tc>(sk, K, k0, tk, c * kT, d);
        __syncthreads();
        attention_tc_nt<Tc>(s, sq, sk);
      }
      // The online softmax of the tile's rows: h = 0 rows L.row(0), h = 1 L.row(2).
      const unsigned kept = attention_tc_kept(keep, q0, k0, false);
      float mx[2] = {ninf, ninf};
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          s[j][e] *= sc;
          if ((kept >> (4 * j + e) & 1u) && !(s[j][e] <= mx[e >> 1])) mx[e >> 1] = s[j][e];
        }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
#pragma unroll
        for (int x = 1; x < 4; x <<= 1) {
          const float other = __shfl_xor_sync(0xffffffffu, mx[h], x);
          mx[h] = other > mx[h] ? other : mx[h];
        }
        if (L.t == 0) red_max[half * kT + L.row(2 * h)] = mx[h];
      }
      __syncthreads();
      float alpha[2], sum[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float left = red_max[L.row(2 * h)], right = red_max[kT + L.row(2 * h)];
        const float row_max = right > left ? right : left;
        const float m_new = row_max > m[h] ? row_max : m[h];
        alpha[h] = 1.f;
        sum[h] = 0.f;
        if (m_new == ninf) {  // nothing kept yet in this row
#pragma unroll
          for (int j = 0; j < 4; ++j) s[j][2 * h] = 0.f, s[j][2 * h + 1] = 0.f;
        } else {
          alpha[h] = exp(m[h] - m_new);  // 0 while m is -inf
#pragma unroll
          for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 2 * h; e < 2 * h + 2; ++e) {
              s[j][e] = (kept >> (4 * j + e) & 1u) ? exp(s[j][e] - m_new) : 0.f;
              sum[h] += s[j][e];
            }
        }
        m[h] = m_new;
#pragma unroll
        for (int x = 1; x < 4; x <<= 1) sum[h] += __shfl_xor_sync(0xffffffffu, sum[h], x);
        if (L.t == 0) red_sum[half * kT + L.row(2 * h)] = sum[h];
      }
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          sp[L.row(e) * kP + L.col(j, e)] = Tc::round(s[j][e]);
#pragma unroll
          for (int c = 0; c < DV; ++c) o[c][j][e] *= alpha[e >> 1];
        }
      __syncthreads();  // red_sum and sp written
#pragma unroll
      for (int h = 0; h < 2; ++h)
        l[h] = l[h] * alpha[h] + (red_sum[L.row(2 * h)] + red_sum[kT + L.row(2 * h)]);
#pragma unroll
      for (int c = 0; c < DV; ++c) {
        if (c < nv) {
          if (c > 0) __syncthreads();  // the previous chunk's reads of sv done
          attention_tc_load_tile<Tc>(sv, V, k0, tk, c * kT, dv);
          __syncthreads();
          attention_tc_nn<Tc>(o[c], sp, sv);
        }
      }
    }
    // O = acc / l (exact zeros where nothing was kept), lse = m + log(l).
    const long long ob = attention_batch_offset(b, od);
    const long long ors = attention_stride(od, r - 2), ofs = attention_stride(od, r - 1);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const long long row = q0 + L.row(2 * h);
      if (row >= tq) continue;
      const bool any = l[h] > 0.f;
#pragma unroll
      for (int c = 0; c < DV; ++c)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int e = 2 * h; e < 2 * h + 2; ++e) {
            const long long f = c * kT + L.col(j, e);
            if (c < nv && f < dv)
              out[ob + row * ors + f * ofs] = any ? o[c][j][e] / l[h] : 0.f;
          }
      if (L.t == 0 && half == 0) lse[b * tq + row] = any ? m[h] + log(l[h]) : ninf;
    }
  }
}

template <class Tc, int DK, int DV>
__device__ void attention_dkdv_tc_kernel(const float* q, Dims qd, const float* k, Dims kd,
                                         const float* v, Dims vd, const int* mask, Dims md,
                                         const float* dout, Dims dod, const float* lse,
                                         const float* delta, float* dk, Dims dkd,
                                         float* dv_out, Dims dvd, long long causal,
                                         double scale) {
  constexpr int kT = kAttentionTile, kP = kAttentionTcPitch;
  const int r = qd.rank;
  const long long tq = attention_extent(qd, r - 2), d = attention_extent(qd, r - 1);
  const long long tk = attention_extent(kd, r - 2), dv = attention_extent(vd, r - 1);
  const long long batches = attention_batch_count(qd);
  const int nd = attention_chunks(d), nv = attention_chunks(dv);
  attention_require(blockDim.x == kAttentionThreads && nd <= DK && nv <= DV &&
                    dynamic_shared_bytes() >= attention_tf32_backward_shared_bytes());
  float* const sk = dynamic_shared<float>();
  float* const sv = sk + kT * kP;
  float* const sq = sv + kT * kP;
  float* const sdo = sq + kT * kP;
  float* const sp = sdo + kT * kP;
  const AttnTcLane L;
  const float sc = float(scale);
  const long long k_tiles = attention_tiles(tk);
  for (long long tile = blockIdx.x; tile < batches * k_tiles; tile += gridDim.x) {
    const long long b = tile % batches;
    const long long k0 = (tile / batches) * kT;  // causal: the first key tiles have the most
    const AttnView<float> Q(q, qd, b), K(k, kd, b), V(v, vd, b), G(dout, dod, b);
    const AttnKeep keep(mask, md, b, tq, tk, causal);
    float ak[DK][4][4], av[DV][4][4];
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
#pragma unroll
        for (int c = 0; c < DK; ++c) ak[c][j][e] = 0.f;
#pragma unroll
        for (int c = 0; c < DV; ++c) av[c][j][e] = 0.f;
      }
    __syncthreads();  // the previous tile's reads are done
    if (nd == 1) attention_tc_load_tile<Tc>(sk, K, k0, tk, 0, d);
    if (nv == 1) attention_tc_load_tile<Tc>(sv, V, k0, tk, 0, dv);
    for (long long q0 = causal ? k0 : 0; q0 < tq; q0 += kT) {
      // Sᵀ[key][query]: keys L.row(e), queries L.col(j, e).
      float s[4][4], dp[4][4];
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[j][e] = 0.f, dp[j][e] = 0.f;
      for (int c = 0; c < nd; ++c) {
        __syncthreads();
        if (nd > 1) attention_tc_load_tile<Tc>(sk, K, k0, tk, c * kT, d);
        attention_tc_load_tile<Tc>(sq, Q, q0, tq, c * kT, d);
        __syncthreads();
        attention_tc_nt<Tc>(s, sk, sq);
      }
      // dPᵀ[key][query] = Σ_f V[key][f] dO[query][f].
      for (int c = 0; c < nv; ++c) {
        __syncthreads();
        if (nv > 1) attention_tc_load_tile<Tc>(sv, V, k0, tk, c * kT, dv);
        attention_tc_load_tile<Tc>(sdo, G, q0, tq, c * kT, dv);
        __syncthreads();
        attention_tc_nt<Tc>(dp, sv, sdo);
      }
      // The queries' lse and delta: column L.col(j, x), x = e % 2.
      float row_lse[4][2], row_delta[4][2];
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int x = 0; x < 2; ++x) {
          const long long row = q0 + L.col(j, x);
          row_lse[j][x] = row < tq ? lse[b * tq + row] : -positive_infinity<float>();
          row_delta[j][x] = row < tq ? delta[b * tq + row] : 0.f;
        }
      const unsigned kept = attention_tc_kept(keep, q0, k0, true);
      // Pᵀ into shared memory (dS kept in dp).
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float p =
              attention_prob(s[j][e], sc, row_lse[j][e & 1], kept >> (4 * j + e) & 1u);
          dp[j][e] = p * (dp[j][e] - row_delta[j][e & 1]);
          sp[L.row(e) * kP + L.col(j, e)] = Tc::round(p);
        }
      // dV[key][f] += Σ_query Pᵀ[key][query] dO[query][f].
#pragma unroll
      for (int c = 0; c < DV; ++c) {
        if (c < nv) {
          __syncthreads();
          if (nv > 1) attention_tc_load_tile<Tc>(sdo, G, q0, tq, c * kT, dv);
          __syncthreads();
          attention_tc_nn<Tc>(av[c], sp, sdo);
        }
      }
      __syncthreads();  // the reads of Pᵀ are done
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) sp[L.row(e) * kP + L.col(j, e)] = Tc::round(dp[j][e]);
      // dK[key][f] += Σ_query dSᵀ[key][query] Q[query][f].
#pragma unroll
      for (int c = 0; c < DK; ++c) {
        if (c < nd) {
          __syncthreads();
          if (nd > 1) attention_tc_load_tile<Tc>(sq, Q, q0, tq, c * kT, d);
          __syncthreads();
          attention_tc_nn<Tc>(ak[c], sp, sq);
        }
      }
    }
    const long long kb = attention_batch_offset(b, dkd), vb = attention_batch_offset(b, dvd);
    const long long krs = attention_stride(dkd, r - 2), kfs = attention_stride(dkd, r - 1);
    const long long vrs = attention_stride(dvd, r - 2), vfs = attention_stride(dvd, r - 1);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const long long key = k0 + L.row(e);
      if (key >= tk) continue;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int c = 0; c < DK; ++c) {
          const long long f = c * kT + L.col(j, e);
          if (c < nd && f < d) dk[kb + key * krs + f * kfs] = ak[c][j][e] * sc;
        }
#pragma unroll
        for (int c = 0; c < DV; ++c) {
          const long long f = c * kT + L.col(j, e);
          if (c < nv && f < dv) dv_out[vb + key * vrs + f * vfs] = av[c][j][e];
        }
      }
    }
  }
}

template <class Tc, int DK>
__device__ void attention_dq_tc_kernel(const float* q, Dims qd, const float* k, Dims kd,
                                       const float* v, Dims vd, const int* mask, Dims md,
                                       const float* dout, Dims dod, const float* lse,
                                       const float* delta, float* dq, Dims dqd,
                                       long long causal, double scale) {
  constexpr int kT = kAttentionTile, kP = kAttentionTcPitch;
  const int r = qd.rank;
  const long long tq = attention_extent(qd, r - 2), d = attention_extent(qd, r - 1);
  const long long tk = attention_extent(kd, r - 2), dv = attention_extent(vd, r - 1);
  const long long batches = attention_batch_count(qd);
  const int nd = attention_chunks(d), nv = attention_chunks(dv);
  attention_require(blockDim.x == kAttentionThreads && nd <= DK &&
                    dynamic_shared_bytes() >= attention_tf32_backward_shared_bytes());
  float* const sq = dynamic_shared<float>();
  float* const sdo = sq + kT * kP;
  float* const sk = sdo + kT * kP;
  float* const sv = sk + kT * kP;
  float* const sp = sv + kT * kP;
  const AttnTcLane L;
  const float sc = float(scale);
  const float ninf = -positive_infinity<float>();
  const long long q_tiles = attention_tiles(tq);
  for (long long tile = blockIdx.x; tile < batches * q_tiles; tile += gridDim.x) {
    const long long b = tile % batches;
    const long long q0 = (q_tiles - 1 - tile / batches) * kT;
    const AttnView<float> Q(q, qd, b), K(k, kd, b), V(v, vd, b), G(dout, dod, b);
    const AttnKeep keep(mask, md, b, tq, tk, causal);
    float aq[DK][4][4];
#pragma unroll
    for (int c = 0; c < DK; ++c)
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) aq[c][j][e] = 0.f;
    float row_lse[2], row_delta[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const long long row = q0 + L.row(2 * h);
      row_lse[h] = row < tq ? lse[b * tq + row] : ninf;
      row_delta[h] = row < tq ? delta[b * tq + row] : 0.f;
    }
    __syncthreads();
    if (nd == 1) attention_tc_load_tile<Tc>(sq, Q, q0, tq, 0, d);
    if (nv == 1) attention_tc_load_tile<Tc>(sdo, G, q0, tq, 0, dv);
    const long long k_end = causal ? (tk < q0 + kT ? tk : q0 + kT) : tk;
    for (long long k0 = 0; k0 < k_end; k0 += kT) {
      float s[4][4], dp[4][4];
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[j][e] = 0.f, dp[j][e] = 0.f;
      for (int c = 0; c < nd; ++c) {
        __syncthreads();
        if (nd > 1) attention_tc_load_tile<Tc>(sq, Q, q0, tq, c * kT, d);
        attention_tc_load_tile<Tc>(sk, K, k0, tk, c * kT, d);
        __syncthreads();
        attention_tc_nt<Tc>(s, sq, sk);
      }
      for (int c = 0; c < nv; ++c) {
        __syncthreads();
        if (nv > 1) attention_tc_load_tile<Tc>(sdo, G, q0, tq, c * kT, dv);
        attention_tc_load_tile<Tc>(sv, V, k0, tk, c * kT, dv);
        __syncthreads();
        attention_tc_nt<Tc>(dp, sdo, sv);
      }
      const unsigned kept = attention_tc_kept(keep, q0, k0, false);
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float p =
              attention_prob(s[j][e], sc, row_lse[e >> 1], kept >> (4 * j + e) & 1u);
          sp[L.row(e) * kP + L.col(j, e)] = Tc::round(p * (dp[j][e] - row_delta[e >> 1]));
        }
      // dQ[query][f] += Σ_key dS[query][key] K[key][f].
#pragma unroll
      for (int c = 0; c < DK; ++c) {
        if (c < nd) {
          __syncthreads();
          if (nd > 1) attention_tc_load_tile<Tc>(sk, K, k0, tk, c * kT, d);
          __syncthreads();
          attention_tc_nn<Tc>(aq[c], sp, sk);
        }
      }
    }
    const long long qb = attention_batch_offset(b, dqd);
    const long long qrs = attention_stride(dqd, r - 2), qfs = attention_stride(dqd, r - 1);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const long long row = q0 + L.row(2 * h);
      if (row >= tq) continue;
      const bool any = row_lse[h] != ninf;
#pragma unroll
      for (int c = 0; c < DK; ++c)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int e = 2 * h; e < 2 * h + 2; ++e) {
            const long long f = c * kT + L.col(j, e);
            if (c < nd && f < d) dq[qb + row * qrs + f * qfs] = any ? aq[c][j][e] * sc : 0.f;
          }
    }
  }
}

// The entry points: TF32 and bf16 products of the one implementation above.
template <int DV = 4>
__device__ void attention_forward_tf32_kernel(const float* q, Dims qd, const float* k, Dims kd,
                                              const float* v, Dims vd, const int* mask, Dims md,
                                              float* out, Dims od, float* lse, long long causal,
                                              double scale) {
  attention_forward_tc_kernel<AttnTf32, DV>(q, qd, k, kd, v, vd, mask, md, out, od, lse, causal,
                                            scale);
}
template <int DV = 4>
__device__ void attention_forward_bf16_kernel(const float* q, Dims qd, const float* k, Dims kd,
                                              const float* v, Dims vd, const int* mask, Dims md,
                                              float* out, Dims od, float* lse, long long causal,
                                              double scale) {
  attention_forward_tc_kernel<AttnBf16, DV>(q, qd, k, kd, v, vd, mask, md, out, od, lse, causal,
                                            scale);
}

template <int DK = 4, int DV = 4>
__device__ void attention_dkdv_tf32_kernel(const float* q, Dims qd, const float* k, Dims kd,
                                           const float* v, Dims vd, const int* mask, Dims md,
                                           const float* dout, Dims dod, const float* lse,
                                           const float* delta, float* dk, Dims dkd,
                                           float* dv_out, Dims dvd, long long causal,
                                           double scale) {
  attention_dkdv_tc_kernel<AttnTf32, DK, DV>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta,
                                             dk, dkd, dv_out, dvd, causal, scale);
}
template <int DK = 4, int DV = 4>
__device__ void attention_dkdv_bf16_kernel(const float* q, Dims qd, const float* k, Dims kd,
                                           const float* v, Dims vd, const int* mask, Dims md,
                                           const float* dout, Dims dod, const float* lse,
                                           const float* delta, float* dk, Dims dkd,
                                           float* dv_out, Dims dvd, long long causal,
                                           double scale) {
  attention_dkdv_tc_kernel<AttnBf16, DK, DV>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta,
                                             dk, dkd, dv_out, dvd, causal, scale);
}

template <int DK = 4>
__device__ void attention_dq_tf32_kernel(const float* q, Dims qd, const float* k, Dims kd,
                                         const float* v, Dims vd, const int* mask, Dims md,
                                         const float* dout, Dims dod, const float* lse,
                                         const float* delta, float* dq, Dims dqd,
                                         long long causal, double scale) {
  attention_dq_tc_kernel<AttnTf32, DK>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, dq,
                                       dqd, causal, scale);
}
template <int DK = 4>
__device__ void attention_dq_bf16_kernel(const float* q, Dims qd, const float* k, Dims kd,
                                         const float* v, Dims vd, const int* mask, Dims md,
                                         const float* dout, Dims dod, const float* lse,
                                         const float* delta, float* dq, Dims dqd,
                                         long long causal, double scale) {
  attention_dq_tc_kernel<AttnBf16, DK>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, dq,
                                       dqd, causal, scale);
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_ATTENTION_CUH_
