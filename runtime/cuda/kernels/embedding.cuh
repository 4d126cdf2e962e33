// embedding.cuh: torch.nn.functional.embedding (rows of a [V, D] table picked by int32
// ids) and its VJP, the rows of dy summed into [V, D] by id.
//
// Why no atomics: each element (v, d) of the gradient has one writer, which folds
// dy[p, d] over the positions p whose id is v in ascending order from 0 (the cpu
// kernel folds the same sequence: the same bits). embedding_grad gives each block
// kEmbeddingGradRows consecutive table rows (grid-stride over such groups): the
// block zeroes its rows, then walks the ids in chunks of 4·blockDim.x, compacts the
// positions whose id falls in its rows into shared memory in ascending order (warp
// ballots and a prefix over the warps), and for each, in that order, adds the dy row
// into its table row, thread t owning the columns d = t, t + blockDim.x, ... (16-byte
// vectors of columns where D and the pointers allow). So the
// table is written once plus once per position, dy read once, and each block reads
// the ids (from L2): O(V·D + positions·D + groups·positions) instead of the old
// O(V·D·positions).
//
// Out-of-range ids (computed ones; data fields are refused at load): embedding writes a
// row of NaN instead of reading outside the table; embedding_grad writes NaN everywhere
// (each block sees every id), so a bad lookup's gradient is never silently dropped.
// The forward copies rows: a warp per row for rows of at least 32 vectors, else a flat
// grid-stride loop.
// Launch: block 256 (a multiple of 32, at most 1024), grid = max(1, min(ceil(total /
// 256), 1056)); grid-stride (the forward over rows or elements, embedding_grad over
// groups of kEmbeddingGradRows rows).
// Generated entry points:
//   extern "C" __global__ void k_f32(const int* ids, const float* table, float* out,
//       long long positions, long long V, long long D) {
//     vouch::embedding_kernel<float>(ids, table, out, positions, V, D); }
//   extern "C" __global__ void k_f32(const int* ids, const float* dy, float* out,
//       long long positions, long long V, long long D) {
//     vouch::embedding_grad_kernel<float>(ids, dy, out, positions, V, D); }
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_EMBEDDING_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_EMBEDDING_CUH_

#include "common.cuh"
#include "gather.cuh"

namespace vouch {

// out [positions, D] row p = table [V, D] row ids[p]; NaN for an id outside [0, V).
// 16-byte vectors where D and the pointers allow: rows of at least 32 vectors a warp
// per output row (its id read once, eight of the row's vectors in flight per lane;
// 20.2 -> 17.4 us at 8192 rows of 768 against the flat loop, whose id and row loads
// wait on each other), shorter ones a flat grid-stride loop over the vectors;
// otherwise a flat grid-stride loop over the elements.
template <class T>
__device__ void embedding_kernel(const int* ids, const T* table, T* out,
                                 long long positions, long long V, long long D) {
  constexpr int W = Vec16<T>::kWidth;
  const bool vec = D % W == 0 && aligned16(table) && aligned16(out);
  if (vec && D / W < 32) {
    const long long per_row = D / W, total = positions * per_row;
    const Vec16<T>* rows = reinterpret_cast<const Vec16<T>*>(table);
    Vec16<T>* dst = reinterpret_cast<Vec16<T>*>(out);
    for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
      const long long p = index_div(idx, per_row), d = idx - p * per_row;
      const long long v = ids[p];
      Vec16<T> x;
      if (v >= 0 && v < V) {
        x = rows[v * per_row + d];
      } else {
#pragma unroll
        for (int e = 0; e < W; ++e) x.v[e] = lookup_nan<T>();
      }
      dst[idx] = x;
    }
    return;
  }
  if (vec) {
    const long long per_row = D / W;
    const int lane = threadIdx.x & 31;
    const long long warps = (long long)gridDim.x * (blockDim.x >> 5);
    for (long long p = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
         p < positions; p += warps) {
      const long long v = ids[p];
      const bool valid = v >= 0 && v < V;
      const Vec16<T>* row = reinterpret_cast<const Vec16<T>*>(table) + (valid ? v : 0) * per_row;
      Vec16<T>* dst = reinterpret_cast<Vec16<T>*>(out) + p * per_row;
      for (long long d0 = lane; d0 < per_row; d0 += 8 * 32) {
        Vec16<T> x[8];
#pragma unroll
        for (int u = 0; u < 8; ++u)
          if (d0 + u * 32 < per_row) {
            if (valid) {
              x[u] = row[d0 + u * 32];
            } else {
#pragma unroll
              for (int e = 0; e < W; ++e) x[u].v[e] = lookup_nan<T>();
            }
          }
#pragma unroll
        for (int u = 0; u < 8; ++u)
          if (d0 + u * 32 < per_row) dst[d0 + u * 32] = x[u];
      }
    }
    return;
  }
  const long long total = positions * D;
  for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
    const long long p = index_div(idx, D), d = idx - p * D;
    const long long v = ids[p];
    out[idx] = (v >= 0 && v < V) ? table[v * D + d] : lookup_nan<T>();
  }
}

