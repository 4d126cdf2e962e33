//===- gradcheck_test.cpp - every VJP against finite differences ---------===//
//
// For every op with a VJP rule: a tiny model whose loss is Σ op(params) ⊙ r
// (r a fixed random target), differentiated by vouch-autodiff and run by the
// reference interpreter, against central finite differences of the same
// interpreter in float64. Tolerances are declared per case and printed on
// failure. A differentiable op without a case here fails the coverage test.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/VouchOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Interpreter.h"
#include "passes/Passes.h"

using namespace mlir;

namespace {

struct Param {
  std::string name;
  std::vector<int64_t> shape;
};

struct GradCase {
  std::string name;  ///< the op under test (dialect mnemonic)
  std::vector<Param> params;
  std::string body;  ///< ops computing %out from the params
  std::vector<int64_t> outShape;
  double atol, rtol; ///< declared tolerance for this case
  /// Fixed feeds of targets the body declares (integer labels, say).
  std::map<std::string, vouch::HostTensor> fixed = {};
  /// Run as a training step (RandomContext::training): batch_norm's
  /// statistics are then the batch's, as in every step a backward follows.
  bool training = false;
};

std::string tensorType(const std::vector<int64_t> &shape) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + "f64>";
}

/// Wraps a case into a model: loss = Σ out ⊙ r.
std::string modelText(const GradCase &c) {
  std::string out = tensorType(c.outShape);
  std::ostringstream m;
  m << "vouch.model \"" << c.name << "\" attributes {batch = 1 : i64} {\n";
  m << "  %r = vouch.target \"r\" : " << out << "\n";
  for (const Param &p : c.params)
    m << "  %" << p.name << " = vouch.param \"" << p.name
      << "\" = \"zeros\" : " << tensorType(p.shape) << "\n";
  m << c.body << "\n";
  m << "  %m = vouch.mul %out, %r : (" << out << ", " << out << ") -> " << out
    << "\n";
  if (c.outShape.empty()) {
    m << "  vouch.loss %m : tensor<f64>\n}\n";
    return m.str();
  }
  m << "  %l = vouch.reduce_sum %m axes [";
  for (size_t i = 0; i < c.outShape.size(); ++i)
    m << (i ? ", " : "") << i;
  m << "] : (" << out << ") -> tensor<f64>\n  vouch.loss %l : tensor<f64>\n}\n";
  return m.str();
}

