// graph_overhead.cu: what a node of a CUDA graph costs on this GPU, to budget a
// training step's node count (docs/performance.md). Replays graphs of N serial tiny
// kernels (one thread writing one value) and prints microseconds per graph and per
// node; then the same N nodes as two parallel branches; then 12-node steps unrolled
// U to a graph.
//   nvcc -O2 -arch=native graph_overhead.cu -o graph_overhead && ./graph_overhead
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

__global__ void tiny(float* p, int i) { p[i] += 1.0f; }

#define CHECK(x)                                                            \
  do {                                                                      \
    cudaError_t e = (x);                                                    \
    if (e != cudaSuccess) {                                                 \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      return 1;                                                             \
    }                                                                       \
  } while (0)

static int time_graph(cudaGraphExec_t exec, cudaStream_t s, double* us) {
  const int reps = 2000;
  for (int i = 0; i < 100; i++) CHECK(cudaGraphLaunch(exec, s));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  CHECK(cudaEventRecord(a, s));
  for (int i = 0; i < reps; i++) CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaEventRecord(b, s));
  CHECK(cudaEventSynchronize(b));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  *us = 1000.0 * ms / reps;
  return 0;
}

int main() {
  float* p;
  CHECK(cudaMalloc(&p, 64 * sizeof(float)));
  cudaStream_t s, s2;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t fork, join;
  CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  for (int n : {1, 2, 4, 8, 12, 16}) {
    for (int branches : {1, 2}) {
      if (branches == 2 && n < 2) continue;
      cudaGraph_t g;
      CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
      if (branches == 1) {
        for (int i = 0; i < n; i++) tiny<<<1, 1, 0, s>>>(p, i);
      } else {
        CHECK(cudaEventRecord(fork, s));
        CHECK(cudaStreamWaitEvent(s2, fork));
        for (int i = 0; i < n / 2; i++) tiny<<<1, 1, 0, s>>>(p, i);
        for (int i = n / 2; i < n; i++) tiny<<<1, 1, 0, s2>>>(p, i);
        CHECK(cudaEventRecord(join, s2));
        CHECK(cudaStreamWaitEvent(s, join));
      }
      CHECK(cudaStreamEndCapture(s, &g));
      cudaGraphExec_t exec;
      CHECK(cudaGraphInstantiate(&exec, g, 0));
      double us = 0;
      if (time_graph(exec, s, &us)) return 1;
      std::printf("GRAPH nodes %2d branches %d: %.2f us/graph, %.2f us/node\n", n, branches, us,
                  us / n);
      CHECK(cudaGraphExecDestroy(exec));
      CHECK(cudaGraphDestroy(g));
    }
  }
  // The same 12 serial nodes replayed as one graph per "step", or with U steps unrolled
  // into one graph: what a graph launch itself costs beyond its nodes.
  for (int unroll : {1, 2, 4, 8, 16}) {
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int u = 0; u < unroll; u++)
      for (int i = 0; i < 12; i++) tiny<<<1, 1, 0, s>>>(p, i);
    CHECK(cudaStreamEndCapture(s, &g));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    double us = 0;
    if (time_graph(exec, s, &us)) return 1;
    std::printf("UNROLL 12-node steps x %2d per graph: %.2f us/step\n", unroll, us / unroll);
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
  }
  return 0;
}
