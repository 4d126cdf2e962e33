//===- Builtins.cpp - the builtin functions, from the op table ------------===//
//
// The builtins are the op table's rows with a builtin name (ir/OpTable.h,
// set in each op's ODS record): name and parameters come from there. Unary
// and binary pointwise builtins and reductions lower generically by family,
// building the op by its registered name, so a new op of these families
// needs no code here. Ops whose builtins take attributes or follow the
// language's own conventions (reshape's -1, broadcast's NumPy alignment)
// have a lowering of their own, listed in findLowering.
//
// Every lowering checks its operands with the op's shape rule (the one
// verify() uses, ir/VouchOps.cpp) before building the op, and reports a
// failure after the builtin's name, at the call; the verifier stays the
// second line of defence (importModel verifies the module it returns).
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <algorithm>
#include <cmath>
#include <sstream>

#include "frontend/Lowering.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "frontend/Shapes.h"
#include "ir/ConvGeometry.h"
#include "ir/VouchOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace vouch;
using namespace vouch::frontend;
using llvm::SMLoc;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// The builtins
//===----------------------------------------------------------------------===//

Lowering::BuiltinLowering Lowering::findLowering(const OpFacts &op,
                                                 size_t arity) {
  static const struct {
    std::string_view op;
    BuiltinLowering lower;
  } special[] = {
      {"linear", &Lowering::lowerLinear},
      {"matmul", &Lowering::lowerMatmul},
      {"reshape", &Lowering::lowerReshape},
      {"permute", &Lowering::lowerPermute},
      {"broadcast", &Lowering::lowerBroadcast},
      {"mse_loss", &Lowering::lowerMseLoss},
      {"cross_entropy", &Lowering::lowerCrossEntropy},
      {"gelu", &Lowering::lowerGelu},
      {"slice", &Lowering::lowerSlice},
      {"embedding", &Lowering::lowerEmbedding},
      {"gather", &Lowering::lowerGatherOrScatter},
      {"scatter_add", &Lowering::lowerGatherOrScatter},
      {"concat", &Lowering::lowerConcat},
      {"softmax", &Lowering::lowerSoftmax},
      {"log_softmax", &Lowering::lowerSoftmax},
      {"masked_softmax", &Lowering::lowerSoftmax},
      {"cast", &Lowering::lowerCast},
      {"layer_norm", &Lowering::lowerLayerNorm},
      {"batch_norm", &Lowering::lowerBatchNorm},
      {"dropout", &Lowering::lowerRandom},
      {"rand_uniform", &Lowering::lowerRandom},
      {"bernoulli_mask", &Lowering::lowerRandom},
      {"causal_mask", &Lowering::lowerCausalMask},
      {"scaled_dot_product_attention",
       &Lowering::lowerScaledDotProductAttention},
      {"conv", &Lowering::lowerConv},
      {"conv_transpose", &Lowering::lowerConv},
      {"max_pool", &Lowering::lowerPool},
      {"avg_pool", &Lowering::lowerPool},
      {"smooth_max_pool", &Lowering::lowerPool},
      {"flatten", &Lowering::lowerFlatten},
  };
  for (const auto &s : special)
    if (s.op == op.mnemonic)
      return s.lower;
  switch (op.family) {
  case OpFamily::Pointwise:
    return arity >= 1 ? &Lowering::lowerPointwise : nullptr;
  case OpFamily::Reduction:
    return &Lowering::lowerReduction;
  default:
    return nullptr;
  }
}

const std::vector<Lowering::BuiltinSpec> &Lowering::getBuiltins() {
  static const std::vector<BuiltinSpec> builtins = [] {
    std::vector<BuiltinSpec> out;
    for (const OpFacts &op : opTable()) {
      if (op.builtin.empty())
        continue;
      std::vector<ParamSpec> params;
      for (const SignatureParam &p : parseSignature(op.builtinParams))
        params.push_back({p.name, p.defaultText});
      // A row no lowering covers is no builtin; //frontend:frontend_test
      // fails on it (BuiltinsTest.cpp).
      if (BuiltinLowering lower = findLowering(op, params.size()))
        out.push_back({op.builtin, std::move(params), &op, lower});
    }
    return out;
  }();
  return builtins;
}

const Lowering::BuiltinSpec *Lowering::findBuiltin(StringRef name) {
  for (const BuiltinSpec &spec : getBuiltins())
    if (spec.name == name)
      return &spec;
  return nullptr;
}

std::vector<StringRef> Lowering::getBuiltinNames() {
  std::vector<StringRef> names;
  for (const BuiltinSpec &spec : getBuiltins())
    names.push_back(spec.name);
  return names;
}

std::vector<StringRef> vouch::frontend::builtinFunctionNames() {
  return Lowering::getBuiltinNames();
}

ExprValue Lowering::lowerBuiltin(const BuiltinSpec &spec,
                                 const ast::CallExpr &call,
                                 llvm::ArrayRef<ExprValue> args) {
  return (this->*spec.lower)(BuiltinCall{spec, call, args});
}

mlir::Value Lowering::buildOp(const OpFacts &op, SMLoc loc,
                              mlir::ValueRange operands, mlir::Type resultType,
                              llvm::ArrayRef<mlir::NamedAttribute> attributes) {
  std::string name =
      (VouchDialect::getDialectNamespace() + "." + op.mnemonic).str();
  assert(mlir::OperationName(name, &context).isRegistered() &&
         "an op table row names an op the dialect does not register");
  mlir::OperationState state(getLoc(loc), name);
  state.addOperands(operands);
  state.addTypes(resultType);
  state.addAttributes(attributes);
  return builder.create(state)->getResult(0);
}

mlir::RankedTensorType Lowering::checkShapeRule(const InferredType &inferred,
                                                StringRef opName, SMLoc loc,
                                                llvm::ArrayRef<ExprValue> args) {
  if (inferred)
    return inferred.type;
  if (inferred.argument >= 0 &&
      static_cast<size_t>(inferred.argument) < args.size() &&
      !args[inferred.argument].is(ExprValue::Kind::Absent))
    loc = args[inferred.argument].getLoc();
  error(loc) << opName << (inferred.continuesName ? " " : ": ")
             << inferred.message;
  return {};
}

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

mlir::Value Lowering::tensorArg(const BuiltinCall &call, unsigned index) {
  return requireFloatTensor(call.args[index], call.opName(),
                            call.paramName(index));
}

std::optional<Number> Lowering::numberArg(const BuiltinCall &call,
                                          unsigned index) {
  const ExprValue &value = call.args[index];
  if (value.is(ExprValue::Kind::Number))
    return value.getNumber();
  // Left out: the signature's default as the op table writes it ("beta = 1").
  double defaultValue = 0;
  if (value.is(ExprValue::Kind::Absent) &&
      !call.spec.params[index].defaultText.getAsDouble(defaultValue))
    return Number::real(defaultValue);
  error(value.getLoc()) << call.opName() << " expects a number for "
                        << call.paramName(index) << ", got "
                        << value.describe();
  return std::nullopt;
}

std::optional<Number> Lowering::epsArg(const BuiltinCall &call,
                                       unsigned index) {
  std::optional<Number> eps = numberArg(call, index);
  if (eps && (!std::isfinite(eps->value) || eps->value < 0)) {
    error(call.argLoc(index)) << call.opName()
                              << ": eps must be a finite number ≥ 0, got "
                              << eps->str();
    return std::nullopt;
  }
  return eps;
}

