// Tests for cpu_kernels.h against naive loops written independently here (explicit
// transposed copies, explicit multi-index loops), plus the left-fold summation order.
#include "runtime/cpu_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace vouch::rt {
namespace {

std::vector<double> iota_values(int64_t n, double scale = 1.0) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; i++) v[i] = scale * double((i * 7) % 11 - 5);  // small integers
  return v;
}

// Stored [rows, cols] -> [cols, rows].
std::vector<double> transposed(const double* m, int64_t rows, int64_t cols) {
  std::vector<double> t(rows * cols);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) t[c * rows + r] = m[r * cols + c];
  return t;
}

TEST(CpuKernelsTest, MatmulAllTransposeFlagsAndBroadcastBatch) {
  const int64_t batch = 3, M = 4, N = 5, K = 6;
  std::vector<double> A = iota_values(batch * M * K), B = iota_values(batch * K * N, 0.5);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (bool broadcast_b : {false, true}) {
        // Store each operand the way the flags say, built from plain [M,K] / [K,N].
        std::vector<double> As, Bs;
        for (int64_t b = 0; b < batch; b++) {
          const double* a = A.data() + b * M * K;
          std::vector<double> s = ta ? transposed(a, M, K) : std::vector<double>(a, a + M * K);
          As.insert(As.end(), s.begin(), s.end());
          const double* bm = B.data() + b * K * N;
          std::vector<double> sb = tb ? transposed(bm, K, N) : std::vector<double>(bm, bm + K * N);
          Bs.insert(Bs.end(), sb.begin(), sb.end());
        }
        std::vector<double> C(batch * M * N, -99);
        matmul<double>(ta, tb, batch, M, N, K, As.data(), M * K, Bs.data(),
                       broadcast_b ? 0 : K * N, C.data());
        for (int64_t b = 0; b < batch; b++) {
          int64_t bb = broadcast_b ? 0 : b;
          for (int64_t i = 0; i < M; i++) {
            for (int64_t j = 0; j < N; j++) {
              double want = 0;
              for (int64_t k = 0; k < K; k++)
                want += A[b * M * K + i * K + k] * B[bb * K * N + k * N + j];
              EXPECT_EQ(C[b * M * N + i * N + j], want)
                  << "ta=" << ta << " tb=" << tb << " bcast=" << broadcast_b << " b=" << b;
            }
          }
        }
      }
    }
  }
}

TEST(CpuKernelsTest, MatmulFloatAndLeftFold) {
  // Row [1e16, 1, -1e16] . [1, 1, 1]: a left fold gives (1e16 + 1) - 1e16 = 0.
  std::vector<double> a = {1e16, 1, -1e16}, b = {1, 1, 1}, c(1);
  matmul<double>(false, false, 1, 1, 1, 3, a.data(), 0, b.data(), 0, c.data());
  EXPECT_EQ(c[0], 0.0);
  std::vector<float> af = {1, 2, 3, 4}, bf = {5, 6, 7, 8}, cf(4);
  matmul<float>(false, false, 1, 2, 2, 2, af.data(), 0, bf.data(), 0, cf.data());
  EXPECT_EQ(cf, (std::vector<float>{19, 22, 43, 50}));
}

TEST(CpuKernelsTest, Linear) {
  const int64_t rows = 3, in = 4, out = 2;
  std::vector<double> x = iota_values(rows * in), W = iota_values(out * in, 0.25), b = {0.5, -1.5};
  std::vector<double> y(rows * out), y_nobias(rows * out);
  linear<double>(rows, in, out, x.data(), W.data(), b.data(), y.data());
  linear<double>(rows, in, out, x.data(), W.data(), nullptr, y_nobias.data());
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t o = 0; o < out; o++) {
      double dot = 0;
      for (int64_t i = 0; i < in; i++) dot += x[r * in + i] * W[o * in + i];
      EXPECT_EQ(y[r * out + o], dot + b[o]);
      EXPECT_EQ(y_nobias[r * out + o], dot);
    }
  }
}

// The two ops linear_weight_grad stands for, bit for bit: the transposed-lhs matmul and
// reduce_sum over axis 0 (f32, where the order of the sums shows).
TEST(CpuKernelsTest, LinearWeightGradIsTheProductAndTheColumnSums) {
  const int64_t rows = 7, in = 3, out = 5;
  std::vector<float> dy(rows * out), x(rows * in);
  for (size_t i = 0; i < dy.size(); i++) dy[i] = float(std::sin(double(i) * 1.7) * 1e3);
  for (size_t i = 0; i < x.size(); i++) x[i] = float(std::cos(double(i) * 0.9));
  std::vector<float> dw(out * in, -99), db(out, -99), want_dw(out * in), want_db(out);
  linear_weight_grad<float>(rows, in, out, dy.data(), x.data(), dw.data(), db.data());
  matmul<float>(true, false, 1, out, in, rows, dy.data(), 0, x.data(), 0, want_dw.data());
  reduce_sum<float>(dy.data(), {rows, out}, {0}, want_db.data());
  EXPECT_EQ(dw, want_dw);
  EXPECT_EQ(db, want_db);
  // And against the definition, in double.
  std::vector<double> dyd(dy.begin(), dy.end()), xd(x.begin(), x.end());
  std::vector<double> dwd(out * in), dbd(out);
  linear_weight_grad<double>(rows, in, out, dyd.data(), xd.data(), dwd.data(), dbd.data());
  for (int64_t o = 0; o < out; o++) {
    double sum = 0;
    for (int64_t r = 0; r < rows; r++) sum += dyd[r * out + o];
    EXPECT_EQ(dbd[o], sum) << "db[" << o << "]";
    for (int64_t i = 0; i < in; i++) {
      double dot = 0;
      for (int64_t r = 0; r < rows; r++) dot += dyd[r * out + o] * xd[r * in + i];
      EXPECT_EQ(dwd[o * in + i], dot) << "dW[" << o << ", " << i << "]";
    }
  }
}

TEST(CpuKernelsTest, BroadcastInDim) {
  std::vector<double> v = {1, 2, 3};
  std::vector<double> rows(6);
  broadcast_in_dim<double>(v.data(), {3}, rows.data(), {2, 3}, {1});  // bias over rows
  EXPECT_EQ(rows, (std::vector<double>{1, 2, 3, 1, 2, 3}));
  std::vector<double> cols(6);
  broadcast_in_dim<double>(v.data(), {3}, cols.data(), {3, 2}, {0});
  EXPECT_EQ(cols, (std::vector<double>{1, 1, 2, 2, 3, 3}));
  std::vector<double> col = {10, 20}, expanded(8);
  broadcast_in_dim<double>(col.data(), {2, 1}, expanded.data(), {2, 4}, {0, 1});  // size-1 dim
  EXPECT_EQ(expanded, (std::vector<double>{10, 10, 10, 10, 20, 20, 20, 20}));
  std::vector<double> in = iota_values(2 * 3), out(2 * 4 * 3);
  broadcast_in_dim<double>(in.data(), {2, 3}, out.data(), {2, 4, 3}, {0, 2});
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 3; k++) EXPECT_EQ(out[(i * 4 + j) * 3 + k], in[i * 3 + k]);
}

TEST(CpuKernelsTest, ReduceSum) {
  const int64_t D0 = 2, D1 = 3, D2 = 4;
  std::vector<double> in = iota_values(D0 * D1 * D2);
  auto at = [&](int64_t i, int64_t j, int64_t k) { return in[(i * D1 + j) * D2 + k]; };
  std::vector<double> over1(D0 * D2), over02(D1), all(1), none(D0 * D1 * D2);
  reduce_sum<double>(in.data(), {D0, D1, D2}, {1}, over1.data());
  reduce_sum<double>(in.data(), {D0, D1, D2}, {0, 2}, over02.data());
  reduce_sum<double>(in.data(), {D0, D1, D2}, {0, 1, 2}, all.data());
  reduce_sum<double>(in.data(), {D0, D1, D2}, {}, none.data());
  double total = 0;
  for (int64_t i = 0; i < D0; i++)
    for (int64_t k = 0; k < D2; k++) {
      double s = 0;
      for (int64_t j = 0; j < D1; j++) s += at(i, j, k);
      EXPECT_EQ(over1[i * D2 + k], s);
    }
  for (int64_t j = 0; j < D1; j++) {
    double s = 0;
    for (int64_t i = 0; i < D0; i++)
      for (int64_t k = 0; k < D2; k++) s += at(i, j, k);
    EXPECT_EQ(over02[j], s);
    total += s;
  }
  EXPECT_EQ(all[0], total);
  EXPECT_EQ(none, in);
  // Left fold from index 0 along the reduced axis.
  std::vector<double> big = {1e16, 1, -1e16}, folded(1);
  reduce_sum<double>(big.data(), {3}, {0}, folded.data());
  EXPECT_EQ(folded[0], 0.0);
}

// reduce_max / reduce_min against loops written here, on values in scrambled order
// (so the extreme is not always the last element); NaN wins in its slice only.
TEST(CpuKernelsTest, ReduceMaxAndReduceMin) {
  const int64_t D0 = 2, D1 = 3, D2 = 4;
  std::vector<double> in(D0 * D1 * D2);
  for (size_t i = 0; i < in.size(); i++) in[i] = double((i * 7) % 11) - 5.0;
  auto at = [&](int64_t i, int64_t j, int64_t k) { return in[(i * D1 + j) * D2 + k]; };
  std::vector<double> max1(D0 * D2), min1(D0 * D2), max02(D1), min_all(1);
  reduce_max<double>(in.data(), {D0, D1, D2}, {1}, max1.data());
  reduce_min<double>(in.data(), {D0, D1, D2}, {1}, min1.data());
  reduce_max<double>(in.data(), {D0, D1, D2}, {0, 2}, max02.data());
  reduce_min<double>(in.data(), {D0, D1, D2}, {0, 1, 2}, min_all.data());
  for (int64_t i = 0; i < D0; i++)
    for (int64_t k = 0; k < D2; k++) {
      double hi = at(i, 0, k), lo = at(i, 0, k);
      for (int64_t j = 1; j < D1; j++) {
        hi = std::max(hi, at(i, j, k));
        lo = std::min(lo, at(i, j, k));
      }
      EXPECT_EQ(max1[i * D2 + k], hi);
      EXPECT_EQ(min1[i * D2 + k], lo);
    }
  for (int64_t j = 0; j < D1; j++) {
    double hi = at(0, j, 0);
    for (int64_t i = 0; i < D0; i++)
      for (int64_t k = 0; k < D2; k++) hi = std::max(hi, at(i, j, k));
    EXPECT_EQ(max02[j], hi);
  }
  EXPECT_EQ(min_all[0], *std::min_element(in.begin(), in.end()));
  std::vector<double> with_nan = {1, std::nan(""), 3, 4}, out(2);
  reduce_max<double>(with_nan.data(), {2, 2}, {1}, out.data());  // rows {1, NaN}, {3, 4}
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_EQ(out[1], 4.0);
}

