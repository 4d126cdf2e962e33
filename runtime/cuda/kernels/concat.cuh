// concat.cuh: torch.cat, the inputs one after another along one axis, as one kernel.
//
// Why one launch for all inputs: each output element finds the input it comes from (a
// walk over the NIn extents, NIn a template parameter, so the walk is unrolled), so the
// result is written by one kernel with one writer per element, however many inputs.
//
// The output is row-major [outer, n, inner] around the axis, n the sum of the inputs'
// extents there; input k is [outer, extent[k], inner]. 64-bit indices; divisions
// through index_div. Launch: block 256, grid = max(1, min(ceil(total / 256), 1056));
// grid-stride. Generated entry point for two inputs:
//   extern "C" __global__ void k_f32(float* out, const float* i0, const float* i1,
//       long long e0, long long e1, long long outer, long long n, long long inner) {
//     const float* in[] = {i0, i1}; const long long extent[] = {e0, e1};
//     vouch::concat_kernel<2>(out, in, extent, outer, n, inner); }
// and concat_quads_kernel<2> with the arguments counted in quads (grid from total / 4).
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_CONCAT_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_CONCAT_CUH_

#include "common.cuh"

namespace vouch {

template <int NIn, class T>
__device__ void concat_kernel(T* out, const T* const* in, const long long* extent,
                              long long outer, long long n, long long inner) {
  static_assert(NIn >= 1, "concat joins at least one input");
  const long long total = outer * n * inner;
  for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
    const long long q = index_div(idx, inner), i = idx - q * inner;
    const long long o = index_div(q, n);
    long long a = q - o * n;  // the entry of the axis, then its place in input k
    int k = 0;
#pragma unroll
    for (int c = 0; c < NIn - 1; ++c)
      if (k == c && a >= extent[c]) {
        a -= extent[c];
        k = c + 1;
      }
    out[idx] = in[k][(o * extent[k] + a) * inner + i];
  }
}

// concat_kernel on quads (common.cuh): the same arguments counted in quads (inner / 4
// where inner is a multiple of 4; else, inner 1, every extent and n / 4).
template <int NIn, class T>
__device__ void concat_quads_kernel(T* out, const T* const* in, const long long* extent,
                                    long long outer, long long n, long long inner) {
  const Quad<T>* quads[NIn];
#pragma unroll
  for (int k = 0; k < NIn; ++k) quads[k] = reinterpret_cast<const Quad<T>*>(in[k]);
  concat_kernel<NIn, Quad<T>>(reinterpret_cast<Quad<T>*>(out), quads, extent, outer, n, inner);
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_CONCAT_CUH_