int64_t count(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Values in ±[0.1, 1]: away from the kinks of relu and step, where finite
/// differences would straddle a discontinuity.
vouch::HostTensor randomTensor(const std::vector<int64_t> &shape,
                               std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> magnitude(0.1, 1.0);
  vouch::HostTensor t{shape, {}};
  for (int64_t i = 0; i < count(shape); ++i)
    t.data.push_back((rng() & 1 ? 1 : -1) * magnitude(rng));
  return t;
}

const std::vector<GradCase> &cases() {
  static const std::vector<GradCase> all = {
      {"add", {{"a", {2, 3}}, {"b", {2, 3}}},
       "  %out = vouch.add %a, %b : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>",
       {2, 3}, 1e-8, 1e-7},
      {"sub", {{"a", {2, 3}}, {"b", {2, 3}}},
       "  %out = vouch.sub %a, %b : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>",
       {2, 3}, 1e-8, 1e-7},
      {"mul", {{"a", {2, 3}}, {"b", {2, 3}}},
       "  %out = vouch.mul %a, %b : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>",
       {2, 3}, 1e-8, 1e-7},
      {"scale", {{"a", {4}}},
       "  %out = vouch.scale %a by -2.5 : (tensor<4xf64>) -> tensor<4xf64>",
       {4}, 1e-8, 1e-7},
      {"relu", {{"a", {2, 4}}},
       "  %out = vouch.relu %a : (tensor<2x4xf64>) -> tensor<2x4xf64>",
       {2, 4}, 1e-8, 1e-7},
      // A pointwise result the backward pass reads, whose operand it reads
      // too: what vouch-autodiff may recompute (GradCheckRecompute).
      {"relu", {{"a", {2, 4}}, {"b", {2, 4}}},
       "  %h = vouch.relu %a : (tensor<2x4xf64>) -> tensor<2x4xf64>\n"
       "  %out = vouch.mul %h, %b : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>",
       {2, 4}, 1e-8, 1e-7},
      {"abs", {{"a", {2, 4}}, {"b", {2, 4}}},
       "  %h = vouch.abs %a : (tensor<2x4xf64>) -> tensor<2x4xf64>\n"
       "  %out = vouch.mul %b, %h : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>",
       {2, 4}, 1e-8, 1e-7},
      {"gelu", {{"a", {3, 4}}, {"w", {4, 2}}},
       "  %g = vouch.gelu %a approximate \"tanh\" : (tensor<3x4xf64>) -> tensor<3x4xf64>\n"
       "  %out = vouch.matmul %g, %w : (tensor<3x4xf64>, tensor<4x2xf64>) -> tensor<3x2xf64>",
       {3, 2}, 1e-8, 1e-7},
      {"tanh", {{"a", {2, 4}}},
       "  %out = vouch.tanh %a : (tensor<2x4xf64>) -> tensor<2x4xf64>",
       {2, 4}, 1e-8, 1e-7},
      {"exp", {{"a", {2, 3}}},
       "  %out = vouch.exp %a : (tensor<2x3xf64>) -> tensor<2x3xf64>",
       {2, 3}, 1e-8, 1e-7},
      {"div", {{"a", {2, 3}}, {"b", {2, 3}}},
       "  %out = vouch.div %a, %b : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>",
       {2, 3}, 1e-7, 1e-6},
      // Independent draws: no ties (where the gradient is split, not differentiable).
      {"maximum", {{"a", {2, 3}}, {"b", {2, 3}}},
       "  %out = vouch.maximum %a, %b : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>",
       {2, 3}, 1e-8, 1e-7},
      {"minimum", {{"a", {2, 3}}, {"b", {2, 3}}},
       "  %out = vouch.minimum %a, %b : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>",
       {2, 3}, 1e-8, 1e-7},
      {"abs", {{"a", {2, 4}}},
       "  %out = vouch.abs %a : (tensor<2x4xf64>) -> tensor<2x4xf64>",
       {2, 4}, 1e-8, 1e-7},
      // sqrt and log of a² (≥ 0.01: the params are in ±[0.1, 1]).
      {"sqrt", {{"a", {2, 3}}},
       "  %sq = vouch.mul %a, %a : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>\n"
       "  %out = vouch.sqrt %sq : (tensor<2x3xf64>) -> tensor<2x3xf64>",
       {2, 3}, 1e-7, 1e-6},
      {"log", {{"a", {2, 3}}},
       "  %sq = vouch.mul %a, %a : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>\n"
       "  %out = vouch.log %sq : (tensor<2x3xf64>) -> tensor<2x3xf64>",
       {2, 3}, 1e-6, 1e-6},
      {"sin", {{"a", {2, 3}}},
       "  %out = vouch.sin %a : (tensor<2x3xf64>) -> tensor<2x3xf64>",
       {2, 3}, 1e-8, 1e-7},
      {"cos", {{"a", {2, 3}}},
       "  %out = vouch.cos %a : (tensor<2x3xf64>) -> tensor<2x3xf64>",
       {2, 3}, 1e-8, 1e-7},
      {"sigmoid", {{"a", {2, 4}}},
       "  %out = vouch.sigmoid %a : (tensor<2x4xf64>) -> tensor<2x4xf64>",
       {2, 4}, 1e-8, 1e-7},
      {"silu", {{"a", {2, 4}}},
       "  %out = vouch.silu %a : (tensor<2x4xf64>) -> tensor<2x4xf64>",
       {2, 4}, 1e-8, 1e-7},
      {"inv", {{"a", {2, 3}}},
       "  %out = vouch.inv %a : (tensor<2x3xf64>) -> tensor<2x3xf64>",
       {2, 3}, 1e-6, 1e-6},
      // beta·a crosses the threshold for a > 0.5: both branches are checked.
      {"softplus", {{"a", {2, 4}}},
       "  %out = vouch.softplus %a beta 2.0 threshold 1.0 : (tensor<2x4xf64>) -> tensor<2x4xf64>",
       {2, 4}, 1e-8, 1e-7},
      // eps = 0.3: the negative and small draws are clamped (zero gradient).
      {"safe_log", {{"a", {2, 4}}},
       "  %out = vouch.safe_log %a eps 0.3 : (tensor<2x4xf64>) -> tensor<2x4xf64>",
       {2, 4}, 1e-7, 1e-6},
      {"clamp", {{"a", {2, 4}}},
       "  %out = vouch.clamp %a min -0.5 max 0.6 : (tensor<2x4xf64>) -> tensor<2x4xf64>",
       {2, 4}, 1e-8, 1e-7},
      {"pow", {{"a", {2, 3}}},
       "  %out = vouch.pow %a p 3.0 : (tensor<2x3xf64>) -> tensor<2x3xf64>",
       {2, 3}, 1e-7, 1e-6},
      {"step", {{"a", {5}}},
       "  %out = vouch.step %a : (tensor<5xf64>) -> tensor<5xf64>",
       {5}, 1e-8, 1e-7},
      {"matmul", {{"a", {3, 4}}, {"b", {4, 2}}},
       "  %out = vouch.matmul %a, %b : (tensor<3x4xf64>, tensor<4x2xf64>) -> tensor<3x2xf64>",
       {3, 2}, 1e-8, 1e-7},
      {"matmul", {{"a", {4, 3}}, {"b", {4, 2}}},
       "  %out = vouch.matmul %a, %b {transpose_lhs} : (tensor<4x3xf64>, tensor<4x2xf64>) -> tensor<3x2xf64>",
       {3, 2}, 1e-8, 1e-7},
      {"matmul", {{"a", {3, 4}}, {"b", {2, 4}}},
       "  %out = vouch.matmul %a, %b {transpose_rhs} : (tensor<3x4xf64>, tensor<2x4xf64>) -> tensor<3x2xf64>",
       {3, 2}, 1e-8, 1e-7},
      {"matmul", {{"a", {4, 3}}, {"b", {2, 4}}},
       "  %out = vouch.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<4x3xf64>, tensor<2x4xf64>) -> tensor<3x2xf64>",
       {3, 2}, 1e-8, 1e-7},
      {"matmul", {{"a", {2, 3, 4}}, {"b", {2, 3, 5}}},
       "  %out = vouch.matmul %a, %b {transpose_lhs} : (tensor<2x3x4xf64>, tensor<2x3x5xf64>) -> tensor<2x4x5xf64>",
       {2, 4, 5}, 1e-8, 1e-7},
      // A shared rank-2 operand under a batch (stride 0; its gradient summed
      // over the batch): rhs untransposed under an untransposed lhs folds the
      // batch into M, the other forms stay batched products.
      {"matmul", {{"a", {2, 3, 3, 4}}, {"b", {4, 5}}},
       "  %out = vouch.matmul %a, %b : (tensor<2x3x3x4xf64>, tensor<4x5xf64>) -> tensor<2x3x3x5xf64>",
       {2, 3, 3, 5}, 1e-8, 1e-7},
      {"matmul", {{"a", {2, 4, 3}}, {"b", {5, 4}}},
       "  %out = vouch.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<2x4x3xf64>, tensor<5x4xf64>) -> tensor<2x3x5xf64>",
       {2, 3, 5}, 1e-8, 1e-7},
      {"matmul", {{"a", {3, 4}}, {"b", {2, 2, 4, 5}}},
       "  %out = vouch.matmul %a, %b : (tensor<3x4xf64>, tensor<2x2x4x5xf64>) -> tensor<2x2x3x5xf64>",
       {2, 2, 3, 5}, 1e-8, 1e-7},
      {"matmul", {{"a", {4, 3}}, {"b", {2, 5, 4}}},
       "  %out = vouch.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<4x3xf64>, tensor<2x5x4xf64>) -> tensor<2x3x5xf64>",
       {2, 3, 5}, 1e-8, 1e-7},
      {"matmul", {{"a", {2, 2, 3, 4}}, {"b", {2, 2, 5, 4}}},
       "  %out = vouch.matmul %a, %b {transpose_rhs} : (tensor<2x2x3x4xf64>, tensor<2x2x5x4xf64>) -> tensor<2x2x3x5xf64>",
       {2, 2, 3, 5}, 1e-8, 1e-7},
      {"linear", {{"x", {3, 2}}, {"w", {4, 2}}, {"b", {4}}},
       "  %out = vouch.linear %x, %w, %b : (tensor<3x2xf64>, tensor<4x2xf64>, tensor<4xf64>) -> tensor<3x4xf64>",
       {3, 4}, 1e-8, 1e-7},
      {"linear", {{"x", {2, 3, 2}}, {"w", {4, 2}}},
       "  %out = vouch.linear %x, %w : (tensor<2x3x2xf64>, tensor<4x2xf64>) -> tensor<2x3x4xf64>",
       {2, 3, 4}, 1e-8, 1e-7},
      // A linear's weight and bias gradients in one op (vouch-fold-linear-
      // bias-grad's, cuda builds): each result alone, then both together.
      {"linear_weight_grad", {{"g", {5, 3}}, {"x", {5, 4}}},
       "  %out, %db = vouch.linear_weight_grad %g, %x : (tensor<5x3xf64>, tensor<5x4xf64>) -> (tensor<3x4xf64>, tensor<3xf64>)",
       {3, 4}, 1e-8, 1e-7},
      {"linear_weight_grad", {{"g", {5, 3}}, {"x", {5, 4}}},
       "  %dw, %out = vouch.linear_weight_grad %g, %x : (tensor<5x3xf64>, tensor<5x4xf64>) -> (tensor<3x4xf64>, tensor<3xf64>)",
       {3}, 1e-8, 1e-7},
      {"linear_weight_grad", {{"g", {5, 3}}, {"x", {5, 4}}},
       "  %dw, %db = vouch.linear_weight_grad %g, %x : (tensor<5x3xf64>, tensor<5x4xf64>) -> (tensor<3x4xf64>, tensor<3xf64>)\n"
       "  %bb = vouch.broadcast %db dims [0] : (tensor<3xf64>) -> tensor<3x4xf64>\n"
       "  %out = vouch.mul %dw, %bb : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>",
       {3, 4}, 1e-8, 1e-7},
      // Convolution, through its composed form (vouch-decompose: im2col,
      // matmul, permute, col2im; GradCheckConv checks that form against the
      // interpreter's direct loops). x is a param too, so dx is checked.
      // 1-D, stride 2, padding 1, a bias.
      {"conv", {{"x", {2, 3, 7}}, {"w", {4, 3, 3}}, {"b", {4}}},
       "  %out = vouch.conv %x, %w, %b stride [2] padding [1] dilation [1] groups 1 : (tensor<2x3x7xf64>, tensor<4x3x3xf64>, tensor<4xf64>) -> tensor<2x4x4xf64>",
       {2, 4, 4}, 1e-8, 1e-7},
      // 2-D: two groups, stride, padding and dilation different per axis,
      // odd extents.
      {"conv", {{"x", {2, 4, 5, 6}}, {"w", {6, 2, 2, 3}}, {"b", {6}}},
       "  %out = vouch.conv %x, %w, %b stride [1, 2] padding [1, 0] dilation [2, 1] groups 2 : (tensor<2x4x5x6xf64>, tensor<6x2x2x3xf64>, tensor<6xf64>) -> tensor<2x6x5x2xf64>",
       {2, 6, 5, 2}, 1e-8, 1e-7},
      // 3-D, padding 1, no bias.
      {"conv", {{"x", {2, 2, 3, 4, 3}}, {"w", {2, 2, 2, 2, 2}}},
       "  %out = vouch.conv %x, %w stride [1, 1, 1] padding [1, 1, 1] dilation [1, 1, 1] groups 1 : (tensor<2x2x3x4x3xf64>, tensor<2x2x2x2x2xf64>) -> tensor<2x2x4x5x4xf64>",
       {2, 2, 4, 5, 4}, 1e-8, 1e-7},
      // One batch entry (no permute), depthwise (groups = channels).
      {"conv", {{"x", {1, 3, 5, 4}}, {"w", {3, 1, 3, 2}}, {"b", {3}}},
       "  %out = vouch.conv %x, %w, %b stride [2, 1] padding [0, 0] dilation [1, 1] groups 3 : (tensor<1x3x5x4xf64>, tensor<3x1x3x2xf64>, tensor<3xf64>) -> tensor<1x3x2x3xf64>",
       {1, 3, 2, 3}, 1e-8, 1e-7},
      // conv_transpose 1-D: stride 2, padding 1, output_padding 1, a bias.
      {"conv_transpose", {{"x", {2, 4, 3}}, {"w", {4, 3, 3}}, {"b", {3}}},
       "  %out = vouch.conv_transpose %x, %w, %b stride [2] padding [1] output_padding [1] dilation [1] groups 1 : (tensor<2x4x3xf64>, tensor<4x3x3xf64>, tensor<3xf64>) -> tensor<2x3x6xf64>",
       {2, 3, 6}, 1e-8, 1e-7},
      // 2-D: two groups, every attribute different per axis.
      {"conv_transpose", {{"x", {2, 4, 3, 2}}, {"w", {4, 1, 2, 3}}, {"b", {2}}},
       "  %out = vouch.conv_transpose %x, %w, %b stride [2, 1] padding [0, 1] output_padding [1, 0] dilation [1, 2] groups 2 : (tensor<2x4x3x2xf64>, tensor<4x1x2x3xf64>, tensor<2xf64>) -> tensor<2x2x7x4xf64>",
       {2, 2, 7, 4}, 1e-8, 1e-7},
      // output_padding 1 ≥ stride 1 (allowed: below dilation 2): col2im's
      // grid (3) is smaller than the windows that fit its output (4).
      {"conv_transpose", {{"x", {2, 2, 3}}, {"w", {2, 2, 2}}},
       "  %out = vouch.conv_transpose %x, %w stride [1] padding [0] output_padding [1] dilation [2] groups 1 : (tensor<2x2x3xf64>, tensor<2x2x2xf64>) -> tensor<2x2x6xf64>",
       {2, 2, 6}, 1e-8, 1e-7},
      // 3-D, stride 2, one batch entry.
      {"conv_transpose", {{"x", {1, 2, 2, 2, 2}}, {"w", {2, 1, 2, 2, 2}}},
       "  %out = vouch.conv_transpose %x, %w stride [2, 2, 2] padding [0, 0, 0] output_padding [0, 0, 0] dilation [1, 1, 1] groups 1 : (tensor<1x2x2x2x2xf64>, tensor<2x1x2x2x2xf64>) -> tensor<1x1x4x4x4xf64>",
       {1, 1, 4, 4, 4}, 1e-8, 1e-7},
      // The index ops themselves (each is the other's VJP).
      {"im2col", {{"x", {2, 3, 5}}},
       "  %out = vouch.im2col %x kernel [2] stride [2] padding [1] dilation [1] groups 1 : (tensor<2x3x5xf64>) -> tensor<1x6x2x3xf64>",
       {1, 6, 2, 3}, 1e-8, 1e-7},
      {"col2im", {{"c", {2, 8, 2, 2, 3}}},
       "  %out = vouch.col2im %c kernel [2, 2] stride [1, 1] padding [0, 0] dilation [1, 1] groups 2 : (tensor<2x8x2x2x3xf64>) -> tensor<2x4x3x4xf64>",
       {2, 4, 3, 4}, 1e-8, 1e-7},
      // col2im of a product (vouch-fold-col2im's op for cuda builds): one
      // group, 2-D; then two groups, stride 2, padding 1 and a grid smaller
      // than the windows that fit (as conv_transpose's).
      {"col2im_matmul", {{"w", {3, 8}}, {"dy", {3, 12}}},
       "  %out = vouch.col2im_matmul %w, %dy kernel [2, 2] stride [1, 1] padding [0, 0] dilation [1, 1] grid [2, 3] groups 1 : (tensor<3x8xf64>, tensor<3x12xf64>) -> tensor<2x2x3x4xf64>",
       {2, 2, 3, 4}, 1e-8, 1e-7},
      {"col2im_matmul", {{"w", {2, 2, 6}}, {"dy", {2, 2, 4}}},
       "  %out = vouch.col2im_matmul %w, %dy kernel [3] stride [2] padding [1] dilation [1] grid [2] groups 2 : (tensor<2x2x6xf64>, tensor<2x2x4xf64>) -> tensor<2x4x5xf64>",
       {2, 4, 5}, 1e-8, 1e-7},
      {"broadcast", {{"a", {3}}},
       "  %out = vouch.broadcast %a dims [1] : (tensor<3xf64>) -> tensor<2x3xf64>",
       {2, 3}, 1e-8, 1e-7},
      {"broadcast", {{"a", {2, 1}}},
       "  %out = vouch.broadcast %a dims [0, 2] : (tensor<2x1xf64>) -> tensor<2x3x4xf64>",
       {2, 3, 4}, 1e-8, 1e-7},
      {"reshape", {{"a", {2, 3}}},
       "  %out = vouch.reshape %a : (tensor<2x3xf64>) -> tensor<3x2xf64>",
       {3, 2}, 1e-8, 1e-7},
      {"permute", {{"a", {2, 3, 4}}},
       "  %out = vouch.permute %a perm [2, 0, 1] : (tensor<2x3x4xf64>) -> tensor<4x2x3xf64>",
       {4, 2, 3}, 1e-8, 1e-7},
      {"reduce_sum", {{"a", {2, 3, 4}}},
       "  %out = vouch.reduce_sum %a axes [1] : (tensor<2x3x4xf64>) -> tensor<2x4xf64>",
       {2, 4}, 1e-8, 1e-7},
      {"reduce_mean", {{"a", {2, 3, 4}}},
       "  %out = vouch.reduce_mean %a axes [0, 2] : (tensor<2x3x4xf64>) -> tensor<3xf64>",
       {3}, 1e-8, 1e-7},
      // Independent draws: one extreme per slice (ties are checked below).
      {"reduce_max", {{"a", {2, 3, 4}}},
       "  %out = vouch.reduce_max %a axes [1] : (tensor<2x3x4xf64>) -> tensor<2x4xf64>",
       {2, 4}, 1e-8, 1e-7},
      {"reduce_min", {{"a", {2, 3, 4}}},
       "  %out = vouch.reduce_min %a axes [0, 2] : (tensor<2x3x4xf64>) -> tensor<3xf64>",
       {3}, 1e-8, 1e-7},
      // gelu and its derivative in both forms, on 3·a (inputs in ±[0.3, 3]).
      {"gelu", {{"a", {2, 4}}},
       "  %s = vouch.scale %a by 3.0 : (tensor<2x4xf64>) -> tensor<2x4xf64>\n"
       "  %out = vouch.gelu %s approximate \"tanh\" : (tensor<2x4xf64>) -> tensor<2x4xf64>",
       {2, 4}, 1e-8, 1e-7},
      {"gelu", {{"a", {2, 4}}},
       "  %s = vouch.scale %a by 3.0 : (tensor<2x4xf64>) -> tensor<2x4xf64>\n"
       "  %out = vouch.gelu %s approximate \"none\" : (tensor<2x4xf64>) -> tensor<2x4xf64>",
       {2, 4}, 1e-8, 1e-7},
      {"gelu_grad", {{"a", {2, 4}}},
       "  %s = vouch.scale %a by 3.0 : (tensor<2x4xf64>) -> tensor<2x4xf64>\n"
       "  %out = vouch.gelu_grad %s approximate \"tanh\" : (tensor<2x4xf64>) -> tensor<2x4xf64>",
       {2, 4}, 1e-8, 1e-7},
      {"gelu_grad", {{"a", {2, 4}}},
       "  %s = vouch.scale %a by 3.0 : (tensor<2x4xf64>) -> tensor<2x4xf64>\n"
       "  %out = vouch.gelu_grad %s approximate \"none\" : (tensor<2x4xf64>) -> tensor<2x4xf64>",
       {2, 4}, 1e-8, 1e-7},
      // Entries 1, 3 of axis 1, then 0..2 of axis 0.
      {"slice", {{"a", {3, 5}}},
       "  %out = vouch.slice %a axis 1 start 1 end 5 step 2 : (tensor<3x5xf64>) -> tensor<3x2xf64>",
       {3, 2}, 1e-8, 1e-7},
      {"slice_scatter", {{"a", {3, 2}}},
       "  %out = vouch.slice_scatter %a axis 1 start 1 end 5 step 2 : (tensor<3x2xf64>) -> tensor<3x5xf64>",
       {3, 5}, 1e-8, 1e-7},
      // A value split into pieces tiling its last axis (qkv into q, k, v):
      // autodiff builds its gradient as one concat of the pieces' gradients
      // (foldTilingScatterSums); with a fourth, direct use of the value the
      // concat is added to that use's gradient.
      {"slice", {{"a", {2, 2, 6}}},
       "  %q = vouch.slice %a axis 2 start 0 end 2 step 1 : (tensor<2x2x6xf64>) -> tensor<2x2x2xf64>\n"
       "  %k = vouch.slice %a axis 2 start 2 end 4 step 1 : (tensor<2x2x6xf64>) -> tensor<2x2x2xf64>\n"
       "  %v = vouch.slice %a axis 2 start 4 end 6 step 1 : (tensor<2x2x6xf64>) -> tensor<2x2x2xf64>\n"
       "  %qk = vouch.mul %q, %k : (tensor<2x2x2xf64>, tensor<2x2x2xf64>) -> tensor<2x2x2xf64>\n"
       "  %out = vouch.mul %qk, %v : (tensor<2x2x2xf64>, tensor<2x2x2xf64>) -> tensor<2x2x2xf64>",
       {2, 2, 2}, 1e-8, 1e-7},
      {"slice", {{"a", {2, 6}}},
       "  %q = vouch.slice %a axis 1 start 0 end 3 step 1 : (tensor<2x6xf64>) -> tensor<2x3xf64>\n"
       "  %k = vouch.slice %a axis 1 start 3 end 6 step 1 : (tensor<2x6xf64>) -> tensor<2x3xf64>\n"
       "  %qk = vouch.mul %q, %k : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>\n"
       "  %c = vouch.concat %qk, %qk axis 1 : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x6xf64>\n"
       "  %out = vouch.mul %c, %a : (tensor<2x6xf64>, tensor<2x6xf64>) -> tensor<2x6xf64>",
       {2, 6}, 1e-8, 1e-7},
      {"concat", {{"a", {2, 1, 2}}, {"b", {2, 3, 2}}, {"c", {2, 2, 2}}},
       "  %out = vouch.concat %a, %b, %c axis 1 : (tensor<2x1x2xf64>, tensor<2x3x2xf64>, tensor<2x2x2xf64>) -> tensor<2x6x2xf64>",
       {2, 6, 2}, 1e-8, 1e-7},
      // Normalizations: an inner axis (strided rows) and the last one; the
      // *_grad ops' own VJPs (second order) are checked the same way.
      {"softmax", {{"a", {2, 3, 4}}},
       "  %out = vouch.softmax %a axis 1 : (tensor<2x3x4xf64>) -> tensor<2x3x4xf64>",
       {2, 3, 4}, 1e-8, 1e-7},
      {"log_softmax", {{"a", {3, 4}}},
       "  %out = vouch.log_softmax %a axis 1 : (tensor<3x4xf64>) -> tensor<3x4xf64>",
       {3, 4}, 1e-8, 1e-7},
      {"log_softmax", {{"a", {3, 4}}},
       "  %out = vouch.log_softmax %a axis 0 : (tensor<3x4xf64>) -> tensor<3x4xf64>",
       {3, 4}, 1e-8, 1e-7},
      {"softmax_grad", {{"g", {2, 3, 4}}, {"y", {2, 3, 4}}},
       "  %out = vouch.softmax_grad %g, %y axis 2 : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>",
       {2, 3, 4}, 1e-8, 1e-7},
      {"log_softmax_grad", {{"g", {3, 4}}, {"y", {3, 4}}},
       "  %out = vouch.log_softmax_grad %g, %y axis 0 : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>",
       {3, 4}, 1e-8, 1e-7},
      // masked_softmax: a full mask with blocked elements and a fully blocked
      // row (row 1), and a [3, 4] mask broadcast over [2, 3, 4] along axis 1
      // whose column 2 blocks rows (o, 2) entirely. The mask gets no gradient.
      {"masked_softmax", {{"a", {3, 4}}},
       "  %mask = vouch.target \"mask\" : tensor<3x4xi1>\n"
       "  %out = vouch.masked_softmax %a, %mask axis 1 : (tensor<3x4xf64>, tensor<3x4xi1>) -> tensor<3x4xf64>",
       {3, 4}, 1e-8, 1e-7, {{"mask", {{3, 4}, {1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1}}}}},
      {"masked_softmax", {{"a", {2, 3, 4}}},
       "  %mask = vouch.target \"mask\" : tensor<3x4xi1>\n"
       "  %out = vouch.masked_softmax %a, %mask axis 1 : (tensor<2x3x4xf64>, tensor<3x4xi1>) -> tensor<2x3x4xf64>",
       {2, 3, 4}, 1e-8, 1e-7, {{"mask", {{3, 4}, {1, 0, 0, 1, 0, 1, 0, 1, 1, 1, 0, 0}}}}},
      // cast: f64 -> f32 -> f64 passes dy through (the identity at run time);
      // through i32 nothing flows, so only the direct path (+ a) is seen.
      {"cast", {{"a", {2, 3}}},
       "  %c = vouch.cast %a : (tensor<2x3xf64>) -> tensor<2x3xf32>\n"
       "  %out = vouch.cast %c : (tensor<2x3xf32>) -> tensor<2x3xf64>",
       {2, 3}, 1e-8, 1e-7},
      {"cast", {{"a", {2, 3}}},
       "  %i = vouch.cast %a : (tensor<2x3xf64>) -> tensor<2x3xi32>\n"
       "  %f = vouch.cast %i : (tensor<2x3xi32>) -> tensor<2x3xf64>\n"
       "  %out = vouch.add %f, %a : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>",
       {2, 3}, 1e-8, 1e-7},
      {"layer_norm", {{"x", {3, 5}}, {"w", {5}}, {"b", {5}}},
       "  %out = vouch.layer_norm %x weight %w bias %b eps 1.0e-05 : (tensor<3x5xf64>, tensor<5xf64>, tensor<5xf64>) -> tensor<3x5xf64>",
       {3, 5}, 1e-7, 1e-6},
      {"layer_norm", {{"x", {2, 2, 4}}},
       "  %out = vouch.layer_norm %x eps 1.0e-05 : (tensor<2x2x4xf64>) -> tensor<2x2x4xf64>",
       {2, 2, 4}, 1e-7, 1e-6},
      {"layer_norm", {{"x", {6}}, {"w", {6}}},
       "  %out = vouch.layer_norm %x weight %w eps 1.0e-03 : (tensor<6xf64>, tensor<6xf64>) -> tensor<6xf64>",
       {6}, 1e-7, 1e-6},
      {"layer_norm", {{"x", {3, 4}}, {"b", {4}}},
       "  %out = vouch.layer_norm %x bias %b eps 1.0e-05 : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3x4xf64>",
       {3, 4}, 1e-7, 1e-6},
      // y read by the backward pass (mul's VJP) while layer_norm_grad reads
      // x: what vouch-autodiff may recompute (GradCheckRecompute), as is the
      // addend form's y below (normalising the sum alone).
      {"layer_norm", {{"x", {3, 5}}, {"w", {5}}, {"c", {3, 5}}},
       "  %y = vouch.layer_norm %x weight %w eps 1.0e-05 : (tensor<3x5xf64>, tensor<5xf64>) -> tensor<3x5xf64>\n"
       "  %out = vouch.mul %y, %c : (tensor<3x5xf64>, tensor<3x5xf64>) -> tensor<3x5xf64>",
       {3, 5}, 1e-7, 1e-6},
      // With an addend (vouch-fold-layer-norm-add): the sum read by nothing
      // else (its zero gradient, no layer_norm_grad addend), then read again
      // (its gradient the layer_norm_grad's addend), both terms and the
      // parameters checked.
      {"layer_norm", {{"x", {3, 5}}, {"a", {3, 5}}, {"w", {5}}, {"b", {5}}},
       "  %out, %s = vouch.layer_norm %x plus %a weight %w bias %b eps 1.0e-05 : (tensor<3x5xf64>, tensor<3x5xf64>, tensor<5xf64>, tensor<5xf64>) -> (tensor<3x5xf64>, tensor<3x5xf64>)",
       {3, 5}, 1e-7, 1e-6},
      {"layer_norm", {{"x", {2, 4}}, {"a", {2, 4}}, {"w", {4}}},
       "  %y, %s = vouch.layer_norm %x plus %a weight %w eps 1.0e-05 : (tensor<2x4xf64>, tensor<2x4xf64>, tensor<4xf64>) -> (tensor<2x4xf64>, tensor<2x4xf64>)\n"
       "  %out = vouch.mul %y, %s : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>",
       {2, 4}, 1e-7, 1e-6},
      // layer_norm_grad's results one at a time (the others get no gradient:
      // autodiff gives them zeros), then all three flowing together.
      {"layer_norm_grad", {{"g", {3, 5}}, {"x", {3, 5}}, {"w", {5}}},
       "  %out, %dw = vouch.layer_norm_grad %g, %x weight %w eps 1.0e-05 : (tensor<3x5xf64>, tensor<3x5xf64>, tensor<5xf64>) -> (tensor<3x5xf64>, tensor<5xf64>)",
       {3, 5}, 1e-6, 1e-5},
      {"layer_norm_grad", {{"g", {3, 5}}, {"x", {3, 5}}, {"w", {5}}},
       "  %dx, %dw, %db = vouch.layer_norm_grad %g, %x weight %w with_bias eps 1.0e-05 : (tensor<3x5xf64>, tensor<3x5xf64>, tensor<5xf64>) -> (tensor<3x5xf64>, tensor<5xf64>, tensor<5xf64>)\n"
       "  %out = vouch.scale %dw by 1.0 : (tensor<5xf64>) -> tensor<5xf64>",
       {5}, 1e-6, 1e-5},
      {"layer_norm_grad", {{"g", {3, 5}}, {"x", {3, 5}}, {"w", {5}}},
       "  %dx, %dw, %db = vouch.layer_norm_grad %g, %x weight %w with_bias eps 1.0e-05 : (tensor<3x5xf64>, tensor<3x5xf64>, tensor<5xf64>) -> (tensor<3x5xf64>, tensor<5xf64>, tensor<5xf64>)\n"
       "  %out = vouch.scale %db by 1.0 : (tensor<5xf64>) -> tensor<5xf64>",
       {5}, 1e-6, 1e-5},
      {"layer_norm_grad", {{"g", {3, 5}}, {"x", {3, 5}}, {"w", {5}}},
       "  %dx, %dw, %db = vouch.layer_norm_grad %g, %x weight %w with_bias eps 1.0e-05 : (tensor<3x5xf64>, tensor<3x5xf64>, tensor<5xf64>) -> (tensor<3x5xf64>, tensor<5xf64>, tensor<5xf64>)\n"
       "  %bw = vouch.broadcast %dw dims [1] : (tensor<5xf64>) -> tensor<3x5xf64>\n"
       "  %bb = vouch.broadcast %db dims [1] : (tensor<5xf64>) -> tensor<3x5xf64>\n"
       "  %s = vouch.add %dx, %bw : (tensor<3x5xf64>, tensor<3x5xf64>) -> tensor<3x5xf64>\n"
       "  %out = vouch.add %s, %bb : (tensor<3x5xf64>, tensor<3x5xf64>) -> tensor<3x5xf64>",
       {3, 5}, 1e-6, 1e-5},
      {"layer_norm_grad", {{"g", {2, 3, 4}}, {"x", {2, 3, 4}}},
       "  %dx, %db = vouch.layer_norm_grad %g, %x with_bias eps 1.0e-05 : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> (tensor<2x3x4xf64>, tensor<4xf64>)\n"
       "  %bb = vouch.broadcast %db dims [2] : (tensor<4xf64>) -> tensor<2x3x4xf64>\n"
       "  %out = vouch.mul %dx, %bb : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>",
       {2, 3, 4}, 1e-6, 1e-5},
      {"layer_norm_grad", {{"g", {2, 4}}, {"x", {2, 4}}},
       "  %out = vouch.layer_norm_grad %g, %x eps 1.0e-05 : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>",
       {2, 4}, 1e-6, 1e-5},
      {"mse_loss", {{"p", {3, 2}}, {"t", {3, 2}}},
       "  %out = vouch.mse_loss %p, %t : (tensor<3x2xf64>, tensor<3x2xf64>) -> tensor<f64>",
       {}, 1e-8, 1e-7},
      // Rows [2, 3] of 4 classes; label -100 (row 1, 1) is ignored: its
      // logits get exactly zero gradient, checked like every other entry.
      {"cross_entropy", {{"z", {2, 3, 4}}},
       "  %labels = vouch.target \"labels\" : tensor<2x3xi32>\n"
       "  %out = vouch.cross_entropy %z, %labels {ignore_index = -100 : i64} : (tensor<2x3x4xf64>, tensor<2x3xi32>) -> tensor<f64>",
       {}, 1e-8, 1e-7, {{"labels", {{2, 3}, {0, 3, 1, 2, -100, 0}}}}},
      // Its gradient op, differentiated in the logits and in dloss.
      {"cross_entropy_grad", {{"z", {2, 3, 4}}, {"dl", {}}},
       "  %labels = vouch.target \"labels\" : tensor<2x3xi32>\n"
       "  %out = vouch.cross_entropy_grad %z, %labels, %dl {ignore_index = -100 : i64} : (tensor<2x3x4xf64>, tensor<2x3xi32>, tensor<f64>) -> tensor<2x3x4xf64>",
       {2, 3, 4}, 1e-8, 1e-7, {{"labels", {{2, 3}, {0, 3, 1, 2, -100, 0}}}}},
      // Both with 3 of the 5 entries a row counted (`classes`: vouch-pad-
      // classes' padding): the padding gets exactly zero gradient, and the
      // second-order rule's slices and scatter are checked too.
      {"cross_entropy_classes", {{"z", {2, 3, 5}}},
       "  %labels = vouch.target \"labels\" : tensor<2x3xi32>\n"
       "  %out = vouch.cross_entropy %z, %labels {classes = 3 : i64, ignore_index = -100 : i64} : (tensor<2x3x5xf64>, tensor<2x3xi32>) -> tensor<f64>",
       {}, 1e-8, 1e-7, {{"labels", {{2, 3}, {0, 2, 1, 2, -100, 0}}}}},
      {"cross_entropy_grad_classes", {{"z", {2, 3, 5}}, {"dl", {}}},
       "  %labels = vouch.target \"labels\" : tensor<2x3xi32>\n"
       "  %out = vouch.cross_entropy_grad %z, %labels, %dl {classes = 3 : i64, ignore_index = -100 : i64} : (tensor<2x3x5xf64>, tensor<2x3xi32>, tensor<f64>) -> tensor<2x3x5xf64>",
       {2, 3, 5}, 1e-8, 1e-7, {{"labels", {{2, 3}, {0, 2, 1, 2, -100, 0}}}}},
      // ids [2, 3] into a [5, 3] table, rows 4 and 1 read twice, row 3 never:
      // the table's gradient sums repeated rows and leaves unread ones zero.
      {"embedding", {{"table", {5, 3}}},
       "  %ids = vouch.target \"ids\" : tensor<2x3xi32>\n"
       "  %out = vouch.embedding %ids, %table : (tensor<2x3xi32>, tensor<5x3xf64>) -> tensor<2x3x3xf64>",
       {2, 3, 3}, 1e-8, 1e-7, {{"ids", {{2, 3}, {4, 1, 4, 0, 2, 1}}}}},
      // Its gradient op, differentiated in dy (embedding of the ids).
      {"embedding_grad", {{"dy", {2, 3, 3}}},
       "  %ids = vouch.target \"ids\" : tensor<2x3xi32>\n"
       "  %out = vouch.embedding_grad %ids, %dy : (tensor<2x3xi32>, tensor<2x3x3xf64>) -> tensor<5x3xf64>",
       {5, 3}, 1e-8, 1e-7, {{"ids", {{2, 3}, {4, 1, 4, 0, 2, 1}}}}},
      // gather along the last axis, 5 picks from 4 entries per row (repeats,
      // an entry never picked), and along the first axis of a rank-3 tensor.
      {"gather", {{"x", {3, 4}}},
       "  %i = vouch.target \"i\" : tensor<3x5xi32>\n"
       "  %out = vouch.gather %x, %i axis 1 : (tensor<3x4xf64>, tensor<3x5xi32>) -> tensor<3x5xf64>",
       {3, 5}, 1e-8, 1e-7,
       {{"i", {{3, 5}, {0, 3, 3, 1, 0, 2, 2, 2, 2, 2, 1, 0, 3, 0, 1}}}}},
      {"gather", {{"x", {2, 3, 2}}},
       "  %i = vouch.target \"i\" : tensor<3x3x2xi32>\n"
       "  %out = vouch.gather %x, %i axis 0 : (tensor<2x3x2xf64>, tensor<3x3x2xi32>) -> tensor<3x3x2xf64>",
       {3, 3, 2}, 1e-8, 1e-7,
       {{"i", {{3, 3, 2}, {0, 1, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 0}}}}},
      // scatter_add, differentiated in x and src (the latter through gather).
      {"scatter_add", {{"x", {3, 4}}, {"src", {3, 5}}},
       "  %i = vouch.target \"i\" : tensor<3x5xi32>\n"
       "  %out = vouch.scatter_add %x, %i, %src axis 1 : (tensor<3x4xf64>, tensor<3x5xi32>, tensor<3x5xf64>) -> tensor<3x4xf64>",
       {3, 4}, 1e-8, 1e-7,
       {{"i", {{3, 5}, {0, 3, 3, 1, 0, 2, 2, 2, 2, 2, 1, 0, 3, 0, 1}}}}},
      {"scatter_add", {{"x", {2, 3, 2}}, {"src", {3, 3, 2}}},
       "  %i = vouch.target \"i\" : tensor<3x3x2xi32>\n"
       "  %out = vouch.scatter_add %x, %i, %src axis 0 : (tensor<2x3x2xf64>, tensor<3x3x2xi32>, tensor<3x3x2xf64>) -> tensor<2x3x2xf64>",
       {2, 3, 2}, 1e-8, 1e-7,
       {{"i", {{3, 3, 2}, {0, 1, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 0}}}}},
      // scaled_dot_product_attention, through its composed form (vouch-
      // decompose): causal with Tq = 3 < Tk = 5; a data mask [2, 1, 3, 4]
      // broadcast over 2 heads whose (0, ·, 1) row sees no key (zeros, no
      // gradient); no mask, on matrices.
      {"scaled_dot_product_attention", {{"q", {2, 3, 2}}, {"k", {2, 5, 2}}, {"v", {2, 5, 3}}},
       "  %out = vouch.scaled_dot_product_attention %q, %k, %v causal scale 0.7 : (tensor<2x3x2xf64>, tensor<2x5x2xf64>, tensor<2x5x3xf64>) -> tensor<2x3x3xf64>",
       {2, 3, 3}, 1e-8, 1e-7},
      {"scaled_dot_product_attention", {{"q", {2, 2, 3, 2}}, {"k", {2, 2, 4, 2}}, {"v", {2, 2, 4, 3}}},
       "  %mask = vouch.target \"mask\" : tensor<2x1x3x4xi1>\n"
       "  %out = vouch.scaled_dot_product_attention %q, %k, %v mask %mask scale 0.5 : (tensor<2x2x3x2xf64>, tensor<2x2x4x2xf64>, tensor<2x2x4x3xf64>, tensor<2x1x3x4xi1>) -> tensor<2x2x3x3xf64>",
       {2, 2, 3, 3}, 1e-8, 1e-7,
       {{"mask", {{2, 1, 3, 4}, {1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1,
                                 0, 1, 0, 0, 1, 1, 0, 1, 1, 0, 0, 1}}}}},
      {"scaled_dot_product_attention", {{"q", {3, 2}}, {"k", {4, 2}}, {"v", {4, 2}}},
       "  %out = vouch.scaled_dot_product_attention %q, %k, %v scale 1.0 : (tensor<3x2xf64>, tensor<4x2xf64>, tensor<4x2xf64>) -> tensor<3x2xf64>",
       {3, 2}, 1e-8, 1e-7},
      // flash_attention (the fused form): its VJP is flash_attention_grad,
      // which the interpreter computes directly; causal with Tq != Tk, and a
      // broadcast mask with a fully blocked row (zeros, zero gradient).
      {"flash_attention", {{"q", {2, 3, 2}}, {"k", {2, 5, 2}}, {"v", {2, 5, 3}}},
       "  %out, %lse = vouch.flash_attention %q, %k, %v causal scale 0.7 : (tensor<2x3x2xf64>, tensor<2x5x2xf64>, tensor<2x5x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x3xf64>)",
       {2, 3, 3}, 1e-8, 1e-7},
      {"flash_attention", {{"q", {2, 2, 3, 2}}, {"k", {2, 2, 4, 2}}, {"v", {2, 2, 4, 3}}},
       "  %mask = vouch.target \"mask\" : tensor<2x1x3x4xi1>\n"
       "  %out, %lse = vouch.flash_attention %q, %k, %v mask %mask scale 0.5 : (tensor<2x2x3x2xf64>, tensor<2x2x4x2xf64>, tensor<2x2x4x3xf64>, tensor<2x1x3x4xi1>) -> (tensor<2x2x3x3xf64>, tensor<2x2x3xf64>)",
       {2, 2, 3, 3}, 1e-8, 1e-7,
       {{"mask", {{2, 1, 3, 4}, {1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1,
                                 0, 1, 0, 0, 1, 1, 0, 1, 1, 0, 0, 1}}}}},
      // flash_attention_grad's second-order rule (through the composed
      // form's ops): each of dq, dk, dv as the output, g, q, k, v varied.
      {"flash_attention_grad", {{"g", {2, 3, 3}}, {"q", {2, 3, 2}}, {"k", {2, 4, 2}}, {"v", {2, 4, 3}}},
       "  %o, %lse = vouch.flash_attention %q, %k, %v causal scale 0.7 : (tensor<2x3x2xf64>, tensor<2x4x2xf64>, tensor<2x4x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x3xf64>)\n"
       "  %out, %dk, %dv = vouch.flash_attention_grad %g, %q, %k, %v, %o, %lse causal scale 0.7 : (tensor<2x3x3xf64>, tensor<2x3x2xf64>, tensor<2x4x2xf64>, tensor<2x4x3xf64>, tensor<2x3x3xf64>, tensor<2x3xf64>) -> (tensor<2x3x2xf64>, tensor<2x4x2xf64>, tensor<2x4x3xf64>)",
       {2, 3, 2}, 1e-6, 1e-5},
      {"flash_attention_grad", {{"g", {2, 3, 3}}, {"q", {2, 3, 2}}, {"k", {2, 4, 2}}, {"v", {2, 4, 3}}},
       "  %o, %lse = vouch.flash_attention %q, %k, %v causal scale 0.7 : (tensor<2x3x2xf64>, tensor<2x4x2xf64>, tensor<2x4x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x3xf64>)\n"
       "  %dq, %out, %dv = vouch.flash_attention_grad %g, %q, %k, %v, %o, %lse causal scale 0.7 : (tensor<2x3x3xf64>, tensor<2x3x2xf64>, tensor<2x4x2xf64>, tensor<2x4x3xf64>, tensor<2x3x3xf64>, tensor<2x3xf64>) -> (tensor<2x3x2xf64>, tensor<2x4x2xf64>, tensor<2x4x3xf64>)",
       {2, 4, 2}, 1e-6, 1e-5},
      {"flash_attention_grad", {{"g", {2, 3, 3}}, {"q", {2, 3, 2}}, {"k", {2, 4, 2}}, {"v", {2, 4, 3}}},
       "  %mask = vouch.target \"mask\" : tensor<3x4xi1>\n"
       "  %o, %lse = vouch.flash_attention %q, %k, %v mask %mask scale 0.6 : (tensor<2x3x2xf64>, tensor<2x4x2xf64>, tensor<2x4x3xf64>, tensor<3x4xi1>) -> (tensor<2x3x3xf64>, tensor<2x3xf64>)\n"
       "  %dq, %dk, %out = vouch.flash_attention_grad %g, %q, %k, %v, %o, %lse mask %mask scale 0.6 : (tensor<2x3x3xf64>, tensor<2x3x2xf64>, tensor<2x4x2xf64>, tensor<2x4x3xf64>, tensor<2x3x3xf64>, tensor<2x3xf64>, tensor<3x4xi1>) -> (tensor<2x3x2xf64>, tensor<2x4x2xf64>, tensor<2x4x3xf64>)",
       {2, 4, 3}, 1e-6, 1e-5,
       {{"mask", {{3, 4}, {1, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0}}}}},
      // qkv_attention (heads packed side by side in one [B, T, 3·H·d]
      // tensor, H 2, d 2): its VJP is qkv_attention_grad, which the
      // interpreter computes directly; causal, and a broadcast [B, 1, T, T]
      // mask whose (0, ·, 1) row sees no key (zeros, zero gradient).
      {"qkv_attention", {{"qkv", {2, 3, 12}}},
       "  %out, %lse = vouch.qkv_attention %qkv heads 2 causal scale 0.5 : (tensor<2x3x12xf64>) -> (tensor<2x3x4xf64>, tensor<2x2x3xf64>)",
       {2, 3, 4}, 1e-8, 1e-7},
      {"qkv_attention", {{"qkv", {2, 3, 12}}},
       "  %mask = vouch.target \"mask\" : tensor<2x1x3x3xi1>\n"
       "  %out, %lse = vouch.qkv_attention %qkv mask %mask heads 2 scale 0.5 : (tensor<2x3x12xf64>, tensor<2x1x3x3xi1>) -> (tensor<2x3x4xf64>, tensor<2x2x3xf64>)",
       {2, 3, 4}, 1e-8, 1e-7,
       {{"mask", {{2, 1, 3, 3}, {1, 1, 0, 0, 0, 0, 1, 0, 1,
                                 0, 1, 1, 1, 0, 1, 0, 1, 0}}}}},
      // qkv_attention_grad's second-order rule (through the unpacked form's
      // ops): dqkv as the output, g and qkv varied; causal, and a [T, T]
      // mask whose query 1 sees no key.
      {"qkv_attention_grad", {{"g", {2, 3, 4}}, {"qkv", {2, 3, 12}}},
       "  %o, %lse = vouch.qkv_attention %qkv heads 2 causal scale 0.5 : (tensor<2x3x12xf64>) -> (tensor<2x3x4xf64>, tensor<2x2x3xf64>)\n"
       "  %out = vouch.qkv_attention_grad %g, %qkv, %o, %lse heads 2 causal scale 0.5 : (tensor<2x3x4xf64>, tensor<2x3x12xf64>, tensor<2x3x4xf64>, tensor<2x2x3xf64>) -> tensor<2x3x12xf64>",
       {2, 3, 12}, 1e-6, 1e-5},
      {"qkv_attention_grad", {{"g", {2, 3, 4}}, {"qkv", {2, 3, 12}}},
       "  %mask = vouch.target \"mask\" : tensor<3x3xi1>\n"
       "  %o, %lse = vouch.qkv_attention %qkv mask %mask heads 2 scale 0.6 : (tensor<2x3x12xf64>, tensor<3x3xi1>) -> (tensor<2x3x4xf64>, tensor<2x2x3xf64>)\n"
       "  %out = vouch.qkv_attention_grad %g, %qkv, %o, %lse mask %mask heads 2 scale 0.6 : (tensor<2x3x4xf64>, tensor<2x3x12xf64>, tensor<2x3x4xf64>, tensor<2x2x3xf64>, tensor<3x3xi1>) -> tensor<2x3x12xf64>",
       {2, 3, 12}, 1e-6, 1e-5,
       {{"mask", {{3, 3}, {1, 0, 1, 0, 0, 0, 0, 1, 1}}}}},
      // batch_norm in training steps (its batch statistics are functions of
      // x): BatchNorm1d on [N, C] and [N, C, L], 2d, 3d; with and without
      // weight and bias.
      {"batch_norm", {{"x", {4, 3}}, {"w", {3}}, {"b", {3}}},
       "  %rm = vouch.state \"rm\" = zeros : tensor<3xf64>\n"
       "  %rv = vouch.state \"rv\" = ones : tensor<3xf64>\n"
       "  %out, %mean, %rstd = vouch.batch_norm %x weight %w bias %b running %rm, %rv eps 1.0e-05 momentum 1.000000e-01 : (tensor<4x3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<4x3xf64>, tensor<3xf64>, tensor<3xf64>)",
       {4, 3}, 1e-7, 1e-6, {}, true},
      {"batch_norm", {{"x", {3, 2, 4}}, {"b", {2}}},
       "  %rm = vouch.state \"rm\" = zeros : tensor<2xf64>\n"
       "  %rv = vouch.state \"rv\" = ones : tensor<2xf64>\n"
       "  %out, %mean, %rstd = vouch.batch_norm %x bias %b running %rm, %rv eps 1.0e-03 momentum 1.000000e-01 : (tensor<3x2x4xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<3x2x4xf64>, tensor<2xf64>, tensor<2xf64>)",
       {3, 2, 4}, 1e-7, 1e-6, {}, true},
      {"batch_norm", {{"x", {2, 3, 2, 2}}, {"w", {3}}},
       "  %rm = vouch.state \"rm\" = zeros : tensor<3xf64>\n"
       "  %rv = vouch.state \"rv\" = ones : tensor<3xf64>\n"
       "  %out, %mean, %rstd = vouch.batch_norm %x weight %w running %rm, %rv eps 1.0e-05 momentum 1.000000e-01 : (tensor<2x3x2x2xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<2x3x2x2xf64>, tensor<3xf64>, tensor<3xf64>)",
       {2, 3, 2, 2}, 1e-7, 1e-6, {}, true},
      {"batch_norm", {{"x", {2, 2, 1, 2, 3}}},
       "  %rm = vouch.state \"rm\" = zeros : tensor<2xf64>\n"
       "  %rv = vouch.state \"rv\" = ones : tensor<2xf64>\n"
       "  %out, %mean, %rstd = vouch.batch_norm %x running %rm, %rv eps 1.0e-05 momentum 1.000000e-01 : (tensor<2x2x1x2x3xf64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<2x2x1x2x3xf64>, tensor<2xf64>, tensor<2xf64>)",
       {2, 2, 1, 2, 3}, 1e-7, 1e-6, {}, true},
      // The statistics as results too (d mean / d x, d rstd / d x): what a
      // gradient reaching them would add.
      {"batch_norm", {{"x", {4, 3}}, {"w", {3}}},
       "  %rm = vouch.state \"rm\" = zeros : tensor<3xf64>\n"
       "  %rv = vouch.state \"rv\" = ones : tensor<3xf64>\n"
       "  %y, %mean, %rstd = vouch.batch_norm %x weight %w running %rm, %rv eps 1.0e-05 momentum 1.000000e-01 : (tensor<4x3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<4x3xf64>, tensor<3xf64>, tensor<3xf64>)\n"
       "  %s = vouch.mul %mean, %rstd : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>\n"
       "  %t = vouch.add %s, %rstd : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>\n"
       "  %sb = vouch.broadcast %t dims [1] : (tensor<3xf64>) -> tensor<4x3xf64>\n"
       "  %out = vouch.add %y, %sb : (tensor<4x3xf64>, tensor<4x3xf64>) -> tensor<4x3xf64>",
       {4, 3}, 1e-7, 1e-6, {}, true},
      // batch_norm_grad's results one at a time, its five operands
      // independent (mean and rstd perturbed on their own).
      {"batch_norm_grad", {{"g", {3, 2, 2}}, {"x", {3, 2, 2}}, {"mean", {2}}, {"rstd", {2}}, {"w", {2}}},
       "  %out, %dw = vouch.batch_norm_grad %g, %x, %mean, %rstd weight %w : (tensor<3x2x2xf64>, tensor<3x2x2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<3x2x2xf64>, tensor<2xf64>)",
       {3, 2, 2}, 1e-7, 1e-6},
      {"batch_norm_grad", {{"g", {4, 3}}, {"x", {4, 3}}, {"mean", {3}}, {"rstd", {3}}, {"w", {3}}},
       "  %dx, %out, %db = vouch.batch_norm_grad %g, %x, %mean, %rstd weight %w with_bias : (tensor<4x3xf64>, tensor<4x3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<4x3xf64>, tensor<3xf64>, tensor<3xf64>)",
       {3}, 1e-7, 1e-6},
      {"batch_norm_grad", {{"g", {4, 3}}, {"x", {4, 3}}, {"mean", {3}}, {"rstd", {3}}},
       "  %dx, %out = vouch.batch_norm_grad %g, %x, %mean, %rstd with_bias : (tensor<4x3xf64>, tensor<4x3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<4x3xf64>, tensor<3xf64>)",
       {3}, 1e-7, 1e-6},
      {"batch_norm_grad", {{"g", {2, 2, 3}}, {"x", {2, 2, 3}}, {"mean", {2}}, {"rstd", {2}}},
       "  %out = vouch.batch_norm_grad %g, %x, %mean, %rstd : (tensor<2x2x3xf64>, tensor<2x2x3xf64>, tensor<2xf64>, tensor<2xf64>) -> tensor<2x2x3xf64>",
       {2, 2, 3}, 1e-7, 1e-6},
      // A plain forward (not a training step): the identity. The training
      // steps' masks are checked by GradCheckDropout below.
      {"dropout", {{"a", {3, 4}}},
       "  %out = vouch.dropout %a p 3.000000e-01 ordinal 0 : (tensor<3x4xf64>) -> tensor<3x4xf64>",
       {3, 4}, 1e-8, 1e-7},
      // Pooling, 1-D to 3-D: overlapping windows (kernel > stride), stride !=
      // kernel, padding (which never wins a max, never counts in a
      // smooth max, counts or not in an average). Independent draws: no ties
      // (checked by GradCheckTies.MaxPoolGivesTheGradientToTheFirstMaximum).
      {"max_pool", {{"x", {2, 3, 7}}},
       "  %out = vouch.max_pool %x kernel [3] stride [2] padding [1] : (tensor<2x3x7xf64>) -> tensor<2x3x4xf64>",
       {2, 3, 4}, 1e-8, 1e-7},
      {"max_pool", {{"x", {1, 2, 4, 4}}},
       "  %out = vouch.max_pool %x kernel [2, 2] stride [2, 2] padding [0, 0] : (tensor<1x2x4x4xf64>) -> tensor<1x2x2x2xf64>",
       {1, 2, 2, 2}, 1e-8, 1e-7},
      {"max_pool", {{"x", {1, 1, 4, 5}}},
       "  %out = vouch.max_pool %x kernel [3, 2] stride [1, 2] padding [1, 0] : (tensor<1x1x4x5xf64>) -> tensor<1x1x4x2xf64>",
       {1, 1, 4, 2}, 1e-8, 1e-7},
      {"max_pool", {{"x", {1, 2, 3, 4, 4}}},
       "  %out = vouch.max_pool %x kernel [2, 2, 2] stride [1, 2, 2] padding [1, 0, 1] : (tensor<1x2x3x4x4xf64>) -> tensor<1x2x4x2x3xf64>",
       {1, 2, 4, 2, 3}, 1e-8, 1e-7},
      // The form max_pool_grad's VJP builds: values picked at x's maxima (x
      // gets no gradient; its finite differences are 0 too).
      {"max_pool", {{"x", {1, 2, 5}}, {"v", {1, 2, 5}}},
       "  %out = vouch.max_pool %x values %v kernel [2] stride [1] padding [1] : (tensor<1x2x5xf64>, tensor<1x2x5xf64>) -> tensor<1x2x6xf64>",
       {1, 2, 6}, 1e-8, 1e-7},
      {"max_pool_grad", {{"g", {1, 2, 3}}, {"x", {1, 2, 5}}},
       "  %out = vouch.max_pool_grad %g, %x kernel [3] stride [2] padding [1] : (tensor<1x2x3xf64>, tensor<1x2x5xf64>) -> tensor<1x2x5xf64>",
       {1, 2, 5}, 1e-8, 1e-7},
      {"avg_pool", {{"x", {2, 2, 7}}},
       "  %out = vouch.avg_pool %x kernel [3] stride [2] padding [1] count_include_pad : (tensor<2x2x7xf64>) -> tensor<2x2x4xf64>",
       {2, 2, 4}, 1e-8, 1e-7},
      {"avg_pool", {{"x", {1, 2, 5, 4}}},
       "  %out = vouch.avg_pool %x kernel [3, 2] stride [2, 1] padding [1, 1] : (tensor<1x2x5x4xf64>) -> tensor<1x2x3x5xf64>",
       {1, 2, 3, 5}, 1e-8, 1e-7},
      {"avg_pool", {{"x", {1, 1, 4, 3, 3}}},
       "  %out = vouch.avg_pool %x kernel [2, 3, 1] stride [2, 1, 1] padding [0, 1, 0] count_include_pad : (tensor<1x1x4x3x3xf64>) -> tensor<1x1x2x3x3xf64>",
       {1, 1, 2, 3, 3}, 1e-8, 1e-7},
      {"avg_pool_grad", {{"g", {1, 2, 3, 5}}},
       "  %out = vouch.avg_pool_grad %g kernel [3, 2] stride [2, 1] padding [1, 1] : (tensor<1x2x3x5xf64>) -> tensor<1x2x5x4xf64>",
       {1, 2, 5, 4}, 1e-8, 1e-7},
      {"smooth_max_pool", {{"x", {1, 2, 5, 5}}},
       "  %out = vouch.smooth_max_pool %x kernel [3, 3] stride [2, 2] padding [1, 1] beta 2.5 : (tensor<1x2x5x5xf64>) -> tensor<1x2x3x3xf64>",
       {1, 2, 3, 3}, 1e-8, 1e-7},
      // beta < 0: a smooth minimum, over overlapping windows.
      {"smooth_max_pool", {{"x", {2, 1, 6}}},
       "  %out = vouch.smooth_max_pool %x kernel [3] stride [1] padding [0] beta -1.5 : (tensor<2x1x6xf64>) -> tensor<2x1x4xf64>",
       {2, 1, 4}, 1e-8, 1e-7},
      {"smooth_max_pool", {{"x", {1, 1, 2, 4, 4}}},
       "  %out = vouch.smooth_max_pool %x kernel [2, 2, 2] stride [2, 2, 2] padding [0, 1, 1] beta 1.0 : (tensor<1x1x2x4x4xf64>) -> tensor<1x1x1x3x3xf64>",
       {1, 1, 1, 3, 3}, 1e-8, 1e-7},
      // Its gradient op, differentiated in grad, input and output (the
      // forward's result, an operand of its own here).
      {"smooth_max_pool_grad", {{"g", {1, 2, 3}}, {"x", {1, 2, 5}}, {"y", {1, 2, 3}}},
       "  %out = vouch.smooth_max_pool_grad %g, %x, %y kernel [3] stride [2] padding [1] beta 1.5 : (tensor<1x2x3xf64>, tensor<1x2x5xf64>, tensor<1x2x3xf64>) -> tensor<1x2x5xf64>",
       {1, 2, 5}, 1e-7, 1e-6},
      // flatten, through its composed form (one reshape).
      {"flatten", {{"x", {2, 3, 2, 2}}},
       "  %out = vouch.flatten %x start_axis 1 : (tensor<2x3x2x2xf64>) -> tensor<2x12xf64>",
       {2, 12}, 1e-8, 1e-7},
      {"flatten", {{"x", {2, 3, 2, 2}}},
       "  %f = vouch.flatten %x start_axis 2 : (tensor<2x3x2x2xf64>) -> tensor<2x3x4xf64>\n"
       "  %out = vouch.mul %f, %f : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>",
       {2, 3, 4}, 1e-8, 1e-7},
  };
  return all;
}

/// The case's model, differentiated by vouch-autodiff (kept alive by `module`)
/// with its recompute-min-elements (-1: the default) and recompute-layer-norm.
vouch::ModelOp differentiated(MLIRContext &context, const GradCase &c,
                              OwningOpRef<ModuleOp> &module,
                              int64_t recomputeMinElements = -1,
                              bool recomputeLayerNorm = false) {
  vouch::registerVouchDialect(context);
  std::string text = modelText(c);
  module = parseSourceString<ModuleOp>(text, &context);
  EXPECT_TRUE(module) << text;
  if (!module)
    return {};
  PassManager pm(&context);
  vouch::addAutodiffPasses(pm, "composed", recomputeMinElements, 0, recomputeLayerNorm);
  EXPECT_TRUE(succeeded(pm.run(*module))) << text;
  return *module->getOps<vouch::ModelOp>().begin();
}

size_t opCount(vouch::ModelOp model) { return model.getBlock().getOperations().size(); }

class GradCheck : public ::testing::TestWithParam<size_t> {};

TEST_P(GradCheck, MatchesCentralFiniteDifferences) {
  const GradCase &c = cases()[GetParam()];
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  vouch::ModelOp model = differentiated(context, c, module);
  ASSERT_TRUE(model);

  std::mt19937_64 rng(GetParam() + 2026);
  std::map<std::string, vouch::HostTensor> feeds;
  feeds["r"] = randomTensor(c.outShape, rng);
  for (const auto &[name, tensor] : c.fixed)
    feeds[name] = tensor;
  for (const Param &p : c.params)
    feeds[p.name] = randomTensor(p.shape, rng);

  const vouch::RandomContext step{0, 0, c.training};
  auto analytic = vouch::interpret(model, feeds, vouch::Precision::F64, step);
  ASSERT_TRUE(succeeded(analytic));
  const double h = 1e-6;
  for (const Param &p : c.params) {
    const vouch::HostTensor &grad = analytic->paramGrads.at(p.name);
    ASSERT_EQ(grad.data.size(), static_cast<size_t>(count(p.shape)));
    for (int64_t i = 0; i < count(p.shape); ++i) {
      auto plus = feeds, minus = feeds;
      plus[p.name].data[i] += h;
      minus[p.name].data[i] -= h;
      double fd = (vouch::interpret(model, plus, vouch::Precision::F64, step)->loss -
                   vouch::interpret(model, minus, vouch::Precision::F64, step)->loss) /
                  (2 * h);
      double err = std::abs(grad.data[i] - fd);
      EXPECT_LE(err, c.atol + c.rtol * std::abs(fd))
          << c.name << ": d loss / d " << p.name << "[" << i
          << "]: vjp " << grad.data[i] << ", finite difference " << fd
          << ", |error| " << err << " > tolerance atol " << c.atol
          << " + rtol " << c.rtol << "·|fd|";
    }
  }

  // The backward pass recomputing every one-operand pointwise result and
  // layer_norm output it can (recompute-min-elements = 1, recompute-layer-norm)
  // gives bitwise the
  // same gradients: the interpreter evaluates the same function of the same
  // values.
  MLIRContext again;
  OwningOpRef<ModuleOp> recomputedModule;
  vouch::ModelOp recomputed = differentiated(again, c, recomputedModule, 1, true);
  ASSERT_TRUE(recomputed);
  auto same = vouch::interpret(recomputed, feeds, vouch::Precision::F64, step);
  ASSERT_TRUE(succeeded(same));
  for (const Param &p : c.params)
    EXPECT_EQ(same->paramGrads.at(p.name).data, analytic->paramGrads.at(p.name).data)
        << c.name << ": d loss / d " << p.name << " with pointwise results recomputed";
}

// The comparison above is not vacuous: recomputation happens in the cases
// whose backward reads a one-operand pointwise result and its operand (relu,
// abs, gelu composed with another op) or a layer_norm's output and its x, and
// only where the result has at least recompute-min-elements elements (none of
// these at the default).
TEST(GradCheckRecompute, CasesWherePointwiseResultsAreRecomputed) {
  std::vector<std::string> recomputed;
  for (const GradCase &c : cases()) {
    MLIRContext a, b, d;
    OwningOpRef<ModuleOp> ma, mb, md;
    vouch::ModelOp every = differentiated(a, c, ma, 1, true), never = differentiated(b, c, mb, 0);
    vouch::ModelOp byDefault = differentiated(d, c, md);
    ASSERT_TRUE(every && never && byDefault);
    EXPECT_EQ(opCount(byDefault), opCount(never)) << c.name;
    if (opCount(every) > opCount(never))
      recomputed.push_back(c.name);
  }
  EXPECT_GE(recomputed.size(), 3u) << "recomputed in: " << ::testing::PrintToString(recomputed);
  EXPECT_GE(std::count(recomputed.begin(), recomputed.end(), "layer_norm"), 2)
      << "recomputed in: " << ::testing::PrintToString(recomputed);
}

INSTANTIATE_TEST_SUITE_P(
    EveryVJP, GradCheck, ::testing::Range<size_t>(0, cases().size()),
    [](const ::testing::TestParamInfo<size_t> &info) {
      return cases()[info.param].name + "_" + std::to_string(info.param);
    });

// masked_softmax's hard mask: blocked elements and a fully blocked row are exact
// zeros, and so is their gradient; kept elements are softmax over the kept ones
// (the reference written here: exp(x) / Σ exp(x) over the kept elements).
TEST(GradCheckMasked, BlockedElementsAndRowsAreExactZerosWithZeroGradient) {
  MLIRContext context;
  GradCase c{"masked_softmax", {{"a", {3, 4}}},
             "  %mask = vouch.target \"mask\" : tensor<3x4xi1>\n"
             "  %out = vouch.masked_softmax %a, %mask axis 1 : (tensor<3x4xf64>, "
             "tensor<3x4xi1>) -> tensor<3x4xf64>",
             {3, 4}, 0, 0};
  OwningOpRef<ModuleOp> module;
  vouch::ModelOp model = differentiated(context, c, module);
  ASSERT_TRUE(model);
  const std::vector<double> mask = {1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1};
  std::mt19937_64 rng(11);
  std::map<std::string, vouch::HostTensor> feeds;
  feeds["r"] = randomTensor({3, 4}, rng);
  feeds["a"] = randomTensor({3, 4}, rng);
  feeds["mask"] = {{3, 4}, mask};
  auto result = vouch::interpret(model, feeds);
  ASSERT_TRUE(succeeded(result));
  const vouch::HostTensor &grad = result->paramGrads.at("a");
  const vouch::HostTensor *out = nullptr;
  for (auto &[value, tensor] : result->values)
    if (auto op = value.getDefiningOp<vouch::MaskedSoftmaxOp>())
      out = &tensor;
  ASSERT_TRUE(out);
  for (int row = 0; row < 3; ++row) {
    double sum = 0;
    for (int k = 0; k < 4; ++k)
      sum += mask[row * 4 + k] ? std::exp(feeds["a"].data[row * 4 + k]) : 0.0;
    for (int k = 0; k < 4; ++k) {
      int at = row * 4 + k;
      if (mask[at] == 0) {
        EXPECT_EQ(out->data[at], 0.0) << "element " << at;
        EXPECT_EQ(grad.data[at], 0.0) << "element " << at;
      } else {
        EXPECT_NEAR(out->data[at], std::exp(feeds["a"].data[at]) / sum, 1e-14)
            << "element " << at;
        EXPECT_NE(grad.data[at], 0.0) << "element " << at;
      }
    }
  }
  // An i1 feed other than 0 / 1 is refused.
  feeds["mask"].data[0] = 0.5;
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) { return success(); });
  EXPECT_TRUE(failed(vouch::interpret(model, feeds)));
}

