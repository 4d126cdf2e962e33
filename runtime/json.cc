// json.cc: recursive-descent JSON reader and string escaper (json.h).
#include "runtime/json.h"

#include <cstdio>
#include <string_view>
#include <unordered_set>

#include "runtime/quoted.h"

namespace vouch::rt {

namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<JsonValue> parse_document() {
    JsonValue v;
    if (!parse_value(&v, 0)) return error();
    skip_space();
    if (pos_ != text_.size()) {
      fail("unexpected text after the value");
      return error();
    }
    return v;
  }

 private:
  Status error() const {
    return Status::Error("malformed JSON at byte " + std::to_string(error_pos_) + ": " + error_);
  }
  bool fail(const std::string& why) {
    if (error_.empty()) {
      error_ = why;
      error_pos_ = pos_;
    }
    return false;
  }
  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      pos_++;
  }
  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return fail("invalid literal");
    pos_ += word.size();
    return true;
  }

  bool parse_value(JsonValue* out, int depth) {
    if (depth > kMaxDepth) return fail("nesting deeper than 64 levels");
    skip_space();
    if (pos_ >= text_.size()) return fail("unexpected end of input");
    char c = text_[pos_];
    if (c == '{') return parse_object(out, depth);
    if (c == '[') return parse_array(out, depth);
    if (c == '"') {
      out->kind = JsonValue::String;
      return parse_string(&out->text);
    }
    if (c == 't') {
      out->kind = JsonValue::Bool;
      out->boolean = true;
      return literal("true");
    }
    if (c == 'f') {
      out->kind = JsonValue::Bool;
      return literal("false");
    }
    if (c == 'n') {
      out->kind = JsonValue::Null;
      return literal("null");
    }
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number(out);
    return fail("unexpected character " + quoted(std::string_view(&c, 1)));
  }

  bool parse_object(JsonValue* out, int depth) {
    out->kind = JsonValue::Object;
    pos_++;  // '{'
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      pos_++;
      return true;
    }
    // The keys so far, hashed: a header of a million tensors is checked for
    // duplicates in linear time (a scan per key took hours).
    std::unordered_set<std::string> seen;
    while (true) {
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != '"') return fail("expected a string key");
      std::string key;
      size_t key_pos = pos_;
      if (!parse_string(&key)) return false;
      if (seen.count(key) != 0) {
        pos_ = key_pos;
        return fail("duplicate key " + quoted(key));
      }
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != ':') return fail("expected ':'");
      pos_++;
      JsonValue value;
      if (!parse_value(&value, depth + 1)) return false;
      out->keys.push_back(std::move(key));
      out->items.push_back(std::move(value));
      seen.insert(out->keys.back());
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        pos_++;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        pos_++;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }

  bool parse_array(JsonValue* out, int depth) {
    out->kind = JsonValue::Array;
    pos_++;  // '['
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      pos_++;
      return true;
    }
    while (true) {
      JsonValue value;
      if (!parse_value(&value, depth + 1)) return false;
      out->items.push_back(std::move(value));
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        pos_++;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        pos_++;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }

  bool hex4(uint32_t* out) {
    if (pos_ + 4 > text_.size()) return fail("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
      char h = text_[pos_++];
      v <<= 4;
      if (h >= '0' && h <= '9') v |= h - '0';
      else if (h >= 'a' && h <= 'f') v |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F') v |= h - 'A' + 10;
      else return fail("bad hex digit in \\u escape");
    }
    *out = v;
    return true;
  }

  static void append_utf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(char(cp));
    } else if (cp < 0x800) {
      out->push_back(char(0xC0 | (cp >> 6)));
      out->push_back(char(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(char(0xE0 | (cp >> 12)));
      out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(char(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(char(0xF0 | (cp >> 18)));
      out->push_back(char(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(char(0x80 | (cp & 0x3F)));
    }
  }

  bool parse_string(std::string* out) {
    pos_++;  // opening quote
    out->clear();
    while (true) {
      if (pos_ >= text_.size()) return fail("unterminated string");
      char c = text_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) {
        pos_--;
        return fail("control character in string");
      }
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) return fail("unterminated string");
      char e = text_[pos_++];
      switch (e) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          uint32_t cp;
          if (!hex4(&cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {  // high surrogate: a low one must follow
            uint32_t low;
            if (text_.substr(pos_, 2) != "\\u") return fail("unpaired surrogate in \\u escape");
            pos_ += 2;
            if (!hex4(&low)) return false;
            if (low < 0xDC00 || low > 0xDFFF) return fail("unpaired surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return fail("unpaired surrogate in \\u escape");
          }
          append_utf8(cp, out);
          break;
        }
        default:
          pos_--;
          return fail("invalid escape " + quoted(std::string("\\") + e));
      }
    }
  }

  // JSON grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  bool parse_number(JsonValue* out) {
    size_t start = pos_;
    auto digits = [&]() {
      size_t b = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') pos_++;
      return pos_ > b;
    };
    if (text_[pos_] == '-') pos_++;
    if (pos_ < text_.size() && text_[pos_] == '0') {
      pos_++;
    } else if (!digits()) {
      return fail("expected digits");
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      pos_++;
      if (!digits()) return fail("expected digits after '.'");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      pos_++;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) pos_++;
      if (!digits()) return fail("expected digits in the exponent");
    }
    out->kind = JsonValue::Number;
    out->text = std::string(text_.substr(start, pos_ - start));
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
  size_t error_pos_ = 0;
};

}  // namespace

const JsonValue* JsonValue::find(std::string_view key) const {
  for (size_t i = 0; i < keys.size(); i++)
    if (keys[i] == key) return &items[i];
  return nullptr;
}

bool JsonValue::as_uint(uint64_t* out) const {
  if (kind != Number || text.empty()) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    if (v > (uint64_t(INT64_MAX) - uint64_t(c - '0')) / 10) return false;
    v = v * 10 + uint64_t(c - '0');
  }
  *out = v;
  return true;
}

Result<JsonValue> parse_json(std::string_view text) { return Parser(text).parse_document(); }

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(c);
        }
    }
  }
  return out + "\"";
}

}  // namespace vouch::rt
