// cpu_kernels.h: the CPU kernels that generated `cpu` code calls.
//
// Header-only templates over T = float or double, written as plain loops so they are
// the readable reference for the CUDA kernels (llm.c style). Every sum is a left fold
// from index 0 starting at T(0), so results are deterministic and reproducible by a
// reference written the same way. Shapes are checked by the compiler before code is
// emitted; the kernels do not re-check them.
#ifndef VOUCH_RUNTIME_CPU_KERNELS_H_
#define VOUCH_RUNTIME_CPU_KERNELS_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "runtime/cuda/kernels/conv_geometry.h"
#include "runtime/cuda/kernels/counter_rng.h"

namespace vouch::rt {

namespace kernel_detail {

// Row-major strides of shape.
inline std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

inline int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Advances the row-major coordinate `coord` over `shape` by one element and keeps
// `offset` = sum(coord[i] * strides[i]) up to date.
inline void advance(std::vector<int64_t>& coord, const std::vector<int64_t>& shape,
                    const std::vector<int64_t>& strides, int64_t& offset) {
  for (size_t d = shape.size(); d-- > 0;) {
    coord[d]++;
    offset += strides[d];
    if (coord[d] < shape[d]) return;
    offset -= coord[d] * strides[d];
    coord[d] = 0;
  }
}

// A reduction of in_shape over axes: the output's step per input dim (0 along a
// reduced one, for `advance`), and the output's element count.
inline int64_t reduction_layout(const std::vector<int64_t>& in_shape,
                                const std::vector<int64_t>& axes,
                                std::vector<int64_t>& dst_strides) {
  std::vector<int64_t> out_shape;
  std::vector<bool> reduced(in_shape.size(), false);
  for (int64_t a : axes) reduced[a] = true;
  for (size_t d = 0; d < in_shape.size(); d++)
    if (!reduced[d]) out_shape.push_back(in_shape[d]);
  std::vector<int64_t> out_strides = strides_of(out_shape);
  dst_strides.assign(in_shape.size(), 0);
  for (size_t d = 0, k = 0; d < in_shape.size(); d++)
    if (!reduced[d]) dst_strides[d] = out_strides[k++];
  return numel_of(out_shape);
}

}  // namespace kernel_detail

// C[b] = op(A[b]) op(B[b]) for b < batch, row-major. op(A) is [M,K]: A[b] is stored
// [M,K], or [K,M] when trans_a. op(B) is [K,N]: B[b] is stored [K,N], or [N,K] when
// trans_b. A[b] starts at A + b*stride_a (stride 0 broadcasts one matrix over the
// batch), likewise B; C[b] is [M,N] at C + b*M*N.
template <class T>
void matmul(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N, int64_t K,
            const T* A, int64_t stride_a, const T* B, int64_t stride_b, T* C) {
  for (int64_t b = 0; b < batch; b++) {
    const T* a = A + b * stride_a;
    const T* bm = B + b * stride_b;
    T* c = C + b * M * N;
    for (int64_t i = 0; i < M; i++) {
      for (int64_t j = 0; j < N; j++) {
        T acc = T(0);
        for (int64_t k = 0; k < K; k++) {
          T av = trans_a ? a[k * M + i] : a[i * K + k];
          T bv = trans_b ? bm[j * K + k] : bm[k * N + j];
          acc += av * bv;
        }
        c[i * N + j] = acc;
      }
    }
  }
}

// y[r,o] = sum_i x[r,i] W[o,i] (+ b[o]): x [rows,in], W [out,in] (PyTorch layout),
// b [out] or nullptr, y [rows,out]. The bias is added after the sum.
template <class T>
void linear(int64_t rows, int64_t in, int64_t out, const T* x, const T* W, const T* b, T* y) {
  for (int64_t r = 0; r < rows; r++) {
    const T* xr = x + r * in;
    for (int64_t o = 0; o < out; o++) {
      const T* wo = W + o * in;
      T acc = T(0);
      for (int64_t i = 0; i < in; i++) acc += xr[i] * wo[i];
      y[r * out + o] = b != nullptr ? acc + b[o] : acc;
    }
  }
}

// A linear's weight and bias gradients from its result's gradient dy [rows,out] and its
// input x [rows,in]: dW [out,in] = dyᵀ·x as matmul (trans_a) computes it, and db[o] =
// Σ_r dy[r,o], rows ascending from T(0), as reduce_sum over axis 0 does.
template <class T>
void linear_weight_grad(int64_t rows, int64_t in, int64_t out, const T* dy, const T* x, T* dW,
                        T* db) {
  matmul<T>(true, false, 1, out, in, rows, dy, 0, x, 0, dW);
  for (int64_t o = 0; o < out; o++) db[o] = T(0);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t o = 0; o < out; o++) db[o] += dy[r * out + o];
}

// out = in broadcast to out_shape: input dim i becomes output dim dims[i] (dims
// increasing), where in_shape[i] is 1 (repeated) or out_shape[dims[i]]. Output dims not
// named in dims are new (repeated).
template <class T>
void broadcast_in_dim(const T* in, const std::vector<int64_t>& in_shape, T* out,
                      const std::vector<int64_t>& out_shape, const std::vector<int64_t>& dims) {
  std::vector<int64_t> in_strides = kernel_detail::strides_of(in_shape);
  std::vector<int64_t> src_strides(out_shape.size(), 0);  // input step per output dim
  for (size_t i = 0; i < dims.size(); i++)
    src_strides[dims[i]] = in_shape[i] == 1 ? 0 : in_strides[i];
  std::vector<int64_t> coord(out_shape.size(), 0);
  int64_t src = 0;
  int64_t n = kernel_detail::numel_of(out_shape);
  for (int64_t o = 0; o < n; o++) {
    out[o] = in[src];
    kernel_detail::advance(coord, out_shape, src_strides, src);
  }
}

// out = sum of in over axes (sorted, unique); out's shape is in_shape without them.
// Each output element sums its inputs in row-major order, starting from T(0).
template <class T>
void reduce_sum(const T* in, const std::vector<int64_t>& in_shape,
                const std::vector<int64_t>& axes, T* out) {
  std::vector<int64_t> dst_strides;
  int64_t n_out = kernel_detail::reduction_layout(in_shape, axes, dst_strides);
  for (int64_t o = 0; o < n_out; o++) out[o] = T(0);
  std::vector<int64_t> coord(in_shape.size(), 0);
  int64_t dst = 0;
  int64_t n = kernel_detail::numel_of(in_shape);
  for (int64_t i = 0; i < n; i++) {
    out[dst] += in[i];
    kernel_detail::advance(coord, in_shape, dst_strides, dst);
  }
}

