//===- Expressions.cpp - names, constants, operators, broadcasting --------===//
//
// Constants fold as they are met, so `2 * H` in a shape is just a number.
// The infix operators follow NumPy: tensors of different shapes are
// broadcast at their trailing axes (a vouch.broadcast on whichever side
// needs it), a number meets a tensor as vouch.scale (for * and /) or as a
// vouch.fill of the tensor's type (for + and -).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>

#include "frontend/Lowering.h"
#include "frontend/Shapes.h"
#include "ir/VouchOps.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace vouch;
using namespace vouch::frontend;
using llvm::SMLoc;
using llvm::StringRef;

ExprValue Lowering::lowerExpr(const ast::Expr &expr, Scope &scope) {
  switch (expr.getKind()) {
  case ast::Expr::Kind::Number: {
    const auto &number = llvm::cast<ast::NumberExpr>(expr);
    return ExprValue::number(
        Number{number.value, number.exactInteger, number.spelling},
        expr.getLoc());
  }
  case ast::Expr::Kind::String:
    return ExprValue::string(llvm::cast<ast::StringExpr>(expr).value,
                             expr.getLoc());
  case ast::Expr::Kind::Name:
    return lowerName(llvm::cast<ast::NameExpr>(expr), scope);
  case ast::Expr::Kind::List:
    return lowerList(llvm::cast<ast::ListExpr>(expr), scope);
  case ast::Expr::Kind::Call:
    return lowerCall(llvm::cast<ast::CallExpr>(expr), scope);
  case ast::Expr::Kind::Unary: {
    const auto &unary = llvm::cast<ast::UnaryExpr>(expr);
    return lowerNegation(lowerExpr(*unary.operand, scope), expr.getLoc());
  }
  case ast::Expr::Kind::Binary: {
    const auto &binary = llvm::cast<ast::BinaryExpr>(expr);
    ExprValue lhs = lowerExpr(*binary.lhs, scope);
    ExprValue rhs = lowerExpr(*binary.rhs, scope);
    return lowerArithmetic(binary.op, lhs, rhs, expr.getLoc(),
                           std::string("'") + binary.op + "'");
  }
  }
  return ExprValue::invalid();
}

//===----------------------------------------------------------------------===//
// Names and calls
//===----------------------------------------------------------------------===//

ExprValue Lowering::lowerName(const ast::NameExpr &expr, Scope &scope) {
  StringRef name = expr.name;
  if (Binding *binding = lookupBinding(scope, name))
    return binding->value.isInvalid() ? ExprValue::invalid()
                                      : binding->value.at(expr.getLoc());
  if (name == "batch") {
    if (batch)
      return ExprValue::number(Number::integer(*batch), expr.getLoc());
    error(expr.getLoc()) << "'batch' cannot be used here: configs and the "
                            "train clause are evaluated before the batch size "
                            "is known";
    return ExprValue::invalid();
  }
  if (name == "true" || name == "false")
    return ExprValue::boolean(name == "true", expr.getLoc());
  reportUnknownName(name, expr.getLoc(), scope);
  return ExprValue::invalid();
}

void Lowering::reportUnknownName(StringRef name, SMLoc loc, Scope &scope) {
  mlir::InFlightDiagnostic diag = error(loc);
  if (blocks.count(name)) {
    diag << "'" << name << "' is a block; call it with arguments: " << name
         << "(…)";
    return;
  }
  if (findBuiltin(name)) {
    diag << "'" << name << "' is a builtin function; call it with arguments: "
         << name << "(…)";
    return;
  }
  diag << "unknown name '" << name << "'";
  bool seesModel = false;
  std::vector<StringRef> visible = {"batch"};
  for (Scope *s = &scope; s; s = s->parent) {
    seesModel = seesModel || s == modelScope;
    for (const auto &entry : s->bindings)
      visible.push_back(entry.getKey());
  }
  for (const auto &entry : globals.bindings)
    visible.push_back(entry.getKey());
  if (!seesModel && modelScope && modelScope->bindings.count(name)) {
    diag << "; a block sees only its arguments, its own definitions and the "
            "configs";
    return;
  }
  if (auto it = repeatLocals.find(name); it != repeatLocals.end()) {
    diag << "; names first defined in a repeat body are local to one "
            "iteration";
    diag.attachNote(getLoc(it->second)) << "'" << name << "' is defined here";
    return;
  }
  // Sorted, so that a tie between two suggestions is settled the same way
  // every time.
  llvm::sort(visible);
  if (std::optional<StringRef> close = findClosestName(name, visible))
    diag << "; did you mean '" << *close << "'?";
}

