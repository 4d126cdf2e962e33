// Tests for executor.h: CudaProgramModel on the hand-written MLP Program of
// runtime/test_program.h, with test kernels (testdata/executor_test_kernels.cu),
// compared with the cpu executor (CpuProgramModel + the host Optimizer), which
// runtime/executor_test.cc checks against independent loops. The cuBLAS GEMMs sum in
// their own order, so the comparison is within a tolerance (f64 1e-12, f32 1e-5
// relative); graph replay and eager launches must agree bit for bit.
//
// Without a usable device (CI) the device tests print `SKIPPED (no CUDA device): ...`
// and the runtime-status test checks the error every entry point gives.
#include "runtime/cuda/blas.h"
#include "runtime/cuda/executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/cuda/memcpy.h"
#include "runtime/cuda/status.h"
#include "runtime/cuda/test_util.h"
#include "runtime/cuda/testdata/executor_test_kernels.h"
#include "runtime/executor.h"
#include "runtime/optim.h"
#include "runtime/test_program.h"
#include "runtime/test_run.h"
#include "runtime/train_main.h"

namespace vouch::rt::cuda {
namespace {

using namespace ::vouch::rt::test_program;
using namespace ::vouch::rt::test_run;

const KernelImage kExecutorImage{testdata::kExecutorKernelsSm90Cubin,
                                 testdata::kExecutorKernelsSm90CubinSize,
                                 reinterpret_cast<const char*>(testdata::kExecutorKernelsPtx)};

template <class T>
std::unique_ptr<CudaProgramModel<T>> make_cuda(const Program& program,
                                               int64_t capacity = kDefaultLossCapacity) {
  return std::make_unique<CudaProgramModel<T>>(program, &kExecutorImage, 1, ProductMath::Fp32,
                                               capacity);
}

Backend cuda_backend(const Program& program) {
  return cuda_program_backend(program, &kExecutorImage, 1, ProductMath::Fp32,
                              /*f64_kernels=*/true, "backend: cuda (test)", {});
}

template <class T>
std::vector<T> values(int64_t n, int salt) {
  auto v = std::vector<T>(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) v[size_t(i)] = T(std::sin(double(i * 7 + salt * 13 + 1)) * 0.9);
  return v;
}

template <class T>
double tolerance() {
  return sizeof(T) == 8 ? 1e-12 : 1e-5;
}

template <class T>
void expect_near(const T* got, const T* want, int64_t n, double rel, const std::string& what) {
  for (int64_t i = 0; i < n; i++)
    EXPECT_NEAR(double(got[i]), double(want[i]), rel * (1 + std::fabs(double(want[i]))))
        << what << "[" << i << "]";
}

template <class T>
void set_params(CompiledModel<T>& model, const MlpProgram& mlp) {
  for (int i = 0; i < 4; i++) {
    std::vector<T> p = values<T>(mlp.buffers[size_t(mlp.params[size_t(i)])].numel, 20 + i);
    std::copy(p.begin(), p.end(), model.param(i));
  }
  std::fill_n(model.param(4), kUnusedNumel, T(0));
}

RunOutput run_main(const std::vector<Backend>& backends, const ModelDescription& model,
                   std::vector<std::string> args) {
  return run_captured("./mlp", std::move(args), [&](int argc, char** argv) {
    return train_main(argc, argv, model, backends);
  });
}



// ---- everywhere: the executor's kernel names, and the runtime status without a device ----

// The names the executor looks up are entry points of executor.cuh (compiled into this
// test's PTX, which needs no device to read).
TEST(CudaExecutorTest, ExecutorKernelNamesAreEntryPointsOfTheKernelLibrary) {
  const std::string ptx(reinterpret_cast<const char*>(testdata::kExecutorKernelsPtx));
  for (const char* kernel : {kSelectBatchKernel, kOptimizerKernel})
    for (const char* suffix : {element_suffix<float>(), element_suffix<double>()})
      EXPECT_NE(ptx.find(".entry " + std::string(kernel) + suffix + "("), std::string::npos)
          << kernel << suffix;
  EXPECT_STREQ(element_suffix<float>(), "_f32");
  EXPECT_STREQ(element_suffix<double>(), "_f64");
  // f32 only: a bf16 profile's GEMM operands.
  EXPECT_NE(ptx.find(".entry " + std::string(kRoundBf16Kernel) + "("), std::string::npos);
}

// A --precision tf32 / bf16 build has no f64 run: its report says its products round
// their operands, which an f64 run would not do (f64 kernels or not).
TEST(CudaExecutorTest, RoundedProductBuildsHaveNoF64Run) {
  const Program program{};
  Backend fp32 = cuda_backend(program);
  EXPECT_TRUE(fp32.make_f64 != nullptr);
  EXPECT_TRUE(fp32.no_f64_reason.empty());
  for (ProductMath math : {ProductMath::Tf32, ProductMath::Bf16})
    for (bool f64_kernels : {false, true}) {
      Backend b = cuda_program_backend(program, &kExecutorImage, 1, math, f64_kernels,
                                       "backend: cuda (test)", {});
      EXPECT_TRUE(b.make_f32 != nullptr);
      EXPECT_TRUE(b.make_f64 == nullptr);
      EXPECT_NE(b.no_f64_reason.find(std::string("built with --precision ") +
                                     product_math_name(math)),
                std::string::npos)
          << b.no_f64_reason;
    }
}

// An fp32 build without its kernels' f64 entry points (vouch build's default) has no
// f64 run either, and says how to get one.
TEST(CudaExecutorTest, BuildsWithoutF64KernelsHaveNoF64Run) {
  const Program program{};
  Backend b = cuda_program_backend(program, &kExecutorImage, 1, ProductMath::Fp32,
                                   /*f64_kernels=*/false, "backend: cuda (test)", {});
  EXPECT_TRUE(b.make_f32 != nullptr);
  EXPECT_TRUE(b.make_f64 == nullptr);
  EXPECT_NE(b.no_f64_reason.find("rebuild with --f64-kernels"), std::string::npos)
      << b.no_f64_reason;
}

TEST(CudaExecutorTest, WithoutADeviceEveryEntryPointGivesTheRuntimeStatus) {
  if (cuda_device_present()) {
    std::printf("SKIPPED (a CUDA device is present): the no-device runtime status\n");
    GTEST_SKIP();
  }
  const std::string why = require_native_cuda().message();
  ASSERT_TRUE(contains(why, "device `cuda` requested, but no usable CUDA device is visible"))
      << why;
  MlpProgram mlp(1, 2, 8, 1);
  std::unique_ptr<CudaProgramModel<float>> model = make_cuda<float>(mlp.program);
  EXPECT_EQ(model->status().message(), why);
  EXPECT_EQ(model->configure(RunConfig{}).message(), why);
  EXPECT_EQ(model->upload_params().message(), why);
  EXPECT_EQ(model->enqueue_step(OptimizerConfig{}, nullptr).message(), why);
  double loss = 0;
  EXPECT_EQ(model->read_losses(0, 1, &loss).message(), why);
  EXPECT_EQ(model->param(0), nullptr);
  float x[2] = {}, y[1] = {};
  EXPECT_TRUE(std::isnan(model->forward(x, y, nullptr)));
  EXPECT_TRUE(model->device_resident());

  Backend cuda = cuda_backend(mlp.program);
  EXPECT_EQ(cuda.device, Device::Cuda);
  EXPECT_EQ(cuda.ready().message(), why);
  Backend cpu = cpu_program_backend(mlp.program, kMlpCpuKernels<float>, kMlpCpuKernels<double>,
                                    "backend: cpu (test)", {});
  RunOutput explicit_cuda = run_main({cpu, cuda}, quickstart_description(), {"--device", "cuda"});
  EXPECT_EQ(explicit_cuda.code, 3);
  EXPECT_EQ(explicit_cuda.out, "");
  EXPECT_EQ(explicit_cuda.err, "error: " + why + "\n");
  // auto falls to the cpu backend (f64 there): the golden run.
  RunOutput automatic = run_main({cpu, cuda}, quickstart_description(), {});
  EXPECT_EQ(automatic.code, 0) << automatic.err;
  EXPECT_EQ(automatic.out, kQuickstartGolden);
}

// ---- on a device -----------------------------------------------------------------------

template <class T>
class CudaExecutorDeviceTest : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaExecutorDeviceTest, ElementTypes);

// `fused`: linear1's weight gradient as one LinearWeightGrad step (cuBLASLt's BGRADB).
template <class T>
void expect_cpu_executor_values(bool fused) {
  SCOPED_TRACE(fused ? "dW1 and db1 by one LinearWeightGrad step" : "dW1 and db1 apart");
  MlpProgram mlp(3, 2, 5, 2, fused);
  std::unique_ptr<CudaProgramModel<T>> gpu = make_cuda<T>(mlp.program);
  ASSERT_TRUE(gpu->status().ok()) << gpu->status().message();
  CpuProgramModel<T> cpu(mlp.program, kMlpCpuKernels<T>);
  set_params(*gpu, mlp);
  set_params(cpu, mlp);
  ASSERT_TRUE(gpu->upload_params().ok());

  // Before any step ran, a computed buffer holds the 0xff poison: NaN.
  std::vector<T> poisoned(6);
  ASSERT_TRUE(download(poisoned.data(), static_cast<const T*>(gpu->device_buffer(kDiff)), 6,
                       gpu->stream()).ok());
  ASSERT_TRUE(gpu->stream() != nullptr);
  ASSERT_EQ(cudaStreamSynchronize(gpu->stream()), cudaSuccess);
  for (T v : poisoned) EXPECT_TRUE(std::isnan(v));
  EXPECT_EQ(gpu->device_buffer(kPredRow), gpu->device_buffer(kPred));  // aliases

  std::vector<T> x = values<T>(6, 1), y = values<T>(6, 2);
  Tape gpu_tape, cpu_tape;
  T gpu_loss = gpu->forward(x.data(), y.data(), &gpu_tape);
  T cpu_loss = cpu.forward(x.data(), y.data(), &cpu_tape);
  ASSERT_TRUE(gpu->status().ok()) << gpu->status().message();
  expect_near(&gpu_loss, &cpu_loss, 1, tolerance<T>(), "loss");
  expect_near(gpu->prediction(), cpu.prediction(), 6, tolerance<T>(), "pred");
  std::ostringstream gpu_printed, cpu_printed;
  gpu_tape.print(gpu_printed);
  cpu_tape.print(cpu_printed);
  EXPECT_EQ(gpu_printed.str(), cpu_printed.str());

  gpu->backward(gpu_tape);
  cpu.backward(cpu_tape);
  ASSERT_TRUE(gpu->status().ok()) << gpu->status().message();
  for (int i = 0; i < 5; i++) {
    int64_t n = mlp.buffers[size_t(mlp.grads[size_t(i)])].numel;
    expect_near(gpu->grad(i), cpu.grad(i), n, tolerance<T>(), "grad " + std::to_string(i));
  }
  for (int64_t e = 0; e < kUnusedNumel; e++) EXPECT_EQ(gpu->grad(4)[e], T(0));  // prologue
}

TYPED_TEST(CudaExecutorDeviceTest, OneBatchMatchesTheCpuExecutor) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuda executor forward/backward vs the cpu executor");
  expect_cpu_executor_values<TypeParam>(false);
  expect_cpu_executor_values<TypeParam>(true);
}

