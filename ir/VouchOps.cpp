//===- VouchOps.cpp - shape rules, VJP rules and scalar formulas -*- C++ -*-===//
//
// One banner section per op (or op family). A section holds everything the
// compiler knows about the op's meaning: its shape rule (the one function
// both verify() and the frontend apply), its VJP rule and, for pointwise
// ops, its scalar formula (C/CUDA expression and float64 value). Kernel
// emitters look ops up by these interfaces; the facts other stages need
// without MLIR are the op table (ir/OpTable.h), set in the ODS record.
//
//===----------------------------------------------------------------------===//
#include "ir/VouchOps.h"

#include <cmath>
#include <sstream>
#include <cstdio>
#include <limits>
#include <optional>

#include "ir/ClauseTable.h"
#include "ir/ConvGeometry.h"
#include "ir/GemmDims.h"
#include "ir/OpTable.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace vouch;

#include "ir/VouchInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

bool vouch::isStructuralOp(OperationName name) {
  if (!name.isRegistered() ||
      name.getDialectNamespace() != VouchDialect::getDialectNamespace())
    return false;
  const OpFacts *facts = findOpFacts(name.stripDialect());
  return facts && facts->isStructural();
}

int64_t vouch::getNumElements(Type type) {
  return cast<RankedTensorType>(type).getNumElements();
}

static RankedTensorType tensorOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

static RankedTensorType tensorLike(RankedTensorType like,
                                   ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, like.getElementType());
}

InferredType InferredType::failure(std::string message, int argument,
                                   bool continuesName) {
  InferredType failed{RankedTensorType()};
  failed.message = std::move(message);
  failed.argument = argument;
  failed.continuesName = continuesName;
  return failed;
}

std::string vouch::quoted(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "'" << type << "'";
  return text;
}

std::string vouch::formatList(ArrayRef<int64_t> values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

LogicalResult vouch::verifyInferredType(Operation *op,
                                        const InferredType &inferred) {
  if (!inferred)
    return op->emitOpError(inferred.message);
  Type declared = op->getResult(0).getType();
  if (declared != inferred.type)
    return op->emitOpError("result ")
           << declared << " differs from the inferred " << inferred.type;
  return success();
}

/// Whether `result` is an op's bf16Result (ir/VouchBase.td) stored as bf16:
/// the shape of `f32Type`, the type it has otherwise, in bf16.
static bool storedAsBf16(RankedTensorType result, RankedTensorType f32Type) {
  return f32Type.getElementType().isF32() && result.getElementType().isBF16() &&
         result.getShape() == f32Type.getShape();
}

/// The first operand whose element type differs from the first one's, as a
/// failed rule; nothing when they agree (null types are skipped).
static std::optional<InferredType>
differingElementTypes(ArrayRef<RankedTensorType> types) {
  for (RankedTensorType t : types.drop_front())
    if (t && t.getElementType() != types.front().getElementType())
      return InferredType::failure("element types differ: " +
                                   quoted(types.front()) + " and " +
                                   quoted(t));
  return std::nullopt;
}

/// A product's operand element type as the product reads it: a bf16 operand
/// (vouch.round_bf16's, under bf16 products) stands for the f32 value it was
/// rounded from, so f32 and bf16 operands mix and the result is f32.
static Type productElementType(Type t) {
  return t.isBF16() ? Float32Type::get(t.getContext()) : t;
}

/// A tensor as a product reads it (productElementType): a bf16 one as f32.
static RankedTensorType productTensorType(RankedTensorType t) {
  return RankedTensorType::get(t.getShape(), productElementType(t.getElementType()));
}

/// differingElementTypes for a product's operands (productElementType).
static std::optional<InferredType>
differingProductOperands(ArrayRef<RankedTensorType> types) {
  Type first = productElementType(types.front().getElementType());
  for (RankedTensorType t : types.drop_front())
    if (t && productElementType(t.getElementType()) != first)
      return InferredType::failure("element types differ: " +
                                   quoted(types.front()) + " and " +
                                   quoted(t));
  return std::nullopt;
}

/// A product's result of `shape`, of the element type it reads `like` as.
static RankedTensorType productLike(RankedTensorType like,
                                    ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape,
                               productElementType(like.getElementType()));
}

/// `type`'s shape without `axes` (sorted).
static SmallVector<int64_t> shapeWithout(RankedTensorType type,
                                         ArrayRef<int64_t> axes) {
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (!llvm::is_contained(axes, i))
      shape.push_back(type.getDimSize(i));
  return shape;
}

std::string vouch::exactLiteral(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

// Builders used by VJP rules. Each builds one op at the insertion point.
static Value buildMatmul(OpBuilder &b, Location loc, Value lhs, bool tl,
                         Value rhs, bool tr) {
  InferredType type =
      MatmulOp::inferResultType(tensorOf(lhs), tensorOf(rhs), tl, tr);
  assert(type && "a VJP rule built an ill-shaped matmul");
  auto op = b.create<MatmulOp>(loc, type.type, lhs, rhs);
  if (tl)
    op.setTransposeLhs(true);
  if (tr)
    op.setTransposeRhs(true);
  return op;
}

static Value buildReshape(OpBuilder &b, Location loc, Value value,
                          RankedTensorType to) {
  if (value.getType() == to)
    return value;
  return b.create<ReshapeOp>(loc, to, value);
}

/// Sums `value` over `axes` (sorted), removing them.
static Value buildReduceSum(OpBuilder &b, Location loc, Value value,
                            ArrayRef<int64_t> axes) {
  if (axes.empty())
    return value;
  InferredType type = inferReductionType(tensorOf(value), axes);
  assert(type && "a VJP rule built an ill-shaped reduction");
  return b.create<ReduceSumOp>(loc, type.type, value,
                               b.getDenseI64ArrayAttr(axes));
}

static Value buildBroadcast(OpBuilder &b, Location loc, Value value,
                            RankedTensorType to, ArrayRef<int64_t> dims) {
  if (value.getType() == to)
    return value;
  return b.create<BroadcastOp>(loc, to, value, b.getDenseI64ArrayAttr(dims));
}

static Value buildScale(OpBuilder &b, Location loc, Value value,
                        double factor) {
  return b.create<ScaleOp>(loc, value.getType(), value,
                           b.getF64FloatAttr(factor));
}

//===----------------------------------------------------------------------===//
// ModelOp
//===----------------------------------------------------------------------===//

LogicalResult ModelOp::verify() {
  llvm::StringMap<Operation *> names;
  int losses = 0;
  for (Operation &op : getBlock()) {
    StringAttr name;
    if (auto input = dyn_cast<InputOp>(op))
      name = input.getNameAttr();
    else if (auto target = dyn_cast<TargetOp>(op))
      name = target.getNameAttr();
    else if (auto param = dyn_cast<ParamOp>(op))
      name = param.getNameAttr();
    else if (auto state = dyn_cast<StateOp>(op))
      name = state.getNameAttr();
    else if (isa<LossOp>(op))
      ++losses;
    if (!name)
      continue;
    auto [it, inserted] = names.try_emplace(name.getValue(), &op);
    if (!inserted) {
      InFlightDiagnostic diag = op.emitOpError("redefines '")
                                << name.getValue() << "'";
      diag.attachNote(it->second->getLoc()) << "previous definition is here";
      return diag;
    }
  }
  if (losses > 1)
    return emitOpError("has ") << losses << " vouch.loss ops; at most one";
  if (getBatch() < 1)
    return emitOpError("batch must be at least 1, got ") << getBatch();
  return success();
}

//===----------------------------------------------------------------------===//
// ParamOp
//===----------------------------------------------------------------------===//

// The initialiser, written bare (`= xavier_uniform`); the quoted spelling
// of before (`= "xavier_uniform"`) is read too.
static ParseResult parseInitKind(OpAsmParser &parser, InitKindAttr &init) {
  SMLoc loc = parser.getCurrentLocation();
  std::string name;
  if (failed(parser.parseOptionalString(&name))) {
    StringRef keyword;
    if (parser.parseKeyword(&keyword))
      return failure();
    name = keyword.str();
  }
  std::optional<InitKind> kind = symbolizeInitKind(name);
  if (!kind)
    return parser.emitError(loc) << "unknown initialiser '" << name
                                 << "'; known: " << initKindNames();
  init = InitKindAttr::get(parser.getContext(), *kind);
  return success();
}

static void printInitKind(OpAsmPrinter &printer, Operation *,
                          InitKindAttr init) {
  printer << stringifyInitKind(init.getValue());
}

static ParseResult parseInitArgs(OpAsmParser &parser,
                                 DenseF64ArrayAttr &args) {
  SmallVector<double> values;
  if (succeeded(parser.parseOptionalLSquare())) {
    if (failed(parser.parseOptionalRSquare())) {
      if (parser.parseCommaSeparatedList([&]() -> ParseResult {
            double value;
            if (parser.parseFloat(value))
              return failure();
            values.push_back(value);
            return success();
          }) ||
          parser.parseRSquare())
        return failure();
    }
  }
  args = DenseF64ArrayAttr::get(parser.getContext(), values);
  return success();
}

static void printInitArgs(OpAsmPrinter &printer, Operation *,
                          DenseF64ArrayAttr args) {
  if (!args || args.empty())
    return;
  printer << " [";
  llvm::interleaveComma(args.asArrayRef(), printer);
  printer << "]";
}

// `= NAME [args]` as one directive, so a bare initialiser prints with no
// trailing space before the type.
static ParseResult parseInit(OpAsmParser &parser, InitKindAttr &init,
                             DenseF64ArrayAttr &args) {
  return failure(failed(parseInitKind(parser, init)) ||
                 failed(parseInitArgs(parser, args)));
}

static void printInit(OpAsmPrinter &printer, Operation *op, InitKindAttr init,
                      DenseF64ArrayAttr args) {
  printInitKind(printer, op, init);
  printInitArgs(printer, op, args);
}

// As many arguments as the initialiser's signature in the clause table.
LogicalResult ParamOp::verify() {
  StringRef name = stringifyInitKind(getInit());
  size_t arity = clauseSignature(ClauseKind::Initializer, name).size();
  if (getInitArgs().size() != arity)
    return emitOpError("initialiser '")
           << name << "' takes " << arity << " arguments, got "
           << getInitArgs().size();
  return success();
}

//===----------------------------------------------------------------------===//
// StateOp
//===----------------------------------------------------------------------===//

// Running statistics start at zeros (the mean) or ones (the variance), and
// are read only by the batch_norms they belong to, in one role: the running
// mean of each, or the running variance of each.
LogicalResult StateOp::verify() {
  InitKind init = getInit();
  if (init != InitKind::Zeros && init != InitKind::Ones)
    return emitOpError("state starts as zeros or ones, got '")
           << stringifyInitKind(init) << "'";
  if (getResult().use_empty())
    return emitOpError("'") << getName()
                            << "' is read by no batch_norm: a state holds the "
                               "running statistics of batch_norms";
  std::optional<bool> asMean;
  for (Operation *user : getResult().getUsers()) {
    auto bn = dyn_cast<BatchNormOp>(user);
    if (!bn)
      return emitOpError("'")
             << getName() << "' is read by '" << user->getName()
             << "': only batch_norm reads a state (its running statistics)";
    bool mean = bn.getRunningMean() == getResult();
    if (mean && bn.getRunningVar() == getResult())
      return emitOpError("'") << getName()
                              << "' is both the running mean and the running "
                                 "variance of one batch_norm";
    if (asMean && *asMean != mean)
      return emitOpError("'") << getName()
                              << "' is the running mean of one batch_norm and "
                                 "the running variance of another";
    asMean = mean;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// LossOp
//===----------------------------------------------------------------------===//

LogicalResult LossOp::verify() {
  if (tensorOf(getValue()).getRank() != 0)
    return emitOpError("loss must be a scalar (rank-0 tensor), got ")
           << getValue().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// OutputOp
//===----------------------------------------------------------------------===//

// `columns`: 1 ≤ columns ≤ the last axis's extent.
LogicalResult OutputOp::verify() {
  std::optional<uint64_t> columns = getColumns();
  if (!columns)
    return success();
  RankedTensorType value = tensorOf(getValue());
  if (value.getRank() < 1 || int64_t(*columns) < 1 ||
      int64_t(*columns) > value.getShape().back())
    return emitOpError("columns ")
           << int64_t(*columns) << " must be in [1, the last extent] of "
           << quoted(value);
  return success();
}

SmallVector<int64_t> OutputOp::outputShape() {
  SmallVector<int64_t> shape(tensorOf(getValue()).getShape());
  if (std::optional<uint64_t> columns = getColumns())
    shape.back() = int64_t(*columns);
  return shape;
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

// op(lhs) [..., M, K] times op(rhs) [..., K, N] is [..., M, N], where op()
// swaps the last two axes of a flagged operand. The leading (batch) axes: an
// operand of rank 2 is one matrix shared by every batch entry; operands of
// higher rank have the same batch axes (the frontend applies torch.matmul's
// broadcasting before it builds the op: it reshapes an operand whose batch
// has one entry to rank 2 and broadcasts any other partial batch).
InferredType MatmulOp::inferResultType(RankedTensorType lhs,
                                       RankedTensorType rhs, bool transposeLhs,
                                       bool transposeRhs) {
  int64_t lr = lhs.getRank(), rr = rhs.getRank();
  if (lr < 2 || rr < 2)
    return InferredType::failure("multiplies matrices or batches of matrices "
                                 "(rank 2 or more), got " +
                                     quoted(lhs) + " and " + quoted(rhs),
                                 -1, /*continuesName=*/true);
  if (lr > 2 && rr > 2 &&
      lhs.getShape().drop_back(2) != rhs.getShape().drop_back(2))
    return InferredType::failure("batch axes differ: " + quoted(lhs) +
                                 " and " + quoted(rhs) +
                                 " (an operand has the result's batch axes "
                                 "or is one matrix of rank 2)");
  int64_t k1 = lhs.getDimSize(transposeLhs ? lr - 2 : lr - 1);
  int64_t k2 = rhs.getDimSize(transposeRhs ? rr - 1 : rr - 2);
  if (k1 != k2)
    return InferredType::failure(
        "cannot multiply " + quoted(lhs) +
        (transposeLhs ? " (transposed)" : "") + " by " + quoted(rhs) +
        (transposeRhs ? " (transposed)" : "") + ": contraction extents " +
        std::to_string(k1) + " and " + std::to_string(k2) + " differ");
  if (std::optional<InferredType> differ = differingProductOperands({lhs, rhs}))
    return *differ;
  SmallVector<int64_t> shape(
      (lr >= rr ? lhs : rhs).getShape().drop_back(2));
  shape.push_back(lhs.getDimSize(transposeLhs ? lr - 1 : lr - 2));
  shape.push_back(rhs.getDimSize(transposeRhs ? rr - 2 : rr - 1));
  return productLike(lhs, shape);
}

LogicalResult MatmulOp::verify() {
  return verifyInferredType(
      *this, inferResultType(tensorOf(getLhs()), tensorOf(getRhs()),
                             getTransposeLhs(), getTransposeRhs()));
}

// C = op(A)·op(B): dA and dB are again products of the stored operands with
// transpose flags (dA = dC·op(B)ᵀ, dB = op(A)ᵀ·dC, undone for a transposed
// operand), so no transposed copy is ever built. A rank-2 operand shared by a
// batch gets the sum over the batch: for dB of a batched, untransposed A
// that sum is the contraction of one product over the rows of every entry
// (A and dC viewed as [batch·M, K] and [batch·M, N]); otherwise the batched
// product is summed over its batch axes.
LogicalResult MatmulOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  Location loc = getLoc();
  Value dc = resultGrads[0];
  bool ta = getTransposeLhs(), tb = getTransposeRhs();
  RankedTensorType at = tensorOf(getLhs()), bt = tensorOf(getRhs()),
                   ct = tensorOf(getResult());
  int64_t batchAxes = ct.getRank() - 2;
  SmallVector<int64_t> batch = llvm::to_vector(llvm::seq<int64_t>(0, batchAxes));
  // The batched product `grad` summed over the batch axes where `operand` is
  // one shared matrix.
  auto sumShared = [&](Value grad, RankedTensorType operand) {
    if (operand.getRank() == ct.getRank())
      return grad;
    return buildReduceSum(b, loc, grad, batch);
  };
  Value da = ta ? buildMatmul(b, loc, getRhs(), tb, dc, true)
                : buildMatmul(b, loc, dc, false, getRhs(), !tb);
  da = sumShared(da, at);
  Value db;
  if (bt.getRank() == 2 && batchAxes > 0 && !ta) {
    int64_t rows = getNumElements(at) / at.getDimSize(at.getRank() - 1);
    Value a2 = buildReshape(b, loc, getLhs(),
                            tensorLike(at, {rows, at.getDimSize(at.getRank() - 1)}));
    Value dc2 = buildReshape(
        b, loc, dc, tensorLike(ct, {rows, ct.getDimSize(ct.getRank() - 1)}));
    db = tb ? buildMatmul(b, loc, dc2, true, a2, false)
            : buildMatmul(b, loc, a2, true, dc2, false);
  } else {
    db = tb ? buildMatmul(b, loc, dc, true, getLhs(), ta)
            : buildMatmul(b, loc, getLhs(), !ta, dc, false);
    db = sumShared(db, bt);
  }
  operandGrads.append({da, db});
  return success();
}

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

// input [..., in], weight [out, in], bias [out] -> [..., out]
InferredType LinearOp::inferResultType(RankedTensorType input,
                                       RankedTensorType weight,
                                       RankedTensorType bias) {
  if (weight.getRank() != 2)
    return InferredType::failure(
        "the weight must be rank 2 [out, in], got " + quoted(weight));
  int64_t out = weight.getDimSize(0), in = weight.getDimSize(1);
  if (input.getRank() < 1 || input.getDimSize(input.getRank() - 1) != in)
    return InferredType::failure(
        "input " + quoted(input) + " does not match weight " + quoted(weight) +
        ": the input's last axis must have extent " + std::to_string(in) +
        " (the weight is [out, in])");
  if (bias && (bias.getRank() != 1 || bias.getDimSize(0) != out))
    return InferredType::failure("bias " + quoted(bias) +
                                 " does not match weight " + quoted(weight) +
                                 ": expected [" + std::to_string(out) + "]");
  if (std::optional<InferredType> differ =
          differingProductOperands({input, weight, bias}))
    return *differ;
  SmallVector<int64_t> shape(input.getShape().drop_back());
  shape.push_back(out);
  return productLike(input, shape);
}

LogicalResult LinearOp::verify() {
  Value bias = getBias();
  InferredType inferred =
      inferResultType(tensorOf(getInput()), tensorOf(getWeight()),
                      bias ? tensorOf(bias) : RankedTensorType());
  // A bf16 result (the op table's bf16Result) is a bf16 product's: both
  // operands bf16 too, and its bias (cuBLASLt adds a bias of D's type); a
  // bf16 bias is only ever beside a bf16 result.
  bool bf16Bias = bias && tensorOf(bias).getElementType().isBF16();
  if (inferred && storedAsBf16(tensorOf(getResult()), inferred.type)) {
    if (!tensorOf(getInput()).getElementType().isBF16() ||
        !tensorOf(getWeight()).getElementType().isBF16())
      return emitOpError("result ")
             << quoted(getResult().getType())
             << " is bf16, which a linear stores only from bf16 input and weight";
    if (bias && !bf16Bias)
      return emitOpError("result ")
             << quoted(getResult().getType()) << " is bf16 but its bias "
             << quoted(bias.getType())
             << " is not: a linear storing a bf16 result adds a bf16 bias";
    return success();
  }
  if (inferred && bf16Bias)
    return emitOpError("bias ")
           << quoted(bias.getType())
           << " is bf16, which only a linear storing a bf16 result takes";
  return verifyInferredType(*this, inferred);
}

// y = x·Wᵀ + b over rows r = (leading axes): dx = dy·W, dW = dyᵀ·x (one
// transposed-lhs product), db = Σ_rows dy.
LogicalResult LinearOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  Location loc = getLoc();
  RankedTensorType xt = tensorOf(getInput()), dyt = tensorOf(resultGrads[0]);
  GemmDims d = getGemmDims(*this);
  int64_t rows = d.m, in = d.k, out = d.n;
  Value dy2 = buildReshape(b, loc, resultGrads[0], tensorLike(dyt, {rows, out}));
  Value x2 = buildReshape(b, loc, getInput(), tensorLike(xt, {rows, in}));
  Value dx = buildReshape(
      b, loc, buildMatmul(b, loc, dy2, false, getWeight(), false), xt);
  Value dw = buildMatmul(b, loc, dy2, true, x2, false);
  operandGrads.append({dx, dw});
  if (getBias())
    operandGrads.push_back(buildReduceSum(b, loc, dy2, {0}));
  return success();
}

//===----------------------------------------------------------------------===//
// Pointwise ops: the family's shape rule, ReluOp, TanhOp, ExpOp, AddOp,
// SubOp, MulOp, StepOp, ScaleOp
//===----------------------------------------------------------------------===//

// Every operand has one type, the result's. The frontend broadcasts
// NumPy-style before it builds a pointwise op; the op itself never does.
InferredType vouch::inferPointwiseType(ArrayRef<RankedTensorType> operands) {
  assert(!operands.empty() && "pointwise ops have operands");
  if (std::optional<InferredType> differ = differingElementTypes(operands))
    return *differ;
  for (RankedTensorType t : operands.drop_front())
    if (t != operands.front())
      return InferredType::failure("operands " + quoted(operands.front()) +
                                   " and " + quoted(t) + " differ in shape");
  return operands.front();
}

LogicalResult vouch::OpTrait::verifyPointwiseShape(Operation *op) {
  SmallVector<RankedTensorType> operands;
  for (Type t : op->getOperandTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor) // the type constraints report it
      return success();
    operands.push_back(tensor);
  }
  if (operands.empty() || op->getNumResults() != 1)
    return success();
  return verifyInferredType(op, inferPointwiseType(operands));
}

// add(a, b): da = dy, db = dy
std::string AddOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "(" + x[0] + " + " + x[1] + ")";
}
double AddOp::evaluateScalar(ArrayRef<double> x) { return x[0] + x[1]; }
LogicalResult AddOp::buildVJP(OpBuilder &, ValueRange dy,
                              SmallVectorImpl<Value> &grads) {
  grads.append({dy[0], dy[0]});
  return success();
}

// sub(a, b): da = dy, db = -dy
std::string SubOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "(" + x[0] + " - " + x[1] + ")";
}
double SubOp::evaluateScalar(ArrayRef<double> x) { return x[0] - x[1]; }
LogicalResult SubOp::buildVJP(OpBuilder &b, ValueRange dy,
                              SmallVectorImpl<Value> &grads) {
  grads.append({dy[0], buildScale(b, getLoc(), dy[0], -1.0)});
  return success();
}

