// Tests for allocator.h's environment reading: TORCHLEAN_CUDA_CACHE_CAP_BYTES is read
// once, at first use, and a malformed value warns exactly once and leaves the cache
// unbounded. A binary of its own, because the value is read once per process: the test
// sets the variable before anything reads it. (The fresh-process matrix of values is
// allocator_stress_test.) Needs no device.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "runtime/cuda/allocator.h"

namespace vouch::rt::cuda {
namespace {

int count(const std::string& s, const std::string& part) {
  int n = 0;
  for (size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) n++;
  return n;
}

TEST(AllocatorEnvTest, MalformedCapWarnsOnceAndIsUnbounded) {
  ASSERT_EQ(setenv(kCacheCapEnv, "12abc", 1), 0);
  testing::internal::CaptureStderr();
  uint64_t first = process_cache_cap_bytes();
  uint64_t second = process_cache_cap_bytes();
  uint64_t allocator_cap = process_allocator().cap_bytes();
  // Changing the variable later has no effect: it was read once.
  ASSERT_EQ(setenv(kCacheCapEnv, "4096", 1), 0);
  uint64_t third = process_cache_cap_bytes();
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(first, 0u);
  EXPECT_EQ(second, 0u);
  EXPECT_EQ(third, 0u);
  EXPECT_EQ(allocator_cap, 0u);
  EXPECT_EQ(stats().cap_bytes, 0u);
  EXPECT_EQ(count(err, "ignored; the cache is unbounded"), 1) << err;
  EXPECT_EQ(count(err, "TORCHLEAN_CUDA_CACHE_CAP_BYTES=\"12abc\""), 1) << err;
}

}  // namespace
}  // namespace vouch::rt::cuda