// Trains `steps` steps over `batches` batches of 2 rows with the cpu executor and the
// host optimizer: the losses and the final parameters.
template <class T>
void train_on_cpu(const MlpProgram& mlp, const OptimizerConfig& o, const std::vector<T>& x,
                  const std::vector<T>& y, int64_t batches, int64_t steps,
                  std::vector<double>* losses, std::vector<std::vector<T>>* params) {
  CpuProgramModel<T> cpu(mlp.program, kMlpCpuKernels<T>);
  set_params(cpu, mlp);
  std::vector<std::pair<T*, T*>> pg;
  std::vector<int64_t> sizes;
  for (int i = 0; i < 5; i++) {
    pg.push_back({cpu.param(i), cpu.grad(i)});
    sizes.push_back(mlp.buffers[size_t(mlp.params[size_t(i)])].numel);
  }
  Optimizer<T> opt(o, pg, sizes);
  const int64_t xe = mlp.B * mlp.I, ye = mlp.B * mlp.O;
  for (int64_t k = 0; k < steps; k++) {
    int64_t b = k % batches;
    Tape tape;
    losses->push_back(double(cpu.forward(x.data() + b * xe, y.data() + b * ye, &tape)));
    cpu.backward(tape);
    opt.step();
  }
  params->clear();
  for (int i = 0; i < 5; i++) params->emplace_back(cpu.param(i), cpu.param(i) + sizes[size_t(i)]);
}

template <class T>
struct GpuRun {
  std::vector<double> losses;
  std::vector<std::vector<T>> params;
  int64_t captures = 0, launches = 0, steps_per_graph = 0;
  std::string tape;
};

template <class T>
GpuRun<T> train_on_gpu(const MlpProgram& mlp, const OptimizerConfig& o, const std::vector<T>& x,
                       const std::vector<T>& y, int64_t batches, int64_t steps, bool graph,
                       int64_t chunk = 1) {
  GpuRun<T> r;
  std::unique_ptr<CudaProgramModel<T>> gpu = make_cuda<T>(mlp.program, 64);
  EXPECT_TRUE(gpu->status().ok()) << gpu->status().message();
  RunConfig run;
  run.cuda_graph = graph;
  EXPECT_TRUE(gpu->configure(run).ok());
  set_params(*gpu, mlp);
  EXPECT_TRUE(gpu->upload_params().ok());
  EXPECT_TRUE(gpu->upload_data(x.data(), y.data(), batches).ok());
  for (int64_t k = 0; k < steps; k += chunk) {
    const int64_t n = std::min(chunk, steps - k);
    Tape tape;
    Status st = gpu->enqueue_steps(o, n, k + n == steps ? &tape : nullptr);
    EXPECT_TRUE(st.ok()) << st.message();
    if (k + n == steps) {
      std::ostringstream s;
      tape.print(s);
      r.tape = s.str();
    }
  }
  r.losses.assign(size_t(steps), 0.0);
  Status read = gpu->read_losses(0, steps, r.losses.data());
  EXPECT_TRUE(read.ok()) << read.message();
  EXPECT_TRUE(gpu->download_params().ok());
  for (int i = 0; i < 5; i++)
    r.params.emplace_back(gpu->param(i),
                          gpu->param(i) + mlp.buffers[size_t(mlp.params[size_t(i)])].numel);
  for (const StepGraph* g : {gpu->step_graph(), gpu->unrolled_graph()}) {
    if (!g) continue;
    r.captures += g->captures();
    r.launches += g->launches();
  }
  r.steps_per_graph = gpu->steps_per_graph();
  return r;
}

TYPED_TEST(CudaExecutorDeviceTest, TrainingGraphEqualsEagerAndTracksTheCpu) {
  // Evidence for native_cuda.select_batch (3 batches, 12 steps) and native_cuda.adam_step
  // (capsules/Evidence.cpp, key "cuda-executor").
  SCOPED_TRACE("native_cuda.select_batch, native_cuda.adam_step");
  VOUCH_REQUIRE_CUDA_DEVICE("cuda executor training steps, graph vs eager vs cpu");
  using T = TypeParam;
  MlpProgram mlp(2, 2, 6, 2);
  const int64_t batches = 3, steps = 12;
  std::vector<T> x = values<T>(batches * 4, 3), y = values<T>(batches * 4, 4);
  OptimizerConfig adam;
  adam.lr = 0.01;
  std::vector<double> cpu_losses;
  std::vector<std::vector<T>> cpu_params;
  train_on_cpu<T>(mlp, adam, x, y, batches, steps, &cpu_losses, &cpu_params);
  GpuRun<T> graph = train_on_gpu<T>(mlp, adam, x, y, batches, steps, true);
  GpuRun<T> eager = train_on_gpu<T>(mlp, adam, x, y, batches, steps, false);
  EXPECT_EQ(graph.captures, 1);  // one graph for every batch
  EXPECT_EQ(graph.launches, steps);
  EXPECT_EQ(eager.captures, 0);
  EXPECT_EQ(graph.losses, eager.losses);  // bit for bit
  EXPECT_EQ(graph.params, eager.params);
  EXPECT_EQ(graph.tape, eager.tape);
  const std::string bytes = std::to_string(4 * sizeof(T));  // pred and y: 4 elements
  EXPECT_TRUE(contains(graph.tape, "  #4 mse_loss capsule=test.mse_loss node=13 ran=mlp_mse_loss "
                                   "saved=[pred " + bytes + " B, y " + bytes + " B] vjp=["))
      << graph.tape;
  const double tol = sizeof(T) == 8 ? 1e-11 : 1e-4;
  expect_near(graph.losses.data(), cpu_losses.data(), steps, tol, "loss");
  for (int i = 0; i < 5; i++)
    expect_near(graph.params[size_t(i)].data(), cpu_params[size_t(i)].data(),
                int64_t(cpu_params[size_t(i)].size()), tol, "param " + std::to_string(i));
}

TYPED_TEST(CudaExecutorDeviceTest, StepsReplayedAsUnrolledGraphsEqualSingleSteps) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuda executor, several steps per CUDA graph");
  using T = TypeParam;
  MlpProgram mlp(2, 2, 6, 2);
  const int64_t batches = 3, steps = 21;
  std::vector<T> x = values<T>(batches * 4, 3), y = values<T>(batches * 4, 4);
  OptimizerConfig adam;
  adam.lr = 0.01;
  GpuRun<T> single = train_on_gpu<T>(mlp, adam, x, y, batches, steps, false);
  // 21 steps in one call: two graphs of 8 steps, then the one-step graph 5 times (the
  // step graph's dependencies must carry from one step to the next inside a capture).
  GpuRun<T> unrolled = train_on_gpu<T>(mlp, adam, x, y, batches, steps, true, steps);
  ASSERT_EQ(unrolled.steps_per_graph, 8);
  EXPECT_EQ(unrolled.captures, 2);
  EXPECT_EQ(unrolled.launches, 2 + 5);
  EXPECT_EQ(unrolled.losses, single.losses);  // bit for bit, every step's loss
  EXPECT_EQ(unrolled.params, single.params);
  EXPECT_EQ(unrolled.tape, single.tape);
  EXPECT_NE(unrolled.losses[15], unrolled.losses[16]);  // steps differ, so an order slip shows
}

