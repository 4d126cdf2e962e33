// Tests for executor.h: check_program's refusals, and CpuProgramModel running the
// hand-written MLP Program of test_program.h, compared with independently written
// loops (the reference below shares no code with the executor or cpu_kernels.h; its
// sums are left folds in the same order, so results must be bit-identical), the tape
// it records, aliases, the prologue, and the whole quickstart run through train_main
// (cpu_program_backend) against the golden text kQuickstartGolden (test_program.h),
// which quickstart_mlp_test.cc's hand-written model prints too.
#include "runtime/executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/test_program.h"
#include "runtime/test_run.h"
#include "runtime/train_main.h"

namespace vouch::rt {
namespace {

using namespace test_program;
using namespace test_run;

// ---- the reference: the MLP's forward and gradients as plain loops ---------------------

template <class T>
struct Reference {
  int64_t B, I, H, O;
  std::vector<T> W1, b1, W2, b2, x, y;
  std::vector<T> h_pre, h, pred, dpred, dW2, db2, dh, dh_pre, dW1, db1;
  T loss = 0;

  void run() {
    h_pre.assign(B * H, 0);
    h.assign(B * H, 0);
    for (int64_t r = 0; r < B; r++)
      for (int64_t j = 0; j < H; j++) {
        T acc = T(0);
        for (int64_t i = 0; i < I; i++) acc += x[r * I + i] * W1[j * I + i];
        h_pre[r * H + j] = acc + b1[j];
        h[r * H + j] = h_pre[r * H + j] > T(0) ? h_pre[r * H + j] : T(0);
      }
    pred.assign(B * O, 0);
    for (int64_t r = 0; r < B; r++)
      for (int64_t o = 0; o < O; o++) {
        T acc = T(0);
        for (int64_t j = 0; j < H; j++) acc += h[r * H + j] * W2[o * H + j];
        pred[r * O + o] = acc + b2[o];
      }
    T sum = T(0);
    for (int64_t e = 0; e < B * O; e++) sum += (pred[e] - y[e]) * (pred[e] - y[e]);
    loss = sum / T(B * O);

    dpred.assign(B * O, 0);
    for (int64_t e = 0; e < B * O; e++) dpred[e] = (pred[e] - y[e]) * T(2.0 / double(B * O));
    dW2.assign(O * H, 0);
    db2.assign(O, 0);
    for (int64_t o = 0; o < O; o++) {
      for (int64_t j = 0; j < H; j++) {
        T acc = T(0);
        for (int64_t r = 0; r < B; r++) acc += dpred[r * O + o] * h[r * H + j];
        dW2[o * H + j] = acc;
      }
      T acc = T(0);
      for (int64_t r = 0; r < B; r++) acc += dpred[r * O + o];
      db2[o] = acc;
    }
    dh.assign(B * H, 0);
    dh_pre.assign(B * H, 0);
    for (int64_t r = 0; r < B; r++)
      for (int64_t j = 0; j < H; j++) {
        T acc = T(0);
        for (int64_t o = 0; o < O; o++) acc += dpred[r * O + o] * W2[o * H + j];
        dh[r * H + j] = acc;
        dh_pre[r * H + j] = acc * (h_pre[r * H + j] > T(0) ? T(1) : T(0));
      }
    dW1.assign(H * I, 0);
    db1.assign(H, 0);
    for (int64_t j = 0; j < H; j++) {
      for (int64_t i = 0; i < I; i++) {
        T acc = T(0);
        for (int64_t r = 0; r < B; r++) acc += dh_pre[r * H + j] * x[r * I + i];
        dW1[j * I + i] = acc;
      }
      T acc = T(0);
      for (int64_t r = 0; r < B; r++) acc += dh_pre[r * H + j];
      db1[j] = acc;
    }
  }
};

// Deterministic values in [-1, 1) that are not round numbers.
template <class T>
std::vector<T> values(int64_t n, int salt) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; i++) v[i] = T(std::sin(double(i * 7 + salt * 13 + 1)) * 0.9);
  return v;
}

template <class T>
void expect_equal(const T* got, const std::vector<T>& want, const char* what) {
  for (size_t i = 0; i < want.size(); i++)
    EXPECT_EQ(got[i], want[i]) << what << "[" << i << "]";
}

template <class T>
class CpuExecutorTest : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CpuExecutorTest, ElementTypes);