// out = the maximum (max = true) or minimum of in over axes: each output element
// visits its inputs in row-major order, from -inf (+inf); a NaN input makes it NaN
// (torch.amax / torch.amin).
template <class T>
void reduce_extreme(const T* in, const std::vector<int64_t>& in_shape,
                    const std::vector<int64_t>& axes, T* out, bool max) {
  std::vector<int64_t> dst_strides;
  int64_t n_out = kernel_detail::reduction_layout(in_shape, axes, dst_strides);
  const T start = max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  for (int64_t o = 0; o < n_out; o++) out[o] = start;
  std::vector<int64_t> coord(in_shape.size(), 0);
  int64_t dst = 0;
  int64_t n = kernel_detail::numel_of(in_shape);
  for (int64_t i = 0; i < n; i++) {
    const T v = in[i];
    T& o = out[dst];
    if (o == o && (v != v || (max ? v > o : v < o))) o = v;
    kernel_detail::advance(coord, in_shape, dst_strides, dst);
  }
}
template <class T>
void reduce_max(const T* in, const std::vector<int64_t>& in_shape,
                const std::vector<int64_t>& axes, T* out) {
  reduce_extreme(in, in_shape, axes, out, true);
}
template <class T>
void reduce_min(const T* in, const std::vector<int64_t>& in_shape,
                const std::vector<int64_t>& axes, T* out) {
  reduce_extreme(in, in_shape, axes, out, false);
}

// out = in with its dims permuted: out.shape[i] = in_shape[perm[i]].
template <class T>
void permute(const T* in, const std::vector<int64_t>& in_shape,
             const std::vector<int64_t>& perm, T* out) {
  std::vector<int64_t> in_strides = kernel_detail::strides_of(in_shape);
  std::vector<int64_t> out_shape(perm.size()), src_strides(perm.size());
  for (size_t i = 0; i < perm.size(); i++) {
    out_shape[i] = in_shape[perm[i]];
    src_strides[i] = in_strides[perm[i]];
  }
  std::vector<int64_t> coord(out_shape.size(), 0);
  int64_t src = 0;
  int64_t n = kernel_detail::numel_of(out_shape);
  for (int64_t o = 0; o < n; o++) {
    out[o] = in[src];
    kernel_detail::advance(coord, out_shape, src_strides, src);
  }
}

namespace kernel_detail {

// The extents before, at and after `axis`: a row-major tensor as [outer, n, inner].
inline void split_at_axis(const std::vector<int64_t>& shape, int64_t axis, int64_t& outer,
                          int64_t& inner) {
  outer = 1;
  inner = 1;
  for (int64_t d = 0; d < axis; d++) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); d++) inner *= shape[d];
}

}  // namespace kernel_detail

// out = in[..., start:end:step, ...] along axis (0 <= start < end <= in_shape[axis],
// step >= 1): out index j of the axis reads in index start + j*step.
template <class T>
void slice(const T* in, const std::vector<int64_t>& in_shape, int64_t axis, int64_t start,
           int64_t end, int64_t step, T* out) {
  int64_t outer, inner;
  kernel_detail::split_at_axis(in_shape, axis, outer, inner);
  const int64_t n = in_shape[axis], m = (end - start + step - 1) / step;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < m; j++)
      for (int64_t i = 0; i < inner; i++)
        out[(o * m + j) * inner + i] = in[(o * n + start + j * step) * inner + i];
}

// slice's inverse embedding: out (of out_shape) is zero but at the positions slice
// reads, which get in's elements (torch.slice_scatter of zeros).
template <class T>
void slice_scatter(const T* in, const std::vector<int64_t>& out_shape, int64_t axis,
                   int64_t start, int64_t end, int64_t step, T* out) {
  int64_t outer, inner;
  kernel_detail::split_at_axis(out_shape, axis, outer, inner);
  const int64_t n = out_shape[axis], m = (end - start + step - 1) / step;
  for (int64_t k = 0, total = outer * n * inner; k < total; k++) out[k] = T(0);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < m; j++)
      for (int64_t i = 0; i < inner; i++)
        out[(o * n + start + j * step) * inner + i] = in[(o * m + j) * inner + i];
}

// torch.nn.functional.embedding: out [positions, D] row p = table [V, D] row ids[p]. An
// id outside [0, V) gives a row of NaN (never a read outside the table).
template <class T>
void embedding(const int32_t* ids, const T* table, int64_t positions, int64_t V, int64_t D,
               T* out) {
  for (int64_t p = 0; p < positions; p++) {
    const int64_t v = ids[p];
    const bool ok = v >= 0 && v < V;
    for (int64_t d = 0; d < D; d++)
      out[p * D + d] = ok ? table[v * D + d] : std::numeric_limits<T>::quiet_NaN();
  }
}

// embedding's VJP: out [V, D] row v = the sum of dy [positions, D]'s rows whose id is v,
// in ascending position order from T(0) (cuda's embedding_grad_kernel folds the same
// sequence per (v, d), so both give the same bits). Any id outside [0, V) makes all of
// out NaN: the gradient of a bad lookup is not silently dropped.
template <class T>
void embedding_grad(const int32_t* ids, const T* dy, int64_t positions, int64_t V,
                    int64_t D, T* out) {
  bool bad = false;
  for (int64_t p = 0; p < positions; p++) bad = bad || ids[p] < 0 || ids[p] >= V;
  for (int64_t k = 0; k < V * D; k++)
    out[k] = bad ? std::numeric_limits<T>::quiet_NaN() : T(0);
  if (bad) return;
  for (int64_t p = 0; p < positions; p++)
    for (int64_t d = 0; d < D; d++) out[ids[p] * D + d] += dy[p * D + d];
}

// torch.gather along an axis, tensors seen as [outer, extent, inner] around it: in is
// [outer, n, inner], index and out [outer, m, inner]; out[o, j, i] = in[o, index[o, j, i],
// i], NaN for an index outside [0, n).
template <class T>
void gather(const T* in, const int32_t* index, int64_t outer, int64_t n, int64_t m,
            int64_t inner, T* out) {
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < m; j++)
      for (int64_t i = 0; i < inner; i++) {
        const int64_t k = (o * m + j) * inner + i, a = index[k];
        out[k] = a >= 0 && a < n ? in[(o * n + a) * inner + i]
                                 : std::numeric_limits<T>::quiet_NaN();
      }
}

// torch scatter_add, out of place: out [outer, n, inner] = in, then src [outer, m, inner]
// added at index (same shape as src) along the axis, j ascending (each out element: its
// in element, then its matches in order, as cuda's scatter_add_axis_kernel). An index
// outside [0, n) makes its whole fiber out[o, :, i] NaN.
template <class T>
void scatter_add(const T* in, const int32_t* index, const T* src, int64_t outer, int64_t n,
                 int64_t m, int64_t inner, T* out) {
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      bool bad = false;
      for (int64_t j = 0; j < m; j++) {
        const int64_t a = index[(o * m + j) * inner + i];
        bad = bad || a < 0 || a >= n;
      }
      for (int64_t a = 0; a < n; a++)
        out[(o * n + a) * inner + i] =
            bad ? std::numeric_limits<T>::quiet_NaN() : in[(o * n + a) * inner + i];
      if (bad) continue;
      for (int64_t j = 0; j < m; j++) {
        const int64_t k = (o * m + j) * inner + i;
        out[(o * n + index[k]) * inner + i] += src[k];
      }
    }
}

