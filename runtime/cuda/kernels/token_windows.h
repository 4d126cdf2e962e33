// token_windows.h: which tokens a training step reads from a token stream
// (`data tokens(file = ..., order = ...)`, docs/language.md), shared by host and device.
//
// A stream of N tokens trains a model whose input and target are int32 [batch, T]: row r
// of step k is the window of T + 1 tokens starting at token_window_start(k, r): input
// row = window[0, T), target row = window[1, T]. With
//
//   sequential: n = (k * batch + r) mod W, W = floor((N - 1) / T), start = n * T
//               (llm.c's loader: consecutive windows share one token, the label of the
//               last position and the first input of the next window);
//   random:     start = mix(stream + r) mod (N - T), stream = mix(key + k),
//               key = mix(seed ^ mix(0x746f6b656e73)), mix = splitmix64's finaliser of
//               x + 0x9e3779b97f4a7c15 (counter_rng.h's rng_stream of the ordinal
//               0x746f6b656e73, "tokens" in ASCII, far from the random ops' ordinals);
//               all arithmetic uint64 with wrap-around; start in [0, N - T - 1].
//
// a pure function of (seed, step, row), so the cpu loop (runtime/train_main.cc) and the
// CUDA window selection (executor.cuh, run from the device step counter inside the
// per-step graph) read the same windows and a run replays from its --seed.
//
// Plain C++ on purpose: it compiles as host C++ and, under NVRTC / nvcc, as device code.
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_TOKEN_WINDOWS_H_
#define VOUCH_RUNTIME_CUDA_KERNELS_TOKEN_WINDOWS_H_

#include "counter_rng.h"

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define VOUCH_TOKENS_FN __host__ __device__ inline
#else
#define VOUCH_TOKENS_FN inline
#endif

namespace vouch {

// "tokens" in ASCII: the ordinal of the windows' stream of the counter-based generator.
constexpr unsigned long long kTokenWindowOrdinal = 0x746f6b656e73ULL;

// The first token of row `row`'s window in step `step`; count >= context + 1.
VOUCH_TOKENS_FN long long token_window_start(long long step, long long row, long long batch,
                                             long long count, long long context, bool random,
                                             unsigned long long seed) {
  if (random) {
    const unsigned long long stream =
        rng_stream(seed, kTokenWindowOrdinal, (unsigned long long)step);
    return (long long)(rng_mix(stream + (unsigned long long)row) %
                       (unsigned long long)(count - context));
  }
  const long long windows = (count - 1) / context;
  return ((step * batch + row) % windows) * context;
}

// What the window selection kernel (executor.cuh) needs: the stream and where the input
// and target rows go in the executor's batch block (word offsets; row r of the input is
// words [input_word + r * context, ... + context)).
struct TokenWindows {
  unsigned long long seed;
  long long count, context, batch;
  long long input_word, target_word;
  int token_bytes;  // 2: uint16 tokens, 4: 32-bit (every value a checked int32)
  int random;       // nonzero: order = random
};

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_TOKEN_WINDOWS_H_
