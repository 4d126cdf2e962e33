//===- Interpreter.cpp - the float64 reference interpreter ------*- C++ -*-===//
#include "passes/Interpreter.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/GemmDims.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace vouch;

namespace {

std::vector<int64_t> shapeOf(Value v) {
  auto shape = cast<RankedTensorType>(v.getType()).getShape();
  return {shape.begin(), shape.end()};
}

/// Row-major strides of a shape.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Multi-index of flat position `flat` in `shape`.
std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size());
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    index[i] = flat % shape[i];
    flat /= shape[i];
  }
  return index;
}

HostTensor zerosLike(Value v) {
  HostTensor t{shapeOf(v), {}};
  t.data.assign(getNumElements(v.getType()), 0.0);
  return t;
}

/// C = op(A)·op(B) per batch entry (GemmDims), into a tensor of `shape`.
HostTensor matmul(const HostTensor &a, const HostTensor &b, const GemmDims &d,
                  std::vector<int64_t> shape) {
  HostTensor c{std::move(shape), std::vector<double>(d.batch * d.m * d.n)};
  int64_t ac = a.shape.back(), bc = b.shape.back();  // row lengths as stored
  int64_t m = d.m, n = d.n, k = d.k;
  for (int64_t p = 0; p < d.batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t q = 0; q < k; ++q) {
          double x = d.transA ? a.data[p * d.strideA + q * ac + i]
                              : a.data[p * d.strideA + i * ac + q];
          double y = d.transB ? b.data[p * d.strideB + j * bc + q]
                              : b.data[p * d.strideB + q * bc + j];
          sum += x * y;
        }
        c.data[p * m * n + i * n + j] = sum;
      }
  return c;
}

HostTensor matmul(const HostTensor &a, const HostTensor &b, const GemmDims &d,
                  Value result) {
  return matmul(a, b, d, shapeOf(result));
}

HostTensor linear(const HostTensor &x, const HostTensor &w,
                  const HostTensor *bias, Value result) {
  HostTensor y = zerosLike(result);
  int64_t out = w.shape[0], in = w.shape[1];
  int64_t rows = static_cast<int64_t>(x.data.size()) / in;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double sum = 0;
      for (int64_t i = 0; i < in; ++i)
        sum += w.data[o * in + i] * x.data[r * in + i];
      y.data[r * out + o] = sum + (bias ? bias->data[o] : 0.0);
    }
  return y;
}

/// A convolution's windows, read off the op's attributes: window o of a
/// spatial axis reads, at kernel offset k, image position o·stride −
/// padding + k·dilation (outside the image: the zero padding). Written out
/// here with plain loops over multi-indices (the compiled programs run
/// conv through im2col, matmul and col2im; gradient checks and `run
/// --interpret` against PyTorch hold those to these loops).
struct Windows {
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups;

  template <class OpT>
  explicit Windows(OpT op)
      : stride(op.getStride().begin(), op.getStride().end()),
        padding(op.getPadding().begin(), op.getPadding().end()),
        dilation(op.getDilation().begin(), op.getDilation().end()),
        groups(op.getGroups()) {}

  /// The flat offset within `image` (spatial extents) that window `o` reads
  /// at kernel offset `k`, or -1 in the padding.
  int64_t at(const std::vector<int64_t> &image, const std::vector<int64_t> &o,
             const std::vector<int64_t> &k) const {
    int64_t offset = 0;
    for (size_t i = 0; i < image.size(); ++i) {
      int64_t q = o[i] * stride[i] - padding[i] + k[i] * dilation[i];
      if (q < 0 || q >= image[i])
        return -1;
      offset = offset * image[i] + q;
    }
    return offset;
  }
};

std::vector<int64_t> spatialOf(const std::vector<int64_t> &shape, size_t from) {
  return {shape.begin() + from, shape.end()};
}

int64_t countOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t e : shape)
    n *= e;
  return n;
}

/// conv: y[n, o, p] = bias[o] + Σ_c Σ_k w[o, c, k]·x[n, g·C/G + c, at(p, k)],
/// g = o / (O/G).
HostTensor convolve(const HostTensor &x, const HostTensor &w,
                    const HostTensor *bias, const Windows &win, Value result) {
  HostTensor y = zerosLike(result);
  int64_t batch = x.shape[0], channels = x.shape[1], outputs = w.shape[0];
  int64_t perGroup = channels / win.groups, outPerGroup = outputs / win.groups;
  std::vector<int64_t> image = spatialOf(x.shape, 2), kernel = spatialOf(w.shape, 2),
                       grid = spatialOf(y.shape, 2);
  int64_t pixels = countOf(image), taps = countOf(kernel), windows = countOf(grid);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t o = 0; o < outputs; ++o)
      for (int64_t p = 0; p < windows; ++p) {
        std::vector<int64_t> window = unflatten(p, grid);
        int64_t g = o / outPerGroup;
        double sum = 0;
        for (int64_t c = 0; c < perGroup; ++c)
          for (int64_t k = 0; k < taps; ++k) {
            int64_t q = win.at(image, window, unflatten(k, kernel));
            if (q >= 0)
              sum += w.data[(o * perGroup + c) * taps + k] *
                     x.data[(n * channels + g * perGroup + c) * pixels + q];
          }
        y.data[(n * outputs + o) * windows + p] = sum + (bias ? bias->data[o] : 0.0);
      }
  return y;
}

/// conv_transpose, scattered: each x[n, c, p] times w[c, o', k] is added to
/// y[n, g·O/G + o', at(p, k)] (g = c / (C/G)); then the bias.
HostTensor convolveTransposed(const HostTensor &x, const HostTensor &w,
                              const HostTensor *bias, const Windows &win,
                              Value result) {
  HostTensor y = zerosLike(result);
  int64_t batch = x.shape[0], channels = x.shape[1], outPerGroup = w.shape[1];
  int64_t perGroup = channels / win.groups, outputs = y.shape[1];
  std::vector<int64_t> grid = spatialOf(x.shape, 2), kernel = spatialOf(w.shape, 2),
                       image = spatialOf(y.shape, 2);
  int64_t pixels = countOf(image), taps = countOf(kernel), windows = countOf(grid);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t p = 0; p < windows; ++p) {
        std::vector<int64_t> window = unflatten(p, grid);
        int64_t g = c / perGroup;
        double v = x.data[(n * channels + c) * windows + p];
        for (int64_t o = 0; o < outPerGroup; ++o)
          for (int64_t k = 0; k < taps; ++k) {
            int64_t q = win.at(image, window, unflatten(k, kernel));
            if (q >= 0)
              y.data[(n * outputs + g * outPerGroup + o) * pixels + q] +=
                  w.data[(c * outPerGroup + o) * taps + k] * v;
          }
      }
  if (bias)
    for (size_t i = 0; i < y.data.size(); ++i)
      y.data[i] += bias->data[(i / pixels) % outputs];
  return y;
}

/// im2col (`fold` false): columns [G, C/G·K, N, *grid] from the image; col2im
/// (`fold` true): the image from the columns, each column element added to
/// the image element im2col would read it from.
void windowsAndImage(HostTensor &image, HostTensor &columns,
                     const std::vector<int64_t> &kernel, const Windows &win,
                     bool fold) {
  int64_t batch = image.shape[0], channels = image.shape[1];
  int64_t perGroup = channels / win.groups;
  std::vector<int64_t> spatial = spatialOf(image.shape, 2),
                       grid = spatialOf(columns.shape, 3);
  int64_t pixels = countOf(spatial), taps = countOf(kernel), windows = countOf(grid);
  for (int64_t g = 0; g < win.groups; ++g)
    for (int64_t c = 0; c < perGroup; ++c)
      for (int64_t k = 0; k < taps; ++k)
        for (int64_t n = 0; n < batch; ++n)
          for (int64_t p = 0; p < windows; ++p) {
            int64_t column =
                (((g * perGroup + c) * taps + k) * batch + n) * windows + p;
            int64_t q = win.at(spatial, unflatten(p, grid), unflatten(k, kernel));
            if (q < 0)
              continue; // zero padding: an im2col zero, nothing to fold
            int64_t pixel = (n * channels + g * perGroup + c) * pixels + q;
            if (fold)
              image.data[pixel] += columns.data[column];
            else
              columns.data[column] = image.data[pixel];
          }
}