// torch.cat: out (of out_shape) holds ins[0], ins[1], ... one after another along axis;
// input k has extents[k] entries there and out_shape's extents elsewhere.
template <class T>
void concat(const std::vector<const T*>& ins, const std::vector<int64_t>& extents,
            const std::vector<int64_t>& out_shape, int64_t axis, T* out) {
  int64_t outer, inner;
  kernel_detail::split_at_axis(out_shape, axis, outer, inner);
  const int64_t n = out_shape[axis];
  for (int64_t o = 0; o < outer; o++) {
    int64_t offset = 0;
    for (size_t k = 0; k < ins.size(); k++) {
      const int64_t e = extents[k];
      for (int64_t j = 0; j < e; j++)
        for (int64_t i = 0; i < inner; i++)
          out[(o * n + offset + j) * inner + i] = ins[k][(o * e + j) * inner + i];
      offset += e;
    }
  }
}

// --- Convolution: a convolution's windows as columns and back (conv_geometry.h) ----------
// The image is [N, C, s0, s1, s2], its columns [G, C/G·K, N, g0, g1, g2]: row
// channel·K + k (channel = g·C/G + c), column (n, o) reads image position
// o·stride − padding + k·dilation on every axis (zero padding outside).

// The geometry as codegen's conv recipe passes it to a cpu kernel step
// (codegen/recipes/ConvRecipe.cpp): 21 integer arguments (rt::ArgValue::i) in
// conv_geometry.h's field order, from args[first] on.
template <class Arg>
ConvGeometry conv_geometry_from(const Arg* args, int first) {
  const Arg* a = args + first;
  return ConvGeometry{a[0].i,  a[1].i,  a[2].i,
                      {a[3].i, a[4].i, a[5].i},
                      {a[6].i, a[7].i, a[8].i},
                      {a[9].i, a[10].i, a[11].i},
                      {a[12].i, a[13].i, a[14].i},
                      {a[15].i, a[16].i, a[17].i},
                      {a[18].i, a[19].i, a[20].i}};
}

// columns = the windows of image, 0 in the padding.
template <class T>
void im2col(const T* image, T* columns, const ConvGeometry& g) {
  const int64_t windows = conv_windows(g), offsets = conv_offsets(g);
  int64_t idx = 0;
  for (int64_t channel = 0; channel < g.channels; channel++)
    for (int64_t k0 = 0; k0 < g.kernel[0]; k0++)
      for (int64_t k1 = 0; k1 < g.kernel[1]; k1++)
        for (int64_t k2 = 0; k2 < g.kernel[2]; k2++)
          for (int64_t n = 0; n < g.batch; n++)
            for (int64_t o0 = 0; o0 < g.grid[0]; o0++)
              for (int64_t o1 = 0; o1 < g.grid[1]; o1++)
                for (int64_t o2 = 0; o2 < g.grid[2]; o2++, idx++) {
                  const int64_t o[3] = {o0, o1, o2}, k[3] = {k0, k1, k2};
                  int64_t offset = n * g.channels + channel;
                  bool inside = true;
                  for (int a = 0; a < 3; a++) {
                    const int64_t p = o[a] * g.stride[a] - g.padding[a] + k[a] * g.dilation[a];
                    inside = inside && p >= 0 && p < g.image[a];
                    offset = offset * g.image[a] + p;
                  }
                  columns[idx] = inside ? image[offset] : T(0);
                }
  (void)windows;
  (void)offsets;
}

// Calls visit(k, window) for each kernel offset k, ascending (row-major), whose window
// covers image position p (conv_window_of on every axis): the terms col2im and
// col2im_matmul fold, in their order.
template <class F>
void for_each_covering_window(const ConvGeometry& g, const int64_t (&p)[3], F visit) {
  int64_t k = 0;
  for (int64_t k0 = 0; k0 < g.kernel[0]; k0++)
    for (int64_t k1 = 0; k1 < g.kernel[1]; k1++)
      for (int64_t k2 = 0; k2 < g.kernel[2]; k2++, k++) {
        const int64_t ks[3] = {k0, k1, k2};
        int64_t window = 0;
        bool covered = true;
        for (int a = 0; a < 3 && covered; a++) {
          const int64_t o = conv_window_of(g, a, p[a], ks[a]);
          covered = o >= 0;
          window = window * g.grid[a] + o;
        }
        if (covered) visit(k, window);
      }
}

// image = the columns folded back: each image element, one at a time, sums the terms of
// the windows covering it in ascending kernel-offset order (row-major) from T(0), the
// order runtime/cuda/kernels/conv.cuh's col2im_kernel folds (the same bits).
template <class T>
void col2im(const T* columns, T* image, const ConvGeometry& g) {
  const int64_t windows = conv_windows(g), offsets = conv_offsets(g);
  int64_t idx = 0;
  for (int64_t n = 0; n < g.batch; n++)
    for (int64_t channel = 0; channel < g.channels; channel++)
      for (int64_t p0 = 0; p0 < g.image[0]; p0++)
        for (int64_t p1 = 0; p1 < g.image[1]; p1++)
          for (int64_t p2 = 0; p2 < g.image[2]; p2++, idx++) {
            T acc = T(0);
            for_each_covering_window(g, {p0, p1, p2}, [&](int64_t k, int64_t window) {
              acc += columns[((channel * offsets + k) * g.batch + n) * windows + window];
            });
            image[idx] = acc;
          }
}

// image = col2im of the columns lhsᵀ·rhs per group (ir/VouchOps.td's col2im_matmul),
// lhs [G, R, C/G·K] and rhs [G, R, N·L], the columns never stored: each image element,
// one at a time, folds from T(0) over the kernel offsets k ascending whose window covers
// it, and for each over r ascending, lhs[g, r, c·K + k] · rhs[g, r, n·L + window].
template <class T>
void col2im_matmul(const T* lhs, const T* rhs, T* image, const ConvGeometry& g,
                   int64_t rows) {
  const int64_t windows = conv_windows(g), offsets = conv_offsets(g);
  const int64_t per_group = g.channels / g.groups;
  const int64_t lhs_row = per_group * offsets, rhs_row = g.batch * windows;
  int64_t idx = 0;
  for (int64_t n = 0; n < g.batch; n++)
    for (int64_t channel = 0; channel < g.channels; channel++) {
      const int64_t group = channel / per_group, c = channel % per_group;
      const T* weights = lhs + group * rows * lhs_row + c * offsets;
      const T* grads = rhs + group * rows * rhs_row + n * windows;
      for (int64_t p0 = 0; p0 < g.image[0]; p0++)
        for (int64_t p1 = 0; p1 < g.image[1]; p1++)
          for (int64_t p2 = 0; p2 < g.image[2]; p2++, idx++) {
            T acc = T(0);
            for_each_covering_window(g, {p0, p1, p2}, [&](int64_t k, int64_t window) {
              for (int64_t r = 0; r < rows; r++)
                acc += weights[r * lhs_row + k] * grads[r * rhs_row + window];
            });
            image[idx] = acc;
          }
    }
}

