// Tests for allocator.h / buffer.h: cap parsing and stats formatting (no device), and
// on a device: exact-size reuse guarded by events, the cap, stats, trim, errors.
#include "runtime/cuda/allocator.h"

#include <gtest/gtest.h>

#include <string>

#include "runtime/cuda/buffer.h"
#include "runtime/cuda/stream_graph.h"
#include "runtime/cuda/test_util.h"

namespace vouch::rt::cuda {
namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(CacheCapParseTest, ValidValues) {
  EXPECT_EQ(parse_cache_cap(nullptr).value, 0u);
  EXPECT_EQ(parse_cache_cap(nullptr).warning, "");
  EXPECT_EQ(parse_cache_cap("0").value, 0u);
  EXPECT_EQ(parse_cache_cap("0").warning, "");
  EXPECT_EQ(parse_cache_cap("536870912").value, 536870912u);
  EXPECT_EQ(parse_cache_cap("536870912").warning, "");
  EXPECT_EQ(parse_cache_cap("007").value, 7u);
  EXPECT_EQ(parse_cache_cap("18446744073709551615").value, 18446744073709551615ull);
  EXPECT_EQ(parse_cache_cap("18446744073709551615").warning, "");
}

TEST(CacheCapParseTest, MalformedAndOverflowingValuesWarnOnceAndAreUnbounded) {
  for (const char* bad : {"12abc", "", " 5", "5 ", "-1", "+5", "1e9", "0x10", "1,000"}) {
    CacheCapParse p = parse_cache_cap(bad);
    EXPECT_EQ(p.value, 0u) << "\"" << bad << "\"";
    EXPECT_TRUE(contains(p.warning, std::string("TORCHLEAN_CUDA_CACHE_CAP_BYTES=\"") + bad + "\""))
        << p.warning;
    EXPECT_TRUE(contains(p.warning, "ignored; the cache is unbounded")) << p.warning;
    EXPECT_EQ(p.warning.find('\n'), std::string::npos);  // one line
    // Exactly one warning: the text occurs once.
    EXPECT_EQ(p.warning.find("ignored", p.warning.find("ignored") + 1), std::string::npos);
  }
  EXPECT_EQ(parse_cache_cap("12abc").warning,
            "warning: TORCHLEAN_CUDA_CACHE_CAP_BYTES=\"12abc\" is not a decimal byte count "
            "(only digits 0-9 are allowed); ignored; the cache is unbounded");
  for (const char* big : {"99999999999999999999", "18446744073709551616"}) {
    CacheCapParse p = parse_cache_cap(big);
    EXPECT_EQ(p.value, 0u);
    EXPECT_TRUE(contains(p.warning, "overflows uint64")) << p.warning;
    EXPECT_TRUE(contains(p.warning, "ignored; the cache is unbounded")) << p.warning;
  }
  // Control characters are escaped so the warning stays on one line.
  EXPECT_TRUE(contains(parse_cache_cap("1\n2").warning, "\"1\\x0a2\""));
}

TEST(AllocatorStatsTest, FormatNamesEveryField) {
  AllocatorStats s;
  s.live_bytes = 10;
  s.peak_live_bytes = 20;
  s.cached_bytes = 30;
  s.cached_blocks = 2;
  s.alloc_count = 3;
  s.free_count = 1;
  s.cache_hits = 4;
  s.mem_info_ok = true;
  s.device_free_bytes = 100;
  s.device_total_bytes = 200;
  EXPECT_EQ(format(s),
            "cuda allocator: live_bytes=10 peak_live_bytes=20 cache_bytes=30 cache_blocks=2 "
            "cache_cap_bytes=0 (unbounded) cuda_malloc=3 cuda_free=1 cache_hits=4 cap_frees=0 "
            "mem_free_bytes=100 mem_total_bytes=200");
  s.cap_bytes = 64;
  s.mem_info_ok = false;
  s.mem_info_error = "cudaMemGetInfo: cudaErrorInsufficientDriver";
  std::string f = format(s);
  EXPECT_TRUE(contains(f, "cache_cap_bytes=64 (bounded)")) << f;
  EXPECT_TRUE(contains(f, "mem_info=unavailable (cudaMemGetInfo: cudaErrorInsufficientDriver)"))
      << f;
}

TEST(AllocatorTest, ZeroBytesAndNullNeedNoDevice) {
  CachingAllocator a(0);
  Result<void*> p = a.allocate(0);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value(), nullptr);
  EXPECT_TRUE(a.release(nullptr, nullptr).ok());
  EXPECT_EQ(a.stats().alloc_count, 0u);
}

TEST(AllocatorTest, AllocationErrorOrSuccessMatchesTheDevice) {
  CachingAllocator a(0);
  Result<void*> p = a.allocate(1024);
  if (cuda_device_present()) {
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_TRUE(a.release(p.value(), nullptr).ok());
  } else {
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.status().message().rfind("cudaMalloc(1024 bytes) failed: ", 0), 0u)
        << p.status().message();
    AllocatorStats s = a.stats();
    EXPECT_FALSE(s.mem_info_ok);
    EXPECT_TRUE(contains(s.mem_info_error, "cudaMemGetInfo: ")) << s.mem_info_error;
  }
}

TEST(AllocatorTest, ReleaseOfUnknownPointerIsAnError) {
  CachingAllocator a(0);
  int x = 0;
  Status s = a.release(&x, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.message(), "not a live block of this allocator")) << s.message();
}