TEST(CpuKernelsTest, Permute) {
  const int64_t D0 = 2, D1 = 3, D2 = 4;
  std::vector<double> in = iota_values(D0 * D1 * D2), out(in.size()), back(in.size());
  permute<double>(in.data(), {D0, D1, D2}, {2, 0, 1}, out.data());  // out shape [D2, D0, D1]
  for (int64_t i = 0; i < D0; i++)
    for (int64_t j = 0; j < D1; j++)
      for (int64_t k = 0; k < D2; k++)
        EXPECT_EQ(out[(k * D0 + i) * D1 + j], in[(i * D1 + j) * D2 + k]);
  permute<double>(out.data(), {D2, D0, D1}, {1, 2, 0}, back.data());  // the inverse
  EXPECT_EQ(back, in);
  std::vector<double> m = {1, 2, 3, 4, 5, 6}, mt(6);
  permute<double>(m.data(), {2, 3}, {1, 0}, mt.data());
  EXPECT_EQ(mt, (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

// slice against a loop over every multi-index of the result, for each axis of a
// rank-3 tensor, with steps 1..3.
TEST(CpuKernelsTest, SliceEveryAxisAndStep) {
  const std::vector<int64_t> shape = {3, 5, 4};
  std::vector<double> in = iota_values(3 * 5 * 4, 0.25);
  for (int64_t i = 0; i < 60; i++) in[i] += double(i);  // every element distinct
  for (int64_t axis = 0; axis < 3; axis++)
    for (int64_t step = 1; step <= 3; step++) {
      const int64_t start = 1, end = shape[axis];
      const int64_t m = (end - start + step - 1) / step;
      std::vector<int64_t> out_shape = shape;
      out_shape[axis] = m;
      std::vector<double> out(out_shape[0] * out_shape[1] * out_shape[2], -1);
      slice<double>(in.data(), shape, axis, start, end, step, out.data());
      for (int64_t a = 0; a < out_shape[0]; a++)
        for (int64_t b = 0; b < out_shape[1]; b++)
          for (int64_t c = 0; c < out_shape[2]; c++) {
            int64_t idx[3] = {a, b, c};
            idx[axis] = start + idx[axis] * step;
            EXPECT_EQ(out[(a * out_shape[1] + b) * out_shape[2] + c],
                      in[(idx[0] * 5 + idx[1]) * 4 + idx[2]])
                << "axis " << axis << " step " << step;
          }
    }
}

// slice_scatter: zeros but at the sliced positions, and slice(slice_scatter(x)) = x.
TEST(CpuKernelsTest, SliceScatterIsZeroOffTheSlice) {
  const std::vector<int64_t> shape = {2, 7};
  const int64_t start = 2, end = 7, step = 2;  // entries 2, 4, 6
  std::vector<double> small = {1, 2, 3, 4, 5, 6};
  std::vector<double> out(14, -1);
  slice_scatter<double>(small.data(), shape, 1, start, end, step, out.data());
  const std::vector<double> expected = {0, 0, 1, 0, 2, 0, 3, 0, 0, 4, 0, 5, 0, 6};
  EXPECT_EQ(out, expected);
  std::vector<double> back(6, -1);
  slice<double>(out.data(), shape, 1, start, end, step, back.data());
  EXPECT_EQ(back, small);
}

// embedding against a loop over (position, column); an id outside [0, V) (-1, V) gives
// a row of NaN and the other rows are still read.
TEST(CpuKernelsTest, EmbeddingRowsAndOutOfRangeIds) {
  const int64_t V = 5, D = 3;
  std::vector<double> table = iota_values(V * D, 0.5);
  for (int64_t k = 0; k < V * D; k++) table[k] += double(k);  // distinct
  const std::vector<int32_t> ids = {4, 0, 4, 2, -1, 5, 1};
  const int64_t P = int64_t(ids.size());
  std::vector<double> out(P * D, -7);
  embedding<double>(ids.data(), table.data(), P, V, D, out.data());
  for (int64_t p = 0; p < P; p++)
    for (int64_t d = 0; d < D; d++) {
      if (ids[p] < 0 || ids[p] >= V)
        EXPECT_TRUE(std::isnan(out[p * D + d])) << "position " << p;
      else
        EXPECT_EQ(out[p * D + d], table[ids[p] * D + d]) << "position " << p;
    }
}

// embedding_grad against a loop per table element that sums the matching positions in
// ascending order from 0, bit for bit in float: the values (1e8, 1, -1e8, ...) round
// differently in any other order, so the test pins the order the kernels document.
TEST(CpuKernelsTest, EmbeddingGradSumsInAscendingPositionOrder) {
  const int64_t V = 4, D = 2;
  const std::vector<int32_t> ids = {1, 3, 1, 1, 0, 1, 3};
  const int64_t P = int64_t(ids.size());
  const std::vector<float> dy = {1e8f, 1.f,  2.f, 3.f, 1.f, -1e8f, -1e8f, 5.f,
                                 4.f,  4.f,  1.f, 1e8f, 7.f, 8.f};
  std::vector<float> out(V * D, -7);
  embedding_grad<float>(ids.data(), dy.data(), P, V, D, out.data());
  for (int64_t v = 0; v < V; v++)
    for (int64_t d = 0; d < D; d++) {
      float want = 0;
      for (int64_t p = 0; p < P; p++)
        if (ids[p] == v) want = want + dy[p * D + d];
      EXPECT_EQ(out[v * D + d], want) << "row " << v << " column " << d;
    }
  EXPECT_EQ(out[2 * D], 0.f);  // row 2 is never looked up
  // The order matters here: (1e8 + 1) - 1e8 + 1 is not 1e8 + (1 - 1e8) + 1 in float.
  EXPECT_EQ(out[1 * D + 0], ((1e8f + 1.f) + -1e8f) + 1.f);
  std::vector<int32_t> bad = ids;
  bad[3] = 4;  // V: every element NaN
  embedding_grad<float>(bad.data(), dy.data(), P, V, D, out.data());
  for (float x : out) EXPECT_TRUE(std::isnan(x));
}

// gather along each axis of a rank-3 tensor against a loop over every multi-index of
// the result, the index reading repeats and skipping entries; NaN for -1 and n.
TEST(CpuKernelsTest, GatherEveryAxis) {
  const int64_t shape[3] = {3, 4, 2};
  std::vector<double> x(24);
  for (int64_t k = 0; k < 24; k++) x[k] = 0.5 * double(k) - 3;
  for (int64_t axis = 0; axis < 3; axis++) {
    int64_t ishape[3] = {shape[0], shape[1], shape[2]};
    ishape[axis] = 5;
    const int64_t total = ishape[0] * ishape[1] * ishape[2];
    std::vector<int32_t> index(total);
    for (int64_t k = 0; k < total; k++) index[k] = int32_t((k * 5 + 3) % shape[axis]);
    index[1] = -1;
    index[total - 1] = int32_t(shape[axis]);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; d++) outer *= shape[d];
    for (int64_t d = axis + 1; d < 3; d++) inner *= shape[d];
    std::vector<double> out(total, -7);
    gather<double>(x.data(), index.data(), outer, shape[axis], 5, inner, out.data());
    for (int64_t a = 0; a < ishape[0]; a++)
      for (int64_t b = 0; b < ishape[1]; b++)
        for (int64_t c = 0; c < ishape[2]; c++) {
          const int64_t k = (a * ishape[1] + b) * ishape[2] + c;
          int64_t at[3] = {a, b, c};
          at[axis] = index[k];
          if (index[k] < 0 || index[k] >= shape[axis]) {
            EXPECT_TRUE(std::isnan(out[k])) << "axis " << axis << " at " << k;
            continue;
          }
          EXPECT_EQ(out[k], x[(at[0] * shape[1] + at[1]) * shape[2] + at[2]])
              << "axis " << axis << " at " << k;
        }
  }
}

// scatter_add along each axis against a loop over src in row-major order adding into
// a copy of x (for one output element that is x's element, then its matches with j
// ascending: the kernels' order); an index out of range makes its fiber NaN.
TEST(CpuKernelsTest, ScatterAddEveryAxis) {
  const int64_t shape[3] = {3, 4, 2};
  std::vector<double> x(24);
  for (int64_t k = 0; k < 24; k++) x[k] = 0.25 * double(k) + 1;
  for (int64_t axis = 0; axis < 3; axis++) {
    int64_t ishape[3] = {shape[0], shape[1], shape[2]};
    ishape[axis] = 5;
    const int64_t total = ishape[0] * ishape[1] * ishape[2];
    std::vector<int32_t> index(total);
    std::vector<double> src(total);
    for (int64_t k = 0; k < total; k++) {
      index[k] = int32_t((k * 7 + 1) % shape[axis]);
      src[k] = double((k * 3) % 13) - 6;
    }
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; d++) outer *= shape[d];
    for (int64_t d = axis + 1; d < 3; d++) inner *= shape[d];
    std::vector<double> want = x;
    for (int64_t a = 0; a < ishape[0]; a++)
      for (int64_t b = 0; b < ishape[1]; b++)
        for (int64_t c = 0; c < ishape[2]; c++) {
          const int64_t k = (a * ishape[1] + b) * ishape[2] + c;
          int64_t at[3] = {a, b, c};
          at[axis] = index[k];
          want[(at[0] * shape[1] + at[1]) * shape[2] + at[2]] += src[k];
        }
    std::vector<double> out(24, -7);
    scatter_add<double>(x.data(), index.data(), src.data(), outer, shape[axis], 5, inner,
                        out.data());
    EXPECT_EQ(out, want) << "axis " << axis;
    // index[0] out of range: the fiber through x's element 0 along the axis is NaN,
    // every other element as before.
    index[0] = -1;
    scatter_add<double>(x.data(), index.data(), src.data(), outer, shape[axis], 5, inner,
                        out.data());
    const int64_t stride = axis == 0 ? shape[1] * shape[2] : axis == 1 ? shape[2] : 1;
    for (int64_t k = 0; k < 24; k++) {
      bool fiber = k % stride == 0 && k / stride < shape[axis];
      if (fiber)
        EXPECT_TRUE(std::isnan(out[k])) << "axis " << axis << " at " << k;
      else
        EXPECT_EQ(out[k], want[k]) << "axis " << axis << " at " << k;
    }
  }
}

// concat of three inputs along each axis of rank-2 tensors, against a loop that
// picks the input from the coordinate.
TEST(CpuKernelsTest, ConcatThreeInputsAlongEachAxis) {
  for (int64_t axis = 0; axis < 2; axis++) {
    const std::vector<int64_t> extents = {1, 3, 2};
    std::vector<std::vector<double>> inputs;
    for (int64_t k = 0; k < 3; k++) {
      std::vector<double> t(extents[k] * 4);
      for (size_t i = 0; i < t.size(); i++) t[i] = 100.0 * double(k) + double(i);
      inputs.push_back(t);
    }
    std::vector<int64_t> out_shape = {4, 4};
    out_shape[axis] = 6;
    std::vector<double> out(24, -1);
    concat<double>({inputs[0].data(), inputs[1].data(), inputs[2].data()}, extents,
                   out_shape, axis, out.data());
    for (int64_t r = 0; r < out_shape[0]; r++)
      for (int64_t c = 0; c < out_shape[1]; c++) {
        int64_t along = axis == 0 ? r : c, k = 0;
        while (along >= extents[k]) along -= extents[k++];
        const int64_t cols = axis == 0 ? 4 : extents[k];
        const int64_t rr = axis == 0 ? along : r, cc = axis == 0 ? c : along;
        EXPECT_EQ(out[r * out_shape[1] + c], inputs[k][rr * cols + cc])
            << "axis " << axis << " at " << r << "," << c;
      }
  }
}

// --- im2col / col2im: a convolution's windows --------------------------------------

// A geometry of 1 to 3 spatial axes, padded to three with extent 1 (as codegen passes it).
struct ConvCase {
  int64_t batch, channels, groups;
  std::vector<int64_t> image, grid, kernel, stride, padding, dilation;
  const char* what;

  ConvGeometry geometry() const {
    ConvGeometry g{batch, channels, groups, {1, 1, 1}, {1, 1, 1}, {1, 1, 1},
                   {1, 1, 1}, {0, 0, 0},   {1, 1, 1}};
    for (size_t a = 0; a < image.size(); a++) {
      g.image[a] = image[a];
      g.grid[a] = grid[a];
      g.kernel[a] = kernel[a];
      g.stride[a] = stride[a];
      g.padding[a] = padding[a];
      g.dilation[a] = dilation[a];
    }
    return g;
  }
  int64_t product(const std::vector<int64_t>& v) const {
    int64_t p = 1;
    for (int64_t e : v) p *= e;
    return p;
  }
  int64_t positions() const { return product(image); }
  int64_t windows() const { return product(grid); }
  int64_t offsets() const { return product(kernel); }
};

// Multi-index of `flat` in `shape`, row-major.
std::vector<int64_t> coordinates(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> at(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    at[i] = flat % shape[i];
    flat /= shape[i];
  }
  return at;
}

// The image position window `o` reads at kernel offset `k` (flat, row-major), -1 in the
// padding: o·stride − padding + k·dilation per axis.
int64_t window_reads(const ConvCase& c, int64_t o, int64_t k) {
  std::vector<int64_t> oo = coordinates(o, c.grid), kk = coordinates(k, c.kernel);
  int64_t flat = 0;
  for (size_t a = 0; a < c.image.size(); a++) {
    int64_t p = oo[a] * c.stride[a] - c.padding[a] + kk[a] * c.dilation[a];
    if (p < 0 || p >= c.image[a]) return -1;
    flat = flat * c.image[a] + p;
  }
  return flat;
}

const std::vector<ConvCase>& conv_cases() {
  static const std::vector<ConvCase> cases = {
      {2, 3, 1, {7}, {4}, {3}, {2}, {1}, {1}, "1-D stride 2 padding 1"},
      {1, 4, 2, {9}, {3}, {2}, {2}, {0}, {3}, "1-D dilation 3, 2 groups, one window short"},
      {2, 2, 1, {4, 5}, {3, 4}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, "2-D plain"},
      {3, 6, 3, {5, 6}, {3, 3}, {3, 2}, {2, 2}, {1, 0}, {1, 2}, "2-D strides, dilation, 3 groups"},
      {2, 4, 2, {3, 4, 5}, {2, 2, 3}, {2, 3, 2}, {1, 2, 2}, {0, 1, 1}, {2, 1, 1},
       "3-D everything"},
      {1, 1, 1, {3, 3}, {2, 2}, {3, 3}, {2, 2}, {1, 1}, {1, 1},
       "the grid smaller than the windows that fit (conv_transpose's gradient)"},
  };
  return cases;
}

// im2col against the definition (each column element the image element its window reads
// at its row's offset, 0 in the padding), and then W·im2col(x) against a convolution
// written out as nested sums over channels and kernel offsets.
TEST(CpuKernelsTest, Im2colReadsEveryWindowAndMakesTheConvolution) {
  for (const ConvCase& c : conv_cases()) {
    const int64_t per_group = c.channels / c.groups, L = c.windows(), K = c.offsets();
    const std::vector<double> x = iota_values(c.batch * c.channels * c.positions());
    std::vector<double> cols(c.channels * K * c.batch * L, -99);
    im2col<double>(x.data(), cols.data(), c.geometry());
    for (int64_t ch = 0; ch < c.channels; ch++)
      for (int64_t k = 0; k < K; k++)
        for (int64_t n = 0; n < c.batch; n++)
          for (int64_t o = 0; o < L; o++) {
            int64_t p = window_reads(c, o, k);
            double want = p < 0 ? 0.0 : x[(n * c.channels + ch) * c.positions() + p];
            EXPECT_EQ(cols[((ch * K + k) * c.batch + n) * L + o], want)
                << c.what << ": channel " << ch << " offset " << k << " entry " << n
                << " window " << o;
          }
    // Two output channels per group: y[n, oc, o] = Σ_c Σ_k w[oc, c, k]·x[n, g·C/G + c, at].
    const int64_t outputs = 2 * c.groups;
    const std::vector<double> w = iota_values(outputs * per_group * K, 0.25);
    for (int64_t n = 0; n < c.batch; n++)
      for (int64_t oc = 0; oc < outputs; oc++)
        for (int64_t o = 0; o < L; o++) {
          const int64_t g = oc / 2;
          double direct = 0, through = 0;
          for (int64_t ci = 0; ci < per_group; ci++)
            for (int64_t k = 0; k < K; k++) {
              const int64_t p = window_reads(c, o, k);
              const double wv = w[(oc * per_group + ci) * K + k];
              if (p >= 0) direct += wv * x[(n * c.channels + g * per_group + ci) * c.positions() + p];
              through += wv * cols[(((g * per_group + ci) * K + k) * c.batch + n) * L + o];
            }
          EXPECT_EQ(through, direct) << c.what << ": y[" << n << ", " << oc << ", " << o << "]";
        }
  }
}

// col2im is im2col's adjoint: <im2col(x), cols> = <x, col2im(cols)> (small integers:
// exact); and it folds each image element's terms in ascending kernel-offset order from
// 0: bit for bit a scatter written here whose outer loop is the kernel offset (so every
// element receives its terms in that order), on float values where the order shows.
TEST(CpuKernelsTest, Col2imIsTheAdjointAndFoldsInAscendingOffsetOrder) {
  for (const ConvCase& c : conv_cases()) {
    const int64_t L = c.windows(), K = c.offsets();
    const int64_t image_size = c.batch * c.channels * c.positions();
    const int64_t cols_size = c.channels * K * c.batch * L;
    const std::vector<double> x = iota_values(image_size), cols = iota_values(cols_size, 0.5);
    std::vector<double> windows(cols_size), folded(image_size, -99);
    im2col<double>(x.data(), windows.data(), c.geometry());
    col2im<double>(cols.data(), folded.data(), c.geometry());
    double lhs = 0, rhs = 0;
    for (int64_t i = 0; i < cols_size; i++) lhs += windows[i] * cols[i];
    for (int64_t i = 0; i < image_size; i++) rhs += x[i] * folded[i];
    EXPECT_EQ(lhs, rhs) << c.what;

    std::vector<float> fcols(cols_size);
    for (int64_t i = 0; i < cols_size; i++) fcols[i] = 1.0f / float(i % 13 + 3) + float(i % 5);
    std::vector<float> got(image_size, -99.0f), want(image_size, 0.0f);
    col2im<float>(fcols.data(), got.data(), c.geometry());
    for (int64_t k = 0; k < K; k++)
      for (int64_t ch = 0; ch < c.channels; ch++)
        for (int64_t n = 0; n < c.batch; n++)
          for (int64_t o = 0; o < L; o++) {
            const int64_t p = window_reads(c, o, k);
            if (p >= 0)
              want[(n * c.channels + ch) * c.positions() + p] +=
                  fcols[((ch * K + k) * c.batch + n) * L + o];
          }
    int64_t covered = 0;
    for (int64_t i = 0; i < image_size; i++) {
      EXPECT_EQ(got[i], want[i]) << c.what << ": image element " << i;
      covered += want[i] != 0.0f;
    }
    EXPECT_GT(covered, 0) << c.what;
  }
}

// col2im_matmul is col2im of the columns lhsᵀ·rhs (per group), never stored: in float,
// bit for bit a scatter written here whose outer loops are the kernel offset and then r
// (so every image element receives its terms in the fold's order, k ascending then r),
// and in double on small integers (exact) the same as col2im of the columns multiplied
// out here.
TEST(CpuKernelsTest, Col2imMatmulFoldsTheProductWithoutItsColumns) {
  for (const ConvCase& c : conv_cases()) {
    const int64_t per_group = c.channels / c.groups, L = c.windows(), K = c.offsets();
    const int64_t image_size = c.batch * c.channels * c.positions();
    for (int64_t rows : {1, 3}) {
      const int64_t lhs_size = c.groups * rows * per_group * K;
      const int64_t rhs_size = c.groups * rows * c.batch * L;
      std::vector<double> lhs = iota_values(lhs_size, 0.5), rhs = iota_values(rhs_size, 0.25);
      for (double& v : lhs) v = std::round(v * 4);
      for (double& v : rhs) v = std::round(v * 4) - 3;
      // The columns [G, C/G·K, N·L] multiplied out, then the existing col2im.
      std::vector<double> cols(c.channels * K * c.batch * L, 0.0);
      for (int64_t g = 0; g < c.groups; g++)
        for (int64_t i = 0; i < per_group * K; i++)
          for (int64_t j = 0; j < c.batch * L; j++)
            for (int64_t r = 0; r < rows; r++)
              cols[(g * per_group * K + i) * c.batch * L + j] +=
                  lhs[(g * rows + r) * per_group * K + i] *
                  rhs[(g * rows + r) * c.batch * L + j];
      std::vector<double> want(image_size, -99), got(image_size, -99);
      col2im<double>(cols.data(), want.data(), c.geometry());
      col2im_matmul<double>(lhs.data(), rhs.data(), got.data(), c.geometry(), rows);
      for (int64_t i = 0; i < image_size; i++)
        EXPECT_EQ(got[i], want[i]) << c.what << ", rows " << rows << ": element " << i;

      std::vector<float> flhs(lhs_size), frhs(rhs_size);
      for (int64_t i = 0; i < lhs_size; i++) flhs[i] = 1.0f / float(i % 11 + 2) - 0.2f;
      for (int64_t i = 0; i < rhs_size; i++) frhs[i] = 1.0f / float(i % 7 + 3) + float(i % 3);
      std::vector<float> fgot(image_size, -99.0f), fwant(image_size, 0.0f);
      col2im_matmul<float>(flhs.data(), frhs.data(), fgot.data(), c.geometry(), rows);
      for (int64_t k = 0; k < K; k++)
        for (int64_t r = 0; r < rows; r++)
          for (int64_t g = 0; g < c.groups; g++)
            for (int64_t ci = 0; ci < per_group; ci++)
              for (int64_t n = 0; n < c.batch; n++)
                for (int64_t o = 0; o < L; o++) {
                  const int64_t p = window_reads(c, o, k);
                  if (p >= 0)
                    fwant[(n * c.channels + g * per_group + ci) * c.positions() + p] +=
                        flhs[((g * rows + r) * per_group + ci) * K + k] *
                        frhs[(g * rows + r) * c.batch * L + n * L + o];
                }
      int64_t covered = 0;
      for (int64_t i = 0; i < image_size; i++) {
        EXPECT_EQ(fgot[i], fwant[i]) << c.what << ", rows " << rows << ": element " << i;
        covered += fwant[i] != 0.0f;
      }
      EXPECT_GT(covered, 0) << c.what;
    }
  }
}

// gelu's cpu helpers round every product and sum on its own: bit for bit equal to a
// reference in which each step is forced through a volatile (so no compiler can fuse
// it), and not equal, for some input, to the same formula with one product-sum fused
// (std::fma), so the comparison would notice a contraction.
TEST(CpuKernelsTest, GeluHelpersAreUncontracted) {
  auto stepwise = [](float x) {
    volatile float x2 = x * x;
    volatile float x3 = x2 * x;
    volatile float kx3 = 0.044715f * x3;
    volatile float sum = x + kx3;
    volatile float u = 0.7978845608028654f * sum;
    volatile float t = std::tanh(float(u));
    volatile float half = 0.5f * x;
    volatile float one_t = 1.0f + t;
    return float(half * one_t);
  };
  auto fused = [](float x) {
    const float u = 0.7978845608028654f * std::fma(0.044715f, (x * x) * x, x);
    return (0.5f * x) * (1.0f + std::tanh(u));
  };
  int differs = 0;
  for (int i = -4000; i <= 4000; i++) {
    const float x = float(i) / 997.0f;
    EXPECT_EQ(gelu_tanh(x), stepwise(x)) << "x = " << x;
    differs += gelu_tanh(x) != fused(x);
    // The erf form and the derivatives against float64 (1e-6 relative-ish).
    const double xd = x;
    EXPECT_NEAR(gelu_erf(x), 0.5 * xd * (1 + std::erf(xd / std::sqrt(2.0))), 1e-6);
    EXPECT_NEAR(gelu_erf_grad(xd),
                0.5 * (1 + std::erf(xd / std::sqrt(2.0))) +
                    xd * std::exp(-0.5 * xd * xd) / std::sqrt(2 * M_PI),
                1e-14);
    const double h = 1e-6;
    EXPECT_NEAR(gelu_tanh_grad(xd), (gelu_tanh(xd + h) - gelu_tanh(xd - h)) / (2 * h), 1e-8)
        << "x = " << xd;
  }
  EXPECT_GT(differs, 0) << "no input tells a fused product-sum from the stepwise one";
}

TEST(CpuKernelsTest, MseLoss) {
  std::vector<double> pred = {1, 2, 3}, target = {1.5, 2, 1};
  EXPECT_DOUBLE_EQ(mse_loss<double>(3, pred.data(), target.data()), (0.25 + 0 + 4) / 3);
  std::vector<float> pf = {0, 1}, tf = {1, 3};
  EXPECT_FLOAT_EQ(mse_loss<float>(2, pf.data(), tf.data()), 2.5f);
}

// cast: real -> i32 truncates toward zero (torch's .to(torch.int32), values checked
// with torch 1.13: 2.7 -> 2, -2.7 -> -2, -0.5 -> 0, 1e9 + 0.5 -> 1000000000), and
// outside int32 the documented rule: NaN 0, saturation; i32 -> real exact; int -> int
// and real -> real copies.
TEST(CpuKernelsTest, CastTruncatesTowardZeroAndSaturates) {
  const std::vector<double> x = {2.7, -2.7, -0.5, 1e9 + 0.5, 1e10, -1e10, std::nan(""),
                                 2147483647.0, -2147483648.0, 0.0};
  std::vector<int32_t> got(x.size());
  cast<double>(x.data(), nullptr, nullptr, got.data(), int64_t(x.size()));
  EXPECT_EQ(got, (std::vector<int32_t>{2, -2, 0, 1000000000, 2147483647, INT32_MIN, 0,
                                       2147483647, INT32_MIN, 0}));
  const std::vector<float> xf = {3.99f, -3.99f, 3e9f, -3e9f};
  std::vector<int32_t> gotf(4);
  cast<float>(xf.data(), nullptr, nullptr, gotf.data(), 4);
  EXPECT_EQ(gotf, (std::vector<int32_t>{3, -3, 2147483647, INT32_MIN}));
  const std::vector<int32_t> ints = {-5, 0, 1, 16777217};
  std::vector<double> back(4);
  cast<double>(nullptr, ints.data(), back.data(), nullptr, 4);
  EXPECT_EQ(back, (std::vector<double>{-5, 0, 1, 16777217}));
  std::vector<int32_t> copy(4);
  cast<float>(nullptr, ints.data(), nullptr, copy.data(), 4);
  EXPECT_EQ(copy, ints);
  std::vector<float> same(4);
  cast<float>(xf.data(), nullptr, same.data(), nullptr, 4);
  EXPECT_EQ(same, xf);
}

// round_bf16 against the definition, computed another way: of the two bf16 values
// around x (its bits truncated, and the next bf16 away from zero), the one nearer x in
// double arithmetic, the even one on a tie; past bf16's largest finite value, infinity.
// Every sign and exponent is reached by random bit patterns, and the ties, the largest
// values and the specials are listed.
TEST(CpuKernelsTest, RoundBf16IsNearestEven) {
  auto bits_of = [](float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; };
  auto float_of = [](uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; };
  auto reference = [&](float x) -> uint16_t {
    const uint32_t u = bits_of(x);
    if (std::isnan(x)) return uint16_t((u >> 16) | 0x40u);
    if (std::isinf(x)) return uint16_t(u >> 16);
    const uint32_t down = u & 0xffff0000u, up = down + 0x10000u;
    // One step past bf16's largest finite value is 2^128 (rounding there
    // gives infinity).
    const double upValue = std::isinf(float_of(up)) ? std::copysign(std::ldexp(1.0, 128), x)
                                                    : double(float_of(up));
    const double dd = std::fabs(double(x) - double(float_of(down)));
    const double du = std::fabs(upValue - double(x));
    if (dd < du) return uint16_t(down >> 16);
    if (du < dd) return uint16_t(up >> 16);
    return uint16_t(((down >> 16) & 1u) ? up >> 16 : down >> 16);
  };
  std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.0f, float_of(0x3f808000u) /* tie, even down */,
                          float_of(0x3f818000u) /* tie, odd: up */, float_of(0x3f808001u),
                          float_of(0x7f7f7fffu), float_of(0x7f7f8000u), float_of(0xff7f8000u),
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(), std::nanf(""),
                          float_of(0x00000001u) /* smallest subnormal */, float_of(0x00018000u)};
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 100000; i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x.push_back(float_of(uint32_t(state >> 32)));
  }
  std::vector<uint16_t> got(x.size());
  round_bf16<float>(x.data(), got.data(), int64_t(x.size()));
  for (size_t i = 0; i < x.size(); i++)
    ASSERT_EQ(got[i], reference(x[i])) << "x bits 0x" << std::hex << bits_of(x[i]);
}