// `fused`: linear1's weight gradient as one LinearWeightGrad step (cpu_kernels.h's
// linear_weight_grad), which must give the separate product's and sums' bits.
template <class T>
void expect_reference_bits(bool fused) {
  SCOPED_TRACE(fused ? "dW1 and db1 by one LinearWeightGrad step" : "dW1 and db1 apart");
  MlpProgram mlp(3, 2, 4, 2, fused);
  ASSERT_TRUE(check_program(mlp.program).ok()) << check_program(mlp.program).message();
  CpuProgramModel<T> model(mlp.program, kMlpCpuKernels<T>);
  ASSERT_TRUE(model.status().ok()) << model.status().message();

  Reference<T> ref{3, 2, 4, 2};
  ref.W1 = values<T>(8, 1);
  ref.b1 = values<T>(4, 2);
  ref.W2 = values<T>(8, 3);
  ref.b2 = values<T>(2, 4);
  ref.x = values<T>(6, 5);
  ref.y = values<T>(6, 6);
  ref.run();
  const std::vector<T>* params[] = {&ref.W1, &ref.b1, &ref.W2, &ref.b2};
  for (int i = 0; i < 4; i++) std::copy(params[i]->begin(), params[i]->end(), model.param(i));
  // Poison every gradient: each must be written by the step that produces it.
  for (int i = 0; i < 5; i++)
    std::fill_n(model.grad(i), mlp.buffers[mlp.grads[i]].numel, T(NAN));

  Tape tape;
  T loss = model.forward(ref.x.data(), ref.y.data(), &tape);
  EXPECT_EQ(loss, ref.loss);
  expect_equal(model.prediction(), ref.pred, "pred");
  expect_equal(model.buffer(kHPre), ref.h_pre, "h_pre");
  model.backward(tape);
  expect_equal(model.grad(0), ref.dW1, "dW1");
  expect_equal(model.grad(1), ref.db1, "db1");
  expect_equal(model.grad(2), ref.dW2, "dW2");
  expect_equal(model.grad(3), ref.db2, "db2");
  expect_equal(model.grad(4), std::vector<T>(kUnusedNumel, T(0)), "d_unused (prologue)");
  expect_equal(model.buffer(kDH), ref.dh, "dh");

  // A second step on other data writes every buffer afresh (nothing accumulates).
  Reference<T> ref2 = ref;
  ref2.x = values<T>(6, 7);
  ref2.y = values<T>(6, 8);
  ref2.run();
  tape.clear();
  EXPECT_EQ(model.forward(ref2.x.data(), ref2.y.data(), &tape), ref2.loss);
  model.backward(tape);
  expect_equal(model.grad(0), ref2.dW1, "dW1 (second step)");
  expect_equal(model.grad(1), ref2.db1, "db1 (second step)");
  expect_equal(model.grad(2), ref2.dW2, "dW2 (second step)");
}

// A cpu model of a program check_program (or its own init) refused: it has no params
// and no prediction, a forward pass gives NaN and a backward pass runs nothing (no
// crash).
template <class T>
void ExpectRefusedModelDoesNothing(CpuProgramModel<T>& model) {
  EXPECT_FALSE(model.status().ok());
  EXPECT_EQ(model.param(0), nullptr);
  EXPECT_EQ(model.prediction(), nullptr);
  T x[4] = {}, y[2] = {};
  EXPECT_TRUE(std::isnan(model.forward(x, y, nullptr)));
  Tape tape;
  model.backward(tape);
}

TYPED_TEST(CpuExecutorTest, ForwardAndBackwardMatchTheReferenceBitForBit) {
  expect_reference_bits<TypeParam>(false);
  expect_reference_bits<TypeParam>(true);
}