// The test MLP on the GPU, configured with --audit-launches and its data uploaded.
template <class T>
void make_audited(std::unique_ptr<CudaProgramModel<T>>& gpu, const MlpProgram& mlp) {
  gpu = make_cuda<T>(mlp.program);
  ASSERT_TRUE(gpu->status().ok()) << gpu->status().message();
  RunConfig run;
  run.audit_launches = true;
  ASSERT_TRUE(gpu->configure(run).ok());
  set_params(*gpu, mlp);
  std::vector<T> x = values<T>(8, 3), y = values<T>(8, 4);
  ASSERT_TRUE(gpu->upload_params().ok());
  ASSERT_TRUE(gpu->upload_data(x.data(), y.data(), 2).ok());
}

// --audit-launches on the test MLP (kernel steps and cuBLAS calls): every node of the
// first step's graph is made by a named launch, and each kernel step by its kernel.
TEST(CudaExecutorGpuTest, TheLaunchAuditAccountsForEveryNodeOfAStep) {
  VOUCH_REQUIRE_CUDA_DEVICE("the launch audit of the cuda executor");
  MlpProgram mlp(2, 2, 6, 2);
  std::unique_ptr<CudaProgramModel<float>> gpu;
  make_audited(gpu, mlp);
  if (testing::Test::HasFatalFailure()) return;
  ASSERT_TRUE(gpu->enqueue_steps(OptimizerConfig{}, 1, nullptr).ok());
  const std::string text = gpu->launch_audit();
  EXPECT_EQ(gpu->launch_audit_problems(), 0) << text;
  EXPECT_TRUE(contains(text, "kernel vouch_select_batch_f32 <- vouch_select_batch_f32 [unassigned]\n"))
      << text;
  EXPECT_TRUE(contains(text, "kernel mlp_relu_f32 <- step 1 mlp_relu [unassigned]\n")) << text;
  EXPECT_TRUE(contains(text, "kernel vouch_optimizer_f32 <- vouch_optimizer_f32 [unassigned]\n"))
      << text;
  EXPECT_TRUE(contains(text, " unreported, 0 not the kernel named\n")) << text;
  EXPECT_TRUE(contains(text, " made by named launches, 0 unreported")) << text;
  // Audited once: later steps replay the graph.
  ASSERT_TRUE(gpu->enqueue_steps(OptimizerConfig{}, 9, nullptr).ok());
  EXPECT_EQ(gpu->launch_audit(), text);
}

// --profile: step 2 runs without a graph with an event before every launch, and the
// report accounts for each of them (batch selection, the program's steps, the
// optimizer) by capsule; the run's losses and params are those of a run without it.
TEST(CudaExecutorGpuTest, TheProfiledStepTimesEveryLaunchAndChangesNothing) {
  VOUCH_REQUIRE_CUDA_DEVICE("--profile of the cuda executor");
  MlpProgram mlp(2, 2, 6, 2);
  std::string launches;  // profile_launches() of the profiled run
  auto train = [&](bool profile, std::string* report) {
    std::unique_ptr<CudaProgramModel<float>> gpu = make_cuda<float>(mlp.program);
    EXPECT_TRUE(gpu->status().ok()) << gpu->status().message();
    RunConfig run;
    run.profile = profile;
    EXPECT_TRUE(gpu->configure(run).ok());
    set_params(*gpu, mlp);
    std::vector<float> x = values<float>(8, 3), y = values<float>(8, 4);
    EXPECT_TRUE(gpu->upload_params().ok());
    EXPECT_TRUE(gpu->upload_data(x.data(), y.data(), 2).ok());
    EXPECT_TRUE(gpu->enqueue_steps(OptimizerConfig{}, 1, nullptr).ok());
    EXPECT_TRUE(gpu->enqueue_steps(OptimizerConfig{}, 5, nullptr).ok());
    std::vector<double> losses(6);
    EXPECT_TRUE(gpu->read_losses(0, 6, losses.data()).ok());
    EXPECT_TRUE(gpu->download_params().ok());
    *report = gpu->profile_report();
    if (profile) launches = gpu->profile_launches();
    else EXPECT_EQ(gpu->profile_launches(), "");
    std::vector<float> params;
    for (int i = 0; i < 5; i++) {
      const int64_t n = mlp.buffers[size_t(mlp.params[size_t(i)])].numel;
      params.insert(params.end(), gpu->param(i), gpu->param(i) + n);
    }
    return std::make_pair(losses, params);
  };
  std::string plain_report, report;
  auto plain = train(false, &plain_report);
  auto profiled = train(true, &report);
  EXPECT_EQ(plain_report, "");
  EXPECT_EQ(profiled.first, plain.first);
  EXPECT_EQ(profiled.second, plain.second);
  // Every program step runs once in a training step, between batch selection and the
  // optimizer: one event each.
  EXPECT_TRUE(contains(report, "launch): ")) << report;
  EXPECT_TRUE(contains(report, ", " + std::to_string(mlp.program.num_steps + 2) +
                                   " launches\n"))
      << report;
  EXPECT_TRUE(contains(report, "profile of training step 2 (no CUDA graph")) << report;
  EXPECT_TRUE(contains(report, "  by capsule:")) << report;
  EXPECT_TRUE(contains(report, "batch selection [unassigned]") ||
              contains(report, "  unassigned ")) << report;
  EXPECT_TRUE(contains(report, "  slowest launches:\n")) << report;
  // --profile-launches: the same launches in the order they ran: batch selection (no
  // program step), every program step 0, 1, ... in turn, the optimizer; their times
  // add up to the report's total.
  std::istringstream lines(launches);
  std::string line;
  ASSERT_TRUE(std::getline(lines, line));
  EXPECT_EQ(line, "# launch\tms\tstep\tcapsule\twhat");
  std::vector<int> steps;
  double sum_ms = 0;
  for (int i = 0; std::getline(lines, line); i++) {
    std::istringstream fields(line);
    int launch = -1, step = -2;
    double ms = -1;
    std::string capsule_and_what;
    fields >> launch >> ms >> step;
    std::getline(fields, capsule_and_what);
    EXPECT_EQ(launch, i) << line;
    EXPECT_GE(ms, 0) << line;
    EXPECT_FALSE(capsule_and_what.empty()) << line;
    steps.push_back(step);
    sum_ms += ms;
  }
  std::vector<int> expected_steps{-1};
  for (int s = 0; s < mlp.program.num_steps; s++) expected_steps.push_back(s);
  expected_steps.push_back(-1);
  EXPECT_EQ(steps, expected_steps) << launches;
  double total_ms = -1;
  ASSERT_EQ(std::sscanf(report.c_str(), "profile of training step 2 (no CUDA graph; a CUDA "
                                        "event before every launch): %lf ms",
                        &total_ms),
            1)
      << report;
  EXPECT_NEAR(sum_ms, total_ms, 2e-3) << launches;
}

// One audited training step of `mlp` while cuBLASLt refuses every epilogue: the launch
// audit (and its problem count), the printed tape and stderr.
struct RefusedStep {
  std::string audit, tape, err;
  int problems = -1;
};
template <class T>
RefusedStep run_refused_step(const MlpProgram& mlp) {
  RefusedStep r;
  std::unique_ptr<CudaProgramModel<T>> gpu;
  make_audited(gpu, mlp);
  if (testing::Test::HasFatalFailure()) return r;
  set_lt_refusal_for_testing(true);
  Tape tape;
  testing::internal::CaptureStderr();
  Status st = gpu->enqueue_steps(OptimizerConfig{}, 1, &tape);
  r.err = testing::internal::GetCapturedStderr();
  set_lt_refusal_for_testing(false);
  EXPECT_TRUE(st.ok()) << st.message();
  r.audit = gpu->launch_audit();
  r.problems = gpu->launch_audit_problems();
  std::ostringstream printed;
  tape.print(printed);
  r.tape = printed.str();
  return r;
}

// A linear whose cuBLASLt epilogue is refused runs cublasGemmEx + a bias GEMM: the
// tape says so with cuBLASLt's reason, and the launch audit holds the step to the
// calls of the fallback it names (the step's table names cublasLtMatmul). Both dtypes.
template <class T>
void expect_visible_fallback() {
  MlpProgram mlp(2, 2, 6, 2);
  RefusedStep r = run_refused_step<T>(mlp);
  EXPECT_EQ(r.problems, 0) << r.audit;
  EXPECT_TRUE(contains(r.audit, "step 0 cublasLtMatmul(test linear) [unassigned] — "
                                "cublasLtMatmul(test linear) FELL BACK to cublasGemmEx + a bias "
                                "broadcast GEMM (cuBLASLt: refused for testing"))
      << r.audit;
  EXPECT_TRUE(contains(r.tape, "#0 linear capsule=test.linear node=3 ran=cublasLtMatmul("
                               "test linear) FELL BACK to cublasGemmEx + a bias "
                               "broadcast GEMM (cuBLASLt: refused for testing"))
      << r.tape;
  EXPECT_TRUE(contains(r.err, "note: cuBLASLt refused")) << r.err;
}