// mul(a, b): da = dy·b, db = dy·a
std::string MulOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "(" + x[0] + " * " + x[1] + ")";
}
double MulOp::evaluateScalar(ArrayRef<double> x) { return x[0] * x[1]; }
LogicalResult MulOp::buildVJP(OpBuilder &b, ValueRange dy,
                              SmallVectorImpl<Value> &grads) {
  Type t = getType();
  grads.push_back(b.create<MulOp>(getLoc(), t, dy[0], getRhs()));
  grads.push_back(b.create<MulOp>(getLoc(), t, dy[0], getLhs()));
  return success();
}

// scale(a, c): da = c·dy
std::string ScaleOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "(" + x[0] + " * T(" + exactLiteral(getFactor().convertToDouble()) +
         "))";
}
double ScaleOp::evaluateScalar(ArrayRef<double> x) {
  return x[0] * getFactor().convertToDouble();
}
LogicalResult ScaleOp::buildVJP(OpBuilder &b, ValueRange dy,
                                SmallVectorImpl<Value> &grads) {
  grads.push_back(buildScale(b, getLoc(), dy[0],
                             getFactor().convertToDouble()));
  return success();
}

// relu(a) = max(a, 0): da = dy·step(a) (derivative 0 at a = 0, as PyTorch)
std::string ReluOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "(" + x[0] + " > T(0) ? " + x[0] + " : T(0))";
}
double ReluOp::evaluateScalar(ArrayRef<double> x) {
  return x[0] > 0 ? x[0] : 0.0;
}
LogicalResult ReluOp::buildVJP(OpBuilder &b, ValueRange dy,
                               SmallVectorImpl<Value> &grads) {
  Value mask = b.create<StepOp>(getLoc(), getType(), getInput());
  grads.push_back(b.create<MulOp>(getLoc(), getType(), dy[0], mask));
  return success();
}

// tanh(a): da = dy·(1 - y²), from the forward result y (saved, not recomputed)
std::string TanhOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "tanh(" + x[0] + ")";
}
double TanhOp::evaluateScalar(ArrayRef<double> x) { return std::tanh(x[0]); }
LogicalResult TanhOp::buildVJP(OpBuilder &b, ValueRange dy,
                               SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Type t = getType();
  Value y = getResult();
  Value one = b.create<FillOp>(loc, t, b.getF64FloatAttr(1.0));
  Value slope = b.create<SubOp>(loc, t, one, b.create<MulOp>(loc, t, y, y));
  grads.push_back(b.create<MulOp>(loc, t, dy[0], slope));
  return success();
}

// exp(a): da = dy·y, from the forward result y
std::string ExpOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "exp(" + x[0] + ")";
}
double ExpOp::evaluateScalar(ArrayRef<double> x) { return std::exp(x[0]); }
LogicalResult ExpOp::buildVJP(OpBuilder &b, ValueRange dy,
                              SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<MulOp>(getLoc(), getType(), dy[0], getResult()));
  return success();
}

// The elementwise building blocks the VJP rules below compose.
static Value ones(OpBuilder &b, Location loc, Type t) {
  return b.create<FillOp>(loc, t, b.getF64FloatAttr(1.0));
}
/// [x > y] elementwise, as a float tensor (0 or 1).
static Value greater(OpBuilder &b, Location loc, Type t, Value x, Value y) {
  return b.create<StepOp>(loc, t, b.create<SubOp>(loc, t, x, y));
}

// div(a, b) = a / b: da = dy / b, db = -dy·y / b, from the forward result y
std::string DivOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "(" + x[0] + " / " + x[1] + ")";
}
double DivOp::evaluateScalar(ArrayRef<double> x) { return x[0] / x[1]; }
LogicalResult DivOp::buildVJP(OpBuilder &b, ValueRange dy,
                              SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Type t = getType();
  Value da = b.create<DivOp>(loc, t, dy[0], getRhs());
  grads.push_back(da);
  grads.push_back(buildScale(b, loc, b.create<MulOp>(loc, t, da, getResult()), -1.0));
  return success();
}

// maximum(a, b): NaN propagates (torch.maximum). da = dy·w, db = dy·(1 - w)
// with w = [a > b] + ½[a == b] = ½ + ½([a > b] - [b > a]): ties split the
// gradient half and half, as PyTorch does.
std::string MaximumOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "((" + x[0] + " != " + x[0] + " || " + x[0] + " > " + x[1] + ") ? " +
         x[0] + " : " + x[1] + ")";
}
double MaximumOp::evaluateScalar(ArrayRef<double> x) {
  return (std::isnan(x[0]) || x[0] > x[1]) ? x[0] : x[1];
}
/// ½ + ½([x > y] - [y > x]): 1 where x > y, 0 where y > x, ½ at ties. The
/// lhs's share of maximum's gradient (x = lhs, y = rhs) and of minimum's
/// (x = rhs, y = lhs).
static Value tieSplitShare(OpBuilder &b, Location loc, Type t, Value x, Value y) {
  Value lead = b.create<SubOp>(loc, t, greater(b, loc, t, x, y),
                               greater(b, loc, t, y, x));
  Value half = b.create<FillOp>(loc, t, b.getF64FloatAttr(0.5));
  return b.create<AddOp>(loc, t, half, buildScale(b, loc, lead, 0.5));
}
LogicalResult MaximumOp::buildVJP(OpBuilder &b, ValueRange dy,
                                  SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Type t = getType();
  Value w = tieSplitShare(b, loc, t, getLhs(), getRhs());
  grads.push_back(b.create<MulOp>(loc, t, dy[0], w));
  grads.push_back(b.create<SubOp>(loc, t, dy[0], grads.back()));
  return success();
}

// minimum(a, b): maximum's rule with the roles of a and b in the comparison
// swapped (the smaller one wins; ties split half and half).
std::string MinimumOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "((" + x[0] + " != " + x[0] + " || " + x[0] + " < " + x[1] + ") ? " +
         x[0] + " : " + x[1] + ")";
}
double MinimumOp::evaluateScalar(ArrayRef<double> x) {
  return (std::isnan(x[0]) || x[0] < x[1]) ? x[0] : x[1];
}
LogicalResult MinimumOp::buildVJP(OpBuilder &b, ValueRange dy,
                                  SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Type t = getType();
  Value w = tieSplitShare(b, loc, t, getRhs(), getLhs());
  grads.push_back(b.create<MulOp>(loc, t, dy[0], w));
  grads.push_back(b.create<SubOp>(loc, t, dy[0], grads.back()));
  return success();
}

// abs(a): da = dy·sign(a), sign(a) = [a > 0] - [-a > 0] (0 at 0, as PyTorch)
std::string AbsOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "fabs(" + x[0] + ")";
}
double AbsOp::evaluateScalar(ArrayRef<double> x) { return std::fabs(x[0]); }
LogicalResult AbsOp::buildVJP(OpBuilder &b, ValueRange dy,
                              SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Type t = getType();
  Value a = getInput();
  Value sign = b.create<SubOp>(loc, t, b.create<StepOp>(loc, t, a),
                               b.create<StepOp>(loc, t, buildScale(b, loc, a, -1.0)));
  grads.push_back(b.create<MulOp>(loc, t, dy[0], sign));
  return success();
}

// sqrt(a): da = dy / (2y), from the forward result y
std::string SqrtOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "sqrt(" + x[0] + ")";
}
double SqrtOp::evaluateScalar(ArrayRef<double> x) { return std::sqrt(x[0]); }
LogicalResult SqrtOp::buildVJP(OpBuilder &b, ValueRange dy,
                               SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  grads.push_back(
      buildScale(b, loc, b.create<DivOp>(loc, getType(), dy[0], getResult()), 0.5));
  return success();
}

// log(a): da = dy / a
std::string LogOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "log(" + x[0] + ")";
}
double LogOp::evaluateScalar(ArrayRef<double> x) { return std::log(x[0]); }
LogicalResult LogOp::buildVJP(OpBuilder &b, ValueRange dy,
                              SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<DivOp>(getLoc(), getType(), dy[0], getInput()));
  return success();
}

// sin(a): da = dy·cos(a)
std::string SinOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "sin(" + x[0] + ")";
}
double SinOp::evaluateScalar(ArrayRef<double> x) { return std::sin(x[0]); }
LogicalResult SinOp::buildVJP(OpBuilder &b, ValueRange dy,
                              SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Type t = getType();
  grads.push_back(b.create<MulOp>(loc, t, dy[0], b.create<CosOp>(loc, t, getInput())));
  return success();
}

// cos(a): da = -dy·sin(a)
std::string CosOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "cos(" + x[0] + ")";
}
double CosOp::evaluateScalar(ArrayRef<double> x) { return std::cos(x[0]); }
LogicalResult CosOp::buildVJP(OpBuilder &b, ValueRange dy,
                              SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Type t = getType();
  Value slope = b.create<MulOp>(loc, t, dy[0], b.create<SinOp>(loc, t, getInput()));
  grads.push_back(buildScale(b, loc, slope, -1.0));
  return success();
}

// sigmoid(a) = 1 / (1 + exp(-a)): da = dy·y·(1 - y), from the forward result y
std::string SigmoidOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "(T(1) / (T(1) + exp(-" + x[0] + ")))";
}
double SigmoidOp::evaluateScalar(ArrayRef<double> x) {
  return 1.0 / (1.0 + std::exp(-x[0]));
}
LogicalResult SigmoidOp::buildVJP(OpBuilder &b, ValueRange dy,
                                  SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Type t = getType();
  Value y = getResult();
  Value slope = b.create<MulOp>(loc, t, y, b.create<SubOp>(loc, t, ones(b, loc, t), y));
  grads.push_back(b.create<MulOp>(loc, t, dy[0], slope));
  return success();
}

// silu(a) = a·s, s = sigmoid(a): da = dy·(s + a·s·(1 - s))
std::string SiluOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "(" + x[0] + " / (T(1) + exp(-" + x[0] + ")))";
}
double SiluOp::evaluateScalar(ArrayRef<double> x) {
  return x[0] / (1.0 + std::exp(-x[0]));
}
LogicalResult SiluOp::buildVJP(OpBuilder &b, ValueRange dy,
                               SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Type t = getType();
  Value a = getInput();
  Value s = b.create<SigmoidOp>(loc, t, a);
  Value rest = b.create<MulOp>(loc, t, b.create<MulOp>(loc, t, a, s),
                               b.create<SubOp>(loc, t, ones(b, loc, t), s));
  grads.push_back(b.create<MulOp>(loc, t, dy[0], b.create<AddOp>(loc, t, s, rest)));
  return success();
}

// inv(a) = 1 / a: da = -dy·y², from the forward result y
std::string InvOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "(T(1) / " + x[0] + ")";
}
double InvOp::evaluateScalar(ArrayRef<double> x) { return 1.0 / x[0]; }
LogicalResult InvOp::buildVJP(OpBuilder &b, ValueRange dy,
                              SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Type t = getType();
  Value y = getResult();
  Value slope = b.create<MulOp>(loc, t, dy[0], b.create<MulOp>(loc, t, y, y));
  grads.push_back(buildScale(b, loc, slope, -1.0));
  return success();
}

// The number parameters of the ops below, checked once by their verifiers.
static double attr(FloatAttr a) { return a.getValueAsDouble(); }
/// How a verifier message shows a number: "0", "-1.5", "1e-12".
static std::string shown(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}
static std::string literal(FloatAttr a) {
  return "T(" + exactLiteral(attr(a)) + ")";
}
/// [x ≥ c] elementwise, as 1 - [c > x] (1 at x = c, as PyTorch's clamp).
static Value atLeast(OpBuilder &b, Location loc, Type t, Value x, double c) {
  Value bound = b.create<FillOp>(loc, t, b.getF64FloatAttr(c));
  return b.create<SubOp>(loc, t, ones(b, loc, t), greater(b, loc, t, bound, x));
}

// softplus(a) = log1p(exp(βa)) / β, a where βa > threshold (PyTorch's):
// da = dy·s + dy·[βa > threshold]·(1 - s), s = sigmoid(βa)
LogicalResult SoftplusOp::verify() {
  if (!std::isfinite(attr(getBetaAttr())) || attr(getBetaAttr()) == 0)
    return emitOpError("beta must be a finite non-zero number, got ")
           << shown(attr(getBetaAttr()));
  if (!std::isfinite(attr(getThresholdAttr())))
    return emitOpError("threshold must be finite, got ") << shown(attr(getThresholdAttr()));
  return success();
}
std::string SoftplusOp::emitScalarExpr(ArrayRef<std::string> x) {
  std::string beta = literal(getBetaAttr()), z = "(" + x[0] + " * " + beta + ")";
  return "(" + z + " > " + literal(getThresholdAttr()) + " ? " + x[0] +
         " : log1p(exp(" + z + ")) / " + beta + ")";
}
double SoftplusOp::evaluateScalar(ArrayRef<double> x) {
  double beta = attr(getBetaAttr()), z = x[0] * beta;
  return z > attr(getThresholdAttr()) ? x[0] : std::log1p(std::exp(z)) / beta;
}
LogicalResult SoftplusOp::buildVJP(OpBuilder &b, ValueRange dy,
                                   SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Type t = getType();
  Value z = buildScale(b, loc, getInput(), attr(getBetaAttr()));
  Value s = b.create<SigmoidOp>(loc, t, z);
  Value linear = b.create<StepOp>(
      loc, t, b.create<SubOp>(loc, t, z,
                              b.create<FillOp>(loc, t, getThresholdAttr())));
  Value slope = b.create<AddOp>(
      loc, t, s, b.create<MulOp>(loc, t, linear, b.create<SubOp>(loc, t, ones(b, loc, t), s)));
  grads.push_back(b.create<MulOp>(loc, t, dy[0], slope));
  return success();
}

// safe_log(a) = log(max(a, eps)): da = dy·[a ≥ eps] / max(a, eps), the
// denominator written [a ≥ eps]·a + (1 - [a ≥ eps])·eps so that it never
// divides by the clamped-away values (PyTorch's log(clamp(a, min = eps))).
LogicalResult SafeLogOp::verify() {
  double eps = attr(getEpsAttr());
  if (!std::isfinite(eps) || eps <= 0)
    return emitOpError("eps must be a finite positive number, got ") << shown(eps);
  return success();
}
std::string SafeLogOp::emitScalarExpr(ArrayRef<std::string> x) {
  std::string eps = literal(getEpsAttr());
  return "log((" + x[0] + " != " + x[0] + " || " + x[0] + " >= " + eps + ") ? " +
         x[0] + " : " + eps + ")";
}
double SafeLogOp::evaluateScalar(ArrayRef<double> x) {
  double eps = attr(getEpsAttr());
  return std::log((std::isnan(x[0]) || x[0] >= eps) ? x[0] : eps);
}
LogicalResult SafeLogOp::buildVJP(OpBuilder &b, ValueRange dy,
                                  SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Type t = getType();
  double eps = attr(getEpsAttr());
  Value a = getInput();
  Value kept = atLeast(b, loc, t, a, eps);
  Value clamped = b.create<AddOp>(
      loc, t, b.create<MulOp>(loc, t, kept, a),
      buildScale(b, loc, b.create<SubOp>(loc, t, ones(b, loc, t), kept), eps));
  grads.push_back(
      b.create<DivOp>(loc, t, b.create<MulOp>(loc, t, dy[0], kept), clamped));
  return success();
}

// clamp(a, min, max): da = dy·[a ≥ min]·[a ≤ max] (PyTorch's clamp backward)
LogicalResult ClampOp::verify() {
  double lo = attr(getMinAttr()), hi = attr(getMaxAttr());
  if (!std::isfinite(lo) || !std::isfinite(hi))
    return emitOpError("min and max must be finite, got ") << shown(lo) << " and " << shown(hi);
  if (lo > hi)
    return emitOpError("min (") << shown(lo) << ") must not exceed max (" << shown(hi) << ")";
  return success();
}
std::string ClampOp::emitScalarExpr(ArrayRef<std::string> x) {
  std::string lo = literal(getMinAttr()), hi = literal(getMaxAttr());
  return "(" + x[0] + " < " + lo + " ? " + lo + " : (" + x[0] + " > " + hi + " ? " +
         hi + " : " + x[0] + "))";
}
double ClampOp::evaluateScalar(ArrayRef<double> x) {
  double lo = attr(getMinAttr()), hi = attr(getMaxAttr());
  return x[0] < lo ? lo : (x[0] > hi ? hi : x[0]);
}
LogicalResult ClampOp::buildVJP(OpBuilder &b, ValueRange dy,
                                SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Type t = getType();
  Value a = getInput();
  Value aboveMin = atLeast(b, loc, t, a, attr(getMinAttr()));
  // [a ≤ max] = [-a ≥ -max]
  Value belowMax = atLeast(b, loc, t, buildScale(b, loc, a, -1.0), -attr(getMaxAttr()));
  grads.push_back(b.create<MulOp>(loc, t, dy[0],
                                  b.create<MulOp>(loc, t, aboveMin, belowMax)));
  return success();
}

// pow(a, p) = a^p: da = dy·p·a^(p-1); none for p = 0 (a constant 1, as
// PyTorch's pow backward, which masks that case)
LogicalResult PowOp::verify() {
  if (!std::isfinite(attr(getPAttr())))
    return emitOpError("p must be finite, got ") << shown(attr(getPAttr()));
  return success();
}
std::string PowOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "pow(" + x[0] + ", " + literal(getPAttr()) + ")";
}
double PowOp::evaluateScalar(ArrayRef<double> x) {
  return std::pow(x[0], attr(getPAttr()));
}
LogicalResult PowOp::buildVJP(OpBuilder &b, ValueRange dy,
                              SmallVectorImpl<Value> &grads) {
  double p = attr(getPAttr());
  if (p == 0) {
    grads.push_back(Value());
    return success();
  }
  Location loc = getLoc();
  Type t = getType();
  Value lower = b.create<PowOp>(loc, t, getInput(), b.getF64FloatAttr(p - 1));
  grads.push_back(buildScale(b, loc, b.create<MulOp>(loc, t, dy[0], lower), p));
  return success();
}

// gelu(a), approximate "tanh" or "none" (erf): da = dy·gelu_grad(a). The
// cpu and cuda code call vouch::gelu_tanh / gelu_erf (runtime/cpu_kernels.h,
// runtime/cuda/kernels/gelu.cuh), which round every product and sum on
// their own; the float64 value below is the interpreter's reference.
static constexpr double kGeluBeta = 0.7978845608028654; // √(2/π)
static constexpr double kGeluKappa = 0.044715;
static constexpr double kInvSqrt2 = 0.7071067811865476;    // 1/√2
static constexpr double kInvSqrt2Pi = 0.3989422804014327;  // 1/√(2π)

static LogicalResult verifyApproximate(Operation *op, StringRef approximate) {
  if (approximate != "tanh" && approximate != "none")
    return op->emitOpError("approximate must be \"tanh\" or \"none\", got \"")
           << approximate << "\"";
  return success();
}

LogicalResult GeluOp::verify() { return verifyApproximate(*this, getApproximate()); }
std::string GeluOp::emitScalarExpr(ArrayRef<std::string> x) {
  return (isTanh() ? "vouch::gelu_tanh(" : "vouch::gelu_erf(") + x[0] + ")";
}
double GeluOp::evaluateScalar(ArrayRef<double> x) {
  double a = x[0];
  if (isTanh())
    return 0.5 * a * (1 + std::tanh(kGeluBeta * (a + kGeluKappa * a * a * a)));
  return 0.5 * a * (1 + std::erf(a * kInvSqrt2));
}
LogicalResult GeluOp::buildVJP(OpBuilder &b, ValueRange dy,
                               SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Type t = getType();
  Value slope = b.create<GeluGradOp>(loc, t, getInput(), getApproximateAttr());
  grads.push_back(b.create<MulOp>(loc, t, dy[0], slope));
  return success();
}

