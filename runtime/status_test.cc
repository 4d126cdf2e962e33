// Tests for status.h: Ok/Error and Result's value-or-error behaviour.
#include "runtime/status.h"

#include <gtest/gtest.h>

#include <string>

namespace vouch::rt {
namespace {

Result<int> half(int v) {
  if (v % 2 != 0) return Status::Error("odd: " + std::to_string(v));
  return v / 2;
}

TEST(StatusTest, OkAndError) {
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok().message(), "");
  Status e = Status::Error("disk full");
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.message(), "disk full");
  EXPECT_FALSE(Status::Error("").ok());  // an empty reason is still an error
}

TEST(StatusTest, ResultHoldsValueOrError) {
  Result<int> r = half(8);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), 4);
  Result<int> bad = half(3);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "odd: 3");
}

TEST(StatusTest, ResultFromOkStatusIsAnError) {
  Result<std::string> r = Status::Ok();
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("OK status"), std::string::npos);
}

}  // namespace
}  // namespace vouch::rt
