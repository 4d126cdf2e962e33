// pool.cuh: max_pool, avg_pool and smooth_max_pool over [N, C, *spatial] (1, 2 or 3
// spatial axes, seen as 3-D: pool_shape.h), and their gradients.
//
// Forward: one thread per window (grid-stride over planes · windows) reads the window's
// input positions in row-major order, padding left out: max_pool keeps the first
// maximal element (a later equal one never replaces it; the first NaN wins over
// everything), PyTorch's tie rule, and returns `values` there (x itself, or the gradient
// max_pool_grad's VJP picks); avg_pool sums from 0 and divides by the kernel's volume
// (count_include_pad) or the positions summed; smooth_max_pool takes m = max beta·x (0
// where infinite, as torch.logsumexp), then (m + log Σ exp(beta·x - m)) / beta.
//
// Why the gradients gather: a window's gradient goes to several input elements and an
// element hears from several windows (kernel > stride), so a thread per window would
// have to add into dx with atomics, in an order that changes run to run. Instead each
// input element has one thread, which visits the windows covering it (at most
// ceil(kernel / stride) per axis) in ascending window order and folds their terms from
// 0: no atomics at all, the same bits every run and under --deterministic, and the cpu
// kernels (runtime/cpu_pool.h) fold the same sequence. max_pool_grad finds each
// covering window's maximal element again exactly as the forward does (the same
// function, so the same tie winner), at the cost of a window's reads per covering
// window; avg_pool_grad adds dy[w] / divisor(w); smooth_max_pool_grad dy[w] ·
// exp(beta·(x - y[w])) from the forward's saved result y.
//
// Indices are 64-bit (long long); divisions go through index_div (32-bit where both
// operands fit: the gate keeps every plane's spatial product, the planes and each
// window's volume within the UInt32 ABI).
// Launch: block 256, grid = max(1, min(ceil(total / 256), 1056)); grid-stride over
// planes · windows (forward) or planes · input positions (gradients).
// Generated entry points (s: the 16 integers of pool_shape.h, in its order):
//   extern "C" __global__ void k_f32(const float* x, const float* values, float* y,
//       long long planes, ... , long long pad2) {
//     vouch::max_pool_kernel<float>(x, values, y, vouch::pool_shape(planes, ..., pad2)); }
//   ... avg_pool_kernel(x, y, s, count_include_pad), smooth_max_pool_kernel(x, y, s, beta),
//   max_pool_grad_kernel(dy, x, dx, s), avg_pool_grad_kernel(dy, dx, s,
//   count_include_pad), smooth_max_pool_grad_kernel(dy, x, y, dx, s, beta).
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_POOL_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_POOL_CUH_

#include "common.cuh"
#include "pool_shape.h"
#include "reduce.cuh"  // positive_infinity