// gelu_grad(a) = gelu'(a):
//   "tanh": ½(1 + t) + ½a(1 - t²)u', t = tanh(u), u = β(a + κa³), u' = β(1 + 3κa²)
//   "none": Φ(a) + a·φ(a)
// Its VJP: da = dy·gelu''(a), from the ops below:
//   "tanh": gelu'' = (1 - t²)(u' + ½a(u'' - 2t·u'²)), u'' = 6βκa
//   "none": gelu'' = φ(a)(2 - a²), φ(a) = exp(-a²/2)/√(2π)
LogicalResult GeluGradOp::verify() {
  return verifyApproximate(*this, getApproximate());
}
std::string GeluGradOp::emitScalarExpr(ArrayRef<std::string> x) {
  return (isTanh() ? "vouch::gelu_tanh_grad(" : "vouch::gelu_erf_grad(") + x[0] + ")";
}
double GeluGradOp::evaluateScalar(ArrayRef<double> x) {
  double a = x[0];
  if (isTanh()) {
    double t = std::tanh(kGeluBeta * (a + kGeluKappa * a * a * a));
    double du = kGeluBeta * (1 + 3 * kGeluKappa * a * a);
    return 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * du;
  }
  return 0.5 * (1 + std::erf(a * kInvSqrt2)) +
         a * std::exp(-0.5 * a * a) * kInvSqrt2Pi;
}
LogicalResult GeluGradOp::buildVJP(OpBuilder &b, ValueRange dy,
                                   SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Type t = getType();
  Value a = getInput();
  Value a2 = b.create<MulOp>(loc, t, a, a);
  auto fill = [&](double v) { return b.create<FillOp>(loc, t, b.getF64FloatAttr(v)); };
  Value second;
  if (isTanh()) {
    Value a3 = b.create<MulOp>(loc, t, a2, a);
    Value u = buildScale(
        b, loc, b.create<AddOp>(loc, t, a, buildScale(b, loc, a3, kGeluKappa)), kGeluBeta);
    Value th = b.create<TanhOp>(loc, t, u);
    Value du = buildScale(
        b, loc, b.create<AddOp>(loc, t, fill(1), buildScale(b, loc, a2, 3 * kGeluKappa)),
        kGeluBeta);
    Value ddu = buildScale(b, loc, a, 6 * kGeluBeta * kGeluKappa);
    Value bend = b.create<SubOp>(
        loc, t, ddu, buildScale(b, loc, b.create<MulOp>(loc, t, th, b.create<MulOp>(loc, t, du, du)), 2));
    Value inner = b.create<AddOp>(loc, t, du,
                                  b.create<MulOp>(loc, t, buildScale(b, loc, a, 0.5), bend));
    Value sech2 = b.create<SubOp>(loc, t, fill(1), b.create<MulOp>(loc, t, th, th));
    second = b.create<MulOp>(loc, t, sech2, inner);
  } else {
    Value density = buildScale(b, loc, b.create<ExpOp>(loc, t, buildScale(b, loc, a2, -0.5)),
                               kInvSqrt2Pi);
    second = b.create<MulOp>(loc, t, density, b.create<SubOp>(loc, t, fill(2), a2));
  }
  grads.push_back(b.create<MulOp>(loc, t, dy[0], second));
  return success();
}

// step(a) = [a > 0]: piecewise constant, so no gradient flows (zero a.e.).
std::string StepOp::emitScalarExpr(ArrayRef<std::string> x) {
  return "(" + x[0] + " > T(0) ? T(1) : T(0))";
}
double StepOp::evaluateScalar(ArrayRef<double> x) { return x[0] > 0 ? 1 : 0; }
LogicalResult StepOp::buildVJP(OpBuilder &, ValueRange,
                               SmallVectorImpl<Value> &grads) {
  grads.push_back(Value());
  return success();
}

//===----------------------------------------------------------------------===//
// BroadcastOp
//===----------------------------------------------------------------------===//

// Input axis i becomes result axis dims[i] (strictly increasing); its
// extent is 1 (repeated) or the result axis's.
InferredType BroadcastOp::inferResultType(RankedTensorType input,
                                          ArrayRef<int64_t> shape,
                                          ArrayRef<int64_t> dims) {
  if (static_cast<int64_t>(dims.size()) != input.getRank())
    return InferredType::failure(
        "dims " + formatList(dims) + " has " + std::to_string(dims.size()) +
        " entries but the input " + quoted(input) + " has rank " +
        std::to_string(input.getRank()));
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= static_cast<int64_t>(shape.size()) ||
        (i > 0 && dims[i] <= dims[i - 1]))
      return InferredType::failure(
          "dims must be strictly increasing axes of the target " +
          formatList(shape) + ", got " + formatList(dims));
    int64_t from = input.getDimSize(i), to = shape[dims[i]];
    if (from != 1 && from != to)
      return InferredType::failure(
          "cannot broadcast " + quoted(input) + " to " + formatList(shape) +
          ": input axis " + std::to_string(i) + " has extent " +
          std::to_string(from) + " but target axis " + std::to_string(dims[i]) +
          " has " + std::to_string(to));
  }
  return tensorLike(input, shape);
}

LogicalResult BroadcastOp::verify() {
  return verifyInferredType(
      *this, inferResultType(tensorOf(getInput()),
                             tensorOf(getResult()).getShape(), getDims()));
}

// Broadcasting copies each input element to many result elements, so its
// VJP sums dy over the new axes and over the stretched unit axes.
LogicalResult BroadcastOp::buildVJP(OpBuilder &b, ValueRange dy,
                                    SmallVectorImpl<Value> &grads) {
  RankedTensorType in = tensorOf(getInput()), out = tensorOf(getResult());
  ArrayRef<int64_t> dims = getDims();
  SmallVector<int64_t> axes;
  for (int64_t axis = 0; axis < out.getRank(); ++axis) {
    const auto *pos = llvm::find(dims, axis);
    if (pos == dims.end() ||
        (in.getDimSize(pos - dims.begin()) == 1 && out.getDimSize(axis) != 1))
      axes.push_back(axis);
  }
  Value summed = buildReduceSum(b, getLoc(), dy[0], axes);
  grads.push_back(buildReshape(b, getLoc(), summed, in));
  return success();
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

// Any shape with the input's element count.
InferredType ReshapeOp::inferResultType(RankedTensorType input,
                                        ArrayRef<int64_t> shape) {
  std::optional<int64_t> count = 1;
  for (int64_t extent : shape)
    if (count)
      count = extent < 0 ? std::nullopt : llvm::checkedMul(*count, extent);
  if (!count || *count != input.getNumElements())
    return InferredType::failure(
        "cannot reshape " + quoted(input) + " (" +
        std::to_string(input.getNumElements()) + " elements) to " +
        formatList(shape) +
        (count ? " (" + std::to_string(*count) + " elements)"
               : " (not a count of elements int64 holds)"));
  return tensorLike(input, shape);
}

LogicalResult ReshapeOp::verify() {
  return verifyInferredType(
      *this,
      inferResultType(tensorOf(getInput()), tensorOf(getResult()).getShape()));
}

// reshape: dx = reshape(dy) back to the input's shape.
LogicalResult ReshapeOp::buildVJP(OpBuilder &b, ValueRange dy,
                                  SmallVectorImpl<Value> &grads) {
  grads.push_back(buildReshape(b, getLoc(), dy[0], tensorOf(getInput())));
  return success();
}

//===----------------------------------------------------------------------===//
// PermuteOp
//===----------------------------------------------------------------------===//

// Result axis i is input axis perm[i]; perm lists every axis once.
InferredType PermuteOp::inferResultType(RankedTensorType input,
                                        ArrayRef<int64_t> perm) {
  int64_t rank = input.getRank();
  if (static_cast<int64_t>(perm.size()) != rank)
    return InferredType::failure(formatList(perm) + " has " +
                                     std::to_string(perm.size()) +
                                     " entries but " + quoted(input) +
                                     " has rank " + std::to_string(rank),
                                 /*argument=*/1);
  llvm::SmallSet<int64_t, 8> seen;
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || !seen.insert(p).second)
      return InferredType::failure(formatList(perm) +
                                       " is not a permutation of the axes of " +
                                       quoted(input),
                                   /*argument=*/1);
    shape.push_back(input.getDimSize(p));
  }
  return tensorLike(input, shape);
}

LogicalResult PermuteOp::verify() {
  return verifyInferredType(*this,
                            inferResultType(tensorOf(getInput()), getPerm()));
}

// permute by p: dx = permute(dy) by the inverse permutation.
LogicalResult PermuteOp::buildVJP(OpBuilder &b, ValueRange dy,
                                  SmallVectorImpl<Value> &grads) {
  ArrayRef<int64_t> perm = getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[perm[i]] = i;
  grads.push_back(b.create<PermuteOp>(getLoc(), getInput().getType(), dy[0],
                                      b.getDenseI64ArrayAttr(inverse)));
  return success();
}

//===----------------------------------------------------------------------===//
// SliceOp, SliceScatterOp, ConcatOp
//===----------------------------------------------------------------------===//

// Normalised bounds (0 ≤ start < end ≤ extent, step ≥ 1; the frontend applies
// Python's rules first): ceil((end - start) / step) entries along `axis`.
InferredType SliceOp::inferResultType(RankedTensorType input, int64_t axis,
                                      int64_t start, int64_t end, int64_t step) {
  if (axis < 0 || axis >= input.getRank())
    return InferredType::failure("axis " + std::to_string(axis) +
                                 " is not an axis of " + quoted(input));
  int64_t extent = input.getDimSize(axis);
  if (step < 1)
    return InferredType::failure("step must be at least 1, got " +
                                 std::to_string(step));
  if (start < 0 || start >= end || end > extent)
    return InferredType::failure(
        "start " + std::to_string(start) + " and end " + std::to_string(end) +
        " must satisfy 0 ≤ start < end ≤ " + std::to_string(extent) +
        " (axis " + std::to_string(axis) + " of " + quoted(input) + ")");
  SmallVector<int64_t> shape(input.getShape());
  shape[axis] = (end - start + step - 1) / step;
  return tensorLike(input, shape);
}

LogicalResult SliceOp::verify() {
  return verifyInferredType(
      *this, inferResultType(tensorOf(getInput()), getAxis(), getStart(),
                             getEnd(), getStep()));
}

// slice: dx = slice_scatter(dy), dy written back where the slice read.
LogicalResult SliceOp::buildVJP(OpBuilder &b, ValueRange dy,
                                SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<SliceScatterOp>(getLoc(), getInput().getType(), dy[0],
                                           getAxisAttr(), getStartAttr(),
                                           getEndAttr(), getStepAttr()));
  return success();
}

// The result is what slice reads from: slicing it gives the input's type.
LogicalResult SliceScatterOp::verify() {
  RankedTensorType input = tensorOf(getInput()), result = tensorOf(getResult());
  InferredType sliced = SliceOp::inferResultType(result, getAxis(), getStart(),
                                                 getEnd(), getStep());
  if (!sliced)
    return emitOpError(sliced.message);
  if (sliced.type != input)
    return emitOpError("input ")
           << input << " differs from the slice of the result, "
           << sliced.type;
  return success();
}

// slice_scatter is linear: da = slice(dy) with the same bounds.
LogicalResult SliceScatterOp::buildVJP(OpBuilder &b, ValueRange dy,
                                       SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<SliceOp>(getLoc(), getInput().getType(), dy[0],
                                    getAxisAttr(), getStartAttr(), getEndAttr(),
                                    getStepAttr()));
  return success();
}

// At least one input; one rank and element type; every extent but axis's
// equal; the result's extent on axis is the sum of theirs.
InferredType ConcatOp::inferResultType(ArrayRef<RankedTensorType> inputs,
                                       int64_t axis) {
  if (inputs.empty())
    return InferredType::failure("needs at least one tensor");
  RankedTensorType first = inputs.front();
  if (axis < 0 || axis >= first.getRank())
    return InferredType::failure("axis " + std::to_string(axis) +
                                 " is not an axis of " + quoted(first));
  if (std::optional<InferredType> differ = differingElementTypes(inputs))
    return *differ;
  auto listed = [&] {
    std::string text;
    for (size_t i = 0; i < inputs.size(); ++i)
      text += (i ? ", " : "") + quoted(inputs[i]);
    return text;
  };
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (RankedTensorType t : inputs) {
    bool agree = t.getRank() == first.getRank();
    for (int64_t d = 0; agree && d < first.getRank(); ++d)
      agree = d == axis || t.getDimSize(d) == first.getDimSize(d);
    if (!agree)
      return InferredType::failure("shapes must agree except on axis " +
                                   std::to_string(axis) + ", got " + listed());
    shape[axis] += t.getDimSize(axis);
  }
  return tensorLike(first, shape);
}

LogicalResult ConcatOp::verify() {
  SmallVector<RankedTensorType> inputs;
  for (Value v : getInputs())
    inputs.push_back(tensorOf(v));
  return verifyInferredType(*this, inferResultType(inputs, getAxis()));
}

