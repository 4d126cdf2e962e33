//===- RoundBf16Operands.cpp - a bf16 product operand rounded once -*- C++ -*-===//
//
// Under bf16 products the cuda executor rounds each f32 operand of a cuBLAS
// product into its scratch just before the call (runtime/cuda/gemm_call.h's
// ProductPlan), so a value several products read is rounded once for each:
// a layer's activation by its forward product and again by its weight
// gradient, a weight by the forward product and again by dx. This pass
// rounds such a value once, as vouch.round_bf16 into a buffer of its own,
// and gives every product the bf16 value, which the executor reads in
// place. The bits each product reads are the same. The f32 value then lives
// only as long as its other readers need it; the bf16 one (half the bytes)
// until its last product. qkv_attention and its gradient, where
// attention64.cuh's kernels take the heads (at most kAttention64MaxHeadDim
// features), read their qkv rounded alike: the kernels round each float tile
// to bf16 for their products anyway, and load a bf16 one as it is.
//
// Which operands: the f32 operands of matmul, linear and linear_weight_grad
// that a library capsule computes (the products the small-product rule
// leaves to vouch's own kernel read f32), where the executor's copy would
// move no value (OperandLayout::in_place_as_bf16: no padded row or pitch;
// an operand it pads keeps its copy). A reshape is rounded through its
// source, so linear's VJP, which reads its input reshaped, shares the
// forward product's rounding.
//
// Where on the tape: right after the op that computes the value, at its
// place (a forward op's rounding becomes a forward node of its own, the
// nodes renumbered in block order; a VJP's joins that VJP; the prologue's
// stays there), so that vouch-fuse-pointwise can fold it into a pointwise
// chain's kernel, which then stores the value as bf16 (and as f32 only if
// something else reads it). A value no op computes (a param, a data field)
// is rounded before its first product, at that product's place. An op
// whose cuda kernel can store the result as bf16 itself (the op table's
// bf16Result: cross_entropy_grad, layer_norm; a linear's cuBLASLt call
// where its operands are bf16 and its output unpadded, its bias then rounded
// to bf16 too) takes the rounding over where nothing else reads the f32
// value: its result becomes bf16. An op whose cuda kernel can store a bf16
// twin beside the f32 value (the op table's bf16Twin: layer_norm_grad's dx,
// which the bias gradient and the residual's sum read as f32) keeps both:
// the rounding joins the op in a fusion group of two, which codegen emits as
// the op's step storing both, so the rounding has no launch of its own and
// the f32 value is not read again. The pass only rewrites; ir/VouchOps.td's
// round_bf16 says what it computes.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/GemmDims.h"
#include "ir/OpTable.h"
#include "ir/VouchOps.h"
#include "mlir/IR/Builders.h"
#include "passes/Attributes.h"
#include "passes/Plan.h"
#include "runtime/cuda/gemm_call.h"
#include "llvm/ADT/DenseMap.h"

namespace vouch {
#define GEN_PASS_DEF_ROUNDBF16OPERANDS
#include "passes/Passes.h.inc"
} // namespace vouch

using namespace mlir;
using namespace vouch;

namespace {

/// A new forward node's id until renumberNodes gives it its place.
constexpr int64_t kNewNode = -1;

/// Gives the ops of `model` consecutive vouch.node ids in block order (the
/// forward order), and their VJPs' vouch.vjp_of the same renumbering (new
/// nodes, kNewNode, have no VJP).
void renumberNodes(ModelOp model) {
  llvm::DenseMap<int64_t, int64_t> renumbered;
  Builder b(model.getContext());
  int64_t next = 0;
  for (Operation &op : model.getBlock())
    if (auto node = op.getAttrOfType<IntegerAttr>(kNodeAttr)) {
      if (node.getInt() != kNewNode)
        renumbered[node.getInt()] = next;
      op.setAttr(kNodeAttr, b.getI64IntegerAttr(next++));
    }
  for (Operation &op : model.getBlock())
    if (auto of = op.getAttrOfType<IntegerAttr>(kVjpOfAttr))
      op.setAttr(kVjpOfAttr, b.getI64IntegerAttr(renumbered.lookup(of.getInt())));
}

/// The roundings one run of the pass makes: each f32 value rounded once, at
/// its first reader, every reader given the bf16 value.
struct OperandRounder {
  /// Per f32 value, its rounding (made at its first reader).
  llvm::DenseMap<Value, Value> rounded;
  bool newNodes = false;