TEST(CudaExecutorGpuTest, ACublasLtFallbackIsOnTheTapeAndInTheAudit) {
  VOUCH_REQUIRE_CUDA_DEVICE("a cuBLASLt fallback on the tape");
  expect_visible_fallback<float>();
  expect_visible_fallback<double>();
}

// A refused BGRADB epilogue: the LinearWeightGrad step (a VJP step) runs cublasGemmEx
// for dW and a column-sum GEMM for db, which the audit holds it to and its node's vjp
// list on the tape names, the tape recorded before the VJP ran included.
template <class T>
void expect_visible_weight_grad_fallback() {
  MlpProgram mlp(2, 2, 6, 2, /*weight_grad_step=*/true);
  RefusedStep r = run_refused_step<T>(mlp);
  EXPECT_EQ(r.problems, 0) << r.audit;
  EXPECT_TRUE(contains(r.audit, "step 12 cublasLtMatmul(test weight grad) [unassigned] — "
                                "cublasLtMatmul(test weight grad) FELL BACK to cublasGemmEx + "
                                "column-sum GEMMs (cuBLASLt: refused for testing"))
      << r.audit;
  EXPECT_TRUE(contains(r.tape, "#0 linear capsule=test.linear node=3 ran=cublasLtMatmul(test "
                               "linear) FELL BACK"))
      << r.tape;
  EXPECT_TRUE(contains(r.tape, "vjp=[cublasLtMatmul(test weight grad) FELL BACK to "
                               "cublasGemmEx + column-sum GEMMs (cuBLASLt: refused "
                               "for testing"))
      << r.tape;
  EXPECT_TRUE(contains(r.err, "note: cuBLASLt refused CUBLASLT_EPILOGUE_BGRADB")) << r.err;
}

TEST(CudaExecutorGpuTest, ABgradbFallbackIsOnTheTapeAndInTheAudit) {
  VOUCH_REQUIRE_CUDA_DEVICE("a cuBLASLt BGRADB fallback on the tape");
  expect_visible_weight_grad_fallback<float>();
  expect_visible_weight_grad_fallback<double>();
}

TEST(CudaExecutorGpuTest, OptimizerKindsMatchTheHostOptimizer) {
  SCOPED_TRACE("native_cuda.sgd_step, native_cuda.adamw_step");  // Evidence.cpp "cuda-executor"
  VOUCH_REQUIRE_CUDA_DEVICE("cuda executor with SGD (momentum, weight decay) and AdamW");
  MlpProgram mlp(2, 2, 4, 1);
  const int64_t batches = 2, steps = 7;
  std::vector<double> x = values<double>(batches * 4, 5), y = values<double>(batches * 2, 6);
  OptimizerConfig sgd;
  sgd.kind = OptimizerConfig::Sgd;
  sgd.lr = 0.05;
  sgd.momentum = 0.9;
  sgd.weight_decay = 0.01;
  OptimizerConfig adamw;
  adamw.kind = OptimizerConfig::AdamW;
  adamw.lr = 0.02;
  adamw.weight_decay = 0.1;
  for (const OptimizerConfig& o : {sgd, adamw}) {
    std::vector<double> cpu_losses;
    std::vector<std::vector<double>> cpu_params;
    train_on_cpu<double>(mlp, o, x, y, batches, steps, &cpu_losses, &cpu_params);
    GpuRun<double> gpu = train_on_gpu<double>(mlp, o, x, y, batches, steps, true);
    expect_near(gpu.losses.data(), cpu_losses.data(), steps, 1e-11, "loss");
    for (int i = 0; i < 5; i++)
      expect_near(gpu.params[size_t(i)].data(), cpu_params[size_t(i)].data(),
                  int64_t(cpu_params[size_t(i)].size()), 1e-11, "param " + std::to_string(i));
  }
}

// RMSprop, Adagrad, every schedule (the lr computed on the device from the step counter
// inside one captured graph) and clipping (the vouch_grad_norm launch), against the host
// Optimizer on the same program.
TEST(CudaExecutorGpuTest, NewOptimizersSchedulesAndClippingMatchTheHostOptimizer) {
  SCOPED_TRACE("native_cuda.rmsprop_step, native_cuda.adagrad_step, native_cuda.clip_grad_norm");
  VOUCH_REQUIRE_CUDA_DEVICE("cuda executor with RMSprop, Adagrad, schedules and clipping");
  MlpProgram mlp(2, 2, 4, 1);
  const int64_t batches = 2, steps = 9;
  std::vector<double> x = values<double>(batches * 4, 5), y = values<double>(batches * 2, 6);
  OptimizerConfig rms;
  rms.kind = OptimizerConfig::RmsProp;
  rms.lr = 0.01;
  rms.momentum = 0.5;
  rms.weight_decay = 0.01;
  rms.schedule = OptimizerConfig::Step;
  rms.step_size = 3;
  rms.gamma = 0.5;
  OptimizerConfig ada;
  ada.kind = OptimizerConfig::Adagrad;
  ada.lr = 0.1;
  ada.eps = 1e-10;
  ada.lr_decay = 0.05;
  ada.schedule = OptimizerConfig::Exponential;
  ada.gamma = 0.9;
  ada.clip_grad_norm = 0.05;
  OptimizerConfig adamw;
  adamw.kind = OptimizerConfig::AdamW;
  adamw.lr = 0.02;
  adamw.weight_decay = 0.1;
  adamw.schedule = OptimizerConfig::WarmupCosine;
  adamw.warmup = 3;
  adamw.total = 8;
  adamw.min_lr = 0.001;
  adamw.clip_grad_norm = 0.05;
  for (const OptimizerConfig& o : {rms, ada, adamw}) {
    std::vector<double> cpu_losses;
    std::vector<std::vector<double>> cpu_params;
    train_on_cpu<double>(mlp, o, x, y, batches, steps, &cpu_losses, &cpu_params);
    GpuRun<double> gpu = train_on_gpu<double>(mlp, o, x, y, batches, steps, true);
    std::printf("tolerance: 1e-11 absolute (losses and params, f64)\n");
    expect_near(gpu.losses.data(), cpu_losses.data(), steps, 1e-11, "loss");
    for (int i = 0; i < 5; i++)
      expect_near(gpu.params[size_t(i)].data(), cpu_params[size_t(i)].data(),
                  int64_t(cpu_params[size_t(i)].size()), 1e-11, "param " + std::to_string(i));
  }
}

TEST(CudaExecutorGpuTest, AChangedOptimizerConfigIsCapturedAgain) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuda executor recapture on an optimizer change");
  MlpProgram mlp(1, 2, 3, 1);
  std::unique_ptr<CudaProgramModel<double>> gpu = make_cuda<double>(mlp.program);
  ASSERT_TRUE(gpu->status().ok()) << gpu->status().message();
  set_params(*gpu, mlp);
  std::vector<double> x = values<double>(4, 7), y = values<double>(2, 8);
  ASSERT_TRUE(gpu->upload_params().ok());
  ASSERT_TRUE(gpu->upload_data(x.data(), y.data(), 2).ok());
  OptimizerConfig a;
  a.lr = 0.01;
  OptimizerConfig b = a;
  b.lr = 0.5;
  ASSERT_TRUE(gpu->enqueue_step(a, nullptr).ok());
  ASSERT_TRUE(gpu->enqueue_step(a, nullptr).ok());
  EXPECT_EQ(gpu->step_graph()->captures(), 1);
  ASSERT_TRUE(gpu->enqueue_step(b, nullptr).ok());
  EXPECT_EQ(gpu->step_graph()->captures(), 2);
  ASSERT_TRUE(gpu->download_params().ok());
  // The cpu with the same schedule of configs.
  CpuProgramModel<double> cpu(mlp.program, kMlpCpuKernels<double>);
  set_params(cpu, mlp);
  std::vector<std::pair<double*, double*>> pg;
  std::vector<int64_t> sizes;
  for (int i = 0; i < 5; i++) {
    pg.push_back({cpu.param(i), cpu.grad(i)});
    sizes.push_back(mlp.buffers[size_t(mlp.params[size_t(i)])].numel);
  }
  Optimizer<double> opt_a(a, pg, sizes);
  for (int k = 0; k < 2; k++) {
    Tape tape;
    cpu.forward(x.data() + (k % 2) * 2, y.data() + k % 2, &tape);
    cpu.backward(tape);
    opt_a.step();
  }
  // Step 3 ran with lr 0.5 (the host Optimizer cannot change lr mid-run): Adam moves
  // each element by about lr, so W1 must have moved far more than an lr-0.01 step.
  std::vector<double> after_two(cpu.param(0), cpu.param(0) + 6);
  double moved = 0;
  for (int e = 0; e < 6; e++) moved = std::max(moved, std::fabs(gpu->param(0)[e] - after_two[e]));
  EXPECT_GT(moved, 0.05);
  // The unrolled graph too: captured with a, dropped on the change to b, captured again.
  ASSERT_TRUE(gpu->enqueue_steps(a, 8, nullptr).ok());
  ASSERT_NE(gpu->unrolled_graph(), nullptr);
  EXPECT_EQ(gpu->unrolled_graph()->captures(), 1);
  ASSERT_TRUE(gpu->enqueue_steps(b, 8, nullptr).ok());
  EXPECT_EQ(gpu->unrolled_graph()->captures(), 2);
  EXPECT_EQ(gpu->unrolled_graph()->launches(), 2);
  EXPECT_EQ(gpu->step_graph()->captures(), 2);  // not used by these two calls
}