TEST(CpuExecutorTest, TapeRecordsEveryNodeAfterItsStepInProgramOrder) {
  MlpProgram mlp(2, 2, 3, 1);
  CpuProgramModel<double> model(mlp.program, kMlpCpuKernels<double>);
  ASSERT_TRUE(model.status().ok()) << model.status().message();
  std::vector<double> x = values<double>(4, 1), y = values<double>(2, 2);
  Tape tape;
  model.forward(x.data(), y.data(), &tape);
  ASSERT_EQ(tape.size(), 5u);
  std::ostringstream printed;
  tape.print(printed);
  EXPECT_EQ(printed.str(),
            // Bytes from the buffers of those names (f64); the test program's buffers
            // have no shape text, and its steps no capsule.
            "  #0 linear capsule=test.linear node=3 ran=linear(x, W1, b1) saved=[x 32 B] "
            "vjp=[cublasGemmEx(test gemm) [unassigned], mlp_reduce_sum [unassigned]]\n"
            "  #1 relu capsule=test.relu node=5 ran=mlp_relu saved=[h_pre 48 B] "
            "vjp=[mlp_step [unassigned], mlp_mul [unassigned]]\n"
            "  #2 linear capsule=test.linear node=8 ran=linear(h, W2, b2) "
            "saved=[h 48 B, W2 24 B] "
            "vjp=[cublasGemmEx(test gemm) [unassigned], mlp_reduce_sum [unassigned], "
            "cublasGemmEx(test gemm) [unassigned]]\n"
            "  #3 reshape capsule=test.view node=9 ran=view saved=[]\n"
            "  #4 mse_loss capsule=test.mse_loss node=13 ran=mlp_mse_loss "
            "saved=[pred 16 B, y 16 B] vjp=[mlp_sub [unassigned], mlp_scale [unassigned]]\n");
  EXPECT_STREQ(tape.nodes()[2].kernel, "linear(h, W2, b2)");
  EXPECT_STREQ(tape.nodes()[4].kernel, "mlp_mse_loss");
  EXPECT_EQ(tape.nodes()[3].vjp, nullptr);  // the view: nothing to propagate
  for (size_t i : {0, 1, 2, 4}) EXPECT_NE(tape.nodes()[i].vjp, nullptr) << i;
}

TEST(CpuExecutorTest, EachNodesVjpRunsExactlyItsOwnSteps) {
  MlpProgram mlp(2, 2, 3, 2);
  CpuProgramModel<double> model(mlp.program, kMlpCpuKernels<double>);
  ASSERT_TRUE(model.status().ok());
  std::vector<double> x = values<double>(4, 3), y = values<double>(4, 4);
  for (int i = 0; i < 4; i++) {
    std::vector<double> p = values<double>(mlp.buffers[mlp.params[i]].numel, 10 + i);
    std::copy(p.begin(), p.end(), model.param(i));
  }
  Tape full;
  model.forward(x.data(), y.data(), &full);
  for (int i = 0; i < 5; i++) std::fill_n(model.grad(i), mlp.buffers[mlp.grads[i]].numel, 5.0);
  std::fill_n(model.buffer(kDPred), 4, 5.0);
  // Only the mse node: its VJP writes dpred, and the other nodes' outputs stay
  // poisoned; backward() still runs the prologue first, which fills d_unused with 0.
  Tape mse_only;
  mse_only.record(full.nodes()[4]);
  model.backward(mse_only);
  for (int e = 0; e < 4; e++) {
    double pred = model.prediction()[e];
    EXPECT_EQ(model.buffer(kDPred)[e], (pred - y[e]) * (2.0 / 4.0)) << e;
  }
  EXPECT_EQ(model.grad(2)[0], 5.0);  // dW2: linear2's VJP did not run
  EXPECT_EQ(model.grad(0)[0], 5.0);  // dW1
  EXPECT_EQ(model.grad(4)[0], 0.0);  // the prologue ran
}

TEST(CpuExecutorTest, AliasesShareTheirOwnersStorageAndOwnersDoNotOverlap) {
  MlpProgram mlp(3, 2, 5, 2);
  CpuProgramModel<float> model(mlp.program, kMlpCpuKernels<float>);
  ASSERT_TRUE(model.status().ok());
  EXPECT_EQ(model.buffer(kPredFlat), model.buffer(kPred));
  EXPECT_EQ(model.buffer(kPredRow), model.buffer(kPred));  // alias of an alias
  EXPECT_EQ(storage_owner(mlp.program, kPredRow), kPred);
  EXPECT_EQ(model.prediction(), model.buffer(kPred));
  // Owners are disjoint ranges.
  std::vector<std::pair<const float*, const float*>> ranges;
  for (int32_t b = 0; b < mlp.program.num_buffers; b++)
    if (mlp.buffers[b].alias_of == -1)
      ranges.push_back({model.buffer(b), model.buffer(b) + mlp.buffers[b].numel});
  for (size_t i = 0; i < ranges.size(); i++)
    for (size_t j = i + 1; j < ranges.size(); j++)
      EXPECT_TRUE(ranges[i].second <= ranges[j].first || ranges[j].second <= ranges[i].first)
          << i << " " << j;
  EXPECT_EQ(model.buffer(-1), nullptr);
  EXPECT_EQ(model.buffer(kNumMlpBuffers), nullptr);
  EXPECT_EQ(model.param(5), nullptr);
  EXPECT_EQ(model.grad(-1), nullptr);
}

// ---- refusals ----------------------------------------------------------------------------

