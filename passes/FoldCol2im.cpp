//===- FoldCol2im.cpp - products folded by col2im as one op -----*- C++ -*-===//
//
// A convolution's input gradient is, in its composed form, a product through
// transpose_lhs (the weight's rows times the output gradient) whose columns
// col2im folds back into the image: the columns are C/G·K times the image
// (9× for a 3×3 kernel), written by the product and read back by col2im.
// col2im_matmul computes the same sums without them (an implicit GEMM).
// The pass only rewrites; ir/VouchOps.td's col2im_matmul says what it
// computes and codegen's conv recipe emits it.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace vouch {
#define GEN_PASS_DEF_FOLDCOL2IM
#include "passes/Passes.h.inc"
} // namespace vouch

using namespace mlir;
using namespace vouch;

namespace {

/// Where the fold pays, measured on an H100 (docs/performance.md, the conv
/// lab, batch 256): the kernel computes 64 channels per tile
/// (runtime/cuda/kernels/implicit_tiles.h), so an image with few channels
/// per group does mostly zeros (the 3-channel stem's dx: 577 µs folded
/// against 102 composed in fp32, 289 against 119 in tf32): at least half a
/// tile. And what it saves is the columns' round trip, K times the image: a
/// 1×1 kernel's columns are no larger than the image, and its dx folded took
/// 0.90-1.30× the composed time. Elsewhere, 3×3 kernels of 64 to
/// 512 channels: 0.76× (512 channels of 4×4, tf32) to 4.3× (64 of 32×32,
/// tf32) as fast as the composed form.
constexpr int64_t kMinFoldChannelsPerGroup = 32;

/// The product col2im folds through one reshape, where it is one
/// col2im_matmul: lhsᵀ·rhs of rank 2 (one group) or 3 (batched over the
/// groups, neither operand broadcast), used only by that reshape, which only
/// col2im uses; all three in one VJP (vouch.vjp_of), so no forward node
/// loses an op of the tape; an image of at least kMinFoldChannelsPerGroup
/// channels per group, and a kernel of more than one offset.
MatmulOp foldableProduct(Col2imOp col2im) {
  auto reshape = col2im.getInput().getDefiningOp<ReshapeOp>();
  if (!reshape || !reshape->hasOneUse())
    return nullptr;
  auto product = reshape.getInput().getDefiningOp<MatmulOp>();
  if (!product || !product->hasOneUse() || !product.getTransposeLhs() ||
      product.getTransposeRhs())
    return nullptr;
  for (Operation *op : {col2im.getOperation(), reshape.getOperation(),
                        product.getOperation()})
    if (!op->hasAttr(kVjpOfAttr))
      return nullptr;
  auto image = cast<RankedTensorType>(col2im.getType());
  if (image.getDimSize(1) / col2im.getGroups() < kMinFoldChannelsPerGroup ||
      llvm::all_of(col2im.getKernel(), [](int64_t k) { return k == 1; }))
    return nullptr;
  auto lhs = cast<RankedTensorType>(product.getLhs().getType());
  auto rhs = cast<RankedTensorType>(product.getRhs().getType());
  int64_t groups = col2im.getGroups();
  int64_t rank = groups == 1 ? 2 : 3;
  if (lhs.getRank() != rank || rhs.getRank() != rank)
    return nullptr;
  if (rank == 3 && (lhs.getDimSize(0) != groups || rhs.getDimSize(0) != groups))
    return nullptr;
  return product;
}

struct FoldCol2imPass : public vouch::impl::FoldCol2imBase<FoldCol2imPass> {
  void runOnOperation() override {
    SmallVector<Col2imOp> folds;
    getOperation().walk([&](Col2imOp op) { folds.push_back(op); });
    for (Col2imOp col2im : folds) {
      MatmulOp product = foldableProduct(col2im);
      if (!product)
        continue;
      Operation *reshape = col2im.getInput().getDefiningOp();
      auto columns = cast<RankedTensorType>(col2im.getInput().getType());
      OpBuilder b(col2im);
      auto folded = b.create<Col2imMatmulOp>(
          col2im.getLoc(), col2im.getType(), product.getLhs(),
          product.getRhs(), col2im.getKernel(), col2im.getStride(),
          col2im.getPadding(), col2im.getDilation(),
          columns.getShape().drop_front(3), col2im.getGroups());
      // col2im's node and tags: the result is its result.
      for (NamedAttribute attr : col2im->getDiscardableAttrs())
        folded->setAttr(attr.getName(), attr.getValue());
      col2im.getResult().replaceAllUsesWith(folded.getResult());
      col2im.erase();
      reshape->erase();
      product.erase();
    }
  }
};

} // namespace

