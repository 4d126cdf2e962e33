// Tests for rng.h against values computed independently with Python 3 integers:
//   M = 2**64 - 1
//   def sm(x):
//     z = (x + 0x9e3779b97f4a7c15) & M
//     z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
//     z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
//     return z ^ (z >> 31)
//   next_seed(S, c) = sm((S + c + 0x9e3779b97f4a7c15) & M)
//   rand01(s, i) = (sm((sm(s) + i) & M) & 0xffffffff) / 2**32
// sm(0) = 0xe220a8397b1dcdaf is also the well-known first SplitMix64 output for seed 0.
#include "runtime/rng.h"

#include <gtest/gtest.h>

namespace vouch::rt {
namespace {

constexpr uint64_t kMax = 0xffffffffffffffffull;

TEST(RngTest, Splitmix64) {
  EXPECT_EQ(splitmix64(0), 0xe220a8397b1dcdafull);
  EXPECT_EQ(splitmix64(1), 0x910a2dec89025cc1ull);
  EXPECT_EQ(splitmix64(kMax), 0xe4d971771b652c20ull);  // x + gamma wraps
  EXPECT_EQ(splitmix64(2026), 0xdb9c559891948d23ull);
}

TEST(RngTest, NextSeed) {
  EXPECT_EQ(next_seed(0, 0), 0x6e789e6aa1b965f4ull);
  EXPECT_EQ(next_seed(0, 1), 0xbeeb8da1658eec67ull);
  EXPECT_EQ(next_seed(2026, 3), 0x9e800fd637fc7aa7ull);
  EXPECT_EQ(next_seed(kMax, 5), 0xe474c66a4b98b030ull);  // S + c wraps
}

TEST(RngTest, Rand01) {
  EXPECT_EQ(rand01(0, 0), 0.30117025575600564);
  EXPECT_EQ(rand01(0, 1), 0.6844469008501619);
  EXPECT_EQ(rand01(12345, 7), 0.9786833478137851);
  EXPECT_EQ(rand01(kMax, kMax), 0.7085335818119347);
}

TEST(RngTest, Rand01StaysInUnitInterval) {
  for (uint64_t i = 0; i < 10000; i++) {
    double u = rand01(42, i);
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

}  // namespace
}  // namespace vouch::rt