// masked_softmax on [2, 3, 4] along axis 1 with a [3, 4] mask broadcast over axis 0
// (strides {0, 4, 1}): against a loop written here, softmax_k = 1 / sum over the kept j
// of exp(x_j - x_k); blocked elements and the fully blocked rows (column 2 of the mask
// is all false) exact zeros; a large kept input does not overflow.
TEST(CpuKernelsTest, MaskedSoftmaxAgainstLoops) {
  const int64_t D0 = 2, D1 = 3, D2 = 4;
  std::vector<double> x = iota_values(D0 * D1 * D2, 0.3);
  x[5] = 900;  // kept (mask[1][1] = 1): the max shift keeps exp finite
  const std::vector<int32_t> mask = {1, 0, 0, 1, 0, 1, 0, 1, 1, 1, 0, 0};
  const int64_t extent[] = {D0, D1, D2}, stride[] = {0, D2, 1};
  std::vector<double> y(x.size(), -7.0);
  masked_softmax<double>(x.data(), mask.data(), 3, extent, stride, y.data(), D0, D1, D2);
  for (int64_t o = 0; o < D0; o++)
    for (int64_t i = 0; i < D2; i++)
      for (int64_t k = 0; k < D1; k++) {
        const int64_t at = (o * D1 + k) * D2 + i;
        if (!mask[k * D2 + i]) {
          EXPECT_EQ(y[at], 0.0) << "blocked element " << at;
          continue;
        }
        double denom = 0;
        for (int64_t j = 0; j < D1; j++)
          if (mask[j * D2 + i]) denom += std::exp(x[(o * D1 + j) * D2 + i] - x[at]);
        EXPECT_NEAR(y[at], 1.0 / denom, 1e-12) << "element " << at;
      }
  std::vector<float> xf = {1, 2, 3, 4}, yf(4);
  const std::vector<int32_t> none = {0, 0, 0, 0};
  const int64_t e1[] = {4}, s1[] = {1};
  masked_softmax<float>(xf.data(), none.data(), 1, e1, s1, yf.data(), 1, 4, 1);
  EXPECT_EQ(yf, (std::vector<float>{0, 0, 0, 0}));
}

