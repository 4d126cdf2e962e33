// conv.cuh: a convolution's windows as columns (im2col) and their adjoint, columns folded
// back into an image (col2im). With cuBLAS products through transpose flags between them
// they are conv and conv_transpose, forward and backward (ir/VouchOps.td, "Convolution";
// the geometry in conv_geometry.h):
//
//   conv:            y = W·im2col(x)          dW = dy·im2col(x)ᵀ   dx = col2im(Wᵀ·dy)
//   conv_transpose:  y = col2im(Wᵀ·x)          dW = x·im2col(dy)ᵀ   dx = W·im2col(dy)
//
// with every batch entry's windows side by side in the columns (the products contract
// over them at once: no per-sample launches, no batch reduction).
//
// Why no atomics: col2im gives each image element one thread, which folds the columns'
// terms that land on it in ascending kernel-offset order (row-major over the kernel
// axes) from 0; at most one window per offset covers an element. The cpu kernel
// (runtime/cpu_kernels.h's col2im) folds the same sequence, so both give the same bits,
// run after run. im2col is a copy (zeros in the padding).
//
// One thread per output element, grid-stride, consecutive threads along the columns'
// last axes (im2col: a row's windows, so its writes coalesce and, for stride 1, its reads
// too) or the image's (col2im). Indices are 64-bit; every product they are formed from
// fits the UInt32 CUDA ABI (the gate's obligation), so they divide in 32 bits.
// Launch: block 256, grid = max(1, min(ceil(total / 256), 1056)).
// Generated entry points (the geometry as 21 integers, conv_geometry.h's field order):
//   extern "C" __global__ void k_f32(const float* image, float* columns, long long n,
//       long long c, long long g, long long s0, ..., long long d2) {
//     vouch::im2col_kernel<float>(image, columns, vouch::ConvGeometry{n, c, g, ...}); }
//   extern "C" __global__ void k_f32(const float* columns, float* image, long long n, ...) {
//     vouch::col2im_kernel<float>(columns, image, vouch::ConvGeometry{n, c, g, ...}); }
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_CONV_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_CONV_CUH_

#include "common.cuh"
#include "conv_geometry.h"

namespace vouch {

// The window o and kernel offset k (each row-major over three axes) split into their
// per-axis coordinates, the last axis peeled first.
__device__ inline void conv_split(long long o, long long k, const ConvGeometry& g,
                                  long long (&o_axis)[3], long long (&k_axis)[3]) {
#pragma unroll
  for (int a = 2; a >= 0; --a) {
    const long long oq = index_div(o, g.grid[a]), kq = index_div(k, g.kernel[a]);
    o_axis[a] = o - oq * g.grid[a];
    k_axis[a] = k - kq * g.kernel[a];
    o = oq;
    k = kq;
  }
}

// columns [G, C/G·K, N, g0, g1, g2] = image [N, C, s0, s1, s2] at each window's position
// for its row's kernel offset, 0 in the padding.
template <class T>
__device__ void im2col_kernel(const T* image, T* columns, ConvGeometry g) {
  const long long windows = conv_windows(g), offsets = conv_offsets(g);
  const long long columns_per_row = g.batch * windows;
  const long long total = g.channels * offsets * columns_per_row;  // G · C/G·K rows
  for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
    const long long row = index_div(idx, columns_per_row), column = idx - row * columns_per_row;
    const long long n = index_div(column, windows);
    const long long channel = index_div(row, offsets);  // g·C/G + c: the image's channel
    long long o[3], k[3];
    conv_split(column - n * windows, row - channel * offsets, g, o, k);
    long long offset = n * g.channels + channel;
    bool inside = true;
#pragma unroll
    for (int a = 0; a < 3; ++a) {
      const long long p = o[a] * g.stride[a] - g.padding[a] + k[a] * g.dilation[a];
      inside = inside && p >= 0 && p < g.image[a];
      offset = offset * g.image[a] + p;
    }
    columns[idx] = inside ? image[offset] : T(0);
  }
}

// image [N, C, s0, s1, s2] element (n, channel, p) = the sum, over the kernel offsets k in
// ascending order whose window o (o·stride − padding + k·dilation = p on every axis, o in
// the grid) exists, of columns [G, C/G·K, N, *grid] at row channel·K + k (the group's rows
// start at g·C/G·K: the same index), column (n, o); from 0.
template <class T>
__device__ void col2im_kernel(const T* columns, T* image, ConvGeometry g) {
  const long long positions = conv_image_positions(g), windows = conv_windows(g);
  const long long offsets = conv_offsets(g);
  const long long total = g.batch * g.channels * positions;
  for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
    const long long nc = index_div(idx, positions);  // n·C + channel
    const long long n = index_div(nc, g.channels), channel = nc - n * g.channels;
    long long rest = idx - nc * positions, p[3];
#pragma unroll
    for (int a = 2; a >= 0; --a) {
      const long long q = index_div(rest, g.image[a]);
      p[a] = rest - q * g.image[a];
      rest = q;
    }
    T acc = T(0);
    long long k = 0;  // the kernel offset, row-major: ascending
    for (long long k0 = 0; k0 < g.kernel[0]; ++k0)
      for (long long k1 = 0; k1 < g.kernel[1]; ++k1)
        for (long long k2 = 0; k2 < g.kernel[2]; ++k2, ++k) {
          const long long ks[3] = {k0, k1, k2};
          long long window = 0;
          bool covered = true;
#pragma unroll
          for (int a = 0; a < 3; ++a) {
            const long long t = p[a] + g.padding[a] - ks[a] * g.dilation[a];
            const long long o = t >= 0 ? index_div(t, g.stride[a]) : -1;
            covered = covered && t >= 0 && o * g.stride[a] == t && o < g.grid[a];
            window = window * g.grid[a] + o;
          }
          if (covered) acc += columns[((channel * offsets + k) * g.batch + n) * windows + window];
        }
    image[idx] = acc;
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_CONV_CUH_
