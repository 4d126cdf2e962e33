//===- Values.cpp - what an expression evaluates to -----------------------===//
#include "frontend/Values.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

using namespace vouch::frontend;

std::optional<int64_t> Number::asInteger() const {
  if (exact)
    return exact;
  // 2^63 is the first double past int64's range; every whole double below it
  // converts exactly.
  constexpr double kLimit = 9223372036854775808.0;
  if (!std::isfinite(value) || value != std::trunc(value) || value >= kLimit ||
      value < -kLimit)
    return std::nullopt;
  return static_cast<int64_t>(value);
}

namespace {

/// Significant digits of a decimal number's text ("0.0300" and "3e-2": 1).
size_t significantDigits(llvm::StringRef text) {
  llvm::StringRef mantissa = text.take_until([](char c) { return c == 'e' || c == 'E'; });
  std::string digits;
  for (char c : mantissa)
    if (c >= '0' && c <= '9')
      digits += c;
  const size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos)
    return 0;
  return digits.find_last_not_of('0') - first + 1;
}

} // namespace

std::string Number::str() const {
  if (exact)
    return std::to_string(*exact);
  // The shortest text that reads back as this double (1.0000001 stays
  // 1.0000001; %g printed 1).
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof(text), value);
  std::string shown(text, ec == std::errc() ? end : text);
  // A literal with more digits than f64 holds was rounded: say so, or
  // "beta2 = 0.99999999999999999 ... got 1" reads as nonsense.
  if (!literal.empty() && significantDigits(literal) > significantDigits(shown))
    shown += " (the literal " + literal.str() + " rounds to " + shown + " in f64)";
  return shown;
}

std::string ExprValue::describe() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  switch (kind) {
  case Kind::Invalid:
    os << "an invalid value";
    break;
  case Kind::Absent:
    os << "nothing";
    break;
  case Kind::Number:
    os << "the number " << numberValue.str();
    break;
  case Kind::Bool:
    os << (boolValue ? "true" : "false");
    break;
  case Kind::String:
    os << "a string";
    break;
  case Kind::List:
    os << "a list";
    break;
  case Kind::TensorList:
    os << "a list of tensors";
    break;
  case Kind::Tensor:
    // Quoted, as MLIR's diagnostics quote the types streamed into them.
    os << "'" << tensorValue.getType() << "'";
    break;
  }
  return text;
}