// flash_attention and flash_attention_grad on batch 2, Tq 3, Tk 4, D 2, Dv 3, against
// matrices written here: P = softmax of scale·QKᵀ over the kept keys (1 / Σ exp(s_j -
// s_k), no max shift), O = PV, lse = log Σ exp(s_j); dV = PᵀdO, dP = dO Vᵀ, dS = P ∘
// (dP - rowsum(P ∘ dP)), dQ = scale·dS K, dK = scale·dSᵀ Q. A [3, 4] mask broadcast over
// the batch (strides {0, 4, 1}) whose query 1 sees no key (its O row and dQ row exact
// zeros, lse -inf), then causal (j <= i) without a mask. Tolerance 1e-12 (f64).
TEST(CpuKernelsTest, FlashAttentionAgainstMatrices) {
  const int64_t B = 2, TQ = 3, TK = 4, D = 2, DV = 3;
  const double scale = 0.7, tol = 1e-12;
  std::vector<double> q = iota_values(B * TQ * D, 0.3), k = iota_values(B * TK * D, -0.2),
                      v = iota_values(B * TK * DV, 0.5), g = iota_values(B * TQ * DV, 0.1);
  const std::vector<int32_t> mask = {1, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1};
  const int64_t extent[] = {B, TQ, TK}, stride[] = {0, TK, 1};
  for (bool causal : {false, true}) {
    auto kept = [&](int64_t i, int64_t j) { return causal ? j <= i : mask[i * TK + j] != 0; };
    std::vector<double> o(B * TQ * DV, -7), lse(B * TQ, -7), dq(q.size(), -7),
        dk(k.size(), -7), dv(v.size(), -7);
    const int32_t* m = causal ? nullptr : mask.data();
    flash_attention<double>(q.data(), k.data(), v.data(), m, 3, extent, stride, o.data(),
                            lse.data(), B, TQ, TK, D, DV, causal, scale);
    flash_attention_grad<double>(g.data(), q.data(), k.data(), v.data(), o.data(),
                                 lse.data(), m, 3, extent, stride, dq.data(), dk.data(),
                                 dv.data(), B, TQ, TK, D, DV, causal, scale);
    std::vector<double> wantDq(q.size(), 0), wantDk(k.size(), 0), wantDv(v.size(), 0);
    for (int64_t b = 0; b < B; b++) {
      double s[TQ][TK], p[TQ][TK], dp[TQ][TK];
      for (int64_t i = 0; i < TQ; i++)
        for (int64_t j = 0; j < TK; j++) {
          s[i][j] = 0;
          for (int64_t c = 0; c < D; c++) s[i][j] += q[(b * TQ + i) * D + c] * k[(b * TK + j) * D + c];
          s[i][j] *= scale;
        }
      for (int64_t i = 0; i < TQ; i++) {
        double sum = 0;
        bool any = false;
        for (int64_t j = 0; j < TK; j++) {
          p[i][j] = 0;
          if (!kept(i, j)) continue;
          double denom = 0;
          for (int64_t l = 0; l < TK; l++)
            if (kept(i, l)) denom += std::exp(s[i][l] - s[i][j]);
          p[i][j] = 1.0 / denom;
          sum += std::exp(s[i][j]);
          any = true;
        }
        if (any)
          EXPECT_NEAR(lse[b * TQ + i], std::log(sum), tol) << "lse " << b << "," << i;
        else
          EXPECT_EQ(lse[b * TQ + i], -std::numeric_limits<double>::infinity());
        for (int64_t c = 0; c < DV; c++) {
          double want = 0;
          for (int64_t j = 0; j < TK; j++) want += p[i][j] * v[(b * TK + j) * DV + c];
          if (!any) {
            EXPECT_EQ(o[(b * TQ + i) * DV + c], 0.0) << "blocked query " << i;
          }
          EXPECT_NEAR(o[(b * TQ + i) * DV + c], want, tol) << "out " << b << "," << i;
        }
        double rowsum = 0;
        for (int64_t j = 0; j < TK; j++) {
          dp[i][j] = 0;
          for (int64_t c = 0; c < DV; c++) dp[i][j] += g[(b * TQ + i) * DV + c] * v[(b * TK + j) * DV + c];
          rowsum += p[i][j] * dp[i][j];
        }
        for (int64_t j = 0; j < TK; j++) {
          const double ds = p[i][j] * (dp[i][j] - rowsum);
          for (int64_t c = 0; c < D; c++) {
            wantDq[(b * TQ + i) * D + c] += scale * ds * k[(b * TK + j) * D + c];
            wantDk[(b * TK + j) * D + c] += scale * ds * q[(b * TQ + i) * D + c];
          }
          for (int64_t c = 0; c < DV; c++)
            wantDv[(b * TK + j) * DV + c] += p[i][j] * g[(b * TQ + i) * DV + c];
        }
      }
    }
    for (size_t i = 0; i < dq.size(); i++) EXPECT_NEAR(dq[i], wantDq[i], tol) << "dq " << i;
    for (size_t i = 0; i < dk.size(); i++) EXPECT_NEAR(dk[i], wantDk[i], tol) << "dk " << i;
    for (size_t i = 0; i < dv.size(); i++) EXPECT_NEAR(dv[i], wantDv[i], tol) << "dv " << i;
    if (!causal) {
      for (int64_t b = 0; b < B; b++)
        for (int64_t c = 0; c < D; c++) EXPECT_EQ(dq[(b * TQ + 1) * D + c], 0.0);
    }
  }
}