namespace vouch {

__device__ inline PoolShape pool_shape(long long planes, long long in0, long long in1,
                                       long long in2, long long out0, long long out1,
                                       long long out2, long long k0, long long k1,
                                       long long k2, long long s0, long long s1, long long s2,
                                       long long p0, long long p1, long long p2) {
  PoolShape s;
  s.planes = planes;
  s.in[0] = in0, s.in[1] = in1, s.in[2] = in2;
  s.out[0] = out0, s.out[1] = out1, s.out[2] = out2;
  s.kernel[0] = k0, s.kernel[1] = k1, s.kernel[2] = k2;
  s.stride[0] = s0, s.stride[1] = s1, s.stride[2] = s2;
  s.pad[0] = p0, s.pad[1] = p1, s.pad[2] = p2;
  return s;
}

// (c[0], c[1], c[2]) of row-major position `flat` of extents e.
__device__ inline void pool_coords(long long flat, const long long e[3], long long c[3]) {
  const long long q = index_div(flat, e[2]);
  c[2] = flat - q * e[2];
  c[0] = index_div(q, e[1]);
  c[1] = q - c[0] * e[1];
}

// The input positions [begin[a], end[a]) window o reads along each axis.
__device__ inline void pool_window(const PoolShape& s, const long long o[3], long long begin[3],
                                   long long end[3]) {
#pragma unroll
  for (int a = 0; a < 3; ++a) {
    const long long start = o[a] * s.stride[a] - s.pad[a];
    begin[a] = start < 0 ? 0 : start;
    end[a] = start + s.kernel[a] < s.in[a] ? start + s.kernel[a] : s.in[a];
  }
}

// The windows covering input coordinate c along each axis: [lo[a], hi[a]].
__device__ inline void pool_covering(const PoolShape& s, const long long c[3], long long lo[3],
                                     long long hi[3]) {
#pragma unroll
  for (int a = 0; a < 3; ++a) {
    const long long first = c[a] + s.pad[a] - s.kernel[a] + 1;  // o·stride ≥ first
    lo[a] = first <= 0 ? 0 : index_div(first + s.stride[a] - 1, s.stride[a]);
    const long long last = index_div(c[a] + s.pad[a], s.stride[a]);  // o·stride ≤ c + pad
    hi[a] = last < s.out[a] - 1 ? last : s.out[a] - 1;
  }
}

// max_pool's position in window o of a plane: its first NaN, else its first maximal
// element, in row-major window order. The forward and the gradient both call this.
template <class T>
__device__ inline long long pool_argmax(const T* plane, const PoolShape& s, const long long o[3]) {
  long long begin[3], end[3];
  pool_window(s, o, begin, end);
  long long best = (begin[0] * s.in[1] + begin[1]) * s.in[2] + begin[2];
  T top = plane[best];
  for (long long d = begin[0]; d < end[0]; ++d)
    for (long long h = begin[1]; h < end[1]; ++h)
      for (long long w = begin[2]; w < end[2]; ++w) {
        if (top != top) return best;  // a NaN won
        const long long at = (d * s.in[1] + h) * s.in[2] + w;
        const T v = plane[at];
        if (v > top || v != v) {
          top = v;
          best = at;
        }
      }
  return best;
}

template <class T>
__device__ void max_pool_kernel(const T* x, const T* values, T* y, PoolShape s) {
  const long long in = s.in[0] * s.in[1] * s.in[2], out = s.out[0] * s.out[1] * s.out[2];
  const long long total = s.planes * out;
  for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
    const long long p = index_div(idx, out);
    long long o[3];
    pool_coords(idx - p * out, s.out, o);
    y[idx] = values[p * in + pool_argmax(x + p * in, s, o)];
  }
}

template <class T>
__device__ void max_pool_grad_kernel(const T* dy, const T* x, T* dx, PoolShape s) {
  const long long in = s.in[0] * s.in[1] * s.in[2], out = s.out[0] * s.out[1] * s.out[2];
  const long long total = s.planes * in;
  for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
    const long long p = index_div(idx, in), i = idx - p * in;
    long long c[3], lo[3], hi[3], o[3];
    pool_coords(i, s.in, c);
    pool_covering(s, c, lo, hi);
    T acc = T(0);
    for (o[0] = lo[0]; o[0] <= hi[0]; ++o[0])
      for (o[1] = lo[1]; o[1] <= hi[1]; ++o[1])
        for (o[2] = lo[2]; o[2] <= hi[2]; ++o[2])
          if (pool_argmax(x + p * in, s, o) == i)
            acc += dy[p * out + (o[0] * s.out[1] + o[1]) * s.out[2] + o[2]];
    dx[idx] = acc;
  }
}

// avg_pool's divisor of window o.
__device__ inline long long pool_divisor(const PoolShape& s, const long long o[3],
                                         long long count_include_pad) {
  if (count_include_pad) return s.kernel[0] * s.kernel[1] * s.kernel[2];
  long long begin[3], end[3];
  pool_window(s, o, begin, end);
  return (end[0] - begin[0]) * (end[1] - begin[1]) * (end[2] - begin[2]);
}