// Table rows per embedding_grad block: V = 50257 gives 786 groups, one wave of
// 256-thread blocks on an H200.
constexpr long long kEmbeddingGradRows = 64;

// out [V, D] (v, d) = sum over p ascending with ids[p] = v of dy[p, d], from 0.
template <class T>
__device__ void embedding_grad_kernel(const int* ids, const T* dy, T* out,
                                      long long positions, long long V, long long D) {
  constexpr int kPerThread = 4;
  constexpr int W = Vec16<T>::kWidth;
  __shared__ int hits[kPerThread * 1024];  // this chunk's positions in this group, ascending
  __shared__ int warp_hits[kPerThread * 32];  // per (sub-chunk k, warp w), at k * warps + w
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const unsigned lanes_below = (1u << lane) - 1u;
  const long long chunk = kPerThread * static_cast<long long>(blockDim.x);
  const long long groups = (V + kEmbeddingGradRows - 1) / kEmbeddingGradRows;
  for (long long g = blockIdx.x; g < groups; g += gridDim.x) {
    const long long v0 = g * kEmbeddingGradRows;
    const long long v1 = v0 + kEmbeddingGradRows < V ? v0 + kEmbeddingGradRows : V;
    const bool vec = D % W == 0 && aligned16(dy) && aligned16(out);
    if (vec) {  // the group's rows are whole vectors
      Vec16<T>* zero_at = reinterpret_cast<Vec16<T>*>(out + v0 * D);
      Vec16<T> zero;
#pragma unroll
      for (int e = 0; e < W; ++e) zero.v[e] = T(0);
      for (long long i = threadIdx.x; i < (v1 - v0) * D / W; i += blockDim.x) zero_at[i] = zero;
    } else {
      for (long long i = threadIdx.x; i < (v1 - v0) * D; i += blockDim.x) out[v0 * D + i] = T(0);
    }
    bool bad = false;
    for (long long p0 = 0; p0 < positions; p0 += chunk) {
      // Position p0 + k * blockDim.x + t is thread t's k-th; ascending p is the order
      // (k, warp, lane), so a hit's slot is the hits of the (k, warp) pairs before its
      // own plus its lanes below.
      int id[kPerThread];
      unsigned ballot[kPerThread];
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) {
        const long long p = p0 + k * blockDim.x + threadIdx.x;
        id[k] = p < positions ? ids[p] : static_cast<int>(v0);
        bad = bad || id[k] < 0 || id[k] >= V;
      }
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) {
        const long long p = p0 + k * blockDim.x + threadIdx.x;
        ballot[k] = __ballot_sync(0xffffffffu, p < positions && id[k] >= v0 && id[k] < v1);
        if (lane == 0) warp_hits[k * warps + warp] = __popc(ballot[k]);
      }
      __syncthreads();
      int before = 0, count = 0;
      for (int j = 0; j < kPerThread * warps; ++j) count += warp_hits[j];
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) {
        if (k > 0)
          for (int j = (k - 1) * warps + warp; j < k * warps + warp; ++j) before += warp_hits[j];
        else
          for (int j = 0; j < warp; ++j) before += warp_hits[j];
        if (ballot[k] >> lane & 1u)
          hits[before + __popc(ballot[k] & lanes_below)] =
              static_cast<int>(p0 + k * blockDim.x + threadIdx.x);
      }
      __syncthreads();
      const int base = count;
      // Thread t owns columns t, t + blockDim.x, ... (with vectors: t's W columns,
      // and so on): each element's adds in p order.
      for (int h = 0; h < base; ++h) {
        const long long p = hits[h];
        T* row = out + static_cast<long long>(ids[p]) * D;
        const T* src = dy + p * D;
        if (vec) {
          Vec16<T>* row_v = reinterpret_cast<Vec16<T>*>(row);
          const Vec16<T>* src_v = reinterpret_cast<const Vec16<T>*>(src);
          for (long long d = threadIdx.x; d < D / W; d += blockDim.x) {
            Vec16<T> a = row_v[d];
            const Vec16<T> b = src_v[d];
#pragma unroll
            for (int e = 0; e < W; ++e) a.v[e] += b.v[e];
            row_v[d] = a;
          }
        } else {
          for (long long d = threadIdx.x; d < D; d += blockDim.x) row[d] += src[d];
        }
      }
      __syncthreads();  // hits, warp_hits are rewritten by the next chunk
    }
    if (__syncthreads_or(bad))
      for (long long i = threadIdx.x; i < (v1 - v0) * D; i += blockDim.x)
        out[v0 * D + i] = lookup_nan<T>();
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_EMBEDDING_CUH_