/// x's axis i as axis dims[i] of `shape`; extent-1 axes repeat.
HostTensor broadcast(const HostTensor &x, ArrayRef<int64_t> dims,
                     const std::vector<int64_t> &shape) {
  HostTensor y{shape, {}};
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  y.data.assign(count, 0.0);
  std::vector<int64_t> inStrides = stridesOf(x.shape);
  for (size_t flat = 0; flat < y.data.size(); ++flat) {
    std::vector<int64_t> index = unflatten(flat, y.shape);
    int64_t source = 0;
    for (size_t i = 0; i < dims.size(); ++i)
      source += (x.shape[i] == 1 ? 0 : index[dims[i]]) * inStrides[i];
    y.data[flat] = x.data[source];
  }
  return y;
}

HostTensor broadcast(const HostTensor &x, ArrayRef<int64_t> dims,
                     Value result) {
  return broadcast(x, dims, shapeOf(result));
}

/// `mask` (i1 as 0 / 1) broadcast NumPy-style (aligned from the last axis)
/// to `shape`.
HostTensor broadcastMask(const HostTensor &mask,
                         const std::vector<int64_t> &shape) {
  llvm::SmallVector<int64_t> dims;
  for (size_t i = shape.size() - mask.shape.size(); i < shape.size(); ++i)
    dims.push_back(static_cast<int64_t>(i));
  return broadcast(mask, dims, shape);
}

/// qkv_attention's layout (ir/VouchOps.td): f(packed, head) for each element
/// of part `part` (0 q, 1 k, 2 v; 0 of a result) of a [..., T, parts·H·d]
/// tensor, `head` its index in that part's heads [..., H, T, d].
template <class F>
void forEachPackedHeadElement(const QkvHeads &h, int64_t parts, int64_t part,
                              F &&f) {
  int64_t width = h.heads * h.features, count = 1;
  for (int64_t b : h.batch)
    count *= b;
  for (int64_t p = 0; p < count; ++p)
    for (int64_t head = 0; head < h.heads; ++head)
      for (int64_t t = 0; t < h.tokens; ++t)
        for (int64_t c = 0; c < h.features; ++c)
          f((p * h.tokens + t) * parts * width + part * width + head * h.features + c,
            ((p * h.heads + head) * h.tokens + t) * h.features + c);
}

/// One part of `packed` [..., T, parts·H·d] as its heads [..., H, T, d].
HostTensor unpackHeads(const HostTensor &packed, const QkvHeads &h,
                       int64_t parts, int64_t part) {
  std::vector<int64_t> shape(h.batch.begin(), h.batch.end());
  shape.insert(shape.end(), {h.heads, h.tokens, h.features});
  HostTensor heads{shape, std::vector<double>(packed.data.size() / parts)};
  forEachPackedHeadElement(h, parts, part, [&](int64_t at, int64_t head) {
    heads.data[head] = packed.data[at];
  });
  return heads;
}

/// unpackHeads' inverse: `heads` [..., H, T, d] stored as part `part` of
/// `packed` [..., T, parts·H·d].
void packHeads(const HostTensor &heads, const QkvHeads &h, int64_t parts,
               int64_t part, HostTensor &packed) {
  forEachPackedHeadElement(h, parts, part, [&](int64_t at, int64_t head) {
    packed.data[at] = heads.data[head];
  });
}

/// Attention, written out directly (not through the ops of its composed
/// form, nor the fused kernels' online softmax, which the compiled program
/// runs): per batch entry p and query i, the weights of the keys j it sees
/// (mask, or j <= i when causal) are the softmax of scale·q_i·k_j.
struct Attention {
  const HostTensor &q, &k, &v;
  const HostTensor *mask; ///< broadcast to the scores [..., Tq, Tk], or null
  bool causal;
  double scale;
  int64_t tq, tk, d, dv, batch;

  Attention(const HostTensor &q, const HostTensor &k, const HostTensor &v,
            const HostTensor *mask, bool causal, double scale)
      : q(q), k(k), v(v), mask(mask), causal(causal), scale(scale) {
    size_t rank = q.shape.size();
    tq = q.shape[rank - 2];
    d = q.shape[rank - 1];
    tk = k.shape[rank - 2];
    dv = v.shape[rank - 1];
    batch = static_cast<int64_t>(q.data.size()) / (tq * d);
  }

  bool sees(int64_t p, int64_t i, int64_t j) const {
    return causal ? j <= i : !mask || mask->data[(p * tq + i) * tk + j] != 0;
  }

  /// Query (p, i)'s weights over the keys (0 where unseen) and the log-sum-
  /// exp of its kept scores; false (weights all 0, lse -inf) when it sees
  /// no key.
  bool weights(int64_t p, int64_t i, std::vector<double> &w, double &lse) const {
    w.assign(tk, 0.0);
    double m = -std::numeric_limits<double>::infinity();
    bool any = false;
    for (int64_t j = 0; j < tk; ++j) {
      if (!sees(p, i, j))
        continue;
      double dot = 0;
      for (int64_t c = 0; c < d; ++c)
        dot += q.data[(p * tq + i) * d + c] * k.data[(p * tk + j) * d + c];
      w[j] = scale * dot;
      m = any ? std::max(m, w[j]) : w[j];
      any = true;
    }
    lse = -std::numeric_limits<double>::infinity();
    if (!any)
      return false;
    double sum = 0;
    for (int64_t j = 0; j < tk; ++j)
      if (sees(p, i, j))
        sum += std::exp(w[j] - m);
    for (int64_t j = 0; j < tk; ++j)
      w[j] = sees(p, i, j) ? std::exp(w[j] - m) / sum : 0.0;
    lse = m + std::log(sum);
    return true;
  }

  /// The result [..., Tq, Dv] (0 for a query that sees no key) and, when
  /// asked, lse [..., Tq].
  HostTensor forward(Value result, HostTensor *lse = nullptr) const {
    return forward(shapeOf(result), lse);
  }
  HostTensor forward(const std::vector<int64_t> &shape, HostTensor *lse) const {
    int64_t count = 1;
    for (int64_t e : shape)
      count *= e;
    HostTensor out{shape, std::vector<double>(count)};
    if (lse)
      *lse = HostTensor{std::vector<int64_t>(q.shape.begin(), q.shape.end() - 1),
                        std::vector<double>(batch * tq)};
    std::vector<double> w;
    for (int64_t p = 0; p < batch; ++p)
      for (int64_t i = 0; i < tq; ++i) {
        double l;
        bool any = weights(p, i, w, l);
        if (lse)
          lse->data[p * tq + i] = l;
        if (!any)
          continue;
        for (int64_t j = 0; j < tk; ++j)
          for (int64_t c = 0; c < dv; ++c)
            out.data[(p * tq + i) * dv + c] += w[j] * v.data[(p * tk + j) * dv + c];
      }
    return out;
  }

  /// dq, dk, dv for the result's gradient dy: dv_j += w_j·dy_i, dS_j =
  /// w_j·(dy_i·v_j - Σ_j' w_j'·dy_i·v_j'), dq_i += scale·Σ_j dS_j·k_j,
  /// dk_j += scale·dS_j·q_i.
  void backward(const HostTensor &dy, HostTensor &dq, HostTensor &dk,
                HostTensor &dvOut) const {
    dq = HostTensor{q.shape, std::vector<double>(q.data.size())};
    dk = HostTensor{k.shape, std::vector<double>(k.data.size())};
    dvOut = HostTensor{v.shape, std::vector<double>(v.data.size())};
    std::vector<double> w, dp(tk);
    for (int64_t p = 0; p < batch; ++p)
      for (int64_t i = 0; i < tq; ++i) {
        double l;
        if (!weights(p, i, w, l))
          continue;
        const double *g = &dy.data[(p * tq + i) * dv];
        double delta = 0;
        for (int64_t j = 0; j < tk; ++j) {
          dp[j] = 0;
          for (int64_t c = 0; c < dv; ++c)
            dp[j] += g[c] * v.data[(p * tk + j) * dv + c];
          delta += w[j] * dp[j];
        }
        for (int64_t j = 0; j < tk; ++j) {
          if (w[j] == 0)
            continue;
          double ds = w[j] * (dp[j] - delta);
          for (int64_t c = 0; c < dv; ++c)
            dvOut.data[(p * tk + j) * dv + c] += w[j] * g[c];
          for (int64_t c = 0; c < d; ++c) {
            dq.data[(p * tq + i) * d + c] += scale * ds * k.data[(p * tk + j) * d + c];
            dk.data[(p * tk + j) * d + c] += scale * ds * q.data[(p * tq + i) * d + c];
          }
        }
      }
  }
};

