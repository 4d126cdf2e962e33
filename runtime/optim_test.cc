// Tests for optim.h: two steps of each optimizer on p = [1, -2] with gradients
// [0.5, -0.25] then [0.1, 0.3]. Expected values were computed in Python 3 (float64)
// with the update rules written out as in optim.h / PyTorch's documentation, e.g. Adam:
//   m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g*g
//   p = p - lr * (m/(1-b1**t)) / (math.sqrt(v/(1-b2**t)) + eps)
// and checked by hand on step 1 (Adam moves each entry by ~lr*sign(g); SGD momentum:
// d = 0.5 + 0.01*1 = 0.51, p = 1 - 0.1*0.51 = 0.949).
#include "runtime/optim.h"

#include <gtest/gtest.h>

#include <cstdio>
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

// decay_min_rank = 2 (GPT-2's practice): a rank-1 param is updated as by Adam without
// decay (OptimTest.Adam's values), a rank-2 one as by AdamW (the test above's).
TEST(OptimTest, AdamWExemptsParamsBelowDecayMinRank) {
  OptimizerConfig c = make(OptimizerConfig::AdamW, 0.1, 0.1);
  c.decay_min_rank = 2;
  c.param_ranks = {1};
  expect_trace(run_two_steps<double>(c),
               {{0.900000002, -1.9000000039999998}, {0.8196959063846518, -1.914294476547747}},
               1e-15);
  c.param_ranks = {2};
  expect_trace(run_two_steps<double>(c),
               {{0.890000002, -1.8800000039999998}, {0.8007959063646517, -1.875494476507747}},
               1e-15);
  EXPECT_FALSE(decays_param(OptimizerConfig{.decay_min_rank = 2, .param_ranks = {0}}, 0));
  EXPECT_TRUE(decays_param(OptimizerConfig{}, 0));
  c.decay_min_rank = 1.5;
  EXPECT_FALSE(check_optimizer_config(c).ok());
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

// RMSprop, Adagrad, the schedules and clipping. Expected values: PyTorch 1.13 in float64
// (/usr/bin/python3, torch.optim.RMSprop / Adagrad / SGD / AdamW, lr_scheduler.StepLR /
// ExponentialLR / LambdaLR with optim.h's warmup-cosine formula, clip_grad_norm_ before
// each step, scheduler.step() after it) on p = [1, -2] with the gradients below.
// Hand check, RMSprop step 1: v = 0.01 g^2, d = g / (0.1 |g| + 1e-8) ~ 10 sign(g),
// p = 1 - 0.01 * 10 = 0.9.
Trace run_steps_of(const OptimizerConfig& config, int steps, bool as_float) {
  const double grads[4][2] = {{0.5, -0.25}, {0.1, 0.3}, {-0.2, 0.4}, {0.3, 0.1}};
  Trace trace;
  auto go = [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> p = {1, -2}, g(2);
    Optimizer<T> opt(config, {{p.data(), g.data()}}, {2});
    EXPECT_TRUE(opt.status().ok()) << opt.status().message();
    for (int s = 0; s < steps; s++) {
      g = {T(grads[s][0]), T(grads[s][1])};
      opt.step();
      trace.push_back({double(p[0]), double(p[1])});
    }
    // The gradient buffers are read, not scaled in place by clipping.
    EXPECT_EQ(double(g[0]), double(T(grads[steps - 1][0])));
  };
  if (as_float) go(0.0f);
  else go(0.0);
  return trace;
}

void expect_steps(const OptimizerConfig& c, const Trace& want, double tol_f64, double tol_f32) {
  std::printf("tolerances: f64 %g, f32 %g (absolute, per element)\n", tol_f64, tol_f32);
  for (bool as_float : {false, true}) {
    Trace got = run_steps_of(c, int(want.size()), as_float);
    for (size_t s = 0; s < want.size(); s++)
      for (int j = 0; j < 2; j++)
        EXPECT_NEAR(got[s][j], want[s][j], as_float ? tol_f32 : tol_f64)
            << (as_float ? "f32" : "f64") << " step " << s + 1 << " element " << j;
  }
}

TEST(OptimTest, RmsProp) {
  SCOPED_TRACE("reference.rmsprop_step");
  OptimizerConfig c = make(OptimizerConfig::RmsProp, 0.01, 0);
  expect_steps(c, {{0.900000019999996, -1.9000000399999841}, {0.8802934383202046, -1.9769800561388529}},
               1e-14, 2e-6);
}

TEST(OptimTest, RmsPropWithMomentumAndWeightDecay) {
  OptimizerConfig c = make(OptimizerConfig::RmsProp, 0.01, 0.1, 0.5);
  c.alpha = 0.9;
  c.eps = 1e-6;
  expect_steps(c, {{0.9683773900641045, -1.9683774456189769}, {0.9422312080797733, -1.959993966451544}},
               1e-14, 2e-6);
}

TEST(OptimTest, Adagrad) {
  SCOPED_TRACE("reference.adagrad_step");
  OptimizerConfig c = make(OptimizerConfig::Adagrad, 0.1, 0);
  c.eps = 1e-10;
  expect_steps(c, {{0.90000000002, -1.90000000004}, {0.8803883865100278, -1.9768221279800653}},
               1e-14, 2e-6);
}

TEST(OptimTest, AdagradWithLrDecayAndWeightDecay) {
  OptimizerConfig c = make(OptimizerConfig::Adagrad, 0.1, 0.1);
  c.lr_decay = 0.5;
  c.eps = 1e-6;
  expect_steps(c, {{0.9000001666663889, -1.9000002222217285}, {0.8798740833939582, -1.915830391063807}},
               1e-14, 2e-6);
}

TEST(OptimTest, StepSchedule) {
  OptimizerConfig c = make(OptimizerConfig::Sgd, 0.1, 0);
  c.schedule = OptimizerConfig::Step;
  c.step_size = 2;
  c.gamma = 0.5;
  expect_steps(c, {{0.95, -1.975}, {0.94, -2.005}, {0.95, -2.025}, {0.9349999999999999, -2.03}},
               1e-15, 1e-6);
  EXPECT_DOUBLE_EQ(lr_at(c, 5), 0.1 * 0.25);
}

TEST(OptimTest, ExponentialSchedule) {
  OptimizerConfig c = make(OptimizerConfig::Sgd, 0.1, 0);
  c.schedule = OptimizerConfig::Exponential;
  c.gamma = 0.5;
  expect_steps(c, {{0.95, -1.975}, {0.945, -1.99}, {0.95, -2.0}, {0.9462499999999999, -2.00125}},
               1e-15, 1e-6);
}

TEST(OptimTest, WarmupCosineSchedule) {
  OptimizerConfig c = make(OptimizerConfig::Sgd, 0.1, 0);
  c.schedule = OptimizerConfig::WarmupCosine;
  c.warmup = 1;
  c.total = 3;
  c.min_lr = 0.01;
  // By hand: lrs 0, 0.1, 0.01 + 0.09 * 0.5 * (1 + cos(pi/2)) = 0.055, 0.01.
  expect_steps(c, {{1.0, -2.0}, {0.99, -2.03}, {1.001, -2.0519999999999996},
                   {0.9979999999999999, -2.0529999999999995}},
               1e-15, 1e-6);
  EXPECT_EQ(lr_at(c, 0), 0.0);
  EXPECT_DOUBLE_EQ(lr_at(c, 2), 0.055);
  EXPECT_DOUBLE_EQ(lr_at(c, 100), 0.01);  // after total: min_lr
}

TEST(OptimTest, ClipGradNorm) {
  SCOPED_TRACE("reference.clip_grad_norm");
  OptimizerConfig c = make(OptimizerConfig::Sgd, 0.1, 0);
  c.clip_grad_norm = 0.4;
  // Step 1: norm sqrt(0.3125) ~ 0.559 > 0.4 is clipped; step 2: norm 0.316 is not.
  expect_steps(c, {{0.9642229763598889, -1.9821114881799444}, {0.9542229763598888, -2.0121114881799445},
                   {0.9721114801799766, -2.04788849582012}, {0.9421114801799766, -2.05788849582012}},
               1e-15, 1e-6);
  EXPECT_EQ(clip_coefficient(1.0, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(clip_coefficient(1.0, 4.0), 1.0 / (4.0 + 1e-6));
}

TEST(OptimTest, AdamWWithWarmupCosineAndClipping) {
  OptimizerConfig c = make(OptimizerConfig::AdamW, 0.1, 0.01);
  c.schedule = OptimizerConfig::WarmupCosine;
  c.warmup = 2;
  c.total = 4;
  c.clip_grad_norm = 0.4;
  expect_steps(c, {{1.0, -2.0}, {0.9572145523487254, -2.0138089899533314},
                   {0.9251050898606716, -2.0735074544944623}, {0.8972204385432212, -2.1029574355130225}},
               1e-14, 2e-6);
}

TEST(OptimTest, RefusesBadSchedulesAndClipping) {
  OptimizerConfig c = make(OptimizerConfig::Sgd, 0.1, 0);
  c.schedule = OptimizerConfig::WarmupCosine;
  c.warmup = 5;
  c.total = 5;
  EXPECT_FALSE(check_optimizer_config(c).ok());
  c = make(OptimizerConfig::Sgd, 0.1, 0);
  c.schedule = OptimizerConfig::Step;
  c.step_size = 0;
  EXPECT_FALSE(check_optimizer_config(c).ok());
  c = make(OptimizerConfig::Sgd, 0.1, 0);
  c.clip_grad_norm = -1;
  EXPECT_FALSE(check_optimizer_config(c).ok());
  c = make(OptimizerConfig::RmsProp, 0.1, 0);
  c.alpha = 1.0;
  EXPECT_FALSE(check_optimizer_config(c).ok());
}

}  // namespace
}  // namespace vouch::rt