TEST(CudaExecutorGpuTest, TheLossRingKeepsTheLastCapacitySteps) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuda executor loss ring");
  MlpProgram mlp(1, 2, 3, 1);
  std::unique_ptr<CudaProgramModel<float>> gpu = make_cuda<float>(mlp.program, 4);
  ASSERT_TRUE(gpu->status().ok()) << gpu->status().message();
  EXPECT_EQ(gpu->loss_capacity(), 4);
  set_params(*gpu, mlp);
  std::vector<float> x = values<float>(10, 9), y = values<float>(5, 10);
  ASSERT_TRUE(gpu->upload_params().ok());
  ASSERT_TRUE(gpu->upload_data(x.data(), y.data(), 5).ok());
  OptimizerConfig o;
  std::vector<double> early(3);
  for (int k = 0; k < 3; k++) ASSERT_TRUE(gpu->enqueue_step(o, nullptr).ok());
  ASSERT_TRUE(gpu->read_losses(0, 3, early.data()).ok());
  for (int k = 3; k < 10; k++) ASSERT_TRUE(gpu->enqueue_step(o, nullptr).ok());
  EXPECT_EQ(gpu->steps_enqueued(), 10);
  std::vector<double> last(4);
  Status ok = gpu->read_losses(6, 4, last.data());  // wraps: slots 2, 3, 0, 1
  ASSERT_TRUE(ok.ok()) << ok.message();
  // The same run with a ring that never wraps: steps 6..9 bit for bit (each step's loss
  // differs, so a wrong slot shows).
  std::unique_ptr<CudaProgramModel<float>> wide = make_cuda<float>(mlp.program, 64);
  ASSERT_TRUE(wide->status().ok()) << wide->status().message();
  set_params(*wide, mlp);
  ASSERT_TRUE(wide->upload_params().ok());
  ASSERT_TRUE(wide->upload_data(x.data(), y.data(), 5).ok());
  for (int k = 0; k < 10; k++) ASSERT_TRUE(wide->enqueue_step(o, nullptr).ok());
  std::vector<double> all(10);
  ASSERT_TRUE(wide->read_losses(0, 10, all.data()).ok());
  EXPECT_EQ(last, std::vector<double>(all.begin() + 6, all.end()));
  EXPECT_EQ(early, std::vector<double>(all.begin(), all.begin() + 3));
  EXPECT_NE(all[6], all[7]);
  double one = 0;
  EXPECT_EQ(gpu->read_losses(5, 1, &one).message(),
            "read_losses: the loss of step 5 was overwritten (the ring keeps the last 4 of 10 "
            "steps)");
  EXPECT_EQ(gpu->read_losses(9, 2, &one).message(),
            "read_losses: steps [9, 11) were not all enqueued (10 steps so far)");
  // upload_params starts over: step 0 again, the ring poisoned.
  ASSERT_TRUE(gpu->upload_params().ok());
  EXPECT_EQ(gpu->steps_enqueued(), 0);
  ASSERT_TRUE(gpu->enqueue_step(o, nullptr).ok());
  ASSERT_TRUE(gpu->read_losses(0, 1, &one).ok());
  EXPECT_EQ(one, early[0]);  // same params, same batch 0, fresh optimizer state
}

TEST(CudaExecutorGpuTest, ArgumentListsAndKernelNamesAreCheckedAtConstruction) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuda executor kernel checks");
  // (A kernel taking more parameters than its step passes is not probed for:
  // asking for a parameter past the last is an API error compute-sanitizer
  // reports; see check_parameters.)
  {
    MlpProgram mlp(1, 2, 3, 1);
    const char* names[kNumMlpKernels];
    for (int k = 0; k < kNumMlpKernels; k++) names[k] = kMlpKernelNames[k];
    names[kRelu] = "mlp_wrong";  // (Dims, const T*, long long) where the step passes (T*, T*, n)
    mlp.program.kernel_names = names;
    std::unique_ptr<CudaProgramModel<float>> gpu = make_cuda<float>(mlp.program);
    EXPECT_EQ(gpu->status().message(),
              "program `test_mlp`: step 1: parameter 0 of kernel mlp_wrong_f32 is 136 bytes, "
              "but the argument is a buffer pointer (8 bytes)");
    names[kRelu] = "mlp_absent";
    std::unique_ptr<CudaProgramModel<float>> absent = make_cuda<float>(mlp.program);
    EXPECT_TRUE(contains(absent->status().message(), "mlp_absent_f32")) << absent->status().message();
  }
}

// ---- bf16 buffers read in place by bf16 products ---------------------------------------

// A hand-written Program of an f32 --precision bf16 build made of products (Gemm, Linear,
// LinearWeightGrad) over buffers the test writes itself (no step writes them; none is a
// param, since a param is never bf16), then mse_loss of the last product's output
// against the one field y. A param off the product path, `unused`, has its gradient
// filled by the prologue, so the optimizer has a param.
struct ProductProgram {
  std::vector<BufferDesc> buffers;
  std::vector<StepDesc> steps;
  std::vector<ArgDesc> args;
  int32_t params[1] = {}, grads[1] = {}, fields[1] = {};
  Program program{};

  int32_t add(const char* name, int64_t numel, DType dtype = DType::Real) {
    buffers.push_back({numel, -1, name, nullptr, dtype});
    return int32_t(buffers.size()) - 1;
  }
  // C (m x n) = A (m x k) · B (k x n).
  void gemm(int32_t a, int32_t b, int32_t c, int64_t m, int64_t n, int64_t k) {
    steps.push_back(gemm_step(false, false, m, n, k, a, b, c));
  }
  // y (m x n) = x (m x k) · W (n x k)ᵀ + bias (n).
  void linear(int32_t x, int32_t w, int32_t bias, int32_t y, int64_t m, int64_t n, int64_t k) {
    steps.push_back(linear_step(x, w, bias, y, m, k, n));
  }
  // dW (m x n) = dy (k x m)ᵀ · x (k x n), db (m) = Σ_rows dy.
  void weight_grad(int32_t dy, int32_t x, int32_t dw, int32_t db, int64_t m, int64_t n,
                   int64_t k) {
    steps.push_back(weight_grad_step(dy, x, dw, db, m, n, k));
  }
  // The loss of `out` against a field y, the param, the prologue; then the tables.
  void finish(int32_t out) {
    const int64_t n = buffers[size_t(out)].numel;
    const int32_t y = add("y", n), loss = add("loss", 1);
    params[0] = add("unused", 1);
    grads[0] = add("d_unused", 1);
    fields[0] = y;
    kernel(kMseLoss, {{ArgDesc::Buffer, loss, 1, 0}, {ArgDesc::Buffer, out, 0, 0},
                      {ArgDesc::Buffer, y, 0, 0}, {ArgDesc::Int, n, 0, 0}});
    program.forward_end = program.prologue_begin = int32_t(steps.size());
    kernel(kFill, {{ArgDesc::Buffer, grads[0], 1, 0}, {ArgDesc::Real, 0, 0, 0.0},
                   {ArgDesc::Int, 1, 0, 0}});
    program.prologue_end = int32_t(steps.size());
    program.name = "bf16_products";
    program.buffers = buffers.data();
    program.num_buffers = int32_t(buffers.size());
    program.params = params;
    program.grads = grads;
    program.num_params = 1;
    program.loss = loss;
    program.output = out;
    program.steps = steps.data();
    program.num_steps = int32_t(steps.size());
    program.args = args.data();
    program.num_args = int32_t(args.size());
    program.kernel_names = kMlpKernelNames;
    program.num_kernels = kNumMlpKernels;
    program.fields = fields;
    program.num_fields = 1;
  }

 private:
  void kernel(MlpKernel k, std::vector<ArgDesc> a) {
    StepDesc st{};
    st.kind = StepKind::Kernel;
    st.kernel = k;
    st.first_arg = int32_t(args.size());
    st.num_args = int32_t(a.size());
    st.grid_x = st.block_x = st.block_y = 1;
    st.bias = -1;
    st.what = kMlpKernelNames[k];
    args.insert(args.end(), a.begin(), a.end());
    steps.push_back(st);
  }
};

// Host f32 values rounded to bf16 (host_bf16) and back: what a bf16 product multiplies.
std::vector<double> rounded(const std::vector<float>& v) {
  std::vector<double> out;
  for (float f : v) out.push_back(bf16_value(host_bf16(f)));
  return out;
}

