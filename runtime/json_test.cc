// Tests for json.h: every value kind, escapes, exact integers, and malformed input.
#include "runtime/json.h"

#include <chrono>

#include <gtest/gtest.h>

#include <string>

namespace vouch::rt {
namespace {

TEST(JsonTest, ParsesNestedDocument) {
  Result<JsonValue> r = parse_json(
      " {\"w\": {\"dtype\": \"F64\", \"shape\": [8, 2], \"data_offsets\": [0, 128]},"
      " \"flags\": [true, false, null, -1.5e3], \"__metadata__\": {}} ");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const JsonValue& v = r.value();
  ASSERT_EQ(v.kind, JsonValue::Object);
  EXPECT_EQ(v.keys, (std::vector<std::string>{"w", "flags", "__metadata__"}));
  const JsonValue* w = v.find("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->find("dtype")->text, "F64");
  uint64_t dim = 0;
  ASSERT_TRUE(w->find("shape")->items[0].as_uint(&dim));
  EXPECT_EQ(dim, 8u);
  const JsonValue* flags = v.find("flags");
  ASSERT_EQ(flags->items.size(), 4u);
  EXPECT_TRUE(flags->items[0].boolean);
  EXPECT_FALSE(flags->items[1].boolean);
  EXPECT_EQ(flags->items[2].kind, JsonValue::Null);
  EXPECT_EQ(flags->items[3].text, "-1.5e3");
  EXPECT_FALSE(flags->items[3].as_uint(&dim));
  EXPECT_EQ(v.find("missing"), nullptr);
}

TEST(JsonTest, StringEscapes) {
  Result<JsonValue> r = parse_json(R"("a\"b\\c\/\n\t\u00e9\ud83d\ude00")");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value().text, "a\"b\\c/\n\t\xc3\xa9\xf0\x9f\x98\x80");
}

TEST(JsonTest, ExactLargeIntegers) {
  Result<JsonValue> r = parse_json("[9007199254740993, 9223372036854775807, 9223372036854775808]");
  ASSERT_TRUE(r.ok());
  uint64_t v = 0;
  ASSERT_TRUE(r.value().items[0].as_uint(&v));
  EXPECT_EQ(v, 9007199254740993ull);  // 2^53 + 1: not representable as a double
  ASSERT_TRUE(r.value().items[1].as_uint(&v));
  EXPECT_EQ(v, 9223372036854775807ull);
  EXPECT_FALSE(r.value().items[2].as_uint(&v));  // past int64
}

TEST(JsonTest, QuoteRoundTrips) {
  std::string s = "we\"ird\\name\n\x01";
  Result<JsonValue> r = parse_json(json_quote(s));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value().text, s);
}

TEST(JsonTest, RefusesMalformedInput) {
  struct Case {
    const char* text;
    const char* reason;
  } cases[] = {
      {"", "unexpected end of input"},
      {"{\"a\": 1,}", "expected a string key"},
      {"{\"a\" 1}", "expected ':'"},
      {"{\"a\": 1, \"a\": 2}", "duplicate key 'a'"},
      {"[1 2]", "expected ',' or ']'"},
      {"\"abc", "unterminated string"},
      {"\"a\\qb\"", "invalid escape '\\\\q'"},
      {"\"\\ud83d\"", "unpaired surrogate"},
      {"\"\\u12zz\"", "bad hex digit"},
      {"\"\\u12\"", "truncated \\u escape"},
      {"01", "unexpected text after the value"},
      {"1.", "expected digits after '.'"},
      {"-", "expected digits"},
      {"tru", "invalid literal"},
      {"{} x", "unexpected text after the value"},
      {"\"tab\there\"", "control character"},
  };
  for (const Case& c : cases) {
    Result<JsonValue> r = parse_json(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.reason), std::string::npos)
        << c.text << " -> " << r.status().message();
    EXPECT_NE(r.status().message().find("malformed JSON at byte"), std::string::npos);
  }
  std::string deep(100, '[');
  Result<JsonValue> r = parse_json(deep);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nesting deeper than 64"), std::string::npos);
}

// Found by //tests/fuzz:safetensors_fuzzer: a refusal printed the header's bytes raw
// (a key, a stray character). They are shown escaped, as quoted.h shows them.
TEST(JsonTest, RefusalsShowTheTextEscaped) {
  Result<JsonValue> stray = parse_json(std::string("{\"a\": \x1b}", 9));
  ASSERT_FALSE(stray.ok());
  EXPECT_EQ(stray.status().message(), "malformed JSON at byte 6: unexpected character '\\x1b'");
  Result<JsonValue> dup = parse_json("{\"k\\u00e9\": 1, \"k\\u00e9\": 2}");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("duplicate key 'k\\xc3\\xa9'"), std::string::npos)
      << dup.status().message();
}

// Found with the safetensors fuzz target's inputs scaled up: duplicate keys were found
// by a scan of the keys so far, quadratic in them: a header of 200,000 tensors took
// 100 s (a 100 MB one, hours). They are hashed.
TEST(JsonTest, ManyKeysParseInLinearTime) {
  std::string text = "{";
  const int kKeys = 400000;
  for (int i = 0; i < kKeys; i++) text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
  text += "}";
  auto start = std::chrono::steady_clock::now();
  Result<JsonValue> r = parse_json(text);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value().keys.size(), size_t(kKeys));
  // Linear: well under a second here (under sanitizers too); the scan took minutes.
  EXPECT_LT(seconds, 20.0);
  Result<JsonValue> dup = parse_json(text.substr(0, text.size() - 1) + ",\"k123\":1}");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("duplicate key 'k123'"), std::string::npos);
}

}  // namespace
}  // namespace vouch::rt