HostTensor permute(const HostTensor &x, ArrayRef<int64_t> perm, Value result) {
  HostTensor y = zerosLike(result);
  std::vector<int64_t> inStrides = stridesOf(x.shape);
  for (size_t flat = 0; flat < y.data.size(); ++flat) {
    std::vector<int64_t> index = unflatten(flat, y.shape);
    int64_t source = 0;
    for (size_t i = 0; i < perm.size(); ++i)
      source += index[i] * inStrides[perm[i]];
    y.data[flat] = x.data[source];
  }
  return y;
}

/// Sums over `axes` in increasing flat order of the input (a left fold per
/// output element).
/// Calls visit(flat, target) for each element of x in row-major order: target
/// is the element of `y` (x reduced over `axes`) it falls into.
template <class Visit>
void forEachReduced(const HostTensor &x, ArrayRef<int64_t> axes,
                    const HostTensor &y, Visit visit) {
  std::vector<int64_t> outStrides = stridesOf(y.shape);
  for (size_t flat = 0; flat < x.data.size(); ++flat) {
    std::vector<int64_t> index = unflatten(flat, x.shape);
    int64_t target = 0, k = 0;
    for (size_t i = 0; i < index.size(); ++i)
      if (!llvm::is_contained(axes, static_cast<int64_t>(i)))
        target += index[i] * outStrides[k++];
    visit(flat, target);
  }
}

/// cross_entropy in float64 over rows of the last axis: the mean loss, and,
/// when `dz` is given, dloss · (softmax - onehot) / kept into it (0 on ignored
/// rows). A label that is not a class gives NaN, as the kernels do.
/// Rows of `pitch` = the class axis's extent, of which the first `classes`
/// count (dz is 0 past them).
HostTensor crossEntropy(const HostTensor &logits, const HostTensor &labels,
                        int64_t classes, int64_t ignore, HostTensor *dz,
                        double dloss = 0) {
  const int64_t pitch = logits.shape.back();
  const int64_t rows = static_cast<int64_t>(labels.data.size());
  int64_t kept = 0;
  for (double l : labels.data)
    kept += static_cast<int64_t>(l) != ignore;
  if (dz)
    dz->data.assign(logits.data.size(), 0.0);
  double sum = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t label = static_cast<int64_t>(labels.data[r]);
    if (label == ignore)
      continue;
    const double *z = logits.data.data() + r * pitch;
    if (label < 0 || label >= classes) {
      sum = std::nan("");
      if (dz)
        std::fill_n(dz->data.begin() + r * pitch, classes, std::nan(""));
      continue;
    }
    double max = *std::max_element(z, z + classes), total = 0;
    for (int64_t c = 0; c < classes; ++c)
      total += std::exp(z[c] - max);
    sum += std::log(total) + max - z[label];
    if (dz)
      for (int64_t c = 0; c < classes; ++c)
        dz->data[r * pitch + c] =
            dloss * (std::exp(z[c] - max) / total - (c == label ? 1.0 : 0.0)) /
            static_cast<double>(kept);
  }
  return HostTensor{{}, {sum / static_cast<double>(kept)}};
}

HostTensor reduceSum(const HostTensor &x, ArrayRef<int64_t> axes,
                     Value result) {
  HostTensor y = zerosLike(result);
  forEachReduced(x, axes, y, [&](size_t flat, int64_t target) {
    y.data[target] += x.data[flat];
  });
  return y;
}

/// The maximum (or minimum) of each slice: NaN if one of its elements is NaN
/// (torch.amax / torch.amin), the elements visited in row-major order.
HostTensor reduceExtreme(const HostTensor &x, ArrayRef<int64_t> axes,
                         Value result, bool max) {
  HostTensor y = zerosLike(result);
  std::fill(y.data.begin(), y.data.end(),
            max ? -std::numeric_limits<double>::infinity()
                : std::numeric_limits<double>::infinity());
  forEachReduced(x, axes, y, [&](size_t flat, int64_t target) {
    double v = x.data[flat], &out = y.data[target];
    if (!std::isnan(out) && (std::isnan(v) || (max ? v > out : v < out)))
      out = v;
  });
  return y;
}

/// slice (scatter = false: y[.., j, ..] = x[.., start + j·step, ..]) or
/// slice_scatter (scatter = true: y zero but y[.., start + j·step, ..] =
/// x[.., j, ..]), by coordinates: each element of the smaller tensor is
/// mapped to its place in the larger one.
HostTensor sliceOrScatter(const HostTensor &x, int64_t axis, int64_t start,
                          int64_t step, Value result, bool scatter) {
  HostTensor y = zerosLike(result);
  const HostTensor &small = scatter ? x : y;
  const std::vector<int64_t> &large = scatter ? y.shape : x.shape;
  std::vector<int64_t> largeStrides = stridesOf(large);
  for (size_t flat = 0; flat < small.data.size(); ++flat) {
    std::vector<int64_t> index = unflatten(flat, small.shape);
    index[axis] = start + index[axis] * step;
    int64_t at = 0;
    for (size_t i = 0; i < index.size(); ++i)
      at += index[i] * largeStrides[i];
    if (scatter)
      y.data[at] = x.data[flat];
    else
      y.data[flat] = x.data[at];
  }
  return y;
}

/// Calls f(offsets) for every row along `axis` of a tensor of `shape`: the n
/// flat offsets of the row's elements, in order along the axis.
void forEachRow(const std::vector<int64_t> &shape, int64_t axis,
                llvm::function_ref<void(ArrayRef<int64_t>)> f) {
  int64_t outer = 1, n = shape[axis], inner = 1;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    if (i < axis)
      outer *= shape[i];
    if (i > axis)
      inner *= shape[i];
  }
  std::vector<int64_t> row(n);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t k = 0; k < n; ++k)
        row[k] = (o * n + k) * inner + i;
      f(row);
    }
}

/// softmax (or log_softmax) along `axis`, shifted by the row's maximum; a
/// NaN in a row makes the row NaN.
HostTensor softmax(const HostTensor &x, int64_t axis, bool log) {
  HostTensor y = x;
  forEachRow(x.shape, axis, [&](ArrayRef<int64_t> row) {
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t at : row)
      if (std::isnan(x.data[at]) || x.data[at] > m)
        m = std::isnan(m) ? m : x.data[at];
    double sum = 0;
    for (int64_t at : row)
      sum += std::exp(x.data[at] - m);
    for (int64_t at : row)
      y.data[at] = log ? x.data[at] - m - std::log(sum)
                       : std::exp(x.data[at] - m) / sum;
  });
  return y;
}

/// masked_softmax along `axis`: softmax over the elements whose mask (0 / 1,
/// already broadcast to x's shape) is nonzero, 0 elsewhere and on rows keeping
/// none.
HostTensor maskedSoftmax(const HostTensor &x, const HostTensor &mask,
                         int64_t axis) {
  HostTensor y = x;
  auto kept = [&](int64_t at) { return mask.data[at] != 0; };
  forEachRow(x.shape, axis, [&](ArrayRef<int64_t> row) {
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t at : row)
      if (kept(at) && (std::isnan(x.data[at]) || x.data[at] > m))
        m = std::isnan(m) ? m : x.data[at];
    double sum = 0;
    for (int64_t at : row)
      if (kept(at))
        sum += std::exp(x.data[at] - m);
    for (int64_t at : row)
      y.data[at] = kept(at) ? std::exp(x.data[at] - m) / sum : 0.0;
  });
  return y;
}

/// The VJP of softmax (y · (g - Σ g·y)) or log_softmax (g - exp(y) · Σ g)
/// along `axis`, from the result y.
HostTensor softmaxGrad(const HostTensor &g, const HostTensor &y, int64_t axis,
                       bool log) {
  HostTensor dx = g;
  forEachRow(g.shape, axis, [&](ArrayRef<int64_t> row) {
    double s = 0;
    for (int64_t at : row)
      s += log ? g.data[at] : g.data[at] * y.data[at];
    for (int64_t at : row)
      dx.data[at] = log ? g.data[at] - std::exp(y.data[at]) * s
                        : y.data[at] * (g.data[at] - s);
  });
  return dx;
}

/// Each row of the last axis: its mean and 1 / sqrt(biased var + eps).
void layerNormStats(ArrayRef<double> row, double eps, double &mean,
                    double &rstd) {
  mean = 0;
  for (double v : row)
    mean += v;
  mean /= static_cast<double>(row.size());
  double var = 0;
  for (double v : row)
    var += (v - mean) * (v - mean);
  rstd = 1.0 / std::sqrt(var / static_cast<double>(row.size()) + eps);
}

