// Tests for device.h: every name parses, unknown names list the known ones, and only
// the CPU runs in this build, with the exact messages of the brief.
#include "runtime/device.h"

#include <gtest/gtest.h>

#include <string>

namespace vouch::rt {
namespace {

TEST(DeviceTest, EveryNameRoundTrips) {
  for (const char* name : {"auto", "cpu", "cuda", "rocm", "metal", "wasm", "tpu", "trainium",
                           "custom", "external"}) {
    Result<Device> d = parse_device(name);
    ASSERT_TRUE(d.ok()) << name;
    EXPECT_STREQ(device_name(d.value()), name);
  }
}

TEST(DeviceTest, UnknownNameListsKnownNames) {
  Result<Device> d = parse_device("gpu");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(),
            "unknown device `gpu` (known: auto, cpu, cuda, rocm, metal, wasm, tpu, trainium, "
            "custom, external)");
  EXPECT_FALSE(parse_device("CPU").ok());
  EXPECT_FALSE(parse_device("").ok());
}

TEST(DeviceTest, OnlyCpuRunsInThisBuild) {
  EXPECT_TRUE(require_runtime(Device::Cpu).ok());
  EXPECT_TRUE(require_runtime(Device::Auto).ok());
  EXPECT_EQ(resolve_device(Device::Auto), Device::Cpu);
  EXPECT_EQ(require_runtime(Device::Cuda).message(),
            "device `cuda` requested, but this executable is a CPU-only build (no native CUDA "
            "runtime linked); rebuild it with `vouch build --target cuda`");
  EXPECT_EQ(require_runtime(Device::Rocm).message(),
            "device `rocm` has no maintained runtime profile");
  for (Device d : {Device::Metal, Device::Wasm, Device::Tpu, Device::Trainium, Device::Custom,
                   Device::External}) {
    Status st = require_runtime(d);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.message(),
              std::string("device `") + device_name(d) + "` has no maintained runtime profile");
  }
}

}  // namespace
}  // namespace vouch::rt