  /// A new op takes the tape place of `at`: a forward op's (a forward node
  /// of its own), a VJP's, or the prologue's.
  void placeLike(Operation *op, Operation *at) {
    if (at->hasAttr(kNodeAttr)) {
      op->setAttr(kNodeAttr, OpBuilder(op).getI64IntegerAttr(kNewNode));
      newNodes = true;
    } else if (Attribute of = at->getAttr(kVjpOfAttr)) {
      op->setAttr(kVjpOfAttr, of);
    }
  }

  /// `use` (an f32 operand) reads the bf16 rounding of its value instead,
  /// through a reshape where it read the value reshaped; the rounding is
  /// made once per value.
  void read(OpOperand &use) {
    Operation *reader = use.getOwner();
    Value operand = use.get();
    auto type = cast<RankedTensorType>(operand.getType());
    if (!type.getElementType().isF32())
      return;
    Value source = viewedValue(operand);
    Value &bf16 = rounded[source];
    if (!bf16) {
      // Right after the op that computes the value, on its place on the
      // tape, where vouch-fuse-pointwise can make it that op's kernel's
      // store (a pointwise chain's); a value no op computes here (a
      // param, a data field) before its first reader.
      Operation *producer = source.getDefiningOp();
      bool computed = producer && !isStructuralOp(producer);
      OpBuilder b(reader);
      if (computed)
        b.setInsertionPointAfter(producer);
      auto round = b.create<RoundBf16Op>(computed ? producer->getLoc()
                                                  : reader->getLoc(),
                                         source);
      placeLike(round, computed ? producer : reader);
      bf16 = round.getResult();
    }
    Value read = bf16;
    if (source != operand) {
      OpBuilder b(reader);
      auto reshape = b.create<ReshapeOp>(
          reader->getLoc(),
          RankedTensorType::get(type.getShape(), b.getBF16Type()), bf16);
      placeLike(reshape, reader);
      read = reshape.getResult();
    }
    use.set(read);
    // The f32 view the reader read, if nothing else reads it now.
    for (Operation *view = operand.getDefiningOp<ReshapeOp>();
         view && view->use_empty();) {
      Operation *next = view->getOperand(0).getDefiningOp<ReshapeOp>();
      view->erase();
      view = next;
    }
  }

};

/// The model's roundings, in block order (a list, so that each may be moved
/// or erased).
SmallVector<RoundBf16Op> roundingsOf(ModelOp model) {
  SmallVector<RoundBf16Op> rounds;
  for (Operation &op : model.getBlock())
    if (auto round = dyn_cast<RoundBf16Op>(op))
      rounds.push_back(round);
  return rounds;
}

struct RoundBf16OperandsPass
    : public vouch::impl::RoundBf16OperandsBase<RoundBf16OperandsPass> {
  using RoundBf16OperandsBase::RoundBf16OperandsBase;

  void runOnOperation() override {
    ModelOp model = getOperation();
    OperandRounder rounder;
    capsules::SmallProductRule small{smallMultiplyAdds, smallMaxK};
    SmallVector<Operation *> products, bf16Readers;
    for (Operation &op : model.getBlock()) {
      if (isa<MatmulOp, LinearOp, LinearWeightGradOp>(op))
        products.push_back(&op);
      if (bf16OperandOf(&op) >= 0)
        bf16Readers.push_back(&op);
    }
    for (Operation *product : products) {
      if (!cast<RankedTensorType>(product->getResult(0).getType())
               .getElementType()
               .isF32())
        continue;
      std::optional<capsules::ProductExtents> extents = productExtents(product);
      if (!extents || small.covers(*extents))
        continue;
      std::optional<rt::cuda::ProductPlan> plan =
          planProduct(product, rt::cuda::ProductMath::Bf16);
      if (!plan)
        continue;
      for (unsigned i : {0u, 1u}) {
        const rt::cuda::OperandLayout &layout = i == 0 ? plan->a : plan->b;
        if (layout.in_place_as_bf16())
          rounder.read(product->getOpOperand(i));
      }
    }
    // An op whose kernels read an operand as bf16 (the op table's
    // bf16Operand: qkv_attention's and its gradient's qkv, for
    // attention64.cuh's kernels, which take heads of at most
    // kAttention64MaxHeadDim features): that operand rounded once, where the
    // op computing it leaves it, gives them half the bytes to load and no
    // conversion to make, and the same bits (the kernels round a float tile
    // alike); the f32 value is then read by no one else.
    for (Operation *reader : bf16Readers)
      rounder.read(reader->getOpOperand(bf16OperandOf(reader)));
    foldIntoProducers(model, small, rounder);
    fuseTwins(model);
    if (rounder.newNodes)
      renumberNodes(model);
  }

  /// A rounding of a result its op's kernel can store as a bf16 twin (the op
  /// table's bf16Twin, bf16TwinOf), where the f32 value has other readers
  /// (foldIntoProducers left it): the rounding moves right after the op and
  /// the two form one fusion group (`<model>_twin<k>`), which
  /// vouch-fuse-pointwise leaves alone and codegen emits as the op's step.
  void fuseTwins(ModelOp model) {
    Builder b(model.getContext());
    int twins = 0;
    for (RoundBf16Op round : roundingsOf(model)) {
      auto result = dyn_cast<OpResult>(round.getInput());
      if (!result)
        continue;
      Operation *producer = result.getOwner();
      if (bf16TwinOf(producer) != static_cast<int32_t>(result.getResultNumber()) ||
          producer->hasAttr(kFusionGroupAttr))
        continue;
      round->moveAfter(producer);
      StringAttr name =
          b.getStringAttr(model.getSymName() + "_twin" + std::to_string(twins++));
      producer->setAttr(kFusionGroupAttr, name);
      round->setAttr(kFusionGroupAttr, name);
    }
  }

  /// Whether `producer`'s kernel or library call can store its bf16Result as
  /// bf16 here: always for a kernel's; a linear's where cuBLASLt computes it
  /// (not the small-product rule's kernel) from bf16 operands read in place,
  /// into an output the executor pads nothing of (a padded output is copied
  /// out of its scratch as f32).
  static bool storesBf16Here(Operation *producer,
                             const capsules::SmallProductRule &small) {
    if (!isa<LinearOp>(producer))
      return true;
    for (Value operand : producer->getOperands().take_front(2))
      if (!cast<RankedTensorType>(operand.getType()).getElementType().isBF16())
        return false;
    std::optional<capsules::ProductExtents> extents = productExtents(producer);
    if (!extents || small.covers(*extents))
      return false;
    std::optional<rt::cuda::ProductPlan> plan =
        planProduct(producer, rt::cuda::ProductMath::Bf16);
    return plan && !plan->padded_output();
  }

  /// A rounding of a result its op can store as bf16 (the op table's
  /// bf16Result: cross_entropy_grad's dlogits, layer_norm's y, a linear's
  /// result), where nothing else reads the f32 value: the op's result becomes
  /// the bf16 value, which its kernel (or cuBLASLt) stores rounded, and the
  /// rounding is gone. A linear's bias is then read rounded to bf16 as well
  /// (by `rounder`: a param's rounding before the linear), as autocast
  /// rounds it: cuBLASLt (CUDA 13.0, H100) offers no algorithm for a bf16 D
  /// beside an f32 bias (its heuristic answers CUBLAS_STATUS_INVALID_VALUE),
  /// and takes a bf16 one (docs/performance.md, 2026-12-07).
  void foldIntoProducers(ModelOp model, const capsules::SmallProductRule &small,
                         OperandRounder &rounder) {
    for (RoundBf16Op round : roundingsOf(model)) {
      auto result = dyn_cast<OpResult>(round.getInput());
      if (!result || !result.hasOneUse())
        continue;
      Operation *producer = result.getOwner();
      const OpFacts *facts = findOpFacts(producer->getName().stripDialect());
      if (!facts ||
          facts->bf16Result != static_cast<int32_t>(result.getResultNumber()) ||
          !storesBf16Here(producer, small))
        continue;
      result.setType(round.getType());
      round.getResult().replaceAllUsesWith(result);
      round.erase();
      if (auto linear = dyn_cast<LinearOp>(producer); linear && linear.getBias())
        rounder.read(linear.getBiasMutable()[0]);
    }
  }
};

} // namespace