// concat: each input's gradient is dy's slice at that input's place.
LogicalResult ConcatOp::buildVJP(OpBuilder &b, ValueRange dy,
                                 SmallVectorImpl<Value> &grads) {
  int64_t axis = getAxis(), offset = 0;
  for (Value input : getInputs()) {
    RankedTensorType t = tensorOf(input);
    int64_t extent = t.getDimSize(axis);
    if (t == tensorOf(dy[0]))
      grads.push_back(dy[0]);
    else
      grads.push_back(b.create<SliceOp>(getLoc(), t, dy[0], axis, offset,
                                        offset + extent, 1));
    offset += extent;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// EmbeddingOp, EmbeddingGradOp, GatherOp, ScatterAddOp
//===----------------------------------------------------------------------===//

// ids i32 of any shape, table [V, D] (V, D ≥ 1): the result is ids' shape
// followed by D, in the table's element type.
InferredType EmbeddingOp::inferResultType(RankedTensorType ids,
                                          RankedTensorType table) {
  if (!ids.getElementType().isInteger(32))
    return InferredType::failure("ids " + quoted(ids) + " must be i32");
  if (table.getRank() != 2 || table.getDimSize(0) < 1 ||
      table.getDimSize(1) < 1)
    return InferredType::failure("table " + quoted(table) +
                                 " must be [V, D] with V, D ≥ 1");
  SmallVector<int64_t> shape(ids.getShape());
  shape.push_back(table.getDimSize(1));
  return tensorLike(table, shape);
}

LogicalResult EmbeddingOp::verify() {
  return verifyInferredType(
      *this, inferResultType(tensorOf(getIds()), tensorOf(getTable())));
}

// result[p] = table[ids[p]]: dtable = embedding_grad(ids, dy), the rows of dy
// summed per id in ascending position order; the ids get no gradient.
LogicalResult EmbeddingOp::buildVJP(OpBuilder &b, ValueRange dy,
                                    SmallVectorImpl<Value> &grads) {
  grads.push_back(Value());
  grads.push_back(b.create<EmbeddingGradOp>(getLoc(), getTable().getType(),
                                            getIds(), dy[0]));
  return success();
}

// The result is the table's type: embedding(ids, result) has dy's type.
LogicalResult EmbeddingGradOp::verify() {
  InferredType forward =
      EmbeddingOp::inferResultType(tensorOf(getIds()), tensorOf(getResult()));
  if (!forward)
    return emitOpError(forward.message);
  if (forward.type != tensorOf(getDy()))
    return emitOpError("dy ")
           << quoted(getDy().getType()) << " must be "
           << quoted(forward.type) << ", the embedding of the ids in the "
           << "result's table";
  return success();
}

// embedding_grad is linear in dy: ddy = embedding(ids, g).
LogicalResult EmbeddingGradOp::buildVJP(OpBuilder &b, ValueRange dy,
                                        SmallVectorImpl<Value> &grads) {
  grads.push_back(Value());
  grads.push_back(
      b.create<EmbeddingOp>(getLoc(), getDy().getType(), getIds(), dy[0]));
  return success();
}

// index i32 of x's rank, its extents equal to x's but on `axis` (any extent
// ≥ 1 there); the result is index's shape in x's element type.
InferredType GatherOp::inferResultType(RankedTensorType input,
                                       RankedTensorType index, int64_t axis) {
  if (axis < 0 || axis >= input.getRank())
    return InferredType::failure("axis " + std::to_string(axis) +
                                 " is not an axis of " + quoted(input));
  if (!index.getElementType().isInteger(32))
    return InferredType::failure("index " + quoted(index) + " must be i32");
  bool agree = index.getRank() == input.getRank();
  for (int64_t d = 0; agree && d < input.getRank(); ++d)
    agree = d == axis || index.getDimSize(d) == input.getDimSize(d);
  if (!agree)
    return InferredType::failure(
        "index " + quoted(index) + " must have the rank of " + quoted(input) +
        " and its extents on every axis but " + std::to_string(axis));
  return tensorLike(input, index.getShape());
}

LogicalResult GatherOp::verify() {
  return verifyInferredType(*this, inferResultType(tensorOf(getInput()),
                                                   tensorOf(getIndex()),
                                                   getAxis()));
}

// dx = scatter_add(zeros, index, dy, axis): each read element gets back the
// gradients of every result element that read it, in ascending order.
LogicalResult GatherOp::buildVJP(OpBuilder &b, ValueRange dy,
                                 SmallVectorImpl<Value> &grads) {
  Type xt = getInput().getType();
  Value zeros = b.create<FillOp>(getLoc(), xt, b.getF64FloatAttr(0.0));
  grads.push_back(b.create<ScatterAddOp>(getLoc(), xt, zeros, getIndex(),
                                         dy[0], getAxisAttr()));
  grads.push_back(Value());
  return success();
}

// gather's rule for index against x, src of index's shape and x's element
// type; the result is x's type.
InferredType ScatterAddOp::inferResultType(RankedTensorType input,
                                           RankedTensorType index,
                                           RankedTensorType src, int64_t axis) {
  InferredType gathered = GatherOp::inferResultType(input, index, axis);
  if (!gathered)
    return gathered;
  if (src != gathered.type)
    return InferredType::failure("src " + quoted(src) + " must be " +
                                 quoted(gathered.type) +
                                 ": index's shape in x's element type");
  return input;
}

LogicalResult ScatterAddOp::verify() {
  return verifyInferredType(
      *this, inferResultType(tensorOf(getInput()), tensorOf(getIndex()),
                             tensorOf(getSrc()), getAxis()));
}

// Linear in x and src: dx = dy, dsrc = gather(dy, index, axis).
LogicalResult ScatterAddOp::buildVJP(OpBuilder &b, ValueRange dy,
                                     SmallVectorImpl<Value> &grads) {
  grads.push_back(dy[0]);
  grads.push_back(Value());
  grads.push_back(b.create<GatherOp>(getLoc(), getSrc().getType(), dy[0],
                                     getIndex(), getAxisAttr()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions: the family's shape rule, ReduceSumOp, ReduceMeanOp,
// ReduceMaxOp, ReduceMinOp
//===----------------------------------------------------------------------===//

// `axes` (strictly increasing) are removed from the input's shape. The
// frontend sorts and normalises what the user wrote first.
InferredType vouch::inferReductionType(RankedTensorType input,
                                       ArrayRef<int64_t> axes) {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= input.getRank() ||
        (i > 0 && axes[i] <= axes[i - 1]))
      return InferredType::failure("axes must be strictly increasing axes of " +
                                       quoted(input) + ", got " +
                                       formatList(axes),
                                   /*argument=*/1);
  return tensorLike(input, shapeWithout(input, axes));
}

LogicalResult vouch::OpTrait::verifyReductionShape(Operation *op) {
  auto input = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
  if (!input || !axes || op->getNumResults() != 1) // the constraints report it
    return success();
  return verifyInferredType(op, inferReductionType(input, axes.asArrayRef()));
}

/// dx of a reduction: dy broadcast back along the reduced axes.
static Value broadcastBackReduced(OpBuilder &b, Location loc, Value dy,
                                  RankedTensorType in, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> kept;
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (!llvm::is_contained(axes, i))
      kept.push_back(i);
  return buildBroadcast(b, loc, dy, in, kept);
}

static int64_t reducedCount(RankedTensorType in, ArrayRef<int64_t> axes) {
  int64_t count = 1;
  for (int64_t axis : axes)
    count *= in.getDimSize(axis);
  return count;
}

// reduce_sum: dx = broadcast(dy)
LogicalResult ReduceSumOp::buildVJP(OpBuilder &b, ValueRange dy,
                                    SmallVectorImpl<Value> &grads) {
  grads.push_back(
      broadcastBackReduced(b, getLoc(), dy[0], tensorOf(getInput()), getAxes()));
  return success();
}

// reduce_mean over N elements: dx = broadcast(dy) / N
LogicalResult ReduceMeanOp::buildVJP(OpBuilder &b, ValueRange dy,
                                     SmallVectorImpl<Value> &grads) {
  RankedTensorType in = tensorOf(getInput());
  Value spread = broadcastBackReduced(b, getLoc(), dy[0], in, getAxes());
  grads.push_back(
      buildScale(b, getLoc(), spread, 1.0 / reducedCount(in, getAxes())));
  return success();
}

/// reduce_max / reduce_min (x reduced to y over `axes`): dx = [x == y]·
/// broadcast(dy / n), n the number of elements of the slice equal to its
/// extreme, so ties share the gradient evenly (torch.amax / torch.amin).
static void extremeVJP(OpBuilder &b, Location loc, Value x, Value y,
                       ArrayRef<int64_t> axes, Value dy,
                       SmallVectorImpl<Value> &grads) {
  RankedTensorType in = tensorOf(x);
  Value extreme = broadcastBackReduced(b, loc, y, in, axes);
  Value equal = b.create<SubOp>(
      loc, in, b.create<SubOp>(loc, in, ones(b, loc, in), greater(b, loc, in, x, extreme)),
      greater(b, loc, in, extreme, x));
  Value ties = buildReduceSum(b, loc, equal, axes);
  Value share = b.create<DivOp>(loc, y.getType(), dy, ties);
  grads.push_back(
      b.create<MulOp>(loc, in, equal, broadcastBackReduced(b, loc, share, in, axes)));
}

LogicalResult ReduceMaxOp::buildVJP(OpBuilder &b, ValueRange dy,
                                    SmallVectorImpl<Value> &grads) {
  extremeVJP(b, getLoc(), getInput(), getResult(), getAxes(), dy[0], grads);
  return success();
}

LogicalResult ReduceMinOp::buildVJP(OpBuilder &b, ValueRange dy,
                                    SmallVectorImpl<Value> &grads) {
  extremeVJP(b, getLoc(), getInput(), getResult(), getAxes(), dy[0], grads);
  return success();
}

//===----------------------------------------------------------------------===//
// MseLossOp
//===----------------------------------------------------------------------===//

// Two operands of one shape; a rank-0 result.
InferredType MseLossOp::inferResultType(RankedTensorType prediction,
                                        RankedTensorType target) {
  if (prediction.getShape() != target.getShape())
    return InferredType::failure("prediction " + quoted(prediction) +
                                 " and target " + quoted(target) +
                                 " must have the same shape");
  if (std::optional<InferredType> differ =
          differingElementTypes({prediction, target}))
    return *differ;
  return tensorLike(prediction, {});
}

LogicalResult MseLossOp::verify() {
  return verifyInferredType(*this, inferResultType(tensorOf(getPrediction()),
                                                   tensorOf(getTarget())));
}

// l = mean((p - t)²) over N elements: dp = dl · 2(p - t)/N, dt = -dp.
LogicalResult MseLossOp::buildVJP(OpBuilder &b, ValueRange dy,
                                  SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  RankedTensorType pt = tensorOf(getPrediction());
  Value diff = b.create<SubOp>(loc, pt, getPrediction(), getTarget());
  Value slope = buildScale(b, loc, diff, 2.0 / pt.getNumElements());
  Value spread = buildBroadcast(b, loc, dy[0], pt, {});
  Value dp = b.create<MulOp>(loc, pt, spread, slope);
  grads.append({dp, buildScale(b, loc, dp, -1.0)});
  return success();
}

//===----------------------------------------------------------------------===//
// CrossEntropyOp, CrossEntropyGradOp
//===----------------------------------------------------------------------===//

// logits [..., C] (C >= 1), labels [...] of i32; a rank-0 result.
InferredType CrossEntropyOp::inferResultType(RankedTensorType logits,
                                             RankedTensorType labels) {
  ArrayRef<int64_t> shape = logits.getShape();
  if (shape.empty() || shape.back() < 1)
    return InferredType::failure("logits " + quoted(logits) +
                                 " need a class axis (last) of at least one "
                                 "class");
  if (labels.getShape() != shape.drop_back())
    return InferredType::failure(
        "labels " + quoted(labels) + " must have the shape of logits " +
        quoted(logits) + " without its class axis");
  if (!labels.getElementType().isInteger(32))
    return InferredType::failure("labels " + quoted(labels) +
                                 " must be i32 class indices");
  return tensorLike(logits, {});
}

/// `classes`, where set: 1 ≤ classes ≤ the class axis's extent.
static LogicalResult verifyClasses(Operation *op, std::optional<uint64_t> classes,
                                   RankedTensorType logits) {
  if (classes && (int64_t(*classes) < 1 || logits.getRank() < 1 ||
                  int64_t(*classes) > logits.getShape().back()))
    return op->emitOpError("classes ")
           << int64_t(*classes) << " must be in [1, the class axis's extent] of "
           << quoted(logits);
  return success();
}

/// The classes counted of logits `logits`: `classes` where set, else all.
static int64_t countedClasses(std::optional<uint64_t> classes, Value logits) {
  return classes ? int64_t(*classes) : tensorOf(logits).getShape().back();
}

int64_t CrossEntropyOp::classCount() {
  return countedClasses(getClasses(), getLogits());
}
int64_t CrossEntropyGradOp::classCount() {
  return countedClasses(getClasses(), getLogits());
}

LogicalResult CrossEntropyOp::verify() {
  if (failed(verifyInferredType(*this, inferResultType(tensorOf(getLogits()),
                                                       tensorOf(getLabels())))))
    return failure();
  return verifyClasses(*this, getClasses(), tensorOf(getLogits()));
}

// l = mean over kept positions p of logsumexp(z_p) - z_p[y_p]:
// dz_p = dl · (softmax(z_p) - onehot(y_p)) / kept, one fused op; the labels
// are integers and get no gradient.
LogicalResult CrossEntropyOp::buildVJP(OpBuilder &b, ValueRange dy,
                                       SmallVectorImpl<Value> &grads) {
  Value dz = b.create<CrossEntropyGradOp>(getLoc(), getLogits().getType(),
                                          getLogits(), getLabels(), dy[0],
                                          getIgnoreIndexAttr(), getClassesAttr());
  grads.append({dz, Value()});
  return success();
}

// dz = dloss · k_p (softmax(z_p) - onehot(y_p)), k_p = [y_p kept] / kept.
// Upstream g: dL/dz_p = dloss · k_p · softmax_grad(g_p, softmax(z_p)) (onehot
// is constant), dL/ddloss = Σ g ⊙ cross_entropy_grad(z, y, 1). k_p is data:
// with zero logits, cross_entropy_grad(0, y, 1)_p = k_p (1/C - onehot), whose
// absolute values sum to k_p · 2(C-1)/C, so k is built from the labels by ops
// (C = 1: the loss is constant, dz is 0, and so is its gradient). Appends
// dL/dz, none (the labels) and dL/ddloss for cross_entropy_grad(z, y, dloss)
// with every class of z counted.
static void appendCrossEntropyGradGrads(OpBuilder &b, Location loc, Value z,
                                        Value labels, Value dloss,
                                        IntegerAttr ignoreIndex, Value g,
                                        SmallVectorImpl<Value> &grads) {
  RankedTensorType zt = tensorOf(z);
  RankedTensorType lt = tensorOf(dloss);
  int64_t classAxis = zt.getRank() - 1, classes = zt.getShape().back();
  Value one = b.create<FillOp>(loc, lt, b.getF64FloatAttr(1.0));
  Value perUnit = b.create<CrossEntropyGradOp>(loc, zt, z, labels, one,
                                               ignoreIndex, IntegerAttr());
  Value ddloss = buildReduceSum(
      b, loc, b.create<MulOp>(loc, zt, g, perUnit),
      llvm::to_vector(llvm::seq<int64_t>(0, zt.getRank())));
  if (classes == 1) {
    grads.append({b.create<FillOp>(loc, zt, b.getF64FloatAttr(0.0)), Value(),
                  ddloss});
    return;
  }
  Value zero = b.create<FillOp>(loc, zt, b.getF64FloatAttr(0.0));
  Value uniform = b.create<CrossEntropyGradOp>(loc, zt, zero, labels, one,
                                               ignoreIndex, IntegerAttr());
  Value absSum = buildReduceSum(b, loc, b.create<AbsOp>(loc, zt, uniform),
                                {classAxis});
  Value keep = buildScale(b, loc, absSum,
                          double(classes) / (2.0 * double(classes - 1)));
  Value p = b.create<SoftmaxOp>(loc, zt, z, b.getI64IntegerAttr(classAxis));
  Value jvp = b.create<SoftmaxGradOp>(loc, zt, g, p,
                                      b.getI64IntegerAttr(classAxis));
  auto rowDims = llvm::to_vector(llvm::seq<int64_t>(0, classAxis));
  Value scale = b.create<MulOp>(loc, zt,
                                buildBroadcast(b, loc, keep, zt, rowDims),
                                buildBroadcast(b, loc, dloss, zt, {}));
  grads.append({b.create<MulOp>(loc, zt, scale, jvp), Value(), ddloss});
}

// With `classes` short of the class axis (vouch-pad-classes' padding), the
// rule runs on the counted entries, sliced out of the logits and the
// upstream gradient, and the logits' gradient is scattered back into zeros
// (the padding neither enters the loss nor gets a gradient).
LogicalResult CrossEntropyGradOp::buildVJP(OpBuilder &b, ValueRange dy,
                                           SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  RankedTensorType padded = tensorOf(getLogits());
  const int64_t axis = padded.getRank() - 1, counted = classCount();
  if (counted == padded.getShape().back()) {
    appendCrossEntropyGradGrads(b, loc, getLogits(), getLabels(), getDloss(),
                                getIgnoreIndexAttr(), dy[0], grads);
    return success();
  }
  SmallVector<int64_t> shape(padded.getShape());
  shape.back() = counted;
  auto countedType = RankedTensorType::get(shape, padded.getElementType());
  // The counted entries: [0, counted) of the class axis, step 1.
  IntegerAttr axisAttr = b.getI64IntegerAttr(axis), start = b.getI64IntegerAttr(0),
              end = b.getI64IntegerAttr(counted), step = b.getI64IntegerAttr(1);
  auto cut = [&](Value v) -> Value {
    return b.create<SliceOp>(loc, countedType, v, axisAttr, start, end, step);
  };
  SmallVector<Value> inner;
  appendCrossEntropyGradGrads(b, loc, cut(getLogits()), getLabels(), getDloss(),
                              getIgnoreIndexAttr(), cut(dy[0]), inner);
  grads.append({b.create<SliceScatterOp>(loc, padded, inner[0], axisAttr, start,
                                         end, step),
                Value(), inner[2]});
  return success();
}

LogicalResult CrossEntropyGradOp::verify() {
  InferredType loss = CrossEntropyOp::inferResultType(tensorOf(getLogits()),
                                                      tensorOf(getLabels()));
  if (!loss.type)
    return emitOpError(loss.message);
  if (getDloss().getType() != loss.type)
    return emitOpError("dloss ")
           << quoted(getDloss().getType()) << " must be " << quoted(loss.type);
  RankedTensorType logits = tensorOf(getLogits()), result = tensorOf(getResult());
  if (result != logits && !storedAsBf16(result, logits))
    return emitOpError("result ")
           << quoted(getResult().getType()) << " must be the logits' type "
           << quoted(getLogits().getType())
           << " (or, for f32 logits, their shape in bf16)";
  return verifyClasses(*this, getClasses(), tensorOf(getLogits()));
}

//===----------------------------------------------------------------------===//
// TableGen'd op definitions
//===----------------------------------------------------------------------===//

#define GET_OP_CLASSES
#include "ir/VouchOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Conversions: CastOp
//===----------------------------------------------------------------------===//

InferredType CastOp::inferResultType(RankedTensorType input, Type element) {
  if (!element.isF32() && !element.isF64() && !element.isInteger(32))
    return InferredType::failure("converts to f32, f64 or i32, not " +
                                     quoted(element),
                                 /*argument=*/-1, /*continuesName=*/true);
  return RankedTensorType::get(input.getShape(), element);
}
LogicalResult CastOp::verify() {
  return verifyInferredType(
      *this, inferResultType(tensorOf(getInput()),
                             tensorOf(getResult()).getElementType()));
}
// Real -> real: dy converted back to the input's type (the identity at run
// time). An integer input gets no gradient, and an integer result has none
// to give.
LogicalResult CastOp::buildVJP(OpBuilder &b, ValueRange dy,
                               SmallVectorImpl<Value> &grads) {
  RankedTensorType in = tensorOf(getInput());
  if (!isa<FloatType>(in.getElementType()) ||
      !isa<FloatType>(getType().getElementType())) {
    grads.push_back(Value());
    return success();
  }
  grads.push_back(in == dy[0].getType()
                      ? dy[0]
                      : b.create<CastOp>(getLoc(), in, dy[0]).getResult());
  return success();
}

//===----------------------------------------------------------------------===//
// Conversions: RoundBf16Op
//===----------------------------------------------------------------------===//

void RoundBf16Op::build(OpBuilder &b, OperationState &state, Value input) {
  RankedTensorType in = tensorOf(input);
  build(b, state, RankedTensorType::get(in.getShape(), b.getBF16Type()), input);
}

LogicalResult RoundBf16Op::verify() {
  if (tensorOf(getResult()).getShape() != tensorOf(getInput()).getShape())
    return emitOpError("result ")
           << quoted(getResult().getType()) << " must have the input's shape "
           << quoted(getInput().getType());
  return success();
}

//===----------------------------------------------------------------------===//
// Normalizations: SoftmaxOp, LogSoftmaxOp, SoftmaxGradOp, LogSoftmaxGradOp,
// MaskedSoftmaxOp, LayerNormOp, LayerNormGradOp
//===----------------------------------------------------------------------===//

/// The VJP of f(inputs), f written as vouch ops by `build` (one value per
/// result of the op being differentiated, `dys` their gradients in the same
/// order): builds them, then applies their own VJP rules last to first (as
/// vouch-autodiff does for the model), and appends one gradient per input
/// (null where none flows). A built op with several results gets a zero
/// gradient for each result that none flows to, as in vouch-autodiff. The
/// second-order rules of the *_grad ops are this, so they are exactly as right
/// as the first-order rules of the ops they are made of.
static LogicalResult vjpThroughOps(OpBuilder &b, ValueRange inputs,
                                   function_ref<SmallVector<Value>()> build,
                                   ValueRange dys,
                                   SmallVectorImpl<Value> &grads) {
  Block *block = b.getInsertionBlock();
  Block::iterator point = b.getInsertionPoint();
  Operation *before = point == block->begin() ? nullptr : &*std::prev(point);
  Operation *stop = point == block->end() ? nullptr : &*point;
  SmallVector<Value> outs = build();
  assert(outs.size() == dys.size() && "one gradient per built result");
  SmallVector<Operation *> built;
  for (Operation *op = before ? before->getNextNode() : &block->front();
       op && op != stop; op = op->getNextNode())
    built.push_back(op);
  llvm::DenseMap<Value, Value> g;
  for (auto [out, dy] : llvm::zip(outs, dys)) {
    Value &slot = g[out];
    slot = slot ? b.create<AddOp>(out.getLoc(), dy.getType(), slot, dy) : dy;
  }
  for (Operation *op : llvm::reverse(built)) {
    auto vjp = dyn_cast<VJPOpInterface>(op);
    if (!vjp || llvm::none_of(op->getResults(), [&](Value r) {
          return bool(g.lookup(r));
        })) // a constant (fill) or off the path to the outputs
      continue;
    SmallVector<Value> resultGrads;
    for (Value r : op->getResults()) {
      Value gr = g.lookup(r);
      resultGrads.push_back(gr ? gr
                               : b.create<FillOp>(op->getLoc(), r.getType(),
                                                  b.getF64FloatAttr(0.0)));
    }
    SmallVector<Value> operandGrads;
    if (failed(vjp.buildVJP(b, resultGrads, operandGrads)))
      return failure();
    for (auto [operand, d] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!d)
        continue;
      Value &slot = g[operand];
      slot = slot ? b.create<AddOp>(op->getLoc(), d.getType(), slot, d) : d;
    }
  }
  for (Value input : inputs)
    grads.push_back(g.lookup(input));
  return success();
}

/// vjpThroughOps for a single-result f.
static LogicalResult vjpThroughOps(OpBuilder &b, ValueRange inputs,
                                   function_ref<Value()> build, Value dy,
                                   SmallVectorImpl<Value> &grads) {
  return vjpThroughOps(
      b, inputs, [&]() -> SmallVector<Value> { return {build()}; },
      ValueRange(dy), grads);
}

//===----------------------------------------------------------------------===//
// LinearWeightGradOp
//===----------------------------------------------------------------------===//

// grad [rows, out], input [rows, in] -> weight_grad [out, in], bias_grad [out]
static InferredType inferLinearWeightGradType(RankedTensorType grad,
                                              RankedTensorType input) {
  if (grad.getRank() != 2 || input.getRank() != 2)
    return InferredType::failure("grad " + quoted(grad) + " and input " +
                                 quoted(input) +
                                 " must be rank 2 ([rows, out], [rows, in])");
  if (grad.getDimSize(0) != input.getDimSize(0))
    return InferredType::failure("grad " + quoted(grad) + " and input " +
                                 quoted(input) + " differ in rows");
  if (std::optional<InferredType> differ = differingProductOperands({grad, input}))
    return *differ;
  return productLike(grad, {grad.getDimSize(1), input.getDimSize(1)});
}

void LinearWeightGradOp::build(OpBuilder &b, OperationState &state, Value grad,
                               Value input) {
  RankedTensorType g = tensorOf(grad);
  InferredType weight = inferLinearWeightGradType(g, tensorOf(input));
  assert(weight && "an ill-shaped linear_weight_grad");
  build(b, state, weight.type, productLike(g, {g.getDimSize(1)}), grad, input);
}

LogicalResult LinearWeightGradOp::verify() {
  RankedTensorType g = tensorOf(getGrad());
  InferredType weight = inferLinearWeightGradType(g, tensorOf(getInput()));
  if (!weight)
    return emitOpError(weight.message);
  if (tensorOf(getWeightGrad()) != weight.type)
    return emitOpError("weight_grad has type ")
           << getWeightGrad().getType() << ", expected " << weight.type;
  RankedTensorType bias = productLike(g, {g.getDimSize(1)});
  if (tensorOf(getBiasGrad()) != bias)
    return emitOpError("bias_grad has type ")
           << getBiasGrad().getType() << ", expected " << bias;
  return success();
}

// Through the two ops it stands for: gradᵀ·input and grad's column sums.
LogicalResult LinearWeightGradOp::buildVJP(OpBuilder &b, ValueRange dy,
                                           SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value grad = getGrad(), input = getInput();
  return vjpThroughOps(
      b, {grad, input},
      [&]() -> SmallVector<Value> {
        return {buildMatmul(b, loc, grad, true, input, false),
                buildReduceSum(b, loc, grad, {0})};
      },
      dy, grads);
}

/// `value` summed along `axis` and broadcast back to its own shape.
static Value rowSum(OpBuilder &b, Location loc, Value value, int64_t axis) {
  return broadcastBackReduced(b, loc, buildReduceSum(b, loc, value, {axis}),
                              tensorOf(value), {axis});
}

static InferredType inferRowType(RankedTensorType input, int64_t axis) {
  if (input.getRank() < 1 || axis < 0 || axis >= input.getRank())
    return InferredType::failure("axis " + std::to_string(axis) +
                                     " is out of range for " + quoted(input) +
                                     " (rank " +
                                     std::to_string(input.getRank()) + ")",
                                 /*argument=*/1);
  return input;
}

InferredType SoftmaxOp::inferResultType(RankedTensorType input, int64_t axis) {
  return inferRowType(input, axis);
}
LogicalResult SoftmaxOp::verify() {
  return verifyInferredType(
      *this, inferResultType(tensorOf(getInput()), getAxis()));
}
// softmax: dx = y · (dy - Σ_axis dy·y), one softmax_grad op.
LogicalResult SoftmaxOp::buildVJP(OpBuilder &b, ValueRange dy,
                                  SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<SoftmaxGradOp>(getLoc(), getType(), dy[0],
                                          getResult(), getAxisAttr()));
  return success();
}

InferredType LogSoftmaxOp::inferResultType(RankedTensorType input,
                                           int64_t axis) {
  return inferRowType(input, axis);
}
LogicalResult LogSoftmaxOp::verify() {
  return verifyInferredType(
      *this, inferResultType(tensorOf(getInput()), getAxis()));
}
// log_softmax: dx = dy - exp(y) · Σ_axis dy, one log_softmax_grad op.
LogicalResult LogSoftmaxOp::buildVJP(OpBuilder &b, ValueRange dy,
                                     SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<LogSoftmaxGradOp>(getLoc(), getType(), dy[0],
                                             getResult(), getAxisAttr()));
  return success();
}

static InferredType inferRowGradType(RankedTensorType grad,
                                     RankedTensorType output, int64_t axis) {
  if (grad != output)
    return InferredType::failure("grad " + quoted(grad) +
                                 " and output " + quoted(output) +
                                 " must have one type");
  return inferRowType(output, axis);
}

InferredType SoftmaxGradOp::inferResultType(RankedTensorType grad,
                                            RankedTensorType output,
                                            int64_t axis) {
  return inferRowGradType(grad, output, axis);
}
LogicalResult SoftmaxGradOp::verify() {
  return verifyInferredType(
      *this, inferResultType(tensorOf(getGrad()), tensorOf(getOutput()),
                             getAxis()));
}
// dx = y · (g - Σ g·y) is linear in g and bilinear in (g, y): its VJP is
// that of the same expression written as mul, reduce_sum, broadcast, sub.
LogicalResult SoftmaxGradOp::buildVJP(OpBuilder &b, ValueRange dy,
                                      SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value g = getGrad(), y = getOutput();
  Type t = getType();
  int64_t axis = getAxis();
  return vjpThroughOps(
      b, {g, y},
      [&]() -> Value {
        Value s = rowSum(b, loc, b.create<MulOp>(loc, t, g, y), axis);
        return b.create<MulOp>(loc, t, y, b.create<SubOp>(loc, t, g, s));
      },
      dy[0], grads);
}

InferredType LogSoftmaxGradOp::inferResultType(RankedTensorType grad,
                                               RankedTensorType output,
                                               int64_t axis) {
  return inferRowGradType(grad, output, axis);
}
LogicalResult LogSoftmaxGradOp::verify() {
  return verifyInferredType(
      *this, inferResultType(tensorOf(getGrad()), tensorOf(getOutput()),
                             getAxis()));
}
// dx = g - exp(y) · Σ g, differentiated through those ops.
LogicalResult LogSoftmaxGradOp::buildVJP(OpBuilder &b, ValueRange dy,
                                         SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value g = getGrad(), y = getOutput();
  Type t = getType();
  int64_t axis = getAxis();
  return vjpThroughOps(
      b, {g, y},
      [&]() -> Value {
        Value s = rowSum(b, loc, g, axis);
        return b.create<SubOp>(
            loc, t, g, b.create<MulOp>(loc, t, b.create<ExpOp>(loc, t, y), s));
      },
      dy[0], grads);
}

// masked_softmax(x, mask): the mask is i1 and broadcasts to x (NumPy's
// rules: aligned from the last axis, each of its extents 1 or x's).
InferredType MaskedSoftmaxOp::inferResultType(RankedTensorType input,
                                              RankedTensorType mask,
                                              int64_t axis) {
  if (!mask.getElementType().isInteger(1))
    return InferredType::failure("the mask must be i1 (true keeps an "
                                 "element), got " + quoted(mask));
  bool fits = mask.getRank() <= input.getRank();
  for (int64_t k = 1; fits && k <= mask.getRank(); ++k) {
    int64_t m = mask.getDimSize(mask.getRank() - k);
    fits = m == 1 || m == input.getDimSize(input.getRank() - k);
  }
  if (!fits)
    return InferredType::failure("the mask " + quoted(mask) +
                                 " does not broadcast to " + quoted(input));
  return inferRowType(input, axis);
}
LogicalResult MaskedSoftmaxOp::verify() {
  return verifyInferredType(
      *this, inferResultType(tensorOf(getInput()), tensorOf(getMask()),
                             getAxis()));
}
// y is 0 wherever the mask blocks, so dx = y · (dy - Σ dy·y) is softmax's
// VJP over the kept elements, 0 on blocked ones and on fully blocked rows:
// one softmax_grad op. The mask gets no gradient.
LogicalResult MaskedSoftmaxOp::buildVJP(OpBuilder &b, ValueRange dy,
                                        SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<SoftmaxGradOp>(getLoc(), getType(), dy[0],
                                          getResult(), getAxisAttr()));
  grads.push_back(Value());
  return success();
}