// The composed form of scaled_dot_product_attention (what programs run)
// against the interpreter's own attention (written out directly, not from
// those ops), every output element, on the masked case of cases(): its
// fully blocked row is zeros in both.
TEST(GradCheckAttention, ComposedFormMatchesTheInterpretersAttention) {
  const GradCase *c = nullptr;
  for (const GradCase &candidate : cases())
    if (candidate.name == "scaled_dot_product_attention" &&
        candidate.fixed.count("mask"))
      c = &candidate;
  ASSERT_TRUE(c);
  MLIRContext context;
  vouch::registerVouchDialect(context);
  std::mt19937_64 rng(5);
  std::map<std::string, vouch::HostTensor> feeds;
  feeds["r"] = randomTensor(c->outShape, rng);
  feeds["mask"] = c->fixed.at("mask");
  for (const Param &p : c->params)
    feeds[p.name] = randomTensor(p.shape, rng);
  // The value the loss's vouch.mul reads (%out), before and after decompose.
  auto outputOf = [&](bool decompose) -> std::vector<double> {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(modelText(*c), &context);
    if (!module)
      return {};
    if (decompose) {
      PassManager pm(&context);
      pm.addNestedPass<vouch::ModelOp>(vouch::createDecompose());
      if (failed(pm.run(*module)))
        return {};
    }
    vouch::ModelOp model = *module->getOps<vouch::ModelOp>().begin();
    auto result = vouch::interpret(model, feeds);
    if (failed(result))
      return {};
    for (auto &[value, tensor] : result->values)
      if (auto mul = value.getDefiningOp<vouch::MulOp>())
        return result->values.at(mul.getLhs()).data;
    return {};
  };
  std::vector<double> direct = outputOf(false), composed = outputOf(true);
  ASSERT_EQ(direct.size(), static_cast<size_t>(count(c->outShape)));
  ASSERT_EQ(composed.size(), direct.size());
  for (size_t i = 0; i < direct.size(); ++i)
    EXPECT_NEAR(direct[i], composed[i], 1e-14) << "element " << i;
  // Batch 0, query 1 sees no key: zeros in each head (result [2, 2, 3, 3]).
  for (int head = 0; head < 2; ++head)
    for (int c3 = 0; c3 < 3; ++c3)
      EXPECT_EQ(direct[(head * 3 + 1) * 3 + c3], 0.0);
}

