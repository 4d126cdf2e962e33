// Tests for stream_graph.h: the disabled mode (no device needed), capture errors, and
// on a device: a step captured once and replayed (a kernel and a cuBLAS GEMM in the
// graph), identical to the disabled mode, and an error inside the captured step.
#include "runtime/cuda/stream_graph.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/cuda/blas.h"
#include "runtime/cuda/memcpy.h"
#include "runtime/cuda/module.h"
#include "runtime/cuda/test_util.h"
#include "runtime/cuda/testdata/test_kernels.h"

namespace vouch::rt::cuda {
namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(StepGraphTest, DisabledModeJustCallsTheStep) {
  StepGraph g(nullptr, StepGraph::Mode::Disabled);
  int calls = 0;
  for (int i = 0; i < 3; i++)
    EXPECT_TRUE(g.run([&] {
                   calls++;
                   return Status::Ok();
                 }).ok());
  EXPECT_EQ(calls, 3);
  EXPECT_FALSE(g.captured());
  EXPECT_EQ(g.launches(), 0);
  Status s = g.run([] { return Status::Error("step failed"); });
  EXPECT_EQ(s.message(), "step failed");
}

TEST(StepGraphTest, CaptureOnTheLegacyStreamIsAnErrorNamingTheCall) {
  // Without a driver, and with one (the legacy default stream cannot be captured).
  StepGraph g(nullptr, StepGraph::Mode::Graph);
  int calls = 0;
  Status s = g.run([&] {
    calls++;
    return Status::Ok();
  });
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.message(), "cudaStreamBeginCapture(stream_, "
                                    "cudaStreamCaptureModeThreadLocal) failed"))
      << s.message();
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(g.captured());
}

struct AddOneKernel {
  Result<KernelModule> module = load_module(nullptr, 0,
      reinterpret_cast<const char*>(testdata::kTestKernelsPtx));
  cudaKernel_t k = nullptr;
  AddOneKernel() {
    EXPECT_TRUE(module.ok()) << module.status().message();
    if (module.ok()) {
      Result<cudaKernel_t> r = module.value().kernel("vouch_test_add_one");
      EXPECT_TRUE(r.ok());
      if (r.ok()) k = r.value();
    }
  }
};

std::vector<float> steps_of_add_one(StepGraph::Mode mode, int steps, int* calls,
                                    int64_t* launches) {
  AddOneKernel kernel;
  Result<Stream> stream = Stream::create();
  EXPECT_TRUE(stream.ok());
  cudaStream_t st = stream.value().get();
  const unsigned n = 4096;
  float* d = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), n * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMemsetAsync(d, 0, n * sizeof(float), st), cudaSuccess);
  StepGraph g(st, mode);
  unsigned count = n;
  void* args[] = {&d, &count};
  for (int i = 0; i < steps; i++) {
    Status s = g.run([&] {
      (*calls)++;
      VOUCH_RETURN_IF_ERROR(launch(kernel.k, dim3(n / 256), dim3(256), 0, st, args));
      return launch(kernel.k, dim3(n / 256), dim3(256), 0, st, args);  // two nodes
    });
    EXPECT_TRUE(s.ok()) << s.message();
  }
  std::vector<float> out(n);
  EXPECT_TRUE(download(out.data(), d, n, st).ok());
  EXPECT_TRUE(stream.value().synchronize().ok());
  *launches = g.launches();
  cudaFree(d);
  return out;
}

TEST(StepGraphDeviceTest, CapturedOnceReplayedEveryStepSameResultAsDisabled) {
  VOUCH_REQUIRE_CUDA_DEVICE("CUDA graph capture and replay of a step");
  int graph_calls = 0, plain_calls = 0;
  int64_t graph_launches = 0, plain_launches = 0;
  std::vector<float> with_graph =
      steps_of_add_one(StepGraph::Mode::Graph, 5, &graph_calls, &graph_launches);
  std::vector<float> without =
      steps_of_add_one(StepGraph::Mode::Disabled, 5, &plain_calls, &plain_launches);
  EXPECT_EQ(graph_calls, 1);  // captured once
  EXPECT_EQ(graph_launches, 5);
  EXPECT_EQ(plain_calls, 5);
  EXPECT_EQ(plain_launches, 0);
  EXPECT_EQ(with_graph, without);
  for (float v : with_graph) EXPECT_EQ(v, 10.0f);
}

