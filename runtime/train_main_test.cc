// Tests for train_main.h, driving train_main with a hand-written CompiledModel: the
// linear model pred = W.x + b (W [1,2] xavier_uniform, b [1] zeros), MSE loss, Adam
// lr 0.03, on the regression grid. The expected outputs were produced by an
// independent float64 Python 3 script that re-implements the reference semantics
// (splitmix64 seeds, xavier init, grid data, batch k mod num_batches, the same
// left-fold sums, Adam with bias correction) and prints with '%f'.
#include "runtime/train_main.h"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "runtime/cpu_kernels.h"
#include "runtime/optim.h"
#include "runtime/safetensors.h"
#include "runtime/test_files.h"
#include "runtime/test_run.h"

namespace vouch::rt {
namespace {

using namespace test_run;

using test_files::temp_path;
using test_files::write_temp;

// The tape nodes' saved buffers (a TapeNode points at them, so they are static).
const SavedBuffer kSavedLinear[] = {{"x"}, {"W"}};
const SavedBuffer kSavedMse[] = {{"pred"}, {"y"}};

// pred[r] = W . x[r] + b, loss = mean (pred - y)^2, over a batch of B rows.
template <class T, int B>
class LinearModel : public CompiledModel<T> {
 public:
  T* param(int i) override { return i == 0 ? W_ : b_; }
  T* grad(int i) override { return i == 0 ? gW_ : gb_; }
  const T* prediction() const override { return pred_; }

  T forward(const T* x, const T* y, Tape* tape) override {
    x_ = x;
    y_ = y;
    linear<T>(B, 2, 1, x, W_, b_, pred_);
    if (tape) tape->record({"linear", "unassigned", 0, kSavedLinear, &linear_vjp});
    T loss = mse_loss<T>(B, pred_, y);
    if (tape) tape->record({"mse_loss", "unassigned", 1, kSavedMse, &mse_vjp});
    return loss;
  }

  void backward(Tape& tape) override {
    gW_[0] = gW_[1] = gb_[0] = T(0);
    tape.backward(this);
  }

 private:
  static void mse_vjp(void* ctx, int /*node_id*/) {
    auto* m = static_cast<LinearModel*>(ctx);
    for (int r = 0; r < B; r++) m->dpred_[r] = T(2) * (m->pred_[r] - m->y_[r]) / T(B);
  }
  static void linear_vjp(void* ctx, int /*node_id*/) {
    auto* m = static_cast<LinearModel*>(ctx);
    for (int j = 0; j < 2; j++) {
      T acc = T(0);
      for (int r = 0; r < B; r++) acc += m->dpred_[r] * m->x_[r * 2 + j];
      m->gW_[j] += acc;
    }
    T acc = T(0);
    for (int r = 0; r < B; r++) acc += m->dpred_[r];
    m->gb_[0] += acc;
  }

