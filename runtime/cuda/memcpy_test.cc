// Tests for memcpy.h: checked copies. Without a device the error names the call, the
// direction and the byte count; with one, round trips and a scalar download.
#include "runtime/cuda/memcpy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/cuda/test_util.h"

namespace vouch::rt::cuda {
namespace {

TEST(MemcpyTest, ZeroBytesIsANoOp) {
  EXPECT_TRUE(upload<float>(nullptr, nullptr, 0, nullptr).ok());
  EXPECT_TRUE(download<float>(nullptr, nullptr, 0, nullptr).ok());
}

TEST(MemcpyTest, ErrorNamesCallDirectionAndBytes) {
  if (cuda_device_present()) GTEST_SKIP() << "not applicable: a CUDA device is present";
  std::vector<float> host(4, 1.0f);
  float* fake = reinterpret_cast<float*>(uintptr_t(0x1000));
  Status s = upload(fake, host.data(), host.size(), nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("cudaMemcpyAsync(host to device, 16 bytes) failed: ", 0), 0u)
      << s.message();
  Result<double> r = download_scalar(reinterpret_cast<const double*>(fake), nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("cudaMemcpyAsync(device to host, 8 bytes) failed: ", 0), 0u)
      << r.status().message();
}

TEST(MemcpyDeviceTest, RoundTripAndScalar) {
  VOUCH_REQUIRE_CUDA_DEVICE("host/device copies");
  std::vector<double> host = {1.5, -2.25, 3.0, 1e300, -0.0};
  double *d = nullptr, *e = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), host.size() * sizeof(double)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&e), host.size() * sizeof(double)), cudaSuccess);
  ASSERT_TRUE(upload(d, host.data(), host.size(), nullptr).ok());
  ASSERT_TRUE(copy_device(e, d, host.size(), nullptr).ok());
  std::vector<double> back(host.size(), 0.0);
  ASSERT_TRUE(download(back.data(), e, back.size(), nullptr).ok());
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  EXPECT_EQ(back, host);
  Result<double> s = download_scalar(e + 1, nullptr);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s.value(), -2.25);
  cudaFree(d);
  cudaFree(e);
}

}  // namespace
}  // namespace vouch::rt::cuda