std::string refusal(MlpProgram& mlp) {
  Status s = check_program(mlp.program);
  return s.ok() ? "<accepted>" : s.message();
}

TEST(CheckProgramTest, RefusesInconsistentTables) {
  {
    MlpProgram mlp(2, 2, 3, 1);
    mlp.buffers[kPred].alias_of = kPredRow;  // pred -> pred_row -> pred_flat -> pred
    EXPECT_TRUE(contains(refusal(mlp), "is on an alias cycle")) << refusal(mlp);
  }
  {
    MlpProgram mlp(2, 2, 3, 1);
    mlp.buffers[kPredFlat].numel = 5;
    EXPECT_EQ(refusal(mlp), "program `test_mlp`: buffer 10 (pred_flat) has 5 elements, more "
                            "than the 2 of the storage it aliases (pred)");
  }
  {
    MlpProgram mlp(2, 2, 3, 1);
    mlp.args[0].value = 99;
    EXPECT_EQ(refusal(mlp), "program `test_mlp`: argument 0 names buffer 99, out of range");
  }
  {
    MlpProgram mlp(2, 2, 3, 1);
    mlp.args[mlp.steps[1].first_arg].count = 0;  // relu's output, now only "read"
    EXPECT_TRUE(contains(refusal(mlp), "no Buffer argument is marked written (count 1)"))
        << refusal(mlp);
  }
  {
    MlpProgram mlp(2, 2, 3, 1);
    mlp.program.num_ints = 7;  // the last Dims reads ints [6, +2)
    EXPECT_TRUE(contains(refusal(mlp), "reads ints [6, +2) beyond Program::num_ints = 7"))
        << refusal(mlp);
  }
  {
    MlpProgram mlp(2, 2, 3, 1);
    mlp.program.num_args = 3;
    EXPECT_TRUE(contains(refusal(mlp), "program step 3: arguments [3, +4) exceed "
                                       "Program::num_args = 3"))
        << refusal(mlp);
  }
  {
    MlpProgram mlp(2, 2, 3, 1);
    mlp.steps[7].k = 3;  // dW2 = dpredᵀ h with K = 3 rows: dpred has only 2
    EXPECT_EQ(refusal(mlp), "program `test_mlp`: program step 7: lhs buffer 13 (dpred) holds 2 "
                            "elements, the step reads or writes 3");
  }
  {
    MlpProgram mlp(2, 2, 3, 1);
    mlp.steps[2].n = 2;  // pred = h W2ᵀ with 2 outputs: W2 holds 1 x 3
    EXPECT_EQ(refusal(mlp), "program `test_mlp`: program step 2: W buffer " +
                                std::to_string(kW2) + " (W2) holds 3 elements, the step reads "
                                "or writes 6");
  }
  {
    MlpProgram mlp(2, 2, 3, 1);
    mlp.steps[2].bias = -1;  // a linear without a bias: accepted
    EXPECT_EQ(refusal(mlp), "<accepted>");
  }
  {
    MlpProgram mlp(2, 2, 3, 1, /*weight_grad_step=*/true);
    mlp.steps[12].bias = 99;  // dW1 and db1: db1's buffer out of range
    EXPECT_TRUE(contains(refusal(mlp), "program step 12: db buffer 99 is out of range"))
        << refusal(mlp);
  }
  {
    MlpProgram mlp(2, 2, 3, 1);
    mlp.steps[1].kernel = kNumMlpKernels;
    EXPECT_TRUE(contains(refusal(mlp), "program step 1: kernel 8 is out of range [0, 8)"));
  }
  {
    MlpProgram mlp(2, 2, 3, 1);
    mlp.nodes[1].after_step = kPrologueStep;
    EXPECT_EQ(refusal(mlp), "program `test_mlp`: node 1 (id 5) is recorded after step 4, not "
                            "a forward step [0, 4)");
  }
  {
    MlpProgram mlp(2, 2, 3, 1);
    mlp.nodes[4].id = kReluNode;
    EXPECT_EQ(refusal(mlp), "program `test_mlp`: node 4 (id 5) repeats the id of node 1");
  }
  {
    MlpProgram mlp(2, 2, 3, 1);
    mlp.nodes[0].vjp_end = 15;
    EXPECT_TRUE(contains(refusal(mlp), "VJP steps [12, 15) are not a range of steps"));
  }
  {
    MlpProgram mlp(2, 2, 3, 1);
    mlp.grads[1] = kDW1;
    EXPECT_EQ(refusal(mlp), "program `test_mlp`: param 1 (b1) and its gradient differ in size");
  }
  {
    MlpProgram mlp(2, 2, 3, 1);
    mlp.args[mlp.steps[8].first_arg + 2].count = kMaxDims + 1;
    EXPECT_TRUE(contains(refusal(mlp), "has 9 axes (at most 8)")) << refusal(mlp);
  }
}