  T W_[2], b_[1], gW_[2], gb_[1], pred_[B], dpred_[B];
  const T* x_ = nullptr;
  const T* y_ = nullptr;
};

template <class T, int B>
std::unique_ptr<CompiledModel<T>> make() {
  return std::make_unique<LinearModel<T, B>>();
}

ModelDescription description(int64_t batch) {
  ModelDescription m;
  m.name = "linear2";
  m.params = {{"W", {1, 2}, 2, {InitKind::XavierUniform}}, {"b", {1}, 1, {InitKind::Zeros}}};
  m.batch = batch;
  m.in_features = 2;
  m.out_features = 1;
  m.data = {DataSpec::RegressionGrid, -1, 1, 5, ""};
  m.optimizer.kind = OptimizerConfig::Adam;
  m.optimizer.lr = 0.03;
  m.steps = 200;
  m.log_every = 25;
  return m;
}

RunOutput run(std::vector<std::string> args, int64_t batch = 1) {
  ModelDescription m = description(batch);
  return run_captured("./linear2", std::move(args), [&](int argc, char** argv) {
    return batch == 5 ? train_main(argc, argv, m, &make<float, 5>, &make<double, 5>)
                      : train_main(argc, argv, m, &make<float, 1>, &make<double, 1>);
  });
}

TEST(TrainMainTest, DefaultRunMatchesPythonReference) {
  RunOutput r = run({});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out,
            "mean_loss(before) = 0.465156\n"
            "step 0: loss=2.429185\n"
            "step 25: loss=0.651247\n"
            "step 50: loss=0.456799\n"
            "step 75: loss=0.478937\n"
            "step 100: loss=0.489032\n"
            "step 125: loss=0.487469\n"
            "step 150: loss=0.489612\n"
            "step 175: loss=0.492140\n"
            "mean_loss(after) = 0.105339\n"
            "  center: x=(0.000000,0.000000)  target=0.200000  pred=[0.327903]\n"
            "  heldout: x=(0.250000,-0.750000)  target=0.200000  pred=[0.311539]\n"
            "steps=200 loss0=0.465156 loss1=0.105339\n"
            "predict(heldout) = [0.311539]\n");
}

TEST(TrainMainTest, SeedStepsLogEveryBothSpellings) {
  RunOutput r = run({"--seed=2026", "--steps", "2", "--log-every=1", "--device", "cpu"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "mean_loss(before) = 1.264198\n"
            "step 0: loss=0.297386\n"
            "step 1: loss=0.044396\n"
            "mean_loss(after) = 1.253261\n"
            "  center: x=(0.000000,0.000000)  target=0.200000  pred=[0.040700]\n"
            "  heldout: x=(0.250000,-0.750000)  target=0.200000  pred=[-0.811085]\n"
            "steps=2 loss0=1.264198 loss1=1.253261\n"
            "predict(heldout) = [-0.811085]\n");
}

TEST(TrainMainTest, BatchedRunUsesConsecutiveRows) {
  RunOutput r = run({"--seed", "7", "--steps", "30", "--log-every", "10", "--device=auto"}, 5);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "mean_loss(before) = 0.828165\n"
            "step 0: loss=0.901168\n"
            "step 10: loss=0.254411\n"
            "step 20: loss=0.057249\n"
            "mean_loss(after) = 0.135941\n"
            "  center: x=(0.000000,0.000000)  target=0.200000  pred=[0.406063]\n"
            "  heldout: x=(0.250000,-0.750000)  target=0.200000  pred=[0.597407]\n"
            "steps=30 loss0=0.828165 loss1=0.135941\n"
            "predict(heldout) = [0.597407]\n");
}

TEST(TrainMainTest, Float32RunIsCloseToFloat64) {
  RunOutput r = run({"--dtype", "f32"});
  EXPECT_EQ(r.code, 0) << r.err;
  double before = 0, after = 0;
  ASSERT_TRUE(read_mean_losses(r.out, before, after)) << r.out;
  EXPECT_NEAR(before, 0.465156, 2e-6);
  EXPECT_NEAR(after, 0.105339, 1e-4);
  EXPECT_TRUE(contains(r.out, "steps=200 loss0="));
}

TEST(TrainMainTest, HelpListsFlags) {
  RunOutput r = run({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r.out, "usage: ./linear2 [flags]"));
  EXPECT_TRUE(contains(r.out, "--load-params PATH"));
  EXPECT_TRUE(contains(r.out, "--show-tape"));
  EXPECT_FALSE(contains(r.out, "mean_loss"));
}

TEST(TrainMainTest, TraceWritesEveryStepAtFullPrecision) {
  std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/trace.txt";
  RunOutput r = run({"--steps", "3", "--log-every", "2", "--trace", path});
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(contains(text, "mean_loss_before "));
  EXPECT_TRUE(contains(text, "step 0 "));
  EXPECT_TRUE(contains(text, "step 1 "));  // every step, not only logged ones
  EXPECT_TRUE(contains(text, "step 2 "));
  EXPECT_TRUE(contains(text, "mean_loss_after "));
}

TEST(TrainMainTest, UsageErrorsExit2WithHint) {
  struct Case {
    std::vector<std::string> args;
    const char* message;
  } cases[] = {
      {{"--bogus"}, "error: unknown flag '--bogus'\n"},
      {{"--steps"}, "error: --steps needs a value\n"},
      {{"--steps", "ten"}, "error: --steps expects a non-negative integer, got 'ten'\n"},
      {{"--seed=1.5"}, "error: --seed expects an unsigned 64-bit integer, got '1.5'\n"},
      {{"--device", "gpu"}, "error: --device: unknown device `gpu`"},
      {{"--sample", "0"}, "error: --sample expects a positive integer, got '0'\n"},
      {{"--sample", "5", "--temperature", "-1"},
       "error: --temperature expects a finite number >= 0, got '-1'\n"},
      {{"--temperature", "0.5"},
       "error: --temperature, --prompt and --vocab shape --sample's text: give --sample N "
       "too\n"},
      {{"--sample", "5", "--prompt", "hi"},
       "error: --prompt is text: give --vocab to turn it into tokens\n"},
      {{"--sample", "5", "--init-only"},
       "error: --sample runs the forward pass; --init-only stops before it\n"},
  };
  for (const Case& c : cases) {
    RunOutput r = run(c.args);
    EXPECT_EQ(r.code, 2) << c.message;
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(contains(r.err, c.message)) << r.err;
    EXPECT_TRUE(contains(r.err, "run `./linear2 --help` to see the flags")) << r.err;
  }
}

// --sample needs a language model (an i32 window in, logits per position out); the
// grid's regression model is refused after training, with the reason.
TEST(TrainMainTest, SampleRefusesAModelThatIsNoLanguageModel) {
  RunOutput r = run({"--steps", "1", "--sample", "5"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "error: --sample needs a language model: one i32 input of "
                              "token ids [batch, T] and an output of logits [batch, T, "
                              "vocab]")) << r.err;
}

// --profile times CUDA launches: a cpu model is refused before anything runs.
TEST(TrainMainTest, ProfileNeedsTheCudaDevice) {
  RunOutput r = run({"--profile"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains(r.err, "error: --profile times a step's CUDA launches: it needs "
                              "--device cuda\n")) << r.err;
  RunOutput launches = run({"--profile-launches", "step2.tsv"});
  EXPECT_EQ(launches.code, 2);
  EXPECT_EQ(launches.out, "");
  EXPECT_TRUE(contains(launches.err, "error: --profile-launches times a step's CUDA launches: "
                                     "it needs --device cuda\n")) << launches.err;
}

TEST(TrainMainTest, UnavailableDevicesExit3WithoutRunning) {
  RunOutput cuda = run({"--device", "cuda"});
  EXPECT_EQ(cuda.code, 3);
  EXPECT_EQ(cuda.out, "");
  EXPECT_EQ(cuda.err,
            "error: device `cuda` requested, but this executable is a CPU-only build (no native "
            "CUDA runtime linked); rebuild it with `vouch build --target cuda`\n");
  RunOutput rocm = run({"--device=rocm"});
  EXPECT_EQ(rocm.code, 3);
  EXPECT_EQ(rocm.out, "");
  EXPECT_EQ(rocm.err, "error: device `rocm` has no maintained runtime profile\n");
}

TEST(TrainMainTest, InitOnlySavesInitialParameters) {
  std::string path = temp_path("init.safetensors");
  RunOutput r = run({"--init-only", "--save-params", path});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  Result<std::vector<NamedTensor>> p = load_safetensors(path);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p.value().size(), 2u);
  EXPECT_EQ(p.value()[0].name, "W");
  EXPECT_EQ(p.value()[0].shape, (std::vector<int64_t>{1, 2}));
  // Python: lim = sqrt(6/3); s = next_seed(0, 0); -lim + rand01(s, i)*2*lim
  EXPECT_DOUBLE_EQ(p.value()[0].data[0], 0.4874347396425105);
  EXPECT_DOUBLE_EQ(p.value()[0].data[1], 0.8711496939236147);
  EXPECT_EQ(p.value()[1].data, std::vector<double>{0.0});
  EXPECT_TRUE(contains(test_files::read_file(path), "\"dtype\":\"F64\""));

  std::string path32 = temp_path("init32.safetensors");
  EXPECT_EQ(run({"--init-only", "--dtype=f32", "--save-params=" + path32}).code, 0);
  EXPECT_TRUE(contains(test_files::read_file(path32), "\"dtype\":\"F32\""));
}

TEST(TrainMainTest, SavedTrainedParametersLoadBack) {
  std::string trained = temp_path("trained.safetensors");
  std::string copy = temp_path("copy.safetensors");
  RunOutput train = run({"--steps", "200", "--save-params", trained});
  ASSERT_EQ(train.code, 0) << train.err;
  Result<std::vector<NamedTensor>> saved = load_safetensors(trained);
  ASSERT_TRUE(saved.ok());
  // Python reference after 200 steps: W = [0.606532225614566, 0.22399702704172603],
  // b = [0.32790335499541146].
  EXPECT_NEAR(saved.value()[0].data[0], 0.606532225614566, 1e-12);
  EXPECT_NEAR(saved.value()[0].data[1], 0.22399702704172603, 1e-12);
  EXPECT_NEAR(saved.value()[1].data[0], 0.32790335499541146, 1e-12);

  // Loading replaces the initialisation: the loaded values come back out unchanged,
  // and a 0-step run evaluates the trained parameters.
  ASSERT_EQ(run({"--init-only", "--load-params", trained, "--save-params", copy}).code, 0);
  Result<std::vector<NamedTensor>> copied = load_safetensors(copy);
  ASSERT_TRUE(copied.ok());
  EXPECT_EQ(copied.value()[0].data, saved.value()[0].data);
  EXPECT_EQ(copied.value()[1].data, saved.value()[1].data);
  RunOutput eval = run({"--load-params", trained, "--steps", "0"});
  EXPECT_EQ(eval.code, 0);
  EXPECT_TRUE(contains(eval.out, "mean_loss(before) = 0.105339\n")) << eval.out;
  EXPECT_TRUE(contains(eval.out, "steps=0 loss0=0.105339 loss1=0.105339\n")) << eval.out;
}

TEST(TrainMainTest, LoadParamsRefusalsExit4) {
  std::string wrong = temp_path("wrong.safetensors");
  ASSERT_TRUE(save_safetensors(wrong, {{"W", {2, 1}, {1, 2}}, {"extra", {1}, {0}}}, true).ok());
  RunOutput r = run({"--load-params", wrong});
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains(r.err, "error: --load-params: " + wrong + ": parameters do not match"));
  EXPECT_TRUE(contains(r.err, "parameter 'W' has shape [2,1], the model expects [1,2]"));
  EXPECT_TRUE(contains(r.err, "missing parameter 'b' (expected shape [1])"));
  EXPECT_TRUE(contains(r.err, "unexpected parameter 'extra'"));

