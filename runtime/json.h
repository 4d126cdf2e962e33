// json.h: a small, strict JSON reader and a string escaper, for safetensors headers.
//
// The runtime depends on nothing outside the standard library, and a safetensors
// header is plain JSON, so it carries its own parser: objects (key order kept,
// duplicate keys refused), arrays, strings with all escapes (\uXXXX, surrogate pairs)
// as UTF-8, numbers (the source text is kept so integers are read exactly), true,
// false, null. Nesting is limited so a hostile file cannot exhaust the stack.
#ifndef VOUCH_RUNTIME_JSON_H_
#define VOUCH_RUNTIME_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/status.h"

namespace vouch::rt {

struct JsonValue {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  std::string text;                // String: the decoded string; Number: the source text
  std::vector<JsonValue> items;    // Array elements; Object values (parallel to keys)
  std::vector<std::string> keys;   // Object keys, in file order

  // The member named key, or nullptr (Object only).
  const JsonValue* find(std::string_view key) const;
  // A Number that is a non-negative integer without fraction or exponent, <= 2^63-1.
  bool as_uint(uint64_t* out) const;
};

// Parses the whole text as one JSON value (whitespace around it allowed). Errors say
// what was expected and the byte offset.
Result<JsonValue> parse_json(std::string_view text);

// s as a JSON string literal, quotes included.
std::string json_quote(std::string_view s);

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_JSON_H_
