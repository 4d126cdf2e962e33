// Tests for deterministic.h: the environment value's parsing and the explicit switch
// (the `--deterministic` flag). The environment read in a fresh process is checked by
// cuda_info_test. Needs no device.
#include "runtime/cuda/deterministic.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace vouch::rt::cuda {
namespace {

TEST(DeterministicTest, ParsesTheEnvironmentValue) {
  EXPECT_FALSE(parse_deterministic_env(nullptr).enabled);
  EXPECT_FALSE(parse_deterministic_env("").enabled);
  EXPECT_FALSE(parse_deterministic_env("0").enabled);
  EXPECT_TRUE(parse_deterministic_env("1").enabled);
  EXPECT_EQ(parse_deterministic_env("1").warning, "");
  EXPECT_EQ(parse_deterministic_env("0").warning, "");
  for (const char* other : {"yes", "true", " 1", "2"}) {
    DeterministicEnvParse p = parse_deterministic_env(other);
    EXPECT_FALSE(p.enabled) << other;
    EXPECT_NE(p.warning.find("TORCHLEAN_CUDA_DETERMINISTIC_REDUCTIONS"), std::string::npos);
    EXPECT_NE(p.warning.find("ignored"), std::string::npos) << p.warning;
  }
}

TEST(DeterministicTest, ExplicitSwitchAndReportName) {
  // Bazel runs tests without the variable (it is not in the test environment); if a
  // runner sets it, the default is whatever it says.
  if (std::getenv(kDeterministicEnv) == nullptr) {
    EXPECT_FALSE(deterministic_reductions());
    EXPECT_STREQ(reduction_mode_name(), "implementation-defined");
  }
  set_deterministic_reductions(true);
  EXPECT_TRUE(deterministic_reductions());
  EXPECT_STREQ(reduction_mode_name(), "fixed-order");
  set_deterministic_reductions(false);
  EXPECT_FALSE(deterministic_reductions());
  EXPECT_STREQ(reduction_mode_name(true), "fixed-order");
  EXPECT_STREQ(reduction_mode_name(false), "implementation-defined");
}

}  // namespace
}  // namespace vouch::rt::cuda