// qkv_attention and qkv_attention_grad on qkv [B 2, T 3, 3·H·D] (H 2, D 2) with random
// values: the heads unpacked here by decomposing each packed offset into (b, t, part,
// h, c) (q, k, v's H heads of D side by side along the last axis), flash_attention and
// flash_attention_grad run on them as B·H batches, their out / dq, dk, dv put back at
// [b, t, h·D + c] / [b, t, part·H·D + h·D + c]: bitwise the packed kernels' results.
// No mask; causal; a [B, 1, T, T] mask broadcast over the heads (strides {T·T, 0, T, 1})
// whose query 1 of batch entry 0 sees no key. Then T = 1: out is v's head exactly, lse
// scale·q·k, and the gradient dy lands on v's head (q's and k's are exact zeros).
TEST(CpuKernelsTest, QkvAttentionIsFlashAttentionOfThePackedHeads) {
  const int64_t B = 2, T = 3, H = 2, D = 2, HD = H * D, W = 3 * HD;
  const double scale = 0.6;
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  auto random = [&](int64_t n) {
    std::vector<double> v(n);
    for (double& x : v) x = uniform(rng);
    return v;
  };
  const std::vector<double> qkv = random(B * T * W), g = random(B * T * HD);
  // heads[part] [B·H, T, D] from qkv; a packed [B, T, HD] tensor to and from [B·H, T, D].
  std::vector<double> heads[3];
  for (auto& h : heads) h.assign(B * H * T * D, -7);
  for (int64_t at = 0; at < B * T * W; at++) {
    const int64_t c = at % D, h = at / D % H, part = at / HD % 3, t = at / W % T, b = at / (W * T);
    heads[part][((b * H + h) * T + t) * D + c] = qkv[at];
  }
  auto unpack = [&](const std::vector<double>& packed) {
    std::vector<double> out(B * H * T * D, -7);
    for (int64_t at = 0; at < B * T * HD; at++) {
      const int64_t c = at % D, h = at / D % H, t = at / HD % T, b = at / (HD * T);
      out[((b * H + h) * T + t) * D + c] = packed[at];
    }
    return out;
  };
  auto pack = [&](const std::vector<double>& unpacked, int64_t parts, int64_t part,
                  std::vector<double>& packed) {
    for (int64_t b = 0; b < B; b++)
      for (int64_t t = 0; t < T; t++)
        for (int64_t h = 0; h < H; h++)
          for (int64_t c = 0; c < D; c++)
            packed[(b * T + t) * parts * HD + part * HD + h * D + c] =
                unpacked[((b * H + h) * T + t) * D + c];
  };
  const std::vector<double> gHeads = unpack(g);
  const std::vector<int32_t> mask = {1, 1, 0, 0, 0, 0, 1, 0, 1,   // b 0: query 1 blocked
                                     0, 1, 1, 1, 0, 1, 0, 1, 0};  // b 1
  const int64_t extent[] = {B, H, T, T}, stride[] = {T * T, 0, T, 1};
  for (int variant = 0; variant < 3; variant++) {
    const bool causal = variant == 1;
    const int32_t* m = variant == 2 ? mask.data() : nullptr;
    std::vector<double> oHeads(B * H * T * D, -7), wantLse(B * H * T, -7), dq(B * H * T * D, -7),
        dk(dq.size(), -7), dv(dq.size(), -7);
    flash_attention<double>(heads[0].data(), heads[1].data(), heads[2].data(), m, 4, extent,
                            stride, oHeads.data(), wantLse.data(), B * H, T, T, D, D, causal,
                            scale);
    flash_attention_grad<double>(gHeads.data(), heads[0].data(), heads[1].data(),
                                 heads[2].data(), oHeads.data(), wantLse.data(), m, 4, extent,
                                 stride, dq.data(), dk.data(), dv.data(), B * H, T, T, D, D,
                                 causal, scale);
    std::vector<double> wantOut(B * T * HD, -7), wantDqkv(B * T * W, -7);
    pack(oHeads, 1, 0, wantOut);
    pack(dq, 3, 0, wantDqkv);
    pack(dk, 3, 1, wantDqkv);
    pack(dv, 3, 2, wantDqkv);

    std::vector<double> out(B * T * HD, -5), lse(B * H * T, -5), dqkv(B * T * W, -5);
    qkv_attention<double>(qkv.data(), m, 4, extent, stride, out.data(), lse.data(), B, T, H, D,
                          causal, scale);
    qkv_attention_grad<double>(g.data(), qkv.data(), out.data(), lse.data(), m, 4, extent,
                               stride, dqkv.data(), B, T, H, D, causal, scale);
    for (size_t i = 0; i < out.size(); i++)
      EXPECT_EQ(out[i], wantOut[i]) << variant << " out " << i;
    for (size_t i = 0; i < lse.size(); i++)
      EXPECT_EQ(lse[i], wantLse[i]) << variant << " lse " << i;
    for (size_t i = 0; i < dqkv.size(); i++)
      EXPECT_EQ(dqkv[i], wantDqkv[i]) << variant << " dqkv " << i;
    if (variant == 2)  // query 1 of batch entry 0, both heads: no key, zeros and -inf
      for (int64_t h = 0; h < H; h++) {
        EXPECT_EQ(lse[(0 * H + h) * T + 1], -std::numeric_limits<double>::infinity());
        for (int64_t c = 0; c < D; c++) {
          EXPECT_EQ(out[(0 * T + 1) * HD + h * D + c], 0.0);
          EXPECT_EQ(dqkv[(0 * T + 1) * W + h * D + c], 0.0);  // its q row's gradient
        }
      }
  }

  // T = 1: the one key's weight is exactly 1.
  std::vector<double> out(B * HD, -5), lse(B * H, -5), dqkv(B * W, -5);
  qkv_attention<double>(qkv.data(), nullptr, 0, nullptr, nullptr, out.data(), lse.data(), B, 1,
                        H, D, false, scale);
  qkv_attention_grad<double>(g.data(), qkv.data(), out.data(), lse.data(), nullptr, 0, nullptr,
                             nullptr, dqkv.data(), B, 1, H, D, false, scale);
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++) {
      double dot = 0;
      for (int64_t c = 0; c < D; c++) dot += qkv[b * W + h * D + c] * qkv[b * W + HD + h * D + c];
      EXPECT_DOUBLE_EQ(lse[b * H + h], scale * dot) << b << "," << h;
      for (int64_t c = 0; c < D; c++) {
        EXPECT_EQ(out[b * HD + h * D + c], qkv[b * W + 2 * HD + h * D + c]) << b << "," << h;
        EXPECT_EQ(dqkv[b * W + h * D + c], 0.0) << "dq " << b << "," << h;
        EXPECT_EQ(dqkv[b * W + HD + h * D + c], 0.0) << "dk " << b << "," << h;
        EXPECT_EQ(dqkv[b * W + 2 * HD + h * D + c], g[b * HD + h * D + c]) << "dv " << b;
      }
    }
}

// Softmax family along the middle axis of [2, 3, 4] (strided rows) and the last one,
// against loops written here: softmax_k = 1 / sum_j exp(x_j - x_k) (no max shift, no
// shared code), log_softmax as its log, the VJPs through the explicit Jacobians
// J_jk = y_j (delta_jk - y_k) and delta_jk - softmax_k. Tolerance 1e-12 (f64).
TEST(CpuKernelsTest, SoftmaxFamilyAgainstJacobians) {
  const double tol = 1e-12;
  const int64_t D0 = 2, D1 = 3, D2 = 4;
  std::vector<double> x = iota_values(D0 * D1 * D2, 0.3), g = iota_values(D0 * D1 * D2, -0.2);
  for (int axis : {1, 2}) {
    const int64_t n = axis == 1 ? D1 : D2, outer = axis == 1 ? D0 : D0 * D1,
                  inner = axis == 1 ? D2 : 1;
    std::vector<double> y(x.size()), ly(x.size()), dx(x.size()), ldx(x.size());
    softmax<double>(x.data(), y.data(), outer, n, inner);
    log_softmax<double>(x.data(), ly.data(), outer, n, inner);
    softmax_grad<double>(g.data(), y.data(), dx.data(), outer, n, inner);
    log_softmax_grad<double>(g.data(), ly.data(), ldx.data(), outer, n, inner);
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        auto at = [&](int64_t k) { return (o * n + k) * inner + i; };
        std::vector<double> p(n);
        for (int64_t k = 0; k < n; k++) {
          double denom = 0;
          for (int64_t j = 0; j < n; j++) denom += std::exp(x[at(j)] - x[at(k)]);
          p[k] = 1.0 / denom;
          EXPECT_NEAR(y[at(k)], p[k], tol) << "softmax axis " << axis << " k " << k;
          EXPECT_NEAR(ly[at(k)], std::log(p[k]), tol) << "log_softmax axis " << axis;
        }
        for (int64_t k = 0; k < n; k++) {
          double want = 0, lwant = 0;
          for (int64_t j = 0; j < n; j++) {
            want += g[at(j)] * p[j] * ((j == k ? 1.0 : 0.0) - p[k]);
            lwant += g[at(j)] * ((j == k ? 1.0 : 0.0) - p[k]);
          }
          EXPECT_NEAR(dx[at(k)], want, tol) << "softmax_grad axis " << axis << " k " << k;
          EXPECT_NEAR(ldx[at(k)], lwant, tol) << "log_softmax_grad axis " << axis;
        }
      }
  }
  // Large inputs do not overflow (the max shift); a NaN makes its row NaN only.
  std::vector<double> big = {1000, 1001, std::nan(""), 0}, out(4);
  softmax<double>(big.data(), out.data(), 2, 2, 1);
  EXPECT_NEAR(out[0], 1 / (1 + std::exp(1.0)), tol);
  EXPECT_NEAR(out[1], 1 / (1 + std::exp(-1.0)), tol);
  EXPECT_TRUE(std::isnan(out[2]) && std::isnan(out[3]));
}