// One audited training step of `p` (ProductMath::Bf16, f32): `inputs` written first into
// their buffers (as f32, or as their bf16 bits where the buffer is Bf16); then every
// buffer in `read` downloaded (a Bf16 one as the values of its bits).
struct ProductStep {
  std::string audit;
  int64_t problems = -1;
  std::map<int32_t, std::vector<float>> values;
};
ProductStep run_product_step(const ProductProgram& p,
                             const std::map<int32_t, std::vector<float>>& inputs,
                             const std::vector<int32_t>& read) {
  ProductStep r;
  CudaProgramModel<float> gpu(p.program, &kExecutorImage, 1, ProductMath::Bf16);
  EXPECT_TRUE(gpu.status().ok()) << gpu.status().message();
  if (!gpu.status().ok()) return r;
  RunConfig run;
  run.audit_launches = true;
  EXPECT_TRUE(gpu.configure(run).ok());
  gpu.param(0)[0] = 0.5f;
  EXPECT_TRUE(gpu.upload_params().ok());
  for (const auto& [b, v] : inputs) {
    Status st = Status::Ok();
    if (p.buffers[size_t(b)].dtype == DType::Bf16) {
      std::vector<bf16_bits> bits;
      for (float f : v) bits.push_back(host_bf16(f));
      st = upload(reinterpret_cast<bf16_bits*>(gpu.device_buffer(b)), bits.data(), bits.size(),
                  gpu.stream());
    } else {
      st = upload(gpu.device_buffer(b), v.data(), v.size(), gpu.stream());
    }
    EXPECT_TRUE(st.ok()) << st.message();
  }
  std::vector<float> y(size_t(p.buffers[size_t(p.fields[0])].numel), 0.25f);
  const void* fields[] = {y.data()};
  EXPECT_TRUE(gpu.upload_fields(fields, 1).ok());
  Status st = gpu.enqueue_steps(OptimizerConfig{}, 1, nullptr);
  EXPECT_TRUE(st.ok()) << st.message();
  std::map<int32_t, std::vector<bf16_bits>> bits;
  for (int32_t b : read) {
    const size_t n = size_t(p.buffers[size_t(b)].numel);
    if (p.buffers[size_t(b)].dtype == DType::Bf16) {
      bits[b].resize(n);
      EXPECT_TRUE(download(bits[b].data(), reinterpret_cast<bf16_bits*>(gpu.device_buffer(b)), n,
                           gpu.stream())
                      .ok());
      continue;
    }
    std::vector<float>& v = r.values[b];
    v.resize(n);
    EXPECT_TRUE(download(v.data(), gpu.device_buffer(b), v.size(), gpu.stream()).ok());
  }
  EXPECT_EQ(cudaStreamSynchronize(gpu.stream()), cudaSuccess);
  for (const auto& [b, v] : bits)
    for (bf16_bits x : v) r.values[b].push_back(float(bf16_value(x)));
  r.audit = gpu.launch_audit();
  r.problems = gpu.launch_audit_problems();
  return r;
}

// Everywhere: where a Bf16 buffer may be, which the cuda executor checks at load.
TEST(CudaExecutorTest, Bf16BuffersAreCheckedAgainstTheProductsThatReadThem) {
  {
    // A [4, 7]: bf16 pads K to 8, so A would be read through a padded copy.
    ProductProgram p;
    const int32_t a = p.add("a16", 4 * 7, DType::Bf16), b = p.add("b", 7 * 8),
                  c = p.add("c", 4 * 8);
    p.gemm(a, b, c, 4, 8, 7);
    p.finish(c);
    ASSERT_TRUE(check_program(p.program).ok()) << check_program(p.program).message();
    EXPECT_EQ(check_bf16_buffers(p.program, ProductMath::Bf16, true).message(),
              "program `bf16_products`: step 0 (cublasGemmEx(test gemm)): lhs buffer 0 (a16) is "
              "bf16, but the product reads it through a padded copy, 1 x 4 x 7 padded to 1 x 4 "
              "x 8 (batches x rows x row pitch): a bf16 operand is read where it lies, so its "
              "layout must pad nothing");
  }
  {
    // linear(x, W) with 5 outputs: W's rows pad to 8; x [4, 16] needs no padding.
    ProductProgram p;
    const int32_t x = p.add("x16", 4 * 16, DType::Bf16), w = p.add("w16", 5 * 16, DType::Bf16),
                  bias = p.add("bias", 5), y = p.add("y_out", 4 * 5);
    p.linear(x, w, bias, y, 4, 5, 16);
    p.finish(y);
    EXPECT_TRUE(contains(check_bf16_buffers(p.program, ProductMath::Bf16, true).message(),
                         "step 0 (cublasLtMatmul(test linear)): W buffer 1 (w16) is bf16, but "
                         "the product reads it through a padded copy, 1 x 5 x 16 padded to 1 x "
                         "8 x 16"))
        << check_bf16_buffers(p.program, ProductMath::Bf16, true).message();
    p.buffers[size_t(w)].dtype = DType::Real;  // x alone: read in place
    EXPECT_TRUE(check_bf16_buffers(p.program, ProductMath::Bf16, true).ok());
    // Without bf16 products a bf16 buffer has no reader.
    EXPECT_EQ(check_bf16_buffers(p.program, ProductMath::Tf32, true).message(),
              "program `bf16_products`: buffer 0 (x16) is bf16, but this run's products are "
              "tf32 f32: bf16 buffers are read by the bf16 products of an f32 run "
              "(--precision bf16) only");
    EXPECT_TRUE(contains(check_bf16_buffers(p.program, ProductMath::Fp32, true).message(),
                         "this run's products are fp32 f32"));
    EXPECT_TRUE(contains(check_bf16_buffers(p.program, ProductMath::Bf16, false).message(),
                         "this run's products are f64"));
    p.buffers[size_t(x)].dtype = DType::Real;
    EXPECT_TRUE(check_bf16_buffers(p.program, ProductMath::Fp32, false).ok());
  }
  {
    // A bf16 result: a linear's y where nothing pads it (cuBLASLt's D), never a Gemm's
    // C nor a padded y (copied out of the scratch as f32).
    ProductProgram p;
    const int32_t x = p.add("x16", 4 * 16, DType::Bf16), w = p.add("w16", 8 * 16, DType::Bf16),
                  y = p.add("y16", 4 * 8, DType::Bf16), w5 = p.add("w5", 5 * 16),
                  y5 = p.add("y5", 4 * 5, DType::Bf16), c = p.add("c16", 4 * 8, DType::Bf16),
                  out = p.add("out", 4 * 8);
    p.linear(x, w, -1, y, 4, 8, 16);
    p.linear(x, w5, -1, y5, 4, 5, 16);
    p.gemm(x, w, c, 4, 8, 16);
    p.gemm(x, w, out, 4, 8, 16);
    p.finish(out);
    EXPECT_EQ(check_bf16_buffers(p.program, ProductMath::Bf16, true).message(),
              "program `bf16_products`: step 1 (cublasLtMatmul(test linear)): its result buffer 4 "
              "(y5) is bf16, which only a linear whose output is not padded stores");
    p.buffers[size_t(y5)].dtype = DType::Real;
    EXPECT_EQ(check_bf16_buffers(p.program, ProductMath::Bf16, true).message(),
              "program `bf16_products`: step 2 (cublasGemmEx(test gemm)): its result buffer 5 "
              "(c16) is bf16, which only a linear whose output is not padded stores");
    p.buffers[size_t(c)].dtype = DType::Real;
    EXPECT_TRUE(check_bf16_buffers(p.program, ProductMath::Bf16, true).ok());
  }
  {
    // The device storage: a Bf16 owner takes 2 bytes an element, in whole reals, or what
    // a real alias of it needs; every other owner numel × the real's bytes.
    ProductProgram p;
    const int32_t a = p.add("a16", 5, DType::Bf16), r = p.add("r", 5);
    const int32_t view = p.add("view", 5, DType::Bf16), wide = p.add("wide", 6, DType::Bf16);
    const int32_t real_view = p.add("real_view", 3);
    p.buffers[size_t(view)].alias_of = a;
    p.buffers[size_t(real_view)].alias_of = wide;
    p.gemm(a, r, r, 1, 1, 1);
    p.finish(r);
    const std::vector<uint64_t> f32 = storage_bytes(p.program, 4);
    EXPECT_EQ(f32[size_t(a)], 12u);  // 10 bytes in whole f32s
    EXPECT_EQ(f32[size_t(r)], 20u);
    EXPECT_EQ(f32[size_t(view)], 0u);
    EXPECT_EQ(f32[size_t(wide)], 12u);  // 12 bytes of bf16, 12 of its f32 view
    EXPECT_EQ(storage_bytes(p.program, 8)[size_t(wide)], 24u);  // the view's 3 f64s
    p.buffers[size_t(view)].alias_of = view;  // a cycle: counted for nothing, no hang
    EXPECT_EQ(storage_bytes(p.program, 4)[size_t(view)], 0u);
  }
}