// Bf16 buffers (a cuda --precision bf16 build's rounded product operands) are never a
// value read or written as T: a data field, a param or gradient, the loss, the output,
// a product's output or bias. As a product's factor or a kernel's argument they pass
// check_program (the cuda executor checks their layouts, runtime/cuda/executor_test.cc).
TEST(CheckProgramTest, RefusesABf16BufferWhereAValueIsReal) {
  // The buffers made bf16, and check_program's answer.
  const struct {
    std::vector<int32_t> buffers;
    const char* answer;
  } cases[] = {
      // linear2's x and the gemm's B (factors), a kernel's argument
      {{kH, kMask}, "<accepted>"},
      {{kW2},
       "program `test_mlp`: param 2 (W2): the param (buffer 2, W2) is bf16; params and "
       "gradients are real"},
      {{kDB1},
       "program `test_mlp`: param 1 (b1): its gradient (buffer 20, db1) is bf16; params and "
       "gradients are real"},
      {{kX}, "program `test_mlp`: data field 0 (x) is bf16; a field is real or int32"},
      {{kLoss},
       "program `test_mlp`: the loss (buffer 11, loss) is bf16; the loss and the output must "
       "be real"},
      {{kPred, kPredFlat, kPredRow},
       "program `test_mlp`: the output (buffer 9, pred) is bf16; the loss and the output "
       "must be real"},
  };
  for (const auto& c : cases) {
    MlpProgram mlp(2, 2, 3, 1);
    for (int32_t b : c.buffers) mlp.buffers[b].dtype = DType::Bf16;
    EXPECT_EQ(refusal(mlp), c.answer);
  }
  {
    // A linear's y may be bf16 (cuBLASLt's D; the cuda executor's check_bf16_buffers
    // holds it to a run with bf16 products and an unpadded output), its bias then bf16
    // too (cuBLASLt adds a bias of D's type).
    MlpProgram mlp(2, 2, 3, 1);
    mlp.buffers[kHPre].dtype = DType::Bf16;
    EXPECT_TRUE(contains(refusal(mlp), "program step 0: bias buffer 1 (b1) is real but y buffer "
                                       "7 (h_pre) is bf16: a linear's bias is bf16 exactly when "
                                       "its y is"))
        << refusal(mlp);
    mlp.buffers[kMask].numel = 3;
    mlp.buffers[kMask].dtype = DType::Bf16;
    mlp.steps[0].bias = kMask;
    EXPECT_EQ(refusal(mlp), "<accepted>");
  }
  {
    MlpProgram mlp(2, 2, 3, 1);
    mlp.buffers[kDH].dtype = DType::Bf16;  // the gemm's C
    EXPECT_TRUE(contains(refusal(mlp), "program step 9: C buffer 16 (dh) is bf16"))
        << refusal(mlp);
  }
  {
    // A bf16 view takes 2 bytes an element: it may alias f32 storage of half its count
    // (codegen's storage plan puts bf16 values in slots so).
    MlpProgram mlp(2, 2, 3, 1);  // pred: 2 elements
    mlp.buffers[kPredFlat].dtype = DType::Bf16;
    mlp.buffers[kPredFlat].numel = 4;
    EXPECT_EQ(refusal(mlp), "<accepted>");
    mlp.buffers[kPredFlat].numel = 5;
    EXPECT_EQ(refusal(mlp), "program `test_mlp`: buffer 10 (pred_flat) needs 10 bytes (5 bf16), "
                            "more than the 8 of the storage it aliases (pred, 2 f32)");
  }
  {
    // A linear's bias (a param here, so give the linear another one).
    MlpProgram mlp(2, 2, 3, 1);
    mlp.buffers[kMask].numel = 1;
    mlp.buffers[kMask].dtype = DType::Bf16;
    mlp.steps[2].bias = kMask;
    EXPECT_TRUE(contains(refusal(mlp), "program step 2: bias buffer 17 (mask) is bf16 but y "
                                       "buffer 9 (pred) is real: a linear's bias is bf16 exactly "
                                       "when its y is"))
        << refusal(mlp);
  }
}

