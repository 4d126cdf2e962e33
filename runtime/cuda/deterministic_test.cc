// Tests for deterministic.h: the environment value's parsing and the explicit switch
// (the `--deterministic` flag). The environment read in a fresh process is checked by
// cuda_info_test. Needs no device.
#include "runtime/cuda/deterministic.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace vouch::rt::cuda {
namespace {

TEST(DeterministicTest, ParsesTheEnvironmentValue) {
  // Unset, empty and exactly "0": off. Any other non-empty value: on (the runtime
  // guide's rule), with no warning to print.
  EXPECT_FALSE(parse_deterministic_env(nullptr));
  EXPECT_FALSE(parse_deterministic_env(""));
  EXPECT_FALSE(parse_deterministic_env("0"));
  for (const char* on : {"1", "yes", "true", "false", "2", " 1", " 0", "0 ", "00", "off"})
    EXPECT_TRUE(parse_deterministic_env(on)) << '"' << on << '"';
}

TEST(DeterministicTest, ExplicitSwitchAndReportName) {
  // Bazel runs tests without the variable (it is not in the test environment); if a
  // runner sets it, the default is whatever it says.
  if (std::getenv(kDeterministicEnv) == nullptr) {
    EXPECT_FALSE(deterministic_reductions());
    EXPECT_STREQ(deterministic_mode_name(), "not required");
  }
  set_deterministic_reductions(true);
  EXPECT_TRUE(deterministic_reductions());
  EXPECT_STREQ(deterministic_mode_name(), "required");
  set_deterministic_reductions(false);
  EXPECT_FALSE(deterministic_reductions());
  EXPECT_STREQ(deterministic_mode_name(true), "required");
  EXPECT_STREQ(deterministic_mode_name(false), "not required");
}

}  // namespace
}  // namespace vouch::rt::cuda
