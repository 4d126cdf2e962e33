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
// too; four windows per thread, stored as one vector, where the innermost grid axis
// holds whole quads) or the image's (col2im). The flat index and every extent it is split by fit in 32
// bits (the gate's UInt32 obligation), so it is split by multiply-high divisions
// (fast_divide.h): a division per axis per element was most of these kernels' time
// (2.4 ms for a CIFAR ResNet layer's im2col on an H100, docs/performance.md).
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
#include "fast_divide.h"

namespace vouch {

// An index below 2^32 split by the extents e0, e1, e2 of three row-major axes (e0 only
// bounds it): (i0, i1, i2) with i = (i0·e1 + i1)·e2 + i2, two divisions by FastDivide.
struct AxisSplit3 {
  FastDivide by1, by2;
  unsigned e1, e2;
  __device__ AxisSplit3(long long extent1, long long extent2)
      : by1{unsigned(extent1)}, by2{unsigned(extent2)}, e1(unsigned(extent1)),
        e2(unsigned(extent2)) {}
  __device__ void split(unsigned i, long long (&axis)[3]) const {
    const unsigned i01 = by2.quotient(i), i0 = by1.quotient(i01);
    axis[2] = i - i01 * e2;
    axis[1] = i01 - i0 * e1;
    axis[0] = i0;
  }
};

// The fast paths divide 32-bit indices: the gate refuses a geometry whose columns or
// image have 2^32 elements or more (ir/ConvGeometry.h); one that got here anyway stops
// the kernel with a CUDA error rather than compute a wrong answer.
__device__ inline void conv_require_32bit(long long total) {
  if (total > 0xffffffffLL) __trap();
}

// The image offset [n, channel, p0, ..] over the first kAxes spatial axes of what window o
// reads at kernel offset k (p = o·stride − padding + k·dilation per axis); `inside`
// cleared where a p falls in the padding.
template <int kAxes>
__device__ inline long long window_read(const ConvGeometry& g, unsigned n, unsigned channel,
                                        const long long (&o)[3], const long long (&k)[3],
                                        bool& inside) {
  long long offset = (long long)n * g.channels + channel;
#pragma unroll
  for (int a = 0; a < kAxes; ++a) {
    const long long p = o[a] * g.stride[a] - g.padding[a] + k[a] * g.dilation[a];
    inside = inside && p >= 0 && p < g.image[a];
    offset = offset * g.image[a] + p;
  }
  return offset;
}

// im2col where the innermost grid axis holds whole quads of windows (g2 a multiple of 4:
// codegen pads fewer spatial axes at the front, so this is the last real one): a thread
// per four consecutive columns, which share their row, batch entry and outer window
// coordinates, so the index is split once per quad and the quad stored as one vector.
template <class T>
__device__ void im2col_quads(const T* image, T* columns, ConvGeometry g, long long total) {
  const long long windows = conv_windows(g), offsets = conv_offsets(g);
  const unsigned quads_per_row = unsigned(g.batch * windows / 4);
  const FastDivide by_row{quads_per_row}, by_window_quads{unsigned(windows / 4)},
      by_offsets{unsigned(offsets)};
  const AxisSplit3 window_axes{g.grid[1], g.grid[2] / 4}, kernel_axes{g.kernel[1], g.kernel[2]};
  Quad<T>* out = reinterpret_cast<Quad<T>*>(columns);
  for (long long idx = grid_stride_begin(); idx < total / 4; idx += grid_stride_step()) {
    const unsigned q = unsigned(idx);
    const unsigned row = by_row.quotient(q), column_quad = q - row * quads_per_row;
    const unsigned n = by_window_quads.quotient(column_quad);
    const unsigned channel = by_offsets.quotient(row);  // g·C/G + c: the image's channel
    long long o[3], k[3];
    window_axes.split(column_quad - n * unsigned(windows / 4), o);
    kernel_axes.split(row - channel * unsigned(offsets), k);
    bool inside = true;
    const long long offset = window_read<2>(g, n, channel, o, k, inside);
    const long long first = 4 * o[2] * g.stride[2] - g.padding[2] + k[2] * g.dilation[2];
    const T* line = image + offset * g.image[2];
    Quad<T> v;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const long long p = first + j * g.stride[2];
      v.v[j] = inside && p >= 0 && p < g.image[2] ? line[p] : T(0);
    }
    out[idx] = v;
  }
}

