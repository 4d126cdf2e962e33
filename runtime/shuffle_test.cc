// The shuffled epoch order (runtime/cuda/kernels/shuffle.h): a permutation of the rows
// for every (rows, seed, epoch), new each epoch and seed, and equal to the order of
// tools/data/shuffle_reference.py (an independent Python implementation of the
// documented algorithm; the expected values below are its output).
#include "runtime/cuda/kernels/shuffle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

std::vector<long long> order(long long rows, unsigned long long seed, long long epoch) {
  std::vector<long long> out;
  for (long long p = 0; p < rows; p++) out.push_back(vouch::shuffled_row(p, rows, seed, epoch));
  return out;
}

TEST(ShuffleTest, MatchesThePythonReference) {
  // tools/data/shuffle_reference.py ROWS SEED EPOCH
  EXPECT_EQ(order(1, 0, 0), (std::vector<long long>{0}));
  EXPECT_EQ(order(2, 7, 3), (std::vector<long long>{1, 0}));
  EXPECT_EQ(order(10, 0, 0), (std::vector<long long>{7, 2, 5, 4, 0, 8, 3, 9, 1, 6}));
  EXPECT_EQ(order(10, 0, 1), (std::vector<long long>{7, 5, 6, 9, 3, 8, 2, 4, 1, 0}));
  EXPECT_EQ(order(10, 42, 0), (std::vector<long long>{4, 5, 1, 0, 6, 2, 3, 9, 8, 7}));
  EXPECT_EQ(order(37, 12345, 5),
            (std::vector<long long>{35, 6,  30, 13, 22, 5,  16, 3,  9,  36, 20, 32, 19,
                                    31, 1,  24, 34, 27, 11, 33, 15, 21, 4,  7,  25, 14,
                                    0,  28, 17, 26, 23, 2,  29, 10, 12, 8,  18}));
  std::vector<long long> digits = order(1440, 0, 3);
  EXPECT_EQ(std::vector<long long>(digits.begin(), digits.begin() + 12),
            (std::vector<long long>{1410, 678, 997, 676, 428, 1340, 13, 1287, 1304, 504, 69, 389}));
  std::vector<long long> extreme = order(100, UINT64_MAX, 1LL << 40);
  EXPECT_EQ(std::vector<long long>(extreme.begin(), extreme.begin() + 10),
            (std::vector<long long>{2, 7, 14, 12, 49, 87, 41, 90, 78, 18}));
}

TEST(ShuffleTest, EveryEpochIsAPermutation) {
  for (long long rows : {1LL, 2LL, 3LL, 5LL, 31LL, 32LL, 33LL, 1440LL, 4097LL}) {
    for (unsigned long long seed : {0ULL, 1ULL, 0xdeadbeefULL, 0xffffffffffffffffULL}) {
      for (long long epoch : {0LL, 1LL, 1000LL}) {
        std::vector<long long> o = order(rows, seed, epoch);
        std::sort(o.begin(), o.end());
        for (long long i = 0; i < rows; i++)
          ASSERT_EQ(o[size_t(i)], i) << "rows " << rows << " seed " << seed << " epoch "
                                     << epoch;
      }
    }
  }
}

TEST(ShuffleTest, EpochsAndSeedsGiveDifferentOrders) {
  const std::vector<long long> base = order(1440, 0, 0);
  EXPECT_NE(base, order(1440, 0, 1));
  EXPECT_NE(base, order(1440, 1, 0));
  EXPECT_EQ(base, order(1440, 0, 0));  // a pure function: replayable
  // Not the identity, and well mixed: few rows stay in place (about 1 expected).
  int fixed = 0;
  for (long long i = 0; i < 1440; i++) fixed += base[size_t(i)] == i;
  EXPECT_LT(fixed, 10);
}

}  // namespace