/// weight / bias of layer_norm: [D], D the input's last extent.
static std::optional<InferredType>
checkRowParam(RankedTensorType input, RankedTensorType param, StringRef what) {
  int64_t d = input.getDimSize(input.getRank() - 1);
  if (param && (param.getRank() != 1 || param.getDimSize(0) != d))
    return InferredType::failure(what.str() + " " + quoted(param) +
                                 " does not match input " + quoted(input) +
                                 ": expected [" + std::to_string(d) +
                                 "] (the input's last extent)");
  return std::nullopt;
}

InferredType LayerNormOp::inferResultType(RankedTensorType input,
                                          RankedTensorType weight,
                                          RankedTensorType bias) {
  if (input.getRank() < 1)
    return InferredType::failure("normalises the last axis of a tensor of "
                                 "rank ≥ 1, got " + quoted(input));
  for (auto [param, what] : {std::pair{weight, "weight"}, {bias, "bias"}})
    if (std::optional<InferredType> wrong = checkRowParam(input, param, what))
      return *wrong;
  if (std::optional<InferredType> differ =
          differingElementTypes({input, weight, bias}))
    return *differ;
  return input;
}

static LogicalResult verifyEps(Operation *op, double eps) {
  if (!std::isfinite(eps) || eps < 0)
    return op->emitOpError("eps must be a finite number ≥ 0, got ") << shown(eps);
  return success();
}

void LayerNormOp::build(OpBuilder &b, OperationState &state, Type result,
                        Value input, Value weight, Value bias, FloatAttr eps) {
  build(b, state, result, /*sum=*/Type(), input, /*addend=*/Value(), weight, bias,
        eps);
}

LogicalResult LayerNormOp::verify() {
  Value w = getWeight(), bias = getBias(), addend = getAddend(), sum = getSum();
  if (failed(verifyEps(*this, getEps().convertToDouble())))
    return failure();
  if (bool(addend) != bool(sum))
    return emitOpError(addend ? "has an addend but no sum result"
                              : "has a sum result but no addend");
  if (addend && tensorOf(addend) != tensorOf(getInput()))
    return emitOpError("addend ") << addend.getType() << " and input "
                                  << getInput().getType() << " must have one type";
  if (sum && sum.getType() != getInput().getType())
    return emitOpError("sum has type ") << sum.getType() << ", expected "
                                        << getInput().getType();
  InferredType inferred = inferResultType(tensorOf(getInput()),
                                          w ? tensorOf(w) : RankedTensorType(),
                                          bias ? tensorOf(bias) : RankedTensorType());
  if (inferred && storedAsBf16(tensorOf(getResult()), inferred.type))
    return success();
  return verifyInferredType(*this, inferred);
}

/// The leading axes of `t` (all but the last): the rows of a layer norm.
static SmallVector<int64_t> leadingAxes(RankedTensorType t) {
  return llvm::to_vector(llvm::seq<int64_t>(0, t.getRank() - 1));
}

// y = x̂ · w + b, x̂ normalised per row: dx, dw = Σ_rows dy · x̂ and
// db = Σ_rows dy are the results of one layer_norm_grad op (one kernel on
// cuda, the statistics recomputed). With an addend, x = input + addend is
// the sum result, read back for the statistics; x's whole gradient is dx
// plus the sum's own (its other readers'), which layer_norm_grad adds as its
// addend, and it is the gradient of both terms.
LogicalResult LayerNormOp::buildVJP(OpBuilder &b, ValueRange dy,
                                    SmallVectorImpl<Value> &grads) {
  Value w = getWeight(), bias = getBias(), sum = getSum();
  Value rest;
  if (sum) {
    rest = dy[1];
    // The autodiff's zero for a sum nobody else reads: nothing to add.
    if (auto fill = rest.getDefiningOp<FillOp>())
      if (fill.getValue().convertToDouble() == 0.0)
        rest = Value();
  }
  auto grad = b.create<LayerNormGradOp>(getLoc(), dy[0], sum ? sum : getInput(), w,
                                        bool(bias), getEpsAttr(), rest);
  grads.push_back(grad.getDx());
  if (sum)
    grads.push_back(grad.getDx());
  if (w)
    grads.push_back(grad.getWeightGrad());
  if (bias)
    grads.push_back(grad.getBiasGrad());
  return success();
}

void LayerNormGradOp::build(OpBuilder &b, OperationState &state, Value grad,
                            Value input, Value weight, bool withBias,
                            FloatAttr eps, Value addend) {
  RankedTensorType t = tensorOf(input);
  auto row = RankedTensorType::get({t.getShape().back()}, t.getElementType());
  SmallVector<Type> params;
  if (weight)
    params.push_back(row);
  if (withBias)
    params.push_back(row);
  build(b, state, t, params, grad, input, weight, addend,
        withBias ? b.getUnitAttr() : UnitAttr(), eps);
}

/// What layer_norm_grad and batch_norm_grad verify alike: grad has the
/// input's type, one result per dx / dweight / dbias asked for, dx of the type
/// the forward op infers, and each parameter gradient of type `rowOf(input)`
/// (skipped when that is null: an input the forward's rule refused).
template <class ForwardOp, class GradOp>
static LogicalResult
verifyNormalizationGrad(GradOp op,
                        function_ref<RankedTensorType(RankedTensorType)> rowOf) {
  RankedTensorType g = tensorOf(op.getGrad()), x = tensorOf(op.getInput());
  if (g != x)
    return op.emitOpError("grad ") << g << " and input " << x
                                   << " must have one type";
  Value w = op.getWeight();
  size_t expected = (w ? 1 : 0) + (op.getWithBias() ? 1 : 0);
  if (op.getParamGrads().size() != expected)
    return op.emitOpError("has ")
           << op->getNumResults() << " results, expected " << expected + 1
           << " (dx" << (w ? ", dweight" : "")
           << (op.getWithBias() ? ", dbias" : "") << ")";
  if (failed(verifyInferredType(
          op, ForwardOp::inferResultType(x, w ? tensorOf(w) : RankedTensorType(),
                                         RankedTensorType()))))
    return failure();
  RankedTensorType row = rowOf(x);
  if (!row)
    return success(); // reported above
  for (Value p : op.getParamGrads())
    if (tensorOf(p) != row)
      return op.emitOpError("parameter gradient ")
             << p.getType() << " does not match input " << x << ": expected "
             << row;
  return success();
}

LogicalResult LayerNormGradOp::verify() {
  if (failed(verifyEps(*this, getEps().convertToDouble())))
    return failure();
  if (Value a = getAddend(); a && tensorOf(a) != tensorOf(getInput()))
    return emitOpError("addend ") << a.getType() << " and input "
                                  << getInput().getType() << " must have one type";
  return verifyNormalizationGrad<LayerNormOp>(*this, [](RankedTensorType x) {
    return x.getRank() < 1 ? RankedTensorType()
                           : RankedTensorType::get({x.getShape().back()},
                                                   x.getElementType());
  });
}

// The second-order rule: each result written out as reductions and pointwise
// ops (mean, deviation, rstd = (var + eps)^-1/2, x̂, g = grad · weight, then
// dx = rstd · (g - mean(g) - x̂ · mean(g · x̂)), dw = Σ_rows grad · x̂,
// db = Σ_rows grad) and differentiated through them.
LogicalResult LayerNormGradOp::buildVJP(OpBuilder &b, ValueRange dy,
                                        SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value grad = getGrad(), x = getInput(), w = getWeight();
  RankedTensorType t = tensorOf(x);
  int64_t last = t.getRank() - 1;
  double inv = 1.0 / static_cast<double>(t.getDimSize(last));
  double eps = getEps().convertToDouble();
  Value addend = getAddend();
  SmallVector<Value> inputs{grad, x};
  if (w)
    inputs.push_back(w);
  if (addend)
    inputs.push_back(addend);
  return vjpThroughOps(
      b, inputs,
      [&]() -> SmallVector<Value> {
        auto mean = [&](Value v) { return buildScale(b, loc, rowSum(b, loc, v, last), inv); };
        Value xc = b.create<SubOp>(loc, t, x, mean(x));
        Value var = mean(b.create<MulOp>(loc, t, xc, xc));
        Value shifted = b.create<AddOp>(
            loc, t, var, b.create<FillOp>(loc, t, b.getF64FloatAttr(eps)));
        Value rstd = b.create<PowOp>(loc, t, shifted, b.getF64FloatAttr(-0.5));
        Value xhat = b.create<MulOp>(loc, t, xc, rstd);
        Value g = w ? b.create<MulOp>(loc, t, grad,
                                      buildBroadcast(b, loc, w, t, {last}))
                    : grad;
        Value inner = b.create<SubOp>(
            loc, t, b.create<SubOp>(loc, t, g, mean(g)),
            b.create<MulOp>(loc, t, xhat,
                            mean(b.create<MulOp>(loc, t, g, xhat))));
        Value dx = b.create<MulOp>(loc, t, rstd, inner);
        SmallVector<Value> outs{addend ? b.create<AddOp>(loc, t, addend, dx) : dx};
        if (w)
          outs.push_back(buildReduceSum(
              b, loc, b.create<MulOp>(loc, t, grad, xhat), leadingAxes(t)));
        if (getWithBias())
          outs.push_back(buildReduceSum(b, loc, grad, leadingAxes(t)));
        return outs;
      },
      dy, grads);
}

//===----------------------------------------------------------------------===//
// Batch normalisation: BatchNormOp, BatchNormGradOp
//===----------------------------------------------------------------------===//
// Channels are axis 1 of [N, C, *spatial]; each channel's statistics are over
// its M = N·spatial elements. The running statistics are vouch.state values
// the op updates in place in training steps (its description); the VJP rules
// below are those of a training step, the only forward a backward follows.

/// The axes a channel's statistics run over: every axis but 1.
static SmallVector<int64_t> nonChannelAxes(RankedTensorType t) {
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < t.getRank(); ++i)
    if (i != 1)
      axes.push_back(i);
  return axes;
}

/// A channel's element count M = N·spatial.
static int64_t perChannel(RankedTensorType t) {
  return t.getNumElements() / t.getDimSize(1);
}

/// v [C] broadcast along the channel axis of `like` [N, C, ...].
static Value channelBroadcast(OpBuilder &b, Location loc, Value v,
                              RankedTensorType like) {
  return buildBroadcast(b, loc, v, like, {1});
}

/// [C] of t's element type: a channel's statistic.
static RankedTensorType channelType(RankedTensorType t) {
  return RankedTensorType::get({t.getDimSize(1)}, t.getElementType());
}

InferredType BatchNormOp::inferResultType(RankedTensorType input,
                                          RankedTensorType weight,
                                          RankedTensorType bias) {
  if (input.getRank() < 2)
    return InferredType::failure(
        "normalises the channels (axis 1) of [N, C, *spatial] (rank ≥ 2), "
        "got " + quoted(input));
  int64_t c = input.getDimSize(1);
  for (auto [param, what, index] :
       {std::tuple{weight, "weight", 1}, {bias, "bias", 2}})
    if (param && (param.getRank() != 1 || param.getDimSize(0) != c))
      return InferredType::failure(std::string(what) + " " + quoted(param) +
                                       " does not match input " +
                                       quoted(input) + ": expected [" +
                                       std::to_string(c) +
                                       "] (the input's channels, axis 1)",
                                   index);
  if (std::optional<InferredType> differ =
          differingElementTypes({input, weight, bias}))
    return *differ;
  if (perChannel(input) < 2)
    return InferredType::failure(
        "needs more than one value per channel to train (its variance "
        "divides by M - 1): input " + quoted(input) +
        " has 1 (N · spatial); torch refuses it too");
  return input;
}

LogicalResult BatchNormOp::verify() {
  if (failed(verifyEps(*this, getEps().convertToDouble())))
    return failure();
  double momentum = getMomentum().convertToDouble();
  if (!(momentum >= 0.0 && momentum <= 1.0))
    return emitOpError("momentum must be a number in [0, 1], got ")
           << shown(momentum);
  Value w = getWeight(), bias = getBias();
  RankedTensorType x = tensorOf(getInput());
  if (failed(verifyInferredType(
          *this, inferResultType(x, w ? tensorOf(w) : RankedTensorType(),
                                 bias ? tensorOf(bias) : RankedTensorType()))))
    return failure();
  RankedTensorType row = channelType(x);
  for (auto [v, what] : {std::pair{getMean(), "mean"}, {getRstd(), "rstd"},
                         {getRunningMean(), "running_mean"},
                         {getRunningVar(), "running_var"}})
    if (v.getType() != row)
      return emitOpError(what) << " " << v.getType() << " must be " << row
                               << " (one value per channel of " << x << ")";
  for (auto [v, what] : {std::pair{getRunningMean(), "running_mean"},
                         {getRunningVar(), "running_var"}})
    if (!v.getDefiningOp<StateOp>())
      return emitOpError(what) << " must be a vouch.state (the running "
                                  "statistics persist across steps)";
  return success();
}

// y's gradient is one batch_norm_grad op (one kernel on cuda) from the saved
// batch statistics. The statistics are results too: a gradient reaching them
// (none does in a model: only batch_norm_grad reads them) adds their own
// terms, d mean / d x = 1 / M and d rstd / d x = -rstd³ · (x - mean) / M.
// The running statistics get none.
LogicalResult BatchNormOp::buildVJP(OpBuilder &b, ValueRange dy,
                                    SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value x = getInput(), w = getWeight(), bias = getBias();
  RankedTensorType t = tensorOf(x);
  auto grad = b.create<BatchNormGradOp>(loc, dy[0], x, getMean(), getRstd(),
                                        w, bool(bias));
  Value dx = grad.getDx();
  auto isZero = [](Value v) {
    auto fill = v.getDefiningOp<FillOp>();
    return fill && fill.getValue().convertToDouble() == 0.0;
  };
  double inv = 1.0 / static_cast<double>(perChannel(t));
  if (!isZero(dy[1]))
    dx = b.create<AddOp>(
        loc, t, dx,
        channelBroadcast(b, loc, buildScale(b, loc, dy[1], inv), t));
  if (!isZero(dy[2])) {
    RankedTensorType row = channelType(t);
    Value r = getRstd();
    Value cube = b.create<MulOp>(loc, row, r, b.create<MulOp>(loc, row, r, r));
    Value coef =
        buildScale(b, loc, b.create<MulOp>(loc, row, dy[2], cube), -inv);
    Value centred =
        b.create<SubOp>(loc, t, x, channelBroadcast(b, loc, getMean(), t));
    dx = b.create<AddOp>(
        loc, t, dx,
        b.create<MulOp>(loc, t, channelBroadcast(b, loc, coef, t), centred));
  }
  grads.push_back(dx);
  if (w)
    grads.push_back(grad.getWeightGrad());
  if (bias)
    grads.push_back(grad.getBiasGrad());
  grads.append({Value(), Value()}); // running_mean, running_var
  return success();
}

void BatchNormGradOp::build(OpBuilder &b, OperationState &state, Value grad,
                            Value input, Value mean, Value rstd, Value weight,
                            bool withBias) {
  RankedTensorType t = tensorOf(input);
  SmallVector<Type> params;
  if (weight)
    params.push_back(channelType(t));
  if (withBias)
    params.push_back(channelType(t));
  build(b, state, t, params, grad, input, mean, rstd, weight,
        withBias ? b.getUnitAttr() : UnitAttr());
}

LogicalResult BatchNormGradOp::verify() {
  if (failed(verifyNormalizationGrad<BatchNormOp>(*this, channelType)))
    return failure();
  RankedTensorType x = tensorOf(getInput()), row = channelType(x);
  for (auto [v, what] : {std::pair{getMean(), "mean"}, {getRstd(), "rstd"}})
    if (v.getType() != row)
      return emitOpError(what) << " " << v.getType() << " must be " << row
                               << " (one value per channel of " << x << ")";
  return success();
}

// The second-order rule: the results written out as broadcasts, reductions
// over every axis but 1 and pointwise ops of the five operands (x̂ = (x -
// mean)·rstd, then dx = weight·rstd·(grad - mean(grad) - x̂·mean(grad·x̂)),
// dweight = Σ grad·x̂, dbias = Σ grad) and differentiated through them. mean
// and rstd are operands of their own here (the gradient check perturbs each);
// what reaches them flows into batch_norm's rule for its statistics.
LogicalResult BatchNormGradOp::buildVJP(OpBuilder &b, ValueRange dy,
                                        SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value grad = getGrad(), x = getInput(), w = getWeight();
  Value mean = getMean(), rstd = getRstd();
  RankedTensorType t = tensorOf(x), row = channelType(t);
  SmallVector<int64_t> axes = nonChannelAxes(t);
  double inv = 1.0 / static_cast<double>(perChannel(t));
  SmallVector<Value> inputs{grad, x, mean, rstd};
  if (w)
    inputs.push_back(w);
  return vjpThroughOps(
      b, inputs,
      [&]() -> SmallVector<Value> {
        auto bc = [&](Value v) { return channelBroadcast(b, loc, v, t); };
        auto sum = [&](Value v) { return buildReduceSum(b, loc, v, axes); };
        auto meanOf = [&](Value v) { return bc(buildScale(b, loc, sum(v), inv)); };
        Value xhat = b.create<MulOp>(
            loc, t, b.create<SubOp>(loc, t, x, bc(mean)), bc(rstd));
        Value gx = b.create<MulOp>(loc, t, grad, xhat);
        Value inner = b.create<SubOp>(
            loc, t, b.create<SubOp>(loc, t, grad, meanOf(grad)),
            b.create<MulOp>(loc, t, xhat, meanOf(gx)));
        Value coef = w ? b.create<MulOp>(loc, row, w, rstd).getResult() : rstd;
        SmallVector<Value> outs{b.create<MulOp>(loc, t, bc(coef), inner)};
        if (w)
          outs.push_back(sum(gx));
        if (getWithBias())
          outs.push_back(sum(grad));
        return outs;
      },
      dy, grads);
}

//===----------------------------------------------------------------------===//
// Random ops: dropout, rand_uniform, bernoulli_mask
//===----------------------------------------------------------------------===//
// Their bits come from runtime/cuda/kernels/counter_rng.h at run time; the
// compiler knows only the attributes' ranges and that dropout, for a fixed
// step, is linear in x.

namespace {
LogicalResult verifyRandomAttrs(Operation *op, double p, bool pMayBeOne,
                                int64_t ordinal) {
  if (!(p >= 0.0 && (pMayBeOne ? p <= 1.0 : p < 1.0))) {
    std::ostringstream shown; // 1.5, not 1.500000e+00
    shown << p;
    return op->emitOpError() << "p must be in [0, " << (pMayBeOne ? "1]" : "1)")
                             << ", got " << shown.str();
  }
  if (ordinal < 0)
    return op->emitOpError() << "ordinal must be non-negative, got " << ordinal;
  return success();
}
} // namespace

LogicalResult DropoutOp::verify() {
  if (failed(verifyRandomAttrs(*this, getP().convertToDouble(), false,
                               getOrdinal())))
    return failure();
  if (getInput().getType() != getResult().getType())
    return emitOpError() << "result type " << getResult().getType()
                         << " differs from the input's " << getInput().getType();
  return success();
}

// dropout(x) = x · m with m the step's mask: dx = dy · m, i.e. dropout of dy
// with the same ordinal (the mask is recomputed from the counter, not saved).
LogicalResult DropoutOp::buildVJP(OpBuilder &b, ValueRange dy,
                                  SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<DropoutOp>(getLoc(), getResult().getType(), dy[0],
                                      getPAttr(), getOrdinalAttr()));
  return success();
}

