//===- InterpreterTest.cpp - the interpreter on hand-computed values -----===//
//
// Small models whose every value was worked out by hand (in the comments),
// so the oracle itself is checked against something other than code.
//
//===----------------------------------------------------------------------===//
#include "passes/Interpreter.h"

#include <cmath>

#include "gtest/gtest.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;

namespace {

/// Owns the context and the module the interpreter's results refer to.
struct Harness {
  MLIRContext context;
  OwningOpRef<ModuleOp> module;

  FailureOr<vouch::InterpreterResult>
  run(const char *text, const std::map<std::string, vouch::HostTensor> &feeds,
      vouch::Precision precision = vouch::Precision::F64,
      vouch::RandomContext random = vouch::RandomContext()) {
    vouch::registerVouchDialect(context);
    module = parseSourceString<ModuleOp>(text, &context);
    if (!module)
      return failure();
    return vouch::interpret(*module->getOps<vouch::ModelOp>().begin(), feeds,
                            precision, random);
  }
};

TEST(Interpreter, LinearReluMseByHand) {
  // x = (1, 2), W = [[1, 2], [3, 4]], b = (0.5, -1):
  // z = W·x + b = (1 + 4 + 0.5, 3 + 8 - 1) = (5.5, 10); relu keeps both;
  // y = (5, 12): loss = ((0.5)² + (-2)²) / 2 = 2.125.
  Harness h;
  auto result = h.run(R"mlir(
vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x2xf64>
  %y = vouch.target "y" : tensor<1x2xf64>
  %w = vouch.param "w" = "zeros" : tensor<2x2xf64>
  %b = vouch.param "b" = "zeros" : tensor<2xf64>
  %z = vouch.linear %x, %w, %b : (tensor<1x2xf64>, tensor<2x2xf64>, tensor<2xf64>) -> tensor<1x2xf64>
  %r = vouch.relu %z : (tensor<1x2xf64>) -> tensor<1x2xf64>
  %l = vouch.mse_loss %r, %y : (tensor<1x2xf64>, tensor<1x2xf64>) -> tensor<f64>
  vouch.output "r" %r : tensor<1x2xf64>
  vouch.loss %l : tensor<f64>
})mlir",
                    {{"x", {{1, 2}, {1, 2}}},
                     {"y", {{1, 2}, {5, 12}}},
                     {"w", {{2, 2}, {1, 2, 3, 4}}},
                     {"b", {{2}, {0.5, -1}}}});
  ASSERT_TRUE(succeeded(result));
  EXPECT_EQ(result->outputs.at("r").data, (std::vector<double>{5.5, 10}));
  EXPECT_DOUBLE_EQ(result->loss, 2.125);
}

TEST(Interpreter, TransposesReductionsAndBroadcastsByHand) {
  // A = [[1, 2], [3, 4]], B = [[1], [1]]: Aᵀ·B = [[4], [6]].
  // permute(A) = [[1, 3], [2, 4]]; reduce_sum over axis 0 = (3, 7);
  // reduce_mean over both axes = 10 / 4 = 2.5; broadcast (3, 7) to 2x2
  // along axis 1 = [[3, 7], [3, 7]]; scale by -2 then relu = zeros;
  // step(A - 2.5·1) = [[0, 0], [1, 1]].
  Harness h;
  auto result = h.run(R"mlir(
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.input "a" : tensor<2x2xf64>
  %b = vouch.param "b" = "ones" : tensor<2x1xf64>
  %p = vouch.matmul %a, %b {transpose_lhs} : (tensor<2x2xf64>, tensor<2x1xf64>) -> tensor<2x1xf64>
  %t = vouch.permute %a perm [1, 0] : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %s = vouch.reduce_sum %a axes [0] : (tensor<2x2xf64>) -> tensor<2xf64>
  %m = vouch.reduce_mean %a axes [0, 1] : (tensor<2x2xf64>) -> tensor<f64>
  %c = vouch.broadcast %s dims [1] : (tensor<2xf64>) -> tensor<2x2xf64>
  %n = vouch.scale %c by -2.0 : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %z = vouch.relu %n : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %mb = vouch.broadcast %m dims [] : (tensor<f64>) -> tensor<2x2xf64>
  %d = vouch.sub %a, %mb : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  %k = vouch.step %d : (tensor<2x2xf64>) -> tensor<2x2xf64>
  vouch.output "p" %p : tensor<2x1xf64>
  vouch.output "t" %t : tensor<2x2xf64>
  vouch.output "s" %s : tensor<2xf64>
  vouch.output "m" %m : tensor<f64>
  vouch.output "c" %c : tensor<2x2xf64>
  vouch.output "z" %z : tensor<2x2xf64>
  vouch.output "k" %k : tensor<2x2xf64>
})mlir",
                    {{"a", {{2, 2}, {1, 2, 3, 4}}}, {"b", {{2, 1}, {1, 1}}}});
  ASSERT_TRUE(succeeded(result));
  auto out = [&](const char *name) { return result->outputs.at(name).data; };
  EXPECT_EQ(out("p"), (std::vector<double>{4, 6}));
  EXPECT_EQ(out("t"), (std::vector<double>{1, 3, 2, 4}));
  EXPECT_EQ(out("s"), (std::vector<double>{4, 6}));
  EXPECT_EQ(out("m"), (std::vector<double>{2.5}));
  EXPECT_EQ(out("c"), (std::vector<double>{4, 6, 4, 6}));
  EXPECT_EQ(out("z"), (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(out("k"), (std::vector<double>{0, 0, 1, 1}));
}

TEST(Interpreter, RoundBf16IsNearestEvenByHand) {
  // bf16 keeps 8 significant bits: next to 1 its step is 2^-7. 1 + 2^-8 is
  // halfway between 1 and 1 + 2^-7: the even one, 1. 1 + 3·2^-8 is halfway
  // between 1 + 2^-7 (odd) and 1 + 2^-6 (even): 1 + 2^-6. 1 + 2^-8 + 2^-20 is
  // past halfway: 1 + 2^-7. -3 is exact. 3.4e38 is past halfway above bf16's
  // largest, (2 - 2^-7)·2^127: infinity. 1.5·2^-133 is halfway between the
  // subnormals 2^-133 (odd) and 2^-132 (even): 2^-132. Each is read back
  // through a product by 1 (a [6, 1] column times [1, 1]).
  Harness h;
  auto result = h.run(R"mlir(
vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<6x1xf32>
  %w = vouch.input "w" : tensor<1x1xf32>
  %xb = vouch.round_bf16 %x : (tensor<6x1xf32>) -> tensor<6x1xbf16>
  %y = vouch.matmul %xb, %w : (tensor<6x1xbf16>, tensor<1x1xf32>) -> tensor<6x1xf32>
  vouch.output "y" %y : tensor<6x1xf32>
})mlir",
                      {{"x",
                        {{6, 1},
                         {1 + std::ldexp(1.0, -8), 1 + 3 * std::ldexp(1.0, -8),
                          1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -20), -3.0, 3.4e38,
                          1.5 * std::ldexp(1.0, -133)}}},
                       {"w", {{1, 1}, {1}}}});
  ASSERT_TRUE(succeeded(result));
  EXPECT_EQ(result->outputs.at("y").data,
            (std::vector<double>{1.0, 1 + std::ldexp(1.0, -6), 1 + std::ldexp(1.0, -7), -3.0,
                                 INFINITY, std::ldexp(1.0, -132)}));
}