// layer_norm over the last axis with and without weight / bias, against mean and
// biased variance computed here in long double; layer_norm_grad against the explicit
// Jacobian dxhat_j/dx_k = rstd (delta_jk - 1/d - xhat_j xhat_k / d), its dweight and
// dbias against column sums of g * xhat and g accumulated here. Tolerance 1e-12.
TEST(CpuKernelsTest, LayerNormAndItsGradient) {
  const double tol = 1e-12, eps = 1e-5;
  const int64_t rows = 3, d = 5;
  std::vector<double> x = iota_values(rows * d, 0.7), g = iota_values(rows * d, 0.4);
  std::vector<double> w = {0.5, -1.0, 2.0, 1.5, 0.25}, b = {0.1, 0.2, -0.3, 0.0, 1.0};
  for (bool affine : {false, true}) {
    std::vector<double> y(x.size()), dx(x.size()), dw(d, 7.0), db(d, 7.0);
    std::vector<long double> want_dw(d, 0), want_db(d, 0);
    layer_norm<double>(x.data(), affine ? w.data() : nullptr, affine ? b.data() : nullptr,
                       nullptr, y.data(), nullptr, rows, d, eps);
    layer_norm_grad<double>(g.data(), x.data(), affine ? w.data() : nullptr, nullptr,
                            dx.data(), affine ? dw.data() : nullptr,
                            affine ? db.data() : nullptr, rows, d, eps);
    for (int64_t r = 0; r < rows; r++) {
      long double mean = 0, var = 0;
      for (int64_t k = 0; k < d; k++) mean += x[r * d + k];
      mean /= d;
      for (int64_t k = 0; k < d; k++) var += (x[r * d + k] - mean) * (x[r * d + k] - mean);
      var /= d;
      const double rstd = double(1 / std::sqrt(var + eps));
      std::vector<double> xhat(d);
      for (int64_t k = 0; k < d; k++) {
        xhat[k] = double((x[r * d + k] - mean) * rstd);
        const double want = affine ? xhat[k] * w[k] + b[k] : xhat[k];
        EXPECT_NEAR(y[r * d + k], want, tol) << "layer_norm row " << r << " k " << k;
        want_dw[k] += g[r * d + k] * (long double)xhat[k];
        want_db[k] += g[r * d + k];
      }
      for (int64_t k = 0; k < d; k++) {
        double want = 0;
        for (int64_t j = 0; j < d; j++)
          want += g[r * d + j] * (affine ? w[j] : 1.0) * rstd *
                  ((j == k ? 1.0 : 0.0) - 1.0 / d - xhat[j] * xhat[k] / d);
        EXPECT_NEAR(dx[r * d + k], want, tol) << "layer_norm_grad row " << r << " k " << k;
      }
    }
    for (int64_t k = 0; k < d; k++) {
      if (!affine) {  // absent gradients are not written
        EXPECT_EQ(dw[k], 7.0);
        EXPECT_EQ(db[k], 7.0);
        continue;
      }
      EXPECT_NEAR(dw[k], double(want_dw[k]), tol) << "layer_norm_grad dweight " << k;
      EXPECT_NEAR(db[k], double(want_db[k]), tol) << "layer_norm_grad dbias " << k;
    }
  }
}

// layer_norm_grad's addend (vouch-fold-layer-norm-grad-sum): dx is addend + the dx
// without it, dx rounded to T first: in float, bitwise the separate add of the two
// float results, which the fold replaces; dweight and dbias are unchanged.
TEST(CpuKernelsTest, LayerNormGradAddsItsAddendAfterRounding) {
  const int64_t rows = 4, d = 7;
  std::vector<float> x(rows * d), g(rows * d), a(rows * d), w(d);
  for (int64_t i = 0; i < rows * d; i++) {
    x[i] = float(std::sin(0.37 * double(i)) * 3);
    g[i] = float(std::cos(0.91 * double(i)));
    a[i] = float(1e3 * std::sin(1.7 * double(i)));  // large: dx's rounding shows in the sum
  }
  for (int64_t k = 0; k < d; k++) w[k] = 0.5f + 0.25f * float(k);
  std::vector<float> plain(rows * d), plus(rows * d), dw(d), dw_plus(d), db(d), db_plus(d);
  layer_norm_grad<float>(g.data(), x.data(), w.data(), nullptr, plain.data(), dw.data(),
                         db.data(), rows, d, 1e-5f);
  layer_norm_grad<float>(g.data(), x.data(), w.data(), a.data(), plus.data(), dw_plus.data(),
                         db_plus.data(), rows, d, 1e-5f);
  for (int64_t i = 0; i < rows * d; i++) {
    const float want = a[i] + plain[i];
    EXPECT_EQ(std::memcmp(&plus[i], &want, sizeof(float)), 0)
        << "element " << i << ": " << plus[i] << " vs " << want;
  }
  EXPECT_EQ(dw, dw_plus);
  EXPECT_EQ(db, db_plus);
}

// layer_norm's addend (vouch-fold-layer-norm-add): the sum written is x + addend
// rounded to float, and y is layer_norm of that sum: in float, bitwise the separate
// add and layer_norm the fold replaces.
TEST(CpuKernelsTest, LayerNormWithAnAddendIsTheAddThenTheNorm) {
  const int64_t rows = 4, d = 9;
  std::vector<float> x(rows * d), a(rows * d), w(d), b(d);
  for (int64_t i = 0; i < rows * d; i++) {
    x[i] = float(1e3 * std::sin(0.37 * double(i)));  // large: the sum's rounding shows
    a[i] = float(std::cos(0.91 * double(i)) / 3);
  }
  for (int64_t k = 0; k < d; k++) {
    w[k] = 0.5f + 0.25f * float(k);
    b[k] = 0.1f * float(k) - 0.3f;
  }
  std::vector<float> added(rows * d), plain(rows * d), sum(rows * d, -7), y(rows * d);
  for (int64_t i = 0; i < rows * d; i++) added[i] = x[i] + a[i];
  layer_norm<float>(added.data(), w.data(), b.data(), nullptr, plain.data(), nullptr, rows,
                    d, 1e-5f);
  layer_norm<float>(x.data(), w.data(), b.data(), a.data(), y.data(), sum.data(), rows, d,
                    1e-5f);
  EXPECT_EQ(std::memcmp(sum.data(), added.data(), sizeof(float) * sum.size()), 0);
  for (int64_t i = 0; i < rows * d; i++)
    EXPECT_EQ(std::memcmp(&y[i], &plain[i], sizeof(float)), 0)
        << "element " << i << ": " << y[i] << " vs " << plain[i];
}

// batch_norm over [n, C, spatial] in a training step and in evaluation, against the
// statistics computed here in long double (the running update as torch writes it),
// and batch_norm_grad against the explicit Jacobian within a channel, dx_k = Σ_j g_j ·
// w · rstd · (δ_jk - 1/M - x̂_j x̂_k / M), its dweight and dbias against sums here.
TEST(CpuKernelsTest, BatchNormTrainingEvaluationAndItsGradient) {
  const double tol = 1e-12, eps = 1e-5, momentum = 0.3;
  const int64_t n = 3, C = 2, S = 4, M = n * S;
  std::vector<double> x = iota_values(n * C * S, 0.7), g = iota_values(n * C * S, 0.4);
  for (size_t i = 0; i < x.size(); i++) x[i] += 0.01 * double(i);  // no ties
  const std::vector<double> w = {0.5, -2.0}, b = {0.1, 1.5};
  const std::vector<double> rm0 = {0.5, -1.0}, rv0 = {2.0, 0.5};
  auto at = [&](int64_t i, int64_t c, int64_t k) { return (i * C + c) * S + k; };
  for (bool affine : {false, true}) {
    std::vector<double> y(x.size()), mean(C), rstd(C), rm = rm0, rv = rv0;
    const long long training[4] = {0, 0, 1, 0}, evaluation[4] = {0, 0, 0, 0};
    batch_norm<double>(x.data(), affine ? w.data() : nullptr, affine ? b.data() : nullptr,
                       rm.data(), rv.data(), y.data(), mean.data(), rstd.data(), n, C, S, eps,
                       momentum, training);
    std::vector<double> dx(x.size()), dw(C, 7.0), db(C, 7.0);
    batch_norm_grad<double>(g.data(), x.data(), mean.data(), rstd.data(),
                            affine ? w.data() : nullptr, dx.data(),
                            affine ? dw.data() : nullptr, affine ? db.data() : nullptr, n, C, S);
    for (int64_t c = 0; c < C; c++) {
      long double mu = 0, sq = 0;
      for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < S; k++) mu += x[at(i, c, k)];
      mu /= M;
      for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < S; k++) sq += (x[at(i, c, k)] - mu) * (x[at(i, c, k)] - mu);
      const double r = double(1 / std::sqrt(sq / M + eps));
      EXPECT_NEAR(mean[c], double(mu), tol) << "channel " << c;
      EXPECT_NEAR(rstd[c], r, tol) << "channel " << c;
      EXPECT_NEAR(rm[c], double(0.7L * rm0[c] + 0.3L * mu), tol) << "running_mean " << c;
      EXPECT_NEAR(rv[c], double(0.7L * rv0[c] + 0.3L * sq / (M - 1)), tol)
          << "running_var (unbiased) " << c;
      const double wc = affine ? w[c] : 1.0, bc = affine ? b[c] : 0.0;
      std::vector<double> xhat;  // the channel's, in (i, k) order
      long double want_dw = 0, want_db = 0;
      for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < S; k++) {
          xhat.push_back(double((x[at(i, c, k)] - mu) * r));
          EXPECT_NEAR(y[at(i, c, k)], xhat.back() * wc + bc, tol) << "y " << at(i, c, k);
          want_dw += g[at(i, c, k)] * (long double)xhat.back();
          want_db += g[at(i, c, k)];
        }
      for (int64_t kk = 0; kk < M; kk++) {
        double want = 0;
        for (int64_t j = 0; j < M; j++)
          want += g[at(j / S, c, j % S)] * wc * r *
                  ((j == kk ? 1.0 : 0.0) - 1.0 / M - xhat[j] * xhat[kk] / M);
        EXPECT_NEAR(dx[at(kk / S, c, kk % S)], want, tol) << "dx channel " << c << " " << kk;
      }
      if (affine) {
        EXPECT_NEAR(dw[c], double(want_dw), tol) << "dweight " << c;
        EXPECT_NEAR(db[c], double(want_db), tol) << "dbias " << c;
      } else {  // absent gradients are not written
        EXPECT_EQ(dw[c], 7.0);
        EXPECT_EQ(db[c], 7.0);
      }
    }

    // Evaluation: the running statistics normalise, and stay as they are.
    std::vector<double> ye(x.size()), rm_e = rm0, rv_e = rv0;
    batch_norm<double>(x.data(), affine ? w.data() : nullptr, affine ? b.data() : nullptr,
                       rm_e.data(), rv_e.data(), ye.data(), mean.data(), rstd.data(), n, C, S,
                       eps, momentum, evaluation);
    EXPECT_EQ(rm_e, rm0);
    EXPECT_EQ(rv_e, rv0);
    for (int64_t c = 0; c < C; c++) {
      EXPECT_EQ(mean[c], rm0[c]);
      EXPECT_NEAR(rstd[c], 1 / std::sqrt(rv0[c] + eps), tol);
      for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < S; k++)
          EXPECT_NEAR(ye[at(i, c, k)],
                      (x[at(i, c, k)] - rm0[c]) / std::sqrt(rv0[c] + eps) *
                              (affine ? w[c] : 1.0) + (affine ? b[c] : 0.0),
                      tol);
    }
  }
}

