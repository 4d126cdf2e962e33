//===- Values.cpp - what an expression evaluates to -----------------------===//
#include "frontend/Values.h"

#include <cmath>

#include <cstdio>

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

std::string Number::str() const {
  if (exact)
    return std::to_string(*exact);
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
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