TEST(Interpreter, F32RoundsEveryResultAndReportsMissingFeeds) {
  // 0.1 + 0.2 in float64 is 0.30000000000000004; rounded to float32 after
  // each op it is the float nearest 0.3.
  const char *text = R"mlir(
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 0.1 : tensor<1xf32>
  %b = vouch.fill 0.2 : tensor<1xf32>
  %c = vouch.add %a, %b : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  %x = vouch.input "x" : tensor<1xf32>
  vouch.output "c" %c : tensor<1xf32>
})mlir";
  Harness h64;
  auto f64 = h64.run(text, {{"x", {{1}, {0}}}});
  ASSERT_TRUE(succeeded(f64));
  EXPECT_EQ(f64->outputs.at("c").data[0], 0.1 + 0.2);
  Harness h32;
  auto f32 = h32.run(text, {{"x", {{1}, {0}}}}, vouch::Precision::F32);
  ASSERT_TRUE(succeeded(f32));
  EXPECT_EQ(f32->outputs.at("c").data[0],
            static_cast<double>(0.1f + 0.2f));
  Harness missing;
  std::string message;
  missing.context.getDiagEngine().registerHandler([&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  EXPECT_TRUE(failed(missing.run(text, {})));
  EXPECT_EQ(message, "interpreter: no value fed for 'x'");
}

// batch_norm's rule for its running statistics (vouch.state): a training
// forward normalises with the batch's statistics and updates the state; any
// other forward normalises with the state and leaves it. Two batch_norms on
// one state (a torch module called twice) update it in turn.
//
// x = [[1, 10], [2, 20], [3, 30], [6, 40]] (N = 4, C = 2), eps 0, momentum
// 0.25. Channel 0: mean 3, squared deviations 4 + 1 + 0 + 9 = 14, biased var
// 3.5, unbiased 14 / 3. Channel 1: mean 25, 225 + 25 + 25 + 225 = 500, var
// 125, unbiased 500 / 3. Training from the initial state (0, 1): running mean
// 0.25·(3, 25) = (0.75, 6.25), running var 0.75 + 0.25·(14/3, 500/3) =
// (23/12, 42.41666...); y[0] = ((1 - 3) / √3.5 · 2 + 0.5, (10 - 25) / √125).
// Evaluating with the state fed as (1, 2), (3, 8): y[0] = ((1 - 1) / √3 · 2 +
// 0.5, (10 - 2) / √8) = (0.5, 2√2), and the state stays as fed.
const char *kBatchNormModel = R"mlir(
vouch.model "m" attributes {batch = 4 : i64} {
  %x = vouch.input "x" : tensor<4x2xf64>
  %w = vouch.param "w" = "ones" : tensor<2xf64>
  %b = vouch.param "b" = "zeros" : tensor<2xf64>
  %rm = vouch.state "w.running_mean" = zeros : tensor<2xf64>
  %rv = vouch.state "w.running_var" = ones : tensor<2xf64>
  %y, %mean, %rstd = vouch.batch_norm %x weight %w bias %b running %rm, %rv eps 0.0 momentum 2.500000e-01 : (tensor<4x2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<4x2xf64>, tensor<2xf64>, tensor<2xf64>)
  vouch.output "y" %y : tensor<4x2xf64>
  vouch.output "mean" %mean : tensor<2xf64>
  vouch.output "rstd" %rstd : tensor<2xf64>
})mlir";