// An f32 run's statistics are summed in double: the mean of 10,000 copies of 0.1f is
// 0.1f exactly (a float left fold drifts by about 1e-5 at that length), its variance 0.
TEST(CpuKernelsTest, BatchNormF32StatisticsInDouble) {
  const int64_t n = 10000;
  std::vector<float> x(n, 0.1f), y(n);
  float rm = 0, rv = 1, mean = 0, rstd = 0;
  const long long training[4] = {0, 0, 1, 0};
  batch_norm<float>(x.data(), nullptr, nullptr, &rm, &rv, y.data(), &mean, &rstd, n, 1, 1,
                    1e-5, 0.1, training);
  float folded = 0;
  for (float v : x) folded += v;
  ASSERT_NE(folded / float(n), 0.1f);  // what a float fold would give
  EXPECT_EQ(mean, 0.1f);
  EXPECT_EQ(rstd, float(1 / std::sqrt(1e-5)));
  EXPECT_EQ(y[0], 0.0f);
}

// cross_entropy<T> and cross_entropy_grad<T> against long-double arithmetic written
// without the max shift (small logits: no overflow): an ignored row counts in neither,
// a label out of range makes the loss and its row NaN, every row ignored gives NaN.
TEST(CpuKernelsTest, CrossEntropyAndItsGradient) {
  const int64_t rows = 4, classes = 3, ignore = -100;
  const std::vector<double> z = {0.5, -1.0, 2.0, 0.1, 0.2, 0.3, -2.0, 1.5, 0.0, 1.0, 1.0, 1.0};
  const std::vector<int32_t> labels = {2, 0, -100, 1};
  long double want = 0;
  std::vector<long double> softmax(z.size());
  for (int64_t r = 0; r < rows; r++) {
    long double sum = 0;
    for (int64_t c = 0; c < classes; c++) sum += std::exp((long double)z[r * classes + c]);
    for (int64_t c = 0; c < classes; c++)
      softmax[r * classes + c] = std::exp((long double)z[r * classes + c]) / sum;
    if (labels[r] != ignore) want += std::log(sum) - z[r * classes + labels[r]];
  }
  want /= 3;  // three kept rows
  EXPECT_NEAR(cross_entropy<double>(rows, classes, z.data(), labels.data(), ignore, classes),
              double(want), 1e-15);
  std::vector<double> dz(z.size(), -7.0);
  cross_entropy_grad<double>(rows, classes, z.data(), labels.data(), 0.5, ignore, dz.data(),
                             classes);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < classes; c++) {
      const long double expected =
          labels[r] == ignore
              ? 0.0L
              : 0.5L * (softmax[r * classes + c] - (c == labels[r] ? 1 : 0)) / 3;
      EXPECT_NEAR(dz[r * classes + c], double(expected), 1e-16) << "row " << r << " class " << c;
    }
  const std::vector<int32_t> bad = {2, 3, -100, 1};  // 3 is not a class of 3
  EXPECT_TRUE(
      std::isnan(cross_entropy<double>(rows, classes, z.data(), bad.data(), ignore, classes)));
  cross_entropy_grad<double>(rows, classes, z.data(), bad.data(), 1.0, ignore, dz.data(),
                             classes);
  for (int64_t c = 0; c < classes; c++) EXPECT_TRUE(std::isnan(dz[classes + c]));
  EXPECT_FALSE(std::isnan(dz[0]));
  const std::vector<int32_t> none = {-100, -100, -100, -100};
  EXPECT_TRUE(std::isnan(cross_entropy<float>(rows, classes,
                                              std::vector<float>(z.begin(), z.end()).data(),
                                              none.data(), ignore, classes)));
}

// Rows at a pitch past the classes (cross_entropy's `classes`, vouch-pad-classes):
// the padding is never read (NaN there would make the loss and rows NaN) and dlogits
// writes it 0; the counted entries give the dense rows' loss and gradient bit for
// bit (the same sums in the same order).
TEST(CpuKernelsTest, CrossEntropyOverPaddedRowsIsTheDenseRowsOne) {
  const int64_t rows = 4, classes = 3, pitch = 5, ignore = -100;
  const std::vector<double> dense = {0.5, -1.0, 2.0, 0.1, 0.2, 0.3, -2.0, 1.5, 0.0, 1.0, 1.0, 1.0};
  std::vector<double> padded(size_t(rows * pitch), std::nan(""));
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < classes; c++) padded[r * pitch + c] = dense[r * classes + c];
  const std::vector<int32_t> labels = {2, 0, -100, 1};
  const double loss = cross_entropy<double>(rows, classes, dense.data(), labels.data(), ignore,
                                            classes);
  EXPECT_EQ(cross_entropy<double>(rows, classes, padded.data(), labels.data(), ignore, pitch),
            loss);
  std::vector<double> want(dense.size()), got(padded.size(), -7.0);
  cross_entropy_grad<double>(rows, classes, dense.data(), labels.data(), 0.5, ignore,
                             want.data(), classes);
  cross_entropy_grad<double>(rows, classes, padded.data(), labels.data(), 0.5, ignore,
                             got.data(), pitch);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < pitch; c++)
      EXPECT_EQ(got[r * pitch + c], c < classes ? want[r * classes + c] : 0.0)
          << "row " << r << " entry " << c;
  // In place (dlogits over the logits, as the storage plan may run it).
  cross_entropy_grad<double>(rows, classes, padded.data(), labels.data(), 0.5, ignore,
                             padded.data(), pitch);
  EXPECT_EQ(padded, got);
}

// --- Random ops: runtime/cuda/kernels/counter_rng.h's generator -------------------
// u53 of elements 0..7 for (seed, ordinal, step), computed by an independent
// implementation in Python with numpy uint64 arithmetic (tests/golden/
// torch_reference.py's rng_u53, checked again with Python integers):
//   rng_u53(seed, ordinal, step, 8)
struct RngCase {
  unsigned long long seed;
  long long ordinal, step;
  unsigned long long u53[8];
};
const RngCase kRngCases[] = {
    {0ull, 0, 0, {1167743916529920ull, 3713873072766851ull, 2797602792993077ull, 8359656958543773ull, 2052498331181892ull, 7442233255932698ull, 4215880116525217ull, 2034384606329945ull}},
    {2026ull, 3, 1, {6638263472111255ull, 5347925480348053ull, 8052503837841261ull, 7023567332694457ull, 3501816909977186ull, 6147428197505870ull, 6782030451878701ull, 3659103975828801ull}},
    {18446744073709551615ull, 1, 123456789, {1650392846048206ull, 1831176505448415ull, 224349921745363ull, 4671460499428715ull, 6661832400825418ull, 1587360096733178ull, 3342946157375946ull, 2507481774844394ull}},
    {11ull, 2, 199, {4334068609332600ull, 3927036582360062ull, 5898486689931594ull, 3356371375729085ull, 6394743661885876ull, 4652637151381132ull, 3515719973849997ull, 2308256583207580ull}},
};

TEST(CpuKernelsTest, RandUniformEqualsThePythonGenerator) {
  for (const RngCase& c : kRngCases) {
    const long long ctx[4] = {c.step, 0, 0, (long long)c.seed};
    std::vector<double> y(8);
    std::vector<float> yf(8);
    rand_uniform<double>(y.data(), 8, ctx, c.ordinal);
    rand_uniform<float>(yf.data(), 8, ctx, c.ordinal);
    for (int i = 0; i < 8; i++) {
      EXPECT_EQ(y[i], std::ldexp(double(c.u53[i]), -53)) << "seed " << c.seed << " i " << i;
      EXPECT_EQ(yf[i], float(std::ldexp(double(c.u53[i]), -53)));
    }
  }
}

TEST(CpuKernelsTest, BernoulliMaskAndDropoutDrawThePythonMasks) {
  for (const RngCase& c : kRngCases)
    for (double p : {0.0, 0.3, 0.5, 0.9}) {
      const unsigned long long threshold = (unsigned long long)(p * 9007199254740992.0);
      long long ctx[4] = {c.step, 0, 1, (long long)c.seed};
      std::vector<double> mask(8), x(8), y(8);
      std::vector<float> maskf(8), xf(8), yf(8);
      for (int i = 0; i < 8; i++) x[i] = xf[i] = float(0.25 * i - 0.8);
      bernoulli_mask<double>(mask.data(), 8, p, ctx, c.ordinal);
      bernoulli_mask<float>(maskf.data(), 8, p, ctx, c.ordinal);
      dropout<double>(x.data(), y.data(), 8, p, ctx, c.ordinal);
      dropout<float>(xf.data(), yf.data(), 8, p, ctx, c.ordinal);
      for (int i = 0; i < 8; i++) {
        const bool drawn = c.u53[i] < threshold;
        EXPECT_EQ(mask[i], drawn ? 1.0 : 0.0) << "p " << p << " i " << i;
        EXPECT_EQ(maskf[i], drawn ? 1.0f : 0.0f);
        // f32 and f64 drop exactly the same elements (an integer decision).
        EXPECT_EQ(y[i], drawn ? 0.0 : x[i] * (1.0 / (1.0 - p))) << "p " << p << " i " << i;
        EXPECT_EQ(yf[i], drawn ? 0.0f : xf[i] * float(1.0 / (1.0 - p)));
      }
      // Not a training step: the identity, whatever the draws.
      ctx[2] = 0;
      dropout<double>(x.data(), y.data(), 8, p, ctx, c.ordinal);
      EXPECT_EQ(y, x);
    }
}

// The mask rate over many elements is p (binomial: 5 standard deviations), and
// the masks of different steps, ordinals and seeds differ.
TEST(CpuKernelsTest, BernoulliMaskRateAndIndependence) {
  const int64_t n = 200000;
  std::vector<double> a(n), b(n);
  for (double p : {0.1, 0.5, 0.8}) {
    const long long ctx[4] = {42, 0, 1, 7};
    bernoulli_mask<double>(a.data(), n, p, ctx, 0);
    double ones = 0;
    for (double v : a) ones += v;
    EXPECT_NEAR(ones / double(n), p, 5 * std::sqrt(p * (1 - p) / double(n))) << "p " << p;
  }
  const long long base[4] = {3, 0, 1, 7}, step[4] = {4, 0, 1, 7}, seed[4] = {3, 0, 1, 8};
  bernoulli_mask<double>(a.data(), n, 0.5, base, 0);
  for (const long long* other : {step, seed, base}) {
    bernoulli_mask<double>(b.data(), n, 0.5, other, other == base ? 1 : 0);
    int64_t same = 0;
    for (int64_t i = 0; i < n; i++) same += a[i] == b[i];
    EXPECT_NEAR(double(same) / double(n), 0.5, 0.01);
  }
}