HostTensor layerNorm(const HostTensor &x, const HostTensor *w,
                     const HostTensor *b, double eps) {
  HostTensor y = x;
  size_t d = x.shape.back();
  for (size_t r = 0; r < x.data.size() / d; ++r) {
    double mean, rstd;
    layerNormStats(ArrayRef(x.data).slice(r * d, d), eps, mean, rstd);
    for (size_t k = 0; k < d; ++k)
      y.data[r * d + k] = (x.data[r * d + k] - mean) * rstd *
                              (w ? w->data[k] : 1.0) +
                          (b ? b->data[k] : 0.0);
  }
  return y;
}

/// layer_norm's gradients: dx = rstd · (g - mean(g) - x̂ · mean(g · x̂)) per
/// row, g = grad · weight; dw = Σ_rows grad · x̂ and db = Σ_rows grad into
/// `dw` / `db` where they are not null.
HostTensor layerNormGrad(const HostTensor &grad, const HostTensor &x,
                         const HostTensor *w, double eps, HostTensor *dw,
                         HostTensor *db) {
  HostTensor dx = x;
  size_t d = x.shape.back();
  for (HostTensor *p : {dw, db})
    if (p)
      *p = HostTensor{{static_cast<int64_t>(d)}, std::vector<double>(d, 0.0)};
  for (size_t r = 0; r < x.data.size() / d; ++r) {
    double mean, rstd;
    layerNormStats(ArrayRef(x.data).slice(r * d, d), eps, mean, rstd);
    double meanG = 0, meanGx = 0;
    for (size_t k = 0; k < d; ++k) {
      double g = grad.data[r * d + k] * (w ? w->data[k] : 1.0);
      meanG += g / static_cast<double>(d);
      meanGx += g * (x.data[r * d + k] - mean) * rstd / static_cast<double>(d);
    }
    for (size_t k = 0; k < d; ++k) {
      double dy = grad.data[r * d + k];
      double g = dy * (w ? w->data[k] : 1.0);
      double xhat = (x.data[r * d + k] - mean) * rstd;
      dx.data[r * d + k] = rstd * (g - meanG - xhat * meanGx);
      if (dw)
        dw->data[k] += dy * xhat;
      if (db)
        db->data[k] += dy;
    }
  }
  return dx;
}

/// batch_norm's layout: x [N, C, *spatial] as [N, C, S], channel c's
/// elements (n, c, s) in (n, s) order.
struct ChannelLayout {
  size_t n, c, s;
  explicit ChannelLayout(const std::vector<int64_t> &shape)
      : n(shape[0]), c(shape[1]), s(1) {
    for (size_t i = 2; i < shape.size(); ++i)
      s *= shape[i];
  }
  size_t at(size_t i, size_t ch, size_t k) const { return (i * c + ch) * s + k; }
  double count() const { return static_cast<double>(n * s); }
};

/// batch_norm: in training, each channel's mean and biased variance (left
/// folds over (n, s)), rstd = 1 / sqrt(var + eps), and the running statistics
/// updated with momentum (the variance unbiased: var·M / (M - 1)); otherwise
/// mean and rstd from the running statistics, left as they are. y = (x -
/// mean)·rstd·w + b.
void batchNorm(const HostTensor &x, const HostTensor *w, const HostTensor *b,
               HostTensor &runningMean, HostTensor &runningVar, double eps,
               double momentum, bool training, HostTensor &y, HostTensor &mean,
               HostTensor &rstd) {
  ChannelLayout l(x.shape);
  y = x;
  std::vector<int64_t> row{static_cast<int64_t>(l.c)};
  mean = HostTensor{row, std::vector<double>(l.c)};
  rstd = mean;
  for (size_t ch = 0; ch < l.c; ++ch) {
    double mu, r;
    if (training) {
      double sum = 0;
      for (size_t i = 0; i < l.n; ++i)
        for (size_t k = 0; k < l.s; ++k)
          sum += x.data[l.at(i, ch, k)];
      mu = sum / l.count();
      double sq = 0;
      for (size_t i = 0; i < l.n; ++i)
        for (size_t k = 0; k < l.s; ++k)
          sq += (x.data[l.at(i, ch, k)] - mu) * (x.data[l.at(i, ch, k)] - mu);
      r = 1.0 / std::sqrt(sq / l.count() + eps);
      runningMean.data[ch] = (1 - momentum) * runningMean.data[ch] + momentum * mu;
      runningVar.data[ch] = (1 - momentum) * runningVar.data[ch] +
                            momentum * (sq / (l.count() - 1));
    } else {
      mu = runningMean.data[ch];
      r = 1.0 / std::sqrt(runningVar.data[ch] + eps);
    }
    mean.data[ch] = mu;
    rstd.data[ch] = r;
    for (size_t i = 0; i < l.n; ++i)
      for (size_t k = 0; k < l.s; ++k) {
        size_t at = l.at(i, ch, k);
        y.data[at] = (x.data[at] - mu) * r * (w ? w->data[ch] : 1.0) +
                     (b ? b->data[ch] : 0.0);
      }
  }
}

/// batch_norm_grad: with x̂ = (x - mean)·rstd per channel, dx = w·rstd·(g -
/// Σg / M - x̂·Σ(g·x̂) / M), dw = Σ g·x̂, db = Σ g (left folds over (n, s)),
/// into `dw` / `db` where they are not null.
HostTensor batchNormGrad(const HostTensor &g, const HostTensor &x,
                         const HostTensor &mean, const HostTensor &rstd,
                         const HostTensor *w, HostTensor *dw, HostTensor *db) {
  ChannelLayout l(x.shape);
  HostTensor dx = x;
  for (HostTensor *p : {dw, db})
    if (p)
      *p = HostTensor{{static_cast<int64_t>(l.c)}, std::vector<double>(l.c)};
  for (size_t ch = 0; ch < l.c; ++ch) {
    double mu = mean.data[ch], r = rstd.data[ch];
    double sumG = 0, sumGx = 0;
    for (size_t i = 0; i < l.n; ++i)
      for (size_t k = 0; k < l.s; ++k) {
        size_t at = l.at(i, ch, k);
        sumG += g.data[at];
        sumGx += g.data[at] * (x.data[at] - mu) * r;
      }
    double scale = (w ? w->data[ch] : 1.0) * r;
    for (size_t i = 0; i < l.n; ++i)
      for (size_t k = 0; k < l.s; ++k) {
        size_t at = l.at(i, ch, k);
        double xhat = (x.data[at] - mu) * r;
        dx.data[at] =
            scale * (g.data[at] - sumG / l.count() - xhat * sumGx / l.count());
      }
    if (dw)
      dw->data[ch] = sumGx;
    if (db)
      db->data[ch] = sumG;
  }
  return dx;
}

float roundToF32(double v) { return static_cast<float>(v); }

// The random ops' generator, written out again from docs/language.md (the
// oracle shares no code with the kernels' counter_rng.h).
uint64_t splitMix(uint64_t x) {
  uint64_t z = x + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/// u53 of every element of a random op's result.
std::vector<uint64_t> randomDraws(const RandomContext &ctx, int64_t ordinal,
                                  size_t count) {
  uint64_t stream =
      splitMix(splitMix(ctx.seed ^ splitMix(static_cast<uint64_t>(ordinal))) +
               ctx.step);
  std::vector<uint64_t> u(count);
  for (size_t i = 0; i < count; ++i)
    u[i] = splitMix(stream + i) >> 11;
  return u;
}
uint64_t drawThreshold(double p) {
  return static_cast<uint64_t>(std::ldexp(p, 53));
}

/// v as f32, rounded to the nearest bf16 (8 significant bits; ties to even:
/// std::nearbyint in the default rounding mode), written from the number's
/// value rather than its bits, as the independent reference of
/// vouch.round_bf16. bf16 has f32's exponent range: below 2^-126 its
/// quantum stays 2^-133 (subnormals); a rounded magnitude above its
/// largest finite value, (2 - 2^-7) · 2^127, is infinite.
double roundToBf16(double v) {
  const double f = static_cast<float>(v);
  if (!std::isfinite(f) || f == 0)
    return f;
  int exponent;
  std::frexp(f, &exponent); // |f| = m · 2^exponent, m in [0.5, 1)
  const int quantum = std::max(exponent - 8, -133);
  const double r = std::ldexp(std::nearbyint(std::ldexp(f, -quantum)), quantum);
  const double largest = std::ldexp(2.0 - std::ldexp(1.0, -7), 127);
  if (std::fabs(r) > largest)
    return std::copysign(INFINITY, f);
  return r;
}

/// cast's real -> i32 rule: truncation toward zero; NaN 0, saturated at the
/// int32 limits (no undefined conversion).
double castToInt32(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 2147483647.0)
    return 2147483647.0;
  if (v <= -2147483648.0)
    return -2147483648.0;
  return std::trunc(v);
}