// Mean of (pred[i] - target[i])^2 over n > 0 elements.
template <class T>
T mse_loss(int64_t n, const T* pred, const T* target) {
  T acc = T(0);
  for (int64_t i = 0; i < n; i++) {
    T d = pred[i] - target[i];
    acc += d * d;
  }
  return acc / T(n);
}

// The classifier: rows of C logits, one int32 label per row.
// logsumexp(z) - z[label] of one row, with the max shift; NaN when `label` is not
// a class (the loader refuses such data; a computed label must not pass silently).
template <class T>
T cross_entropy_row(int64_t classes, const T* z, int32_t label) {
  if (label < 0 || label >= classes) return std::numeric_limits<T>::quiet_NaN();
  T max = z[0];
  for (int64_t c = 1; c < classes; c++)
    if (z[c] > max || z[c] != z[c]) max = z[c];
  T sum = T(0);
  for (int64_t c = 0; c < classes; c++) sum += std::exp(z[c] - max);
  return std::log(sum) + max - z[label];
}

// Rows whose label is not ignore_index.
inline int64_t cross_entropy_kept(int64_t rows, const int32_t* labels, int64_t ignore_index) {
  int64_t kept = 0;
  for (int64_t r = 0; r < rows; r++) kept += labels[r] != ignore_index;
  return kept;
}

// Mean over the kept rows of cross_entropy_row, summed left to right (0/0 = NaN when
// every row is ignored, as PyTorch). Row r starts at logits + r * pitch (pitch >=
// classes: entries past the classes are padding, never read; cross_entropy's
// `classes`).
template <class T>
T cross_entropy(int64_t rows, int64_t classes, const T* logits, const int32_t* labels,
                int64_t ignore_index, int64_t pitch) {
  T sum = T(0);
  for (int64_t r = 0; r < rows; r++)
    if (labels[r] != ignore_index) sum += cross_entropy_row(classes, logits + r * pitch, labels[r]);
  return sum / T(cross_entropy_kept(rows, labels, ignore_index));
}

// dz[r, c] = dloss · (softmax(z[r])[c] - [c == label[r]]) / kept; 0 on ignored rows,
// NaN on a row whose label is not a class. Rows at `pitch` as cross_entropy's; the
// padding past the classes is written 0.
template <class T>
void cross_entropy_grad(int64_t rows, int64_t classes, const T* logits, const int32_t* labels,
                        T dloss, int64_t ignore_index, T* dz, int64_t pitch) {
  const T scale = dloss / T(cross_entropy_kept(rows, labels, ignore_index));
  for (int64_t r = 0; r < rows; r++) {
    const T* z = logits + r * pitch;
    T* d = dz + r * pitch;
    for (int64_t c = classes; c < pitch; c++) d[c] = T(0);
    const int32_t label = labels[r];
    if (label == ignore_index) {
      for (int64_t c = 0; c < classes; c++) d[c] = T(0);
      continue;
    }
    if (label < 0 || label >= classes) {
      for (int64_t c = 0; c < classes; c++) d[c] = std::numeric_limits<T>::quiet_NaN();
      continue;
    }
    T max = z[0];
    for (int64_t c = 1; c < classes; c++)
      if (z[c] > max || z[c] != z[c]) max = z[c];
    T sum = T(0);
    for (int64_t c = 0; c < classes; c++) sum += std::exp(z[c] - max);
    for (int64_t c = 0; c < classes; c++)
      d[c] = scale * (std::exp(z[c] - max) / sum - (c == label ? T(1) : T(0)));
  }
}

// Row-wise normalisations along one axis. The axis has extent n; outer is the product
// of the extents before it, inner of those after it. Row (o, i) is the n elements
// (o * n + k) * inner + i, k = 0..n-1 (inner = 1 for the last axis). Statistics are
// accumulated in T (f32 runs in f32, f64 runs in f64), each a left fold from k = 0.

namespace kernel_detail {

// The maximum of a row; NaN if an element is NaN (so the row comes out NaN, as in
// PyTorch).
template <class T>
T row_max(const T* x, int64_t n, int64_t inner) {
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t k = 0; k < n; k++) {
    const T v = x[k * inner];
    if (m == m && !(v <= m)) m = v;
  }
  return m;
}

template <class T>
void softmax_rows(const T* in, T* out, int64_t outer, int64_t n, int64_t inner, bool take_log) {
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      const T* x = in + o * n * inner + i;
      T* y = out + o * n * inner + i;
      const T m = row_max(x, n, inner);
      T sum = T(0);
      for (int64_t k = 0; k < n; k++) sum += std::exp(x[k * inner] - m);
      const T log_sum = std::log(sum);
      for (int64_t k = 0; k < n; k++)
        y[k * inner] = take_log ? x[k * inner] - m - log_sum : std::exp(x[k * inner] - m) / sum;
    }
}

template <class T>
void softmax_grad_rows(const T* grad, const T* output, T* out, int64_t outer, int64_t n,
                       int64_t inner, bool take_log) {
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      const int64_t base = o * n * inner + i;
      const T* g = grad + base;
      const T* y = output + base;
      T s = T(0);
      for (int64_t k = 0; k < n; k++) s += take_log ? g[k * inner] : g[k * inner] * y[k * inner];
      for (int64_t k = 0; k < n; k++)
        out[base + k * inner] = take_log ? g[k * inner] - std::exp(y[k * inner]) * s
                                    : y[k * inner] * (g[k * inner] - s);
    }
}

// mean and 1 / sqrt(var + eps) of one contiguous row of d elements, var biased
// (two passes: the mean, then the squared deviations from it).
template <class T>
void row_stats(const T* x, int64_t d, T eps, T& mean, T& rstd) {
  T sum = T(0);
  for (int64_t k = 0; k < d; k++) sum += x[k];
  mean = sum / T(d);
  T sq = T(0);
  for (int64_t k = 0; k < d; k++) sq += (x[k] - mean) * (x[k] - mean);
  rstd = T(1) / std::sqrt(sq / T(d) + eps);
}

}  // namespace kernel_detail