// The step both dependency tests capture, one CaptureDependencies step: four
// launches of add_one on two halves of a buffer. a writes 0, b writes 1 (independent:
// two roots), c reads 1 and writes 0 (after a and b), d writes 1 (after b, its last
// writer, and c, which read it): four edges, and nothing else.
void capture_four_launch_step(CaptureDependencies& deps, const AddOneKernel& kernel,
                              cudaStream_t st, float* const halves[2]) {
  unsigned count = 256;
  struct Launch {
    std::vector<int32_t> reads, writes;
    int buffer;
  } launches[] = {{{}, {0}, 0}, {{}, {1}, 1}, {{1}, {0}, 0}, {{}, {1}, 1}};
  EXPECT_TRUE(deps.begin(2).ok());
  EXPECT_TRUE(deps.active());
  for (const Launch& l : launches) {
    float* buffer = halves[l.buffer];
    void* args[] = {&buffer, &count};
    EXPECT_TRUE(deps.before(l.reads, l.writes).ok());
    EXPECT_TRUE(launch(kernel.k, dim3(1), dim3(256), 0, st, args).ok());
    EXPECT_TRUE(deps.after(l.reads, l.writes).ok());
  }
  EXPECT_TRUE(deps.finish().ok());
}

TEST(StepGraphDeviceTest, CaptureDependenciesLinkOnlyWhatSharesABuffer) {
  VOUCH_REQUIRE_CUDA_DEVICE("a captured step as a dependency graph");
  AddOneKernel kernel;
  Result<Stream> stream = Stream::create();
  ASSERT_TRUE(stream.ok());
  cudaStream_t st = stream.value().get();
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 2 * 256 * sizeof(float)), cudaSuccess);
  float* const halves[2] = {d, d + 256};
  CaptureDependencies deps(st);
  ASSERT_EQ(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  capture_four_launch_step(deps, kernel, st, halves);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(st, &graph), cudaSuccess);
  size_t roots = 0, edges = 0;
  ASSERT_EQ(cudaGraphGetRootNodes(graph, nullptr, &roots), cudaSuccess);
  ASSERT_EQ(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges), cudaSuccess);
  EXPECT_EQ(roots, 2u);  // a and b
  EXPECT_EQ(edges, 4u);  // a -> c, b -> c, b -> d, c -> d
  // Outside a capture it does nothing (the stream orders everything).
  CaptureDependencies eager(st);
  ASSERT_TRUE(eager.begin(2).ok());
  EXPECT_FALSE(eager.active());
  EXPECT_TRUE(eager.before({0}, {1}).ok());
  cudaGraphDestroy(graph);
  cudaFree(d);
}

// Two steps in one capture (the executor's unrolled graph): the second step's launches
// with nothing of their own step to follow (a', b') follow the first step's end (d, the
// only node nothing depended on). Without that they would be roots, racing step 1.
TEST(StepGraphDeviceTest, ASecondStepInTheSameCaptureFollowsTheFirst) {
  VOUCH_REQUIRE_CUDA_DEVICE("two captured steps as one dependency graph");
  AddOneKernel kernel;
  Result<Stream> stream = Stream::create();
  ASSERT_TRUE(stream.ok());
  cudaStream_t st = stream.value().get();
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 2 * 256 * sizeof(float)), cudaSuccess);
  float* const halves[2] = {d, d + 256};
  CaptureDependencies deps(st);
  ASSERT_EQ(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  for (int step = 0; step < 2; step++) capture_four_launch_step(deps, kernel, st, halves);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(st, &graph), cudaSuccess);
  size_t nodes = 0, roots = 0, edges = 0;
  ASSERT_EQ(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess);
  ASSERT_EQ(cudaGraphGetRootNodes(graph, nullptr, &roots), cudaSuccess);
  ASSERT_EQ(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges), cudaSuccess);
  EXPECT_EQ(nodes, 8u);
  EXPECT_EQ(roots, 2u);   // step 1's a and b only
  EXPECT_EQ(edges, 10u);  // 4 per step, and d -> a', d -> b'
  // Replayed, every element of both halves is added to once per launch: 4 each.
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaMemsetAsync(d, 0, 2 * 256 * sizeof(float), st), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, st), cudaSuccess);
  std::vector<float> out(512);
  ASSERT_TRUE(download(out.data(), d, 512, st).ok());
  ASSERT_TRUE(stream.value().synchronize().ok());
  for (float v : out) EXPECT_EQ(v, 4.0f);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaFree(d);
}

