// index.cuh: ops whose result elements each copy one input element: broadcast and
// permute, as one gather through an index map.
//
// Why one kernel: a broadcast (a repeated axis reads with stride 0) and a permute (each
// result axis reads with the stride of the input axis it came from) differ only in the
// strides, so both are out[i] = in[dims_offset(i, map)], with the map an argument.
//
// map.extent: the result shape; map.stride: the input stride of each result axis (0 for
// a repeated axis, or for an input axis of extent 1 broadcast to more).
//
// gather_quads_kernel is the same gather four elements at a time, for maps whose last
// result axis reads the input's last axis in order (stride 1) in whole runs of four
// from offsets that are multiples of four (the last extent and every other stride
// multiples of 4): a permute that keeps the last axis (a transformer's heads,
// [B, T, H, D] <-> [B, H, T, D]) or a broadcast of rows. Its map counts quads (the last
// extent and the strides divided by 4, the last stride 1) and `quads` is n / 4: one
// index computed per four elements, each quad one 16-byte access in f32 (two in f64).
// The buffers' storage starts on 16-byte boundaries (cudaMalloc; the data fields'
// block), so every quad is aligned.
// Launch: block 256, grid = max(1, min(ceil(n / 256), 1056)) (quads: n / 4 for n);
// grid-stride.
// Generated entry points:
//   extern "C" __global__ void k_f32(const float* in, float* out, vouch::Dims map,
//       long long n) { vouch::gather_kernel<float>(in, out, map, n); }
//   extern "C" __global__ void k_f32(const float* in, float* out, vouch::Dims map,
//       long long quads) { vouch::gather_quads_kernel<float>(in, out, map, quads); }
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

template <class T>
__device__ void gather_quads_kernel(const T* in, T* out, const Dims& map, long long quads) {
  const Quad<T>* from = reinterpret_cast<const Quad<T>*>(in);
  Quad<T>* to = reinterpret_cast<Quad<T>*>(out);
  for (long long i = grid_stride_begin(); i < quads; i += grid_stride_step())
    to[i] = from[dims_offset(i, map)];
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_INDEX_CUH_
