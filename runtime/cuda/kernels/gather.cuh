// gather.cuh: torch.gather along one axis and its VJP, scatter_add (out of place).
//
// Both see their tensors as [outer, extent, inner] around the axis: x and the scatter's
// result are [outer, n, inner], index, src and the gather's result [outer, m, inner]
// (vouch asks index for x's extents on every other axis).
//
// Why no atomics: scatter_add gives each output element one thread, which reads x's
// element and then adds, j ascending, every src element whose index names it: the
// order of the sum is fixed (the cpu kernel folds the same sequence, so both give the
// same bits), at the cost of m index reads per output element.
//
// Out-of-range indices (computed ones; data fields are refused at load): gather writes
// NaN instead of reading outside x; scatter_add writes NaN over the whole fiber
// out[o, :, i] whose index column holds one (every thread of the fiber sees it).
// Indices are 64-bit (long long); divisions go through index_div.
// Launch: block 256, grid = max(1, min(ceil(total / 256), 1056)); grid-stride.
// Generated entry points:
//   extern "C" __global__ void k_f32(const float* in, const int* index, float* out,
//       long long outer, long long n, long long m, long long inner) {
//     vouch::gather_axis_kernel<float>(in, index, out, outer, n, m, inner); }
//   extern "C" __global__ void k_f32(const float* in, const int* index, const float* src,
//       float* out, long long outer, long long n, long long m, long long inner) {
//     vouch::scatter_add_axis_kernel<float>(in, index, src, out, outer, n, m, inner); }
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_GATHER_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_GATHER_CUH_

#include "common.cuh"

namespace vouch {

// A quiet NaN of T for a lookup outside its table (NVRTC has no <cmath> NAN).
template <class T>
__device__ inline T lookup_nan() {
  return sizeof(T) == 8 ? T(__longlong_as_double(0x7ff8000000000000ULL))
                        : T(__int_as_float(0x7fc00000));
}

// out [outer, m, inner] = in [outer, n, inner] at axis entry index[o, j, i].
template <class T>
__device__ void gather_axis_kernel(const T* in, const int* index, T* out, long long outer,
                                   long long n, long long m, long long inner) {
  const long long total = outer * m * inner;
  for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
    const long long q = index_div(idx, inner), i = idx - q * inner;
    const long long o = index_div(q, m);
    const long long a = index[idx];
    out[idx] = (a >= 0 && a < n) ? in[(o * n + a) * inner + i] : lookup_nan<T>();
  }
}

// out [outer, n, inner] = in, plus src [outer, m, inner] at axis entry index[o, j, i],
// j ascending per output element.
template <class T>
__device__ void scatter_add_axis_kernel(const T* in, const int* index, const T* src, T* out,
                                        long long outer, long long n, long long m,
                                        long long inner) {
  const long long total = outer * n * inner;
  for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
    const long long q = index_div(idx, inner), i = idx - q * inner;
    const long long o = index_div(q, n), a = q - o * n;
    T acc = in[idx];
    bool bad = false;
    for (long long j = 0; j < m; j++) {
      const long long k = (o * m + j) * inner + i;
      const long long at = index[k];
      bad = bad || at < 0 || at >= n;
      if (at == a) acc += src[k];
    }
    out[idx] = bad ? lookup_nan<T>() : acc;
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_GATHER_CUH_