// A list of numbers, or of tensors (concat's argument) when its first valid
// element is a tensor; the other elements must be of that one's kind.
ExprValue Lowering::lowerList(const ast::ListExpr &expr, Scope &scope) {
  std::vector<ListItem> items;
  std::vector<ExprValue> tensors;
  bool ok = true, ofTensors = false, kindKnown = false;
  for (const ast::ExprPtr &element : expr.elements) {
    ExprValue value = lowerExpr(*element, scope);
    if (!kindKnown && !value.isInvalid()) {
      ofTensors = value.isTensor();
      kindKnown = true;
    }
    if (!ofTensors && value.is(ExprValue::Kind::Number)) {
      items.push_back({value.getNumber(), element->getLoc()});
      continue;
    }
    if (ofTensors && value.isTensor()) {
      tensors.push_back(value);
      continue;
    }
    if (!value.isInvalid())
      error(element->getLoc())
          << (ofTensors ? "list elements must all be tensors (as in "
                          "concat([a, b], axis)), got "
                        : "list elements must be numbers, got ")
          << value.describe();
    ok = false;
  }
  if (!ok)
    return ExprValue::invalid();
  if (ofTensors)
    return ExprValue::tensorList(std::move(tensors), expr.getLoc());
  return ExprValue::list(std::move(items), expr.getLoc());
}

ExprValue Lowering::lowerCall(const ast::CallExpr &call, Scope &scope) {
  // The arguments' own errors are worth reporting whatever the callee is.
  llvm::SmallVector<ExprValue> values;
  for (size_t position = 0; position < call.args.size(); ++position) {
    const ast::Argument &arg = call.args[position];
    // cast(x, f32) / cast(x, to = f32) / cast(to = f32, x = v): the argument
    // for `to` (second by position, or by keyword), a bare name that is no
    // binding, is a type name, passed as its text (lowerCast says which ones
    // it takes).
    auto *name = llvm::dyn_cast<ast::NameExpr>(arg.value.get());
    bool typeParam = call.callee == "cast" &&
                     (arg.keyword.empty() ? position == 1 : arg.keyword == "to");
    if (typeParam && name && name->name != "batch" &&
        !lookupBinding(scope, name->name)) {
      values.push_back(ExprValue::string(name->name.str(), name->getLoc()));
      continue;
    }
    values.push_back(lowerExpr(*arg.value, scope));
  }

  const BuiltinSpec *builtin = findBuiltin(call.callee);
  auto blockIt = blocks.find(call.callee);
  if (!builtin && blockIt == blocks.end()) {
    reportUnknownFunction(call, scope);
    return ExprValue::invalid();
  }
  Signature signature =
      builtin ? Signature{call.callee, builtin->params}
              : Signature{call.callee, blockIt->second.params};
  std::optional<llvm::SmallVector<int>> bound = bindArguments(
      signature, call.args, call.getLoc(),
      [this](SMLoc loc) { return error(loc); }, diagnostics);
  if (!bound)
    return ExprValue::invalid();
  llvm::SmallVector<ExprValue> args;
  for (int index : *bound)
    args.push_back(index < 0 ? ExprValue::absent() : values[index]);
  if (llvm::any_of(args, [](const ExprValue &v) { return v.isInvalid(); }))
    return ExprValue::invalid();
  if (builtin)
    return lowerBuiltin(*builtin, call, args);
  return callBlock(blockIt->second, call, args);
}

