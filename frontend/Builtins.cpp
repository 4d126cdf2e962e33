//===- Builtins.cpp - the builtin functions and their shape rules ---------===//
//
// One method per builtin. Each checks its operands the way the op's verifier
// would, but at the call and in the user's terms (the op, its operands'
// shapes, what was expected), then builds the op. The verifier stays the
// second line of defence: importModel verifies the module it returns.
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "frontend/Lowering.h"
#include "frontend/Shapes.h"
#include "ir/VouchOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace vouch;
using namespace vouch::frontend;
using llvm::SMLoc;
using llvm::StringRef;

llvm::ArrayRef<Lowering::BuiltinSpec> Lowering::getBuiltins() {
  static const ParamSpec unary[] = {{"x"}};
  static const ParamSpec binary[] = {{"lhs"}, {"rhs"}};
  static const ParamSpec linear[] = {{"input"}, {"weight"}, {"bias", "none"}};
  static const ParamSpec matmul[] = {{"lhs"},
                                     {"rhs"},
                                     {"transpose_lhs", "false"},
                                     {"transpose_rhs", "false"}};
  static const ParamSpec scale[] = {{"x"}, {"factor"}};
  static const ParamSpec shaped[] = {{"x"}, {"shape"}};
  static const ParamSpec permute[] = {{"x"}, {"perm"}};
  static const ParamSpec reduce[] = {{"x"}, {"axes", "all"}};
  static const ParamSpec mse[] = {{"prediction"}, {"target"}};
  static const BuiltinSpec builtins[] = {
      {"linear", linear, &Lowering::lowerLinear},
      {"matmul", matmul, &Lowering::lowerMatmul},
      {"relu", unary, &Lowering::lowerRelu},
      {"add", binary, &Lowering::lowerAdd},
      {"sub", binary, &Lowering::lowerSub},
      {"mul", binary, &Lowering::lowerMul},
      {"scale", scale, &Lowering::lowerScale},
      {"reshape", shaped, &Lowering::lowerReshape},
      {"permute", permute, &Lowering::lowerPermute},
      {"broadcast", shaped, &Lowering::lowerBroadcast},
      {"reduce_sum", reduce, &Lowering::lowerReduceSum},
      {"reduce_mean", reduce, &Lowering::lowerReduceMean},
      {"mse_loss", mse, &Lowering::lowerMseLoss},
  };
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

ExprValue Lowering::lowerBuiltin(const BuiltinSpec &spec,
                                 const ast::CallExpr &call,
                                 llvm::ArrayRef<ExprValue> args) {
  return (this->*spec.lower)(BuiltinCall{spec, call, args});
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
  error(value.getLoc()) << call.opName() << " expects a number for "
                        << call.paramName(index) << ", got "
                        << value.describe();
  return std::nullopt;
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

bool Lowering::checkSameElementType(const BuiltinCall &call, mlir::Value lhs,
                                    mlir::Value rhs) {
  auto lt = llvm::cast<mlir::RankedTensorType>(lhs.getType());
  auto rt = llvm::cast<mlir::RankedTensorType>(rhs.getType());
  if (lt.getElementType() == rt.getElementType())
    return true;
  error(call.getLoc()) << call.opName() << ": element types differ: " << lt
                       << " and " << rt;
  return false;
}

static mlir::RankedTensorType typeOf(mlir::Value value) {
  return llvm::cast<mlir::RankedTensorType>(value.getType());
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
  mlir::RankedTensorType xt = typeOf(x), wt = typeOf(w);
  if (wt.getRank() != 2) {
    error(call.getLoc()) << "'linear': the weight must be rank 2 [out, in], "
                            "got "
                         << wt;
    return ExprValue::invalid();
  }
  int64_t out = wt.getDimSize(0), in = wt.getDimSize(1);
  if (xt.getRank() < 1 || xt.getDimSize(xt.getRank() - 1) != in) {
    error(call.getLoc()) << "'linear': input " << xt << " does not match weight "
                         << wt << ": the input's last axis must have extent "
                         << in << " (the weight is [out, in])";
    return ExprValue::invalid();
  }
  if (b) {
    mlir::RankedTensorType bt = typeOf(b);
    if (bt.getRank() != 1 || bt.getDimSize(0) != out) {
      error(call.getLoc()) << "'linear': bias " << bt << " does not match weight "
                           << wt << ": expected [" << out << "]";
      return ExprValue::invalid();
    }
  }
  if (!checkSameElementType(call, x, w) || (b && !checkSameElementType(call, x, b)))
    return ExprValue::invalid();
  llvm::SmallVector<int64_t> shape(xt.getShape().drop_back());
  shape.push_back(out);
  std::optional<mlir::RankedTensorType> type =
      makeTensorType(shape, xt.getElementType(), call.getLoc(), "'linear'");
  if (!type)
    return ExprValue::invalid();
  auto op = builder.create<LinearOp>(getLoc(call.getLoc()), *type, x, w, b);
  return ExprValue::tensor(op, call.getLoc());
}

// matmul(lhs, rhs, transpose_lhs, transpose_rhs): op(lhs) [(B,) M, K] times
// op(rhs) [(B,) K, N], where op() transposes the last two axes when asked.
ExprValue Lowering::lowerMatmul(const BuiltinCall &call) {
  mlir::Value a = tensorArg(call, 0), b = tensorArg(call, 1);
  std::optional<bool> tl = boolArg(call, 2), tr = boolArg(call, 3);
  if (!a || !b || !tl || !tr)
    return ExprValue::invalid();
  mlir::RankedTensorType at = typeOf(a), bt = typeOf(b);
  int64_t rank = at.getRank();
  if (rank != bt.getRank() || rank < 2 || rank > 3) {
    error(call.getLoc()) << "'matmul' multiplies two rank-2 matrices or two "
                            "rank-3 batches of matrices, got "
                         << at << " and " << bt;
    return ExprValue::invalid();
  }
  if (rank == 3 && at.getDimSize(0) != bt.getDimSize(0)) {
    error(call.getLoc()) << "'matmul': batch extents differ: " << at << " and "
                         << bt;
    return ExprValue::invalid();
  }
  int64_t k1 = at.getDimSize(*tl ? rank - 2 : rank - 1);
  int64_t k2 = bt.getDimSize(*tr ? rank - 1 : rank - 2);
  if (k1 != k2) {
    error(call.getLoc()) << "'matmul': cannot multiply " << at
                         << (*tl ? " (transposed)" : "") << " by " << bt
                         << (*tr ? " (transposed)" : "")
                         << ": contraction extents " << k1 << " and " << k2
                         << " differ";
    return ExprValue::invalid();
  }
  if (!checkSameElementType(call, a, b))
    return ExprValue::invalid();
  llvm::SmallVector<int64_t> shape(at.getShape().drop_back(2));
  shape.push_back(at.getDimSize(*tl ? rank - 1 : rank - 2));
  shape.push_back(bt.getDimSize(*tr ? rank - 2 : rank - 1));
  std::optional<mlir::RankedTensorType> type =
      makeTensorType(shape, at.getElementType(), call.getLoc(), "'matmul'");
  if (!type)
    return ExprValue::invalid();
  auto op = builder.create<MatmulOp>(getLoc(call.getLoc()), *type, a, b, *tl,
                                     *tr);
  return ExprValue::tensor(op, call.getLoc());
}

//===----------------------------------------------------------------------===//
// Pointwise
//===----------------------------------------------------------------------===//

ExprValue Lowering::lowerRelu(const BuiltinCall &call) {
  mlir::Value x = tensorArg(call, 0);
  if (!x)
    return ExprValue::invalid();
  auto op = builder.create<ReluOp>(getLoc(call.getLoc()), x.getType(), x);
  return ExprValue::tensor(op, call.getLoc());
}

// add/sub/mul(a, b) are `a + b`, `a - b`, `a * b`, broadcasting included.
ExprValue Lowering::lowerAdd(const BuiltinCall &call) {
  return lowerArithmetic('+', call.args[0], call.args[1], call.getLoc(),
                         call.opName());
}
ExprValue Lowering::lowerSub(const BuiltinCall &call) {
  return lowerArithmetic('-', call.args[0], call.args[1], call.getLoc(),
                         call.opName());
}
ExprValue Lowering::lowerMul(const BuiltinCall &call) {
  return lowerArithmetic('*', call.args[0], call.args[1], call.getLoc(),
                         call.opName());
}

ExprValue Lowering::lowerScale(const BuiltinCall &call) {
  mlir::Value x = tensorArg(call, 0);
  std::optional<Number> factor = numberArg(call, 1);
  if (!x || !factor)
    return ExprValue::invalid();
  auto op = builder.create<ScaleOp>(getLoc(call.getLoc()), x.getType(), x,
                                    builder.getF64FloatAttr(factor->value));
  return ExprValue::tensor(op, call.getLoc());
}

//===----------------------------------------------------------------------===//
// Shape and layout
//===----------------------------------------------------------------------===//

// reshape(x, shape): one entry may be -1, inferred from the element count.
ExprValue Lowering::lowerReshape(const BuiltinCall &call) {
  mlir::Value x = tensorArg(call, 0);
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
      error(listLoc) << "'reshape': only one extent can be -1, got "
                     << formatShape(*shape);
      return ExprValue::invalid();
    }
    if (extent < 1) {
      error(listLoc) << "'reshape': extents must be at least 1 (or -1 to "
                        "infer one), got "
                     << formatShape(*shape);
      return ExprValue::invalid();
    }
    std::optional<int64_t> product = llvm::checkedMul(known, extent);
    if (!product) {
      error(listLoc) << "'reshape': " << formatShape(*shape)
                     << " has more elements than int64 can count";
      return ExprValue::invalid();
    }
    known = *product;
  }
  int64_t count = xt.getNumElements();
  if (inferred >= 0) {
    if (count % known != 0) {
      error(call.getLoc()) << "'reshape': cannot reshape " << xt << " ("
                           << count << " elements) to " << formatShape(*shape)
                           << ": " << count << " is not a multiple of "
                           << known;
      return ExprValue::invalid();
    }
    (*shape)[inferred] = count / known;
  } else if (known != count) {
    error(call.getLoc()) << "'reshape': cannot reshape " << xt << " (" << count
                         << " elements) to " << formatShape(*shape) << " ("
                         << known << " elements)";
    return ExprValue::invalid();
  }
  auto type = mlir::RankedTensorType::get(*shape, xt.getElementType());
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
  SMLoc listLoc = call.args[1].getLoc();
  if (static_cast<int64_t>(perm->size()) != rank) {
    error(listLoc) << "'permute': " << formatShape(*perm) << " has "
                   << perm->size() << " entries but " << xt << " has rank "
                   << rank;
    return ExprValue::invalid();
  }
  llvm::SmallVector<int64_t> axes, shape;
  llvm::SmallVector<bool> seen(rank, false);
  for (int64_t p : *perm) {
    std::optional<int64_t> axis = normalizeAxis(p, rank);
    if (!axis || seen[*axis]) {
      error(listLoc) << "'permute': " << formatShape(*perm)
                     << " is not a permutation of the axes of " << xt;
      return ExprValue::invalid();
    }
    seen[*axis] = true;
    axes.push_back(*axis);
    shape.push_back(xt.getDimSize(*axis));
  }
  bool identity = llvm::equal(axes, llvm::seq<int64_t>(0, rank));
  if (identity)
    return ExprValue::tensor(x, call.getLoc());
  auto type = mlir::RankedTensorType::get(shape, xt.getElementType());
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
    error(listLoc) << "'broadcast': extents must be at least 1, got "
                   << formatShape(*shape);
    return ExprValue::invalid();
  }
  int64_t rank = xt.getRank(), toRank = shape->size();
  if (toRank < rank) {
    error(call.getLoc()) << "'broadcast': cannot broadcast " << xt << " to "
                         << formatShape(*shape) << ": the target has fewer axes";
    return ExprValue::invalid();
  }
  for (int64_t i = 0; i < rank; ++i) {
    int64_t from = xt.getDimSize(i), to = (*shape)[toRank - rank + i];
    if (from != 1 && from != to) {
      error(call.getLoc()) << "'broadcast': cannot broadcast " << xt << " to "
                           << formatShape(*shape) << ": input axis " << i
                           << " has extent " << from << " but target axis "
                           << toRank - rank + i << " has " << to;
      return ExprValue::invalid();
    }
  }
  std::optional<mlir::RankedTensorType> type = makeTensorType(
      *shape, xt.getElementType(), call.getLoc(), "'broadcast'");
  if (!type)
    return ExprValue::invalid();
  return ExprValue::tensor(broadcastTo(x, *type, call.getLoc()), call.getLoc());
}