// out = softmax of in along the axis (exp(x - max) / sum of exp(x - max) per row).
template <class T>
void softmax(const T* in, T* out, int64_t outer, int64_t n, int64_t inner) {
  kernel_detail::softmax_rows(in, out, outer, n, inner, false);
}
// out = log_softmax of in along the axis (x - max - log(sum of exp(x - max)) per row).
template <class T>
void log_softmax(const T* in, T* out, int64_t outer, int64_t n, int64_t inner) {
  kernel_detail::softmax_rows(in, out, outer, n, inner, true);
}
// softmax's VJP from its result y = output: out = y * (grad - sum over the row of grad*y).
template <class T>
void softmax_grad(const T* grad, const T* output, T* out, int64_t outer, int64_t n,
                  int64_t inner) {
  kernel_detail::softmax_grad_rows(grad, output, out, outer, n, inner, false);
}
// log_softmax's VJP from its result y: out = grad - exp(y) * sum over the row of grad.
template <class T>
void log_softmax_grad(const T* grad, const T* output, T* out, int64_t outer, int64_t n,
                      int64_t inner) {
  kernel_detail::softmax_grad_rows(grad, output, out, outer, n, inner, true);
}

// cast(x, f32|f64|i32) of n elements: one of in_real / in_int and one of out_real /
// out_int are non-null. real -> real and int -> int copy (a run has one real type);
// int -> real converts exactly (f32 rounds |v| > 2^24); real -> int truncates toward
// zero, as torch's .to(torch.int32) in range, and is defined outside it (never C++'s
// undefined out-of-range conversion): NaN gives 0, v >= 2^31 - 1 INT32_MAX, v <= -2^31
// INT32_MIN. cuda's cast.cuh and the interpreter use the same rule.
template <class T>
int32_t cast_to_int32(T v) {
  if (!(v == v)) return 0;
  if (v >= T(2147483647.0)) return std::numeric_limits<int32_t>::max();
  if (v <= T(-2147483648.0)) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
}
template <class T>
void cast(const T* in_real, const int32_t* in_int, T* out_real, int32_t* out_int, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    if (out_real)
      out_real[i] = in_real ? in_real[i] : static_cast<T>(in_int[i]);
    else
      out_int[i] = in_int ? in_int[i] : cast_to_int32(in_real[i]);
  }
}

// vouch.round_bf16: each f32 rounded to bf16 (nearest, ties to even) and stored as its
// 16 bits, the upper half of the rounded f32; infinities stay, finite values past bf16's
// largest become infinite, NaN stays NaN (quietened): cuda's common.cuh round_to_bf16,
// bit for bit. Only bf16 products read the result (cuda; the cpu executor runs no
// program with bf16 buffers), so this is the op's reference, checked by cpu_kernels_test.
inline uint16_t round_to_bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
template <class T>
void round_bf16(const T* in, uint16_t* out, int64_t n) {
  static_assert(std::is_same_v<T, float>, "bf16 operands are rounded from f32 values");
  for (int64_t i = 0; i < n; i++) out[i] = round_to_bf16(in[i]);
}

// softmax along the axis over the elements whose mask is nonzero (TorchLean's hard mask):
// the max and the sum run over the kept elements only; a blocked element is written as an
// exact 0 (no sentinel is added to x), and a row that keeps nothing is all zeros. The mask
// is int32 0 / 1 (an i1 value, runtime/program.h) broadcast to the input: element `at` of
// the input (row-major over extent[0..rank)) reads mask[sum of coord[k] * mask_stride[k]]
// (stride 0 on the axes the mask broadcasts along).
template <class T>
void masked_softmax(const T* in, const int32_t* mask, int rank, const int64_t* extent,
                    const int64_t* mask_stride, T* out, int64_t outer, int64_t n,
                    int64_t inner) {
  auto keep = [&](int64_t at) {
    int64_t offset = 0;
    for (int k = rank - 1; k >= 0; k--) {
      offset += (at % extent[k]) * mask_stride[k];
      at /= extent[k];
    }
    return mask[offset] != 0;
  };
  std::vector<char> kept(static_cast<size_t>(n));  // the row's mask, looked up once
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      const int64_t base = o * n * inner + i;
      for (int64_t k = 0; k < n; k++) kept[k] = keep(base + k * inner);
      T m = -std::numeric_limits<T>::infinity();
      for (int64_t k = 0; k < n; k++) {
        const T v = in[base + k * inner];
        if (kept[k] && m == m && !(v <= m)) m = v;
      }
      T sum = T(0);
      for (int64_t k = 0; k < n; k++)
        if (kept[k]) sum += std::exp(in[base + k * inner] - m);
      for (int64_t k = 0; k < n; k++) {
        const int64_t at = base + k * inner;
        out[at] = kept[k] ? std::exp(in[at] - m) / sum : T(0);
      }
    }
}

// Attention (scaled_dot_product_attention's fused form, flash_attention): per batch
// entry p of `batch` and query i, the kept keys j (the mask, an int32 0 / 1 read through
// `mask_stride` over the scores' shape [..., tq, tk] (`rank` axes, `extent`), or j <= i
// when `causal`) weighted by the softmax of scale · q_i · k_j, max-shifted; out_i =
// Σ_j w_j · v_j in ascending j, and lse_i = max + log Σ exp(s - max) (-inf, out_i = 0
// for a query that sees no key). q [batch, tq, d], k [batch, tk, d], v [batch, tk, dv],
// out [batch, tq, dv], lse [batch, tq], contiguous.
namespace kernel_detail {
struct AttentionShape {
  int64_t batch, tq, tk, d, dv;
  int rank;
  const int64_t *extent, *mask_stride;
  const int32_t* mask;  // null: none
  bool causal;
  bool sees(int64_t p, int64_t i, int64_t j) const {
    if (causal) return j <= i;
    if (!mask) return true;
    int64_t at = (p * tq + i) * tk + j, offset = 0;
    for (int k = rank - 1; k >= 0; k--) {
      offset += (at % extent[k]) * mask_stride[k];
      at /= extent[k];
    }
    return mask[offset] != 0;
  }
  // Query (p, i)'s scores scale · q_i · k_j into s (kept keys only) and their max.
  template <class T>
  bool scores(const T* q, const T* k, T scale, int64_t p, int64_t i, std::vector<T>& s,
              std::vector<char>& kept, T& m) const {
    bool any = false;
    m = -std::numeric_limits<T>::infinity();
    for (int64_t j = 0; j < tk; j++) {
      kept[j] = sees(p, i, j);
      if (!kept[j]) continue;
      T dot = T(0);
      for (int64_t c = 0; c < d; c++) dot += q[(p * tq + i) * d + c] * k[(p * tk + j) * d + c];
      s[j] = scale * dot;
      if (m == m && !(s[j] <= m)) m = s[j];
      any = true;
    }
    return any;
  }
};
}  // namespace kernel_detail