std::optional<bool> Lowering::boolArg(const BuiltinCall &call, unsigned index) {
  const ExprValue &value = call.args[index];
  if (value.is(ExprValue::Kind::Absent))
    return false;
  if (value.is(ExprValue::Kind::Bool))
    return value.getBool();
  error(value.getLoc()) << call.opName() << " expects true or false for "
                        << call.paramName(index) << ", got "
                        << value.describe();
  return std::nullopt;
}

std::optional<llvm::SmallVector<int64_t>>
Lowering::integerListArg(const BuiltinCall &call, unsigned index,
                         bool allowScalar) {
  const ExprValue &value = call.args[index];
  std::string what = "an entry of " + call.paramName(index) + " of " +
                     call.opName();
  llvm::SmallVector<int64_t> result;
  if (allowScalar && value.is(ExprValue::Kind::Number)) {
    std::optional<int64_t> integer =
        requireInteger(value.getNumber(), value.getLoc(), what, INT64_MIN);
    if (!integer)
      return std::nullopt;
    result.push_back(*integer);
    return result;
  }
  if (!value.is(ExprValue::Kind::List)) {
    error(value.getLoc()) << call.opName() << " expects a list such as [1, 2] "
                          << "for " << call.paramName(index) << ", got "
                          << value.describe();
    return std::nullopt;
  }
  bool ok = true;
  for (const ListItem &item : value.getList()) {
    std::optional<int64_t> integer =
        requireInteger(item.number, item.loc, what, INT64_MIN);
    ok = ok && integer;
    if (integer)
      result.push_back(*integer);
  }
  if (!ok)
    return std::nullopt;
  return result;
}

std::optional<int64_t> Lowering::integerArg(const BuiltinCall &call,
                                            unsigned index) {
  std::optional<Number> number = numberArg(call, index);
  if (!number)
    return std::nullopt;
  SMLoc loc = call.args[index].is(ExprValue::Kind::Absent)
                  ? call.getLoc()
                  : call.args[index].getLoc();
  return requireInteger(*number, loc,
                        call.paramName(index) + " of " + call.opName(),
                        INT64_MIN);
}

mlir::Value Lowering::anyTensorArg(const BuiltinCall &call, unsigned index) {
  const ExprValue &arg = call.args[index];
  if (arg.isTensor())
    return arg.getTensor();
  error(arg.getLoc()) << call.opName() << " expects a tensor for "
                      << call.paramName(index) << ", got " << arg.describe();
  return {};
}

mlir::Value Lowering::maskArg(const BuiltinCall &call, unsigned index) {
  const ExprValue &arg = call.args[index];
  if (arg.isTensor() && arg.getTensorType().getElementType().isInteger(1))
    return arg.getTensor();
  mlir::InFlightDiagnostic diag = error(arg.getLoc());
  diag << call.opName() << " needs an i1 tensor for " << call.paramName(index)
       << ", got ";
  if (arg.isTensor())
    diag << arg.getTensorType()
         << " (declare it as i1, e.g. `input mask : i1[batch, 8]`)";
  else
    diag << arg.describe();
  return {};
}

static mlir::RankedTensorType typeOf(mlir::Value value) {
  return llvm::cast<mlir::RankedTensorType>(value.getType());
}

//===----------------------------------------------------------------------===//
// Generic lowerings, by family
//===----------------------------------------------------------------------===//

// f(tensors..., numbers...) for a pointwise op. A parameter named like one
// of the op's attributes (its ODS record) is a number, which becomes that
// F64 attribute; the others are tensors. One tensor and numbers: the
// result has x's shape (scale, softplus, clamp, ...). Two tensors: NumPy
// broadcasting, and an op with an infix operator lowers as `a + b` does.
ExprValue Lowering::lowerPointwise(const BuiltinCall &call) {
  const OpFacts &op = *call.spec.op;
  mlir::OperationName name(
      (VouchDialect::getDialectNamespace() + "." + op.mnemonic).str(), &context);
  auto isNumber = [&](unsigned i) {
    return llvm::any_of(name.getAttributeNames(), [&](mlir::StringAttr attr) {
      return attr.getValue() == call.spec.params[i].name;
    });
  };
  unsigned tensors = 0;
  while (tensors < call.args.size() && !isNumber(tensors))
    ++tensors;
  if (tensors == 2 && call.args.size() == 2) {
    if (std::optional<char> infix = infixOperatorOf(op.mnemonic))
      return lowerArithmetic(*infix, call.args[0], call.args[1], call.getLoc(),
                             call.opName());
    return lowerBinaryOp(op, call.args[0], call.args[1], call.getLoc(),
                         call.opName());
  }
  assert(tensors == 1 && "a pointwise builtin takes one tensor and numbers, "
                         "or two tensors");
  mlir::Value x = tensorArg(call, 0);
  llvm::SmallVector<mlir::NamedAttribute> attributes;
  bool numbers = true;
  for (unsigned i = 1; i < call.args.size(); ++i) {
    std::optional<Number> value = numberArg(call, i);
    numbers &= value.has_value();
    if (value)
      attributes.push_back(builder.getNamedAttr(
          call.spec.params[i].name, builder.getF64FloatAttr(value->value)));
  }
  if (!x || !numbers)
    return ExprValue::invalid();
  mlir::RankedTensorType type =
      checkShapeRule(call, inferPointwiseType({typeOf(x)}));
  if (!type)
    return ExprValue::invalid();
  mlir::Value result = buildOp(op, call.getLoc(), {x}, type, attributes);
  if (attributes.empty())
    return ExprValue::tensor(result, call.getLoc());
  // The op's verifier checks its numbers' ranges (clamp's min ≤ max, ...):
  // a failure is the builtin's error at the call, like any argument error.
  // (Ops without numbers are verified once, with the module.)
  std::string why;
  mlir::LogicalResult verified = mlir::success();
  {
    mlir::ScopedDiagnosticHandler capture(&context, [&](mlir::Diagnostic &d) {
      if (why.empty())
        why = d.str();
      return mlir::success();
    });
    verified = mlir::verify(result.getDefiningOp());
  }
  if (mlir::failed(verified)) {
    result.getDefiningOp()->erase();
    size_t prefix = why.find(" op ");
    error(call.getLoc()) << call.opName() << ": "
                         << (prefix == std::string::npos ? why : why.substr(prefix + 4));
    return ExprValue::invalid();
  }
  return ExprValue::tensor(result, call.getLoc());
}

// f(x, axes = all) for a reduction: the axes (a list or one number,
// negative ones counting from the end) are removed from the shape.
ExprValue Lowering::lowerReduction(const BuiltinCall &call) {
  mlir::Value x = tensorArg(call, 0);
  if (!x)
    return ExprValue::invalid();
  mlir::RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();
  llvm::SmallVector<int64_t> axes;
  if (call.args[1].is(ExprValue::Kind::Absent)) {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  } else {
    std::optional<llvm::SmallVector<int64_t>> given =
        integerListArg(call, 1, /*allowScalar=*/true);
    if (!given)
      return ExprValue::invalid();
    SMLoc axesLoc = call.args[1].getLoc();
    for (int64_t a : *given) {
      std::optional<int64_t> axis = normalizeAxis(a, rank);
      if (!axis) {
        error(axesLoc) << call.opName() << ": axis " << a
                       << " is out of range for " << xt << " (rank " << rank
                       << ")";
        return ExprValue::invalid();
      }
      if (llvm::is_contained(axes, *axis)) {
        error(axesLoc) << call.opName() << ": axis " << a
                       << " is listed twice in " << formatList(*given);
        return ExprValue::invalid();
      }
      axes.push_back(*axis);
    }
    llvm::sort(axes);
  }
  if (axes.empty())
    return ExprValue::tensor(x, call.getLoc());
  mlir::RankedTensorType type =
      checkShapeRule(call, inferReductionType(xt, axes));
  if (!type)
    return ExprValue::invalid();
  mlir::Value result =
      buildOp(*call.spec.op, call.getLoc(), {x}, type,
              {builder.getNamedAttr("axes", builder.getDenseI64ArrayAttr(axes))});
  return ExprValue::tensor(result, call.getLoc());
}