LogicalResult BernoulliMaskOp::verify() {
  return verifyRandomAttrs(*this, getP().convertToDouble(), true, getOrdinal());
}

LogicalResult RandUniformOp::verify() {
  return verifyRandomAttrs(*this, 0.0, true, getOrdinal());
}

//===----------------------------------------------------------------------===//
// CausalMaskOp
//===----------------------------------------------------------------------===//

// An i1 matrix: no operands, so no VJP (nothing flows into it).
LogicalResult CausalMaskOp::verify() {
  RankedTensorType type = tensorOf(getResult());
  if (type.getRank() != 2 || !type.getElementType().isInteger(1))
    return emitOpError("result must be an i1 matrix [rows, columns], got ")
           << type;
  return success();
}

//===----------------------------------------------------------------------===//
// ScaledDotProductAttentionOp
//===----------------------------------------------------------------------===//

// q [..., Tq, D], k [..., Tk, D], v [..., Tk, Dv] with one set of leading
// axes (the frontend refuses others: torch.matmul's broadcasting is the
// caller's to write) -> [..., Tq, Dv]; the mask, if any, is i1 and
// broadcasts to the scores [..., Tq, Tk] (masked_softmax's rule).
InferredType ScaledDotProductAttentionOp::inferResultType(
    RankedTensorType query, RankedTensorType key, RankedTensorType value,
    RankedTensorType mask) {
  if (auto differ = differingElementTypes({query, key, value}))
    return *differ;
  if (query.getRank() < 2)
    return InferredType::failure("q must be [..., Tq, D] (rank 2 or more), "
                                 "got " + quoted(query), 0);
  RankedTensorType others[] = {key, value};
  for (auto [index, t] : llvm::enumerate(others))
    if (t.getRank() != query.getRank() ||
        t.getShape().drop_back(2) != query.getShape().drop_back(2))
      return InferredType::failure(
          std::string(index == 0 ? "k " : "v ") + quoted(t) +
              " does not have the leading axes " +
              formatList(query.getShape().drop_back(2)) + " of q " +
              quoted(query),
          static_cast<int>(index) + 1);
  int64_t rank = query.getRank();
  int64_t d = query.getDimSize(rank - 1);
  int64_t tk = key.getDimSize(rank - 2);
  if (key.getDimSize(rank - 1) != d)
    return InferredType::failure("k " + quoted(key) + " and q " +
                                     quoted(query) +
                                     " differ in the feature extent (D = " +
                                     std::to_string(d) + ")",
                                 1);
  if (value.getDimSize(rank - 2) != tk)
    return InferredType::failure("v " + quoted(value) + " and k " +
                                     quoted(key) +
                                     " differ in the key count (Tk = " +
                                     std::to_string(tk) + ")",
                                 2);
  SmallVector<int64_t> scores(query.getShape().drop_back(1));
  scores.push_back(tk);
  SmallVector<int64_t> shape(query.getShape().drop_back(1));
  shape.push_back(value.getDimSize(rank - 1));
  if (mask) {
    InferredType masked = MaskedSoftmaxOp::inferResultType(
        tensorLike(query, scores), mask, rank - 1);
    if (!masked) {
      masked.argument = 3;
      return masked;
    }
  }
  return InferredType{tensorLike(query, shape)};
}

LogicalResult ScaledDotProductAttentionOp::verify() {
  if (getMask() && getCausal())
    return emitOpError("takes a mask or `causal`, not both (as "
                       "torch's is_causal with attn_mask)");
  if (!std::isfinite(getScale().convertToDouble()))
    return emitOpError("scale must be finite");
  RankedTensorType mask = getMask() ? tensorOf(getMask()) : RankedTensorType();
  return verifyInferredType(
      *this, inferResultType(tensorOf(getQuery()), tensorOf(getKey()),
                             tensorOf(getValue()), mask));
}

// The composed form: scores = (scale·q)·kᵀ (a transpose flag, no copy of
// k; q is scaled rather than the scores, a Tq·D tensor instead of a Tq·Tk
// one, as torch's math path scales q), masked_softmax over the keys (the
// causal rule as a causal_mask, which masked_softmax broadcasts over the
// leading axes; plain softmax when nothing masks), then · v.
static Value buildComposedAttention(OpBuilder &b, Location loc, Value query,
                                    Value key, Value value, Value mask,
                                    bool causal, double scale) {
  RankedTensorType q = tensorOf(query), k = tensorOf(key);
  int64_t rank = q.getRank();
  Value scaledQuery = buildScale(b, loc, query, scale);
  Value scaled = buildMatmul(b, loc, scaledQuery, false, key, true);
  if (causal)
    mask = b.create<CausalMaskOp>(
        loc, RankedTensorType::get({q.getDimSize(rank - 2),
                                    k.getDimSize(rank - 2)},
                                   b.getI1Type()));
  Value weights =
      mask ? Value(b.create<MaskedSoftmaxOp>(loc, scaled.getType(), scaled,
                                             mask, b.getI64IntegerAttr(rank - 1)))
           : Value(b.create<SoftmaxOp>(loc, scaled.getType(), scaled,
                                       b.getI64IntegerAttr(rank - 1)));
  return buildMatmul(b, loc, weights, false, value, false);
}

// Every op of the composed form is located at the call, named after this
// op, so the plan and the report say what they came from.
LogicalResult
ScaledDotProductAttentionOp::decompose(OpBuilder &b,
                                       SmallVectorImpl<Value> &results) {
  Location loc = NameLoc::get(b.getStringAttr(getOperationName()), getLoc());
  results.push_back(buildComposedAttention(b, loc, getQuery(), getKey(),
                                           getValue(), getMask(), getCausal(),
                                           getScale().convertToDouble()));
  return success();
}

// The fused form: one flash_attention op (the result and each query's
// log-sum-exp, which its VJP reads), located as the composed form's ops
// are. None for a head wider than the fused kernels take.
LogicalResult
ScaledDotProductAttentionOp::fuse(OpBuilder &b,
                                  SmallVectorImpl<Value> &results) {
  RankedTensorType q = tensorOf(getQuery()), v = tensorOf(getValue());
  if (q.getShape().back() > FlashAttentionOp::kMaxHeadDim ||
      v.getShape().back() > FlashAttentionOp::kMaxHeadDim)
    return failure();
  Location loc = NameLoc::get(b.getStringAttr(getOperationName()), getLoc());
  auto fused = b.create<FlashAttentionOp>(
      loc, getResult().getType(), tensorLike(q, q.getShape().drop_back()),
      getQuery(), getKey(), getValue(), getMask(), getCausalAttr(),
      getScaleAttr());
  results.push_back(fused.getResult());
  return success();
}

//===----------------------------------------------------------------------===//
// FlashAttentionOp, FlashAttentionGradOp
//===----------------------------------------------------------------------===//

/// What flash_attention and its gradient share: the operands' rule
/// (scaled_dot_product_attention's), a mask or `causal` but not both, a
/// finite scale, and lse [..., Tq] of q's element type.
static FailureOr<RankedTensorType>
verifyAttentionHeads(Operation *op, RankedTensorType query,
                     RankedTensorType key, RankedTensorType value, Value mask,
                     bool causal, double scale) {
  if (mask && causal)
    return op->emitOpError("takes a mask or `causal`, not both"), failure();
  if (!std::isfinite(scale))
    return op->emitOpError("scale must be finite"), failure();
  InferredType inferred = ScaledDotProductAttentionOp::inferResultType(
      query, key, value, mask ? tensorOf(mask) : RankedTensorType());
  if (!inferred)
    return op->emitOpError(inferred.message), failure();
  return inferred.type;
}

static LogicalResult verifyAttention(Operation *op, Value query, Value key,
                                     Value value, Value mask, bool causal,
                                     double scale, Value result, Value lse) {
  FailureOr<RankedTensorType> inferred =
      verifyAttentionHeads(op, tensorOf(query), tensorOf(key), tensorOf(value),
                           mask, causal, scale);
  if (failed(inferred))
    return failure();
  if (result.getType() != *inferred)
    return op->emitOpError("result ")
           << result.getType() << " differs from the inferred "
           << *inferred;
  RankedTensorType q = tensorOf(query);
  RankedTensorType expected = tensorLike(q, q.getShape().drop_back());
  if (lse.getType() != expected)
    return op->emitOpError("lse ")
           << lse.getType() << " must be " << expected
           << " (q's shape without its feature axis)";
  return success();
}

LogicalResult FlashAttentionOp::verify() {
  return verifyAttention(*this, getQuery(), getKey(), getValue(), getMask(),
                         getCausal(), getScale().convertToDouble(),
                         getResult(), getLse());
}

// dq, dk, dv in one op (three kernels on cuda) from the forward's inputs, its
// result and lse; lse itself has no use but this, so its gradient is ignored.
LogicalResult FlashAttentionOp::buildVJP(OpBuilder &b, ValueRange dy,
                                         SmallVectorImpl<Value> &grads) {
  auto grad = b.create<FlashAttentionGradOp>(
      getLoc(), getQuery().getType(), getKey().getType(), getValue().getType(),
      dy[0], getQuery(), getKey(), getValue(), getResult(), getLse(),
      getMask(), getCausalAttr(), getScaleAttr());
  grads.append({grad.getDq(), grad.getDk(), grad.getDv()});
  if (getMask())
    grads.push_back(Value());
  return success();
}

/// The end of an attention gradient op's second-order rule: `first`, the
/// gradients of its `inputs` operands (grad and the attention's inputs)
/// built through the composed form, then none for result and lse (functions
/// of those inputs, already counted) and the mask.
static LogicalResult appendAttentionGradGrads(LogicalResult built,
                                              ArrayRef<Value> first,
                                              size_t inputs, bool masked,
                                              SmallVectorImpl<Value> &grads) {
  if (failed(built) || first.size() != inputs)
    return failure();
  grads.append(first.begin(), first.end());
  grads.append({Value(), Value()}); // result, lse
  if (masked)
    grads.push_back(Value());
  return success();
}

// The second-order rule: dq, dk and dv written out as the composed form's
// VJP (the composed forward from q, k, v, differentiated with `grad` as its
// result's gradient) and differentiated through those ops; the result and
// lse operands are functions of q, k, v already counted there, so they get
// no gradient of their own.
LogicalResult FlashAttentionGradOp::buildVJP(OpBuilder &b, ValueRange dy,
                                             SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value q = getQuery(), k = getKey(), v = getValue(), mask = getMask();
  bool causal = getCausal();
  double scale = getScale().convertToDouble();
  SmallVector<Value> inputs{getGrad(), q, k, v};
  SmallVector<Value> first;
  LogicalResult built = vjpThroughOps(
      b, inputs,
      [&]() -> SmallVector<Value> {
        SmallVector<Value> qkv;
        if (failed(vjpThroughOps(
                b, ValueRange{q, k, v},
                [&]() {
                  return buildComposedAttention(b, loc, q, k, v, mask, causal,
                                                scale);
                },
                getGrad(), qkv)))
          return {};
        for (auto [index, g] : llvm::enumerate(qkv))
          if (!g) // an input the result does not depend on: zeros
            g = b.create<FillOp>(loc, inputs[index + 1].getType(),
                                 b.getF64FloatAttr(0.0));
        return qkv;
      },
      dy, first);
  return appendAttentionGradGrads(built, first, 4, bool(mask), grads);
}

LogicalResult FlashAttentionGradOp::verify() {
  if (failed(verifyAttention(*this, getQuery(), getKey(), getValue(),
                             getMask(), getCausal(),
                             getScale().convertToDouble(), getResult(),
                             getLse())))
    return failure();
  if (getGrad().getType() != getResult().getType())
    return emitOpError("grad ") << getGrad().getType() << " and result "
                                << getResult().getType()
                                << " must have one type";
  Value inputs[] = {getQuery(), getKey(), getValue()};
  for (auto [input, grad] : llvm::zip(inputs, getResults()))
    if (grad.getType() != input.getType())
      return emitOpError("gradient ")
             << grad.getType() << " must have its input's type "
             << input.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// QkvAttentionOp, QkvAttentionGradOp
//===----------------------------------------------------------------------===//

FailureOr<QkvHeads> vouch::qkvHeads(RankedTensorType qkv, int64_t heads) {
  if (qkv.getRank() < 2 || heads < 1 || qkv.getShape().back() % (3 * heads) != 0 ||
      qkv.getShape().back() == 0)
    return failure();
  QkvHeads h;
  ArrayRef<int64_t> shape = qkv.getShape();
  h.batch.assign(shape.begin(), shape.end() - 2);
  h.tokens = shape.end()[-2];
  h.heads = heads;
  h.features = shape.back() / (3 * heads);
  return h;
}

SmallVector<int64_t> QkvHeads::headShape() const {
  SmallVector<int64_t> shape(batch);
  shape.append({heads, tokens, features});
  return shape;
}

SmallVector<int64_t> QkvHeads::packedShape(int64_t parts) const {
  SmallVector<int64_t> shape(batch);
  shape.append({tokens, parts * heads * features});
  return shape;
}

SmallVector<int64_t> QkvHeads::headStrides(int64_t parts) const {
  // [..., T, parts·H·d] read as [..., H, T, d].
  int64_t row = parts * heads * features;
  SmallVector<int64_t> strides(batch.size() + 3);
  strides.back() = 1;
  strides.end()[-2] = row;
  strides.end()[-3] = features;
  int64_t stride = tokens * row;
  for (int64_t i = static_cast<int64_t>(batch.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= batch[i];
  }
  return strides;
}

SmallVector<int64_t> QkvHeads::scoresShape() const {
  SmallVector<int64_t> shape(batch);
  shape.append({heads, tokens, tokens});
  return shape;
}

SmallVector<int64_t> vouch::tokensHeadsSwap(int64_t rank) {
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    perm.push_back(i);
  if (rank >= 3)
    std::swap(perm[rank - 3], perm[rank - 2]);
  return perm;
}

std::array<int64_t, 2> vouch::attentionHeadFeatures(Operation *op) {
  auto last = [](Value v) { return tensorOf(v).getShape().back(); };
  auto packed = [](Value qkv, int64_t heads) -> std::array<int64_t, 2> {
    FailureOr<QkvHeads> h = qkvHeads(tensorOf(qkv), heads);
    int64_t features = succeeded(h) ? h->features : 0;
    return {features, features};
  };
  if (auto fused = dyn_cast<FlashAttentionOp>(op))
    return {last(fused.getQuery()), last(fused.getValue())};
  if (auto grad = dyn_cast<FlashAttentionGradOp>(op))
    return {last(grad.getQuery()), last(grad.getValue())};
  if (auto fused = dyn_cast<QkvAttentionOp>(op))
    return packed(fused.getQkv(), fused.getHeads());
  auto grad = cast<QkvAttentionGradOp>(op);
  return packed(grad.getQkv(), grad.getHeads());
}

int32_t vouch::bf16OperandOf(Operation *op) {
  const OpFacts *facts = findOpFacts(op->getName().stripDialect());
  if (!facts || facts->bf16Operand < 0 || facts->family != OpFamily::Attention)
    return -1;
  auto [d, dv] = attentionHeadFeatures(op);
  return attention64TakesHeads(d, dv) ? facts->bf16Operand : -1;
}

int32_t vouch::bf16TwinOf(Operation *op) {
  const OpFacts *facts = findOpFacts(op->getName().stripDialect());
  return facts ? facts->bf16Twin : -1;
}

/// What qkv_attention and its gradient share: qkv [..., T, 3·H·d] (H =
/// `heads`), a mask broadcastable to the scores [..., H, T, T] or `causal` but
/// not both (flash_attention's rule for the heads), a finite scale, the
/// result [..., T, H·d] and lse [..., H, T] of qkv's element type.
static FailureOr<QkvHeads> verifyQkvAttention(Operation *op, Value qkv,
                                              Value mask, int64_t heads,
                                              bool causal, double scale,
                                              Value result, Value lse) {
  // A bf16 qkv (rounded for attention64.cuh's kernels) stands for the f32
  // values it was rounded from: the heads, the result and lse are f32.
  RankedTensorType packed = productTensorType(tensorOf(qkv));
  FailureOr<QkvHeads> h = qkvHeads(packed, heads);
  if (failed(h)) {
    op->emitOpError("qkv ")
        << packed << " must be [..., T, 3·H·d] with H = heads = " << heads
        << " ≥ 1 and d ≥ 1 (q's, k's and v's heads side by side)";
    return failure();
  }
  RankedTensorType head = tensorLike(packed, h->headShape());
  if (failed(verifyAttentionHeads(op, head, head, head, mask, causal, scale)))
    return failure();
  RankedTensorType expected = tensorLike(packed, h->packedShape(1));
  if (result.getType() != expected)
    return op->emitOpError("result ")
           << result.getType() << " must be " << expected
           << " (each head's output side by side)",
           failure();
  SmallVector<int64_t> lseShape(h->batch);
  lseShape.append({h->heads, h->tokens});
  if (lse.getType() != tensorLike(packed, lseShape))
    return op->emitOpError("lse ")
           << lse.getType() << " must be " << tensorLike(packed, lseShape)
           << " (a log-sum-exp per head and query)",
           failure();
  return h;
}

LogicalResult QkvAttentionOp::verify() {
  return verifyQkvAttention(*this, getQkv(), getMask(), getHeads(),
                            getCausal(), getScale().convertToDouble(),
                            getResult(), getLse());
}

// dqkv in one op (three kernels on cuda); lse has no use but the gradient.
LogicalResult QkvAttentionOp::buildVJP(OpBuilder &b, ValueRange dy,
                                       SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<QkvAttentionGradOp>(
      getLoc(), getQkv().getType(), dy[0], getQkv(), getResult(), getLse(),
      getMask(), getHeadsAttr(), getCausalAttr(), getScaleAttr()));
  if (getMask())
    grads.push_back(Value());
  return success();
}

/// qkv_attention written out as the ops it stands for: each of q, k and v
/// sliced out of qkv, reshaped to [..., T, H, d] and permuted to [..., H, T,
/// d]; the composed attention; its result permuted and reshaped back.
static Value buildUnpackedQkvAttention(OpBuilder &b, Location loc, Value qkv,
                                       Value mask, const QkvHeads &h,
                                       bool causal, double scale) {
  RankedTensorType packed = tensorOf(qkv);
  int64_t rank = packed.getRank();
  int64_t width = h.heads * h.features;
  SmallVector<int64_t> split(h.batch);
  split.append({h.tokens, h.heads, h.features});
  SmallVector<int64_t> swap = tokensHeadsSwap(rank + 1);
  RankedTensorType head = tensorLike(packed, h.headShape());
  Value parts[3];
  for (int64_t part = 0; part < 3; ++part) {
    Value slice = b.create<SliceOp>(
        loc, tensorLike(packed, h.packedShape(1)), qkv,
        b.getI64IntegerAttr(rank - 1), b.getI64IntegerAttr(part * width),
        b.getI64IntegerAttr((part + 1) * width), b.getI64IntegerAttr(1));
    Value heads = buildReshape(b, loc, slice, tensorLike(packed, split));
    parts[part] = b.create<PermuteOp>(loc, head, heads,
                                      b.getDenseI64ArrayAttr(swap));
  }
  Value out = buildComposedAttention(b, loc, parts[0], parts[1], parts[2],
                                     mask, causal, scale);
  Value back = b.create<PermuteOp>(loc, tensorLike(packed, split), out,
                                   b.getDenseI64ArrayAttr(swap));
  return buildReshape(b, loc, back, tensorLike(packed, h.packedShape(1)));
}

// The second-order rule: dqkv written out as the unpacked form's VJP (the
// forward built from qkv, differentiated with `grad` as its result's
// gradient) and differentiated through those ops; result and lse are
// functions of qkv already counted there.
LogicalResult QkvAttentionGradOp::buildVJP(OpBuilder &b, ValueRange dy,
                                           SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value qkv = getQkv(), mask = getMask();
  FailureOr<QkvHeads> h = qkvHeads(tensorOf(qkv), getHeads());
  if (failed(h))
    return failure();
  bool causal = getCausal();
  double scale = getScale().convertToDouble();
  SmallVector<Value> inputs{getGrad(), qkv};
  SmallVector<Value> first;
  LogicalResult built = vjpThroughOps(
      b, inputs,
      [&]() -> Value {
        SmallVector<Value> dqkv;
        if (failed(vjpThroughOps(
                b, ValueRange{qkv},
                [&]() {
                  return buildUnpackedQkvAttention(b, loc, qkv, mask, *h,
                                                   causal, scale);
                },
                getGrad(), dqkv)) ||
            !dqkv.front())
          return Value();
        return dqkv.front();
      },
      dy[0], first);
  return appendAttentionGradGrads(built, first, 2, bool(mask), grads);
}

LogicalResult QkvAttentionGradOp::verify() {
  if (failed(verifyQkvAttention(*this, getQkv(), getMask(), getHeads(),
                                getCausal(), getScale().convertToDouble(),
                                getResult(), getLse())))
    return failure();
  if (getGrad().getType() != getResult().getType())
    return emitOpError("grad ") << getGrad().getType() << " and result "
                                << getResult().getType()
                                << " must have one type";
  if (getDqkv().getType() != productTensorType(tensorOf(getQkv())))
    return emitOpError("dqkv ") << getDqkv().getType()
                                << " must have qkv's shape and type (f32 for a bf16 qkv) "
                                << getQkv().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling: MaxPoolOp, MaxPoolGradOp, AvgPoolOp, AvgPoolGradOp,
// SmoothMaxPoolOp, SmoothMaxPoolGradOp; FlattenOp
//===----------------------------------------------------------------------===//

/// "spatial axis" / "spatial axes" after a count.
static std::string spatialAxes(size_t count) {
  return std::to_string(count) + (count == 1 ? " spatial axis" : " spatial axes");
}

InferredType vouch::inferPoolType(RankedTensorType input,
                                  ArrayRef<int64_t> kernel,
                                  ArrayRef<int64_t> stride,
                                  ArrayRef<int64_t> padding) {
  int64_t rank = input.getRank();
  if (rank < 3 || rank > 5)
    return InferredType::failure(
        "pools [N, C, *spatial] with 1, 2 or 3 spatial axes, got " +
            quoted(input),
        /*argument=*/0, /*continuesName=*/true);
  size_t spatial = static_cast<size_t>(rank - 2);
  struct Window {
    const char *name;
    ArrayRef<int64_t> values;
    int argument; // the builtin's parameter: x, kernel, stride, padding
  } lists[] = {{"kernel", kernel, 1}, {"stride", stride, 2},
               {"padding", padding, 3}};
  for (const Window &w : lists)
    if (w.values.size() != spatial)
      return InferredType::failure(
          std::string(w.name) + " " + formatList(w.values) + " has " +
              std::to_string(w.values.size()) + " entries, but " +
              quoted(input) + " has " + spatialAxes(spatial) +
              " (one entry each)",
          w.argument);
  SmallVector<int64_t> shape(input.getShape().take_front(2));
  for (size_t a = 0; a < spatial; ++a) {
    int64_t extent = input.getDimSize(2 + a);
    std::string axis = " on spatial axis " + std::to_string(a);
    if (kernel[a] < 1)
      return InferredType::failure("kernel " + formatList(kernel) +
                                       " must be at least 1" + axis,
                                   1);
    if (stride[a] < 1)
      return InferredType::failure("stride " + formatList(stride) +
                                       " must be at least 1" + axis,
                                   2);
    if (padding[a] < 0 || padding[a] > kernel[a] / 2)
      return InferredType::failure(
          "padding " + formatList(padding) + " must be between 0 and kernel / "
              "2 = " + std::to_string(kernel[a] / 2) + axis +
              " (torch's rule: every window holds an input position)",
          3);
    // padding ≤ kernel / 2 keeps both within int64 beside any extent.
    int64_t padded = extent + 2 * padding[a];
    if (kernel[a] > padded)
      return InferredType::failure(
          "kernel " + formatList(kernel) + " does not fit " + quoted(input) +
              axis + ": " + std::to_string(kernel[a]) + " > " +
              std::to_string(extent) + " + 2 · " + std::to_string(padding[a]) +
              " (the padded extent)",
          1);
    shape.push_back((padded - kernel[a]) / stride[a] + 1);
  }
  return tensorLike(input, shape);
}

/// A pooling op's `kernel`, `stride`, `padding` attributes.
template <class PoolOp>
static InferredType inferPoolTypeOf(PoolOp op, Value input) {
  return inferPoolType(tensorOf(input), op.getKernel(), op.getStride(),
                       op.getPadding());
}

/// The counts the pooling kernels (runtime/cpu_pool.h, runtime/cuda/kernels/
/// pool.cuh) compute with besides flat indices of their operands: the
/// planes (N·C), an input and an output plane's spatial products, a window's
/// volume and each padded extent, which the gate checks one by one.
static void poolIndexCounts(RankedTensorType input, RankedTensorType output,
                            ArrayRef<int64_t> kernel, ArrayRef<int64_t> padding,
                            SmallVectorImpl<std::pair<std::string, uint64_t>> &counts) {
  auto product = [](ArrayRef<int64_t> extents) {
    uint64_t p = 1;
    for (int64_t e : extents) {
      bool overflow = false;
      p = llvm::SaturatingMultiply(p, static_cast<uint64_t>(e), &overflow);
    }
    return p;
  };
  counts.push_back({"the planes (N·C)", product(input.getShape().take_front(2))});
  counts.push_back({"the input's spatial product",
                    product(input.getShape().drop_front(2))});
  counts.push_back({"the output's spatial product",
                    product(output.getShape().drop_front(2))});
  counts.push_back({"the window's volume (the kernel's product)", product(kernel)});
  for (auto [a, pad] : llvm::enumerate(padding))
    counts.push_back({"the padded extent of spatial axis " + std::to_string(a),
                      llvm::SaturatingAdd(
                          static_cast<uint64_t>(input.getDimSize(2 + a)),
                          2 * static_cast<uint64_t>(pad))});
}

/// A pooling gradient: `grad` is the pooling of `input` (the result's type)
/// with the op's attributes.
template <class PoolGradOp>
static LogicalResult verifyPoolGrad(PoolGradOp op, Value grad) {
  InferredType pooled = inferPoolTypeOf(op, op.getResult());
  if (!pooled)
    return op.emitOpError(pooled.message);
  if (grad.getType() != pooled.type)
    return op.emitOpError("grad ")
           << quoted(grad.getType()) << " must be " << quoted(pooled.type)
           << ", the pooling of the result " << quoted(op.getType());
  return success();
}

static LogicalResult verifyBeta(Operation *op, double beta) {
  if (!std::isfinite(beta) || beta == 0)
    return op->emitOpError("beta must be a finite non-zero number, got ")
           << shown(beta);
  return success();
}

LogicalResult MaxPoolOp::verify() {
  if (getValues() && getValues().getType() != getInput().getType())
    return emitOpError("values ")
           << quoted(getValues().getType()) << " must have the input's type "
           << quoted(getInput().getType());
  return verifyInferredType(*this, inferPoolTypeOf(*this, getInput()));
}
void MaxPoolOp::getIndexCounts(
    SmallVectorImpl<std::pair<std::string, uint64_t>> &counts) {
  poolIndexCounts(tensorOf(getInput()), getType(), getKernel(), getPadding(),
                  counts);
}
// The result is x (or values) at each window's first maximal position: dx is
// max_pool_grad(dy, x), which puts dy[w] there; with `values`, that gradient
// is values' and x gets none (the positions are piecewise constant in x).
LogicalResult MaxPoolOp::buildVJP(OpBuilder &b, ValueRange dy,
                                  SmallVectorImpl<Value> &grads) {
  Value dx = b.create<MaxPoolGradOp>(getLoc(), getInput().getType(), dy[0],
                                     getInput(), getKernelAttr(),
                                     getStrideAttr(), getPaddingAttr());
  if (getValues())
    grads.push_back(Value());
  grads.push_back(dx);
  return success();
}

LogicalResult MaxPoolGradOp::verify() {
  if (getInput().getType() != getType())
    return emitOpError("result ") << quoted(getType()) << " must be the input's "
                                  << quoted(getInput().getType());
  return verifyPoolGrad(*this, getGrad());
}
void MaxPoolGradOp::getIndexCounts(
    SmallVectorImpl<std::pair<std::string, uint64_t>> &counts) {
  poolIndexCounts(getType(), tensorOf(getGrad()), getKernel(), getPadding(),
                  counts);
}
// Linear in grad: its adjoint picks g at each window's first maximal
// position of x, which is max_pool of x with `values` g. x gets no gradient.
LogicalResult MaxPoolGradOp::buildVJP(OpBuilder &b, ValueRange dy,
                                      SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<MaxPoolOp>(getLoc(), getGrad().getType(),
                                      getInput(), dy[0], getKernelAttr(),
                                      getStrideAttr(), getPaddingAttr()));
  grads.push_back(Value());
  return success();
}

LogicalResult AvgPoolOp::verify() {
  return verifyInferredType(*this, inferPoolTypeOf(*this, getInput()));
}
void AvgPoolOp::getIndexCounts(
    SmallVectorImpl<std::pair<std::string, uint64_t>> &counts) {
  poolIndexCounts(tensorOf(getInput()), getType(), getKernel(), getPadding(),
                  counts);
}
// Linear in x: dx = avg_pool_grad(dy), each window's dy spread over its
// positions divided as the forward divides.
LogicalResult AvgPoolOp::buildVJP(OpBuilder &b, ValueRange dy,
                                  SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<AvgPoolGradOp>(
      getLoc(), getInput().getType(), dy[0], getKernelAttr(), getStrideAttr(),
      getPaddingAttr(), getCountIncludePadAttr()));
  return success();
}