template <class T>
__device__ void avg_pool_kernel(const T* x, T* y, PoolShape s, long long count_include_pad) {
  const long long in = s.in[0] * s.in[1] * s.in[2], out = s.out[0] * s.out[1] * s.out[2];
  const long long total = s.planes * out;
  for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
    const long long p = index_div(idx, out);
    long long o[3], begin[3], end[3];
    pool_coords(idx - p * out, s.out, o);
    pool_window(s, o, begin, end);
    const T* plane = x + p * in;
    T sum = T(0);
    for (long long d = begin[0]; d < end[0]; ++d)
      for (long long h = begin[1]; h < end[1]; ++h)
        for (long long w = begin[2]; w < end[2]; ++w) sum += plane[(d * s.in[1] + h) * s.in[2] + w];
    y[idx] = sum / T(pool_divisor(s, o, count_include_pad));
  }
}

template <class T>
__device__ void avg_pool_grad_kernel(const T* dy, T* dx, PoolShape s, long long count_include_pad) {
  const long long in = s.in[0] * s.in[1] * s.in[2], out = s.out[0] * s.out[1] * s.out[2];
  const long long total = s.planes * in;
  for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
    const long long p = index_div(idx, in);
    long long c[3], lo[3], hi[3], o[3];
    pool_coords(idx - p * in, s.in, c);
    pool_covering(s, c, lo, hi);
    T acc = T(0);
    for (o[0] = lo[0]; o[0] <= hi[0]; ++o[0])
      for (o[1] = lo[1]; o[1] <= hi[1]; ++o[1])
        for (o[2] = lo[2]; o[2] <= hi[2]; ++o[2])
          acc += dy[p * out + (o[0] * s.out[1] + o[1]) * s.out[2] + o[2]] /
                 T(pool_divisor(s, o, count_include_pad));
    dx[idx] = acc;
  }
}

template <class T>
__device__ void smooth_max_pool_kernel(const T* x, T* y, PoolShape s, double beta) {
  const long long in = s.in[0] * s.in[1] * s.in[2], out = s.out[0] * s.out[1] * s.out[2];
  const long long total = s.planes * out;
  const T b = T(beta);
  for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
    const long long p = index_div(idx, out);
    long long o[3], begin[3], end[3];
    pool_coords(idx - p * out, s.out, o);
    pool_window(s, o, begin, end);
    const T* plane = x + p * in;
    T m = b * plane[(begin[0] * s.in[1] + begin[1]) * s.in[2] + begin[2]];
    for (long long d = begin[0]; d < end[0]; ++d)
      for (long long h = begin[1]; h < end[1]; ++h)
        for (long long w = begin[2]; w < end[2]; ++w) {
          const T v = b * plane[(d * s.in[1] + h) * s.in[2] + w];
          if (v > m) m = v;
        }
    if (m == positive_infinity<T>() || m == -positive_infinity<T>()) m = T(0);
    T sum = T(0);
    for (long long d = begin[0]; d < end[0]; ++d)
      for (long long h = begin[1]; h < end[1]; ++h)
        for (long long w = begin[2]; w < end[2]; ++w)
          sum += exp(b * plane[(d * s.in[1] + h) * s.in[2] + w] - m);
    y[idx] = (m + log(sum)) / b;
  }
}

template <class T>
__device__ void smooth_max_pool_grad_kernel(const T* dy, const T* x, const T* y, T* dx,
                                            PoolShape s, double beta) {
  const long long in = s.in[0] * s.in[1] * s.in[2], out = s.out[0] * s.out[1] * s.out[2];
  const long long total = s.planes * in;
  const T b = T(beta);
  for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
    const long long p = index_div(idx, in);
    long long c[3], lo[3], hi[3], o[3];
    pool_coords(idx - p * in, s.in, c);
    pool_covering(s, c, lo, hi);
    const T xi = x[idx];
    T acc = T(0);
    for (o[0] = lo[0]; o[0] <= hi[0]; ++o[0])
      for (o[1] = lo[1]; o[1] <= hi[1]; ++o[1])
        for (o[2] = lo[2]; o[2] <= hi[2]; ++o[2]) {
          const long long w = p * out + (o[0] * s.out[1] + o[1]) * s.out[2] + o[2];
          acc += dy[w] * exp(b * (xi - y[w]));
        }
    dx[idx] = acc;
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_POOL_CUH_