TEST(AllocatorDeviceTest, ExactSizeReuseAfterEvent) {
  VOUCH_REQUIRE_CUDA_DEVICE("allocator exact-size reuse");
  CachingAllocator a(0);
  Result<void*> p1 = a.allocate(4096);
  ASSERT_TRUE(p1.ok()) << p1.status().message();
  ASSERT_TRUE(cudaMemset(p1.value(), 1, 4096) == cudaSuccess);
  ASSERT_TRUE(a.release(p1.value(), nullptr).ok());
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.live_bytes, 0u);
  EXPECT_EQ(s.cached_bytes, 4096u);
  EXPECT_EQ(s.cached_blocks, 1u);
  EXPECT_EQ(s.peak_live_bytes, 4096u);

  // A different size does not reuse it.
  Result<void*> other = a.allocate(4097);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other.value(), p1.value());
  // The same size does (after the event: nothing is pending, so at once).
  Result<void*> p2 = a.allocate(4096);
  ASSERT_TRUE(p2.ok());
  EXPECT_EQ(p2.value(), p1.value());
  s = a.stats();
  EXPECT_EQ(s.cache_hits, 1u);
  EXPECT_EQ(s.alloc_count, 2u);
  EXPECT_EQ(s.cached_bytes, 0u);
  EXPECT_EQ(s.live_bytes, 4096u + 4097u);
  EXPECT_EQ(s.peak_live_bytes, 4096u + 4097u);
  EXPECT_TRUE(s.mem_info_ok);
  EXPECT_GT(s.device_total_bytes, 0u);

  // Releasing twice is an error.
  ASSERT_TRUE(a.release(p2.value(), nullptr).ok());
  EXPECT_FALSE(a.release(p2.value(), nullptr).ok());
  ASSERT_TRUE(a.release(other.value(), nullptr).ok());
  ASSERT_TRUE(a.trim().ok());
  s = a.stats();
  EXPECT_EQ(s.cached_bytes, 0u);
  EXPECT_EQ(s.free_count, 2u);
}

TEST(AllocatorDeviceTest, SameStreamReuseAndPendingWork) {
  VOUCH_REQUIRE_CUDA_DEVICE("allocator reuse on a stream with pending work");
  Result<Stream> stream = Stream::create();
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  cudaStream_t st = stream.value().get();
  CachingAllocator a(0);
  const size_t n = size_t(64) << 20;
  Result<void*> p = a.allocate(n, st);
  ASSERT_TRUE(p.ok());
  // Queue work, release behind it, reallocate on the same stream: reused, no wait.
  for (int i = 0; i < 8; i++) ASSERT_EQ(cudaMemsetAsync(p.value(), i, n, st), cudaSuccess);
  ASSERT_TRUE(a.release(p.value(), st).ok());
  Result<void*> q = a.allocate(n, st);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q.value(), p.value());
  for (int i = 0; i < 8; i++) ASSERT_EQ(cudaMemsetAsync(q.value(), i, n, st), cudaSuccess);
  ASSERT_TRUE(a.release(q.value(), st).ok());
  // Without naming the stream, the allocator waits for the release event.
  Result<void*> r = a.allocate(n);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), p.value());
  EXPECT_EQ(cudaStreamQuery(st), cudaSuccess);  // the work the block was released behind is done
  EXPECT_EQ(a.stats().cache_hits, 2u);
  ASSERT_TRUE(a.release(r.value(), st).ok());
  ASSERT_TRUE(stream.value().synchronize().ok());
}

TEST(AllocatorDeviceTest, CapBoundsTheCache) {
  VOUCH_REQUIRE_CUDA_DEVICE("allocator cache cap");
  CachingAllocator a(3000);
  EXPECT_EQ(a.cap_bytes(), 3000u);
  Result<void*> x = a.allocate(2048), y = a.allocate(2048), big = a.allocate(4096);
  ASSERT_TRUE(x.ok() && y.ok() && big.ok());
  ASSERT_TRUE(a.release(x.value(), nullptr).ok());    // cached: 2048 <= 3000
  ASSERT_TRUE(a.release(y.value(), nullptr).ok());    // 4096 > 3000: freed
  ASSERT_TRUE(a.release(big.value(), nullptr).ok());  // larger than the cap: freed
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.cached_bytes, 2048u);
  EXPECT_LE(s.cached_bytes, s.cap_bytes);
  EXPECT_EQ(s.cap_frees, 2u);
  EXPECT_EQ(s.free_count, 2u);
  EXPECT_EQ(s.alloc_count, 3u);
  EXPECT_EQ(s.live_bytes, 0u);
  EXPECT_EQ(s.peak_live_bytes, 8192u);
  EXPECT_TRUE(contains(format(s), "cache_cap_bytes=3000 (bounded)"));
  ASSERT_TRUE(a.trim().ok());
  EXPECT_EQ(a.stats().free_count, 3u);
}

TEST(AllocatorDeviceTest, DeviceBufferReturnsItsBlockToTheProcessCache) {
  VOUCH_REQUIRE_CUDA_DEVICE("DeviceBuffer over the process allocator");
  Result<Stream> stream = Stream::create();
  ASSERT_TRUE(stream.ok());
  const size_t n = 12345;
  void* first = nullptr;
  uint64_t cached_before = stats().cached_bytes;
  {
    Result<DeviceBuffer> b = DeviceBuffer::allocate(n, stream.value().get());
    ASSERT_TRUE(b.ok()) << b.status().message();
    first = b.value().data();
    EXPECT_EQ(b.value().bytes(), n);
    EXPECT_EQ(stats().live_bytes, n);
  }  // destructor: released on its stream
  EXPECT_EQ(stats().cached_bytes, cached_before + n);
  Result<DeviceBuffer> again = DeviceBuffer::allocate(n, stream.value().get());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.value().data(), first);
  EXPECT_TRUE(again.value().release().ok());
  EXPECT_TRUE(again.value().empty());
  EXPECT_TRUE(trim().ok());
  EXPECT_EQ(stats().cached_bytes, 0u);
}

}  // namespace
}  // namespace vouch::rt::cuda