//===----------------------------------------------------------------------===//
// Reductions and losses
//===----------------------------------------------------------------------===//

ExprValue Lowering::lowerReduceSum(const BuiltinCall &call) {
  return lowerReduction(call, /*mean=*/false);
}
ExprValue Lowering::lowerReduceMean(const BuiltinCall &call) {
  return lowerReduction(call, /*mean=*/true);
}

// reduce_sum/reduce_mean(x, axes = all): the axes (a list or one number,
// negative ones counting from the end) are removed from the shape.
ExprValue Lowering::lowerReduction(const BuiltinCall &call, bool mean) {
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
                       << " is listed twice in " << formatShape(*given);
        return ExprValue::invalid();
      }
      axes.push_back(*axis);
    }
    llvm::sort(axes);
  }
  if (axes.empty())
    return ExprValue::tensor(x, call.getLoc());
  llvm::SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i)
    if (!llvm::is_contained(axes, i))
      shape.push_back(xt.getDimSize(i));
  auto type = mlir::RankedTensorType::get(shape, xt.getElementType());
  mlir::Location loc = getLoc(call.getLoc());
  mlir::Value result =
      mean ? builder.create<ReduceMeanOp>(loc, type, x, axes).getResult()
           : builder.create<ReduceSumOp>(loc, type, x, axes).getResult();
  return ExprValue::tensor(result, call.getLoc());
}

// mse_loss(prediction, target) -> a rank-0 tensor.
ExprValue Lowering::lowerMseLoss(const BuiltinCall &call) {
  mlir::Value p = tensorArg(call, 0), t = tensorArg(call, 1);
  if (!p || !t)
    return ExprValue::invalid();
  mlir::RankedTensorType pt = typeOf(p), tt = typeOf(t);
  if (pt.getShape() != tt.getShape()) {
    error(call.getLoc()) << "'mse_loss': prediction " << pt << " and target "
                         << tt << " must have the same shape";
    return ExprValue::invalid();
  }
  if (!checkSameElementType(call, p, t))
    return ExprValue::invalid();
  auto type = mlir::RankedTensorType::get({}, pt.getElementType());
  auto op = builder.create<MseLossOp>(getLoc(call.getLoc()), type, p, t);
  return ExprValue::tensor(op, call.getLoc());
}
