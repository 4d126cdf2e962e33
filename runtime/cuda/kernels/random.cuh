// random.cuh: the random ops (dropout, rand_uniform, bernoulli_mask) from counter_rng.h's
// counter-based generator, the same bits as runtime/cpu_kernels.h's loops.
//
// Why a kernel of their own: each element's value depends on its flat index and on the
// step context, which a pointwise functor does not see. The step, training flag and seed
// are read through `ctx` (the executor's device words, counter_rng.h's RngContextSlot)
// when the kernel runs, not passed by value: a captured CUDA graph replays every step
// with the step counter the optimizer advanced, and an eval forward (no tape) reads the
// training flag the executor cleared. One thread per element, grid-stride, no state.
// Launch: block 256, grid = max(1, min(ceil(n / 256), 1056)).
// Generated entry points:
//   extern "C" __global__ void k_f32(const float* x, float* y, long long n, double p,
//       const long long* ctx, long long ordinal) {
//     vouch::dropout_kernel<float>(x, y, n, p, ctx, ordinal); }
//   rand_uniform_kernel<T>(y, n, ctx, ordinal), bernoulli_mask_kernel<T>(y, n, p, ctx,
//   ordinal) likewise.
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_RANDOM_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_RANDOM_CUH_

#include "common.cuh"
#include "counter_rng.h"

namespace vouch {

// y = x · (drawn ? 0 : 1/(1-p)) in a training step, x otherwise.
template <class T>
__device__ void dropout_kernel(const T* x, T* y, long long n, double p, const long long* ctx,
                               long long ordinal) {
  const bool training = ctx[kRngTraining] != 0;
  const unsigned long long stream = rng_stream_of(ctx, ordinal);
  const unsigned long long threshold = rng_threshold(p);
  const T keep = T(1.0 / (1.0 - p));
  for (long long i = grid_stride_begin(); i < n; i += grid_stride_step()) {
    if (!training) {
      y[i] = x[i];
      continue;
    }
    y[i] = x[i] * (rng_u53(stream, (unsigned long long)i) < threshold ? T(0) : keep);
  }
}

// y = u53 · 2^-53 in double, rounded to T.
template <class T>
__device__ void rand_uniform_kernel(T* y, long long n, const long long* ctx, long long ordinal) {
  const unsigned long long stream = rng_stream_of(ctx, ordinal);
  for (long long i = grid_stride_begin(); i < n; i += grid_stride_step())
    y[i] = T(rng_uniform(rng_u53(stream, (unsigned long long)i)));
}

// y = drawn ? 1 : 0.
template <class T>
__device__ void bernoulli_mask_kernel(T* y, long long n, double p, const long long* ctx,
                                      long long ordinal) {
  const unsigned long long stream = rng_stream_of(ctx, ordinal);
  const unsigned long long threshold = rng_threshold(p);
  for (long long i = grid_stride_begin(); i < n; i += grid_stride_step())
    y[i] = rng_u53(stream, (unsigned long long)i) < threshold ? T(1) : T(0);
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_RANDOM_CUH_