// A Gemm whose A, B or both are Bf16 buffers holding the host's rounding of the values
// another Gemm reads as f32 and the executor rounds (vouch_round_bf16_f32): the four
// products are bitwise equal, the in-place operands have no rounding launch, and each
// product's audit label says which it read in place.
TEST(CudaExecutorGpuTest, Bf16BuffersAreReadInPlaceByAGemm) {
  VOUCH_REQUIRE_CUDA_DEVICE("bf16 buffers read in place by a bf16 GEMM");
  const int64_t M = 4, N = 8, K = 16;
  ProductProgram p;
  const int32_t a = p.add("a", M * K), b = p.add("b", K * N);
  const int32_t a16 = p.add("a16", M * K, DType::Bf16), b16 = p.add("b16", K * N, DType::Bf16);
  std::vector<int32_t> c;
  for (const char* name : {"c_rounded", "c_a16", "c_b16", "c_both"}) c.push_back(p.add(name, M * N));
  p.gemm(a, b, c[0], M, N, K);
  p.gemm(a16, b, c[1], M, N, K);
  p.gemm(a, b16, c[2], M, N, K);
  p.gemm(a16, b16, c[3], M, N, K);
  p.finish(c[3]);
  const std::vector<float> av = values<float>(M * K, 31), bv = values<float>(K * N, 32);
  ProductStep r = run_product_step(p, {{a, av}, {b, bv}, {a16, av}, {b16, bv}}, c);
  EXPECT_EQ(r.problems, 0) << r.audit;
  ASSERT_EQ(r.values.size(), 4u);
  for (int i = 1; i < 4; i++) EXPECT_EQ(r.values[c[size_t(i)]], r.values[c[0]]) << i;
  const std::vector<double> ad = rounded(av), bd = rounded(bv);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double want = 0;
      for (int64_t k = 0; k < K; k++) want += ad[size_t(i * K + k)] * bd[size_t(k * N + j)];
      EXPECT_NEAR(r.values[c[0]][size_t(i * N + j)], want, 1e-5 * (1 + std::fabs(want)));
    }
  // Rounded once each (steps 1 and 2 find the other operand's copy in the scratch).
  EXPECT_TRUE(contains(r.audit, "vouch_round_bf16_f32 (lhs of step 0)")) << r.audit;
  EXPECT_TRUE(contains(r.audit, "vouch_round_bf16_f32 (rhs of step 0)")) << r.audit;
  for (const char* never : {"(lhs of step 1)", "(rhs of step 2)", "(lhs of step 3)", "(rhs of step 3)",
                            "(rhs of step 1)", "(lhs of step 2)"})
    EXPECT_FALSE(contains(r.audit, never)) << never << "\n" << r.audit;
  EXPECT_TRUE(contains(r.audit, "step 1 cublasGemmEx(test gemm) [unassigned], lhs read as bf16 "
                                "in place (buffer a16)"))
      << r.audit;
  EXPECT_TRUE(contains(r.audit, "step 2 cublasGemmEx(test gemm) [unassigned], rhs read as bf16 "
                                "in place (buffer b16)"))
      << r.audit;
  EXPECT_TRUE(contains(r.audit, "step 3 cublasGemmEx(test gemm) [unassigned], lhs read as bf16 "
                                "in place (buffer a16), rhs read as bf16 in place (buffer b16)"))
      << r.audit;
}

// A linear with 5 outputs (N padded to 8: W and the bias copied padded, y written padded
// into the scratch and copied out) whose x is a Bf16 buffer: y lies where x's copy would
// have (x takes no scratch), so the next linear must round its f32 x again; all three
// outputs are bitwise equal.
TEST(CudaExecutorGpuTest, ABf16XIsReadInPlaceByALinearWithAPaddedOutput) {
  VOUCH_REQUIRE_CUDA_DEVICE("a bf16 x read in place by a padded bf16 linear");
  const int64_t rows = 4, in = 16, out = 5;
  ProductProgram p;
  const int32_t x = p.add("x", rows * in), x16 = p.add("x16", rows * in, DType::Bf16);
  const int32_t w = p.add("w", out * in), bias = p.add("bias", out);
  std::vector<int32_t> y;
  for (const char* name : {"y_rounded", "y_x16", "y_again"}) y.push_back(p.add(name, rows * out));
  p.linear(x, w, bias, y[0], rows, out, in);
  p.linear(x16, w, bias, y[1], rows, out, in);
  p.linear(x, w, bias, y[2], rows, out, in);
  p.finish(y[2]);
  const std::vector<float> xv = values<float>(rows * in, 41), wv = values<float>(out * in, 42),
                           bv = values<float>(out, 43);
  ProductStep r = run_product_step(p, {{x, xv}, {x16, xv}, {w, wv}, {bias, bv}}, y);
  EXPECT_EQ(r.problems, 0) << r.audit;
  ASSERT_EQ(r.values.size(), 3u);
  EXPECT_EQ(r.values[y[1]], r.values[y[0]]);
  EXPECT_EQ(r.values[y[2]], r.values[y[0]]);
  const std::vector<double> xd = rounded(xv), wd = rounded(wv);
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < out; j++) {
      double want = bv[size_t(j)];
      for (int64_t k = 0; k < in; k++) want += xd[size_t(i * in + k)] * wd[size_t(j * in + k)];
      EXPECT_NEAR(r.values[y[1]][size_t(i * out + j)], want, 1e-5 * (1 + std::fabs(want)));
    }
  EXPECT_TRUE(contains(r.audit, "vouch_round_bf16_f32 (x of step 0)")) << r.audit;
  EXPECT_FALSE(contains(r.audit, "(x of step 1)")) << r.audit;
  EXPECT_TRUE(contains(r.audit, "vouch_round_bf16_f32 (x of step 2)")) << r.audit;
  EXPECT_TRUE(contains(r.audit, "vouch_round_bf16_f32 (W of step 0)")) << r.audit;
  EXPECT_FALSE(contains(r.audit, "(W of step 1)")) << r.audit;  // still in the scratch
  EXPECT_TRUE(contains(r.audit, "vouch_repitch_f32 (y of step 1)")) << r.audit;
  EXPECT_TRUE(contains(r.audit, "step 1 cublasLtMatmul(test linear) [unassigned], x read as "
                                "bf16 in place (buffer x16)"))
      << r.audit;
}

// A linear whose y is a Bf16 buffer (vouch-round-bf16-operands folded its rounding in),
// its bias a Bf16 buffer too where it has one: cuBLASLt stores y (no rounding launch),
// each value within half a bf16 ulp of the f32 linear's of the same values; where
// cuBLASLt refuses (here forced), the f32 linear goes to the scratch and one
// vouch_round_bf16 launch rounds it into y, bitwise the rounding of the f32 linear; the
// tape and the audit say so. A bias whose type is not y's is refused at load.
TEST(CudaExecutorGpuTest, ALinearStoresItsYAsBf16) {
  VOUCH_REQUIRE_CUDA_DEVICE("a bf16 linear storing its y as bf16");
  const int64_t rows = 8, in = 16, out = 24;
  ProductProgram p, q;  // cuBLASLt storing y; refusing
  const std::vector<float> xv = values<float>(rows * in, 61), wv = values<float>(out * in, 62),
                           bv = values<float>(out, 63);
  // The bias's values as a Bf16 buffer holds them, for the f32 linears beside.
  std::vector<float> bv16;
  for (double v : rounded(bv)) bv16.push_back(float(v));
  const int32_t x16 = p.add("x16", rows * in, DType::Bf16);
  const int32_t w16 = p.add("w16", out * in, DType::Bf16);
  const int32_t b16 = p.add("b16", out, DType::Bf16), b32 = p.add("b32", out);
  const int32_t y16 = p.add("y16", rows * out, DType::Bf16), y = p.add("y32", rows * out);
  const int32_t yb16 = p.add("yb16", rows * out, DType::Bf16), yb = p.add("yb32", rows * out);
  p.linear(x16, w16, -1, y16, rows, out, in);
  p.linear(x16, w16, -1, y, rows, out, in);
  p.linear(x16, w16, b16, yb16, rows, out, in);
  p.linear(x16, w16, b32, yb, rows, out, in);
  p.finish(yb);
  ProductStep r =
      run_product_step(p, {{x16, xv}, {w16, wv}, {b16, bv}, {b32, bv16}}, {y16, y, yb16, yb});
  EXPECT_EQ(r.problems, 0) << r.audit;
  ASSERT_EQ(r.values.size(), 4u);
  for (auto [bf16, f32] : {std::pair{y16, y}, {yb16, yb}})
    for (size_t i = 0; i < r.values[f32].size(); i++) {
      const double want = r.values[f32][i];
      EXPECT_NEAR(r.values[bf16][i], want, std::ldexp(std::fabs(want), -8)) << bf16 << " " << i;
    }
  EXPECT_FALSE(contains(r.audit, "vouch_round_bf16_f32")) << r.audit;
  EXPECT_FALSE(contains(r.audit, "FELL BACK")) << r.audit;
  // The same with the bias, cuBLASLt refusing every call.
  const int32_t qx = q.add("x16", rows * in, DType::Bf16), qw = q.add("w16", out * in, DType::Bf16),
                qb16 = q.add("b16", out, DType::Bf16), qb = q.add("b32", out);
  const int32_t qy16 = q.add("y16", rows * out, DType::Bf16), qy = q.add("y32", rows * out);
  q.linear(qx, qw, qb16, qy16, rows, out, in);
  q.linear(qx, qw, qb, qy, rows, out, in);
  q.finish(qy);
  set_lt_refusal_for_testing(true);  // before the executor's set-up, which sizes the scratch
  testing::internal::CaptureStderr();
  ProductStep refused =
      run_product_step(q, {{qx, xv}, {qw, wv}, {qb16, bv}, {qb, bv16}}, {qy16, qy});
  std::string err = testing::internal::GetCapturedStderr();
  set_lt_refusal_for_testing(false);
  EXPECT_EQ(refused.problems, 0) << refused.audit;
  ASSERT_EQ(refused.values.size(), 2u);
  for (size_t i = 0; i < refused.values[qy].size(); i++)
    EXPECT_EQ(host_bf16(refused.values[qy][i]), host_bf16(refused.values[qy16][i])) << i;
  EXPECT_TRUE(contains(refused.audit, "cublasLtMatmul(test linear) FELL BACK to cublasGemmEx + "
                                      "a bias broadcast GEMM into the executor's scratch, then "
                                      "vouch_round_bf16_f32 into y (cuBLASLt: refused for testing"))
      << refused.audit;
  EXPECT_TRUE(contains(refused.audit, "vouch_round_bf16_f32 (y of step 0)")) << refused.audit;
  EXPECT_FALSE(contains(refused.audit, "(y of step 1)")) << refused.audit;
  EXPECT_TRUE(contains(err, "using the f32 linear, then vouch_round_bf16 instead")) << err;
  // A bias that is not y's type: refused at load, naming both buffers (the program's
  // output a real linear's y beside it: an output is never bf16).
  ProductProgram mixed;
  const int32_t mx = mixed.add("x16", rows * in, DType::Bf16),
                mw = mixed.add("w16", out * in, DType::Bf16), mb = mixed.add("b32", out),
                my = mixed.add("y16", rows * out, DType::Bf16), mo = mixed.add("y32", rows * out);
  mixed.linear(mx, mw, mb, my, rows, out, in);
  mixed.linear(mx, mw, mb, mo, rows, out, in);
  mixed.finish(mo);
  CudaProgramModel<float> gpu(mixed.program, &kExecutorImage, 1, ProductMath::Bf16);
  ASSERT_FALSE(gpu.status().ok());
  EXPECT_TRUE(contains(gpu.status().message(),
                       "bias buffer 2 (b32) is real but y buffer 3 (y16) is bf16: a linear's "
                       "bias is bf16 exactly when its y is"))
      << gpu.status().message();
}