  RunOutput missing = run({"--load-params", temp_path("absent.safetensors")});
  EXPECT_EQ(missing.code, 4);
  EXPECT_TRUE(contains(missing.err, "absent.safetensors: cannot open file"));

  RunOutput unwritable = run({"--init-only", "--save-params", temp_path("no/such/dir.st")});
  EXPECT_EQ(unwritable.code, 4);
  EXPECT_TRUE(contains(unwritable.err, "error: --save-params: "));
}


// Issue 14: a model larger than memory aborted with std::bad_alloc (even --init-only).
// A backend says what a run allocates; train_main refuses before making the model.
TEST(TrainMainTest, AModelLargerThanMemoryIsRefusedBeforeAllocating) {
  Backend cpu;
  cpu.device = Device::Cpu;
  bool made = false;
  cpu.make_f64 = [&]() -> std::unique_ptr<CompiledModel<double>> {
    made = true;
    return make<double, 1>();
  };
  int64_t asked_bytes = 0;
  cpu.memory_need = [&](int64_t real_bytes) {
    asked_bytes = real_bytes;
    MemoryNeed need;
    need.host.push_back({"buffers", uint64_t(1) << 60});  // an exbibyte
    return need;
  };
  RunOutput r = run_captured("./linear2", {"--init-only"}, [&](int argc, char** argv) {
    return train_main(argc, argv, description(1), {cpu});
  });
  EXPECT_EQ(r.code, 6);
  EXPECT_FALSE(made);
  EXPECT_EQ(asked_bytes, 8);  // f64, the cpu default
  EXPECT_TRUE(contains(r.err, "error: model `linear2` needs 1.00 EiB (1152921504606846976 bytes) "
                              "of host memory for an f64 run on cpu (buffers 1.00 EiB"))
      << r.err;
  EXPECT_TRUE(contains(r.err, " is available (")) << r.err;
  EXPECT_TRUE(contains(r.err, "): it does not fit\n")) << r.err;

  // What fits runs.
  cpu.memory_need = [](int64_t) { return MemoryNeed{{{"buffers", 64}}, {}}; };
  RunOutput fits = run_captured("./linear2", {"--steps", "1"}, [&](int argc, char** argv) {
    return train_main(argc, argv, description(1), {cpu});
  });
  EXPECT_EQ(fits.code, 0) << fits.err;
}

