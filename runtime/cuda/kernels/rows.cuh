// rows.cuh: a short contiguous row held in registers by a group of threads (one warp,
// or the whole 256-thread block), and the group's fixed-order reductions over it.
//
// Why: softmax, layer_norm and their VJPs on the rows a model has (a last axis of 768
// or 3072) are bound by memory; a row kept in registers is read from memory once,
// with 16-byte loads, instead of once per statistic (llm.c's warp-per-row kernels).
// Rows longer than a group can hold take the kernels' general paths.
//
// Layout: slot s = j * W + e (j < P / W, e < W) of thread t holds element
//   vector layout (n % W == 0, 16-byte aligned rows):  k = (j * G + t) * W + e
//   scalar layout (otherwise):                          k = s * G + t
// W = 16 / sizeof(T) (float4, double2). Both layouts cover G * P elements.
//
// Reductions: each thread folds its slots in slot order (s ascending), then the group
// combines: a warp by a butterfly of xor shuffles (lane i and lane i ^ h exchange and
// combine, h = 16, 8, ..., 1: every lane ends with the same bits), a block by each
// warp's butterfly and then the 8 warp results in warp order, by every thread. The
// order depends only on the row's length and the layout: no atomics, the same bits
// every run.
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_ROWS_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_ROWS_CUH_

#include "common.cuh"

namespace vouch {

// The warps' values v (each warp's lanes hold the same v, e.g. after a butterfly)
// combined in warp order, in every thread of the block (blockDim.x a multiple of 32,
// at most 1024). `scratch` holds blockDim.x / 32 values (shared).
template <class T, class Combine>
__device__ inline T combine_warps(T v, Combine combine, T* scratch) {
  __syncthreads();  // the previous reduction's reads of scratch are done
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  T total = scratch[0];
  for (int w = 1; w < int(blockDim.x >> 5); ++w) total = combine(total, scratch[w]);
  return total;
}

// The combination of every thread's v over the whole block (blockDim.x a multiple of
// 32, at most 1024): each warp's butterfly of xor shuffles, then the warps in order.
// `scratch` holds 32 values (shared).
template <class T, class Combine>
__device__ inline T block_reduce(T v, Combine combine, T* scratch) {
#pragma unroll
  for (int h = 16; h > 0; h >>= 1) v = combine(v, __shfl_xor_sync(0xffffffffu, v, h));
  return combine_warps(v, combine, scratch);
}

// A group of G threads working on one row: G = 32 (a warp; `rank` the lane) or
// G = 256 (the block; blockDim.x must be 256).
template <int G>
struct RowGroup {
  static_assert(G == 32 || G == 256, "a warp or a 256-thread block");
  static constexpr int kGroupsPerBlock = G == 32 ? 8 : 1;  // of a 256-thread block
  __device__ static int rank() { return G == 32 ? int(threadIdx.x & 31) : int(threadIdx.x); }
  // This group's first row and the step between its rows (grid-stride; warps: any
  // block of whole warps).
  __device__ static long long first() {
    return G == 32 ? (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)
                   : (long long)blockIdx.x;
  }
  __device__ static long long step() {
    return G == 32 ? (long long)gridDim.x * (blockDim.x >> 5) : (long long)gridDim.x;
  }

  // The combination of every member's v, in every member (see the top of the file).
  // `scratch` holds 8 values (shared); unused for a warp.
  template <class T, class Combine>
  __device__ static T reduce(T v, Combine combine, T* scratch) {
#pragma unroll
    for (int h = 16; h > 0; h >>= 1) v = combine(v, __shfl_xor_sync(0xffffffffu, v, h));
    if constexpr (G == 32) {
      return v;
    } else {
      return combine_warps(v, combine, scratch);
    }
  }
  // (A warp needs no scratch.)
  template <class T>
  __device__ static T sum(T v, T* scratch = nullptr) {
    return reduce(v, SumCombine(), scratch);
  }
};

// A row's output elements: O = T, or (a bf16 store, f32 rows only: the op table's
// bf16Result, a result only bf16 products read: cross_entropy_grad's dlogits,
// layer_norm's y) unsigned short bf16 bits, each value rounded to nearest even as it is
// stored (common.cuh's round_to_bf16).
template <class T>
__device__ inline void row_store(T* p, T v) { *p = v; }
__device__ inline void row_store(unsigned short* p, float v) { *p = round_to_bf16(v); }
// A Vec16<T> of values at p (row_vec_aligned(p)): one 16-byte store, or 8 bytes of bf16.
template <class T>
__device__ inline void row_store_vec(T* p, const Vec16<T>& v) {
  *reinterpret_cast<Vec16<T>*>(p) = v;
}
__device__ inline void row_store_vec(unsigned short* p, const Vec16<float>& v) {
  *reinterpret_cast<uint2*>(p) =
      make_uint2(round_to_bf16(v.v[0]) | unsigned(round_to_bf16(v.v[1])) << 16,
                 round_to_bf16(v.v[2]) | unsigned(round_to_bf16(v.v[3])) << 16);
}
// Whether p may take row_store_vec of W elements (W of O's size: 16 bytes, or 8 of bf16).
template <int W, class O>
__device__ inline bool row_vec_aligned(const O* p) {
  return reinterpret_cast<unsigned long long>(p) % (W * sizeof(O)) == 0;
}

// P elements of a row per thread, in the layout above.
template <class T, int G, int P>
struct RowSlots {
  static constexpr int W = Vec16<T>::kWidth;
  static_assert(P % W == 0, "whole vectors per thread");
  T v[P];