template <class T>
void flash_attention(const T* q, const T* k, const T* v, const int32_t* mask, int rank,
                     const int64_t* extent, const int64_t* mask_stride, T* out, T* lse,
                     int64_t batch, int64_t tq, int64_t tk, int64_t d, int64_t dv,
                     bool causal, T scale) {
  const kernel_detail::AttentionShape a{batch, tq, tk, d, dv, rank, extent, mask_stride,
                                        mask, causal};
  std::vector<T> s(static_cast<size_t>(tk));
  std::vector<char> kept(static_cast<size_t>(tk));
  for (int64_t p = 0; p < batch; p++)
    for (int64_t i = 0; i < tq; i++) {
      T* o = out + (p * tq + i) * dv;
      for (int64_t c = 0; c < dv; c++) o[c] = T(0);
      T m;
      if (!a.scores(q, k, scale, p, i, s, kept, m)) {
        lse[p * tq + i] = -std::numeric_limits<T>::infinity();
        continue;
      }
      T sum = T(0);
      for (int64_t j = 0; j < tk; j++)
        if (kept[j]) sum += std::exp(s[j] - m);
      for (int64_t j = 0; j < tk; j++) {
        if (!kept[j]) continue;
        const T w = std::exp(s[j] - m) / sum;
        for (int64_t c = 0; c < dv; c++) o[c] += w * v[(p * tk + j) * dv + c];
      }
      lse[p * tq + i] = m + std::log(sum);
    }
}

// flash_attention's gradients for dy = d(out): per query, its weights recomputed from
// lse (w_j = exp(s_j - lse_i), 0 where blocked or lse_i = -inf), delta_i = Σ_c dy_i·out_i,
// dS_j = w_j · (dy_i · v_j - delta_i); dq_i = scale · Σ_j dS_j · k_j (ascending j),
// dk_j += scale · dS_j · q_i and dv_j += w_j · dy_i (ascending i). Layouts as above.
template <class T>
void flash_attention_grad(const T* dy, const T* q, const T* k, const T* v, const T* out,
                          const T* lse, const int32_t* mask, int rank, const int64_t* extent,
                          const int64_t* mask_stride, T* dq, T* dk, T* dv_out,
                          int64_t batch, int64_t tq, int64_t tk, int64_t d, int64_t dv,
                          bool causal, T scale) {
  const kernel_detail::AttentionShape a{batch, tq, tk, d, dv, rank, extent, mask_stride,
                                        mask, causal};
  std::fill(dq, dq + batch * tq * d, T(0));
  std::fill(dk, dk + batch * tk * d, T(0));
  std::fill(dv_out, dv_out + batch * tk * dv, T(0));
  std::vector<T> s(static_cast<size_t>(tk));
  std::vector<char> kept(static_cast<size_t>(tk));
  for (int64_t p = 0; p < batch; p++)
    for (int64_t i = 0; i < tq; i++) {
      const T l = lse[p * tq + i];
      T m;
      if (!a.scores(q, k, scale, p, i, s, kept, m) || !(l > -std::numeric_limits<T>::infinity()))
        continue;
      const T* g = dy + (p * tq + i) * dv;
      T delta = T(0);
      for (int64_t c = 0; c < dv; c++) delta += g[c] * out[(p * tq + i) * dv + c];
      for (int64_t j = 0; j < tk; j++) {
        if (!kept[j]) continue;
        const T w = std::exp(s[j] - l);
        T dp = T(0);
        for (int64_t c = 0; c < dv; c++) dp += g[c] * v[(p * tk + j) * dv + c];
        const T ds = w * (dp - delta);
        for (int64_t c = 0; c < dv; c++) dv_out[(p * tk + j) * dv + c] += w * g[c];
        for (int64_t c = 0; c < d; c++) {
          dq[(p * tq + i) * d + c] += scale * ds * k[(p * tk + j) * d + c];
          dk[(p * tk + j) * d + c] += scale * ds * q[(p * tq + i) * d + c];
        }
      }
    }
}

// Attention over heads packed side by side (qkv_attention): qkv [batch, tokens, 3·heads·d]
// holds along its last axis q's heads of d features, then k's, then v's; head h of batch
// entry b is flash_attention's batch entry p = b·heads + h, its query row t read from
// qkv[b, t, h·d + c] (k's at offset heads·d, v's at 2·heads·d). The heads are copied out
// into contiguous [batch·heads, tokens, d] tensors and run through flash_attention (its
// sums exactly), each output row stored back at out[b, t, h·d + c] (out [batch, tokens,
// heads·d]); lse [batch, heads, tokens] is flash_attention's. The mask is read as
// flash_attention's over the scores [batch, heads, tokens, tokens].
namespace kernel_detail {
// The one index mapping of packed heads: f(packed, head) for each element of part
// `part` (of `parts` side by side) of a packed [batch, tokens, parts·heads·d] tensor,
// `head` its offset in the contiguous [batch·heads, tokens, d] heads.
template <class F>
void for_each_packed_head_element(int64_t batch, int64_t tokens, int64_t heads, int64_t d,
                                  int64_t parts, int64_t part, F&& f) {
  const int64_t row = parts * heads * d;
  for (int64_t b = 0; b < batch; b++)
    for (int64_t h = 0; h < heads; h++)
      for (int64_t t = 0; t < tokens; t++)
        for (int64_t c = 0; c < d; c++)
          f((b * tokens + t) * row + (part * heads + h) * d + c,
            ((b * heads + h) * tokens + t) * d + c);
}
}  // namespace kernel_detail

template <class T>
void qkv_attention(const T* qkv, const int32_t* mask, int rank, const int64_t* extent,
                   const int64_t* mask_stride, T* out, T* lse, int64_t batch, int64_t tokens,
                   int64_t heads, int64_t d, bool causal, T scale) {
  const size_t n = static_cast<size_t>(batch * heads * tokens * d);
  std::vector<T> q(n), k(n), v(n), o(n);
  T* part_of[] = {q.data(), k.data(), v.data()};
  for (int64_t part = 0; part < 3; part++)
    kernel_detail::for_each_packed_head_element(
        batch, tokens, heads, d, 3, part,
        [&](int64_t at, int64_t head) { part_of[part][head] = qkv[at]; });
  flash_attention<T>(q.data(), k.data(), v.data(), mask, rank, extent, mask_stride, o.data(),
                     lse, batch * heads, tokens, tokens, d, d, causal, scale);
  kernel_detail::for_each_packed_head_element(
      batch, tokens, heads, d, 1, 0, [&](int64_t at, int64_t head) { out[at] = o[head]; });
}

