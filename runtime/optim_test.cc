// Tests for optim.h: two steps of each optimizer on p = [1, -2] with gradients
// [0.5, -0.25] then [0.1, 0.3]. Expected values were computed in Python 3 (float64)
// with the update rules written out as in optim.h / PyTorch's documentation, e.g. Adam:
//   m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g*g
//   p = p - lr * (m/(1-b1**t)) / (math.sqrt(v/(1-b2**t)) + eps)
// and checked by hand on step 1 (Adam moves each entry by ~lr*sign(g); SGD momentum:
// d = 0.5 + 0.01*1 = 0.51, p = 1 - 0.1*0.51 = 0.949).
#include "runtime/optim.h"

#include <gtest/gtest.h>

#include <vector>

namespace vouch::rt {
namespace {

using Trace = std::vector<std::vector<double>>;  // p after step 1, after step 2

template <class T>
Trace run_two_steps(const OptimizerConfig& config) {
  std::vector<T> p = {1, -2}, g(2);
  Optimizer<T> opt(config, {{p.data(), g.data()}}, {2});
  EXPECT_TRUE(opt.status().ok()) << opt.status().message();
  const double grads[2][2] = {{0.5, -0.25}, {0.1, 0.3}};
  Trace trace;
  for (auto& step : grads) {
    g = {T(step[0]), T(step[1])};
    opt.step();
    trace.push_back({double(p[0]), double(p[1])});
  }
  EXPECT_EQ(opt.t(), 2);
  return trace;
}

void expect_trace(const Trace& got, const Trace& want, double tol) {
  for (int s = 0; s < 2; s++)
    for (int j = 0; j < 2; j++)
      EXPECT_NEAR(got[s][j], want[s][j], tol) << "step " << s + 1 << " element " << j;
}

OptimizerConfig make(OptimizerConfig::Kind kind, double lr, double wd, double momentum = 0) {
  OptimizerConfig c;
  c.kind = kind;
  c.lr = lr;
  c.weight_decay = wd;
  c.momentum = momentum;
  return c;
}

// Each test names the capsule whose value contract it is evidence for
// (capsules/Evidence.cpp, key "optimizer").
TEST(OptimTest, Adam) {
  SCOPED_TRACE("reference.adam_step");
  Trace want = {{0.900000002, -1.9000000039999998}, {0.8196959063846518, -1.914294476547747}};
  expect_trace(run_two_steps<double>(make(OptimizerConfig::Adam, 0.1, 0)), want, 1e-15);
  expect_trace(run_two_steps<float>(make(OptimizerConfig::Adam, 0.1, 0)), want, 2e-6);
}

TEST(OptimTest, AdamWithL2WeightDecay) {
  Trace want = {{0.9000000019607843, -1.9000000037037035},
                {0.8189151743261174, -1.9072580129009722}};
  expect_trace(run_two_steps<double>(make(OptimizerConfig::Adam, 0.1, 0.01)), want, 1e-15);
}

TEST(OptimTest, AdamWDecouplesWeightDecay) {
  SCOPED_TRACE("reference.adamw_step");
  Trace want = {{0.890000002, -1.8800000039999998}, {0.8007959063646517, -1.875494476507747}};
  expect_trace(run_two_steps<double>(make(OptimizerConfig::AdamW, 0.1, 0.1)), want, 1e-15);
  expect_trace(run_two_steps<float>(make(OptimizerConfig::AdamW, 0.1, 0.1)), want, 2e-6);
}

TEST(OptimTest, SgdWithMomentumAndWeightDecay) {
  SCOPED_TRACE("reference.sgd_step");
  Trace want = {{0.949, -1.973}, {0.8921509999999999, -1.9767270000000001}};
  expect_trace(run_two_steps<double>(make(OptimizerConfig::Sgd, 0.1, 0.01, 0.9)), want, 1e-15);
}

TEST(OptimTest, PlainSgd) {
  Trace want = {{0.95, -1.975}, {0.94, -2.005}};
  expect_trace(run_two_steps<double>(make(OptimizerConfig::Sgd, 0.1, 0)), want, 1e-15);
  expect_trace(run_two_steps<float>(make(OptimizerConfig::Sgd, 0.1, 0)), want, 1e-6);
}

TEST(OptimTest, RefusesBadConfigurationWithoutTouchingParams) {
  std::vector<double> p = {1}, g = {1};
  OptimizerConfig c = make(OptimizerConfig::Adam, 0.1, 0);
  c.beta1 = 1.0;
  Optimizer<double> bad_beta(c, {{p.data(), g.data()}}, {1});
  ASSERT_FALSE(bad_beta.status().ok());
  EXPECT_NE(bad_beta.status().message().find("beta1"), std::string::npos);
  bad_beta.step();
  EXPECT_EQ(p[0], 1.0);
  EXPECT_EQ(bad_beta.t(), 0);

  Optimizer<double> bad_sizes(make(OptimizerConfig::Sgd, 0.1, 0), {{p.data(), g.data()}}, {1, 2});
  ASSERT_FALSE(bad_sizes.status().ok());
  EXPECT_NE(bad_sizes.status().message().find("1 parameters but 2 sizes"), std::string::npos);
  EXPECT_FALSE(check_optimizer_config(make(OptimizerConfig::Sgd, -1, 0)).ok());
}

}  // namespace
}  // namespace vouch::rt