//===----------------------------------------------------------------------===//
// Dense linear algebra
//===----------------------------------------------------------------------===//

// linear(input [..., in], weight [out, in], bias [out]) -> [..., out]
ExprValue Lowering::lowerLinear(const BuiltinCall &call) {
  bool hasBias = !call.args[2].is(ExprValue::Kind::Absent);
  mlir::Value x = tensorArg(call, 0), w = tensorArg(call, 1);
  mlir::Value b = hasBias ? tensorArg(call, 2) : mlir::Value();
  if (!x || !w || (hasBias && !b))
    return ExprValue::invalid();
  mlir::RankedTensorType type = checkShapeRule(
      call, LinearOp::inferResultType(typeOf(x), typeOf(w),
                                      b ? typeOf(b) : mlir::RankedTensorType()));
  if (!type || !makeTensorType(type.getShape(), type.getElementType(),
                               call.getLoc(), call.opName()))
    return ExprValue::invalid();
  auto op = builder.create<LinearOp>(getLoc(call.getLoc()), type, x, w, b);
  return ExprValue::tensor(op, call.getLoc());
}

// matmul(lhs, rhs, transpose_lhs, transpose_rhs): op(lhs) [..., M, K] times
// op(rhs) [..., K, N], where op() transposes the last two axes when asked;
// the leading (batch) axes broadcast as torch.matmul's. vouch.matmul takes
// each operand either with the result's batch axes or as one shared matrix of
// rank 2: an operand whose batch has a single entry is reshaped (a view) to
// its matrix, any other partial batch broadcast (a copy) to the full batch.
ExprValue Lowering::lowerMatmul(const BuiltinCall &call) {
  mlir::Value a = tensorArg(call, 0), b = tensorArg(call, 1);
  std::optional<bool> tl = boolArg(call, 2), tr = boolArg(call, 3);
  if (!a || !b || !tl || !tr)
    return ExprValue::invalid();
  mlir::RankedTensorType at = typeOf(a), bt = typeOf(b);
  // The broadcast batch axes (none for two matrices; a vector operand is left
  // to the shape rule's message).
  llvm::SmallVector<int64_t> batch;
  if (at.getRank() >= 2 && bt.getRank() >= 2) {
    llvm::ArrayRef<int64_t> ab = at.getShape().drop_back(2),
                            bb = bt.getShape().drop_back(2);
    BroadcastResult broadcast = broadcastShapes(ab, bb);
    if (!broadcast.ok) {
      int64_t axis = broadcast.conflictAxis;
      error(call.getLoc()) << "'matmul': batch axes of " << at << " and " << bt
                           << " do not broadcast (extents "
                           << ab[ab.size() + axis] << " and "
                           << bb[bb.size() + axis] << " at batch axis " << axis
                           << " are neither equal nor 1)";
      return ExprValue::invalid();
    }
    batch = broadcast.shape;
    // Each operand as vouch.matmul takes it (a batch of one entry: both
    // become matrices, and the product is reshaped to the batch's axes).
    auto shaped = [&](mlir::Value v, mlir::RankedTensorType t) -> mlir::Value {
      llvm::ArrayRef<int64_t> matrix = t.getShape().take_back(2);
      if (countElements(t.getShape().drop_back(2)) == 1) {
        if (t.getRank() == 2)
          return v;
        auto to = mlir::RankedTensorType::get(matrix, t.getElementType());
        return builder.create<ReshapeOp>(getLoc(call.getLoc()), to, v);
      }
      if (t.getShape().drop_back(2) == llvm::ArrayRef<int64_t>(batch))
        return v;
      llvm::SmallVector<int64_t> full(batch);
      full.append(matrix.begin(), matrix.end());
      return broadcastTo(v, mlir::RankedTensorType::get(full, t.getElementType()),
                         call.getLoc());
    };
    a = shaped(a, at);
    b = shaped(b, bt);
  }
  mlir::RankedTensorType type = checkShapeRule(
      call, MatmulOp::inferResultType(typeOf(a), typeOf(b), *tl, *tr));
  if (!type)
    return ExprValue::invalid();
  llvm::SmallVector<int64_t> full(batch);
  llvm::ArrayRef<int64_t> matrix = type.getShape().take_back(2);
  full.append(matrix.begin(), matrix.end());
  if (!makeTensorType(full, type.getElementType(), call.getLoc(), call.opName()))
    return ExprValue::invalid();
  mlir::Value product =
      builder.create<MatmulOp>(getLoc(call.getLoc()), type, a, b, *tl, *tr);
  if (type.getShape() != llvm::ArrayRef<int64_t>(full))
    product = builder.create<ReshapeOp>(
        getLoc(call.getLoc()),
        mlir::RankedTensorType::get(full, type.getElementType()), product);
  return ExprValue::tensor(product, call.getLoc());
}

//===----------------------------------------------------------------------===//
// Shape and layout
//===----------------------------------------------------------------------===//

// reshape(x, shape): one entry may be -1, inferred from the element count.
ExprValue Lowering::lowerReshape(const BuiltinCall &call) {
  mlir::Value x = anyTensorArg(call, 0);
  std::optional<llvm::SmallVector<int64_t>> shape =
      integerListArg(call, 1, /*allowScalar=*/false);
  if (!x || !shape)
    return ExprValue::invalid();
  mlir::RankedTensorType xt = typeOf(x);
  SMLoc listLoc = call.args[1].getLoc();
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape->size(); ++i) {
    int64_t extent = (*shape)[i];
    if (extent == -1 && inferred < 0) {
      inferred = static_cast<int>(i);
      continue;
    }
    if (extent == -1) {
      error(listLoc) << call.opName() << ": only one extent can be -1, got "
                     << formatList(*shape);
      return ExprValue::invalid();
    }
    if (extent < 1) {
      error(listLoc) << call.opName()
                     << ": extents must be at least 1 (or -1 to infer one), "
                        "got "
                     << formatList(*shape);
      return ExprValue::invalid();
    }
    std::optional<int64_t> product = llvm::checkedMul(known, extent);
    if (!product) {
      error(listLoc) << call.opName() << ": " << formatList(*shape)
                     << " has more elements than int64 can count";
      return ExprValue::invalid();
    }
    known = *product;
  }
  int64_t count = xt.getNumElements();
  if (inferred >= 0) {
    if (count % known != 0) {
      error(call.getLoc()) << call.opName() << ": cannot reshape " << xt
                           << " (" << count << " elements) to "
                           << formatList(*shape) << ": " << count
                           << " is not a multiple of " << known;
      return ExprValue::invalid();
    }
    (*shape)[inferred] = count / known;
  }
  mlir::RankedTensorType type =
      checkShapeRule(call, ReshapeOp::inferResultType(xt, *shape));
  if (!type)
    return ExprValue::invalid();
  if (type == xt)
    return ExprValue::tensor(x, call.getLoc());
  auto op = builder.create<ReshapeOp>(getLoc(call.getLoc()), type, x);
  return ExprValue::tensor(op, call.getLoc());
}