// The up-front check's last resort: an allocation that fails anyway ends the run with a
// message and exit 6, never an abort.
TEST(TrainMainTest, BadAllocEndsTheRunWithExit6) {
  Backend cpu;
  cpu.device = Device::Cpu;
  cpu.make_f64 = []() -> std::unique_ptr<CompiledModel<double>> { throw std::bad_alloc(); };
  RunOutput r = run_captured("./linear2", {}, [&](int argc, char** argv) {
    return train_main(argc, argv, description(1), {cpu});
  });
  EXPECT_EQ(r.code, 6);
  EXPECT_EQ(r.err, "error: out of host memory (std::bad_alloc): model `linear2` or its data "
                   "needs more memory than this machine has available\n");
}

// Issue 14: inf targets trained to loss=inf and exit 0. Finite data whose loss overflows
// (a target of 1e300: its square is inf) stops the run at the step that shows it, exit
// 7; --allow-nonfinite trains on with one warning.
TEST(TrainMainTest, ANonFiniteLossStopsTheRun) {
  std::string csv = write_temp("huge_target.csv", "x1,x2,y\n0,0,1e300\n1,0,1\n");
  RunOutput r = run({"--data", csv, "--steps", "5", "--save-params", temp_path("never.st")});
  EXPECT_EQ(r.code, 7) << r.err;
  EXPECT_TRUE(contains(r.out, "step 0: loss=inf\n")) << r.out;
  EXPECT_EQ(r.err, "error: step 0: the training loss is inf; training diverged or the data "
                   "holds values too large for the loss (--allow-nonfinite trains on)\n");
  EXPECT_FALSE(contains(r.out, "mean_loss(after)"));
  EXPECT_NE(std::system(("test -e " + temp_path("never.st")).c_str()), 0);  // nothing saved

  RunOutput on = run({"--data", csv, "--steps", "5", "--allow-nonfinite"});
  EXPECT_EQ(on.code, 0) << on.err;
  EXPECT_EQ(on.err, "warning: step 0: the training loss is inf; training goes on "
                    "(--allow-nonfinite)\n");
  EXPECT_TRUE(contains(on.out, "mean_loss(after)")) << on.out;
}

