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
                              "backend: cuda (test)", {});
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
// their operands, which an f64 run would not do.
TEST(CudaExecutorTest, RoundedProductBuildsHaveNoF64Run) {
  const Program program{};
  Backend fp32 = cuda_backend(program);
  EXPECT_TRUE(fp32.make_f64 != nullptr);
  EXPECT_TRUE(fp32.no_f64_reason.empty());
  for (ProductMath math : {ProductMath::Tf32, ProductMath::Bf16}) {
    Backend b = cuda_program_backend(program, &kExecutorImage, 1, math, "backend: cuda (test)", {});
    EXPECT_TRUE(b.make_f32 != nullptr);
    EXPECT_TRUE(b.make_f64 == nullptr);
    EXPECT_NE(b.no_f64_reason.find(std::string("built with --precision ") +
                                   product_math_name(math)),
              std::string::npos)
        << b.no_f64_reason;
  }
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