TEST(Interpreter, BatchNormTrainsOnTheBatchAndUpdatesItsRunningStatistics) {
  Harness h;
  std::map<std::string, vouch::HostTensor> feeds = {
      {"x", {{4, 2}, {1, 10, 2, 20, 3, 30, 6, 40}}},
      {"w", {{2}, {2, 1}}},
      {"b", {{2}, {0.5, 0}}}};
  auto trained = h.run(kBatchNormModel, feeds, vouch::Precision::F64,
                       vouch::RandomContext{0, 0, true});
  ASSERT_TRUE(succeeded(trained));
  const std::vector<double> &y = trained->outputs.at("y").data;
  EXPECT_NEAR(y[0], -2 / std::sqrt(3.5) * 2 + 0.5, 1e-15);
  EXPECT_NEAR(y[1], -15 / std::sqrt(125.0), 1e-15);
  EXPECT_NEAR(y[6], 3 / std::sqrt(3.5) * 2 + 0.5, 1e-15);
  EXPECT_EQ(trained->outputs.at("mean").data, (std::vector<double>{3, 25}));
  EXPECT_NEAR(trained->outputs.at("rstd").data[0], 1 / std::sqrt(3.5), 1e-16);
  const std::vector<double> &rm = trained->states.at("w.running_mean").data;
  const std::vector<double> &rv = trained->states.at("w.running_var").data;
  EXPECT_EQ(rm, (std::vector<double>{0.75, 6.25}));
  EXPECT_NEAR(rv[0], 23.0 / 12.0, 1e-15);
  EXPECT_NEAR(rv[1], 0.75 + 125.0 / 3.0, 1e-13);

  // Evaluation: the fed state, unchanged.
  feeds["w.running_mean"] = {{2}, {1, 2}};
  feeds["w.running_var"] = {{2}, {3, 8}};
  Harness e;
  auto evaluated = e.run(kBatchNormModel, feeds);
  ASSERT_TRUE(succeeded(evaluated));
  EXPECT_DOUBLE_EQ(evaluated->outputs.at("y").data[0], 0.5);
  EXPECT_NEAR(evaluated->outputs.at("y").data[1], 2 * std::sqrt(2.0), 1e-15);
  EXPECT_EQ(evaluated->outputs.at("mean").data, (std::vector<double>{1, 2}));
  EXPECT_EQ(evaluated->states.at("w.running_mean").data, (std::vector<double>{1, 2}));
  EXPECT_EQ(evaluated->states.at("w.running_var").data, (std::vector<double>{3, 8}));
}

TEST(Interpreter, BatchNormsSharingAStateUpdateItInTurn) {
  // One channel, x = (0, 2) then z = (4, 8), momentum 0.5 each, from (0, 1):
  // the first gives mean 1, unbiased var 2: (0.5, 1.5); the second mean 6,
  // unbiased var 8: (0.5·0.5 + 0.5·6, 0.5·1.5 + 0.5·8) = (3.25, 4.75).
  Harness h;
  auto run = h.run(R"mlir(
vouch.model "m" attributes {batch = 2 : i64} {
  %x = vouch.input "x" : tensor<2x1xf64>
  %z = vouch.input "z" : tensor<2x1xf64>
  %rm = vouch.state "g.running_mean" = zeros : tensor<1xf64>
  %rv = vouch.state "g.running_var" = ones : tensor<1xf64>
  %a, %am, %ar = vouch.batch_norm %x running %rm, %rv eps 1.0e-05 momentum 5.000000e-01 : (tensor<2x1xf64>, tensor<1xf64>, tensor<1xf64>) -> (tensor<2x1xf64>, tensor<1xf64>, tensor<1xf64>)
  %c, %cm, %cr = vouch.batch_norm %z running %rm, %rv eps 1.0e-05 momentum 5.000000e-01 : (tensor<2x1xf64>, tensor<1xf64>, tensor<1xf64>) -> (tensor<2x1xf64>, tensor<1xf64>, tensor<1xf64>)
  vouch.output "c" %c : tensor<2x1xf64>
})mlir",
                   {{"x", {{2, 1}, {0, 2}}}, {"z", {{2, 1}, {4, 8}}}},
                   vouch::Precision::F64, vouch::RandomContext{0, 0, true});
  ASSERT_TRUE(succeeded(run));
  EXPECT_EQ(run->states.at("g.running_mean").data, (std::vector<double>{3.25}));
  EXPECT_EQ(run->states.at("g.running_var").data, (std::vector<double>{4.75}));
}

} // namespace
