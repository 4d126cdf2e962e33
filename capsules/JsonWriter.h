//===- JsonWriter.h - a small JSON value and its pretty printer -*- C++ -*-===//
//
// Reports build a JsonValue tree and print it: objects keep insertion order
// (so documents diff well), arrays of scalars print on one line.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CAPSULES_JSONWRITER_H
#define VOUCH_CAPSULES_JSONWRITER_H

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vouch::capsules {

class JsonValue {
public:
  enum class Kind { Null, Bool, Int, String, Array, Object };

  JsonValue() = default; ///< null
  JsonValue(bool b) : kind_(Kind::Bool), bool_(b) {}
  JsonValue(int64_t i) : kind_(Kind::Int), int_(i) {}
  JsonValue(int i) : JsonValue(static_cast<int64_t>(i)) {}
  JsonValue(size_t i) : JsonValue(static_cast<int64_t>(i)) {}
  JsonValue(std::string s) : kind_(Kind::String), string_(std::move(s)) {}
  JsonValue(std::string_view s) : JsonValue(std::string(s)) {}
  JsonValue(const char *s) : JsonValue(std::string(s)) {}

  static JsonValue array() { JsonValue v; v.kind_ = Kind::Array; return v; }
  static JsonValue object() { JsonValue v; v.kind_ = Kind::Object; return v; }

  /// Appends to an array.
  JsonValue &push(JsonValue item);
  /// Adds a member to an object (keys are not checked for duplicates).
  JsonValue &set(std::string key, JsonValue value);

  /// Two-space indented text, no trailing newline.
  std::string print() const;

private:
  void printTo(std::string &out, int indent) const;

  Kind kind_ = Kind::Null;
  bool bool_ = false;
  int64_t int_ = 0;
  std::string string_;
  std::vector<JsonValue> items_;
  std::vector<std::string> keys_; ///< objects: parallel to items_
};

/// `s` as a JSON string literal, quotes included.
std::string jsonQuote(std::string_view s);

} // namespace vouch::capsules

#endif // VOUCH_CAPSULES_JSONWRITER_H