// qkv_attention's gradient: dy and out [batch, tokens, heads·d] (out's layout), lse
// [batch, heads, tokens]; flash_attention_grad's dq, dk and dv of each head written into
// dqkv [batch, tokens, 3·heads·d] where qkv_attention read that head's q, k and v.
template <class T>
void qkv_attention_grad(const T* dy, const T* qkv, const T* out, const T* lse,
                        const int32_t* mask, int rank, const int64_t* extent,
                        const int64_t* mask_stride, T* dqkv, int64_t batch, int64_t tokens,
                        int64_t heads, int64_t d, bool causal, T scale) {
  const size_t n = static_cast<size_t>(batch * heads * tokens * d);
  std::vector<T> q(n), k(n), v(n), g(n), o(n), dq(n), dk(n), dv(n);
  T* part_of[] = {q.data(), k.data(), v.data()};
  for (int64_t part = 0; part < 3; part++)
    kernel_detail::for_each_packed_head_element(
        batch, tokens, heads, d, 3, part,
        [&](int64_t at, int64_t head) { part_of[part][head] = qkv[at]; });
  kernel_detail::for_each_packed_head_element(batch, tokens, heads, d, 1, 0,
                                              [&](int64_t at, int64_t head) {
                                                g[head] = dy[at];
                                                o[head] = out[at];
                                              });
  flash_attention_grad<T>(g.data(), q.data(), k.data(), v.data(), o.data(), lse, mask, rank,
                          extent, mask_stride, dq.data(), dk.data(), dv.data(),
                          batch * heads, tokens, tokens, d, d, causal, scale);
  const T* grad_of[] = {dq.data(), dk.data(), dv.data()};
  for (int64_t part = 0; part < 3; part++)
    kernel_detail::for_each_packed_head_element(
        batch, tokens, heads, d, 3, part,
        [&](int64_t at, int64_t head) { dqkv[at] = grad_of[part][head]; });
}

// y = (x - mean) * rstd * weight + bias over each of `rows` contiguous rows of d
// elements (torch.nn.functional.layer_norm over the last axis); weight and bias may
// be null (then 1 and 0). With an addend (not null), the rows normalised are
// x + addend, written to `sum` first (rounded to T: the separate add's bits).
template <class T>
void layer_norm(const T* x, const T* weight, const T* bias, const T* addend, T* y, T* sum,
                int64_t rows, int64_t d, T eps) {
  for (int64_t r = 0; r < rows; r++) {
    const T* xr = x + r * d;
    if (addend) {
      for (int64_t k = 0; k < d; k++) sum[r * d + k] = xr[k] + addend[r * d + k];
      xr = sum + r * d;
    }
    T mean, rstd;
    kernel_detail::row_stats(xr, d, eps, mean, rstd);
    for (int64_t k = 0; k < d; k++) {
      T v = (xr[k] - mean) * rstd;
      if (weight) v *= weight[k];
      if (bias) v += bias[k];
      y[r * d + k] = v;
    }
  }
}

// layer_norm's gradients: with xhat = (x - mean) * rstd and g = grad * weight (grad
// when weight is null), dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) per row,
// plus addend[i] where addend is not null (addend + dx, dx rounded to T first: the
// separate add's bits); dweight = Σ_rows grad * xhat and dbias = Σ_rows grad where
// they are not null (left folds over the rows in order). The row statistics are
// recomputed exactly as layer_norm computes them.
template <class T>
void layer_norm_grad(const T* grad, const T* x, const T* weight, const T* addend, T* dx,
                     T* dweight, T* dbias, int64_t rows, int64_t d, T eps) {
  for (int64_t k = 0; k < d; k++) {
    if (dweight) dweight[k] = T(0);
    if (dbias) dbias[k] = T(0);
  }
  for (int64_t r = 0; r < rows; r++) {
    const T* xr = x + r * d;
    const T* gr = grad + r * d;
    T mean, rstd;
    kernel_detail::row_stats(xr, d, eps, mean, rstd);
    T sum_g = T(0), sum_gx = T(0);
    for (int64_t k = 0; k < d; k++) {
      const T g = weight ? gr[k] * weight[k] : gr[k];
      sum_g += g;
      sum_gx += g * (xr[k] - mean) * rstd;
    }
    for (int64_t k = 0; k < d; k++) {
      const T g = weight ? gr[k] * weight[k] : gr[k];
      const T xhat = (xr[k] - mean) * rstd;
      const T v = rstd * (g - sum_g / T(d) - xhat * (sum_gx / T(d)));
      dx[r * d + k] = addend ? addend[r * d + k] + v : v;
      if (dweight) dweight[k] += gr[k] * xhat;
      if (dbias) dbias[k] += gr[k];
    }
  }
}

// --- Random ops: counter_rng.h's generator, element i of op `ordinal` --------------
// `ctx` is the executor's step context (counter_rng.h's RngContextSlot): the step,
// whether this forward is a training step, the run seed. The same loops as
// runtime/cuda/kernels/random.cuh, one element per iteration.

// ---- Batch normalisation (batch_norm, batch_norm_grad) ---------------------------
// x is [n, channels, spatial] (the input [N, C, *spatial] with its spatial axes
// flattened); channel c's M = n · spatial elements are x[(i · channels + c) · spatial +
// k], visited i ascending, then k. Statistics and per-element arithmetic are in double
// (for f32 runs too), each sum a left fold from 0 in that order; what is stored is
// rounded to T once. runtime/cuda/kernels/batchnorm.cuh computes the same formulas.

// batch_norm: in a training step (ctx[kRngTraining], the executor's step context),
// channel c's mean and biased variance var = Σ (x - mean)² / M (two passes), saved as
// mean[c] = T(mean), rstd[c] = T(1 / sqrt(var + eps)), and the running statistics
// updated in place as torch's: running_mean = (1 - momentum) · running_mean + momentum
// · mean, running_var = (1 - momentum) · running_var + momentum · Σ (x - mean)² /
// (M - 1) (unbiased). In any other forward mean[c] = running_mean[c], rstd[c] = T(1 /
// sqrt(running_var[c] + eps)), the running statistics untouched. Either way y = (x -
// mean[c]) · rstd[c] · weight[c] + bias[c] (weight 1, bias 0 when null), from the
// stored (rounded) mean and rstd, which the VJP reads too.
template <class T>
void batch_norm(const T* x, const T* weight, const T* bias, T* running_mean,
                T* running_var, T* y, T* mean, T* rstd, int64_t n, int64_t channels,
                int64_t spatial, double eps, double momentum, const long long* ctx) {
  const bool training = ctx[kRngTraining] != 0;
  const double m = double(n * spatial);
  for (int64_t c = 0; c < channels; c++) {
    auto at = [&](int64_t i, int64_t k) { return (i * channels + c) * spatial + k; };
    if (training) {
      double sum = 0;
      for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < spatial; k++) sum += double(x[at(i, k)]);
      const double mu = sum / m;
      double sq = 0;
      for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < spatial; k++) {
          const double d = double(x[at(i, k)]) - mu;
          sq += d * d;
        }
      mean[c] = T(mu);
      rstd[c] = T(1.0 / std::sqrt(sq / m + eps));
      running_mean[c] = T((1.0 - momentum) * double(running_mean[c]) + momentum * mu);
      running_var[c] = T((1.0 - momentum) * double(running_var[c]) + momentum * (sq / (m - 1)));
    } else {
      mean[c] = running_mean[c];
      rstd[c] = T(1.0 / std::sqrt(double(running_var[c]) + eps));
    }
    const double mu = double(mean[c]), r = double(rstd[c]);
    const double w = weight ? double(weight[c]) : 1.0, b = bias ? double(bias[c]) : 0.0;
    for (int64_t i = 0; i < n; i++)
      for (int64_t k = 0; k < spatial; k++)
        y[at(i, k)] = T((double(x[at(i, k)]) - mu) * r * w + b);
  }
}

