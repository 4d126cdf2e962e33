//===- GemmDims.h - the one derivation of a product's extents ---*- C++ -*-===//
//
// M, N, K, the batch and the operand strides of vouch.matmul, vouch.linear
// and vouch.linear_weight_grad, derived once from the operand types:
// codegen's recipes, the planner's small-product rule, linear's VJP builder and the reference
// interpreter's matmul read them from here (the interpreter's linear keeps
// its own plain loop over the weight's shape).
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_IR_GEMMDIMS_H
#define VOUCH_IR_GEMMDIMS_H

#include <optional>

#include "ir/VouchOps.h"

namespace vouch {

/// C[b] (m x n) = op(A[b]) (m x k) · op(B[b]) (k x n), row-major; A[b]
/// starts at b * strideA elements, B[b] at b * strideB. For linear: A is the
/// input [rows, in], B the weight [out, in] read transposed.
struct GemmDims {
  bool transA = false, transB = false;
  int64_t batch = 1, m = 0, n = 0, k = 0, strideA = 0, strideB = 0;
};

/// A matmul's batch is its result's leading axes, folded into one: a rank-2
/// operand is shared by every entry (stride 0, cuBLAS's strided batch reads
/// it again). A shared untransposed rhs under an untransposed batched lhs
/// folds the batch into M instead: [batch·M, K] · [K, N] is one product,
/// the result's rows in the same order.
inline GemmDims getGemmDims(MatmulOp op) {
  auto lt = llvm::cast<mlir::RankedTensorType>(op.getLhs().getType()).getShape();
  auto rt = llvm::cast<mlir::RankedTensorType>(op.getRhs().getType()).getShape();
  auto ct = llvm::cast<mlir::RankedTensorType>(op.getResult().getType()).getShape();
  size_t l = lt.size(), r = rt.size();
  GemmDims d;
  d.transA = op.getTransposeLhs();
  d.transB = op.getTransposeRhs();
  d.batch = 1;
  for (size_t i = 0; i + 2 < ct.size(); ++i)
    d.batch *= ct[i];
  d.m = d.transA ? lt[l - 1] : lt[l - 2];
  d.k = d.transA ? lt[l - 2] : lt[l - 1];
  d.n = d.transB ? rt[r - 2] : rt[r - 1];
  d.strideA = l > 2 ? d.m * d.k : 0;
  d.strideB = r > 2 ? d.k * d.n : 0;
  if (l > 2 && r == 2 && !d.transA) {
    d.m *= d.batch;
    d.batch = 1;
    d.strideA = d.m * d.k;
    d.strideB = 0;
  }
  return d;
}

inline GemmDims getGemmDims(LinearOp op) {
  auto wt = llvm::cast<mlir::RankedTensorType>(op.getWeight().getType()).getShape();
  GemmDims d;
  d.transB = true;
  d.n = wt[0];
  d.k = wt[1];
  d.m = getNumElements(op.getInput().getType()) / d.k;
  return d;
}

/// linear_weight_grad's product weight_grad [out, in] = gradᵀ·input: A is
/// the grad [rows, out] read transposed, B the input [rows, in]; K = rows.
inline GemmDims getGemmDims(LinearWeightGradOp op) {
  auto gt = llvm::cast<mlir::RankedTensorType>(op.getGrad().getType()).getShape();
  auto xt = llvm::cast<mlir::RankedTensorType>(op.getInput().getType()).getShape();
  GemmDims d;
  d.transA = true;
  d.m = gt[1];
  d.n = xt[1];
  d.k = gt[0];
  return d;
}

/// The extents of a matmul, linear or linear_weight_grad; nothing for any
/// other op.
inline std::optional<GemmDims> getGemmDims(mlir::Operation *op) {
  if (auto mm = llvm::dyn_cast<MatmulOp>(op))
    return getGemmDims(mm);
  if (auto lin = llvm::dyn_cast<LinearOp>(op))
    return getGemmDims(lin);
  if (auto wg = llvm::dyn_cast<LinearWeightGradOp>(op))
    return getGemmDims(wg);
  return std::nullopt;
}

} // namespace vouch

#endif // VOUCH_IR_GEMMDIMS_H