void Lowering::reportUnknownFunction(const ast::CallExpr &call, Scope &scope) {
  StringRef name = call.callee;
  mlir::InFlightDiagnostic diag = error(call.getLoc());
  if (Binding *binding = lookupBinding(scope, name)) {
    diag << "'" << name << "' is a "
         << (binding->kind == Binding::Kind::Config ? "config" : "tensor")
         << ", not a function";
    return;
  }
  if (llvm::is_contained(getInitializerNames(), name)) {
    diag << "'" << name << "' is an initialiser; it is used as 'param NAME : "
         << "TYPE = " << name << "'";
    return;
  }
  diag << "unknown function '" << name << "'";
  std::vector<StringRef> known = getBuiltinNames();
  for (const BlockInfo *block : blockOrder)
    known.push_back(block->decl->name);
  if (std::optional<StringRef> close = findClosestName(name, known))
    diag << "; did you mean '" << *close << "'?";
  else
    diag << " (builtins: " << joinNames(getBuiltinNames()) << ")";
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

std::optional<Number> Lowering::foldArithmetic(char op, const Number &lhs,
                                               const Number &rhs, SMLoc loc) {
  if (lhs.exact && rhs.exact && op != '/') {
    std::optional<int64_t> result =
        op == '+'   ? llvm::checkedAdd(*lhs.exact, *rhs.exact)
        : op == '-' ? llvm::checkedSub(*lhs.exact, *rhs.exact)
                    : llvm::checkedMul(*lhs.exact, *rhs.exact);
    if (result)
      return Number::integer(*result);
    // On overflow the result continues as a float; where an integer is
    // needed, requireInteger reports that it does not fit int64.
  }
  double a = lhs.value, b = rhs.value, result = 0;
  switch (op) {
  case '+': result = a + b; break;
  case '-': result = a - b; break;
  case '*': result = a * b; break;
  case '/':
    if (b == 0) {
      error(loc) << "division by zero";
      return std::nullopt;
    }
    result = a / b;
    break;
  }
  if (!std::isfinite(result)) {
    error(loc) << "the result of " << lhs.str() << " " << op << " " << rhs.str()
               << " is out of range for f64";
    return std::nullopt;
  }
  return Number::real(result);
}

std::optional<Number> Lowering::evaluateNumber(const ast::Expr &expr,
                                               Scope &scope,
                                               const std::string &what) {
  ExprValue value = lowerExpr(expr, scope);
  if (value.isInvalid())
    return std::nullopt;
  if (!value.is(ExprValue::Kind::Number)) {
    error(expr.getLoc()) << what << " must be a number, got "
                         << value.describe();
    return std::nullopt;
  }
  return value.getNumber();
}

std::optional<int64_t> Lowering::evaluateInteger(const ast::Expr &expr,
                                                 Scope &scope,
                                                 const std::string &what,
                                                 int64_t min, int64_t max) {
  std::optional<Number> number = evaluateNumber(expr, scope, what);
  if (!number)
    return std::nullopt;
  return requireInteger(*number, expr.getLoc(), what, min, max);
}

std::optional<int64_t> Lowering::requireInteger(const Number &value, SMLoc loc,
                                                const std::string &what,
                                                int64_t min, int64_t max) {
  std::optional<int64_t> integer = value.asInteger();
  if (!integer) {
    if (std::isfinite(value.value) && value.value == std::trunc(value.value))
      error(loc) << what << " does not fit in int64, got " << value.str();
    else
      error(loc) << what << " must be an integer, got " << value.str();
    return std::nullopt;
  }
  if (*integer < min) {
    error(loc) << what << " must be at least " << min << ", got " << *integer;
    return std::nullopt;
  }
  if (*integer > max) {
    error(loc) << what << " must be at most " << max << ", got " << *integer;
    return std::nullopt;
  }
  return integer;
}

//===----------------------------------------------------------------------===//
// Tensor types
//===----------------------------------------------------------------------===//

std::optional<mlir::RankedTensorType>
Lowering::makeTensorType(llvm::ArrayRef<int64_t> shape, mlir::Type elementType,
                         SMLoc loc, StringRef what) {
  if (!countElements(shape)) {
    error(loc) << what << ": the result " << formatList(shape)
               << " would have more elements than int64 can count";
    return std::nullopt;
  }
  return mlir::RankedTensorType::get(shape, elementType);
}

std::optional<mlir::RankedTensorType>
Lowering::lowerTensorType(const ast::TensorTypeExpr &type, Scope &scope,
                          bool floatOnly, const std::string &owner) {
  mlir::Type element = llvm::StringSwitch<mlir::Type>(type.elementType)
                           .Case("f32", builder.getF32Type())
                           .Case("f64", builder.getF64Type())
                           .Case("i32", builder.getI32Type())
                           .Case("i1", builder.getI1Type())
                           .Default(mlir::Type());
  bool ok = true;
  if (!element) {
    mlir::InFlightDiagnostic diag = error(type.loc);
    diag << "unknown element type '" << type.elementType << "' for " << owner;
    if (std::optional<StringRef> close = findClosestName(
            type.elementType, {"f32", "f64", "i32", "i1"}))
      diag << "; did you mean '" << *close << "'?";
    diag << " (known: f32, f64, i32, i1)";
    ok = false;
  } else if (floatOnly && !llvm::isa<mlir::FloatType>(element)) {
    error(type.loc) << owner << " must have element type f32 or f64, got "
                    << type.elementType;
    ok = false;
  }
  llvm::SmallVector<int64_t> shape;
  for (const ast::ExprPtr &dim : type.dims) {
    std::optional<int64_t> extent =
        evaluateInteger(*dim, scope, "a dimension of " + owner, 1);
    ok = ok && extent;
    if (extent)
      shape.push_back(*extent);
  }
  if (!ok)
    return std::nullopt;
  if (!countElements(shape)) {
    error(type.loc) << owner << " has more elements than int64 can count: "
                    << formatList(shape);
    return std::nullopt;
  }
  return mlir::RankedTensorType::get(shape, element);
}

//===----------------------------------------------------------------------===//
// Operators
//===----------------------------------------------------------------------===//

mlir::Value Lowering::requireFloatTensor(const ExprValue &value,
                                         StringRef opName, StringRef what) {
  if (!value.isTensor()) {
    error(value.getLoc()) << opName << " expects a tensor for " << what
                          << ", got " << value.describe();
    return {};
  }
  mlir::RankedTensorType type = value.getTensorType();
  if (!llvm::isa<mlir::FloatType>(type.getElementType())) {
    error(value.getLoc()) << opName << " needs an f32 or f64 tensor for "
                          << what << ", got " << type;
    return {};
  }
  return value.getTensor();
}

mlir::Value Lowering::broadcastTo(mlir::Value value,
                                  mlir::RankedTensorType type, SMLoc loc) {
  if (value.getType() == type)
    return value;
  auto from = llvm::cast<mlir::RankedTensorType>(value.getType());
  return builder.create<BroadcastOp>(getLoc(loc), type, value,
                                     trailingAxes(from.getRank(), type.getRank()));
}

ExprValue Lowering::lowerNegation(const ExprValue &operand, SMLoc loc) {
  if (operand.isInvalid())
    return operand;
  if (operand.is(ExprValue::Kind::Number)) {
    const Number &n = operand.getNumber();
    if (n.exact)
      if (std::optional<int64_t> negated = llvm::checkedSub<int64_t>(0, *n.exact))
        return ExprValue::number(Number::integer(*negated), loc);
    return ExprValue::number(Number::real(-n.value), loc);
  }
  if (!operand.isTensor()) {
    error(operand.getLoc()) << "unary '-' needs a number or a tensor, got "
                            << operand.describe();
    return ExprValue::invalid();
  }
  mlir::Value tensor = requireFloatTensor(operand, "unary '-'", "its operand");
  if (!tensor)
    return ExprValue::invalid();
  auto scale = builder.create<ScaleOp>(getLoc(loc), tensor.getType(), tensor,
                                       builder.getF64FloatAttr(-1.0));
  return ExprValue::tensor(scale, loc);
}

namespace {
/// The language's infix operators that name an op of the table (`/` by a
/// number is a vouch.scale, and there is no tensor division).
const struct {
  char op;
  std::string_view mnemonic;
} kInfixOperators[] = {{'+', "add"}, {'-', "sub"}, {'*', "mul"}, {'/', "div"}};
} // namespace

std::optional<char> Lowering::infixOperatorOf(std::string_view mnemonic) {
  for (const auto &infix : kInfixOperators)
    if (infix.mnemonic == mnemonic)
      return infix.op;
  return std::nullopt;
}

/// True when both operands are numbers or tensors; otherwise reports the
/// first that is neither.
bool Lowering::numbersOrTensors(const ExprValue &lhs, const ExprValue &rhs,
                                StringRef opName) {
  for (const ExprValue *operand : {&lhs, &rhs}) {
    if (operand->is(ExprValue::Kind::Number) || operand->isTensor())
      continue;
    error(operand->getLoc()) << opName << " needs numbers or tensors, got "
                             << operand->describe();
    return false;
  }
  return true;
}

ExprValue Lowering::lowerArithmetic(char op, const ExprValue &lhs,
                                    const ExprValue &rhs, SMLoc loc,
                                    StringRef opName) {
  if (lhs.isInvalid() || rhs.isInvalid())
    return ExprValue::invalid();
  if (!numbersOrTensors(lhs, rhs, opName))
    return ExprValue::invalid();

  // number op number: folded.
  if (!lhs.isTensor() && !rhs.isTensor()) {
    std::optional<Number> result =
        foldArithmetic(op, lhs.getNumber(), rhs.getNumber(), loc);
    return result ? ExprValue::number(*result, loc) : ExprValue::invalid();
  }
  // tensor / number: a scale by its reciprocal. Anything else divided by a
  // tensor is vouch.div (a number becoming a filled tensor), below.
  if (op == '/' && !rhs.isTensor()) {
    mlir::Value tensor = requireFloatTensor(lhs, opName, "its left operand");
    if (!tensor)
      return ExprValue::invalid();
    double divisor = rhs.getNumber().value;
    if (divisor == 0 || !std::isfinite(1.0 / divisor)) {
      error(rhs.getLoc()) << "cannot divide by " << rhs.getNumber().str();
      return ExprValue::invalid();
    }
    auto scale = builder.create<ScaleOp>(getLoc(loc), tensor.getType(), tensor,
                                         builder.getF64FloatAttr(1.0 / divisor));
    return ExprValue::tensor(scale, loc);
  }
  // tensor * number, number * tensor: a scale.
  if (op == '*' && (!lhs.isTensor() || !rhs.isTensor())) {
    bool tensorOnLeft = lhs.isTensor();
    mlir::Value tensor =
        requireFloatTensor(tensorOnLeft ? lhs : rhs, opName,
                           tensorOnLeft ? "its left operand" : "its right operand");
    if (!tensor)
      return ExprValue::invalid();
    double factor = (tensorOnLeft ? rhs : lhs).getNumber().value;
    return ExprValue::tensor(
        builder.create<ScaleOp>(getLoc(loc), tensor.getType(), tensor,
                                builder.getF64FloatAttr(factor)),
        loc);
  }
  const auto *infix = llvm::find_if(
      kInfixOperators, [&](const auto &entry) { return entry.op == op; });
  return lowerBinaryOp(*findOpFacts(infix->mnemonic), lhs, rhs, loc, opName);
}

ExprValue Lowering::lowerBinaryOp(const OpFacts &op, const ExprValue &lhs,
                                  const ExprValue &rhs, SMLoc loc,
                                  StringRef opName) {
  if (lhs.isInvalid() || rhs.isInvalid())
    return ExprValue::invalid();
  StringRef lhsWhat = "its left operand", rhsWhat = "its right operand";
  if (!numbersOrTensors(lhs, rhs, opName))
    return ExprValue::invalid();
  if (!lhs.isTensor() && !rhs.isTensor()) {
    error(loc) << opName << " needs a tensor operand, got two numbers";
    return ExprValue::invalid();
  }

  // tensor op number, number op tensor: the number becomes a filled tensor
  // of the other side's type.
  if (!lhs.isTensor() || !rhs.isTensor()) {
    bool tensorOnLeft = lhs.isTensor();
    const ExprValue &number = tensorOnLeft ? rhs : lhs;
    mlir::Value tensor = requireFloatTensor(tensorOnLeft ? lhs : rhs, opName,
                                            tensorOnLeft ? lhsWhat : rhsWhat);
    if (!tensor)
      return ExprValue::invalid();
    mlir::Value fill = builder.create<FillOp>(
        getLoc(number.getLoc()), tensor.getType(),
        builder.getF64FloatAttr(number.getNumber().value));
    mlir::Value left = tensorOnLeft ? tensor : fill;
    mlir::Value right = tensorOnLeft ? fill : tensor;
    return ExprValue::tensor(
        buildOp(op, loc, {left, right}, tensor.getType()), loc);
  }

  // tensor op tensor, broadcast NumPy-style to one shape, then the op's
  // shape rule (which also wants one element type).
  mlir::Value a = requireFloatTensor(lhs, opName, lhsWhat);
  mlir::Value b = requireFloatTensor(rhs, opName, rhsWhat);
  if (!a || !b)
    return ExprValue::invalid();
  auto at = llvm::cast<mlir::RankedTensorType>(a.getType());
  auto bt = llvm::cast<mlir::RankedTensorType>(b.getType());
  BroadcastResult shape = broadcastShapes(at.getShape(), bt.getShape());
  if (!shape.ok) {
    int64_t axis = shape.conflictAxis;
    error(loc) << opName << ": incompatible shapes " << at << " and " << bt
               << " (extents " << at.getDimSize(at.getRank() + axis) << " and "
               << bt.getDimSize(bt.getRank() + axis) << " at axis " << axis
               << " are neither equal nor 1)";
    return ExprValue::invalid();
  }
  mlir::RankedTensorType type = checkShapeRule(
      inferPointwiseType(
          {mlir::RankedTensorType::get(shape.shape, at.getElementType()),
           mlir::RankedTensorType::get(shape.shape, bt.getElementType())}),
      opName, loc);
  if (!type ||
      !makeTensorType(shape.shape, at.getElementType(), loc, opName))
    return ExprValue::invalid();
  a = broadcastTo(a, type, loc);
  b = broadcastTo(b, type, loc);
  return ExprValue::tensor(buildOp(op, loc, {a, b}, type), loc);
}
