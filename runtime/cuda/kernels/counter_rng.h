// counter_rng.h: the counter-based generator of the random ops (dropout, rand_uniform,
// bernoulli_mask), one definition for the cpu kernels (runtime/cpu_kernels.h), the
// CUDA kernels (random.cuh, compiled by NVRTC) and the kernel lab. Plain C++ that also
// compiles as CUDA device code, like dims.h: nothing from the standard library.
//
// Every random value is a pure function of (run seed S, op ordinal o, step t, flat
// element index i), so cpu and cuda, f32 and f64, eager and CUDA-graph runs draw the
// same bits, and a run is replayed by its --seed alone (docs/language.md, "Random ops"):
//
//   mix(x)   = SplitMix64's finaliser of x + 0x9e3779b97f4a7c15 (runtime/rng.h's
//              splitmix64; all arithmetic uint64 with wrap-around)
//   key(S,o) = mix(S ^ mix(o))                  one stream per run and op
//   bits     = mix(mix(key(S,o) + t) + i)        one word per step and element
//   u53      = bits >> 11                        uniform on [0, 2^53)
//
//   threshold(p) = (uint64)(p · 2^53)            exact: p · 2^53 only moves the exponent
//   drawn(p)     = u53 < threshold(p)            probability threshold / 2^53 ≈ p
//   uniform      = u53 · 2^-53 in double, then rounded to the run's real type
//   dropout      = x · (drawn(p) ? 0 : 1 / (1 - p))   in training steps; x otherwise
//   bernoulli    = drawn(p) ? 1 : 0
//
// The keep/drop decision is made on integers, never on a rounded real.
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_COUNTER_RNG_H_
#define VOUCH_RUNTIME_CUDA_KERNELS_COUNTER_RNG_H_

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define VOUCH_RNG_HD __host__ __device__
#else
#define VOUCH_RNG_HD
#endif

namespace vouch {

// The step context a random op's kernel reads through one pointer: on cuda the
// executor's device words (the step counter the optimizer advances, so a captured
// CUDA graph stays valid), on cpu the executor's host copy.
//   [0] the training step t (steps completed so far)   [1] reserved (cuda: done count)
//   [2] nonzero in a training step (a forward that records the tape)
//   [3] the run seed S (--seed)
enum RngContextSlot { kRngStep = 0, kRngTraining = 2, kRngSeed = 3, kRngContextWords = 4 };

VOUCH_RNG_HD inline unsigned long long rng_mix(unsigned long long x) {
  unsigned long long z = x + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// mix(key(S, o) + t): the per-step stream of op o; a kernel computes it once.
VOUCH_RNG_HD inline unsigned long long rng_stream(unsigned long long seed,
                                                  unsigned long long ordinal,
                                                  unsigned long long step) {
  return rng_mix(rng_mix(seed ^ rng_mix(ordinal)) + step);
}

// The stream of the op with `ordinal` in the step a context names (ctx: the
// executor's RngContextSlot words): its seed and step.
VOUCH_RNG_HD inline unsigned long long rng_stream_of(const long long* ctx, long long ordinal) {
  return rng_stream((unsigned long long)ctx[kRngSeed], (unsigned long long)ordinal,
                    (unsigned long long)ctx[kRngStep]);
}

// The 53 random bits of element i of a stream.
VOUCH_RNG_HD inline unsigned long long rng_u53(unsigned long long stream,
                                               unsigned long long index) {
  return rng_mix(stream + index) >> 11;
}

VOUCH_RNG_HD inline unsigned long long rng_threshold(double p) {
  return (unsigned long long)(p * 9007199254740992.0);  // 2^53
}

VOUCH_RNG_HD inline double rng_uniform(unsigned long long u53) {
  return double(u53) * (1.0 / 9007199254740992.0);
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_COUNTER_RNG_H_