// The launch audit: every node made inside a bracket belongs to its launch; a
// launch made outside every bracket is unreported; a bracket that names another
// kernel than the one launched is a mismatch. All three must show.
TEST(StepGraphDeviceTest, TheLaunchAuditFindsUnnamedAndMisnamedLaunches) {
  VOUCH_REQUIRE_CUDA_DEVICE("the launch audit of a captured step");
  AddOneKernel kernel;
  Result<Stream> stream = Stream::create();
  ASSERT_TRUE(stream.ok());
  cudaStream_t st = stream.value().get();
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 256 * sizeof(float)), cudaSuccess);
  unsigned count = 256;
  void* args[] = {&d, &count};
  LaunchAudit audit;
  ASSERT_TRUE(audit.begin(st).ok());
  EXPECT_FALSE(audit.active());  // not capturing: nothing to audit
  ASSERT_EQ(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  ASSERT_TRUE(audit.begin(st).ok());
  ASSERT_TRUE(audit.active());
  ASSERT_TRUE(audit.before("first [test.add_one]", "vouch_test_add_one", {}).ok());
  ASSERT_TRUE(launch(kernel.k, dim3(1), dim3(256), 0, st, args).ok());
  ASSERT_TRUE(audit.after().ok());
  ASSERT_TRUE(launch(kernel.k, dim3(1), dim3(256), 0, st, args).ok());  // unnamed
  ASSERT_TRUE(audit.before("second [test.axpy]", "vouch_test_axpy", {}).ok());
  ASSERT_TRUE(launch(kernel.k, dim3(1), dim3(256), 0, st, args).ok());  // not axpy
  ASSERT_TRUE(audit.after().ok());
  ASSERT_TRUE(audit.finish().ok());
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(st, &graph), cudaSuccess);
  const std::string& text = audit.text();
  EXPECT_TRUE(contains(text, "  node 0 kernel vouch_test_add_one <- first [test.add_one]\n")) << text;
  EXPECT_TRUE(contains(text, "  MISMATCH second [test.axpy]: expected exactly one node running "
                             "vouch_test_axpy")) << text;
  EXPECT_TRUE(contains(text, "kernel vouch_test_add_one <- UNREPORTED")) << text;
  EXPECT_TRUE(contains(text, "launch audit: 3 graph nodes, 2 made by named launches, "
                             "1 unreported, 1 not the kernel named\n")) << text;
  EXPECT_EQ(audit.problems(), 2);
  cudaGraphDestroy(graph);
  cudaFree(d);
}

TEST(StepGraphDeviceTest, CublasGemmInsideTheGraph) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuBLAS GEMM captured in a CUDA graph");
  Result<Stream> stream = Stream::create();
  ASSERT_TRUE(stream.ok());
  cudaStream_t st = stream.value().get();
  ASSERT_TRUE(set_blas_stream(st).ok());  // before the capture: handles and workspaces
  const int64_t M = 8, N = 4, K = 2;
  std::vector<float> A(M * K, 1.0f), B(K * N, 0.5f);
  float *dA = nullptr, *dB = nullptr, *dC = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dA), A.size() * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dB), B.size() * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dC), M * N * 4), cudaSuccess);
  ASSERT_TRUE(upload(dA, A.data(), A.size(), st).ok());
  ASSERT_TRUE(upload(dB, B.data(), B.size(), st).ok());
  ASSERT_EQ(cudaMemsetAsync(dC, 0, M * N * 4, st), cudaSuccess);
  StepGraph g(st, StepGraph::Mode::Graph);
  for (int i = 0; i < 3; i++) {
    Status s = g.run([&] {
      return gemm_row_major(false, false, 1, M, N, K, dA, 0, dB, 0, dC, /*accumulate=*/true,
                            ProductMath::Fp32);
    });
    ASSERT_TRUE(s.ok()) << s.message();
  }
  std::vector<float> C(M * N);
  ASSERT_TRUE(download(C.data(), dC, C.size(), st).ok());
  ASSERT_TRUE(stream.value().synchronize().ok());
  for (float v : C) EXPECT_EQ(v, 3.0f);  // 3 replays of C += (1·0.5 + 1·0.5)
  EXPECT_EQ(g.captures(), 1);
  ASSERT_TRUE(set_blas_stream(nullptr).ok());
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
}

TEST(StepGraphDeviceTest, ErrorInsideTheCapturedStep) {
  VOUCH_REQUIRE_CUDA_DEVICE("an error inside a captured step");
  Result<Stream> stream = Stream::create();
  ASSERT_TRUE(stream.ok());
  StepGraph g(stream.value().get(), StepGraph::Mode::Graph);
  Status s = g.run([] { return Status::Error("gemm: M = -1 is negative"); });
  EXPECT_EQ(s.message(), "while capturing the step into a CUDA graph: gemm: M = -1 is negative");
  EXPECT_FALSE(g.captured());
  // The stream is usable afterwards, and a later run captures.
  EXPECT_TRUE(g.run([] { return Status::Ok(); }).ok());
  EXPECT_TRUE(g.captured());
  EXPECT_TRUE(g.reset().ok());
  EXPECT_FALSE(g.captured());
  EXPECT_TRUE(stream.value().synchronize().ok());
}

}  // namespace
}  // namespace vouch::rt::cuda