// The two forms of scaled_dot_product_attention (vouch-decompose's
// `attention` option) give one loss and one gradient per param: the composed
// form's ops and their VJPs against flash_attention and flash_attention_grad
// (which the interpreter computes from their formulas), on every attention
// case (causal with Tq != Tk, a broadcast mask with a fully blocked row, no
// mask).
TEST(GradCheckAttention, FusedAndComposedFormsGiveOneGradient) {
  int checked = 0;
  for (const GradCase &c : cases()) {
    if (c.name != "scaled_dot_product_attention")
      continue;
    ++checked;
    MLIRContext context;
    vouch::registerVouchDialect(context);
    std::mt19937_64 rng(11 + checked);
    std::map<std::string, vouch::HostTensor> feeds;
    feeds["r"] = randomTensor(c.outShape, rng);
    for (const auto &[name, tensor] : c.fixed)
      feeds[name] = tensor;
    for (const Param &p : c.params)
      feeds[p.name] = randomTensor(p.shape, rng);
    auto run = [&](const char *form) -> FailureOr<vouch::InterpreterResult> {
      OwningOpRef<ModuleOp> module =
          parseSourceString<ModuleOp>(modelText(c), &context);
      if (!module)
        return failure();
      PassManager pm(&context);
      vouch::addAutodiffPasses(pm, form);
      if (failed(pm.run(*module)))
        return failure();
      bool fused = false;
      module->walk([&](vouch::FlashAttentionGradOp) { fused = true; });
      EXPECT_EQ(fused, std::string(form) == "fused") << form;
      return vouch::interpret(*module->getOps<vouch::ModelOp>().begin(), feeds);
    };
    auto composed = run("composed"), fused = run("fused");
    ASSERT_TRUE(succeeded(composed) && succeeded(fused)) << c.body;
    EXPECT_NEAR(composed->loss, fused->loss, 1e-13) << c.body;
    for (const Param &p : c.params) {
      const auto &a = composed->paramGrads.at(p.name).data;
      const auto &b = fused->paramGrads.at(p.name).data;
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i)
        EXPECT_NEAR(a[i], b[i], 1e-13)
            << c.body << "\nd loss / d " << p.name << "[" << i << "]";
    }
  }
  EXPECT_EQ(checked, 3);
}

