//===- JsonWriter.cpp - a small JSON value and its pretty printer -*- C++ -*-===//
#include "capsules/JsonWriter.h"

#include "runtime/json.h"

#include <cstdio>

namespace vouch::capsules {

// The runtime's JSON writer already quotes strings (safetensors headers);
// one implementation of the escaping rules.
std::string jsonQuote(std::string_view s) { return rt::json_quote(s); }

JsonValue &JsonValue::push(JsonValue item) {
  items_.push_back(std::move(item));
  return *this;
}

JsonValue &JsonValue::set(std::string key, JsonValue value) {
  keys_.push_back(std::move(key));
  items_.push_back(std::move(value));
  return *this;
}

std::string JsonValue::print() const {
  std::string out;
  printTo(out, 0);
  return out;
}

void JsonValue::printTo(std::string &out, int indent) const {
  std::string pad(indent + 2, ' '), close(indent, ' ');
  switch (kind_) {
  case Kind::Null: out += "null"; return;
  case Kind::Bool: out += bool_ ? "true" : "false"; return;
  case Kind::Int: out += std::to_string(int_); return;
  case Kind::String: out += jsonQuote(string_); return;
  case Kind::Array: {
    bool scalars = true;
    for (const JsonValue &item : items_)
      scalars &= item.kind_ != Kind::Array && item.kind_ != Kind::Object;
    if (items_.empty() || scalars) {
      out += "[";
      for (size_t i = 0; i < items_.size(); ++i) {
        out += i ? ", " : "";
        items_[i].printTo(out, indent);
      }
      out += "]";
      return;
    }
    out += "[\n";
    for (size_t i = 0; i < items_.size(); ++i) {
      out += pad;
      items_[i].printTo(out, indent + 2);
      out += i + 1 < items_.size() ? ",\n" : "\n";
    }
    out += close + "]";
    return;
  }
  case Kind::Object: {
    if (items_.empty()) {
      out += "{}";
      return;
    }
    out += "{\n";
    for (size_t i = 0; i < items_.size(); ++i) {
      out += pad + jsonQuote(keys_[i]) + ": ";
      items_[i].printTo(out, indent + 2);
      out += i + 1 < items_.size() ? ",\n" : "\n";
    }
    out += close + "}";
    return;
  }
  }
}

} // namespace vouch::capsules
