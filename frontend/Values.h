//===- Values.h - what an expression evaluates to ---------------*- C++ -*-===//
//
// The lowering evaluates every expression to an ExprValue: a compile-time
// number, bool, string or list (constants folded on the spot), or a tensor
// (an SSA value of the model). `Invalid` stands for an expression whose error
// has been reported; anything computed from it is Invalid too and reports
// nothing more, so one mistake gives one diagnostic.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_FRONTEND_VALUES_H
#define VOUCH_FRONTEND_VALUES_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llvm/Support/SMLoc.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

namespace vouch::frontend {

/// A compile-time number. Integers stay exact while they fit int64, so a
/// dimension such as 2^62 is neither rounded nor silently wrapped.
struct Number {
  double value = 0;
  /// Set when the number was computed from integers only and fits int64.
  std::optional<int64_t> exact;
  /// The literal's text when the number is one (not computed): str() says
  /// when the literal has more digits than f64 holds and was rounded.
  llvm::StringRef literal = {};

  static Number integer(int64_t v) { return {static_cast<double>(v), v}; }
  static Number real(double v) { return {v, std::nullopt}; }

  /// The integer this number denotes: its exact value, or a whole float that
  /// fits int64. Empty for 2.5 or 1e30.
  std::optional<int64_t> asInteger() const;

  /// "3", "0.03", "1e+20": how messages show it, the shortest text that
  /// reads back as the double; a literal that rounded adds "(the literal
  /// 0.99999999999999999 rounds to 1 in f64)".
  std::string str() const;
};

/// A number inside a list literal, with its location for messages.
struct ListItem {
  Number number;
  llvm::SMLoc loc;
};

class ExprValue {
public:
  enum class Kind { Invalid, Absent, Number, Bool, String, List, Tensor, TensorList };

  static ExprValue invalid() { return ExprValue(Kind::Invalid, {}); }
  /// An optional argument that was not given.
  static ExprValue absent() { return ExprValue(Kind::Absent, {}); }
  static ExprValue number(Number number, llvm::SMLoc loc) {
    ExprValue v(Kind::Number, loc);
    v.numberValue = number;
    return v;
  }
  static ExprValue boolean(bool value, llvm::SMLoc loc) {
    ExprValue v(Kind::Bool, loc);
    v.boolValue = value;
    return v;
  }
  static ExprValue string(std::string value, llvm::SMLoc loc) {
    ExprValue v(Kind::String, loc);
    v.stringValue = std::move(value);
    return v;
  }
  static ExprValue list(std::vector<ListItem> items, llvm::SMLoc loc) {
    ExprValue v(Kind::List, loc);
    v.listValue = std::move(items);
    return v;
  }
  static ExprValue tensor(mlir::Value value, llvm::SMLoc loc) {
    ExprValue v(Kind::Tensor, loc);
    v.tensorValue = value;
    return v;
  }
  /// A list literal of tensors (`[a, b]`, concat's argument), each element
  /// a Tensor value at its own location.
  static ExprValue tensorList(std::vector<ExprValue> tensors, llvm::SMLoc loc) {
    ExprValue v(Kind::TensorList, loc);
    v.tensorListValue = std::move(tensors);
    return v;
  }

  Kind getKind() const { return kind; }
  bool is(Kind k) const { return kind == k; }
  bool isInvalid() const { return kind == Kind::Invalid; }
  bool isTensor() const { return kind == Kind::Tensor; }

  const Number &getNumber() const { return numberValue; }
  bool getBool() const { return boolValue; }
  const std::string &getString() const { return stringValue; }
  const std::vector<ListItem> &getList() const { return listValue; }
  mlir::Value getTensor() const { return tensorValue; }
  const std::vector<ExprValue> &getTensorList() const { return tensorListValue; }
  mlir::RankedTensorType getTensorType() const {
    return llvm::cast<mlir::RankedTensorType>(tensorValue.getType());
  }

  /// Where the value was written (for a name: where it was used).
  llvm::SMLoc getLoc() const { return loc; }
  ExprValue at(llvm::SMLoc useLoc) const {
    ExprValue v = *this;
    v.loc = useLoc;
    return v;
  }

  /// "the number 3", "a list", "'tensor<2x3xf32>'", …: what error messages
  /// say was found.
  std::string describe() const;

private:
  ExprValue(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}

  Kind kind;
  llvm::SMLoc loc;
  Number numberValue;
  bool boolValue = false;
  std::string stringValue;
  std::vector<ListItem> listValue;
  mlir::Value tensorValue;
  std::vector<ExprValue> tensorListValue;
};

} // namespace vouch::frontend

#endif // VOUCH_FRONTEND_VALUES_H