// permute(x, perm): result axis i is input axis perm[i]; perm may count
// from the end (-1 is the last axis).
ExprValue Lowering::lowerPermute(const BuiltinCall &call) {
  mlir::Value x = tensorArg(call, 0);
  std::optional<llvm::SmallVector<int64_t>> perm =
      integerListArg(call, 1, /*allowScalar=*/false);
  if (!x || !perm)
    return ExprValue::invalid();
  mlir::RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();
  // Negative entries count from the end; the rule rejects what is left
  // out of range, as well as repeats.
  llvm::SmallVector<int64_t> axes;
  for (int64_t p : *perm)
    axes.push_back(normalizeAxis(p, rank).value_or(p));
  mlir::RankedTensorType type =
      checkShapeRule(call, PermuteOp::inferResultType(xt, axes));
  if (!type)
    return ExprValue::invalid();
  if (llvm::equal(axes, llvm::seq<int64_t>(0, rank)))
    return ExprValue::tensor(x, call.getLoc());
  auto op = builder.create<PermuteOp>(getLoc(call.getLoc()), type, x, axes);
  return ExprValue::tensor(op, call.getLoc());
}

// broadcast(x, shape): NumPy alignment of x's axes with the trailing axes of
// `shape`; each extent of x is 1 or equal to its target's.
ExprValue Lowering::lowerBroadcast(const BuiltinCall &call) {
  mlir::Value x = tensorArg(call, 0);
  std::optional<llvm::SmallVector<int64_t>> shape =
      integerListArg(call, 1, /*allowScalar=*/false);
  if (!x || !shape)
    return ExprValue::invalid();
  mlir::RankedTensorType xt = typeOf(x);
  SMLoc listLoc = call.args[1].getLoc();
  if (llvm::any_of(*shape, [](int64_t extent) { return extent < 1; })) {
    error(listLoc) << call.opName() << ": extents must be at least 1, got "
                   << formatList(*shape);
    return ExprValue::invalid();
  }
  int64_t rank = xt.getRank(), toRank = shape->size();
  if (toRank < rank) {
    error(call.getLoc()) << call.opName() << ": cannot broadcast " << xt
                         << " to " << formatList(*shape)
                         << ": the target has fewer axes";
    return ExprValue::invalid();
  }
  mlir::RankedTensorType type = checkShapeRule(
      call,
      BroadcastOp::inferResultType(xt, *shape, trailingAxes(rank, toRank)));
  if (!type || !makeTensorType(*shape, xt.getElementType(), call.getLoc(),
                               call.opName()))
    return ExprValue::invalid();
  return ExprValue::tensor(broadcastTo(x, type, call.getLoc()), call.getLoc());
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

// cross_entropy(logits, labels, ignore_index = -100) -> a rank-0 tensor;
// labels are an i32 tensor (class indices).
ExprValue Lowering::lowerCrossEntropy(const BuiltinCall &call) {
  mlir::Value logits = tensorArg(call, 0);
  const ExprValue &labelArg = call.args[1];
  std::optional<int64_t> ignore = integerArg(call, 2);
  mlir::Value labels;
  if (!labelArg.isTensor()) {
    error(labelArg.getLoc()) << call.opName() << " expects a tensor for "
                             << call.paramName(1) << ", got "
                             << labelArg.describe();
  } else if (!labelArg.getTensorType().getElementType().isInteger(32)) {
    error(labelArg.getLoc())
        << call.opName() << " needs i32 class indices for "
        << call.paramName(1) << ", got " << labelArg.getTensorType()
        << " (declare the labels as i32, e.g. `target labels : i32[batch]`)";
  } else {
    labels = labelArg.getTensor();
  }
  if (!logits || !labels || !ignore)
    return ExprValue::invalid();
  if (*ignore < INT32_MIN || *ignore > INT32_MAX) {
    error(call.args[2].getLoc()) << call.opName()
                                 << ": ignore_index must fit in int32, got "
                                 << *ignore;
    return ExprValue::invalid();
  }
  mlir::RankedTensorType type = checkShapeRule(
      call, CrossEntropyOp::inferResultType(typeOf(logits), typeOf(labels)));
  if (!type)
    return ExprValue::invalid();
  auto op = builder.create<CrossEntropyOp>(getLoc(call.getLoc()), type, logits,
                                           labels,
                                           builder.getI64IntegerAttr(*ignore),
                                           mlir::IntegerAttr());
  return ExprValue::tensor(op, call.getLoc());
}

// mse_loss(prediction, target) -> a rank-0 tensor.
ExprValue Lowering::lowerMseLoss(const BuiltinCall &call) {
  mlir::Value p = tensorArg(call, 0), t = tensorArg(call, 1);
  if (!p || !t)
    return ExprValue::invalid();
  mlir::RankedTensorType type =
      checkShapeRule(call, MseLossOp::inferResultType(typeOf(p), typeOf(t)));
  if (!type)
    return ExprValue::invalid();
  auto op = builder.create<MseLossOp>(getLoc(call.getLoc()), type, p, t);
  return ExprValue::tensor(op, call.getLoc());
}

//===----------------------------------------------------------------------===//
// Activations with a mode
//===----------------------------------------------------------------------===//

// gelu(x, approximate = "tanh"): "tanh" or "none" (erf), as PyTorch spells
// them; the mode becomes the op's `approximate` attribute.
ExprValue Lowering::lowerGelu(const BuiltinCall &call) {
  mlir::Value x = tensorArg(call, 0);
  const ExprValue &mode = call.args[1];
  std::string approximate = "tanh";
  if (mode.is(ExprValue::Kind::String)) {
    approximate = mode.getString();
    if (approximate != "tanh" && approximate != "none") {
      error(mode.getLoc()) << call.opName() << ": " << call.paramName(1)
                           << " must be \"tanh\" or \"none\", got \""
                           << approximate << "\"";
      return ExprValue::invalid();
    }
  } else if (!mode.is(ExprValue::Kind::Absent)) {
    error(mode.getLoc()) << call.opName() << " expects \"tanh\" or \"none\" for "
                         << call.paramName(1) << ", got " << mode.describe();
    return ExprValue::invalid();
  }
  if (!x)
    return ExprValue::invalid();
  mlir::RankedTensorType type =
      checkShapeRule(call, inferPointwiseType({typeOf(x)}));
  if (!type)
    return ExprValue::invalid();
  auto op = builder.create<GeluOp>(getLoc(call.getLoc()), type, x,
                                   builder.getStringAttr(approximate));
  return ExprValue::tensor(op, call.getLoc());
}

//===----------------------------------------------------------------------===//
// Slices and joins
//===----------------------------------------------------------------------===//

// slice(x, axis, start, end, step = 1): Python's x[..., start:end:step, ...]
// on one axis. Negative bounds count from the end, then both are clamped to
// [0, extent]; the step is at least 1 and the slice must select something.
// The whole axis with step 1 is x itself (no op).
ExprValue Lowering::lowerSlice(const BuiltinCall &call) {
  mlir::Value x = tensorArg(call, 0);
  std::optional<int64_t> axis = integerArg(call, 1), start = integerArg(call, 2),
                         end = integerArg(call, 3), step = integerArg(call, 4);
  if (!x || !axis || !start || !end || !step)
    return ExprValue::invalid();
  mlir::RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();
  std::optional<int64_t> dim = normalizeAxis(*axis, rank);
  if (!dim) {
    error(call.args[1].getLoc()) << call.opName() << ": axis " << *axis
                                 << " is out of range for " << xt << " (rank "
                                 << rank << ")";
    return ExprValue::invalid();
  }
  if (*step < 1) {
    error(call.argLoc(4)) << call.opName() << ": step must be at least 1, got "
                          << *step;
    return ExprValue::invalid();
  }
  int64_t extent = xt.getDimSize(*dim);
  auto clamp = [&](int64_t bound) {
    if (bound < 0)
      bound = bound < -extent ? 0 : bound + extent;
    return std::min(bound, extent);
  };
  int64_t from = clamp(*start), to = clamp(*end);
  if (from >= to) {
    error(call.getLoc()) << call.opName() << ": " << *start << ":" << *end
                         << " selects no element of axis " << *axis
                         << " (extent " << extent << ") of " << xt
                         << " (start " << from << ", end " << to
                         << " after Python's rules)";
    return ExprValue::invalid();
  }
  mlir::RankedTensorType type =
      checkShapeRule(call, SliceOp::inferResultType(xt, *dim, from, to, *step));
  if (!type)
    return ExprValue::invalid();
  if (type == xt)
    return ExprValue::tensor(x, call.getLoc());
  auto op = builder.create<SliceOp>(getLoc(call.getLoc()), type, x, *dim, from,
                                    to, *step);
  return ExprValue::tensor(op, call.getLoc());
}

//===----------------------------------------------------------------------===//
// Lookups: embedding, gather, scatter_add
//===----------------------------------------------------------------------===//

// An i32 tensor argument (ids, an index); null after an error naming the op
// and what was given.
mlir::Value Lowering::intTensorArg(const BuiltinCall &call, unsigned index) {
  const ExprValue &arg = call.args[index];
  if (!arg.isTensor()) {
    error(arg.getLoc()) << call.opName() << " expects an i32 tensor for "
                        << call.paramName(index) << ", got " << arg.describe();
    return {};
  }
  if (!arg.getTensorType().getElementType().isInteger(32)) {
    error(arg.getLoc()) << call.opName() << " needs i32 indices for "
                        << call.paramName(index) << ", got "
                        << arg.getTensorType()
                        << " (declare them as i32, e.g. `input ids : "
                           "i32[batch, 4]`)";
    return {};
  }
  return arg.getTensor();
}

// embedding(ids, table): F.embedding; ids i32 of any shape, table [V, D].
ExprValue Lowering::lowerEmbedding(const BuiltinCall &call) {
  mlir::Value ids = intTensorArg(call, 0), table = tensorArg(call, 1);
  if (!ids || !table)
    return ExprValue::invalid();
  mlir::RankedTensorType type = checkShapeRule(
      call, EmbeddingOp::inferResultType(typeOf(ids), typeOf(table)));
  if (!type)
    return ExprValue::invalid();
  auto op = builder.create<EmbeddingOp>(getLoc(call.getLoc()), type, ids, table);
  return ExprValue::tensor(op, call.getLoc());
}

// gather(x, index, axis) and scatter_add(x, index, src, axis): torch's, the
// axis negative from the end of x's rank.
ExprValue Lowering::lowerGatherOrScatter(const BuiltinCall &call) {
  bool scatter = call.spec.params.size() == 4;
  unsigned axisArg = scatter ? 3 : 2;
  mlir::Value x = tensorArg(call, 0), index = intTensorArg(call, 1);
  mlir::Value src = scatter ? tensorArg(call, 2) : mlir::Value();
  std::optional<int64_t> axis = integerArg(call, axisArg);
  if (!x || !index || (scatter && !src) || !axis)
    return ExprValue::invalid();
  mlir::RankedTensorType xt = typeOf(x);
  std::optional<int64_t> dim = normalizeAxis(*axis, xt.getRank());
  if (!dim) {
    error(call.args[axisArg].getLoc())
        << call.opName() << ": axis " << *axis << " is out of range for " << xt
        << " (rank " << xt.getRank() << ")";
    return ExprValue::invalid();
  }
  mlir::RankedTensorType type = checkShapeRule(
      call, scatter ? ScatterAddOp::inferResultType(xt, typeOf(index),
                                                    typeOf(src), *dim)
                    : GatherOp::inferResultType(xt, typeOf(index), *dim));
  if (!type)
    return ExprValue::invalid();
  mlir::Location loc = getLoc(call.getLoc());
  if (scatter)
    return ExprValue::tensor(
        builder.create<ScatterAddOp>(loc, type, x, index, src, *dim),
        call.getLoc());
  return ExprValue::tensor(builder.create<GatherOp>(loc, type, x, index, *dim),
                           call.getLoc());
}

// concat([a, b, ...], axis): torch.cat. The tensors agree but on `axis`
// (negative counts from the end of their rank); one tensor is itself.
ExprValue Lowering::lowerConcat(const BuiltinCall &call) {
  const ExprValue &list = call.args[0];
  std::optional<int64_t> axis = integerArg(call, 1);
  if (!list.is(ExprValue::Kind::TensorList)) {
    if (list.is(ExprValue::Kind::List) && list.getList().empty())
      error(list.getLoc()) << call.opName() << " needs at least one tensor";
    else
      error(list.getLoc()) << call.opName()
                           << " expects a list of tensors such as [a, b] for "
                           << call.paramName(0) << ", got " << list.describe();
    return ExprValue::invalid();
  }
  llvm::SmallVector<mlir::Value> inputs;
  llvm::SmallVector<mlir::RankedTensorType> types;
  for (const ExprValue &element : list.getTensorList()) {
    mlir::Value v = requireFloatTensor(element, call.opName(),
                                       "an element of " + call.paramName(0));
    if (!v)
      return ExprValue::invalid();
    inputs.push_back(v);
    types.push_back(typeOf(v));
  }
  if (!axis)
    return ExprValue::invalid();
  int64_t rank = types.front().getRank();
  std::optional<int64_t> dim = normalizeAxis(*axis, rank);
  if (!dim) {
    error(call.args[1].getLoc()) << call.opName() << ": axis " << *axis
                                 << " is out of range for " << types.front()
                                 << " (rank " << rank << ")";
    return ExprValue::invalid();
  }
  mlir::RankedTensorType type =
      checkShapeRule(call, ConcatOp::inferResultType(types, *dim));
  if (!type)
    return ExprValue::invalid();
  if (inputs.size() == 1)
    return ExprValue::tensor(inputs.front(), call.getLoc());
  auto op = builder.create<ConcatOp>(getLoc(call.getLoc()), type, inputs, *dim);
  return ExprValue::tensor(op, call.getLoc());
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

// softmax(x, axis = -1), log_softmax(x, axis = -1), masked_softmax(x, mask,
// axis = -1): one axis, negative counting from the end, becomes the op's
// `axis` attribute; masked_softmax's mask is an i1 tensor broadcastable to x.
ExprValue Lowering::lowerSoftmax(const BuiltinCall &call) {
  bool masked = llvm::StringRef(call.spec.op->mnemonic) == "masked_softmax";
  unsigned axisArg = masked ? 2 : 1;
  mlir::Value x = tensorArg(call, 0), mask;
  if (masked) {
    mask = maskArg(call, 1);
    if (!mask)
      return ExprValue::invalid();
  }
  std::optional<int64_t> integer = integerArg(call, axisArg);
  if (!x || !integer)
    return ExprValue::invalid();
  SMLoc axisLoc = call.args[axisArg].is(ExprValue::Kind::Absent)
                      ? call.getLoc()
                      : call.args[axisArg].getLoc();
  mlir::RankedTensorType xt = typeOf(x);
  std::optional<int64_t> axis = normalizeAxis(*integer, xt.getRank());
  if (!axis) {
    error(axisLoc) << call.opName() << ": axis " << *integer
                   << " is out of range for " << xt << " (rank "
                   << xt.getRank() << ")";
    return ExprValue::invalid();
  }
  // softmax and log_softmax share the rule (SoftmaxOp's is LogSoftmaxOp's).
  mlir::RankedTensorType type = checkShapeRule(
      call, masked ? MaskedSoftmaxOp::inferResultType(xt, typeOf(mask), *axis)
                   : SoftmaxOp::inferResultType(xt, *axis));
  if (!type)
    return ExprValue::invalid();
  llvm::SmallVector<mlir::Value> operands{x};
  if (masked)
    operands.push_back(mask);
  mlir::Value result = buildOp(
      *call.spec.op, call.getLoc(), operands, type,
      {builder.getNamedAttr("axis", builder.getI64IntegerAttr(*axis))});
  return ExprValue::tensor(result, call.getLoc());
}

// layer_norm(x, weight = none, bias = none, eps = 1e-5) over x's last axis.
ExprValue Lowering::lowerLayerNorm(const BuiltinCall &call) {
  bool hasWeight = !call.args[1].is(ExprValue::Kind::Absent);
  bool hasBias = !call.args[2].is(ExprValue::Kind::Absent);
  mlir::Value x = tensorArg(call, 0);
  mlir::Value w = hasWeight ? tensorArg(call, 1) : mlir::Value();
  mlir::Value b = hasBias ? tensorArg(call, 2) : mlir::Value();
  std::optional<Number> eps = epsArg(call, 3);
  if (!x || (hasWeight && !w) || (hasBias && !b) || !eps)
    return ExprValue::invalid();
  mlir::RankedTensorType type = checkShapeRule(
      call, LayerNormOp::inferResultType(
                typeOf(x), w ? typeOf(w) : mlir::RankedTensorType(),
                b ? typeOf(b) : mlir::RankedTensorType()));
  if (!type)
    return ExprValue::invalid();
  auto op = builder.create<LayerNormOp>(getLoc(call.getLoc()), type, x, w, b,
                                        builder.getF64FloatAttr(eps->value));
  return ExprValue::tensor(op.getResult(), call.getLoc());
}

//===----------------------------------------------------------------------===//
// batch_norm: its running statistics as state
//===----------------------------------------------------------------------===//

// batch_norm(x, weight = none, bias = none, eps = 1e-5, momentum = 0.1). Its
// running statistics are two vouch.state values, named after the weight param
// (`<weight>.running_mean`, `<weight>.running_var`, the param's full name with
// its block prefix), else after the bias param, else by place
// (`<prefix>batch_norm.<k>.running_mean`, k counting this instance's
// batch_norms with neither). batch_norms naming the same param share them, as
// calls of one torch module do: each updates them in turn.
ExprValue Lowering::lowerBatchNorm(const BuiltinCall &call) {
  bool hasWeight = !call.args[1].is(ExprValue::Kind::Absent);
  bool hasBias = !call.args[2].is(ExprValue::Kind::Absent);
  mlir::Value x = tensorArg(call, 0);
  mlir::Value w = hasWeight ? tensorArg(call, 1) : mlir::Value();
  mlir::Value b = hasBias ? tensorArg(call, 2) : mlir::Value();
  std::optional<Number> eps = epsArg(call, 3);
  std::optional<Number> momentum = numberArg(call, 4);
  if (!x || (hasWeight && !w) || (hasBias && !b) || !eps || !momentum)
    return ExprValue::invalid();
  if (!(momentum->value >= 0 && momentum->value <= 1)) {
    error(call.argLoc(4)) << call.opName() << ": momentum must be a number in [0, 1], got "
                 << momentum->str();
    return ExprValue::invalid();
  }
  mlir::RankedTensorType type = checkShapeRule(
      call, BatchNormOp::inferResultType(
                typeOf(x), w ? typeOf(w) : mlir::RankedTensorType(),
                b ? typeOf(b) : mlir::RankedTensorType()));
  if (!type)
    return ExprValue::invalid();

  std::string base;
  for (mlir::Value v : {w, b})
    if (auto param = v ? v.getDefiningOp<ParamOp>() : ParamOp())
      if (base.empty())
        base = param.getName().str();
  if (base.empty())
    base = paramPrefix + "batch_norm." +
           std::to_string((*instanceCounters)["batch_norm"]++);
  mlir::Location loc = getLoc(call.getLoc());
  auto row = mlir::RankedTensorType::get({type.getDimSize(1)},
                                         type.getElementType());
  // The statistics of an earlier batch_norm on the same param, in this
  // model (a block lowered only to check it gets its own).
  RunningStats &stats = runningStats[base];
  if (stats.block != builder.getInsertionBlock()) {
    stats.block = builder.getInsertionBlock();
    stats.mean = builder.create<StateOp>(loc, row, base + ".running_mean",
                                         InitKind::Zeros);
    stats.var = builder.create<StateOp>(loc, row, base + ".running_var",
                                        InitKind::Ones);
  } else if (stats.mean.getType() != row) {
    // (A param has one shape, so only an element type can differ.)
    error(call.getLoc()) << call.opName() << ": the running statistics '"
                         << base << ".running_mean' are " << stats.mean.getType()
                         << ", this input's channels " << row;
    return ExprValue::invalid();
  }
  auto op = builder.create<BatchNormOp>(
      loc, mlir::TypeRange{type, row, row}, x, w, b, stats.mean, stats.var,
      builder.getF64FloatAttr(eps->value),
      builder.getF64FloatAttr(momentum->value));
  return ExprValue::tensor(op.getResult(), call.getLoc());
}

//===----------------------------------------------------------------------===//
// Random ops: dropout, rand_uniform, bernoulli_mask
//===----------------------------------------------------------------------===//

// dropout(x, p), rand_uniform(shape), bernoulli_mask(shape, p). Each gets the
// next ordinal among the model's random ops in program order (every repeat
// iteration and block instantiation its own), which keys its stream of
// runtime/cuda/kernels/counter_rng.h. A generator's element type is the
// model's real type (its first real input, target or param; f32 if none).
ExprValue Lowering::lowerRandom(const BuiltinCall &call) {
  llvm::StringRef name = call.spec.op->mnemonic;
  bool isDropout = name == "dropout";
  mlir::Value x;
  std::optional<llvm::SmallVector<int64_t>> shape;
  if (isDropout)
    x = tensorArg(call, 0);
  else
    shape = integerListArg(call, 0, /*allowScalar=*/false);
  double p = 0;
  bool hasP = name != "rand_uniform";
  if (hasP) {
    std::optional<Number> given = numberArg(call, 1);
    if (!given)
      return ExprValue::invalid();
    p = given->value;
    bool ok = isDropout ? (p >= 0.0 && p < 1.0) : (p >= 0.0 && p <= 1.0);
    if (!ok) {
      std::ostringstream shown; // 1.5, not 1.500000e+00
      shown << p;
      error(call.argLoc(1)) << call.opName() << ": p must be in "
                << (isDropout ? "[0, 1)" : "[0, 1]") << ", got " << shown.str();
      return ExprValue::invalid();
    }
  }
  if (isDropout ? !x : !shape)
    return ExprValue::invalid();
  mlir::Location loc = getLoc(call.getLoc());
  if (isDropout) {
    mlir::RankedTensorType type =
        checkShapeRule(call, inferPointwiseType({typeOf(x)}));
    if (!type)
      return ExprValue::invalid();
    // p = 0 keeps every element unscaled: x itself, no op and no ordinal.
    if (p == 0.0)
      return ExprValue::tensor(x, call.getLoc());
    auto op = builder.create<DropoutOp>(loc, type, x, builder.getF64FloatAttr(p),
                                        builder.getI64IntegerAttr(randomOrdinal++));
    return ExprValue::tensor(op, call.getLoc());
  }
  for (int64_t extent : *shape)
    if (extent < 1) {
      error(call.args[0].getLoc()) << call.opName()
                                   << ": extents must be at least 1, got "
                                   << formatList(*shape);
      return ExprValue::invalid();
    }
  mlir::Type element = builder.getF32Type();
  for (mlir::Operation &op : *builder.getInsertionBlock())
    if (llvm::isa<InputOp, TargetOp, ParamOp>(op))
      if (auto t = llvm::dyn_cast<mlir::RankedTensorType>(op.getResult(0).getType()))
        if (llvm::isa<mlir::FloatType>(t.getElementType())) {
          element = t.getElementType();
          break;
        }
  std::optional<mlir::RankedTensorType> type =
      makeTensorType(*shape, element, call.args[0].getLoc(), call.opName());
  if (!type)
    return ExprValue::invalid();
  mlir::Value result;
  if (name == "rand_uniform")
    result = builder.create<RandUniformOp>(loc, *type,
                                           builder.getI64IntegerAttr(randomOrdinal++));
  else
    result = builder.create<BernoulliMaskOp>(loc, *type, builder.getF64FloatAttr(p),
                                             builder.getI64IntegerAttr(randomOrdinal++));
  return ExprValue::tensor(result, call.getLoc());
}

// causal_mask(rows, columns): the i1 matrix true where column <= row.
ExprValue Lowering::lowerCausalMask(const BuiltinCall &call) {
  std::optional<int64_t> rows = integerArg(call, 0), columns = integerArg(call, 1);
  if (!rows || !columns)
    return ExprValue::invalid();
  for (unsigned i = 0; i < 2; ++i) {
    int64_t extent = i == 0 ? *rows : *columns;
    if (extent < 1) {
      error(call.args[i].getLoc()) << call.opName() << ": " << call.paramName(i)
                                   << " must be at least 1, got " << extent;
      return ExprValue::invalid();
    }
  }
  std::optional<mlir::RankedTensorType> type = makeTensorType(
      {*rows, *columns}, builder.getI1Type(), call.getLoc(), call.opName());
  if (!type)
    return ExprValue::invalid();
  auto op = builder.create<CausalMaskOp>(getLoc(call.getLoc()), *type);
  return ExprValue::tensor(op, call.getLoc());
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

// scaled_dot_product_attention(q, k, v, mask = none, causal = false,
// scale = none): torch's, with a boolean mask and hard-mask semantics; the
// scale defaults to 1/sqrt(D), D q's last extent.
ExprValue Lowering::lowerScaledDotProductAttention(const BuiltinCall &call) {
  mlir::Value q = tensorArg(call, 0), k = tensorArg(call, 1),
              v = tensorArg(call, 2);
  bool hasMask = !call.args[3].is(ExprValue::Kind::Absent);
  mlir::Value mask = hasMask ? maskArg(call, 3) : mlir::Value();
  std::optional<bool> causal = boolArg(call, 4);
  bool hasScale = !call.args[5].is(ExprValue::Kind::Absent);
  std::optional<Number> scale =
      hasScale ? numberArg(call, 5) : std::optional<Number>(Number::real(0));
  if (!q || !k || !v || (hasMask && !mask) || !causal || !scale)
    return ExprValue::invalid();
  if (hasMask && *causal) {
    error(call.args[4].getLoc())
        << call.opName() << " takes a mask or causal = true, not both (as "
        << "torch's is_causal with attn_mask): pass the combined mask";
    return ExprValue::invalid();
  }
  if (hasScale && !std::isfinite(scale->value)) {
    error(call.args[5].getLoc()) << call.opName()
                                 << ": scale must be a finite number, got "
                                 << scale->str();
    return ExprValue::invalid();
  }
  mlir::RankedTensorType type = checkShapeRule(
      call, ScaledDotProductAttentionOp::inferResultType(
                typeOf(q), typeOf(k), typeOf(v),
                mask ? typeOf(mask) : mlir::RankedTensorType()));
  if (!type)
    return ExprValue::invalid();
  double factor =
      hasScale ? scale->value
               : 1.0 / std::sqrt(static_cast<double>(
                           typeOf(q).getShape().back()));
  auto op = builder.create<ScaledDotProductAttentionOp>(
      getLoc(call.getLoc()), type, q, k, v, mask,
      *causal ? builder.getUnitAttr() : mlir::UnitAttr(),
      builder.getF64FloatAttr(factor));
  return ExprValue::tensor(op, call.getLoc());
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

// A window argument of the convolution and pooling builtins (kernel, stride,
// padding, dilation, output_padding): one number for every one of the
// `axes` spatial axes, or a list of one per axis; left out, `whenAbsent`, or
// (where that is empty) the signature's default number on every axis. `axes`
// 0: x's rank is wrong, which the shape rule reports; the list is taken as
// given. The shape rule checks the values.
std::optional<llvm::SmallVector<int64_t>>
Lowering::perSpatialAxisArg(const BuiltinCall &call, unsigned index, int64_t axes,
                            llvm::ArrayRef<int64_t> whenAbsent) {
  const ExprValue &value = call.args[index];
  double defaultValue = 0;
  if (value.is(ExprValue::Kind::Absent)) {
    if (!whenAbsent.empty())
      return llvm::SmallVector<int64_t>(whenAbsent);
    if (!call.spec.params[index].defaultText.getAsDouble(defaultValue))
      return llvm::SmallVector<int64_t>(std::max<int64_t>(axes, 1),
                                        static_cast<int64_t>(defaultValue));
  }
  std::optional<llvm::SmallVector<int64_t>> list =
      integerListArg(call, index, /*allowScalar=*/true);
  if (!list)
    return std::nullopt;
  if (value.is(ExprValue::Kind::Number))
    return llvm::SmallVector<int64_t>(std::max<int64_t>(axes, 1), list->front());
  if (axes > 0 && static_cast<int64_t>(list->size()) != axes) {
    error(value.getLoc()) << call.opName() << ": " << call.paramName(index)
                          << " " << formatList(*list) << " has "
                          << list->size()
                          << (list->size() == 1 ? " entry" : " entries")
                          << ", but x has " << axes << " spatial "
                          << (axes == 1 ? "axis" : "axes")
                          << " (give one number, or one per spatial axis)";
    return std::nullopt;
  }
  return list;
}

// conv(x, weight, bias = none, stride = 1, padding = 0, dilation = 1,
// groups = 1) and conv_transpose(x, weight, bias = none, stride = 1,
// padding = 0, output_padding = 0, dilation = 1, groups = 1): PyTorch's
// F.conv{1,2,3}d and F.conv_transpose{1,2,3}d; x [N, C, *spatial] sets the
// spatial axes a number expands to.
ExprValue Lowering::lowerConv(const BuiltinCall &call) {
  bool transposed = call.spec.params.size() == 8;
  unsigned strideArg = 3, paddingArg = 4, outputPaddingArg = 5,
           dilationArg = transposed ? 6 : 5, groupsArg = transposed ? 7 : 6;
  bool hasBias = !call.args[2].is(ExprValue::Kind::Absent);
  mlir::Value x = tensorArg(call, 0), w = tensorArg(call, 1);
  mlir::Value b = hasBias ? tensorArg(call, 2) : mlir::Value();
  std::optional<int64_t> groups = integerArg(call, groupsArg);
  if (!x || !w || (hasBias && !b) || !groups)
    return ExprValue::invalid();
  mlir::RankedTensorType xt = typeOf(x);
  // x's rank is the shape rule's to check (its message comes first): a list
  // is matched against the spatial axes only when x has 1 to 3 of them.
  int64_t axes = xt.getRank() - 2;
  if (axes < 1 || axes > kMaxConvSpatialAxes)
    axes = 0;
  auto stride = perSpatialAxisArg(call, strideArg, axes);
  auto padding = perSpatialAxisArg(call, paddingArg, axes);
  auto dilation = perSpatialAxisArg(call, dilationArg, axes);
  std::optional<llvm::SmallVector<int64_t>> outputPadding =
      transposed ? perSpatialAxisArg(call, outputPaddingArg, axes)
                 : llvm::SmallVector<int64_t>();
  if (!stride || !padding || !dilation || !outputPadding)
    return ExprValue::invalid();
  mlir::RankedTensorType bt = b ? typeOf(b) : mlir::RankedTensorType();
  mlir::RankedTensorType type = checkShapeRule(
      call, transposed
                ? ConvTransposeOp::inferResultType(xt, typeOf(w), bt, *stride,
                                                   *padding, *outputPadding,
                                                   *dilation, *groups)
                : ConvOp::inferResultType(xt, typeOf(w), bt, *stride, *padding,
                                          *dilation, *groups));
  if (!type || !makeTensorType(type.getShape(), type.getElementType(),
                               call.getLoc(), call.opName()))
    return ExprValue::invalid();
  mlir::Location loc = getLoc(call.getLoc());
  auto list = [&](llvm::ArrayRef<int64_t> v) {
    return builder.getDenseI64ArrayAttr(v);
  };
  mlir::Value result =
      transposed
          ? mlir::Value(builder.create<ConvTransposeOp>(
                loc, type, x, w, b, list(*stride), list(*padding),
                list(*outputPadding), list(*dilation),
                builder.getI64IntegerAttr(*groups)))
          : mlir::Value(builder.create<ConvOp>(
                loc, type, x, w, b, list(*stride), list(*padding),
                list(*dilation), builder.getI64IntegerAttr(*groups)));
  return ExprValue::tensor(result, call.getLoc());
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

// cast(x, f32|f64|i32): `to` is a bare type name, which lowerCall passes as
// its text; a cast to x's own type is x.
ExprValue Lowering::lowerCast(const BuiltinCall &call) {
  const ExprValue &x = call.args[0], &to = call.args[1];
  if (!anyTensorArg(call, 0))
    return ExprValue::invalid();
  mlir::Type element;
  if (to.is(ExprValue::Kind::String)) {
    if (to.getString() == "f32")
      element = builder.getF32Type();
    else if (to.getString() == "f64")
      element = builder.getF64Type();
    else if (to.getString() == "i32")
      element = builder.getIntegerType(32);
  }
  if (!element) {
    mlir::InFlightDiagnostic diag = error(to.getLoc());
    diag << call.opName() << " converts to f32, f64 or i32, written as a type "
         << "name (cast(x, f32)); got ";
    if (to.is(ExprValue::Kind::String))
      diag << to.getString();
    else
      diag << to.describe();
    return ExprValue::invalid();
  }
  mlir::RankedTensorType xt = x.getTensorType();
  mlir::RankedTensorType type =
      checkShapeRule(call, CastOp::inferResultType(xt, element));
  if (!type)
    return ExprValue::invalid();
  if (type == xt)
    return ExprValue::tensor(x.getTensor(), call.getLoc());
  auto op = builder.create<CastOp>(getLoc(call.getLoc()), type, x.getTensor());
  return ExprValue::tensor(op, call.getLoc());
}

//===----------------------------------------------------------------------===//
// Pooling and flatten
//===----------------------------------------------------------------------===//

// max_pool(x, kernel, stride = kernel, padding = 0), avg_pool(..., padding =
// 0, count_include_pad = true), smooth_max_pool(..., padding = 0, beta = 1):
// x [N, C, *spatial]; kernel, stride and padding a number (every spatial
// axis) or a list of one entry per spatial axis, checked by the pooling rule
// (ir/VouchOps.h's inferPoolType) before the op is built.
ExprValue Lowering::lowerPool(const BuiltinCall &call) {
  llvm::StringRef op(call.spec.op->mnemonic);
  mlir::Value x = tensorArg(call, 0);
  if (!x)
    return ExprValue::invalid();
  mlir::RankedTensorType xt = typeOf(x);
  if (xt.getRank() < 3 || xt.getRank() > 5) {
    checkShapeRule(call, inferPoolType(xt, {}, {}, {}));
    return ExprValue::invalid();
  }
  int64_t spatial = xt.getRank() - 2;
  auto kernel = perSpatialAxisArg(call, 1, spatial, {});
  if (!kernel)
    return ExprValue::invalid();
  auto stride = perSpatialAxisArg(call, 2, spatial, *kernel);
  auto padding = perSpatialAxisArg(call, 3, spatial,
                                   llvm::SmallVector<int64_t>(spatial, 0));
  if (!stride || !padding)
    return ExprValue::invalid();
  llvm::SmallVector<mlir::NamedAttribute> attributes = {
      builder.getNamedAttr("kernel", builder.getDenseI64ArrayAttr(*kernel)),
      builder.getNamedAttr("stride", builder.getDenseI64ArrayAttr(*stride)),
      builder.getNamedAttr("padding", builder.getDenseI64ArrayAttr(*padding))};
  if (op == "avg_pool") {
    // Left out: true, torch's default (boolArg's absent is false).
    std::optional<bool> include =
        call.args[4].is(ExprValue::Kind::Absent) ? true : boolArg(call, 4);
    if (!include)
      return ExprValue::invalid();
    if (*include)
      attributes.push_back(
          builder.getNamedAttr("count_include_pad", builder.getUnitAttr()));
  } else if (op == "smooth_max_pool") {
    std::optional<Number> beta = numberArg(call, 4);
    if (!beta)
      return ExprValue::invalid();
    if (!std::isfinite(beta->value) || beta->value == 0) {
      error(call.args[4].getLoc())
          << call.opName() << ": beta must be a finite non-zero number, got "
          << beta->str();
      return ExprValue::invalid();
    }
    attributes.push_back(
        builder.getNamedAttr("beta", builder.getF64FloatAttr(beta->value)));
  }
  mlir::RankedTensorType type =
      checkShapeRule(call, inferPoolType(xt, *kernel, *stride, *padding));
  if (!type)
    return ExprValue::invalid();
  return ExprValue::tensor(
      buildOp(*call.spec.op, call.getLoc(), {x}, type, attributes),
      call.getLoc());
}

// flatten(x, start_axis = 1): torch.flatten(x, start_axis), the axis negative
// from the end of x's rank; no op when nothing merges (the last axis).
ExprValue Lowering::lowerFlatten(const BuiltinCall &call) {
  mlir::Value x = anyTensorArg(call, 0);
  std::optional<int64_t> start = integerArg(call, 1);
  if (!x || !start)
    return ExprValue::invalid();
  mlir::RankedTensorType xt = typeOf(x);
  std::optional<int64_t> axis = normalizeAxis(*start, xt.getRank());
  if (!axis) {
    error(call.argLoc(1)) << call.opName() << ": start_axis " << *start << " is out of range for "
        << xt << " (rank " << xt.getRank() << ")";
    return ExprValue::invalid();
  }
  mlir::RankedTensorType type =
      checkShapeRule(call, FlattenOp::inferResultType(xt, *axis));
  if (!type)
    return ExprValue::invalid();
  if (type == xt)
    return ExprValue::tensor(x, call.getLoc());
  auto op = builder.create<FlattenOp>(getLoc(call.getLoc()), type, x,
                                      builder.getI64IntegerAttr(*axis));
  return ExprValue::tensor(op, call.getLoc());
}
