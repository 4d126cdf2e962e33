// reduce.cuh: reduce_sum / reduce_mean / reduce_max / reduce_min over any set of axes,
// in a fixed order.
//
// Why fixed order: every result must be bitwise the same from run to run and with or
// without CUDA graphs, so there are no atomics; each output is one block's per-thread
// strided sums added in a fixed shared-memory tree (common.cuh). The shapes are
// arguments (two index maps), so one entry point serves every reduction of a model.
//
// Two kernels:
//  reduce_sum_kernel   any axes: one block per output. Launch: block 256 (the tree's
//                      width; partial[256]), grid = max(1, min(outputs, 4096));
//                      grid-stride over outputs.
//  column_sum_kernel   leading axes of a [rows, cols] row-major matrix (bias gradients):
//                      32 consecutive outputs per block, so each warp reads 128
//                      contiguous bytes; the rows in slabs (column_sum_slabs), each
//                      slab's sums added in order by the last block of the column to
//                      arrive. Launch: block (32, 32), grid ceil(cols / 32) * slabs;
//                      scratch partials (slabs * cols) and arrivals (ceil(cols / 32),
//                      zeroed), unused (null) with one slab.
//  reduce_extreme_kernel  max (or min) over any axes, one block per output, the same
//                      launch and tree as reduce_sum_kernel; NaN wins (torch.amax).
// Codegen picks column_sum when the reduced axes are the leading ones and there are at
// least 32 outputs (codegen/recipes/ReductionRecipe.cpp), for sums only.
//
// Generated entry points:
//   extern "C" __global__ void k_f32(const float* in, float* out, vouch::Dims kept,
//       vouch::Dims reduced, long long outputs, long long count, long long divisor) {
//     vouch::reduce_sum_kernel<float>(in, out, kept, reduced, outputs, count, divisor); }
//   extern "C" __global__ void k_f32(const float* in, float* out, long long rows,
//       long long cols, long long divisor, float* partials, unsigned* arrivals) {
//     vouch::column_sum_kernel<float>(in, out, rows, cols, divisor, partials, arrivals); }
// divisor: 1 for reduce_sum, the reduced element count for reduce_mean (the sum is
// divided by T(divisor) once, at the end, when divisor > 1).
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_REDUCE_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_REDUCE_CUH_

#include "common.cuh"

