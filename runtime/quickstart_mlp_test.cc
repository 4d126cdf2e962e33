// Golden test of the reference semantics end to end: TorchLean's quickstart_mlp
// (Linear(2->8) -> ReLU -> Linear(8->1), xavier weights, zero biases, seeds
// next_seed(S, 0..3), the 25-row grid, batch 1, Adam lr 0.03, MSE) written by hand as
// a CompiledModel<double> over the CPU kernels and run through train_main.
//
// The expected text was printed by an independent float64 Python 3 script that
// re-implements BRIEF.md's reference semantics with scalar loops (no runtime code),
// with the same summation order (left folds, bias added after the sum); relu'(0) = 0.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/test_program.h"
#include "runtime/test_run.h"
#include "runtime/cpu_kernels.h"
#include "runtime/train_main.h"

namespace vouch::rt {
namespace {

constexpr int kIn = 2, kHidden = 8, kOut = 1, kBatch = 1;

// The tape nodes' saved buffers (a TapeNode points at them, so they are static).
const SavedBuffer kSavedLinear1[] = {{"x"}, {"W1"}};
const SavedBuffer kSavedRelu[] = {{"h_pre"}};
const SavedBuffer kSavedLinear2[] = {{"h"}, {"W2"}};
const SavedBuffer kSavedMse[] = {{"pred"}, {"y"}};

class QuickstartMlp : public CompiledModel<double> {
 public:
  double* param(int i) override { return p_[i].data(); }
  double* grad(int i) override { return g_[i].data(); }
  const double* prediction() const override { return pred_.data(); }

  double forward(const double* x, const double* y, Tape* tape) override {
    x_ = x;
    y_ = y;
    linear<double>(kBatch, kIn, kHidden, x, p_[0].data(), p_[1].data(), h_pre_.data());
    if (tape) tape->record({"linear", "unassigned", 0, kSavedLinear1, &linear1_vjp});
    for (int i = 0; i < kBatch * kHidden; i++) h_[i] = h_pre_[i] > 0 ? h_pre_[i] : 0.0;
    if (tape) tape->record({"relu", "unassigned", 1, kSavedRelu, &relu_vjp});
    linear<double>(kBatch, kHidden, kOut, h_.data(), p_[2].data(), p_[3].data(), pred_.data());
    if (tape) tape->record({"linear", "unassigned", 2, kSavedLinear2, &linear2_vjp});
    double loss = mse_loss<double>(kBatch * kOut, pred_.data(), y);
    if (tape) tape->record({"mse_loss", "unassigned", 3, kSavedMse, &mse_vjp});
    return loss;
  }

  void backward(Tape& tape) override {
    for (auto& g : g_)
      for (double& v : g) v = 0;
    tape.backward(this);
  }

 private:
  static QuickstartMlp* self(void* ctx) { return static_cast<QuickstartMlp*>(ctx); }

  static void mse_vjp(void* ctx, int /*node_id*/) {
    QuickstartMlp* m = self(ctx);
    for (int i = 0; i < kBatch * kOut; i++)
      m->dpred_[i] = 2.0 * (m->pred_[i] - m->y_[i]) / double(kBatch * kOut);
  }
  // dW += dYᵀ X (matmul with trans_a, no transposed copy), db += sum over rows,
  // dX = dY W.
  static void linear_vjp(int in, int out, const double* X, const double* W, const double* dY,
                         double* dW, double* db, double* dX) {
    std::vector<double> dw(out * in), dbias(out);
    matmul<double>(true, false, 1, out, in, kBatch, dY, 0, X, 0, dw.data());
    reduce_sum<double>(dY, {kBatch, out}, {0}, dbias.data());
    for (int i = 0; i < out * in; i++) dW[i] += dw[i];
    for (int i = 0; i < out; i++) db[i] += dbias[i];
    if (dX) matmul<double>(false, false, 1, kBatch, in, out, dY, 0, W, 0, dX);
  }
  static void linear2_vjp(void* ctx, int /*node_id*/) {
    QuickstartMlp* m = self(ctx);
    linear_vjp(kHidden, kOut, m->h_.data(), m->p_[2].data(), m->dpred_.data(), m->g_[2].data(),
               m->g_[3].data(), m->dh_.data());
  }
  static void relu_vjp(void* ctx, int /*node_id*/) {
    QuickstartMlp* m = self(ctx);
    for (int i = 0; i < kBatch * kHidden; i++) m->dh_pre_[i] = m->h_pre_[i] > 0 ? m->dh_[i] : 0.0;
  }
  static void linear1_vjp(void* ctx, int /*node_id*/) {
    QuickstartMlp* m = self(ctx);
    linear_vjp(kIn, kHidden, m->x_, m->p_[0].data(), m->dh_pre_.data(), m->g_[0].data(),
               m->g_[1].data(), nullptr);
  }

  std::vector<double> p_[4] = {std::vector<double>(kHidden * kIn), std::vector<double>(kHidden),
                               std::vector<double>(kOut * kHidden), std::vector<double>(kOut)};
  std::vector<double> g_[4] = {p_[0], p_[1], p_[2], p_[3]};
  std::vector<double> h_pre_ = std::vector<double>(kBatch * kHidden), h_ = h_pre_, dh_ = h_pre_,
                      dh_pre_ = h_pre_;
  std::vector<double> pred_ = std::vector<double>(kBatch * kOut), dpred_ = pred_;
  const double* x_ = nullptr;
  const double* y_ = nullptr;
};

std::unique_ptr<CompiledModel<double>> make_mlp() { return std::make_unique<QuickstartMlp>(); }

// The shared quickstart description less its last parameter, the test program's
// extra `unused` (the seeds of the others do not depend on it).
ModelDescription quickstart() {
  ModelDescription m = test_program::quickstart_description();
  m.params.pop_back();
  return m;
}

test_run::RunOutput run_quickstart(std::vector<std::string> args) {
  return test_run::run_captured("./quickstart_mlp", std::move(args), [](int argc, char** argv) {
    return train_main(argc, argv, quickstart(), nullptr, &make_mlp);
  });
}

// The printed text of a run that must succeed.
std::string run(std::vector<std::string> args) {
  test_run::RunOutput r = run_quickstart(std::move(args));
  EXPECT_EQ(r.code, 0) << r.err;
  return r.out;
}

TEST(QuickstartMlpTest, DefaultRun) {
  EXPECT_EQ(run({}), vouch::rt::test_program::kQuickstartGolden);
}

TEST(QuickstartMlpTest, TwoStepsSeed2026) {
  EXPECT_EQ(run({"--device", "cpu", "--steps", "2", "--seed", "2026"}),
            vouch::rt::test_program::kQuickstartTwoStepsSeed2026);
}

TEST(QuickstartMlpTest, MissingF32FactoryIsRefused) {
  test_run::RunOutput r = run_quickstart({"--dtype", "f32"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("built without f32 support"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace vouch::rt
