// Tests for sample.h: the draws against probabilities computed here by hand, and the
// vocabulary's files, encoding and decoding.
#include "runtime/sample.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runtime/rng.h"
#include "runtime/test_files.h"

namespace vouch::rt {
namespace {

TEST(SampleTest, TemperatureZeroTakesTheFirstMaximum) {
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f};
  for (double u : {0.0, 0.5, 0.999}) EXPECT_EQ(draw_token(logits.data(), 4, 0.0, u), 1);
}

TEST(SampleTest, DrawsAreTheInverseCdfOfTheSoftmax) {
  // logits log(1), log(2), log(5) at temperature 1: probabilities 0.125, 0.25, 0.625,
  // cumulative 0.125, 0.375, 1.
  const std::vector<double> logits = {std::log(1.0), std::log(2.0), std::log(5.0)};
  EXPECT_EQ(draw_token(logits.data(), 3, 1.0, 0.0), 0);
  EXPECT_EQ(draw_token(logits.data(), 3, 1.0, 0.124), 0);
  EXPECT_EQ(draw_token(logits.data(), 3, 1.0, 0.126), 1);
  EXPECT_EQ(draw_token(logits.data(), 3, 1.0, 0.374), 1);
  EXPECT_EQ(draw_token(logits.data(), 3, 1.0, 0.376), 2);
  EXPECT_EQ(draw_token(logits.data(), 3, 1.0, 0.9999999), 2);
  // Temperature 2 divides the logits: probabilities ∝ 1, √2, √5.
  const double total = 1 + std::sqrt(2.0) + std::sqrt(5.0);
  EXPECT_EQ(draw_token(logits.data(), 3, 2.0, 1 / total - 1e-9), 0);
  EXPECT_EQ(draw_token(logits.data(), 3, 2.0, 1 / total + 1e-9), 1);
}

TEST(SampleTest, FrequenciesFollowTheProbabilities) {
  // 20,000 draws of the sampling stream against probabilities 0.125, 0.25, 0.625:
  // each frequency within 0.01 (over 5 standard deviations).
  const std::vector<float> logits = {0.0f, float(std::log(2.0)), float(std::log(5.0))};
  const uint64_t seed = sample_seed(7);
  std::vector<int> counts(3, 0);
  const int n = 20000;
  for (int i = 0; i < n; i++) counts[size_t(draw_token(logits.data(), 3, 1.0, rand01(seed, i)))]++;
  EXPECT_NEAR(counts[0] / double(n), 0.125, 0.01);
  EXPECT_NEAR(counts[1] / double(n), 0.25, 0.01);
  EXPECT_NEAR(counts[2] / double(n), 0.625, 0.01);
  EXPECT_NE(sample_seed(7), sample_seed(8));
}

TEST(SampleTest, VocabEncodesByLongestMatchAndDecodes) {
  Vocab v{{"\n", "a", "b", "ab", " "}};
  Result<std::vector<int64_t>> tokens = v.encode("ab a\nb");
  ASSERT_TRUE(tokens.ok()) << tokens.status().message();
  EXPECT_EQ(tokens.value(), (std::vector<int64_t>{3, 4, 1, 0, 2}));
  EXPECT_EQ(v.decode(tokens.value()), "ab a\nb");
  Result<std::vector<int64_t>> bad = v.encode("abc");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "no token of the vocabulary matches byte 2 ('c')");
}

TEST(SampleTest, VocabFilesAreJsonArraysOfStrings) {
  Result<Vocab> v = load_vocab(test_files::write_temp("vocab.json", "[\"\\n\", \" \", \"a\"]"));
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v.value().strings, (std::vector<std::string>{"\n", " ", "a"}));
  for (const char* text : {"{}", "[]", "[1]", "[\"a\""}) {
    std::string path = test_files::write_temp("bad_vocab.json", text);
    EXPECT_FALSE(load_vocab(path).ok()) << text;
  }
  Result<Vocab> missing = load_vocab(test_files::temp_path("no_such_vocab.json"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot open file"), std::string::npos);
}

}  // namespace
}  // namespace vouch::rt
