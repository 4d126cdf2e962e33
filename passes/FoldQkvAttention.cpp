//===- FoldQkvAttention.cpp - attention over packed heads --------*- C++ -*-===//
//
// A self-attention's q, k and v come from one projection, [..., T, 3·H·d],
// whose heads the model slices out, reshapes and permutes to [..., H, T, d]
// (and whose result it permutes and reshapes back): five copies of the
// activations per attention, forward, and as many in the VJP. The fused
// attention kernels read and write any strides, so qkv_attention takes qkv
// itself and returns the packed result; the copies are never made. The pass
// only rewrites; ir/VouchOps.td's qkv_attention says what it computes.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include <optional>

#include "mlir/IR/Builders.h"

namespace vouch {
#define GEN_PASS_DEF_FOLDQKVATTENTION
#include "passes/Passes.h.inc"
} // namespace vouch

using namespace mlir;
using namespace vouch;

namespace {

/// Whether `perm` swaps axes rank-3 and rank-2 and keeps the others:
/// [..., T, H, d] <-> [..., H, T, d].
bool swapsTokensAndHeads(ArrayRef<int64_t> perm) {
  return perm.size() >= 3 && perm == ArrayRef<int64_t>(tokensHeadsSwap(perm.size()));
}

/// One of q, k, v as the model built it from a packed projection:
/// permute(reshape(slice(qkv, last axis, part·W, (part+1)·W), [..., T, H, d]))
/// swapping T and H, with W = H·d, each op used only by the next.
struct PackedHead {
  Value qkv;
  int64_t part = 0, heads = 0;
  SmallVector<Operation *, 3> chain; ///< permute, reshape, slice
};

std::optional<PackedHead> packedHead(Value operand) {
  auto permute = operand.getDefiningOp<PermuteOp>();
  if (!permute || !permute->hasOneUse() || !swapsTokensAndHeads(permute.getPerm()))
    return std::nullopt;
  auto reshape = permute.getInput().getDefiningOp<ReshapeOp>();
  if (!reshape || !reshape->hasOneUse())
    return std::nullopt;
  auto slice = reshape.getInput().getDefiningOp<SliceOp>();
  if (!slice || !slice->hasOneUse())
    return std::nullopt;
  ArrayRef<int64_t> split = cast<RankedTensorType>(reshape.getType()).getShape();
  ArrayRef<int64_t> sliced = cast<RankedTensorType>(slice.getType()).getShape();
  ArrayRef<int64_t> packed =
      cast<RankedTensorType>(slice.getInput().getType()).getShape();
  int64_t rank = sliced.size();
  if (static_cast<int64_t>(split.size()) != rank + 1 ||
      split.take_front(rank - 1) != sliced.drop_back())
    return std::nullopt;
  // The bounds are I64Attrs, read as int64_t (their getters return them
  // unsigned).
  int64_t width = sliced.back(), start = static_cast<int64_t>(slice.getStart());
  if (split.end()[-2] * split.back() != width ||
      static_cast<int64_t>(slice.getAxis()) != rank - 1 ||
      static_cast<int64_t>(slice.getStep()) != 1 || start % width != 0 ||
      static_cast<int64_t>(slice.getEnd()) != start + width ||
      packed.back() != 3 * width)
    return std::nullopt;
  return PackedHead{slice.getInput(), start / width, split.end()[-2],
                    {permute, reshape, slice}};
}

struct FoldQkvAttentionPass
    : public vouch::impl::FoldQkvAttentionBase<FoldQkvAttentionPass> {
  void runOnOperation() override {
    SmallVector<FlashAttentionOp> candidates;
    getOperation().walk([&](FlashAttentionOp op) { candidates.push_back(op); });
    for (FlashAttentionOp attention : candidates)
      fold(attention);
  }

  /// Folds `attention` where its q, k and v are parts 0, 1 and 2 of one
  /// packed projection, its result is only permuted back (T and H swapped)
  /// and reshaped to [..., T, H·d], and lse is unused (before autodiff).
  void fold(FlashAttentionOp attention) {
    std::optional<PackedHead> heads[3];
    Value operands[] = {attention.getQuery(), attention.getKey(), attention.getValue()};
    for (int64_t part = 0; part < 3; ++part) {
      heads[part] = packedHead(operands[part]);
      if (!heads[part] || heads[part]->part != part ||
          heads[part]->qkv != heads[0]->qkv || heads[part]->heads != heads[0]->heads)
        return;
    }
    if (!attention.getLse().use_empty() || !attention.getResult().hasOneUse())
      return;
    auto permute = dyn_cast<PermuteOp>(*attention.getResult().getUsers().begin());
    if (!permute || !permute->hasOneUse() || !swapsTokensAndHeads(permute.getPerm()))
      return;
    auto reshape = dyn_cast<ReshapeOp>(*permute->getUsers().begin());
    if (!reshape)
      return;
    Value qkv = heads[0]->qkv;
    FailureOr<QkvHeads> layout =
        qkvHeads(cast<RankedTensorType>(qkv.getType()), heads[0]->heads);
    auto packedType = cast<RankedTensorType>(qkv.getType());
    if (failed(layout) ||
        reshape.getType() != RankedTensorType::get(layout->packedShape(1),
                                                   packedType.getElementType()))
      return;
    OpBuilder b(attention);
    auto folded = b.create<QkvAttentionOp>(
        attention.getLoc(), reshape.getType(), attention.getLse().getType(), qkv,
        attention.getMask(), b.getI64IntegerAttr(layout->heads),
        attention.getCausalAttr(), attention.getScaleAttr());
    reshape.getResult().replaceAllUsesWith(folded.getResult());
    reshape.erase();
    permute.erase();
    attention.erase();
    for (std::optional<PackedHead> &head : heads)
      for (Operation *op : head->chain)
        op->erase();
  }
};

} // namespace