// conv and conv_transpose as programs run them (their composed form: im2col,
// matmul through transpose flags, permute, col2im) against the interpreter's
// own loops (a direct sum for conv, a scatter for conv_transpose, sharing no
// index arithmetic with im2col / col2im), every output element of every case.
TEST(GradCheckConv, ComposedFormMatchesTheInterpretersLoops) {
  int checked = 0;
  for (const GradCase &c : cases()) {
    if (c.name != "conv" && c.name != "conv_transpose")
      continue;
    ++checked;
    MLIRContext context;
    vouch::registerVouchDialect(context);
    std::mt19937_64 rng(31 + checked);
    std::map<std::string, vouch::HostTensor> feeds;
    feeds["r"] = randomTensor(c.outShape, rng);
    for (const Param &p : c.params)
      feeds[p.name] = randomTensor(p.shape, rng);
    auto outputOf = [&](bool decompose) -> std::vector<double> {
      OwningOpRef<ModuleOp> module =
          parseSourceString<ModuleOp>(modelText(c), &context);
      if (!module)
        return {};
      if (decompose) {
        PassManager pm(&context);
        pm.addNestedPass<vouch::ModelOp>(vouch::createDecompose());
        if (failed(pm.run(*module)))
          return {};
        bool composite = false;
        module->walk([&](vouch::CompositeOpInterface) { composite = true; });
        EXPECT_FALSE(composite) << c.body;
      }
      auto result =
          vouch::interpret(*module->getOps<vouch::ModelOp>().begin(), feeds);
      if (failed(result))
        return {};
      for (auto &[value, tensor] : result->values)
        if (auto mul = value.getDefiningOp<vouch::MulOp>())
          return result->values.at(mul.getLhs()).data;
      return {};
    };
    std::vector<double> direct = outputOf(false), composed = outputOf(true);
    ASSERT_EQ(direct.size(), static_cast<size_t>(count(c.outShape))) << c.body;
    ASSERT_EQ(composed.size(), direct.size()) << c.body;
    int nonzero = 0;
    for (size_t i = 0; i < direct.size(); ++i) {
      EXPECT_NEAR(direct[i], composed[i], 1e-13) << c.body << "\nelement " << i;
      nonzero += direct[i] != 0;
    }
    EXPECT_GT(nonzero, 0) << c.body;
  }
  EXPECT_EQ(checked, 8);
}

