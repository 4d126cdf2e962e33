// Tests for step_times.h: --time's record stays bounded over any number of samples, and
// its summary is exact while everything fits.
#include "runtime/step_times.h"

#include <gtest/gtest.h>

namespace vouch::rt {
namespace {

TEST(StepTimesTest, ExactWhileEverythingFits) {
  StepTimes t;
  // 50 samples: warm-up min(10, 50 / 5) = 10; the rest 1..40 ms, median of 40 at [20].
  for (int i = 0; i < 10; i++) t.add(1000);  // warm-up, dropped
  for (int i = 40; i >= 1; i--) t.add(i);
  std::optional<StepTimes::Summary> s = t.summary();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->warmup, 10u);
  EXPECT_EQ(s->intervals, 40u);
  EXPECT_EQ(s->median_ms, 21);
  EXPECT_EQ(s->min_ms, 1);
  EXPECT_EQ(s->every, 1u);
}

TEST(StepTimesTest, ShortRunsKeepMostOfTheirWarmup) {
  StepTimes t;
  for (double ms : {5.0, 3.0, 4.0}) t.add(ms);  // warm-up min(10, 3 / 5) = 0
  std::optional<StepTimes::Summary> s = t.summary();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->warmup, 0u);
  EXPECT_EQ(s->median_ms, 4);
  EXPECT_EQ(s->min_ms, 3);
  EXPECT_FALSE(StepTimes().summary());
}

// A billion-step run adds a sample per loss read: memory stays at kWarmup + kCapacity
// samples, the minimum stays exact, and the median of the even subsample of a ramp is
// the ramp's median within the subsample's spacing.
TEST(StepTimesTest, ManySamplesStayBounded) {
  StepTimes t;
  const int n = 1000000;
  size_t most = 0;
  for (int i = 0; i < n; i++) {
    t.add(i == 777777 ? -1.0 : double(i));
    most = std::max(most, t.held());
  }
  EXPECT_LE(most, StepTimes::kWarmup + StepTimes::kCapacity);
  EXPECT_EQ(t.count(), uint64_t(n));
  std::optional<StepTimes::Summary> s = t.summary();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->min_ms, -1.0);  // kept exactly, though not sampled
  EXPECT_EQ(s->intervals, uint64_t(n - 10));
  EXPECT_GT(s->every, 1u);
  EXPECT_NEAR(s->median_ms, n / 2.0, double(s->every) + 10) << "every " << s->every;
}

}  // namespace
}  // namespace vouch::rt