// batch_norm's VJP in a training step, from its saved mean and rstd: with x̂ = (x -
// mean[c]) · rstd[c], dbias[c] = Σ grad, dweight[c] = Σ grad · x̂ (where not null), and
// dx = weight[c] · rstd[c] · (grad - Σ grad / M - x̂ · Σ(grad · x̂) / M).
template <class T>
void batch_norm_grad(const T* grad, const T* x, const T* mean, const T* rstd,
                     const T* weight, T* dx, T* dweight, T* dbias, int64_t n,
                     int64_t channels, int64_t spatial) {
  const double m = double(n * spatial);
  for (int64_t c = 0; c < channels; c++) {
    auto at = [&](int64_t i, int64_t k) { return (i * channels + c) * spatial + k; };
    const double mu = double(mean[c]), r = double(rstd[c]);
    double sum_g = 0, sum_gx = 0;
    for (int64_t i = 0; i < n; i++)
      for (int64_t k = 0; k < spatial; k++) {
        const double g = double(grad[at(i, k)]);
        sum_g += g;
        sum_gx += g * ((double(x[at(i, k)]) - mu) * r);
      }
    if (dweight) dweight[c] = T(sum_gx);
    if (dbias) dbias[c] = T(sum_g);
    const double scale = (weight ? double(weight[c]) : 1.0) * r;
    const double mean_g = sum_g / m, mean_gx = sum_gx / m;
    for (int64_t i = 0; i < n; i++)
      for (int64_t k = 0; k < spatial; k++) {
        const double xhat = (double(x[at(i, k)]) - mu) * r;
        dx[at(i, k)] = T(scale * (double(grad[at(i, k)]) - mean_g - xhat * mean_gx));
      }
  }
}

// dropout: x · (drawn ? 0 : 1/(1-p)) in a training step, x otherwise.
template <class T>
void dropout(const T* x, T* y, int64_t n, double p, const long long* ctx, int64_t ordinal) {
  if (ctx[kRngTraining] == 0) {
    for (int64_t i = 0; i < n; i++) y[i] = x[i];
    return;
  }
  const unsigned long long stream = rng_stream_of(ctx, ordinal);
  const unsigned long long threshold = rng_threshold(p);
  const T keep = T(1.0 / (1.0 - p));
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] * (rng_u53(stream, (unsigned long long)i) < threshold ? T(0) : keep);
}

// rand_uniform: u53 · 2^-53 in double, rounded to T.
template <class T>
void rand_uniform(T* y, int64_t n, const long long* ctx, int64_t ordinal) {
  const unsigned long long stream = rng_stream_of(ctx, ordinal);
  for (int64_t i = 0; i < n; i++) y[i] = T(rng_uniform(rng_u53(stream, (unsigned long long)i)));
}

// bernoulli_mask: 1 where drawn, else 0.
template <class T>
void bernoulli_mask(T* y, int64_t n, double p, const long long* ctx, int64_t ordinal) {
  const unsigned long long stream = rng_stream_of(ctx, ordinal);
  const unsigned long long threshold = rng_threshold(p);
  for (int64_t i = 0; i < n; i++)
    y[i] = rng_u53(stream, (unsigned long long)i) < threshold ? T(1) : T(0);
}

// causal_mask: out [rows, columns] is 1 where j <= i, the lower triangle, else 0. Mask
// is the i1 mask's storage type (int32 in an executable's buffers).
template <class Mask>
void causal_mask(Mask* out, int64_t rows, int64_t columns) {
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < columns; j++) out[i * columns + j] = j <= i ? 1 : 0;
}

}  // namespace vouch::rt

// The scalar helpers emitted pointwise formulas call: gelu's formula and derivative,
// with the same names and steps as runtime/cuda/kernels/gelu.cuh's device versions (one
// emitted expression serves both targets, hence namespace vouch). Every product and sum
// rounds on its own: generated cpu code is compiled with -ffp-contract=off
// (codegen/NativeBuild.cpp), so nothing here is fused into an FMA, as on cuda.
namespace vouch {

// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))): TorchLean's (and PyTorch's "tanh") form.
template <class T>
T gelu_tanh(T x) {
  const T x3 = (x * x) * x;
  const T u = T(0.7978845608028654) * (x + T(0.044715) * x3);
  return (T(0.5) * x) * (T(1) + std::tanh(u));
}

// 0.5·x·(1 + erf(x/√2)): PyTorch's exact ("none") form.
template <class T>
T gelu_erf(T x) {
  return (T(0.5) * x) * (T(1) + std::erf(x * T(0.7071067811865476)));
}

// d gelu_tanh / dx = ½(1 + t) + ½x(1 - t²)·√(2/π)(1 + 3·0.044715·x²), t = tanh(u).
template <class T>
T gelu_tanh_grad(T x) {
  const T x2 = x * x;
  const T u = T(0.7978845608028654) * (x + T(0.044715) * (x2 * x));
  const T t = std::tanh(u);
  const T du = T(0.7978845608028654) * (T(1) + T(0.134145) * x2);
  return T(0.5) * (T(1) + t) + (T(0.5) * x) * ((T(1) - t * t) * du);
}

// d gelu_erf / dx = Φ(x) + x·φ(x).
template <class T>
T gelu_erf_grad(T x) {
  const T cdf = T(0.5) * (T(1) + std::erf(x * T(0.7071067811865476)));
  const T pdf = std::exp(T(-0.5) * (x * x)) * T(0.3989422804014327);
  return cdf + x * pdf;
}

}  // namespace vouch

// The pooling kernels (max_pool, avg_pool, smooth_max_pool and their gradients): a
// file of their own, part of this header for generated code and capsules alike.
#include "runtime/cpu_pool.h"

#endif  // VOUCH_RUNTIME_CPU_KERNELS_H_