// columns [G, C/G·K, N, g0, g1, g2] = image [N, C, s0, s1, s2] at each window's position
// for its row's kernel offset, 0 in the padding.
template <class T>
__device__ void im2col_kernel(const T* image, T* columns, ConvGeometry g) {
  const long long windows = conv_windows(g), offsets = conv_offsets(g);
  const long long columns_per_row = g.batch * windows;
  const long long total = g.channels * offsets * columns_per_row;  // G · C/G·K rows
  if (total == 0) return;  // empty: no extent to divide by
  conv_require_32bit(total);
  if (g.grid[2] % 4 == 0) return im2col_quads(image, columns, g, total);
  const FastDivide by_row{unsigned(columns_per_row)}, by_window{unsigned(windows)},
      by_offsets{unsigned(offsets)};
  const AxisSplit3 window_axes{g.grid[1], g.grid[2]}, kernel_axes{g.kernel[1], g.kernel[2]};
  for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
    const unsigned i = unsigned(idx);
    const unsigned row = by_row.quotient(i), column = i - row * unsigned(columns_per_row);
    const unsigned n = by_window.quotient(column);
    const unsigned channel = by_offsets.quotient(row);  // g·C/G + c: the image's channel
    long long o[3], k[3];
    window_axes.split(column - n * unsigned(windows), o);
    kernel_axes.split(row - channel * unsigned(offsets), k);
    bool inside = true;
    const long long offset = window_read<3>(g, n, channel, o, k, inside);
    columns[idx] = inside ? image[offset] : T(0);
  }
}

// The window o along axis a whose kernel offset reads image position p, given
// t = p + padding − k·dilation: t / stride when t ≥ 0 is on the stride's lattice and
// the window is in the grid, else -1 (conv_geometry.h's conv_window_of).
__device__ inline long long conv_window_from(long long t, const FastDivide& by_stride,
                                             long long stride, long long grid) {
  if (t < 0) return -1;
  const long long o = by_stride.quotient(unsigned(t));
  return o * stride == t && o < grid ? o : -1;
}

// image [N, C, s0, s1, s2] element (n, channel, p) = the sum, over the kernel offsets k in
// ascending order whose window o (o·stride − padding + k·dilation = p on every axis, o in
// the grid) exists, of columns [G, C/G·K, N, *grid] at row channel·K + k (the group's rows
// start at g·C/G·K: the same index), column (n, o); from 0. An axis's window is found
// once per offset on that axis (the outer axes' in the outer loops).
template <class T>
__device__ void col2im_kernel(const T* columns, T* image, ConvGeometry g) {
  const long long positions = conv_image_positions(g), windows = conv_windows(g);
  const long long offsets = conv_offsets(g);
  const long long total = g.batch * g.channels * positions;
  if (total == 0) return;
  conv_require_32bit(total);
  const FastDivide by_positions{unsigned(positions)}, by_channels{unsigned(g.channels)};
  const AxisSplit3 image_axes{g.image[1], g.image[2]};
  const FastDivide by_stride0{unsigned(g.stride[0])}, by_stride1{unsigned(g.stride[1])},
      by_stride2{unsigned(g.stride[2])};
  for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
    const unsigned i = unsigned(idx);
    const unsigned nc = by_positions.quotient(i);  // n·C + channel
    const unsigned n = by_channels.quotient(nc), channel = nc - n * unsigned(g.channels);
    long long p[3];
    image_axes.split(i - nc * unsigned(positions), p);
    const long long first_column = ((long long)channel * offsets * g.batch + n) * windows;
    T acc = T(0);
    for (long long k0 = 0; k0 < g.kernel[0]; ++k0) {
      const long long o0 = conv_window_from(p[0] + g.padding[0] - k0 * g.dilation[0],
                                            by_stride0, g.stride[0], g.grid[0]);
      for (long long k1 = 0; k1 < g.kernel[1]; ++k1) {
        const long long o1 = conv_window_from(p[1] + g.padding[1] - k1 * g.dilation[1],
                                              by_stride1, g.stride[1], g.grid[1]);
        for (long long k2 = 0; k2 < g.kernel[2]; ++k2) {
          const long long o2 = conv_window_from(p[2] + g.padding[2] - k2 * g.dilation[2],
                                                by_stride2, g.stride[2], g.grid[2]);
          if (o0 < 0 || o1 < 0 || o2 < 0) continue;
          const long long k = (k0 * g.kernel[1] + k1) * g.kernel[2] + k2;  // ascending
          acc += columns[first_column + k * g.batch * windows +
                         (o0 * g.grid[1] + o1) * g.grid[2] + o2];
        }
      }
    }
    image[idx] = acc;
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_CONV_CUH_
