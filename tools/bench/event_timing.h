// event_timing.h: the benches' one timer (tools/bench/*.cu, each built alone by nvcc).
#ifndef VOUCH_TOOLS_BENCH_EVENT_TIMING_H_
#define VOUCH_TOOLS_BENCH_EVENT_TIMING_H_

#include <cuda_runtime.h>

// Mean ms of `reps` calls of `call` on the default stream, timed by CUDA events after
// 3 warm-up calls; -1 when a warm-up call returns false (the library refused it).
template <class F>
float time_ms(F call, int reps = 20) {
  for (int i = 0; i < 3; i++)
    if (!call()) return -1.f;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  for (int i = 0; i < reps; i++) call();
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0.f;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / float(reps);
}

#endif  // VOUCH_TOOLS_BENCH_EVENT_TIMING_H_
