// embedding.cuh: torch.nn.functional.embedding (rows of a [V, D] table picked by int32
// ids) and its VJP, the rows of dy summed into [V, D] by id.
//
// Why no atomics: each element (v, d) of the gradient has one writer, which folds
// dy[p, d] over the positions p whose id is v in ascending order from 0 (the cpu
// kernel folds the same sequence: the same bits). embedding_grad gives each block
// kEmbeddingGradRows consecutive table rows (grid-stride over such groups): the
// block walks the ids in chunks of 4·blockDim.x, compacting the positions whose id
// falls in its rows (and that id's row in the group) into shared memory in ascending
// order (warp ballots, then a shuffle scan of the per-warp counts); then warp w takes
// the group's rows w, w + warps, ..., its lanes holding the row's columns (16-byte
// vectors where D and the pointers allow) while they fold the dy rows of that row's
// hits in order, and writes the row once: zeros where no id hits it. Only when a
// group's hits overflow the shared list (4 ids per thread of 512) are they added in
// batches, a later batch reading back the rows it adds to. So the table is written
// once, with no read-modify-write (86 -> 75.5 us at 8192 ids into [50257, 768], f32,
// against zeroing the rows, then adding each hit into its row in memory with every
// thread of the block, after a scan costing each thread 64 shared loads per chunk;
// storing the zeros first, while the ids are scanned, then adding the hits into
// memory, took 80 us), dy read once per hit, and each block reads the ids (from L2):
// O(V·D + positions·D + groups·positions).
//
// Out-of-range ids (computed ones; data fields are refused at load): embedding writes a
// row of NaN instead of reading outside the table; embedding_grad writes NaN everywhere
// (each block sees every id), so a bad lookup's gradient is never silently dropped.
// The forward copies rows: a warp per row for rows of at least 32 vectors, else a flat
// grid-stride loop.
// Launch: block 256 (a multiple of 32, at most 1024; embedding_grad at most 512),
// grid = max(1, min(ceil(total / 256), 1056)); grid-stride (the forward over rows or
// elements, embedding_grad over groups of kEmbeddingGradRows rows).
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
constexpr int kEmbeddingGradRows = 64;
// Ids a thread reads per chunk (the hits, positions in the group, a block holds before
// it adds them into its rows: the largest chunk, blocks of at most 512 threads), and
// the 16-byte vectors (or elements) of a row a lane holds per pass over the hits (a
// 768-wide f32 row in one pass). Measured at 8192 ids into [50257, 768] (f32): 8 ids
// and 8 vectors took 88-90 us (63+ registers, fewer blocks per SM); 4 and 6, 75.5 us.
constexpr int kEmbeddingGradIdsPerThread = 4;
constexpr int kEmbeddingGradSlots = 6;

__device__ inline void add_into(float& a, float b) { a += b; }
__device__ inline void add_into(double& a, double b) { a += b; }
template <class T>
__device__ inline void add_into(Vec16<T>& a, const Vec16<T>& b) {
#pragma unroll
  for (int e = 0; e < Vec16<T>::kWidth; ++e) a.v[e] += b.v[e];
}

// The table rows [v0, v0 + rows) of out, warp w taking rows w, w + warps, ...: row r
// folds dy's rows at hits[h] for the h < count (ascending) with row_of[h] == r, into
// zeros (`first`) or into what out holds, and is written once. A row with no hit is
// written only when `first` (zeros). V: the element type, a Vec16<T> or T itself.
template <class T, class V, int K>
__device__ void embedding_grad_add_hits(const int* hits, const unsigned char* row_of,
                                        int count, const T* dy, T* out, long long v0,
                                        long long rows, long long D, bool first) {
  constexpr int W = sizeof(V) / sizeof(T);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const long long width = D / W;  // elements of V per row
  const V* src = reinterpret_cast<const V*>(dy);
  V* dst = reinterpret_cast<V*>(out);
  for (long long r = warp; r < rows; r += warps) {
    bool any = first;
    for (int h = 0; h < count && !any; ++h) any = row_of[h] == r;
    if (!any) continue;  // (warp-uniform) nothing to add to a row already written
    V* row = dst + (v0 + r) * width;
    for (long long c0 = 0; c0 < width; c0 += 32 * K) {
      V acc[K];
#pragma unroll
      for (int j = 0; j < K; ++j) {
        const long long c = c0 + j * 32 + lane;
        if (first || c >= width) {
          acc[j] = V{};
        } else {
          acc[j] = row[c];
        }
      }
      for (int h = 0; h < count; ++h) {
        if (row_of[h] != r) continue;
        const V* from = src + static_cast<long long>(hits[h]) * width;
#pragma unroll
        for (int j = 0; j < K; ++j) {
          const long long c = c0 + j * 32 + lane;
          if (c < width) add_into(acc[j], from[c]);
        }
      }
#pragma unroll
      for (int j = 0; j < K; ++j) {
        const long long c = c0 + j * 32 + lane;
        if (c < width) row[c] = acc[j];
      }
    }
  }
}

