// rng.h: the counter-based random numbers of the reference semantics (BRIEF.md).
//
// Every random value vouch produces is a pure function of (seed, index), so the CPU
// and CUDA paths, PyTorch reference scripts and TorchLean all draw the same numbers
// without sharing a generator state. All arithmetic is uint64 with wrap-around.
#ifndef VOUCH_RUNTIME_RNG_H_
#define VOUCH_RUNTIME_RNG_H_

#include <cstdint>

namespace vouch::rt {

// SplitMix64 finaliser of x + golden gamma.
uint64_t splitmix64(uint64_t x);

// The c-th derived seed of run seed S: splitmix64(S + c + 0x9e3779b97f4a7c15).
uint64_t next_seed(uint64_t S, uint64_t c);

// A uniform double in [0, 1): the low 32 bits of splitmix64(splitmix64(seed) + idx),
// divided by 2^32.
double rand01(uint64_t seed, uint64_t idx);

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_RNG_H_