// Issue 14: NaN / inf params loaded silently. Refused with the tensor and index (exit 4),
// or loaded with a warning under --allow-nonfinite.
TEST(TrainMainTest, NonFiniteParamsAreRefused) {
  std::string nan = temp_path("nan.safetensors");
  ASSERT_TRUE(save_safetensors(nan, {{"W", {1, 2}, {1, NAN}}, {"b", {1}, {0}}}, true).ok());
  RunOutput r = run({"--load-params", nan, "--init-only"});
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "error: --load-params: " + nan + ": tensor 'W' holds nan at index 1 ([0,1]): "
                   "parameters must be finite (--allow-nonfinite loads it)\n");
  RunOutput allowed = run({"--load-params", nan, "--init-only", "--allow-nonfinite"});
  EXPECT_EQ(allowed.code, 0) << allowed.err;
  EXPECT_EQ(allowed.err, "warning: " + nan + ": tensor 'W' holds nan at index 1 ([0,1]): "
                         "parameters must be finite; loaded anyway (--allow-nonfinite)\n");
}

// Issue 14: f64 values beyond f32's range became inf under --dtype f32 (data files and
// checkpoints). Refused with the file, field or tensor, and index; a value that rounds
// to FLT_MAX is not beyond it.
TEST(TrainMainTest, ValuesBeyondF32AreRefusedInF32Runs) {
  std::string big = write_temp("big_x.csv", "x1,x2,y\n0,0,1\n1,1e39,1\n");
  RunOutput r = run({"--data", big, "--dtype", "f32", "--steps", "1"});
  EXPECT_EQ(r.code, 5);
  EXPECT_EQ(r.err, "error: " + big + ": field 'x', row 1, element 1 holds "
                   "9.9999999999999994e+38, beyond f32's range (it rounds to infinity; the "
                   "largest finite f32 is 3.4028234663852886e+38): this run is f32 (--dtype f32, "
                   "or the default on cuda)\n");
  EXPECT_EQ(run({"--data", big, "--dtype", "f64", "--steps", "1"}).code, 0);
  // 3.4028235e38 lies between FLT_MAX and the midpoint to the next power of two.
  std::string edge = write_temp("edge_x.csv", "x1,x2,y\n0,3.4028235e38,1\n");
  EXPECT_EQ(run({"--data", edge, "--dtype", "f32", "--steps", "1", "--allow-nonfinite"}).code, 0);

  std::string params = temp_path("big.safetensors");
  ASSERT_TRUE(save_safetensors(params, {{"W", {1, 2}, {1, -4e38}}, {"b", {1}, {0}}}, true).ok());
  RunOutput p = run({"--load-params", params, "--dtype", "f32", "--init-only"});
  EXPECT_EQ(p.code, 4);
  EXPECT_TRUE(contains(p.err, "error: --load-params: " + params + ": tensor 'W' holds "
                              "-3.9999999999999999e+38 at index 1, beyond f32's range"))
      << p.err;
  EXPECT_EQ(run({"--load-params", params, "--dtype", "f64", "--init-only"}).code, 0);
}

// Issue 14: --steps huge grew memory (~1 MB/s): the host loop kept every step's loss
// until the next log point. A million steps between log points must not grow the
// process (8 MB of losses before).
TEST(TrainMainTest, StepsBetweenLogPointsKeepNoLosses) {
#if defined(__SANITIZE_ADDRESS__)
  // Under --config=asan, AddressSanitizer's quarantine keeps up to 256 MB of freed
  // memory resident by design: the resident size says nothing there. Every other
  // build checks the bound.
  GTEST_SKIP() << "resident size under AddressSanitizer's quarantine";
#endif
  struct rusage before, after;
  ASSERT_EQ(getrusage(RUSAGE_SELF, &before), 0);
  RunOutput r = run({"--steps", "1000000", "--log-every", "100000000"});
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(getrusage(RUSAGE_SELF, &after), 0);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 4 * 1024) << "KiB";
}

