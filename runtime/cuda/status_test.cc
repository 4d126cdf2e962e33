// Tests for status.h: the three runtime states give three distinct answers, and the
// probe of this machine. On the build machine (no driver) the probe must report
// native-no-device with cudaErrorInsufficientDriver; on a GPU host, the device.
#include "runtime/cuda/status.h"

#include <gtest/gtest.h>

#include <string>

namespace vouch::rt::cuda {
namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(StatusTest, ThreeStatesThreeDistinctAnswers) {
  RuntimeStatus with;
  with.state = RuntimeState::NativeWithDevice;
  with.device_count = 1;
  EXPECT_TRUE(status_for(with).ok());

  RuntimeStatus no_driver;
  no_driver.state = RuntimeState::NativeNoDevice;
  no_driver.count_error = cudaErrorInsufficientDriver;
  no_driver.count_error_name = "cudaErrorInsufficientDriver";
  EXPECT_EQ(status_for(no_driver).message(),
            "device `cuda` requested, but no usable CUDA device is visible "
            "(cudaGetDeviceCount: cudaErrorInsufficientDriver): this executable will not "
            "fall back to the CPU");

  RuntimeStatus zero;
  zero.state = RuntimeState::NativeNoDevice;
  zero.count_error = cudaSuccess;
  zero.count_error_name = "cudaSuccess";
  EXPECT_TRUE(contains(status_for(zero).message(), "(cudaGetDeviceCount: 0 devices)"))
      << status_for(zero).message();

  RuntimeStatus stub;
  stub.state = RuntimeState::StubBuild;
  std::string stub_msg = status_for(stub).message();
  EXPECT_TRUE(contains(stub_msg, "CPU-only build")) << stub_msg;
  EXPECT_NE(stub_msg, status_for(no_driver).message());

  EXPECT_STREQ(runtime_state_name(RuntimeState::NativeWithDevice), "native-with-device");
  EXPECT_STREQ(runtime_state_name(RuntimeState::NativeNoDevice), "native-no-device");
  EXPECT_STREQ(runtime_state_name(RuntimeState::StubBuild), "stub-build");
}

TEST(StatusTest, ProbeOfThisMachine) {
  const RuntimeStatus& s = probe_runtime();
  EXPECT_EQ(&s, &probe_runtime());  // probed once, cached
  EXPECT_EQ(s.runtime_version, CUDART_VERSION);
  EXPECT_NE(s.state, RuntimeState::StubBuild);  // this library is the native build
  std::string report = format(s);
  EXPECT_TRUE(contains(report, runtime_state_name(s.state))) << report;
  if (s.state == RuntimeState::NativeWithDevice) {
    EXPECT_TRUE(require_native_cuda().ok());
    EXPECT_GE(s.device_count, 1);
    EXPECT_FALSE(s.device_name.empty());
    EXPECT_GE(s.cc_major, 1);
    EXPECT_GT(s.driver_version, 0);
    EXPECT_TRUE(contains(report, "compute capability")) << report;
  } else {
    // The build machine: a native build, no driver.
    Status st = require_native_cuda();
    ASSERT_FALSE(st.ok());
    EXPECT_TRUE(contains(st.message(),
                         "device `cuda` requested, but no usable CUDA device is visible "
                         "(cudaGetDeviceCount: " + s.count_error_name + ")"))
        << st.message();
    EXPECT_TRUE(contains(st.message(), "this executable will not fall back to the CPU"));
    EXPECT_EQ(s.device_count, 0);
    std::printf("probe on this machine: %s\n", st.message().c_str());
  }
}

TEST(StatusTest, VersionFormatting) {
  EXPECT_EQ(format_cuda_version(13000), "13.0");
  EXPECT_EQ(format_cuda_version(12040), "12.4");
  EXPECT_EQ(format_cuda_version(0), "none");
}

}  // namespace
}  // namespace vouch::rt::cuda
