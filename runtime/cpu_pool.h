// cpu_pool.h: the pooling kernels of generated `cpu` code: max_pool, avg_pool,
// smooth_max_pool and their gradients over [N, C, *spatial] with 1, 2 or 3 spatial axes
// (the shape rule and the meaning: ir/VouchOps.td, docs/language.md "Pooling").
// Included by cpu_kernels.h, whose conventions hold: plain loops over T = float or
// double, sums folded left from T(0), shapes checked by the compiler beforehand.
//
// Geometry: vouch::PoolShape (runtime/cuda/kernels/pool_shape.h, shared with the CUDA
// kernels), every op seen as 3-D. A window's positions are visited in row-major order
// of the window, padding left out. The rules the CUDA kernels (pool.cuh) follow too:
//   * max_pool picks a window's first maximal element (a later equal one never replaces
//     it), or its first NaN; `values` (max_pool_grad's VJP) is read at that position.
//   * avg_pool divides the window's sum by the kernel's volume (count_include_pad) or by
//     the positions summed.
//   * smooth_max_pool: m = max beta·x (0 where infinite), (m + ln Σ exp(beta·x - m)) / beta.
//   * the gradients: dx[i] is a left fold from 0 of the terms of the windows covering i in
//     ascending window order. The CUDA kernels gather exactly that (one thread per input
//     element); here each window adds its terms into its positions, windows ascending,
//     which gives every dx element the same sequence of additions.
#ifndef VOUCH_RUNTIME_CPU_POOL_H_
#define VOUCH_RUNTIME_CPU_POOL_H_

#include <cmath>
#include <cstdint>

#include "runtime/cuda/kernels/pool_shape.h"