// out [V, D] (v, d) = sum over p ascending with ids[p] = v of dy[p, d], from 0.
// (Rows, IdsPerThread, Slots: the kernel bench's other shapes; codegen and the lab
// take the defaults.)
template <class T, int Rows = kEmbeddingGradRows,
          int IdsPerThread = kEmbeddingGradIdsPerThread, int Slots = kEmbeddingGradSlots>
__device__ void embedding_grad_kernel(const int* ids, const T* dy, T* out,
                                      long long positions, long long V, long long D) {
  constexpr int kPerThread = IdsPerThread, kHits = IdsPerThread * 512;
  static_assert(IdsPerThread % 2 == 0, "the count scan's entries per lane");
  constexpr int W = Vec16<T>::kWidth;
  __shared__ int hits[kHits];  // positions in this group, ascending
  __shared__ unsigned char row_of[kHits];  // each hit's row in the group
  __shared__ int warp_hits[kPerThread * 32];  // per (sub-chunk k, warp w), at k * warps + w
  static_assert(Rows <= 256, "a hit's row must fit row_of");
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const unsigned lanes_below = (1u << lane) - 1u;
  const long long chunk = kPerThread * static_cast<long long>(blockDim.x);
  const long long groups = (V + Rows - 1) / Rows;
  const bool vec = D % W == 0 && aligned16(dy) && aligned16(out);
  for (long long g = blockIdx.x; g < groups; g += gridDim.x) {
    const long long v0 = g * Rows;
    const long long rows = v0 + Rows < V ? Rows : V - v0;
    auto add_hits = [&](int count, bool first) {
      if (vec)
        embedding_grad_add_hits<T, Vec16<T>, Slots>(hits, row_of, count, dy, out, v0, rows, D,
                                                    first);
      else
        embedding_grad_add_hits<T, T, Slots>(hits, row_of, count, dy, out, v0, rows, D, first);
    };
    bool bad = false, first = true;
    int held = 0;  // hits collected, not yet added
    for (long long p0 = 0; p0 < positions; p0 += chunk) {
      if (held + chunk > kHits) {  // this chunk might not fit: add them now
        add_hits(held, first);
        first = false;
        held = 0;
        __syncthreads();  // hits are rewritten below
      }
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
        ballot[k] = __ballot_sync(0xffffffffu, p < positions && id[k] >= v0 && id[k] < v0 + rows);
        if (lane == 0) warp_hits[k * warps + warp] = __popc(ballot[k]);
      }
      __syncthreads();
      // Each warp scans the (k, warp) counts with shuffles (lane l holds entries l * E
      // to l * E + E - 1 of at most kPerThread * 16), where a loop over them all cost
      // every thread kPerThread * warps shared loads per chunk.
      constexpr int E = kPerThread / 2;
      const int entries = kPerThread * warps;
      int below[E], run = 0;  // each entry's count before it within this lane
#pragma unroll
      for (int i = 0; i < E; ++i) {
        const int j = lane * E + i;
        below[i] = run;
        run += j < entries ? warp_hits[j] : 0;
      }
      int upto = run;  // inclusive over the lanes
#pragma unroll
      for (int offset = 1; offset < 32; offset *= 2) {
        const int other = __shfl_up_sync(0xffffffffu, upto, offset);
        if (lane >= offset) upto += other;
      }
      const int count = __shfl_sync(0xffffffffu, upto, 31);
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) {
        const int j = k * warps + warp;  // the same for the whole warp
        int within = below[0];
#pragma unroll
        for (int i = 1; i < E; ++i)
          if (j % E == i) within = below[i];
        const int before = held + __shfl_sync(0xffffffffu, upto - run + within, j / E);
        if (ballot[k] >> lane & 1u) {
          const int slot = before + __popc(ballot[k] & lanes_below);
          hits[slot] = static_cast<int>(p0 + k * blockDim.x + threadIdx.x);
          row_of[slot] = static_cast<unsigned char>(id[k] - v0);
        }
      }
      held += count;
      __syncthreads();  // hits are complete; warp_hits is rewritten by the next chunk
    }
    add_hits(held, first);
    if (__syncthreads_or(bad))
      for (long long i = threadIdx.x; i < rows * D; i += blockDim.x)
        out[v0 * D + i] = lookup_nan<T>();
    __syncthreads();  // hits are rewritten by the next group
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_EMBEDDING_CUH_