// The cpu executor runs no bf16 products: a program with a Bf16 buffer is refused, not
// run with its bits read as T.
TEST(CheckProgramTest, TheCpuExecutorRefusesABf16Buffer) {
  MlpProgram mlp(2, 2, 3, 1);
  mlp.buffers[kH].dtype = DType::Bf16;
  ASSERT_TRUE(check_program(mlp.program).ok());
  CpuProgramModel<float> model(mlp.program, kMlpCpuKernels<float>);
  EXPECT_EQ(model.status().message(),
            "program `test_mlp`: buffer 8 (h) is bf16: bf16 buffers are for the products of a "
            "cuda build with --precision bf16, which the cpu executor does not run");
  ExpectRefusedModelDoesNothing(model);
}

// The tape names a saved Bf16 buffer's dtype and its bytes (2 an element), whatever the
// run's real type.
TEST(CpuExecutorTest, TheTapeNamesABf16SavedBuffer) {
  MlpProgram mlp(2, 2, 3, 1);
  mlp.buffers[kH].dtype = DType::Bf16;
  mlp.buffers[kH].shape = "[2, 3]";
  mlp.buffers[kW2].shape = "[1, 3]";
  mlp.buffers[kX].dtype = DType::Real;
  mlp.buffers[kX].shape = "[2, 2]";
  for (int64_t real_bytes : {4, 8}) {
    ProgramTape program_tape;
    program_tape.build(mlp.program, nullptr, real_bytes);
    Tape tape;
    for (int32_t s = 0; s < kForwardEnd; s++) program_tape.record_after(s, &tape);
    std::ostringstream printed;
    tape.print(printed);
    const std::string real = real_bytes == 8 ? "f64" : "f32";
    EXPECT_TRUE(contains(printed.str(), "saved=[h bf16[2, 3] 12 B, W2 " + real + "[1, 3] " +
                                            std::to_string(3 * real_bytes) + " B]"))
        << printed.str();
    EXPECT_TRUE(contains(printed.str(), "saved=[x " + real + "[2, 2] " +
                                            std::to_string(4 * real_bytes) + " B]"))
        << printed.str();
  }
  EXPECT_EQ(element_bytes(DType::Bf16, 8), 2);
  EXPECT_EQ(element_bytes(DType::I32, 8), 4);
  EXPECT_EQ(element_bytes(DType::Real, 8), 8);
  EXPECT_STREQ(dtype_name(DType::Bf16, 4), "bf16");
}

// Data fields: an int32 field travels as int32 into its buffer (a kernel reading it
// as int32_t sees the labels), a real one as T; forward(x, y) is refused for a
// program whose fields are not one real input and one real target.
template <class T>
void pick_kernel(const ArgValue* args) {  // loss[0] = x[labels[1]] (rows: 3 reals)
  const T* x = static_cast<const T*>(args[0].ptr);
  const int32_t* labels = static_cast<const int32_t*>(args[1].ptr);
  static_cast<T*>(args[2].ptr)[0] = x[labels[1]] + T(labels[0]);
}

TEST(CpuExecutorTest, AnInt32FieldReachesItsKernelAsInt32) {
  const BufferDesc buffers[] = {{3, -1, "x", "[1, 3]", DType::Real},
                                {2, -1, "labels", "[2]", DType::I32},
                                {1, -1, "loss", "[]", DType::Real}};
  const ArgDesc args[] = {{ArgDesc::Buffer, 0, 0, 0}, {ArgDesc::Buffer, 1, 0, 0},
                          {ArgDesc::Buffer, 2, 1, 0}};
  StepDesc step{};
  step.kind = StepKind::Kernel;
  step.num_args = 3;
  step.what = "pick";
  const char* names[] = {"pick"};
  const int32_t fields[] = {0, 1};
  Program p{};
  p.name = "fields";
  p.buffers = buffers;
  p.num_buffers = 3;
  p.loss = 2;
  p.output = 2;
  p.steps = &step;
  p.num_steps = 1;
  p.forward_end = 1;
  p.prologue_begin = p.prologue_end = 1;
  p.args = args;
  p.num_args = 3;
  p.kernel_names = names;
  p.num_kernels = 1;
  p.fields = fields;
  p.num_fields = 2;
  const CpuKernelFn kernels[] = {&pick_kernel<double>};
  CpuProgramModel<double> model(p, kernels);
  ASSERT_TRUE(model.status().ok()) << model.status().message();
  const double x[] = {0.5, 1.5, 2.5};
  const int32_t labels[] = {10, 2};
  const void* batch[] = {x, labels};
  EXPECT_EQ(model.forward_fields(batch, nullptr), 12.5);
  EXPECT_TRUE(std::isnan(model.forward(x, x, nullptr)));
  EXPECT_TRUE(contains(model.status().message(), "not one real input and one real target"))
      << model.status().message();

  Program unfed = p;
  unfed.num_fields = 0;
  CpuProgramModel<double> none(unfed, kernels);
  EXPECT_TRUE(contains(none.status().message(), "no data fields")) << none.status().message();
  Program bad = p;
  const int32_t out_of_range[] = {0, 7};
  bad.fields = out_of_range;
  CpuProgramModel<double> wrong(bad, kernels);
  EXPECT_TRUE(contains(wrong.status().message(), "data field 1: buffer 7 is out of range"))
      << wrong.status().message();
}

