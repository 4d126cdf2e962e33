// Tests for memory.h: sizes saturate instead of wrapping, and the refusal names the
// model, its bytes part by part, and the memory available.
#include "runtime/memory.h"

#include <gtest/gtest.h>

#include <limits>

namespace vouch::rt {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

TEST(MemoryTest, ArithmeticSaturates) {
  EXPECT_EQ(add_bytes(kMax - 1, 5), kMax);
  EXPECT_EQ(add_bytes(2, 3), 5u);
  EXPECT_EQ(mul_bytes(uint64_t(1) << 40, uint64_t(1) << 30), kMax);
  EXPECT_EQ(mul_bytes(0, kMax), 0u);
  EXPECT_EQ(mul_bytes(6, 7), 42u);
}

TEST(MemoryTest, FormatsBytes) {
  EXPECT_EQ(format_bytes(512), "512 bytes");
  EXPECT_EQ(format_bytes(uint64_t(8) << 30), "8.00 GiB (8589934592 bytes)");
  EXPECT_EQ(format_bytes(uint64_t(80) << 30), "80.0 GiB (85899345920 bytes)");
}

// A cpu run of 2^31 param elements in f64 (issue 14's f32[1073741824, 2]): storage as
// given, Adam's two moments, two float64 copies.
TEST(MemoryTest, CpuRunParts) {
  const uint64_t params = uint64_t(1) << 31;
  MemoryNeed need = cpu_run_memory(uint64_t(32) << 30, params, 8);
  ASSERT_EQ(need.host.size(), 3u);
  EXPECT_TRUE(need.device.empty());
  EXPECT_EQ(need.host[1].bytes, uint64_t(32) << 30);  // 2 x 2^31 x 8
  EXPECT_EQ(need.host[2].bytes, uint64_t(32) << 30);  // 16 x 2^31
  EXPECT_EQ(MemoryNeed::total(need.host), uint64_t(96) << 30);
}

TEST(MemoryTest, RefusalNamesEverything) {
  std::vector<MemoryPart> need = {{"buffers", uint64_t(3) << 30}, {"optimizer state", 0}};
  EXPECT_TRUE(check_memory_fits("m", "an f64 run on cpu", "host", need, uint64_t(3) << 30,
                                "test").ok());
  Status st = check_memory_fits("m", "an f64 run on cpu", "host", need, uint64_t(2) << 30,
                                "MemAvailable in /proc/meminfo");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(),
            "model `m` needs 3.00 GiB (3221225472 bytes) of host memory for an f64 run on cpu "
            "(buffers 3.00 GiB (3221225472 bytes)), but 2.00 GiB (2147483648 bytes) is "
            "available (MemAvailable in /proc/meminfo): it does not fit");
}

TEST(MemoryTest, ThisMachineHasSome) {
  std::string source;
  Result<uint64_t> available = host_memory_available(&source);
  ASSERT_TRUE(available.ok()) << available.status().message();
  EXPECT_GT(available.value(), 0u);
  EXPECT_FALSE(source.empty());
  Result<uint64_t> total = host_memory_total();
  ASSERT_TRUE(total.ok());
  EXPECT_GE(total.value(), available.value());
}

}  // namespace
}  // namespace vouch::rt