// --- pooling ----------------------------------------------------------------
// Written out from docs/language.md ("Pooling"), over any number of spatial
// axes; it shares no code with the kernels (runtime/cpu_pool.h, pool.cuh).

/// The windows of a pooling op over x [N, C, *spatial]: for window w (row-major
/// over the result's spatial axes) the positions of x's plane it reads, in
/// row-major order of the window, padding left out.
struct PoolWindows {
  int64_t planes = 1, inPlane = 1, outPlane = 1, volume = 1;
  std::vector<std::vector<int64_t>> positions; // per window of a plane

  PoolWindows(const std::vector<int64_t> &in, const std::vector<int64_t> &out,
              ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
              ArrayRef<int64_t> padding) {
    size_t spatial = kernel.size();
    planes = in[0] * in[1];
    std::vector<int64_t> inShape(in.begin() + 2, in.end()),
        outShape(out.begin() + 2, out.end()), kernelShape(kernel.begin(), kernel.end());
    for (int64_t e : inShape)
      inPlane *= e;
    for (int64_t e : outShape)
      outPlane *= e;
    for (int64_t e : kernelShape)
      volume *= e;
    std::vector<int64_t> inStrides = stridesOf(inShape);
    for (int64_t w = 0; w < outPlane; ++w) {
      std::vector<int64_t> o = unflatten(w, outShape), at;
      for (int64_t k = 0; k < volume; ++k) {
        std::vector<int64_t> offset = unflatten(k, kernelShape);
        int64_t flat = 0;
        bool inside = true;
        for (size_t a = 0; a < spatial; ++a) {
          int64_t i = o[a] * stride[a] - padding[a] + offset[a];
          inside = inside && i >= 0 && i < inShape[a];
          flat += i * inStrides[a];
        }
        if (inside)
          at.push_back(flat);
      }
      positions.push_back(at);
    }
  }

  /// The position max_pool picks: the first NaN, else the first maximum.
  int64_t argmax(const double *plane, int64_t w) const {
    int64_t best = positions[w].front();
    for (int64_t p : positions[w]) {
      if (std::isnan(plane[best]))
        break;
      if (std::isnan(plane[p]) || plane[p] > plane[best])
        best = p;
    }
    return best;
  }
};

PoolWindows poolWindows(Operation *op, Value input, Value pooled) {
  auto attr = [&](StringRef name) {
    return cast<DenseI64ArrayAttr>(op->getAttr(name)).asArrayRef();
  };
  return PoolWindows(shapeOf(input), shapeOf(pooled), attr("kernel"),
                     attr("stride"), attr("padding"));
}

/// avg_pool's divisor of window w.
double poolDivisor(const PoolWindows &windows, int64_t w, bool countIncludePad) {
  return static_cast<double>(countIncludePad ? windows.volume
                                             : static_cast<int64_t>(
                                                   windows.positions[w].size()));
}

/// smooth_max_pool of one window: (m + ln Σ exp(βx - m)) / β, m = max βx (0
/// where infinite, as torch.logsumexp).
double smoothMax(const double *plane, const std::vector<int64_t> &at, double beta) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t p : at)
    m = std::max(m, beta * plane[p]);
  for (int64_t p : at)
    if (std::isnan(plane[p]))
      return plane[p];
  if (std::isinf(m))
    m = 0;
  double sum = 0;
  for (int64_t p : at)
    sum += std::exp(beta * plane[p] - m);
  return (m + std::log(sum)) / beta;
}

} // namespace