// Every step of the program below runs `log_step`: it appends its Int argument (the
// step's own index) to this log, so a run shows the order the executor ran steps in.
std::vector<int64_t> step_log;
void log_step(const ArgValue* a) {
  step_log.push_back(a[1].i);
  static_cast<double*>(a[0].ptr)[0] = 1;
}

// training_step_order is the order a training step really runs in (codegen's storage
// plan reads lifetimes off it): forward steps, the prologue, then the VJPs of the
// nodes last recorded first, where nodes are recorded by after_step and, after one
// step, in table order (d before b below, though b comes later in no other sense);
// a node without VJP steps adds none, and a step in no range never runs.
TEST(TrainingStepOrderTest, IsTheOrderTheCpuExecutorRunsATrainingStepIn) {
  const BufferDesc buffers[] = {{1, -1, "x", "[]", DType::Real},
                                {1, -1, "loss", "[]", DType::Real}};
  constexpr int32_t kSteps = 10;
  std::vector<ArgDesc> args;
  std::vector<StepDesc> steps(kSteps);
  for (int32_t s = 0; s < kSteps; s++) {
    steps[s].kind = StepKind::Kernel;
    steps[s].first_arg = int32_t(args.size());
    steps[s].num_args = 2;
    steps[s].what = "log";
    args.push_back({ArgDesc::Buffer, 1, 1, 0});
    args.push_back({ArgDesc::Int, s, 0, 0});
  }
  // forward [0, 3), VJPs [3, 7) and [8, 9), prologue [7, 8); step 9 is in no range.
  const NodeDesc nodes[] = {{4, "d", "c", "k", 2, 8, 9, nullptr, 0},
                            {1, "a", "c", "k", 0, 5, 7, nullptr, 0},
                            {3, "c", "c", "k", 1, 9, 9, nullptr, 0},
                            {2, "b", "c", "k", 2, 3, 5, nullptr, 0}};
  const char* names[] = {"log"};
  const int32_t fields[] = {0};
  Program p{};
  p.name = "order";
  p.buffers = buffers;
  p.num_buffers = 2;
  p.loss = p.output = 1;
  p.steps = steps.data();
  p.num_steps = kSteps;
  p.forward_end = 3;
  p.prologue_begin = 7;
  p.prologue_end = 8;
  p.args = args.data();
  p.num_args = int32_t(args.size());
  p.nodes = nodes;
  p.num_nodes = 4;
  p.kernel_names = names;
  p.num_kernels = 1;
  p.fields = fields;
  p.num_fields = 1;
  const CpuKernelFn kernels[] = {&log_step};
  CpuProgramModel<double> model(p, kernels);
  ASSERT_TRUE(model.status().ok()) << model.status().message();
  step_log.clear();
  Tape tape;
  const double x = 0;
  const void* batch[] = {&x};
  model.forward_fields(batch, &tape);
  model.backward(tape);
  const std::vector<int64_t> expected = {0, 1, 2, 7, 3, 4, 8, 5, 6};
  EXPECT_EQ(step_log, expected);
  const std::vector<int32_t> order = training_step_order(p);
  EXPECT_EQ(std::vector<int64_t>(order.begin(), order.end()), step_log);
}

TEST(CheckProgramTest, AnExecutorOfARefusedProgramSaysWhyAndDoesNothing) {
  MlpProgram mlp(2, 2, 3, 1);
  mlp.program.forward_end = 20;
  CpuProgramModel<double> model(mlp.program, kMlpCpuKernels<double>);
  EXPECT_FALSE(model.status().ok());
  EXPECT_EQ(model.configure(RunConfig{}).message(),
            "program `test_mlp`: forward_end 20 is out of [0, 14]");
  ExpectRefusedModelDoesNothing(model);
}