// Where maximum's / minimum's operands tie, the gradient is split half and half
// (PyTorch's rule; finite differences cannot check it: the function has a kink
// there). Elements 0 and 2 tie, 1 does not; the loss is Σ out ⊙ r.
TEST(GradCheckTies, MaximumAndMinimumSplitTheGradientAtTies) {
  for (const char *op : {"maximum", "minimum"}) {
    MLIRContext context;
    GradCase c{op, {{"a", {3}}, {"b", {3}}},
               std::string("  %out = vouch.") + op +
                   " %a, %b : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>",
               {3}, 0, 0};
    OwningOpRef<ModuleOp> module;
    vouch::ModelOp model = differentiated(context, c, module);
    ASSERT_TRUE(model);
    std::map<std::string, vouch::HostTensor> feeds;
    feeds["r"] = {{3}, {2.0, 3.0, -4.0}};
    feeds["a"] = {{3}, {0.5, 0.9, -0.25}};
    feeds["b"] = {{3}, {0.5, 0.1, -0.25}};
    auto result = vouch::interpret(model, feeds);
    ASSERT_TRUE(succeeded(result));
    bool max = std::string(op) == "maximum";
    // Element 1: a = 0.9 > b = 0.1, so maximum's gradient goes to a, minimum's to b.
    EXPECT_EQ(result->paramGrads.at("a").data,
              (std::vector<double>{1.0, max ? 3.0 : 0.0, -2.0})) << op;
    EXPECT_EQ(result->paramGrads.at("b").data,
              (std::vector<double>{1.0, max ? 0.0 : 3.0, -2.0})) << op;
  }
}