  // Element index of slot s for thread t (an int: the row holds at most G * P).
  __device__ static int index(int s, int t, bool vec) {
    return vec ? ((s / W) * G + t) * W + s % W : s * G + t;
  }
  // v[s] = row[index(s)] where index(s) < n, `fill` elsewhere.
  // n <= G * P (row_fits): the indices are ints.
  __device__ void load(const T* row, long long row_length, int t, bool vec, T fill) {
    const int n = int(row_length);
    if (vec) {
#pragma unroll
      for (int j = 0; j < P / W; ++j) {
        const int k = (j * G + t) * W;
        if (k < n) {
          const Vec16<T> x = *reinterpret_cast<const Vec16<T>*>(row + k);
#pragma unroll
          for (int e = 0; e < W; ++e) v[j * W + e] = x.v[e];
        } else {
#pragma unroll
          for (int e = 0; e < W; ++e) v[j * W + e] = fill;
        }
      }
    } else {
#pragma unroll
      for (int s = 0; s < P; ++s) {
        const int k = s * G + t;
        v[s] = k < n ? row[k] : fill;
      }
    }
  }
  // row[index(s)] = v[s] where index(s) < n; O = T, or bf16 bits (row_store: each value
  // rounded as it is stored). `vec`: row's vectors aligned for O (row_vec_aligned<W>).
  template <class O>
  __device__ void store(O* row, long long row_length, int t, bool vec) const {
    const int n = int(row_length);
    if (vec) {
#pragma unroll
      for (int j = 0; j < P / W; ++j) {
        const int k = (j * G + t) * W;
        if (k < n) {
          Vec16<T> x;
#pragma unroll
          for (int e = 0; e < W; ++e) x.v[e] = v[j * W + e];
          row_store_vec(row + k, x);
        }
      }
    } else {
#pragma unroll
      for (int s = 0; s < P; ++s) {
        const int k = s * G + t;
        if (k < n) row_store(row + k, v[s]);
      }
    }
  }
};

// The groups a row of n takes (codegen instantiates each kernel for its rows' length,
// codegen/recipes/NormalizationRecipe.cpp mirrors these two): a warp up to 1024
// elements, the block up to 4096, and P = ceil(n / G) rounded up to a multiple of 4
// (whole vectors of f32 and f64); beyond, G = P = 0: the general path. Registers hold
// P elements per array, so P is as small as the row allows; codegen also gives the f32
// entry points of softmax, its VJP, masked_softmax and layer_norm __launch_bounds__(256,
// 4) (64 registers, four blocks per SM: faster than the compiler's own choice, without
// spills), f64 (256, 2); layer_norm_grad f32 (256, 2).
__host__ __device__ constexpr int row_group_for(long long n) {
  return n <= 32 * 32 ? 32 : n <= 256 * 16 ? 256 : 0;
}
__host__ __device__ constexpr int row_slots_for(long long n) {
  return row_group_for(n) == 0
             ? 0
             : int((n + row_group_for(n) - 1) / row_group_for(n) + 3) / 4 * 4;
}

// Whether a row of n along the last axis (inner == 1) takes the register path of a
// kernel instantiated for groups of G threads holding P elements each: P > 0, the row
// fits, and the block is what the groups assume (warps: whole warps; the block: 256
// threads). Any (G, P) the row fits is correct; row_group_for / row_slots_for give
// the fastest.
template <int G, int P>
__device__ inline bool row_fits(long long n, long long inner) {
  return P > 0 && inner == 1 && n <= (long long)G * P &&
         (G == 32 ? (blockDim.x & 31) == 0 : blockDim.x == 256);
}

// Bit s set where slot s of thread t is inside a row of n (P <= 32).
template <class T, int G, int P>
__device__ inline unsigned in_row_bits(long long row_length, int t, bool vec) {
  static_assert(P <= 32, "one bit per slot");
  const int n = int(row_length);
  unsigned bits = 0;
#pragma unroll
  for (int s = 0; s < P; ++s)
    if (RowSlots<T, G, P>::index(s, t, vec) < n) bits |= 1u << s;
  return bits;
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_ROWS_CUH_
