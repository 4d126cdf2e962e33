//===- VouchOps.cpp - verifiers, VJP rules and scalar formulas --*- C++ -*-===//
//
// One banner section per op (or op family). A section holds everything the
// compiler knows about the op's meaning: its verifier, its VJP rule and, for
// pointwise ops, its scalar formula (C/CUDA expression and float64 value).
// Kernel emitters and capsules look ops up by these interfaces.
//
//===----------------------------------------------------------------------===//
#include "ir/VouchOps.h"

#include <cmath>
#include <cstdio>

#include "ir/OpTable.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringMap.h"
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

/// Every operand and the result share one type: the rule of pointwise ops.
/// The message names the op (through emitOpError) and every shape.
static LogicalResult verifySameShapes(Operation *op) {
  Type first = op->getOperand(0).getType();
  bool same = llvm::all_of(op->getOperandTypes(),
                           [&](Type t) { return t == first; }) &&
              op->getResult(0).getType() == first;
  if (same)
    return success();
  InFlightDiagnostic diag = op->emitOpError("shape mismatch: operands ");
  llvm::interleaveComma(op->getOperandTypes(), diag);
  return diag << " and result " << op->getResult(0).getType()
              << " must all have one type";
}

static LogicalResult verifySameElementType(Operation *op) {
  Type element = cast<ShapedType>(op->getResult(0).getType()).getElementType();
  for (Type t : op->getOperandTypes())
    if (cast<ShapedType>(t).getElementType() != element)
      return op->emitOpError("element type mismatch: operand ")
             << t << " vs result " << op->getResult(0).getType();
  return success();
}