namespace vouch::rt {

using PoolShape = vouch::PoolShape;

namespace pool_detail {

inline int64_t plane_in(const PoolShape& s) { return s.in[0] * s.in[1] * s.in[2]; }
inline int64_t plane_out(const PoolShape& s) { return s.out[0] * s.out[1] * s.out[2]; }
inline int64_t volume(const PoolShape& s) { return s.kernel[0] * s.kernel[1] * s.kernel[2]; }

// The input positions [begin[a], end[a]) of window o along each axis: the window's span
// clipped to the input.
struct Window {
  int64_t begin[3], end[3];
  int64_t count() const {
    return (end[0] - begin[0]) * (end[1] - begin[1]) * (end[2] - begin[2]);
  }
};
inline Window window_of(const PoolShape& s, const int64_t o[3]) {
  Window w;
  for (int a = 0; a < 3; ++a) {
    const int64_t start = o[a] * s.stride[a] - s.pad[a];
    w.begin[a] = start < 0 ? 0 : start;
    w.end[a] = start + s.kernel[a] < s.in[a] ? start + s.kernel[a] : s.in[a];
  }
  return w;
}

// f(window, flat window index within a plane) for every window of a plane, in order.
template <class F>
void for_each_window(const PoolShape& s, F f) {
  int64_t flat = 0, o[3];
  for (o[0] = 0; o[0] < s.out[0]; ++o[0])
    for (o[1] = 0; o[1] < s.out[1]; ++o[1])
      for (o[2] = 0; o[2] < s.out[2]; ++o[2]) f(window_of(s, o), flat++);
}

// f(flat position within a plane) for the window's positions in row-major order.
template <class F>
void for_each_position(const PoolShape& s, const Window& w, F f) {
  for (int64_t d = w.begin[0]; d < w.end[0]; ++d)
    for (int64_t h = w.begin[1]; h < w.end[1]; ++h)
      for (int64_t x = w.begin[2]; x < w.end[2]; ++x) f((d * s.in[1] + h) * s.in[2] + x);
}

// max_pool's position in a window: its first NaN, else its first maximal element.
template <class T>
int64_t window_argmax(const PoolShape& s, const Window& w, const T* plane) {
  int64_t best = -1;
  for_each_position(s, w, [&](int64_t p) {
    if (best < 0 || (!std::isnan(plane[best]) && (plane[p] > plane[best] || std::isnan(plane[p]))))
      best = p;
  });
  return best;
}

}  // namespace pool_detail

// y[plane, w] = values[plane, window_argmax(x's window w)]; values == x for the forward.
template <class T>
void max_pool(const T* x, const T* values, T* y, const PoolShape& s) {
  const int64_t in = pool_detail::plane_in(s), out = pool_detail::plane_out(s);
  for (int64_t p = 0; p < s.planes; ++p)
    pool_detail::for_each_window(s, [&](const pool_detail::Window& w, int64_t k) {
      y[p * out + k] = values[p * in + pool_detail::window_argmax(s, w, x + p * in)];
    });
}

// dx[i] = Σ over the windows w ascending whose max_pool position is i of dy[w], from 0.
template <class T>
void max_pool_grad(const T* dy, const T* x, T* dx, const PoolShape& s) {
  const int64_t in = pool_detail::plane_in(s), out = pool_detail::plane_out(s);
  for (int64_t i = 0; i < s.planes * in; ++i) dx[i] = T(0);
  for (int64_t p = 0; p < s.planes; ++p)
    pool_detail::for_each_window(s, [&](const pool_detail::Window& w, int64_t k) {
      T& at = dx[p * in + pool_detail::window_argmax(s, w, x + p * in)];
      at = at + dy[p * out + k];
    });
}

// The divisor of a window of avg_pool.
inline int64_t avg_pool_divisor(const PoolShape& s, const pool_detail::Window& w,
                                bool count_include_pad) {
  return count_include_pad ? pool_detail::volume(s) : w.count();
}

// y[plane, w] = (Σ x over window w, row-major from 0) / divisor(w).
template <class T>
void avg_pool(const T* x, T* y, const PoolShape& s, bool count_include_pad) {
  const int64_t in = pool_detail::plane_in(s), out = pool_detail::plane_out(s);
  for (int64_t p = 0; p < s.planes; ++p)
    pool_detail::for_each_window(s, [&](const pool_detail::Window& w, int64_t k) {
      T sum = T(0);
      pool_detail::for_each_position(s, w, [&](int64_t i) { sum = sum + x[p * in + i]; });
      y[p * out + k] = sum / T(avg_pool_divisor(s, w, count_include_pad));
    });
}

// dx[i] = Σ over the windows w ascending that cover i of dy[w] / divisor(w), from 0.
template <class T>
void avg_pool_grad(const T* dy, T* dx, const PoolShape& s, bool count_include_pad) {
  const int64_t in = pool_detail::plane_in(s), out = pool_detail::plane_out(s);
  for (int64_t i = 0; i < s.planes * in; ++i) dx[i] = T(0);
  for (int64_t p = 0; p < s.planes; ++p)
    pool_detail::for_each_window(s, [&](const pool_detail::Window& w, int64_t k) {
      const T term = dy[p * out + k] / T(avg_pool_divisor(s, w, count_include_pad));
      pool_detail::for_each_position(s, w, [&](int64_t i) { dx[p * in + i] = dx[p * in + i] + term; });
    });
}

// y[plane, w] = (m + ln Σ exp(beta·x - m)) / beta over window w, m = max beta·x (0 where
// infinite, as torch.logsumexp), the sum row-major from 0, all in T.
template <class T>
void smooth_max_pool(const T* x, T* y, const PoolShape& s, double beta) {
  const int64_t in = pool_detail::plane_in(s), out = pool_detail::plane_out(s);
  const T b = T(beta);
  for (int64_t p = 0; p < s.planes; ++p)
    pool_detail::for_each_window(s, [&](const pool_detail::Window& w, int64_t k) {
      const T* plane = x + p * in;
      bool first = true;
      T m = T(0);
      pool_detail::for_each_position(s, w, [&](int64_t i) {
        const T v = b * plane[i];
        if (first || v > m) m = v;
        first = false;
      });
      if (std::isinf(m)) m = T(0);
      T sum = T(0);
      pool_detail::for_each_position(s, w, [&](int64_t i) { sum = sum + std::exp(b * plane[i] - m); });
      y[p * out + k] = (m + std::log(sum)) / b;
    });
}

// dx[i] = Σ over the windows w ascending that cover i of dy[w] · exp(beta·(x[i] - y[w])),
// from 0: each window's gradient spread by its softmax weights.
template <class T>
void smooth_max_pool_grad(const T* dy, const T* x, const T* y, T* dx, const PoolShape& s,
                          double beta) {
  const int64_t in = pool_detail::plane_in(s), out = pool_detail::plane_out(s);
  const T b = T(beta);
  for (int64_t i = 0; i < s.planes * in; ++i) dx[i] = T(0);
  for (int64_t p = 0; p < s.planes; ++p)
    pool_detail::for_each_window(s, [&](const pool_detail::Window& w, int64_t k) {
      const T g = dy[p * out + k], at = y[p * out + k];
      pool_detail::for_each_position(s, w, [&](int64_t i) {
        dx[p * in + i] = dx[p * in + i] + g * std::exp(b * (x[p * in + i] - at));
      });
    });
}

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_CPU_POOL_H_
