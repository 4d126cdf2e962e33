// slice.cuh: slice (every step-th entry of one axis from start) and its VJP,
// slice_scatter (zeros with the slice's entries written back).
//
// Why its own kernels: a slice with a step is a gather with an offset, which index.cuh's
// map (strides only) cannot say; and slice_scatter must write every element of its
// result, the zeros too, so each output element decides for itself (no memset, no
// atomics: one writer per element, the same bits every run).
//
// Both see a row-major tensor as [outer, n, inner] around the sliced axis; the slice
// has m = ceil((end - start) / step) entries there. Indices are 64-bit (long long);
// divisions go through index_div (32-bit when both operands fit).
// Launch: block 256, grid = max(1, min(ceil(total / 256), 1056)); grid-stride.
// Generated entry points:
//   extern "C" __global__ void k_f32(const float* in, float* out, long long outer,
//       long long n, long long inner, long long start, long long step, long long m) {
//     vouch::slice_kernel<float>(in, out, outer, n, inner, start, step, m); }
// and the same for slice_scatter_kernel (n: the result's extent on the axis) and
// slice_quads_kernel (the arguments counted in quads; the grid from total / 4).
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_SLICE_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_SLICE_CUH_

#include "common.cuh"

namespace vouch {

// out [outer, m, inner] = in [outer, n, inner] at axis entries start + j·step.
template <class T>
__device__ void slice_kernel(const T* in, T* out, long long outer, long long n,
                             long long inner, long long start, long long step,
                             long long m) {
  const long long total = outer * m * inner;
  for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
    const long long q = index_div(idx, inner), i = idx - q * inner;
    const long long o = index_div(q, m), j = q - o * m;
    out[idx] = in[(o * n + start + j * step) * inner + i];
  }
}

// slice_kernel on quads (common.cuh): the same arguments counted in quads (inner / 4
// where inner is a multiple of 4; else, inner 1 and step 1, n, start and m / 4).
template <class T>
__device__ void slice_quads_kernel(const T* in, T* out, long long outer, long long n,
                                   long long inner, long long start, long long step,
                                   long long m) {
  slice_kernel<Quad<T>>(reinterpret_cast<const Quad<T>*>(in), reinterpret_cast<Quad<T>*>(out),
                        outer, n, inner, start, step, m);
}

// out [outer, n, inner]: in [outer, m, inner]'s element where the axis entry is
// start + j·step, zero elsewhere.
template <class T>
__device__ void slice_scatter_kernel(const T* in, T* out, long long outer, long long n,
                                     long long inner, long long start, long long step,
                                     long long m) {
  const long long total = outer * n * inner;
  for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
    const long long q = index_div(idx, inner), i = idx - q * inner;
    const long long o = index_div(q, n), a = q - o * n;
    T value = T(0);
    if (a >= start) {
      const long long j = index_div(a - start, step);
      if (a - start == j * step && j < m) value = in[(o * m + j) * inner + i];
    }
    out[idx] = value;
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_SLICE_CUH_
