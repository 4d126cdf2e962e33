// index.cuh: ops whose result elements each copy one input element: broadcast and
// permute, as one gather through an index map.
//
// Why one kernel: a broadcast (a repeated axis reads with stride 0) and a permute (each
// result axis reads with the stride of the input axis it came from) differ only in the
// strides, so both are out[i] = in[dims_offset(i, map)], with the map an argument.
//
// map.extent: the result shape; map.stride: the input stride of each result axis (0 for
// a repeated axis, or for an input axis of extent 1 broadcast to more).
// Launch: block 256, grid = max(1, min(ceil(n / 256), 1056)); grid-stride.
// Generated entry point:
//   extern "C" __global__ void k_f32(const float* in, float* out, vouch::Dims map,
//       long long n) { vouch::gather_kernel<float>(in, out, map, n); }
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_INDEX_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_INDEX_CUH_

#include "common.cuh"

namespace vouch {

// Writes are coalesced (consecutive i); reads follow the map.
template <class T>
__device__ void gather_kernel(const T* in, T* out, const Dims& map, long long n) {
  for (long long i = grid_stride_begin(); i < n; i += grid_stride_step())
    out[i] = in[dims_offset(i, map)];
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_INDEX_CUH_