// max_pool's tie rule: a window's gradient goes to its first maximal element
// in row-major window order (PyTorch's), never split; padding never wins, not
// even in a window whose input positions are all negative. x [1, 1, 3, 4],
// kernel [2, 2], stride [1, 2], padding [1, 1]: windows [4, 3], window
// (oh, ow) reading rows oh - 1, oh and columns 2·ow - 1, 2·ow of x.
TEST(GradCheckTies, MaxPoolGivesTheGradientToTheFirstMaximum) {
  MLIRContext context;
  GradCase c{"max_pool", {{"x", {1, 1, 3, 4}}},
             "  %out = vouch.max_pool %x kernel [2, 2] stride [1, 2] padding [1, 1] : "
             "(tensor<1x1x3x4xf64>) -> tensor<1x1x4x3xf64>",
             {1, 1, 4, 3}, 0, 0};
  OwningOpRef<ModuleOp> module;
  vouch::ModelOp model = differentiated(context, c, module);
  ASSERT_TRUE(model);
  std::map<std::string, vouch::HostTensor> feeds;
  feeds["x"] = {{1, 1, 3, 4},
                {0.5, 0.2, 0.2, -0.1,    // 0.2 ties within window (0, 1)
                 -0.3, -0.3, 0.7, -0.4,  // 0.7 ties row 2's in window (2, 1)
                 0.7, 0.7, 0.7, 0.7}};
  std::vector<double> r(12);
  for (int i = 0; i < 12; ++i)
    r[i] = 1 << i; // each window's gradient a distinct power of two
  feeds["r"] = {{1, 1, 4, 3}, r};
  auto result = vouch::interpret(model, feeds);
  ASSERT_TRUE(succeeded(result));
  // Each window's first maximal element, by hand:
  //   oh 0 (row 0):    (0,0) | (0,1) 0.2 before (0,2) 0.2 | (0,3) -0.1 (padding is not 0)
  //   oh 1 (rows 0-1): (0,0) | (1,2) 0.7                  | (0,3) -0.1 over (1,3)
  //   oh 2 (rows 1-2): (2,0) | (1,2) before (2,1), (2,2)  | (2,3)
  //   oh 3 (row 2):    (2,0) | (2,1) before (2,2)         | (2,3)
  const int winner[12][2] = {{0, 0}, {0, 1}, {0, 3}, {0, 0}, {1, 2}, {0, 3},
                             {2, 0}, {1, 2}, {2, 3}, {2, 0}, {2, 1}, {2, 3}};
  std::vector<double> want(12, 0.0), forward(12);
  for (int w = 0; w < 12; ++w) {
    want[winner[w][0] * 4 + winner[w][1]] += r[w];
    forward[w] = feeds["x"].data[winner[w][0] * 4 + winner[w][1]];
  }
  EXPECT_EQ(result->paramGrads.at("x").data, want);
  const vouch::HostTensor *out = nullptr;
  for (auto &[value, tensor] : result->values)
    if (value.getDefiningOp<vouch::MaxPoolOp>())
      out = &tensor;
  ASSERT_TRUE(out);
  EXPECT_EQ(out->data, forward);
  EXPECT_EQ(out->data[2], -0.1); // a window of one negative input position
}