FailureOr<InterpreterResult>
vouch::interpret(ModelOp model, const std::map<std::string, HostTensor> &feeds,
                 Precision precision, const RandomContext &random) {
  InterpreterResult run;
  auto &values = run.values;
  auto get = [&](Value v) -> const HostTensor & { return values[v]; };
  // The attention an op computes (scaled_dot_product_attention and its fused
  // ops), its mask broadcast to the scores [..., Tq, Tk] into `mask`, which
  // must outlive it.
  auto attentionOf = [&](auto op, HostTensor &mask) {
    if (op.getMask()) {
      std::vector<int64_t> scores = shapeOf(op.getQuery());
      scores.back() = shapeOf(op.getKey()).end()[-2];
      mask = broadcastMask(get(op.getMask()), scores);
    }
    return Attention(get(op.getQuery()), get(op.getKey()), get(op.getValue()),
                     op.getMask() ? &mask : nullptr, op.getCausal(),
                     op.getScale().convertToDouble());
  };

  // qkv_attention's heads, unpacked, its mask broadcast to their scores
  // [..., H, T, T].
  struct PackedAttention {
    QkvHeads h;
    HostTensor q, k, v, mask;
    bool masked, causal;
    double scale;
    Attention attention() const {
      return Attention(q, k, v, masked ? &mask : nullptr, causal, scale);
    }
  };
  auto packedAttentionOf = [&](auto op) {
    QkvHeads h = *qkvHeads(cast<RankedTensorType>(op.getQkv().getType()), op.getHeads());
    const HostTensor &qkv = get(op.getQkv());
    PackedAttention a{h,
                      unpackHeads(qkv, h, 3, 0),
                      unpackHeads(qkv, h, 3, 1),
                      unpackHeads(qkv, h, 3, 2),
                      {},
                      bool(op.getMask()),
                      op.getCausal(),
                      op.getScale().convertToDouble()};
    if (a.masked) {
      SmallVector<int64_t> scores = h.scoresShape();
      a.mask = broadcastMask(get(op.getMask()), {scores.begin(), scores.end()});
    }
    return a;
  };

  auto feed = [&](Operation *op, StringRef name, Value result) -> LogicalResult {
    auto it = feeds.find(name.str());
    if (it == feeds.end())
      return op->emitError("interpreter: no value fed for '") << name << "'";
    if (it->second.shape != shapeOf(result) ||
        static_cast<int64_t>(it->second.data.size()) !=
            getNumElements(result.getType()))
      return op->emitError("interpreter: value fed for '")
             << name << "' does not have the shape of " << result.getType();
    // An i1 value (a mask) is 0 (false) or 1 (true), as the runtime stores it.
    if (cast<ShapedType>(result.getType()).getElementType().isInteger(1))
      for (auto [i, v] : llvm::enumerate(it->second.data))
        if (v != 0 && v != 1)
          return op->emitError("interpreter: value fed for the i1 '")
                 << name << "' holds " << v << " at element " << i
                 << " (an i1 value is 0 or 1)";
    values[result] = it->second;
    return success();
  };

  for (Operation &op : model.getBlock()) {
    LogicalResult status =
        llvm::TypeSwitch<Operation *, LogicalResult>(&op)
            .Case<InputOp, TargetOp, ParamOp>([&](auto o) {
              return feed(o, o.getName(), o.getResult());
            })
            .Case([&](FillOp o) {
              HostTensor t = zerosLike(o.getResult());
              std::fill(t.data.begin(), t.data.end(),
                        o.getValue().convertToDouble());
              values[o.getResult()] = t;
              return success();
            })
            .Case([&](MatmulOp o) {
              values[o.getResult()] = matmul(get(o.getLhs()), get(o.getRhs()),
                                             getGemmDims(o), o.getResult());
              return success();
            })
            .Case([&](LinearOp o) {
              const HostTensor *bias = o.getBias() ? &get(o.getBias()) : nullptr;
              values[o.getResult()] = linear(get(o.getInput()),
                                             get(o.getWeight()), bias,
                                             o.getResult());
              return success();
            })
            .Case([&](LinearWeightGradOp o) {
              // The two ops it stands for: gradᵀ·input, grad's column sums.
              const HostTensor &grad = get(o.getGrad());
              values[o.getWeightGrad()] = matmul(grad, get(o.getInput()),
                                                 getGemmDims(o), o.getWeightGrad());
              values[o.getBiasGrad()] = reduceSum(grad, {0}, o.getBiasGrad());
              return success();
            })
            .Case([&](ConvOp o) {
              values[o.getResult()] = convolve(
                  get(o.getInput()), get(o.getWeight()),
                  o.getBias() ? &get(o.getBias()) : nullptr, Windows(o),
                  o.getResult());
              return success();
            })
            .Case([&](ConvTransposeOp o) {
              values[o.getResult()] = convolveTransposed(
                  get(o.getInput()), get(o.getWeight()),
                  o.getBias() ? &get(o.getBias()) : nullptr, Windows(o),
                  o.getResult());
              return success();
            })
            .Case([&](Im2colOp o) {
              HostTensor image = get(o.getInput()), columns = zerosLike(o.getResult());
              windowsAndImage(image, columns, {o.getKernel().begin(), o.getKernel().end()},
                              Windows(o), /*fold=*/false);
              values[o.getResult()] = columns;
              return success();
            })
            .Case([&](Col2imOp o) {
              HostTensor image = zerosLike(o.getResult()), columns = get(o.getInput());
              windowsAndImage(image, columns, {o.getKernel().begin(), o.getKernel().end()},
                              Windows(o), /*fold=*/true);
              values[o.getResult()] = image;
              return success();
            })
            .Case([&](Col2imMatmulOp o) {
              // The columns lhsᵀ·rhs per group [G, C/G·K, N, *grid], then
              // col2im's fold: the composed form it stands for.
              const HostTensor &lhs = get(o.getLhs()), &rhs = get(o.getRhs());
              int64_t groups = o.getGroups();
              int64_t rows = lhs.shape[lhs.shape.size() - 2];
              int64_t height = lhs.shape.back(), width = rhs.shape.back();
              HostTensor image = zerosLike(o.getResult());
              std::vector<int64_t> shape = {groups, height, image.shape[0]};
              shape.insert(shape.end(), o.getGrid().begin(), o.getGrid().end());
              GemmDims d;
              d.transA = true;
              d.batch = groups, d.m = height, d.n = width, d.k = rows;
              d.strideA = rows * height, d.strideB = rows * width;
              HostTensor columns = matmul(lhs, rhs, d, std::move(shape));
              windowsAndImage(image, columns,
                              {o.getKernel().begin(), o.getKernel().end()},
                              Windows(o), /*fold=*/true);
              values[o.getResult()] = image;
              return success();
            })
            .Case([&](BroadcastOp o) {
              values[o.getResult()] =
                  broadcast(get(o.getInput()), o.getDims(), o.getResult());
              return success();
            })
            .Case([&](ReshapeOp o) {
              HostTensor t = get(o.getInput());
              t.shape = shapeOf(o.getResult());
              values[o.getResult()] = t;
              return success();
            })
            .Case([&](PermuteOp o) {
              values[o.getResult()] =
                  permute(get(o.getInput()), o.getPerm(), o.getResult());
              return success();
            })
            .Case([&](DropoutOp o) {
              HostTensor y = get(o.getInput());
              if (random.training) {
                double p = o.getP().convertToDouble(), keep = 1.0 / (1.0 - p);
                uint64_t t = drawThreshold(p);
                std::vector<uint64_t> u =
                    randomDraws(random, o.getOrdinal(), y.data.size());
                for (size_t i = 0; i < y.data.size(); ++i)
                  y.data[i] *= u[i] < t ? 0.0 : keep;
              }
              values[o.getResult()] = y;
              return success();
            })
            .Case([&](ScaledDotProductAttentionOp o) {
              HostTensor mask;
              values[o.getResult()] = attentionOf(o, mask).forward(o.getResult());
              return success();
            })
            .Case([&](FlashAttentionOp o) {
              HostTensor mask, lse;
              values[o.getResult()] = attentionOf(o, mask).forward(o.getResult(), &lse);
              values[o.getLse()] = lse;
              return success();
            })
            .Case([&](FlashAttentionGradOp o) {
              HostTensor mask, dq, dk, dv;
              attentionOf(o, mask).backward(get(o.getGrad()), dq, dk, dv);
              values[o.getDq()] = dq;
              values[o.getDk()] = dk;
              values[o.getDv()] = dv;
              return success();
            })
            .Case([&](QkvAttentionOp o) {
              PackedAttention a = packedAttentionOf(o);
              HostTensor lse, result = zerosLike(o.getResult());
              packHeads(a.attention().forward(a.q.shape, &lse), a.h, 1, 0, result);
              values[o.getResult()] = result;
              values[o.getLse()] = lse;
              return success();
            })
            .Case([&](QkvAttentionGradOp o) {
              PackedAttention a = packedAttentionOf(o);
              HostTensor dq, dk, dv, dqkv = zerosLike(o.getDqkv());
              a.attention().backward(unpackHeads(get(o.getGrad()), a.h, 1, 0), dq, dk, dv);
              packHeads(dq, a.h, 3, 0, dqkv);
              packHeads(dk, a.h, 3, 1, dqkv);
              packHeads(dv, a.h, 3, 2, dqkv);
              values[o.getDqkv()] = dqkv;
              return success();
            })
            .Case([&](CausalMaskOp o) {
              HostTensor y = zerosLike(o.getResult());
              int64_t columns = y.shape[1];
              for (size_t i = 0; i < y.data.size(); ++i)
                y.data[i] = int64_t(i) % columns <= int64_t(i) / columns ? 1.0 : 0.0;
              values[o.getResult()] = y;
              return success();
            })
            .Case([&](RandUniformOp o) {
              HostTensor y = zerosLike(o.getResult());
              std::vector<uint64_t> u =
                  randomDraws(random, o.getOrdinal(), y.data.size());
              for (size_t i = 0; i < y.data.size(); ++i)
                y.data[i] = std::ldexp(static_cast<double>(u[i]), -53);
              values[o.getResult()] = y;
              return success();
            })
            .Case([&](BernoulliMaskOp o) {
              HostTensor y = zerosLike(o.getResult());
              uint64_t t = drawThreshold(o.getP().convertToDouble());
              std::vector<uint64_t> u =
                  randomDraws(random, o.getOrdinal(), y.data.size());
              for (size_t i = 0; i < y.data.size(); ++i)
                y.data[i] = u[i] < t ? 1.0 : 0.0;
              values[o.getResult()] = y;
              return success();
            })
            .Case([&](SliceOp o) {
              values[o.getResult()] =
                  sliceOrScatter(get(o.getInput()), o.getAxis(), o.getStart(),
                                 o.getStep(), o.getResult(), false);
              return success();
            })
            .Case([&](SliceScatterOp o) {
              values[o.getResult()] =
                  sliceOrScatter(get(o.getInput()), o.getAxis(), o.getStart(),
                                 o.getStep(), o.getResult(), true);
              return success();
            })
            .Case([&](ConcatOp o) {
              // Each input's elements go to their coordinates shifted by the
              // extents of the inputs before it along the axis.
              HostTensor y = zerosLike(o.getResult());
              std::vector<int64_t> strides = stridesOf(y.shape);
              int64_t axis = o.getAxis(), offset = 0;
              for (Value input : o.getInputs()) {
                const HostTensor &x = get(input);
                for (size_t flat = 0; flat < x.data.size(); ++flat) {
                  std::vector<int64_t> index = unflatten(flat, x.shape);
                  index[axis] += offset;
                  int64_t at = 0;
                  for (size_t i = 0; i < index.size(); ++i)
                    at += index[i] * strides[i];
                  y.data[at] = x.data[flat];
                }
                offset += x.shape[axis];
              }
              values[o.getResult()] = y;
              return success();
            })
            .Case([&](EmbeddingOp o) {
              // Row p of the result is the table's row ids[p]; NaN for an id
              // outside the table.
              const HostTensor &ids = get(o.getIds()), &table = get(o.getTable());
              HostTensor y = zerosLike(o.getResult());
              int64_t rows = table.shape[0], width = table.shape[1];
              for (size_t p = 0; p < ids.data.size(); ++p) {
                double id = ids.data[p];
                for (int64_t d = 0; d < width; ++d)
                  y.data[p * width + d] =
                      id >= 0 && id < rows
                          ? table.data[static_cast<int64_t>(id) * width + d]
                          : std::numeric_limits<double>::quiet_NaN();
              }
              values[o.getResult()] = y;
              return success();
            })
            .Case([&](EmbeddingGradOp o) {
              // dy's rows added into their ids' rows, positions ascending;
              // all NaN when an id is outside the table.
              const HostTensor &ids = get(o.getIds()), &dy = get(o.getDy());
              HostTensor y = zerosLike(o.getResult());
              int64_t rows = y.shape[0], width = y.shape[1];
              for (size_t p = 0; p < ids.data.size(); ++p) {
                double id = ids.data[p];
                if (!(id >= 0 && id < rows)) {
                  std::fill(y.data.begin(), y.data.end(),
                            std::numeric_limits<double>::quiet_NaN());
                  break;
                }
                for (int64_t d = 0; d < width; ++d)
                  y.data[static_cast<int64_t>(id) * width + d] +=
                      dy.data[p * width + d];
              }
              values[o.getResult()] = y;
              return success();
            })
            .Case([&](GatherOp o) {
              // Each result coordinate reads x at the same coordinate with
              // the axis's entry replaced by the index's value.
              const HostTensor &x = get(o.getInput()), &index = get(o.getIndex());
              HostTensor y = zerosLike(o.getResult());
              std::vector<int64_t> strides = stridesOf(x.shape);
              int64_t axis = o.getAxis();
              for (size_t flat = 0; flat < y.data.size(); ++flat) {
                std::vector<int64_t> at = unflatten(flat, y.shape);
                double a = index.data[flat];
                if (!(a >= 0 && a < x.shape[axis])) {
                  y.data[flat] = std::numeric_limits<double>::quiet_NaN();
                  continue;
                }
                at[axis] = static_cast<int64_t>(a);
                int64_t offset = 0;
                for (size_t i = 0; i < at.size(); ++i)
                  offset += at[i] * strides[i];
                y.data[flat] = x.data[offset];
              }
              values[o.getResult()] = y;
              return success();
            })
            .Case([&](ScatterAddOp o) {
              // x, then each src element added at its coordinate with the
              // axis's entry replaced by the index's value, in row-major
              // order of src (ascending along the axis for each fiber). An
              // index out of range makes its fiber along the axis NaN.
              const HostTensor &index = get(o.getIndex()), &src = get(o.getSrc());
              HostTensor y = get(o.getInput());
              std::vector<int64_t> strides = stridesOf(y.shape);
              int64_t axis = o.getAxis();
              std::vector<int64_t> badAt;
              for (size_t flat = 0; flat < src.data.size(); ++flat) {
                std::vector<int64_t> at = unflatten(flat, src.shape);
                double a = index.data[flat];
                bool bad = !(a >= 0 && a < y.shape[axis]);
                at[axis] = bad ? 0 : static_cast<int64_t>(a);
                int64_t offset = 0;
                for (size_t i = 0; i < at.size(); ++i)
                  offset += at[i] * strides[i];
                if (bad)
                  badAt.push_back(offset);
                else
                  y.data[offset] += src.data[flat];
              }
              for (int64_t offset : badAt)
                for (int64_t a = 0; a < y.shape[axis]; ++a)
                  y.data[offset + a * strides[axis]] =
                      std::numeric_limits<double>::quiet_NaN();
              values[o.getResult()] = y;
              return success();
            })
            .Case([&](ReduceSumOp o) {
              values[o.getResult()] =
                  reduceSum(get(o.getInput()), o.getAxes(), o.getResult());
              return success();
            })
            .Case([&](ReduceMaxOp o) {
              values[o.getResult()] =
                  reduceExtreme(get(o.getInput()), o.getAxes(), o.getResult(), true);
              return success();
            })
            .Case([&](ReduceMinOp o) {
              values[o.getResult()] =
                  reduceExtreme(get(o.getInput()), o.getAxes(), o.getResult(), false);
              return success();
            })
            .Case([&](ReduceMeanOp o) {
              HostTensor t =
                  reduceSum(get(o.getInput()), o.getAxes(), o.getResult());
              double count = static_cast<double>(
                                 getNumElements(o.getInput().getType())) /
                             static_cast<double>(t.data.size());
              for (double &v : t.data)
                v /= count;
              values[o.getResult()] = t;
              return success();
            })
            .Case([&](SoftmaxOp o) {
              values[o.getResult()] =
                  softmax(get(o.getInput()), o.getAxis(), /*log=*/false);
              return success();
            })
            .Case([&](LogSoftmaxOp o) {
              values[o.getResult()] =
                  softmax(get(o.getInput()), o.getAxis(), /*log=*/true);
              return success();
            })
            .Case([&](CastOp o) {
              // Reals stay as they are (one real type per run), integers
              // are exact; real -> i32 truncates.
              HostTensor t = get(o.getInput());
              bool fromReal = isa<FloatType>(
                  cast<ShapedType>(o.getInput().getType()).getElementType());
              if (fromReal && o.getType().getElementType().isInteger(32))
                for (double &v : t.data)
                  v = castToInt32(v);
              values[o.getResult()] = t;
              return success();
            })
            .Case([&](RoundBf16Op o) {
              HostTensor t = get(o.getInput());
              for (double &v : t.data)
                v = roundToBf16(v);
              values[o.getResult()] = t;
              return success();
            })
            .Case([&](MaskedSoftmaxOp o) {
              values[o.getResult()] = maskedSoftmax(
                  get(o.getInput()),
                  broadcastMask(get(o.getMask()), shapeOf(o.getInput())),
                  o.getAxis());
              return success();
            })
            .Case([&](SoftmaxGradOp o) {
              values[o.getResult()] = softmaxGrad(
                  get(o.getGrad()), get(o.getOutput()), o.getAxis(), false);
              return success();
            })
            .Case([&](LogSoftmaxGradOp o) {
              values[o.getResult()] = softmaxGrad(
                  get(o.getGrad()), get(o.getOutput()), o.getAxis(), true);
              return success();
            })
            .Case([&](LayerNormOp o) {
              const HostTensor *x = &get(o.getInput());
              HostTensor sum;
              if (Value addend = o.getAddend()) {
                // input + addend, rounded (in an f32 run) before it is
                // normalised: the separate add's stored sum.
                sum = *x;
                const HostTensor &a = get(addend);
                for (size_t i = 0; i < sum.data.size(); ++i) {
                  sum.data[i] += a.data[i];
                  if (precision == Precision::F32)
                    sum.data[i] = roundToF32(sum.data[i]);
                }
                x = &sum;
              }
              values[o.getResult()] = layerNorm(
                  *x, o.getWeight() ? &get(o.getWeight()) : nullptr,
                  o.getBias() ? &get(o.getBias()) : nullptr,
                  o.getEps().convertToDouble());
              if (Value s = o.getSum())
                values[s] = sum;
              return success();
            })
            .Case([&](LayerNormGradOp o) {
              HostTensor dw, db;
              HostTensor dx = layerNormGrad(
                  get(o.getGrad()), get(o.getInput()),
                  o.getWeight() ? &get(o.getWeight()) : nullptr,
                  o.getEps().convertToDouble(),
                  o.getWeightGrad() ? &dw : nullptr,
                  o.getBiasGrad() ? &db : nullptr);
              if (Value addend = o.getAddend()) {
                // addend + dx, dx stored first (rounded in an f32 run), as the
                // separate add it replaces; the sum is rounded with the results.
                const HostTensor &a = get(addend);
                for (size_t i = 0; i < dx.data.size(); ++i)
                  dx.data[i] = a.data[i] + (precision == Precision::F32
                                                ? double(roundToF32(dx.data[i]))
                                                : dx.data[i]);
              }
              values[o.getDx()] = dx;
              if (Value v = o.getWeightGrad())
                values[v] = dw;
              if (Value v = o.getBiasGrad())
                values[v] = db;
              return success();
            })
            .Case([&](StateOp o) {
              // Fed by name (a checkpoint's), else its initial value.
              auto it = feeds.find(o.getName().str());
              HostTensor t = zerosLike(o.getResult());
              if (it != feeds.end()) {
                if (failed(feed(o, o.getName(), o.getResult())))
                  return failure();
                t = values[o.getResult()];
              } else if (o.getInit() == InitKind::Ones) {
                std::fill(t.data.begin(), t.data.end(), 1.0);
              }
              values[o.getResult()] = t;
              run.states[o.getName().str()] = t;
              return success();
            })
            .Case([&](BatchNormOp o) {
              // The running statistics as they are now: an earlier
              // batch_norm of this step may have updated them.
              HostTensor &rm =
                  run.states[o.getRunningMean().getDefiningOp<StateOp>().getName().str()];
              HostTensor &rv =
                  run.states[o.getRunningVar().getDefiningOp<StateOp>().getName().str()];
              HostTensor y, mean, rstd;
              batchNorm(get(o.getInput()),
                        o.getWeight() ? &get(o.getWeight()) : nullptr,
                        o.getBias() ? &get(o.getBias()) : nullptr, rm, rv,
                        o.getEps().convertToDouble(),
                        o.getMomentum().convertToDouble(), random.training, y,
                        mean, rstd);
              if (precision == Precision::F32)
                for (HostTensor *t : {&rm, &rv})
                  for (double &v : t->data)
                    v = roundToF32(v);
              values[o.getResult()] = y;
              values[o.getMean()] = mean;
              values[o.getRstd()] = rstd;
              return success();
            })
            .Case([&](BatchNormGradOp o) {
              HostTensor dw, db;
              values[o.getDx()] = batchNormGrad(
                  get(o.getGrad()), get(o.getInput()), get(o.getMean()),
                  get(o.getRstd()), o.getWeight() ? &get(o.getWeight()) : nullptr,
                  o.getWeightGrad() ? &dw : nullptr,
                  o.getBiasGrad() ? &db : nullptr);
              if (Value v = o.getWeightGrad())
                values[v] = dw;
              if (Value v = o.getBiasGrad())
                values[v] = db;
              return success();
            })
            .Case([&](MseLossOp o) {
              const HostTensor &p = get(o.getPrediction());
              const HostTensor &t = get(o.getTarget());
              double sum = 0;
              for (size_t i = 0; i < p.data.size(); ++i)
                sum += (p.data[i] - t.data[i]) * (p.data[i] - t.data[i]);
              values[o.getResult()] =
                  HostTensor{{}, {sum / static_cast<double>(p.data.size())}};
              return success();
            })
            .Case([&](CrossEntropyOp o) {
              values[o.getResult()] = crossEntropy(
                  get(o.getLogits()), get(o.getLabels()), o.classCount(),
                  static_cast<int64_t>(o.getIgnoreIndex()), nullptr);
              return success();
            })
            .Case([&](CrossEntropyGradOp o) {
              HostTensor dz{get(o.getLogits()).shape, {}};
              crossEntropy(get(o.getLogits()), get(o.getLabels()), o.classCount(),
                           static_cast<int64_t>(o.getIgnoreIndex()), &dz,
                           get(o.getDloss()).data[0]);
              values[o.getResult()] = dz;
              return success();
            })
            .Case([&](MaxPoolOp o) {
              PoolWindows windows = poolWindows(o, o.getInput(), o.getResult());
              const HostTensor &x = get(o.getInput());
              const HostTensor &v = o.getValues() ? get(o.getValues()) : x;
              HostTensor y = zerosLike(o.getResult());
              for (int64_t p = 0; p < windows.planes; ++p)
                for (int64_t w = 0; w < windows.outPlane; ++w)
                  y.data[p * windows.outPlane + w] =
                      v.data[p * windows.inPlane +
                             windows.argmax(&x.data[p * windows.inPlane], w)];
              values[o.getResult()] = y;
              return success();
            })
            .Case([&](MaxPoolGradOp o) {
              PoolWindows windows = poolWindows(o, o.getInput(), o.getGrad());
              const HostTensor &x = get(o.getInput()), &dy = get(o.getGrad());
              HostTensor dx = zerosLike(o.getResult());
              for (int64_t p = 0; p < windows.planes; ++p)
                for (int64_t w = 0; w < windows.outPlane; ++w)
                  dx.data[p * windows.inPlane +
                          windows.argmax(&x.data[p * windows.inPlane], w)] +=
                      dy.data[p * windows.outPlane + w];
              values[o.getResult()] = dx;
              return success();
            })
            .Case([&](AvgPoolOp o) {
              PoolWindows windows = poolWindows(o, o.getInput(), o.getResult());
              const HostTensor &x = get(o.getInput());
              HostTensor y = zerosLike(o.getResult());
              for (int64_t p = 0; p < windows.planes; ++p)
                for (int64_t w = 0; w < windows.outPlane; ++w) {
                  double sum = 0;
                  for (int64_t at : windows.positions[w])
                    sum += x.data[p * windows.inPlane + at];
                  y.data[p * windows.outPlane + w] =
                      sum / poolDivisor(windows, w, o.getCountIncludePad());
                }
              values[o.getResult()] = y;
              return success();
            })
            .Case([&](AvgPoolGradOp o) {
              PoolWindows windows = poolWindows(o, o.getResult(), o.getGrad());
              const HostTensor &dy = get(o.getGrad());
              HostTensor dx = zerosLike(o.getResult());
              for (int64_t p = 0; p < windows.planes; ++p)
                for (int64_t w = 0; w < windows.outPlane; ++w)
                  for (int64_t at : windows.positions[w])
                    dx.data[p * windows.inPlane + at] +=
                        dy.data[p * windows.outPlane + w] /
                        poolDivisor(windows, w, o.getCountIncludePad());
              values[o.getResult()] = dx;
              return success();
            })
            .Case([&](SmoothMaxPoolOp o) {
              PoolWindows windows = poolWindows(o, o.getInput(), o.getResult());
              const HostTensor &x = get(o.getInput());
              double beta = o.getBeta().convertToDouble();
              HostTensor y = zerosLike(o.getResult());
              for (int64_t p = 0; p < windows.planes; ++p)
                for (int64_t w = 0; w < windows.outPlane; ++w)
                  y.data[p * windows.outPlane + w] = smoothMax(
                      &x.data[p * windows.inPlane], windows.positions[w], beta);
              values[o.getResult()] = y;
              return success();
            })
            .Case([&](SmoothMaxPoolGradOp o) {
              // Each window's gradient spread by its softmax weights
              // exp(β(x - y)).
              PoolWindows windows = poolWindows(o, o.getInput(), o.getGrad());
              const HostTensor &x = get(o.getInput()), &dy = get(o.getGrad()),
                               &y = get(o.getOutput());
              double beta = o.getBeta().convertToDouble();
              HostTensor dx = zerosLike(o.getResult());
              for (int64_t p = 0; p < windows.planes; ++p)
                for (int64_t w = 0; w < windows.outPlane; ++w)
                  for (int64_t at : windows.positions[w]) {
                    int64_t i = p * windows.inPlane + at, k = p * windows.outPlane + w;
                    dx.data[i] += dy.data[k] * std::exp(beta * (x.data[i] - y.data[k]));
                  }
              values[o.getResult()] = dx;
              return success();
            })
            .Case([&](FlattenOp o) {
              HostTensor t = get(o.getInput());
              t.shape = shapeOf(o.getResult());
              values[o.getResult()] = t;
              return success();
            })
            .Case([&](LossOp o) {
              run.loss = get(o.getValue()).data[0];
              run.hasLoss = true;
              return success();
            })
            .Case([&](OutputOp o) {
              // The first `columns` of each row where set (the rest is padding).
              const HostTensor &value = get(o.getValue());
              SmallVector<int64_t> shape = o.outputShape();
              HostTensor out{std::vector<int64_t>(shape.begin(), shape.end()), {}};
              const int64_t pitch = value.shape.empty() ? 1 : value.shape.back();
              const int64_t columns = out.shape.empty() ? 1 : out.shape.back();
              for (size_t at = 0; at < value.data.size(); ++at)
                if (static_cast<int64_t>(at) % pitch < columns)
                  out.data.push_back(value.data[at]);
              run.outputs[o.getName().str()] = std::move(out);
              return success();
            })
            .Case([&](ParamGradOp o) {
              run.paramGrads[o.getName().str()] = get(o.getValue());
              return success();
            })
            .Default([&](Operation *other) -> LogicalResult {
              auto pointwise = dyn_cast<PointwiseOpInterface>(other);
              if (!pointwise)
                return other->emitOpError("is not supported by the reference "
                                          "interpreter");
              HostTensor t = zerosLike(other->getResult(0));
              SmallVector<double> args(other->getNumOperands());
              for (size_t i = 0; i < t.data.size(); ++i) {
                for (unsigned k = 0; k < other->getNumOperands(); ++k)
                  args[k] = get(other->getOperand(k)).data[i];
                t.data[i] = pointwise.evaluateScalar(args);
              }
              values[other->getResult(0)] = t;
              return success();
            });
    if (failed(status))
      return failure();
    if (precision == Precision::F32)
      for (Value result : op.getResults())
        for (double &v : values[result].data)
          v = roundToF32(v);
    // A bf16 result (round_bf16's, or one an op stores as bf16: the op
    // table's bf16Result) holds its values rounded to bf16, after f32 as the
    // kernel rounds them.
    for (Value result : op.getResults())
      if (auto type = dyn_cast<ShapedType>(result.getType());
          type && type.getElementType().isBF16())
        for (double &v : values[result].data)
          v = roundToBf16(v);
  }
  if (precision == Precision::F32)
    run.loss = roundToF32(run.loss);
  return run;
}