namespace vouch {

// kept: the input's kept axes (extents and input strides), walked by output index o;
// reduced: the reduced axes (extents and input strides), walked by r in [0, count).
// Thread t sums in[base + offset(r)] for r = t, t + blockDim.x, ... (ascending), then
// the tree adds the 256 partial sums; out[o] is written by thread 0.
template <class T>
__device__ void reduce_sum_kernel(const T* in, T* out, const Dims& kept, const Dims& reduced,
                                  long long outputs, long long count, long long divisor) {
  __shared__ T partial[256];
  // A reduced part that is one contiguous run (a last-axis sum): element r of the run
  // is in[base + r], read without the index map; the same elements, the same order.
  const bool run = reduced.rank == 1 && dims_last_stride(reduced) == 1;
  for (long long o = blockIdx.x; o < outputs; o += gridDim.x) {
    const long long base = dims_offset(o, kept);
    T sum = T(0);
    long long r = threadIdx.x;
    if (run) {  // up to sixteen loads in flight (the last round's predicated), same adds
      const T* at = in + base;
      for (; r < count; r += 16 * blockDim.x) {
        T v[16];
#pragma unroll
        for (int k = 0; k < 16; ++k)
          v[k] = r + k * blockDim.x < count ? at[r + k * blockDim.x] : T(0);
#pragma unroll
        for (int k = 0; k < 16; ++k)
          if (r + k * blockDim.x < count) sum += v[k];
      }
    }
    // Four loads in flight, added in the same ascending order (the same bits).
    for (; r + 3 * blockDim.x < count; r += 4 * blockDim.x) {
      T v[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) v[k] = in[base + dims_offset(r + k * blockDim.x, reduced)];
#pragma unroll
      for (int k = 0; k < 4; ++k) sum += v[k];
    }
    for (; r < count; r += blockDim.x) sum += in[base + dims_offset(r, reduced)];
    block_sum_tree(partial, sum);
    if (threadIdx.x == 0) out[o] = divisor > 1 ? partial[0] / T(divisor) : partial[0];
    __syncthreads();  // partial is rewritten by the next output
  }
}

// +inf of T (from its bits: NVRTC has no <limits>).
template <class T>
__device__ inline T positive_infinity();
template <>
__device__ inline float positive_infinity<float>() {
  return __int_as_float(0x7f800000);
}
template <>
__device__ inline double positive_infinity<double>() {
  return __longlong_as_double(0x7ff0000000000000LL);
}

// The larger (max) or smaller of a and b; NaN if either is NaN.
template <class T>
struct Extreme {
  bool max;
  __device__ T operator()(T a, T b) const {
    if (a != a) return a;
    if (b != b) return b;
    return (max ? b > a : b < a) ? b : a;
  }
};

// out[o] = max (or min) of the reduced elements of output o: each thread folds its
// strided elements (ascending), then the fixed tree combines the 256 partials. The
// result is exact (no rounding), so the order only decides which NaN propagates.
template <class T>
__device__ void reduce_extreme_kernel(const T* in, T* out, const Dims& kept,
                                      const Dims& reduced, long long outputs,
                                      long long count, bool max) {
  __shared__ T partial[256];
  const Extreme<T> combine{max};
  for (long long o = blockIdx.x; o < outputs; o += gridDim.x) {
    const long long base = dims_offset(o, kept);
    // Every thread starts from the slice's first element (a member of the slice,
    // so it changes no extreme); an empty slice gives -inf (+inf), as the fold's
    // identity.
    T acc = count > 0 ? in[base] : (max ? -positive_infinity<T>() : positive_infinity<T>());
    for (long long r = threadIdx.x; r < count; r += blockDim.x)
      acc = combine(acc, in[base + dims_offset(r, reduced)]);
    block_tree(partial, acc, combine);
    if (threadIdx.x == 0) out[o] = partial[0];
    __syncthreads();  // partial is rewritten by the next output
  }
}

// column_sum_kernel's row slabs: the rows split into `slabs` consecutive ranges of
// ceil(rows / slabs), each summed by its own blocks, so that a few hundred columns
// still fill the GPU: about 264 blocks of 32 x 32 (two per H200 SM), at least 256 rows
// (eight per thread) a slab, at least one. Codegen (ReductionRecipe.cpp) launches
// ceil(cols / 32) * slabs blocks and sizes the scratch from this rule (partials
// slabs * cols, arrivals ceil(cols / 32), only when slabs > 1).
__host__ __device__ inline long long column_sum_slabs(long long rows, long long cols) {
  const long long col_blocks = (cols + 31) / 32;
  long long slabs = 264 / col_blocks;
  if (slabs > rows / 256) slabs = rows / 256;
  return slabs < 1 ? 1 : slabs;
}

// in: [rows, cols] row-major; out[c] = sum over rows of in[r, c] (/ divisor). Block b
// takes column block b % col_blocks (32 columns) and slab b / col_blocks. Thread
// (x, y) owns column c = 32 (b % col_blocks) + x and sums the slab's rows r0 + y,
// r0 + y + 32, ... (ascending); the 32 row-phase sums of a column are then added in a
// fixed tree over y. With one slab that is the column's sum; otherwise the slab's sum
// goes to partials[slab][c] and the last of the column block's slabs to arrive (a
// ticket per column block, common.cuh's arrived_last) adds the slabs' sums in slab
// order, from 0. A fixed order for a given (rows, cols): the same bits every run.
// partial[32][33]: the padding column keeps the tree's column reads free of bank
// conflicts.
template <class T>
__device__ void column_sum_kernel(const T* in, T* out, long long rows, long long cols,
                                  long long divisor, T* partials, unsigned* arrivals) {
  __shared__ T partial[32][33];
  const long long col_blocks = (cols + 31) / 32;
  const long long slabs = gridDim.x / col_blocks;  // the launch: col_blocks * slabs
  const long long block_col = blockIdx.x % col_blocks, slab = blockIdx.x / col_blocks;
  const long long per_slab = (rows + slabs - 1) / slabs;
  const long long r0 = slab * per_slab, r1 = r0 + per_slab < rows ? r0 + per_slab : rows;
  const long long c = block_col * 32 + threadIdx.x;
  T sum = T(0);
  if (c < cols) {
    // Sixteen loads in flight, added in the same ascending order (the same bits).
    long long r = r0 + threadIdx.y;
    for (; r + 15 * 32 < r1; r += 16 * 32) {
      T v[16];
#pragma unroll
      for (int k = 0; k < 16; ++k) v[k] = in[(r + 32 * k) * cols + c];
#pragma unroll
      for (int k = 0; k < 16; ++k) sum += v[k];
    }
    for (; r < r1; r += 32) sum += in[r * cols + c];
  }
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  for (int s = 16; s > 0; s >>= 1) {
    if (threadIdx.y < s) partial[threadIdx.y][threadIdx.x] += partial[threadIdx.y + s][threadIdx.x];
    __syncthreads();
  }
  if (slabs == 1) {
    if (threadIdx.y == 0 && c < cols)
      out[c] = divisor > 1 ? partial[0][threadIdx.x] / T(divisor) : partial[0][threadIdx.x];
    return;
  }
  if (threadIdx.y == 0 && c < cols) partials[slab * cols + c] = partial[0][threadIdx.x];
  if (!arrived_last(arrivals + block_col, unsigned(slabs))) return;
  if (threadIdx.y == 0 && c < cols) {
    T total = T(0);
    for (long long s = 0; s < slabs; ++s) total += __ldcg(partials + s * cols + c);
    out[c] = divisor > 1 ? total / T(divisor) : total;
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_REDUCE_CUH_
