// fast_divide.h against the hardware's `/`: every divisor up to 4096 and the largest
// ones, each with the numerators where quotients change (multiples of d and their
// neighbours), the ends of the range and pseudo-random ones.
#include "runtime/cuda/kernels/fast_divide.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace vouch {
namespace {

std::vector<unsigned> numerators(unsigned d) {
  std::vector<unsigned> n = {0u, 1u, 2u, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu};
  for (uint64_t q : {1ull, 2ull, 3ull, 1000ull, 65535ull, 65536ull, 1ull << 20})
    for (int delta = -1; delta <= 1; ++delta) {
      const uint64_t v = q * d + uint64_t(int64_t(delta));
      if (v <= 0xffffffffull) n.push_back(unsigned(v));
    }
  const uint64_t top = 0xffffffffull / d * d;  // the last multiple
  for (uint64_t v : {top - 1, top, top + 1})
    if (v <= 0xffffffffull) n.push_back(unsigned(v));
  uint64_t x = 0x9e3779b97f4a7c15ull ^ d;  // splitmix64
  for (int i = 0; i < 64; ++i) {
    x += 0x9e3779b97f4a7c15ull;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    n.push_back(unsigned(z ^ (z >> 31)));
  }
  return n;
}

void expect_exact(unsigned d) {
  const FastDivide f(d);
  for (unsigned n : numerators(d)) ASSERT_EQ(f.quotient(n), n / d) << n << " / " << d;
}

TEST(FastDivideTest, SmallDivisors) {
  for (unsigned d = 1; d <= 4096; ++d) expect_exact(d);
}

TEST(FastDivideTest, LargeDivisors) {
  for (unsigned d : {65535u, 65536u, 65537u, 1000003u, 0x7fffffffu, 0x80000000u, 0x80000001u,
                     0xc0000000u, 0xfffffffeu, 0xffffffffu})
    expect_exact(d);
}

// Every numerator, for a few divisors the conv kernels meet (extents of a CIFAR layer).
TEST(FastDivideTest, EveryNumeratorBelow2To24) {
  for (unsigned d : {3u, 7u, 9u, 32u, 1024u, 262144u}) {
    const FastDivide f(d);
    for (unsigned n = 0; n < (1u << 24); ++n)
      if (f.quotient(n) != n / d) FAIL() << n << " / " << d << ": " << f.quotient(n);
  }
}

}  // namespace
}  // namespace vouch