LogicalResult AvgPoolGradOp::verify() { return verifyPoolGrad(*this, getGrad()); }
void AvgPoolGradOp::getIndexCounts(
    SmallVectorImpl<std::pair<std::string, uint64_t>> &counts) {
  poolIndexCounts(getType(), tensorOf(getGrad()), getKernel(), getPadding(),
                  counts);
}
// avg_pool_grad is avg_pool's adjoint, so its own adjoint is avg_pool.
LogicalResult AvgPoolGradOp::buildVJP(OpBuilder &b, ValueRange dy,
                                      SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<AvgPoolOp>(getLoc(), getGrad().getType(), dy[0],
                                      getKernelAttr(), getStrideAttr(),
                                      getPaddingAttr(),
                                      getCountIncludePadAttr()));
  return success();
}

LogicalResult SmoothMaxPoolOp::verify() {
  if (failed(verifyBeta(*this, getBeta().convertToDouble())))
    return failure();
  return verifyInferredType(*this, inferPoolTypeOf(*this, getInput()));
}
void SmoothMaxPoolOp::getIndexCounts(
    SmallVectorImpl<std::pair<std::string, uint64_t>> &counts) {
  poolIndexCounts(tensorOf(getInput()), getType(), getKernel(), getPadding(),
                  counts);
}
// dx[i] = Σ_w dy[w] · exp(beta·(x[i] - y[w])): the window's softmax weights,
// from the saved result y; one smooth_max_pool_grad op.
LogicalResult SmoothMaxPoolOp::buildVJP(OpBuilder &b, ValueRange dy,
                                        SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<SmoothMaxPoolGradOp>(
      getLoc(), getInput().getType(), dy[0], getInput(), getResult(),
      getKernelAttr(), getStrideAttr(), getPaddingAttr(), getBetaAttr()));
  return success();
}

LogicalResult SmoothMaxPoolGradOp::verify() {
  if (failed(verifyBeta(*this, getBeta().convertToDouble())))
    return failure();
  if (getInput().getType() != getType())
    return emitOpError("result ") << quoted(getType()) << " must be the input's "
                                  << quoted(getInput().getType());
  if (getOutput().getType() != getGrad().getType())
    return emitOpError("output ")
           << quoted(getOutput().getType()) << " and grad "
           << quoted(getGrad().getType()) << " must have one type";
  return verifyPoolGrad(*this, getGrad());
}
void SmoothMaxPoolGradOp::getIndexCounts(
    SmallVectorImpl<std::pair<std::string, uint64_t>> &counts) {
  poolIndexCounts(getType(), tensorOf(getGrad()), getKernel(), getPadding(),
                  counts);
}
// The second-order rule: dx = exp(beta·x) · S(grad · exp(-beta·output)),
// S the sum over the windows covering each position (avg_pool_grad with
// count_include_pad times the kernel's volume, its constant divisor),
// written with ops that have VJPs and differentiated through them. (The two
// exponentials are taken apart here, so large |beta·x| overflows where the
// kernels' exp(beta·(x - output)) does not: this form only serves
// differentiation.)
LogicalResult SmoothMaxPoolGradOp::buildVJP(OpBuilder &b, ValueRange dy,
                                            SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value grad = getGrad(), x = getInput(), y = getOutput();
  Type xt = x.getType(), yt = y.getType();
  double beta = getBeta().convertToDouble(), volume = 1;
  for (int64_t k : getKernel())
    volume *= static_cast<double>(k);
  return vjpThroughOps(
      b, {grad, x, y},
      [&]() -> Value {
        Value weights = b.create<ExpOp>(loc, yt, buildScale(b, loc, y, -beta));
        Value spread = b.create<AvgPoolGradOp>(
            loc, xt, b.create<MulOp>(loc, yt, grad, weights), getKernelAttr(),
            getStrideAttr(), getPaddingAttr(), b.getUnitAttr());
        Value ex = b.create<ExpOp>(loc, xt, buildScale(b, loc, x, beta));
        return b.create<MulOp>(loc, xt, ex, buildScale(b, loc, spread, volume));
      },
      dy[0], grads);
}

// x's axes before start_axis, then one of the others' product.
InferredType FlattenOp::inferResultType(RankedTensorType input,
                                        int64_t startAxis) {
  if (input.getRank() < 1 || startAxis < 0 || startAxis >= input.getRank())
    return InferredType::failure(
        "start_axis " + std::to_string(startAxis) + " is out of range for " +
            quoted(input) + " (rank " + std::to_string(input.getRank()) + ")",
        1);
  SmallVector<int64_t> shape(input.getShape().take_front(startAxis));
  int64_t merged = 1;
  for (int64_t e : input.getShape().drop_front(startAxis)) {
    std::optional<int64_t> product = llvm::checkedMul(merged, e);
    if (!product)
      return InferredType::failure("the axes of " + quoted(input) + " from " +
                                   std::to_string(startAxis) +
                                   " on have more elements than int64 counts");
    merged = *product;
  }
  shape.push_back(merged);
  return tensorLike(input, shape);
}

LogicalResult FlattenOp::verify() {
  return verifyInferredType(
      *this, inferResultType(tensorOf(getInput()), getStartAxis()));
}

// One reshape, located at the call and named after flatten.
LogicalResult FlattenOp::decompose(OpBuilder &b,
                                   SmallVectorImpl<Value> &results) {
  Location loc = NameLoc::get(b.getStringAttr(getOperationName()), getLoc());
  results.push_back(buildReshape(b, loc, getInput(), getType()));
  return success();
}

// A view has nothing to fuse: the fused form is the composed one, so any
// `attention` form of vouch-decompose gives the same reshape.
LogicalResult FlattenOp::fuse(OpBuilder &b, SmallVectorImpl<Value> &results) {
  return decompose(b, results);
}

//===----------------------------------------------------------------------===//
// Convolution: Im2colOp, Col2imOp, ConvOp, ConvTransposeOp
//===----------------------------------------------------------------------===//

namespace {

/// Where a rule's failure points among the builtin's arguments (conv's and
/// conv_transpose's differ after `padding`); -1 for im2col and col2im, which
/// are no builtins.
struct ConvArguments {
  int input = -1, weight = -1, bias = -1, stride = -1, padding = -1,
      outputPadding = -1, dilation = -1, groups = -1;
};

const ConvArguments kConvArguments{0, 1, 2, 3, 4, -1, 5, 6};
const ConvArguments kConvTransposeArguments{0, 1, 2, 3, 4, 5, 6, 7};
const ConvArguments kWindowArguments{};

} // namespace

/// An image is [N, C, *spatial] with 1 to 3 spatial axes.
static std::optional<InferredType> checkImage(RankedTensorType image,
                                              StringRef what, int argument) {
  if (image.getRank() < 3 || image.getRank() > 2 + kMaxConvSpatialAxes)
    return InferredType::failure(
        what.str() + " must be [N, C, *spatial] with 1 to 3 spatial axes " +
            "(rank 3 to 5), got " + quoted(image),
        argument);
  return std::nullopt;
}

/// The window attributes: one entry per spatial axis each, stride and
/// dilation at least 1, padding (and output_padding) at least 0, groups at
/// least 1.
static std::optional<InferredType>
checkWindowAttrs(int64_t axes, ArrayRef<int64_t> stride,
                 ArrayRef<int64_t> padding, ArrayRef<int64_t> outputPadding,
                 ArrayRef<int64_t> dilation, int64_t groups,
                 const ConvArguments &at, bool hasOutputPadding = false) {
  struct List {
    const char *name;
    ArrayRef<int64_t> values;
    int64_t least;
    int argument;
  };
  SmallVector<List> lists = {{"stride", stride, 1, at.stride},
                             {"padding", padding, 0, at.padding}};
  if (hasOutputPadding)
    lists.push_back({"output_padding", outputPadding, 0, at.outputPadding});
  lists.push_back({"dilation", dilation, 1, at.dilation});
  for (const List &list : lists) {
    if (static_cast<int64_t>(list.values.size()) != axes)
      return InferredType::failure(
          std::string(list.name) + " " + formatList(list.values) + " has " +
              std::to_string(list.values.size()) +
              (list.values.size() == 1 ? " entry" : " entries") +
              "; it needs one per spatial axis (" + std::to_string(axes) + ")",
          list.argument);
    if (llvm::any_of(list.values, [&](int64_t v) { return v < list.least; }))
      return InferredType::failure(std::string(list.name) +
                                       " must be at least " +
                                       std::to_string(list.least) +
                                       " on every spatial axis, got " +
                                       formatList(list.values),
                                   list.argument);
  }
  if (groups < 1)
    return InferredType::failure("groups must be at least 1, got " +
                                     std::to_string(groups),
                                 at.groups);
  return std::nullopt;
}

/// The windows that fit along every axis of `image`, or the failure naming
/// the first axis where the dilated kernel is longer than the padded input.
static FailureOr<SmallVector<int64_t>>
windowsThatFit(RankedTensorType image, ArrayRef<int64_t> kernel,
               ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
               ArrayRef<int64_t> dilation, std::string &why) {
  SmallVector<int64_t> grid;
  for (size_t i = 0; i < kernel.size(); ++i) {
    int64_t in = image.getDimSize(2 + i);
    int64_t windows =
        convWindowsAlong(in, kernel[i], stride[i], padding[i], dilation[i]);
    if (windows < 1) {
      __int128 span = static_cast<__int128>(dilation[i]) * (kernel[i] - 1) + 1;
      __int128 room = static_cast<__int128>(in) + 2 * static_cast<__int128>(padding[i]);
      auto text = [](__int128 v) {
        return v > std::numeric_limits<int64_t>::max()
                   ? std::string("more than int64 holds")
                   : std::to_string(static_cast<int64_t>(v));
      };
      why = "along spatial axis " + std::to_string(i) +
            " the kernel spans dilation·(k − 1) + 1 = " + text(span) +
            " positions, more than the padded input's in + 2·padding = " +
            text(room);
      return failure();
    }
    grid.push_back(windows);
  }
  return grid;
}

/// The kernel's offsets K (the product of its extents), or nothing when it
/// does not fit int64.
static std::optional<int64_t> kernelOffsets(ArrayRef<int64_t> kernel) {
  int64_t k = 1;
  for (int64_t extent : kernel) {
    std::optional<int64_t> next = llvm::checkedMul(k, extent);
    if (!next)
      return std::nullopt;
    k = *next;
  }
  return k;
}

/// What im2col and col2im share: `image` [N, C, *spatial] and `columns` [G,
/// C/G·K, N, *grid] with the same element type, the window attributes, and a
/// grid of at most the windows that fit along each axis (im2col's rule
/// gives all of them; conv_transpose's gradient may take fewer).
static LogicalResult verifyWindows(Operation *op, RankedTensorType image,
                                   RankedTensorType columns,
                                   ArrayRef<int64_t> kernel,
                                   ArrayRef<int64_t> stride,
                                   ArrayRef<int64_t> padding,
                                   ArrayRef<int64_t> dilation, int64_t groups,
                                   StringRef imageName) {
  if (auto bad = checkImage(image, imageName, -1))
    return op->emitOpError(bad->message);
  int64_t axes = image.getRank() - 2;
  if (static_cast<int64_t>(kernel.size()) != axes ||
      llvm::any_of(kernel, [](int64_t k) { return k < 1; }))
    return op->emitOpError("kernel ")
           << formatList(kernel) << " must have one extent of at least 1 per "
           << "spatial axis (" << axes << ")";
  if (auto bad = checkWindowAttrs(axes, stride, padding, {}, dilation, groups,
                                  kWindowArguments))
    return op->emitOpError(bad->message);
  if (auto differ = differingElementTypes({image, columns}))
    return op->emitOpError(differ->message);
  int64_t channels = image.getDimSize(1);
  if (channels % groups != 0)
    return op->emitOpError("the image ")
           << quoted(image) << " has " << channels
           << " channels, which groups = " << groups << " does not divide";
  std::optional<int64_t> k = kernelOffsets(kernel);
  std::optional<int64_t> rows = k ? llvm::checkedMul(channels / groups, *k)
                                  : std::nullopt;
  if (!rows)
    return op->emitOpError("kernel ")
           << formatList(kernel) << " has more offsets than int64 can count";
  std::string why;
  FailureOr<SmallVector<int64_t>> fit =
      windowsThatFit(image, kernel, stride, padding, dilation, why);
  if (failed(fit))
    return op->emitOpError(why) << " (image " << quoted(image) << ")";
  SmallVector<int64_t> lead = {groups, *rows, image.getDimSize(0)};
  bool ok = columns.getRank() == 3 + axes &&
            columns.getShape().take_front(3) == ArrayRef<int64_t>(lead);
  for (int64_t i = 0; ok && i < axes; ++i) {
    int64_t windows = columns.getDimSize(3 + i);
    ok = windows >= 1 && windows <= (*fit)[i];
  }
  if (!ok)
    return op->emitOpError("the columns ")
           << quoted(columns) << " must be [G, C/G·K, N, *grid] = "
           << formatList(lead) << " followed by at most "
           << formatList(*fit) << " windows per spatial axis (every window "
           << "that fits the image " << quoted(image) << ")";
  return success();
}