std::string vouch::exactLiteral(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

// Builders used by VJP rules. Each builds one op at the insertion point.
static Value buildMatmul(OpBuilder &b, Location loc, Value lhs, bool tl,
                         Value rhs, bool tr) {
  RankedTensorType lt = tensorOf(lhs), rt = tensorOf(rhs);
  int64_t rank = lt.getRank();
  int64_t m = tl ? lt.getDimSize(rank - 1) : lt.getDimSize(rank - 2);
  int64_t n = tr ? rt.getDimSize(rank - 2) : rt.getDimSize(rank - 1);
  SmallVector<int64_t> shape(lt.getShape().drop_back(2));
  shape.append({m, n});
  auto op = b.create<MatmulOp>(loc, tensorLike(lt, shape), lhs, rhs);
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
  RankedTensorType type = tensorOf(value);
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (!llvm::is_contained(axes, i))
      shape.push_back(type.getDimSize(i));
  return b.create<ReduceSumOp>(loc, tensorLike(type, shape), value,
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
  printer << "[";
  llvm::interleaveComma(args.asArrayRef(), printer);
  printer << "]";
}

LogicalResult ParamOp::verify() {
  static const struct {
    const char *name;
    size_t arity;
  } known[] = {{"zeros", 0},          {"ones", 0},
               {"uniform", 2},        {"normal", 2},
               {"xavier_uniform", 0}, {"kaiming_uniform", 0}};
  for (const auto &k : known) {
    if (getInit() != k.name)
      continue;
    if (getInitArgs().size() != k.arity)
      return emitOpError("initialiser '")
             << k.name << "' takes " << k.arity << " arguments, got "
             << getInitArgs().size();
    return success();
  }
  return emitOpError("unknown initialiser '")
         << getInit()
         << "'; known: zeros, ones, uniform, normal, xavier_uniform, "
            "kaiming_uniform";
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
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  RankedTensorType lt = tensorOf(getLhs()), rt = tensorOf(getRhs());
  if (lt.getRank() != rt.getRank() || lt.getRank() < 2 || lt.getRank() > 3)
    return emitOpError("operands must both be rank 2 or both rank 3 "
                       "(batched), got ")
           << lt << " and " << rt;
  int64_t rank = lt.getRank();
  if (rank == 3 && lt.getDimSize(0) != rt.getDimSize(0))
    return emitOpError("batch extents differ: ") << lt << " and " << rt;
  int64_t k1 = getTransposeLhs() ? lt.getDimSize(rank - 2)
                                 : lt.getDimSize(rank - 1);
  int64_t k2 = getTransposeRhs() ? rt.getDimSize(rank - 1)
                                 : rt.getDimSize(rank - 2);
  if (k1 != k2)
    return emitOpError("contraction extents differ (")
           << k1 << " vs " << k2 << "): lhs " << lt
           << (getTransposeLhs() ? " (transposed)" : "") << ", rhs " << rt
           << (getTransposeRhs() ? " (transposed)" : "");
  int64_t m = getTransposeLhs() ? lt.getDimSize(rank - 1)
                                : lt.getDimSize(rank - 2);
  int64_t n = getTransposeRhs() ? rt.getDimSize(rank - 2)
                                : rt.getDimSize(rank - 1);
  SmallVector<int64_t> expected(lt.getShape().drop_back(2));
  expected.append({m, n});
  if (tensorOf(getResult()).getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result ")
           << getResult().getType() << " does not match the product of "
           << lt << " and " << rt;
  return verifySameElementType(*this);
}

// C = op(A)·op(B): dA and dB are again products of the stored operands with
// transpose flags (dA = dC·op(B)ᵀ, dB = op(A)ᵀ·dC, undone for a transposed
// operand), so no transposed copy is ever built.
LogicalResult MatmulOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  Location loc = getLoc();
  Value dc = resultGrads[0];
  bool ta = getTransposeLhs(), tb = getTransposeRhs();
  Value da = ta ? buildMatmul(b, loc, getRhs(), tb, dc, true)
                : buildMatmul(b, loc, dc, false, getRhs(), !tb);
  Value db = tb ? buildMatmul(b, loc, dc, true, getLhs(), ta)
                : buildMatmul(b, loc, getLhs(), !ta, dc, false);
  operandGrads.append({da, db});
  return success();
}

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::verify() {
  RankedTensorType xt = tensorOf(getInput()), wt = tensorOf(getWeight());
  if (wt.getRank() != 2)
    return emitOpError("weight must be rank 2 [out, in], got ") << wt;
  if (xt.getRank() < 1 || xt.getDimSize(xt.getRank() - 1) != wt.getDimSize(1))
    return emitOpError("input features do not match the weight: input ")
           << xt << ", weight " << wt << " (expects [..., "
           << wt.getDimSize(1) << "])";
  if (Value bias = getBias()) {
    RankedTensorType bt = tensorOf(bias);
    if (bt.getRank() != 1 || bt.getDimSize(0) != wt.getDimSize(0))
      return emitOpError("bias ")
             << bt << " does not match the weight " << wt << " (expects ["
             << wt.getDimSize(0) << "])";
  }
  SmallVector<int64_t> expected(xt.getShape().drop_back());
  expected.push_back(wt.getDimSize(0));
  if (tensorOf(getResult()).getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result ") << getResult().getType()
                                  << " does not match input " << xt
                                  << " and weight " << wt;
  return verifySameElementType(*this);
}

// y = x·Wᵀ + b over rows r = (leading axes): dx = dy·W, dW = dyᵀ·x (one
// transposed-lhs product), db = Σ_rows dy.
LogicalResult LinearOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  Location loc = getLoc();
  RankedTensorType xt = tensorOf(getInput()), yt = tensorOf(getResult());
  int64_t in = xt.getDimSize(xt.getRank() - 1);
  int64_t out = yt.getDimSize(yt.getRank() - 1);
  int64_t rows = xt.getNumElements() / in;
  Value dy2 = buildReshape(b, loc, resultGrads[0], tensorLike(yt, {rows, out}));
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
// Pointwise ops: AddOp, SubOp, MulOp, ScaleOp, ReluOp, StepOp
//===----------------------------------------------------------------------===//

LogicalResult AddOp::verify() { return verifySameShapes(*this); }
LogicalResult SubOp::verify() { return verifySameShapes(*this); }
LogicalResult MulOp::verify() { return verifySameShapes(*this); }
LogicalResult ScaleOp::verify() { return verifySameShapes(*this); }
LogicalResult ReluOp::verify() { return verifySameShapes(*this); }
LogicalResult StepOp::verify() { return verifySameShapes(*this); }

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

LogicalResult BroadcastOp::verify() {
  RankedTensorType in = tensorOf(getInput()), out = tensorOf(getResult());
  ArrayRef<int64_t> dims = getDims();
  if (static_cast<int64_t>(dims.size()) != in.getRank())
    return emitOpError("dims has ")
           << dims.size() << " entries but the input " << in << " has rank "
           << in.getRank();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= out.getRank() ||
        (i > 0 && dims[i] <= dims[i - 1]))
      return emitOpError("dims must be strictly increasing result axes, got [")
             << getDims() << "] for result " << out;
    int64_t from = in.getDimSize(i), to = out.getDimSize(dims[i]);
    if (from != 1 && from != to)
      return emitOpError("cannot broadcast ")
             << in << " to " << out << ": input axis " << i << " has extent "
             << from << ", result axis " << dims[i] << " has " << to;
  }
  return verifySameElementType(*this);
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

LogicalResult ReshapeOp::verify() {
  RankedTensorType in = tensorOf(getInput()), out = tensorOf(getResult());
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ")
           << in << " (" << in.getNumElements() << " elements) to " << out
           << " (" << out.getNumElements() << " elements)";
  return verifySameElementType(*this);
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

LogicalResult PermuteOp::verify() {
  RankedTensorType in = tensorOf(getInput()), out = tensorOf(getResult());
  ArrayRef<int64_t> perm = getPerm();
  llvm::SmallSet<int64_t, 8> seen;
  bool valid = static_cast<int64_t>(perm.size()) == in.getRank();
  for (int64_t p : perm)
    valid = valid && p >= 0 && p < in.getRank() && seen.insert(p).second;
  if (!valid)
    return emitOpError("perm [")
           << perm << "] is not a permutation of the axes of " << in;
  for (size_t i = 0; i < perm.size(); ++i)
    if (out.getRank() != in.getRank() ||
        out.getDimSize(i) != in.getDimSize(perm[i]))
      return emitOpError("result ")
             << out << " is not " << in << " permuted by [" << perm << "]";
  return verifySameElementType(*this);
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
// ReduceSumOp, ReduceMeanOp
//===----------------------------------------------------------------------===//

static LogicalResult verifyReduction(Operation *op, ArrayRef<int64_t> axes) {
  RankedTensorType in = cast<RankedTensorType>(op->getOperand(0).getType());
  RankedTensorType out = cast<RankedTensorType>(op->getResult(0).getType());
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= in.getRank() ||
        (i > 0 && axes[i] <= axes[i - 1]))
      return op->emitOpError("axes must be strictly increasing axes of ")
             << in << ", got [" << axes << "]";
  SmallVector<int64_t> expected;
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (!llvm::is_contained(axes, i))
      expected.push_back(in.getDimSize(i));
  if (out.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError("result ")
           << out << " does not match " << in << " reduced over [" << axes
           << "]";
  return verifySameElementType(op);
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

LogicalResult ReduceSumOp::verify() { return verifyReduction(*this, getAxes()); }
LogicalResult ReduceMeanOp::verify() {
  return verifyReduction(*this, getAxes());
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

//===----------------------------------------------------------------------===//
// MseLossOp
//===----------------------------------------------------------------------===//

LogicalResult MseLossOp::verify() {
  if (getPrediction().getType() != getTarget().getType())
    return emitOpError("prediction and target shapes differ: ")
           << getPrediction().getType() << " vs " << getTarget().getType();
  if (tensorOf(getResult()).getRank() != 0)
    return emitOpError("result must be rank 0, got ") << getResult().getType();
  return verifySameElementType(*this);
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
// TableGen'd op definitions
//===----------------------------------------------------------------------===//

#define GET_OP_CLASSES
#include "ir/VouchOps.cpp.inc"