// A linear's weight gradient whose dy, x or both are Bf16 buffers: dW and db bitwise
// equal to those of the f32 operands the executor rounds.
TEST(CudaExecutorGpuTest, Bf16BuffersAreReadInPlaceByALinearWeightGrad) {
  VOUCH_REQUIRE_CUDA_DEVICE("bf16 buffers read in place by a bf16 linear weight gradient");
  const int64_t rows = 5, in = 16, out = 8;
  ProductProgram p;
  const int32_t dy = p.add("dy", rows * out), x = p.add("x", rows * in);
  const int32_t dy16 = p.add("dy16", rows * out, DType::Bf16);
  const int32_t x16 = p.add("x16", rows * in, DType::Bf16);
  std::vector<int32_t> dw, db, read;
  const std::pair<int32_t, int32_t> operands[] = {{dy, x}, {dy16, x}, {dy, x16}, {dy16, x16}};
  for (int i = 0; i < 4; i++) {
    dw.push_back(p.add("dw", out * in));
    db.push_back(p.add("db", out));
    p.weight_grad(operands[i].first, operands[i].second, dw.back(), db.back(), out, in, rows);
    read.push_back(dw.back());
    read.push_back(db.back());
  }
  p.finish(dw.back());
  const std::vector<float> dyv = values<float>(rows * out, 51), xv = values<float>(rows * in, 52);
  ProductStep r = run_product_step(p, {{dy, dyv}, {dy16, dyv}, {x, xv}, {x16, xv}}, read);
  EXPECT_EQ(r.problems, 0) << r.audit;
  ASSERT_EQ(r.values.size(), 8u);
  for (int i = 1; i < 4; i++) {
    EXPECT_EQ(r.values[dw[size_t(i)]], r.values[dw[0]]) << i;
    EXPECT_EQ(r.values[db[size_t(i)]], r.values[db[0]]) << i;
  }
  const std::vector<double> dyd = rounded(dyv), xd = rounded(xv);
  for (int64_t o = 0; o < out; o++)
    for (int64_t j = 0; j < in; j++) {
      double want = 0;
      for (int64_t k = 0; k < rows; k++) want += dyd[size_t(k * out + o)] * xd[size_t(k * in + j)];
      EXPECT_NEAR(r.values[dw[0]][size_t(o * in + j)], want, 1e-5 * (1 + std::fabs(want)));
    }
  EXPECT_TRUE(contains(r.audit, "vouch_round_bf16_f32 (dy of step 0)")) << r.audit;
  EXPECT_TRUE(contains(r.audit, "vouch_round_bf16_f32 (x of step 0)")) << r.audit;
  for (const char* never : {"(dy of step 1)", "(x of step 2)", "(dy of step 3)", "(x of step 3)"})
    EXPECT_FALSE(contains(r.audit, never)) << never << "\n" << r.audit;
  EXPECT_TRUE(contains(r.audit, "step 3 cublasLtMatmul(test weight grad) [unassigned], dy read "
                                "as bf16 in place (buffer dy16), x read as bf16 in place (buffer "
                                "x16)"))
      << r.audit;
}

// At load: a Bf16 operand the product would read through a padded copy (K = 7), and a
// Bf16 buffer in a model whose products are not bf16.
TEST(CudaExecutorGpuTest, ABf16OperandThatNeedsPaddingIsRefusedAtLoad) {
  VOUCH_REQUIRE_CUDA_DEVICE("a bf16 operand refused at load");
  ProductProgram p;
  const int32_t a = p.add("a16", 4 * 7, DType::Bf16), b = p.add("b", 7 * 8),
                c = p.add("c", 4 * 8);
  p.gemm(a, b, c, 4, 8, 7);
  p.finish(c);
  CudaProgramModel<float> bf16(p.program, &kExecutorImage, 1, ProductMath::Bf16);
  EXPECT_EQ(bf16.status().message(),
            check_bf16_buffers(p.program, ProductMath::Bf16, true).message());
  EXPECT_TRUE(contains(bf16.status().message(), "lhs buffer 0 (a16) is bf16, but the product "
                                                 "reads it through a padded copy"))
      << bf16.status().message();
  CudaProgramModel<float> tf32(p.program, &kExecutorImage, 1, ProductMath::Tf32);
  EXPECT_TRUE(contains(tf32.status().message(), "this run's products are tf32 f32"))
      << tf32.status().message();
  CudaProgramModel<double> f64(p.program, &kExecutorImage, 1, ProductMath::Bf16);
  EXPECT_TRUE(contains(f64.status().message(), "this run's products are f64"))
      << f64.status().message();
}

TEST(CudaExecutorGpuTest, QuickstartThroughTrainMainMatchesTheGolden) {
  VOUCH_REQUIRE_CUDA_DEVICE("the quickstart through train_main on the cuda executor");
  MlpProgram mlp(1, 2, 8, 1);
  Backend cpu = cpu_program_backend(mlp.program, kMlpCpuKernels<float>, kMlpCpuKernels<double>,
                                    "backend: cpu (test)", {});
  Backend cuda = cuda_backend(mlp.program);
  for (const char* graph : {"--deterministic", "--no-cuda-graph"}) {
    RunOutput r = run_main({cpu, cuda}, quickstart_description(), {"--device", "cuda", "--dtype", "f64", graph});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, kQuickstartGolden) << graph;
  }
  // The default on cuda is f32: close to the f64 golden.
  RunOutput f32 = run_main({cpu, cuda}, quickstart_description(), {"--steps", "200"});
  EXPECT_EQ(f32.code, 0) << f32.err;
  double before = 0;
  ASSERT_EQ(std::sscanf(f32.out.c_str(), "mean_loss(before) = %lf", &before), 1) << f32.out;
  EXPECT_NEAR(before, 1.349908, 1e-5);
  // --trace reads every step (ring flushes), --show-backend names the executor's launches.
  std::string trace = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") +
                      "/cuda_trace.txt";
  RunOutput traced = run_main({cpu, cuda}, quickstart_description(),
                              {"--device", "cuda", "--steps", "30", "--trace", trace,
                               "--show-backend"});
  EXPECT_EQ(traced.code, 0) << traced.err;
  EXPECT_TRUE(contains(traced.out, "backend: cuda (test)\ntest schedule: 14 steps\n  replayed "
                                   "as a CUDA graph of 1 step, or of up to 8 back-to-back "
                                   "steps between loss reads; launches ordered by the buffers "
                                   "they read and write"))
      << traced.out;
  FILE* f = std::fopen(trace.c_str(), "r");
  ASSERT_NE(f, nullptr);
  int lines = 0;
  char line[256];
  while (std::fgets(line, sizeof line, f)) lines += std::strncmp(line, "step ", 5) == 0;
  std::fclose(f);
  EXPECT_EQ(lines, 30);
}

}  // namespace
}  // namespace vouch::rt::cuda