TEST(TrainMainTest, DataFlagReplacesTheGrid) {
  std::string csv = write_temp("train.csv", "x1,x2,y\n0,0,1\n1,0,1\n0,1,1\n");
  RunOutput r = run({"--data", csv, "--steps", "3", "--log-every", "1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "step 2: loss="));
  EXPECT_FALSE(contains(r.out, "heldout"));  // probes belong to the regression grid
  EXPECT_FALSE(contains(r.out, "predict("));
  EXPECT_TRUE(contains(r.out, "steps=3 loss0="));

  RunOutput rows = run({"--data=" + csv}, 5);
  EXPECT_EQ(rows.code, 5);
  EXPECT_TRUE(contains(rows.err, "the data has 3 rows, not a multiple of the batch size 5"))
      << rows.err;
  RunOutput bad = run({"--data", write_temp("bad.csv", "1,2\n")});
  EXPECT_EQ(bad.code, 5);
  EXPECT_TRUE(contains(bad.err, "bad.csv:1: expected 3 columns")) << bad.err;
}

// What --show-tape prints for LinearModel's first step.
constexpr char kLinearTape[] =
    "tape of step 0 (2 nodes, backward runs them last to first):\n"
    "  #0 linear capsule=unassigned node=0 saved=[x, W]\n"
    "  #1 mse_loss capsule=unassigned node=1 saved=[pred, y]\n";

TEST(TrainMainTest, ShowTapePrintsFirstStep) {
  RunOutput r = run({"--steps", "3", "--show-tape"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, std::string(kLinearTape) + "step 0: loss=2.429185\n")) << r.out;
  EXPECT_EQ(r.out.find("tape of step"), r.out.rfind("tape of step"));  // only once
}

// ---- device-resident models: steps enqueued, losses read back on demand ----------------

// What the driver asked a device-resident model for, in order.
struct DeviceLog {
  std::vector<std::string> calls;  // "f32"/"f64" (made), "read FIRST COUNT", "params"
  int64_t enqueued = 0;
  int64_t fail_reads_from = -1;  // read_losses of a step >= this fails (a device fault)
};

// A device-resident model whose "device" is the host: the same LinearModel math and
// host Optimizer (so its numbers equal the host path's bit for bit), driven through
// enqueue_steps / read_losses with a loss ring of `capacity` slots. Reading a step that
// was not enqueued yet or whose slot was overwritten is an error, as the contract says.
template <class T, int B>
class FakeDeviceModel : public CompiledModel<T> {
 public:
  FakeDeviceModel(DeviceLog* log, int64_t capacity) : log_(log), ring_(size_t(capacity)) {}
  T* param(int i) override { return inner_.param(i); }
  T* grad(int i) override { return inner_.grad(i); }
  const T* prediction() const override { return inner_.prediction(); }
  T forward(const T* x, const T* y, Tape* tape) override { return inner_.forward(x, y, tape); }
  void backward(Tape& tape) override { inner_.backward(tape); }

  bool device_resident() const override { return true; }
  Status upload_params() override {
    optimizer_ = std::make_unique<Optimizer<T>>(
        opt_, std::vector<std::pair<T*, T*>>{{inner_.param(0), inner_.grad(0)},
                                             {inner_.param(1), inner_.grad(1)}},
        std::vector<int64_t>{2, 1});
    steps_ = 0;
    log_->calls.push_back("params");
    return Status::Ok();
  }
  Status upload_data(const T* x, const T* y, int64_t num_batches) override {
    x_.assign(x, x + num_batches * B * 2);
    y_.assign(y, y + num_batches * B);
    num_batches_ = num_batches;
    return Status::Ok();
  }
  Status enqueue_steps(const OptimizerConfig& o, int64_t count, Tape* tape) override {
    log_->calls.push_back("enqueue " + std::to_string(count));
    for (int64_t k = 0; k < count; k++) {
      Status st = one_step(o, k == 0 ? tape : nullptr);
      if (!st.ok()) return st;
    }
    return Status::Ok();
  }
  Status one_step(const OptimizerConfig& o, Tape* tape) {
    if (o.kind != opt_.kind || o.lr != opt_.lr) return Status::Error("unexpected optimizer");
    int64_t b = steps_ % num_batches_;
    Tape local;
    T loss = inner_.forward(x_.data() + b * B * 2, y_.data() + b * B, &local);
    inner_.backward(local);
    optimizer_->step();
    ring_[size_t(steps_ % int64_t(ring_.size()))] = double(loss);
    steps_++;
    log_->enqueued = steps_;
    if (tape) *tape = local;
    return Status::Ok();
  }
  int64_t loss_capacity() const override { return int64_t(ring_.size()); }
  Status read_losses(int64_t first, int64_t count, double* out) override {
    log_->calls.push_back("read " + std::to_string(first) + " " + std::to_string(count));
    if (log_->fail_reads_from >= 0 && first + count > log_->fail_reads_from)
      return Status::Error("an illegal memory access was encountered (simulated)");
    if (first < 0 || count < 0 || first + count > steps_)
      return Status::Error("read_losses: steps not enqueued");
    if (first < steps_ - int64_t(ring_.size()))
      return Status::Error("read_losses: step " + std::to_string(first) + " was overwritten");
    for (int64_t j = 0; j < count; j++)
      out[j] = ring_[size_t((first + j) % int64_t(ring_.size()))];
    return Status::Ok();
  }

 private:
  DeviceLog* log_;
  LinearModel<T, B> inner_;
  OptimizerConfig opt_ = description(B).optimizer;
  std::unique_ptr<Optimizer<T>> optimizer_;
  std::vector<T> x_, y_;
  int64_t num_batches_ = 0, steps_ = 0;
  std::vector<double> ring_;
};

// A cpu backend (the host model) and a "cuda" backend (the fake device model).
RunOutput run_device(std::vector<std::string> args, DeviceLog* log, int64_t capacity) {
  Backend cpu;
  cpu.device = Device::Cpu;
  cpu.make_f32 = &make<float, 1>;
  cpu.make_f64 = &make<double, 1>;
  Backend device;
  device.device = Device::Cuda;
  device.make_f32 = [log, capacity]() -> std::unique_ptr<CompiledModel<float>> {
    log->calls.push_back("f32");
    return std::make_unique<FakeDeviceModel<float, 1>>(log, capacity);
  };
  device.make_f64 = [log, capacity]() -> std::unique_ptr<CompiledModel<double>> {
    log->calls.push_back("f64");
    return std::make_unique<FakeDeviceModel<double, 1>>(log, capacity);
  };
  device.ready = [] { return Status::Ok(); };
  return run_captured("./linear2", std::move(args), [&](int argc, char** argv) {
    return train_main(argc, argv, description(1), {cpu, device});
  });
}

std::vector<std::string> calls_of(const DeviceLog& log, const std::string& prefix) {
  std::vector<std::string> calls;
  for (const std::string& c : log.calls)
    if (c.rfind(prefix, 0) == 0) calls.push_back(c);
  return calls;
}
std::vector<std::string> reads_of(const DeviceLog& log) { return calls_of(log, "read "); }

TEST(TrainMainDeviceTest, ReadsOneLossPerLogPointAndTheLastStep) {
  DeviceLog log;
  RunOutput r = run_device({"--device", "cuda", "--dtype", "f64"}, &log, 64);
  EXPECT_EQ(r.code, 0) << r.err;
  // Byte-identical to the host path (DefaultRunMatchesPythonReference).
  EXPECT_EQ(r.out, run({}).out);
  EXPECT_EQ(log.calls.front(), "f64");
  EXPECT_EQ(log.enqueued, 200);
  EXPECT_EQ(reads_of(log),
            (std::vector<std::string>{"read 0 1", "read 25 1", "read 50 1", "read 75 1",
                                      "read 100 1", "read 125 1", "read 150 1", "read 175 1",
                                      "read 199 1"}));
  // Every step up to the next read goes to the device at once (step 0 alone: it records
  // the tape; then 1..25, 26..50, ..., 151..175, 176..199).
  std::vector<std::string> enqueues{"enqueue 1"};
  for (int i = 0; i < 7; i++) enqueues.push_back("enqueue 25");
  enqueues.push_back("enqueue 24");
  EXPECT_EQ(calls_of(log, "enqueue "), enqueues);
}

TEST(TrainMainDeviceTest, LogEveryOneReadsEveryStep) {
  DeviceLog log;
  RunOutput r = run_device({"--device=cuda", "--dtype=f64", "--steps", "3", "--log-every", "1",
                            "--seed", "2026"},
                           &log, 2);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, run({"--steps", "3", "--log-every", "1", "--seed", "2026"}).out);
  EXPECT_EQ(reads_of(log), (std::vector<std::string>{"read 0 1", "read 1 1", "read 2 1"}));
}

TEST(TrainMainDeviceTest, TraceReadsEveryStepInBulkBeforeTheRingOverflows) {
  std::string host_trace = temp_path("host_trace.txt");
  std::string device_trace = temp_path("device_trace.txt");
  RunOutput host = run({"--steps", "60", "--trace", host_trace});
  ASSERT_EQ(host.code, 0) << host.err;
  DeviceLog log;
  // A ring of 8 slots, smaller than the log interval (25): the driver must flush in
  // between, or the ring would overwrite steps it has not read.
  RunOutput device =
      run_device({"--device", "cuda", "--dtype", "f64", "--steps", "60", "--trace", device_trace},
                 &log, 8);
  ASSERT_EQ(device.code, 0) << device.err;
  EXPECT_EQ(device.out, host.out);
  std::string trace = test_files::read_file(device_trace);
  EXPECT_EQ(trace, test_files::read_file(host_trace));  // every step, 17 digits
  for (int k = 0; k < 60; k++)
    EXPECT_TRUE(contains(trace, "\nstep " + std::to_string(k) + " ")) << k;
  EXPECT_EQ(reads_of(log),
            (std::vector<std::string>{"read 0 1", "read 1 8", "read 9 8", "read 17 8",
                                      "read 25 1", "read 26 8", "read 34 8", "read 42 8",
                                      "read 50 1", "read 51 8", "read 59 1"}));
  EXPECT_EQ(calls_of(log, "enqueue ").size(), reads_of(log).size());  // one batch per read
}

TEST(TrainMainDeviceTest, ShowTapePrecedesTheFirstLossAndZeroStepsReadNothing) {
  DeviceLog log;
  RunOutput r = run_device({"--device", "cuda", "--steps", "2", "--show-tape"}, &log, 4);
  EXPECT_EQ(r.code, 0) << r.err;
  // Byte-identical to the host path at the device's default dtype, f32.
  EXPECT_EQ(r.out, run({"--dtype", "f32", "--steps", "2", "--show-tape"}).out);
  EXPECT_TRUE(contains(r.out, std::string(kLinearTape) + "step 0: loss=")) << r.out;
  DeviceLog none;
  RunOutput zero = run_device({"--device", "cuda", "--steps", "0"}, &none, 4);
  EXPECT_EQ(zero.code, 0) << zero.err;
  EXPECT_TRUE(reads_of(none).empty());
  EXPECT_EQ(none.enqueued, 0);
}

TEST(TrainMainDeviceTest, CudaDefaultsToF32AndCpuToF64) {
  DeviceLog log;
  std::string path = temp_path("device_f32.safetensors");
  RunOutput r = run_device({"--device", "cuda", "--steps", "1", "--save-params", path}, &log, 4);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(log.calls.front(), "f32");
  EXPECT_TRUE(contains(test_files::read_file(path), "\"dtype\":\"F32\""));

  DeviceLog auto_log;  // --device auto picks the usable "cuda" backend: f32 too
  EXPECT_EQ(run_device({"--steps", "1"}, &auto_log, 4).code, 0);
  EXPECT_EQ(auto_log.calls.front(), "f32");

  DeviceLog cpu_log;
  std::string cpu_path = temp_path("cpu_f64.safetensors");
  EXPECT_EQ(run_device({"--device", "cpu", "--steps", "1", "--save-params", cpu_path}, &cpu_log,
                       4).code,
            0);
  EXPECT_TRUE(cpu_log.calls.empty());  // the device factories never ran
  EXPECT_TRUE(contains(test_files::read_file(cpu_path), "\"dtype\":\"F64\""));
}

TEST(TrainMainDeviceTest, AMissingDefaultF32FactoryIsNamedWithTheWayOut) {
  Backend device;
  device.device = Device::Cuda;
  device.make_f64 = &make<double, 1>;
  device.ready = [] { return Status::Ok(); };
  RunOutput r = run_captured("./linear2", {"--device", "cuda"}, [&](int argc, char** argv) {
    return train_main(argc, argv, description(1), {device});
  });
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "error: f32 (the default on cuda): this executable was built without f32 "
                   "support; pass --dtype f64\n");
}