InferredType Im2colOp::inferResultType(RankedTensorType input,
                                       ArrayRef<int64_t> kernel,
                                       ArrayRef<int64_t> stride,
                                       ArrayRef<int64_t> padding,
                                       ArrayRef<int64_t> dilation,
                                       int64_t groups) {
  if (auto bad = checkImage(input, "the input", -1))
    return *bad;
  int64_t axes = input.getRank() - 2;
  if (static_cast<int64_t>(kernel.size()) != axes ||
      llvm::any_of(kernel, [](int64_t k) { return k < 1; }))
    return InferredType::failure("kernel " + formatList(kernel) +
                                 " must have one extent of at least 1 per "
                                 "spatial axis (" + std::to_string(axes) + ")");
  if (auto bad = checkWindowAttrs(axes, stride, padding, {}, dilation, groups,
                                  kWindowArguments))
    return *bad;
  if (input.getDimSize(1) % groups != 0)
    return InferredType::failure("the input " + quoted(input) + " has " +
                                 std::to_string(input.getDimSize(1)) +
                                 " channels, which groups = " +
                                 std::to_string(groups) + " does not divide");
  std::string why;
  FailureOr<SmallVector<int64_t>> fit =
      windowsThatFit(input, kernel, stride, padding, dilation, why);
  if (failed(fit))
    return InferredType::failure(why + " (image " + quoted(input) + ")");
  std::optional<int64_t> k = kernelOffsets(kernel);
  std::optional<int64_t> rows =
      k ? llvm::checkedMul(input.getDimSize(1) / groups, *k) : std::nullopt;
  if (!rows)
    return InferredType::failure("kernel " + formatList(kernel) +
                                 " has more offsets than int64 can count");
  SmallVector<int64_t> shape = {groups, *rows, input.getDimSize(0)};
  shape.append(fit->begin(), fit->end());
  return tensorLike(input, shape);
}

LogicalResult Im2colOp::verify() {
  return verifyWindows(*this, tensorOf(getInput()), tensorOf(getResult()),
                       getKernel(), getStride(), getPadding(), getDilation(),
                       getGroups(), "the input");
}

LogicalResult Col2imOp::verify() {
  return verifyWindows(*this, tensorOf(getResult()), tensorOf(getInput()),
                       getKernel(), getStride(), getPadding(), getDilation(),
                       getGroups(), "the result");
}

// im2col and col2im are each other's adjoints: im2col reads each image
// element into the columns of the windows covering it, col2im adds those
// columns back into it.
static Value buildCol2im(OpBuilder &b, Location loc, Value columns,
                         RankedTensorType image, ArrayRef<int64_t> kernel,
                         ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                         ArrayRef<int64_t> dilation, int64_t groups) {
  return b.create<Col2imOp>(loc, image, columns, kernel, stride, padding,
                            dilation, groups);
}

static Value buildIm2col(OpBuilder &b, Location loc, Value image,
                         RankedTensorType columns, ArrayRef<int64_t> kernel,
                         ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                         ArrayRef<int64_t> dilation, int64_t groups) {
  return b.create<Im2colOp>(loc, columns, image, kernel, stride, padding,
                            dilation, groups);
}

LogicalResult Im2colOp::buildVJP(OpBuilder &b, ValueRange dy,
                                 SmallVectorImpl<Value> &grads) {
  grads.push_back(buildCol2im(b, getLoc(), dy[0], tensorOf(getInput()),
                              getKernel(), getStride(), getPadding(),
                              getDilation(), getGroups()));
  return success();
}

LogicalResult Col2imOp::buildVJP(OpBuilder &b, ValueRange dy,
                                 SmallVectorImpl<Value> &grads) {
  grads.push_back(buildIm2col(b, getLoc(), dy[0], tensorOf(getInput()),
                              getKernel(), getStride(), getPadding(),
                              getDilation(), getGroups()));
  return success();
}

void Im2colOp::getIndexCounts(
    SmallVectorImpl<std::pair<std::string, uint64_t>> &counts) {
  getConvGeometry(*this).indexCounts(counts);
}

void Col2imOp::getIndexCounts(
    SmallVectorImpl<std::pair<std::string, uint64_t>> &counts) {
  getConvGeometry(*this).indexCounts(counts);
}

//===----------------------------------------------------------------------===//
// Col2imMatmulOp
//===----------------------------------------------------------------------===//

/// The columns lhsᵀ·rhs that a col2im_matmul folds, [G, C/G·K, N, *grid]
/// (the product's rows per group as far as they can be counted: the
/// verifier reports a failure to count first).
static RankedTensorType col2imMatmulColumns(Col2imMatmulOp op) {
  RankedTensorType image = tensorOf(op.getResult());
  int64_t groups = op.getGroups();
  int64_t rows = 1;
  if (image.getRank() >= 2 && groups >= 1 && image.getDimSize(1) % groups == 0)
    if (std::optional<int64_t> k = kernelOffsets(op.getKernel()))
      if (auto product = llvm::checkedMul(image.getDimSize(1) / groups, *k))
        rows = *product;
  SmallVector<int64_t> shape = {groups, rows,
                                image.getRank() >= 1 ? image.getDimSize(0) : 1};
  shape.append(op.getGrid().begin(), op.getGrid().end());
  return tensorLike(image, shape);
}

LogicalResult Col2imMatmulOp::verify() {
  RankedTensorType image = tensorOf(getResult());
  if (image.getRank() >= 2 &&
      static_cast<int64_t>(getGrid().size()) != image.getRank() - 2)
    return emitOpError("grid ")
           << formatList(getGrid()) << " must have one extent per spatial "
           << "axis (" << image.getRank() - 2 << ")";
  RankedTensorType columns = col2imMatmulColumns(*this);
  if (failed(verifyWindows(*this, image, columns, getKernel(), getStride(),
                           getPadding(), getDilation(), getGroups(),
                           "the result")))
    return failure();
  RankedTensorType lhs = tensorOf(getLhs()), rhs = tensorOf(getRhs());
  if (auto differ = differingElementTypes({lhs, rhs, image}))
    return emitOpError(differ->message);
  int64_t groups = getGroups();
  int64_t rank = groups == 1 ? 2 : 3;
  int64_t positions = columns.getDimSize(2);
  for (int64_t extent : getGrid())
    positions *= extent;  // the columns' elements fit int64 (verifyWindows)
  bool ok = lhs.getRank() == rank && rhs.getRank() == rank &&
            (rank == 2 || (lhs.getDimSize(0) == groups &&
                           rhs.getDimSize(0) == groups)) &&
            lhs.getDimSize(rank - 2) == rhs.getDimSize(rank - 2) &&
            lhs.getDimSize(rank - 1) == columns.getDimSize(1) &&
            rhs.getDimSize(rank - 1) == positions;
  if (!ok)
    return emitOpError("lhs ")
           << quoted(lhs) << " and rhs " << quoted(rhs) << " must be "
           << (rank == 3 ? "[G, R, C/G·K] and [G, R, N·windows] = [" +
                               std::to_string(groups) + ", R, "
                         : std::string("[R, C/G·K] and [R, N·windows] = [R, "))
           << columns.getDimSize(1) << "] and ["
           << (rank == 3 ? std::to_string(groups) + ", " : std::string())
           << "R, " << positions << "] for the result " << quoted(image)
           << " (groups " << groups << ", grid " << formatList(getGrid())
           << ")";
  return success();
}

void Col2imMatmulOp::getIndexCounts(
    SmallVectorImpl<std::pair<std::string, uint64_t>> &counts) {
  getConvGeometry(*this).indexCounts(counts);
}

// Linear in each operand: with cols = im2col(dy) viewed as the product's
// [G, C/G·K, N·L], d lhs = rhs·colsᵀ and d rhs = lhs·cols (the products of
// conv's own VJP, through transpose flags).
LogicalResult Col2imMatmulOp::buildVJP(OpBuilder &b, ValueRange dy,
                                       SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  RankedTensorType columns = col2imMatmulColumns(*this);
  Value cols = buildIm2col(b, loc, dy[0], columns, getKernel(), getStride(),
                           getPadding(), getDilation(), getGroups());
  RankedTensorType lhs = tensorOf(getLhs()), rhs = tensorOf(getRhs());
  SmallVector<int64_t> product(rhs.getShape());
  product[product.size() - 2] = lhs.getDimSize(lhs.getRank() - 1);
  Value flat = buildReshape(b, loc, cols, tensorLike(rhs, product));
  grads.push_back(buildMatmul(b, loc, getRhs(), false, flat, true));
  grads.push_back(buildMatmul(b, loc, getLhs(), false, flat, false));
  return success();
}

/// What conv and conv_transpose share before their weight's layout: element
/// types, x's rank, the weight's rank, the attributes and the bias [O].
static std::optional<InferredType>
checkConvOperands(RankedTensorType input, RankedTensorType weight,
                  RankedTensorType bias, ArrayRef<int64_t> stride,
                  ArrayRef<int64_t> padding, ArrayRef<int64_t> outputPadding,
                  ArrayRef<int64_t> dilation, int64_t groups,
                  const ConvArguments &at, bool transposed) {
  if (auto differ = differingElementTypes({input, weight, bias}))
    return differ;
  if (auto bad = checkImage(input, "x", at.input))
    return bad;
  const char *layout = transposed ? "[C, O/groups, *kernel]"
                                  : "[O, C/groups, *kernel]";
  if (weight.getRank() != input.getRank() ||
      llvm::any_of(weight.getShape(), [](int64_t e) { return e < 1; }))
    return InferredType::failure(
        "the weight " + quoted(weight) + " must be " + layout +
            " (extents at least 1) of x's rank " +
            std::to_string(input.getRank()) + " (x " + quoted(input) + ")",
        at.weight);
  int64_t axes = input.getRank() - 2;
  if (auto bad = checkWindowAttrs(axes, stride, padding, outputPadding,
                                  dilation, groups, at, transposed))
    return bad;
  int64_t channels = input.getDimSize(1);
  if (channels % groups != 0)
    return InferredType::failure("x " + quoted(input) + " has " +
                                     std::to_string(channels) +
                                     " channels, which groups = " +
                                     std::to_string(groups) +
                                     " does not divide",
                                 at.groups);
  return std::nullopt;
}

static std::optional<InferredType> checkBias(RankedTensorType bias,
                                             int64_t outputs, int argument) {
  if (bias && (bias.getRank() != 1 || bias.getDimSize(0) != outputs))
    return InferredType::failure("the bias " + quoted(bias) +
                                     " must be [O] = [" +
                                     std::to_string(outputs) + "]",
                                 argument);
  return std::nullopt;
}

// x [N, C, *in], weight [O, C/G, *k], bias [O] -> [N, O, *out], out the
// windows that fit each axis.
InferredType ConvOp::inferResultType(RankedTensorType input,
                                     RankedTensorType weight,
                                     RankedTensorType bias,
                                     ArrayRef<int64_t> stride,
                                     ArrayRef<int64_t> padding,
                                     ArrayRef<int64_t> dilation,
                                     int64_t groups) {
  const ConvArguments &at = kConvArguments;
  if (auto bad = checkConvOperands(input, weight, bias, stride, padding, {},
                                   dilation, groups, at, false))
    return *bad;
  int64_t channels = input.getDimSize(1), outputs = weight.getDimSize(0);
  if (outputs % groups != 0)
    return InferredType::failure("the weight " + quoted(weight) + " has " +
                                     std::to_string(outputs) +
                                     " output channels, which groups = " +
                                     std::to_string(groups) +
                                     " does not divide",
                                 at.groups);
  if (weight.getDimSize(1) != channels / groups)
    return InferredType::failure(
        "the weight " + quoted(weight) + " must have C/groups = " +
            std::to_string(channels / groups) +
            " input channels on axis 1 (x " + quoted(input) + " has " +
            std::to_string(channels) + ", groups = " + std::to_string(groups) +
            ")",
        at.weight);
  std::string why;
  FailureOr<SmallVector<int64_t>> grid = windowsThatFit(
      input, weight.getShape().drop_front(2), stride, padding, dilation, why);
  if (failed(grid))
    return InferredType::failure(why + " (x " + quoted(input) + ", weight " +
                                     quoted(weight) + ")",
                                 at.weight);
  if (auto bad = checkBias(bias, outputs, at.bias))
    return *bad;
  SmallVector<int64_t> shape = {input.getDimSize(0), outputs};
  shape.append(grid->begin(), grid->end());
  return tensorLike(input, shape);
}

LogicalResult ConvOp::verify() {
  RankedTensorType bias = getBias() ? tensorOf(getBias()) : RankedTensorType();
  return verifyInferredType(
      *this, inferResultType(tensorOf(getInput()), tensorOf(getWeight()), bias,
                             getStride(), getPadding(), getDilation(),
                             getGroups()));
}

// x [N, C, *in], weight [C, O/G, *k], bias [O] -> [N, O, *out], out = (in −
// 1)·stride − 2·padding + dilation·(k − 1) + output_padding + 1.
InferredType ConvTransposeOp::inferResultType(
    RankedTensorType input, RankedTensorType weight, RankedTensorType bias,
    ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
    ArrayRef<int64_t> outputPadding, ArrayRef<int64_t> dilation,
    int64_t groups) {
  const ConvArguments &at = kConvTransposeArguments;
  if (auto bad = checkConvOperands(input, weight, bias, stride, padding,
                                   outputPadding, dilation, groups, at, true))
    return *bad;
  int64_t channels = input.getDimSize(1);
  if (weight.getDimSize(0) != channels)
    return InferredType::failure(
        "the weight " + quoted(weight) +
            " must be [C, O/groups, *kernel] with C = " +
            std::to_string(channels) + " (x's channels) on axis 0 (x " +
            quoted(input) + ")",
        at.weight);
  std::optional<int64_t> outputs =
      llvm::checkedMul(weight.getDimSize(1), groups);
  if (!outputs)
    return InferredType::failure("O = " + std::to_string(weight.getDimSize(1)) +
                                     " · groups does not fit int64",
                                 at.groups);
  int64_t axes = input.getRank() - 2;
  for (int64_t i = 0; i < axes; ++i)
    if (outputPadding[i] >= stride[i] && outputPadding[i] >= dilation[i])
      return InferredType::failure(
          "output_padding " + formatList(outputPadding) +
              " must be smaller than stride " + formatList(stride) +
              " or dilation " + formatList(dilation) +
              " on every spatial axis (torch's rule); spatial axis " +
              std::to_string(i) + " has " + std::to_string(outputPadding[i]),
          at.outputPadding);
  SmallVector<int64_t> shape = {input.getDimSize(0), *outputs};
  for (int64_t i = 0; i < axes; ++i) {
    __int128 out = static_cast<__int128>(input.getDimSize(2 + i) - 1) * stride[i] -
                   2 * static_cast<__int128>(padding[i]) +
                   static_cast<__int128>(dilation[i]) *
                       (weight.getDimSize(2 + i) - 1) +
                   outputPadding[i] + 1;
    if (out < 1 || out > std::numeric_limits<int64_t>::max())
      return InferredType::failure(
          "along spatial axis " + std::to_string(i) +
              " the output extent (in − 1)·stride − 2·padding + dilation·(k "
              "− 1) + output_padding + 1 is " +
              (out < 1 ? std::to_string(static_cast<int64_t>(out)) +
                             ", not positive: the padding is too large"
                       : std::string("more than int64 holds")) +
              " (x " + quoted(input) + ", weight " + quoted(weight) + ")",
          at.padding);
    shape.push_back(static_cast<int64_t>(out));
  }
  if (auto bad = checkBias(bias, *outputs, at.bias))
    return *bad;
  return tensorLike(input, shape);
}

LogicalResult ConvTransposeOp::verify() {
  RankedTensorType bias = getBias() ? tensorOf(getBias()) : RankedTensorType();
  return verifyInferredType(
      *this, inferResultType(tensorOf(getInput()), tensorOf(getWeight()), bias,
                             getStride(), getPadding(), getOutputPadding(),
                             getDilation(), getGroups()));
}

/// `value` [..] + bias [O] broadcast along axis 1.
static Value addChannelBias(OpBuilder &b, Location loc, Value value,
                            Value bias) {
  if (!bias)
    return value;
  RankedTensorType t = tensorOf(value);
  Value wide = buildBroadcast(b, loc, bias, t, {1});
  return b.create<AddOp>(loc, t, value, wide);
}

/// [A, N, L] (A the channels, L the spatial positions) as [N, A, L], or the
/// other way round: one permute, none when N = 1 (the two layouts are the
/// same elements then). `value` has A·N·L elements in the `from` order;
/// the result is shaped `to`.
static Value swapChannelsAndBatch(OpBuilder &b, Location loc, Value value,
                                  int64_t outer, int64_t inner, int64_t rest,
                                  RankedTensorType to) {
  RankedTensorType t = tensorOf(value);
  if (outer == 1 || inner == 1)
    return buildReshape(b, loc, value, to);
  Value three = buildReshape(b, loc, value, tensorLike(t, {outer, inner, rest}));
  Value swapped = b.create<PermuteOp>(loc, tensorLike(t, {inner, outer, rest}),
                                      three, b.getDenseI64ArrayAttr({1, 0, 2}));
  return buildReshape(b, loc, swapped, to);
}

// The composed form: columns = im2col(x) [G, C/G·K, N, *out]; the weight
// viewed [G, O/G, C/G·K] (rank 2 for one group) times the columns viewed [G,
// C/G·K, N·L]: y [G, O/G, N·L], which is [O, N, L]; permuted to [N, O, L]
// and viewed [N, O, *out]; the bias added.
LogicalResult ConvOp::decompose(OpBuilder &b,
                                SmallVectorImpl<Value> &results) {
  Location loc = NameLoc::get(b.getStringAttr(getOperationName()), getLoc());
  RankedTensorType x = tensorOf(getInput()), w = tensorOf(getWeight()),
                   y = tensorOf(getResult());
  int64_t groups = getGroups();
  ArrayRef<int64_t> kernel = w.getShape().drop_front(2);
  InferredType columnsType = Im2colOp::inferResultType(
      x, kernel, getStride(), getPadding(), getDilation(), groups);
  if (!columnsType)
    return failure();
  Value columns = buildIm2col(b, loc, getInput(), columnsType.type, kernel,
                              getStride(), getPadding(), getDilation(), groups);
  int64_t batch = x.getDimSize(0), outputs = w.getDimSize(0);
  int64_t rows = columnsType.type.getDimSize(1);
  int64_t positions = 1; // L: the windows per image
  for (int64_t extent : y.getShape().drop_front(2))
    positions *= extent;
  auto grouped = [&](ArrayRef<int64_t> matrix) {
    SmallVector<int64_t> shape;
    if (groups > 1)
      shape.push_back(groups);
    shape.append(matrix.begin(), matrix.end());
    return tensorLike(x, shape);
  };
  Value lhs = buildReshape(b, loc, getWeight(),
                           grouped({outputs / groups, rows}));
  Value rhs = buildReshape(b, loc, columns, grouped({rows, batch * positions}));
  Value product = buildMatmul(b, loc, lhs, false, rhs, false);
  Value out = swapChannelsAndBatch(b, loc, product, outputs, batch, positions, y);
  results.push_back(addChannelBias(b, loc, out, getBias()));
  return success();
}

LogicalResult ConvOp::fuse(OpBuilder &, SmallVectorImpl<Value> &) {
  return failure(); // the composed form is conv's only one
}

// The composed form: x [N, C, *in] as [C, N, L] (a permute unless N = 1),
// viewed [G, C/G, N·L]; the weight viewed [G, C/G, O/G·K] times it through
// a transpose flag: the columns [G, O/G·K, N·L], viewed [G, O/G·K, N, *in],
// folded by col2im into [N, O, *out]; the bias added.
LogicalResult ConvTransposeOp::decompose(OpBuilder &b,
                                         SmallVectorImpl<Value> &results) {
  Location loc = NameLoc::get(b.getStringAttr(getOperationName()), getLoc());
  RankedTensorType x = tensorOf(getInput()), w = tensorOf(getWeight()),
                   y = tensorOf(getResult());
  int64_t groups = getGroups();
  int64_t batch = x.getDimSize(0), channels = x.getDimSize(1);
  int64_t positions = 1; // L: x's positions per image
  for (int64_t extent : x.getShape().drop_front(2))
    positions *= extent;
  ArrayRef<int64_t> kernel = w.getShape().drop_front(2);
  int64_t rows = w.getDimSize(1); // O/G · K
  for (int64_t extent : kernel)
    rows *= extent;
  auto grouped = [&](ArrayRef<int64_t> matrix) {
    SmallVector<int64_t> shape;
    if (groups > 1)
      shape.push_back(groups);
    shape.append(matrix.begin(), matrix.end());
    return tensorLike(x, shape);
  };
  Value image = swapChannelsAndBatch(
      b, loc, getInput(), batch, channels, positions,
      grouped({channels / groups, batch * positions}));
  Value lhs = buildReshape(b, loc, getWeight(),
                           grouped({channels / groups, rows}));
  Value product = buildMatmul(b, loc, lhs, true, image, false);
  SmallVector<int64_t> columnsShape = {groups, rows, batch};
  columnsShape.append(x.getShape().begin() + 2, x.getShape().end());
  Value columns = buildReshape(b, loc, product, tensorLike(x, columnsShape));
  Value out = buildCol2im(b, loc, columns, y, kernel, getStride(),
                          getPadding(), getDilation(), groups);
  results.push_back(addChannelBias(b, loc, out, getBias()));
  return success();
}

LogicalResult ConvTransposeOp::fuse(OpBuilder &, SmallVectorImpl<Value> &) {
  return failure(); // the composed form is conv_transpose's only one
}
