// rng.cc: SplitMix64 and the seed / uniform helpers built on it (see rng.h).
#include "runtime/rng.h"

namespace vouch::rt {

namespace {
constexpr uint64_t kGoldenGamma = 0x9e3779b97f4a7c15ull;
}  // namespace

uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + kGoldenGamma;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t next_seed(uint64_t S, uint64_t c) { return splitmix64(S + c + kGoldenGamma); }

double rand01(uint64_t seed, uint64_t idx) {
  uint32_t low = static_cast<uint32_t>(splitmix64(splitmix64(seed) + idx));
  return static_cast<double>(low) / 4294967296.0;  // 2^32
}

}  // namespace vouch::rt