// pow with a fractional exponent (of a² > 0) and with p = 0 (a constant 1:
// no gradient, as PyTorch's pow backward), against finite differences.
TEST(GradCheckPow, FractionalAndZeroExponents) {
  for (const char *p : {"0.5", "-1.5", "0.0"}) {
    MLIRContext context;
    GradCase c{"pow", {{"a", {4}}},
               std::string("  %sq = vouch.mul %a, %a : (tensor<4xf64>, tensor<4xf64>) -> "
                           "tensor<4xf64>\n  %out = vouch.pow %sq p ") +
                   p + " : (tensor<4xf64>) -> tensor<4xf64>",
               {4}, 1e-6, 1e-6};
    OwningOpRef<ModuleOp> module;
    vouch::ModelOp model = differentiated(context, c, module);
    ASSERT_TRUE(model);
    std::mt19937_64 rng(7);
    std::map<std::string, vouch::HostTensor> feeds;
    feeds["r"] = randomTensor({4}, rng);
    feeds["a"] = randomTensor({4}, rng);
    auto analytic = vouch::interpret(model, feeds);
    ASSERT_TRUE(succeeded(analytic));
    for (int i = 0; i < 4; ++i) {
      auto plus = feeds, minus = feeds;
      plus["a"].data[i] += 1e-6;
      minus["a"].data[i] -= 1e-6;
      double fd = (vouch::interpret(model, plus)->loss - vouch::interpret(model, minus)->loss) /
                  2e-6;
      double vjp = analytic->paramGrads.at("a").data[i];
      EXPECT_NEAR(vjp, fd, 1e-6 + 1e-6 * std::abs(fd)) << "p = " << p << ", element " << i;
      if (std::string(p) == "0.0") {
        EXPECT_EQ(vjp, 0.0);
      }
    }
  }
}

// reduce_max / reduce_min split a slice's gradient evenly among the elements
// equal to its extreme (torch.amax / torch.amin).
TEST(GradCheckTies, ReduceMaxAndMinShareTheGradientAmongTies) {
  for (const char *op : {"reduce_max", "reduce_min"}) {
    MLIRContext context;
    GradCase c{op, {{"a", {2, 3}}},
               std::string("  %out = vouch.") + op +
                   " %a axes [1] : (tensor<2x3xf64>) -> tensor<2xf64>",
               {2}, 0, 0};
    OwningOpRef<ModuleOp> module;
    vouch::ModelOp model = differentiated(context, c, module);
    ASSERT_TRUE(model);
    bool max = std::string(op) == "reduce_max";
    std::map<std::string, vouch::HostTensor> feeds;
    feeds["r"] = {{2}, {3.0, -2.0}};
    // Row 0: the extreme (0.5 for max, -0.5 for min) twice; row 1: once.
    feeds["a"] = {{2, 3},
                  max ? std::vector<double>{0.5, 0.1, 0.5, 0.2, 0.9, 0.3}
                      : std::vector<double>{-0.5, 0.1, -0.5, 0.2, -0.9, 0.3}};
    auto result = vouch::interpret(model, feeds);
    ASSERT_TRUE(succeeded(result));
    EXPECT_EQ(result->paramGrads.at("a").data,
              (std::vector<double>{1.5, 0.0, 1.5, 0.0, -2.0, 0.0}))
        << op;
  }
}

// A new op with a VJP rule must come with a gradient check here.
// In a training step dropout is, for that step, a fixed linear map of x: its
// VJP (dropout of dy with the same ordinal) must match finite differences of
// the interpreter at the same (seed, step), through a product of two dropouts
// of different ordinals and p. d out / d a of one dropout alone is the mask
// itself: some entries 0, the rest exactly 1/(1-p), both present.
TEST(GradCheckDropout, TrainingStepsMatchFiniteDifferences) {
  for (uint64_t step : {0, 7}) {
    MLIRContext context;
    GradCase c{"dropout", {{"a", {4, 6}}},
               "  %d = vouch.dropout %a p 3.000000e-01 ordinal 0 : (tensor<4x6xf64>) -> tensor<4x6xf64>\n"
               "  %e = vouch.dropout %a p 5.000000e-01 ordinal 1 : (tensor<4x6xf64>) -> tensor<4x6xf64>\n"
               "  %out = vouch.mul %d, %e : (tensor<4x6xf64>, tensor<4x6xf64>) -> tensor<4x6xf64>",
               {4, 6}, 1e-8, 1e-7};
    OwningOpRef<ModuleOp> module;
    vouch::ModelOp model = differentiated(context, c, module);
    ASSERT_TRUE(model);
    vouch::RandomContext random{2026, step, true};
    std::mt19937_64 rng(step + 11);
    std::map<std::string, vouch::HostTensor> feeds;
    feeds["r"] = randomTensor(c.outShape, rng);
    feeds["a"] = randomTensor({4, 6}, rng);
    auto analytic = vouch::interpret(model, feeds, vouch::Precision::F64, random);
    ASSERT_TRUE(succeeded(analytic));
    const vouch::HostTensor &grad = analytic->paramGrads.at("a");
    const double h = 1e-6;
    int nonzero = 0;
    for (size_t i = 0; i < grad.data.size(); ++i) {
      auto plus = feeds, minus = feeds;
      plus["a"].data[i] += h;
      minus["a"].data[i] -= h;
      double fd = (vouch::interpret(model, plus, vouch::Precision::F64, random)->loss -
                   vouch::interpret(model, minus, vouch::Precision::F64, random)->loss) /
                  (2 * h);
      EXPECT_LE(std::abs(grad.data[i] - fd), 1e-8 + 1e-7 * std::abs(fd))
          << "step " << step << ": d loss / d a[" << i << "]: vjp " << grad.data[i]
          << ", finite difference " << fd;
      nonzero += grad.data[i] != 0;
    }
    // Both masks keep about a third of the products: neither all nor none.
    EXPECT_GT(nonzero, 0);
    EXPECT_LT(nonzero, static_cast<int>(grad.data.size()));

    int zeros = 0, kept = 0;
    const vouch::HostTensor &a = feeds["a"];
    for (auto &[value, tensor] : analytic->values) {
      auto op = value.getDefiningOp<vouch::DropoutOp>();
      if (!op || op.getOrdinal() != 0 || op->hasAttr("vouch.vjp_of"))
        continue;
      for (size_t i = 0; i < tensor.data.size(); ++i) {
        if (tensor.data[i] == 0)
          ++zeros;
        else if (tensor.data[i] == a.data[i] * (1.0 / (1.0 - 0.3)))
          ++kept;
      }
    }
    EXPECT_GT(zeros, 0) << "step " << step;
    EXPECT_GT(kept, 0) << "step " << step;
    EXPECT_EQ(zeros + kept, 24) << "step " << step;
  }
}

// Outside training steps dropout is x itself; rand_uniform and bernoulli_mask
// still draw, keyed by the step.
TEST(GradCheckDropout, PlainForwardIsTheIdentity) {
  MLIRContext context;
  GradCase c{"dropout", {{"a", {2, 3}}},
             "  %out = vouch.dropout %a p 9.000000e-01 ordinal 4 : (tensor<2x3xf64>) -> tensor<2x3xf64>",
             {2, 3}, 0, 0};
  OwningOpRef<ModuleOp> module;
  vouch::ModelOp model = differentiated(context, c, module);
  ASSERT_TRUE(model);
  std::mt19937_64 rng(5);
  std::map<std::string, vouch::HostTensor> feeds;
  feeds["r"] = randomTensor(c.outShape, rng);
  feeds["a"] = randomTensor({2, 3}, rng);
  auto run = vouch::interpret(model, feeds, vouch::Precision::F64,
                              vouch::RandomContext{1, 3, false});
  ASSERT_TRUE(succeeded(run));
  double expected = 0;
  for (int i = 0; i < 6; ++i)
    expected += feeds["a"].data[i] * feeds["r"].data[i];
  EXPECT_DOUBLE_EQ(run->loss, expected);
  EXPECT_EQ(run->paramGrads.at("a").data, feeds["r"].data);
}

TEST(GradCheckCoverage, EveryDifferentiableOpHasACase) {
  MLIRContext context;
  vouch::registerVouchDialect(context);
  std::set<std::string> covered;
  for (const GradCase &c : cases())
    covered.insert("vouch." + c.name);
  int differentiable = 0;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "vouch" ||
        !(name.hasInterface<vouch::VJPOpInterface>() ||
          name.hasInterface<vouch::CompositeOpInterface>()))
      continue;
    ++differentiable;
    EXPECT_TRUE(covered.count(name.getStringRef().str()))
        << name.getStringRef().str()
        << " has a VJP rule (or a composed form's) but no gradient check";
  }
  EXPECT_GE(differentiable, 14); // the ops of the MLP subset
}

} // namespace