TEST(CheckProgramTest, AMissingCpuKernelIsNamed) {
  MlpProgram mlp(2, 2, 3, 1);
  CpuKernelFn table[kNumMlpKernels];
  for (int k = 0; k < kNumMlpKernels; k++) table[k] = kMlpCpuKernels<double>[k];
  table[kReduceSum] = nullptr;
  CpuProgramModel<double> model(mlp.program, table);
  EXPECT_EQ(model.status().message(),
            "program `test_mlp`: step 8: cpu kernel 7 (mlp_reduce_sum) is missing from the "
            "table");
  CpuProgramModel<double> no_table(mlp.program, nullptr);
  EXPECT_FALSE(no_table.status().ok());
}

// ---- the quickstart through train_main: the golden text (test_program.h) ---------------

RunOutput run(const Backend& backend, std::vector<std::string> args) {
  return run_captured("./quickstart_mlp", std::move(args), [&](int argc, char** argv) {
    return train_main(argc, argv, quickstart_description(), {backend});
  });
}

TEST(CpuProgramBackendTest, QuickstartMatchesTheGoldenRun) {
  // 25 batches, each step on batch k mod 25: evidence for reference.select_batch
  // (capsules/Evidence.cpp, key "cpu-executor").
  SCOPED_TRACE("reference.select_batch");
  MlpProgram mlp(1, 2, 8, 1);
  Backend cpu = cpu_program_backend(mlp.program, kMlpCpuKernels<float>, kMlpCpuKernels<double>,
                                    "backend: cpu (test)", {});
  RunOutput r = run(cpu, {});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, kQuickstartGolden);
  EXPECT_EQ(run(cpu, {"--device", "cpu", "--steps", "2", "--seed", "2026"}).out,
            kQuickstartTwoStepsSeed2026);
}

TEST(CpuProgramBackendTest, ShowBackendPrintsHeaderScheduleAndReportsAtFirstUse) {
  MlpProgram mlp(1, 2, 8, 1);
  Backend cpu = cpu_program_backend(mlp.program, nullptr, kMlpCpuKernels<double>,
                                    "backend: cpu (test)",
                                    {{"test.linear", "linear: test.linear report\n"},
                                     {"test.adam_step", "adam_step: test.adam_step report\n"}});
  EXPECT_EQ(cpu.device, Device::Cpu);
  EXPECT_FALSE(bool(cpu.make_f32));
  RunOutput r = run(cpu, {"--steps", "1", "--show-backend", "--show-tape"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out,
                       "tape of step 0 (5 nodes, backward runs them last to first):\n"
                       "  #0 linear capsule=test.linear node=3 ran=linear(x, W1, b1) "
                       "saved=[x 16 B] "))
      << r.out;
  EXPECT_TRUE(contains(r.out,
                       "backend: cpu (test)\n"
                       "test schedule: 14 steps\n"
                       "linear: test.linear report\n"
                       "  ran: linear(x, W1, b1)\n"
                       "relu: test.relu (no report recorded)\n"
                       "  ran: mlp_relu\n"
                       "reshape: test.view (no report recorded)\n"
                       "  ran: view\n"
                       "mse_loss: test.mse_loss (no report recorded)\n"
                       "  ran: mlp_mse_loss\n"
                       // A capsule no forward node ran under: printed after them.
                       "the other capsules of the step (VJPs, batch, optimizer):\n"
                       "adam_step: test.adam_step report\n"
                       "step 0: loss="))
      << r.out;

  RunOutput f32 = run(cpu, {"--dtype", "f32"});
  EXPECT_EQ(f32.code, 2);
  EXPECT_TRUE(contains(f32.err, "built without f32 support")) << f32.err;
}

TEST(CpuProgramBackendTest, Float32RunIsCloseToTheFloat64Golden) {
  MlpProgram mlp(1, 2, 8, 1);
  Backend cpu = cpu_program_backend(mlp.program, kMlpCpuKernels<float>, nullptr, "cpu", {});
  RunOutput r = run(cpu, {"--dtype", "f32"});
  EXPECT_EQ(r.code, 0) << r.err;
  double before = 0, after = 0;
  ASSERT_TRUE(read_mean_losses(r.out, before, after)) << r.out;
  // Printed to 6 decimals, f32 and f64 read the same (f32 mean_loss(after) =
  // 0.0025211958 at full precision, f64 0.0025211878); 2e-6 leaves two printed units.
  EXPECT_NEAR(before, 1.349908, 2e-6);
  EXPECT_NEAR(after, 0.002521, 2e-6);
}

}  // namespace
}  // namespace vouch::rt
