// Tests for init.h. Expected values were computed independently in Python 3 with the
// formulas of BRIEF.md (sm/next_seed/rand01 as in rng_test.cc), e.g. for xavier:
//   s = next_seed(0, 0); lim = math.sqrt(6 / (2 + 8)); -lim + rand01(s, i) * 2 * lim
// and for normal: u1 = max(rand01(s, 2i), 2**-32); u2 = rand01(s, 2i + 1);
//   a + b * math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)
#include "runtime/init.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/rng.h"

namespace vouch::rt {
namespace {

TEST(InitTest, ParamSeedsFollowDeclarationOrder) {
  EXPECT_EQ(param_seed(0, 0), 0x6e789e6aa1b965f4ull);  // W1
  EXPECT_EQ(param_seed(0, 1), 0xbeeb8da1658eec67ull);  // b1 (zeros still draws index 1)
  EXPECT_EQ(param_seed(0, 2), 0xbfc846100bfc1e42ull);  // W2
  EXPECT_EQ(param_seed(0, 3), 0xb3466f8a7b81a989ull);  // b2
  EXPECT_EQ(param_seed(2026, 3), next_seed(2026, 3));
}

TEST(InitTest, XavierUniformQuickstartW1) {
  std::vector<double> w(16);
  init_tensor({InitKind::XavierUniform}, param_seed(0, 0), {8, 2}, w.data());
  const double limit = 0.7745966692414834;  // sqrt(6 / (2 + 8))
  EXPECT_DOUBLE_EQ(w[0], 0.2669790022138607);
  EXPECT_DOUBLE_EQ(w[1], 0.47714833832568493);
  EXPECT_DOUBLE_EQ(w[2], 0.6938748941960386);
  EXPECT_DOUBLE_EQ(w[3], 0.3087568914042391);
  EXPECT_DOUBLE_EQ(w[15], -0.6477435030399645);
  for (double v : w) {
    EXPECT_GE(v, -limit);
    EXPECT_LT(v, limit);
  }
}

TEST(InitTest, Fans) {
  Fans linear = compute_fans({8, 2});
  EXPECT_EQ(linear.fan_in, 2);
  EXPECT_EQ(linear.fan_out, 8);
  Fans conv = compute_fans({4, 3, 2, 2});  // receptive field 4
  EXPECT_EQ(conv.fan_in, 12);
  EXPECT_EQ(conv.fan_out, 16);
  Fans vec = compute_fans({5});
  EXPECT_EQ(vec.fan_in, 5);
  EXPECT_EQ(vec.fan_out, 5);
}

TEST(InitTest, XavierConvUsesReceptiveField) {
  std::vector<double> w(48);
  init_tensor({InitKind::XavierUniform}, 5, {4, 3, 2, 2}, w.data());
  EXPECT_DOUBLE_EQ(w[47], 0.2680856306856023);  // limit sqrt(6/28)
}

TEST(InitTest, KaimingUniform) {
  std::vector<double> w(12);
  init_tensor({InitKind::KaimingUniform}, 9, {3, 4}, w.data());  // bound sqrt(6/4)
  EXPECT_DOUBLE_EQ(w[0], 0.6331610102255179);
  EXPECT_DOUBLE_EQ(w[1], 0.6866472453535781);
  EXPECT_DOUBLE_EQ(w[2], 0.9874395156848816);
}

// A conv weight [out, in, kh, kw] = [4, 3, 2, 2]: torch's kaiming_uniform_ (a = 0,
// fan_in mode, relu's gain) takes fan_in = in·kh·kw = 12, not out·kh·kw = 16
// (torch.nn.init._calculate_fan_in_and_fan_out), so bound = sqrt(2)·sqrt(3 / 12).
// Expected values computed in Python with torch's fan and gain:
//   fan_in, _ = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(4, 3, 2, 2))
//   bound = math.sqrt(3) * torch.nn.init.calculate_gain("relu") / math.sqrt(fan_in)
//   -bound + rand01(9, i) * 2 * bound
TEST(InitTest, KaimingConvUsesTorchFanIn) {
  std::vector<double> w(48);
  init_tensor({InitKind::KaimingUniform}, 9, {4, 3, 2, 2}, w.data());
  const double bound = 0.7071067811865477;
  EXPECT_DOUBLE_EQ(w[0], 0.3655556796940782);
  EXPECT_DOUBLE_EQ(w[1], 0.39643597194320357);
  EXPECT_DOUBLE_EQ(w[47], 0.2722802969596223);
  double largest = 0;
  for (double v : w) largest = std::max(largest, std::fabs(v));
  EXPECT_LT(largest, bound);
  // fan_out (16) would bound every value by sqrt(6 / 16) = 0.612...; fan_in's
  // bound is larger, and 48 draws reach past the smaller one.
  EXPECT_GT(largest, std::sqrt(6.0 / 16.0));
}

TEST(InitTest, UniformAndNormal) {
  std::vector<double> u(3), n(3);
  init_tensor({InitKind::Uniform, -3, 5}, 11, {3}, u.data());
  EXPECT_DOUBLE_EQ(u[0], 3.1491912864148617);
  EXPECT_DOUBLE_EQ(u[1], 2.1576884277164936);
  EXPECT_DOUBLE_EQ(u[2], -2.781149363145232);
  init_tensor({InitKind::Normal, 1, 2}, 7, {3}, n.data());
  EXPECT_NEAR(n[0], 2.964040684610488, 1e-14);
  EXPECT_NEAR(n[1], 0.16534567437842085, 1e-14);
  EXPECT_NEAR(n[2], 0.14610926157917725, 1e-14);
}

TEST(InitTest, ZerosAndOnes) {
  std::vector<double> z(6, 7.0), o(6, 7.0);
  init_tensor({InitKind::Zeros}, 1, {2, 3}, z.data());
  init_tensor({InitKind::Ones}, 1, {2, 3}, o.data());
  for (int i = 0; i < 6; i++) {
    EXPECT_EQ(z[i], 0.0);
    EXPECT_EQ(o[i], 1.0);
  }
}

TEST(InitTest, ParseInit) {
  Result<InitSpec> x = parse_init("xavier_uniform", {});
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(x.value().kind, InitKind::XavierUniform);
  Result<InitSpec> n = parse_init("normal", {});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n.value().a, 0);
  EXPECT_EQ(n.value().b, 1);
  Result<InitSpec> u = parse_init("uniform", {-2, 3});
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u.value().a, -2);
  EXPECT_EQ(u.value().b, 3);

  Result<InitSpec> bad = parse_init("glorot", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown initialiser `glorot`"), std::string::npos);
  EXPECT_FALSE(parse_init("zeros", {1}).ok());
  EXPECT_FALSE(parse_init("uniform", {1}).ok());
  EXPECT_FALSE(parse_init("uniform", {3, 1}).ok());
  EXPECT_FALSE(parse_init("normal", {0, -1}).ok());
}

}  // namespace
}  // namespace vouch::rt
