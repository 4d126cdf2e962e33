// conv_geometry.h: a convolution's window geometry as the im2col / col2im kernels read
// it, one definition for the cpu kernels (runtime/cpu_kernels.h), the CUDA kernels
// (conv.cuh, compiled by NVRTC) and the kernel lab. Plain C++ that also compiles as CUDA
// device code, like dims.h and counter_rng.h: nothing from the standard library.
//
// The image is [N, C, s0, s1, s2] and its columns [G, C/G·K, N, g0, g1, g2]: row
// c·K + k of group g (K = k0·k1·k2 kernel offsets, k row-major over the kernel axes) and
// column (n, o) (o a window, row-major over the grid g0·g1·g2) hold the image element
// [n, g·C/G + c, p] with, on every spatial axis a,
//
//   p_a = o_a·stride_a − padding_a + k_a·dilation_a      (0 outside [0, s_a): padding)
//
// Codegen (codegen/recipes/ConvRecipe.cpp) pads 1-D and 2-D geometries to three axes
// in front, with extent 1, kernel 1, stride 1, padding 0, dilation 1, which changes no
// index (axis 2 is always the image's last). The assurance gate checks that every
// product the kernels form (the positions, windows and kernel offsets per image, the
// columns' rows and columns, ir/ConvGeometry.h) fits the UInt32 CUDA ABI, so their
// indices divide in 32 bits (fast_divide.h).
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_CONV_GEOMETRY_H_
#define VOUCH_RUNTIME_CUDA_KERNELS_CONV_GEOMETRY_H_

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define VOUCH_CONV_HD __host__ __device__
#else
#define VOUCH_CONV_HD
#endif

#include "implicit_tiles.h"

namespace vouch {

struct ConvGeometry {
  long long batch, channels, groups;  // N, C, G of the image
  long long image[3];                 // s: the image's spatial extents
  long long grid[3];                  // g: the windows per axis (the columns' last axes)
  long long kernel[3], stride[3], padding[3], dilation[3];
};

VOUCH_CONV_HD inline long long conv_image_positions(const ConvGeometry& g) {
  return g.image[0] * g.image[1] * g.image[2];
}
VOUCH_CONV_HD inline long long conv_windows(const ConvGeometry& g) {
  return g.grid[0] * g.grid[1] * g.grid[2];
}
VOUCH_CONV_HD inline long long conv_offsets(const ConvGeometry& g) {
  return g.kernel[0] * g.kernel[1] * g.kernel[2];
}

// The window `o` along axis `a` whose kernel offset `k` reads image position `p`:
// o·stride − padding + k·dilation = p, or -1 when none does (not on the stride's
// lattice, or outside the grid).
VOUCH_CONV_HD inline long long conv_window_of(const ConvGeometry& g, int a, long long p,
                                              long long k) {
  const long long t = p + g.padding[a] - k * g.dilation[a];
  if (t < 0 || t % g.stride[a] != 0) return -1;
  const long long o = t / g.stride[a];
  return o < g.grid[a] ? o : -1;
}

// The implicit-GEMM kernels' tiles (implicit_tiles.h) over this geometry.
VOUCH_CONV_HD inline long long conv_implicit_channel_tiles(const ConvGeometry& g) {
  return implicit_channel_tiles(g.channels / g.groups);
}
VOUCH_CONV_HD inline long long conv_implicit_column_tiles(const ConvGeometry& g) {
  return implicit_column_tiles(g.batch * conv_image_positions(g));
}
VOUCH_CONV_HD inline long long conv_implicit_tiles(const ConvGeometry& g) {
  return implicit_tiles(g.groups, g.channels / g.groups, g.batch * conv_image_positions(g));
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_CONV_GEOMETRY_H_