TEST(TrainMainDeviceTest, TimeReportsPerStepTimesOfTheFlushIntervals) {
  DeviceLog log;
  RunOutput r = run_device({"--device", "cuda", "--steps", "50", "--log-every", "5", "--time"},
                           &log, 16);
  EXPECT_EQ(r.code, 0) << r.err;
  // 11 flushes (0, 5, ..., 45, 49); 2 warm-up intervals.
  EXPECT_TRUE(contains(r.out, " ms/step over 9 loss-read intervals after 2 warm-up (50 steps)\n"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "timing: median ")) << r.out;
}

TEST(TrainMainDeviceTest, AReadErrorStopsTheRunWithExit3) {
  DeviceLog log;
  log.fail_reads_from = 30;
  RunOutput r = run_device({"--device", "cuda", "--steps", "100"}, &log, 64);
  EXPECT_EQ(r.code, 3);
  EXPECT_TRUE(contains(r.out, "step 25: loss="));
  EXPECT_FALSE(contains(r.out, "step 50: loss="));
  EXPECT_FALSE(contains(r.out, "mean_loss(after)"));
  EXPECT_EQ(r.err, "error: an illegal memory access was encountered (simulated)\n");
  EXPECT_EQ(log.enqueued, 51);  // the error surfaced at the next read, step 50
}

TEST(TrainMainDeviceTest, ADeviceModelWithoutALossRingIsRefused) {
  DeviceLog log;
  RunOutput r = run_device({"--device", "cuda", "--steps", "3"}, &log, 0);
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "keeps no step losses (loss_capacity() = 0)")) << r.err;
  EXPECT_EQ(log.enqueued, 0);
}

}  // namespace
}  // namespace vouch::rt