// The causal mask written out by hand (torch.ones(3, 4).tril()): row i keeps
// columns 0..i; a non-square mask keeps the lower-left triangle.
TEST(CpuKernelsTest, CausalMaskIsTheLowerTriangle) {
  std::vector<int32_t> mask(12, -1);
  causal_mask<int32_t>(mask.data(), 3, 4);
  const std::vector<int32_t> want = {1, 0, 0, 0,
                                     1, 1, 0, 0,
                                     1, 1, 1, 0};
  EXPECT_EQ(mask, want);
  std::vector<int32_t> tall(6, -1);
  causal_mask<int32_t>(tall.data(), 3, 2);
  EXPECT_EQ(tall, (std::vector<int32_t>{1, 0, 1, 1, 1, 1}));
}

// ------------------------------------------------------------------------ pooling
// runtime/cpu_pool.h against loops written here from docs/language.md: each window
// walked over its kernel offsets in row-major order, the padded coordinates skipped.

// A pooling geometry, 3-D (leading unit axes for 1-D and 2-D ones), and the input
// positions of window (o0, o1, o2) of a plane in row-major order of its offsets.
struct RefPool {
  PoolShape s;
  int64_t in_plane() const { return s.in[0] * s.in[1] * s.in[2]; }
  int64_t out_plane() const { return s.out[0] * s.out[1] * s.out[2]; }
  std::vector<int64_t> positions(int64_t w) const {
    const int64_t o[3] = {w / (s.out[1] * s.out[2]), (w / s.out[2]) % s.out[1], w % s.out[2]};
    std::vector<int64_t> at;
    for (int64_t k0 = 0; k0 < s.kernel[0]; k0++)
      for (int64_t k1 = 0; k1 < s.kernel[1]; k1++)
        for (int64_t k2 = 0; k2 < s.kernel[2]; k2++) {
          const int64_t c[3] = {o[0] * s.stride[0] - s.pad[0] + k0,
                                o[1] * s.stride[1] - s.pad[1] + k1,
                                o[2] * s.stride[2] - s.pad[2] + k2};
          bool inside = true;
          for (int a = 0; a < 3; a++) inside = inside && c[a] >= 0 && c[a] < s.in[a];
          if (inside) at.push_back((c[0] * s.in[1] + c[1]) * s.in[2] + c[2]);
        }
    return at;
  }
  // The first NaN, else the first maximum (a later equal value never replaces it).
  template <class T>
  int64_t winner(const T* plane, int64_t w) const {
    std::vector<int64_t> at = positions(w);
    for (int64_t p : at)
      if (std::isnan(plane[p])) return p;
    int64_t best = at[0];
    for (int64_t p : at)
      if (plane[p] > plane[best]) best = p;
    return best;
  }
};

// Window counts of a 3-D geometry from extents, kernel, stride and padding.
RefPool ref_pool(int64_t planes, std::array<int64_t, 3> in, std::array<int64_t, 3> k,
                 std::array<int64_t, 3> st, std::array<int64_t, 3> pad) {
  RefPool r;
  r.s.planes = planes;
  for (int a = 0; a < 3; a++) {
    r.s.in[a] = in[a], r.s.kernel[a] = k[a], r.s.stride[a] = st[a], r.s.pad[a] = pad[a];
    r.s.out[a] = (in[a] + 2 * pad[a] - k[a]) / st[a] + 1;
  }
  return r;
}

// The geometries the pooling tests run: 1-D overlapping and padded, 2-D with stride
// != kernel, 3-D with padding on some axes, and windows larger than their stride.
std::vector<RefPool> pool_cases() {
  return {ref_pool(6, {1, 1, 9}, {1, 1, 3}, {1, 1, 2}, {0, 0, 1}),
          ref_pool(3, {1, 5, 6}, {1, 3, 2}, {1, 2, 1}, {0, 1, 1}),
          ref_pool(2, {4, 3, 5}, {2, 3, 2}, {1, 2, 3}, {1, 1, 0})};
}

// max_pool on values with ties (few distinct values), a window whose positions are all
// negative beside padding, and a NaN; the `values` form reads another tensor at the
// same positions.
TEST(CpuKernelsTest, MaxPoolPicksTheFirstMaximumAndNeverPadding) {
  for (const RefPool& r : pool_cases()) {
    const int64_t n = r.s.planes * r.in_plane(), m = r.s.planes * r.out_plane();
    std::vector<double> x(n), other(n);
    for (int64_t i = 0; i < n; i++) {
      x[i] = double((i * 5) % 4) - 2.5;  // -2.5 .. 0.5: ties everywhere, many negative
      other[i] = 100.0 + double(i);      // tells positions apart
    }
    x[n / 2] = NAN;
    std::vector<double> y(m, -7), picked(m, -7);
    max_pool<double>(x.data(), x.data(), y.data(), r.s);
    max_pool<double>(x.data(), other.data(), picked.data(), r.s);
    for (int64_t p = 0; p < r.s.planes; p++)
      for (int64_t w = 0; w < r.out_plane(); w++) {
        const int64_t at = p * r.in_plane() + r.winner(x.data() + p * r.in_plane(), w);
        const double got = y[p * r.out_plane() + w];
        EXPECT_TRUE(got == x[at] || (std::isnan(got) && std::isnan(x[at]))) << w;
        EXPECT_EQ(picked[p * r.out_plane() + w], other[at]) << "plane " << p << " window " << w;
      }
  }
}

// max_pool_grad against a loop per input element over every window in ascending order,
// adding dy where the window's winner is that element, bit for bit in float: dy
// alternates 1e8, 1, -1e8, ..., which round differently in any other order.
TEST(CpuKernelsTest, MaxPoolGradSumsEachElementsWindowsInAscendingOrder) {
  for (const RefPool& r : pool_cases()) {
    const int64_t n = r.s.planes * r.in_plane(), m = r.s.planes * r.out_plane();
    std::vector<float> x(n), dy(m), dx(n, -7);
    for (int64_t i = 0; i < n; i++) x[i] = float((i * 3) % 5);  // ties: each window's first wins
    const float cycle[3] = {1e8f, 1.f, -1e8f};
    for (int64_t w = 0; w < m; w++) dy[w] = cycle[w % 3];
    max_pool_grad<float>(dy.data(), x.data(), dx.data(), r.s);
    int64_t winners = 0;
    for (int64_t p = 0; p < r.s.planes; p++)
      for (int64_t i = 0; i < r.in_plane(); i++) {
        float want = 0;
        for (int64_t w = 0; w < r.out_plane(); w++)
          if (r.winner(x.data() + p * r.in_plane(), w) == i) {
            want = want + dy[p * r.out_plane() + w];
            winners++;
          }
        EXPECT_EQ(dx[p * r.in_plane() + i], want) << "plane " << p << " element " << i;
      }
    EXPECT_EQ(winners, m);  // every window's gradient lands exactly once
  }
}

// avg_pool with and without the padding in the divisor, and its gradient in ascending
// window order, bit for bit in float (the loops here fold in the documented order).
TEST(CpuKernelsTest, AvgPoolBothDivisorsAndItsGradient) {
  for (const RefPool& r : pool_cases())
    for (bool include : {true, false}) {
      const int64_t n = r.s.planes * r.in_plane(), m = r.s.planes * r.out_plane();
      std::vector<float> x(n), dy(m), y(m, -7), dx(n, -7);
      for (int64_t i = 0; i < n; i++) x[i] = float((i * 7) % 11) * 0.37f - 1.f;
      const float cycle[3] = {1e8f, 3.f, -1e8f};
      for (int64_t w = 0; w < m; w++) dy[w] = cycle[w % 3];
      avg_pool<float>(x.data(), y.data(), r.s, include);
      avg_pool_grad<float>(dy.data(), dx.data(), r.s, include);
      const int64_t volume = r.s.kernel[0] * r.s.kernel[1] * r.s.kernel[2];
      std::vector<float> want_dx(n, 0.f);
      for (int64_t p = 0; p < r.s.planes; p++)
        for (int64_t w = 0; w < r.out_plane(); w++) {
          const std::vector<int64_t> at = r.positions(w);
          const float divisor = float(include ? volume : int64_t(at.size()));
          float sum = 0;
          for (int64_t i : at) sum = sum + x[p * r.in_plane() + i];
          EXPECT_EQ(y[p * r.out_plane() + w], sum / divisor) << w << (include ? " with" : " without");
          for (int64_t i : at)
            want_dx[p * r.in_plane() + i] = want_dx[p * r.in_plane() + i] + dy[p * r.out_plane() + w] / divisor;
        }
      EXPECT_EQ(dx, want_dx) << (include ? "count_include_pad" : "positions only");
    }
}

// smooth_max_pool against (1/beta)·log Σ exp(beta·x) over each window in double (no
// max-shift needed at these magnitudes), beta of either sign; large inputs that overflow
// exp without the shift; its gradient against Σ_w dy[w]·exp(beta·(x - y[w])).
TEST(CpuKernelsTest, SmoothMaxPoolAndItsGradient) {
  for (const RefPool& r : pool_cases())
    for (double beta : {2.5, -1.0}) {
      const int64_t n = r.s.planes * r.in_plane(), m = r.s.planes * r.out_plane();
      std::vector<double> x(n), dy(m), y(m, -7), dx(n, -7);
      for (int64_t i = 0; i < n; i++) x[i] = std::sin(double(i) * 1.3);
      for (int64_t w = 0; w < m; w++) dy[w] = std::cos(double(w) * 0.7);
      smooth_max_pool<double>(x.data(), y.data(), r.s, beta);
      smooth_max_pool_grad<double>(dy.data(), x.data(), y.data(), dx.data(), r.s, beta);
      std::vector<double> want_dx(n, 0.0);
      for (int64_t p = 0; p < r.s.planes; p++)
        for (int64_t w = 0; w < r.out_plane(); w++) {
          double sum = 0;
          for (int64_t i : r.positions(w)) sum += std::exp(beta * x[p * r.in_plane() + i]);
          const double want = std::log(sum) / beta;
          EXPECT_NEAR(y[p * r.out_plane() + w], want, 1e-14) << w;
          for (int64_t i : r.positions(w))
            want_dx[p * r.in_plane() + i] += dy[p * r.out_plane() + w] *
                                             std::exp(beta * (x[p * r.in_plane() + i] - want));
        }
      for (int64_t i = 0; i < n; i++) EXPECT_NEAR(dx[i], want_dx[i], 1e-13) << i;
    }
  // Inputs near 1000 (exp overflows double without the shift): a window of {1000, 999}
  // is 1000 + log(1 + e^-1); an infinite input gives inf, a NaN NaN.
  const RefPool r = ref_pool(1, {1, 1, 4}, {1, 1, 2}, {1, 1, 2}, {0, 0, 0});
  std::vector<double> x = {1000.0, 999.0, INFINITY, NAN}, y(2);
  smooth_max_pool<double>(x.data(), y.data(), r.s, 1.0);
  EXPECT_NEAR(y[0], 1000.0 + std::log1p(std::exp(-1.0)), 1e-12);
  EXPECT_TRUE(std::isnan(y[1]));
  x[3] = 5.0;
  smooth_max_pool<double>(x.data(), y.data(), r.s, 1.0);
  EXPECT_EQ(y[1], INFINITY);
}

}  // namespace
}  // namespace vouch::rt
