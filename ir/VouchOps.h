//===- VouchOps.h - the vouch ops and their interfaces ---------*- C++ -*-===//
#ifndef VOUCH_IR_VOUCHOPS_H
#define VOUCH_IR_VOUCHOPS_H

#include <array>
#include <string>

#include "ir/OpTable.h"
#include "ir/VouchAttrs.h"
#include "ir/VouchDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ir/VouchInterfaces.h.inc"

namespace vouch {

/// What an op's shape rule gives: the result type, or why there is none.
/// The message names no op and is worded for whoever wrote the op: verify()
/// emits it after the op (`'vouch.matmul' op batch extents differ: …`), the
/// frontend after the builtin (`'matmul': batch extents differ: …`, or
/// `'matmul' multiplies …` when `continuesName`). Each op has one rule
/// (VouchOps.cpp), a static `inferResultType` or its family's.
struct InferredType {
  mlir::RankedTensorType type; ///< null on failure
  std::string message;
  /// The rule's argument the failure is about, when the user wrote it as a
  /// list (the frontend points at it); -1: the op as a whole.
  int argument = -1;
  /// The message continues the op's name ("multiplies two rank-2 …")
  /// instead of following "name: ".
  bool continuesName = false;

  InferredType(mlir::RankedTensorType type) : type(type) {}
  static InferredType failure(std::string message, int argument = -1,
                              bool continuesName = false);
  explicit operator bool() const { return static_cast<bool>(type); }
};

/// The pointwise family's rule: every operand has one type, the result's.
InferredType inferPointwiseType(llvm::ArrayRef<mlir::RankedTensorType> operands);

/// The reduction family's rule: `axes` are strictly increasing axes of
/// `input`; the result is `input` without them.
InferredType inferReductionType(mlir::RankedTensorType input,
                                llvm::ArrayRef<int64_t> axes);

/// The pooling family's rule: `input` is [N, C, *spatial] with 1, 2 or 3
/// spatial axes; `kernel`, `stride` (each ≥ 1) and `padding` (0 ≤ padding ≤
/// kernel / 2, torch's rule) have one entry per spatial axis, and the padded
/// extent holds the kernel. The result is [N, C, *windows], floor((extent +
/// 2·padding - kernel) / stride) + 1 windows per spatial axis.
InferredType inferPoolType(mlir::RankedTensorType input,
                           llvm::ArrayRef<int64_t> kernel,
                           llvm::ArrayRef<int64_t> stride,
                           llvm::ArrayRef<int64_t> padding);

/// The heads packed in a qkv_attention's qkv [..., T, 3·H·d]: its batch
/// axes, T, H and d. The fold, the verifiers and the emitters read the
/// layout from here.
struct QkvHeads {
  llvm::SmallVector<int64_t> batch;
  int64_t tokens = 0, heads = 0, features = 0;
  /// [..., H, T, d]: one of q, k, v (or the result) as its heads.
  llvm::SmallVector<int64_t> headShape() const;
  /// [..., T, parts·H·d]: qkv (3) or the result (1).
  llvm::SmallVector<int64_t> packedShape(int64_t parts) const;
  /// The strides of [..., T, parts·H·d] read as [..., H, T, d] (the
  /// elements of one head of a part; a part's base is its offset part·H·d).
  llvm::SmallVector<int64_t> headStrides(int64_t parts) const;
  /// [..., H, T, T]: the scores the mask broadcasts to.
  llvm::SmallVector<int64_t> scoresShape() const;
};

/// qkv's heads, or failure where qkv is not [..., T, 3·heads·d] with
/// heads ≥ 1 and d ≥ 1.
mlir::FailureOr<QkvHeads> qkvHeads(mlir::RankedTensorType qkv, int64_t heads);

/// The permutation of `rank` axes that swaps axes rank-3 and rank-2: [..., T,
/// H, d] <-> [..., H, T, d], how a model splits heads out of a projection
/// (and what vouch-fold-qkv-attention looks for).
llvm::SmallVector<int64_t> tokensHeadsSwap(int64_t rank);

/// The features of each head of q and of v that a fused attention op
/// (flash_attention, qkv_attention, their gradients) holds.
std::array<int64_t, 2> attentionHeadFeatures(mlir::Operation *op);

/// The operand index of `op` that its cuda kernels read as bf16 under bf16
/// products (the op table's bf16Operand, where the op's shape allows: a fused
/// attention whose heads attention64.cuh's kernels take, at most
/// kAttention64MaxHeadDim features), or -1.
int32_t bf16OperandOf(mlir::Operation *op);

/// The result index of `op` whose bf16 twin its cuda kernel stores beside the
/// f32 value (the op table's bf16Twin), or -1.
int32_t bf16TwinOf(mlir::Operation *op);

/// verify()'s use of a rule: its failure, or a declared result type other
/// than the inferred one, is an error on `op`.
mlir::LogicalResult verifyInferredType(mlir::Operation *op,
                                       const InferredType &inferred);

/// "'tensor<2x3xf32>'": a type as shape rules quote it.
std::string quoted(mlir::Type type);

/// "[2, 3]": a list of extents, axes or dims as shape rules print it.
std::string formatList(llvm::ArrayRef<int64_t> values);

namespace OpTrait {

mlir::LogicalResult verifyPointwiseShape(mlir::Operation *op);
mlir::LogicalResult verifyReductionShape(mlir::Operation *op);

/// Verifies an op with its family's shape rule (VouchOps.td attaches these
/// to every pointwise op and reduction, so a new one needs no verify()).
template <typename ConcreteType>
class PointwiseShape
    : public mlir::OpTrait::TraitBase<ConcreteType, PointwiseShape> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyPointwiseShape(op);
  }
};
template <typename ConcreteType>
class ReductionShape
    : public mlir::OpTrait::TraitBase<ConcreteType, ReductionShape> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyReductionShape(op);
  }
};

} // namespace OpTrait
} // namespace vouch

#define GET_OP_CLASSES
#include "ir/VouchOps.h.inc"

namespace vouch {

/// Registers the vouch dialect (and nothing else) in a context.
void registerVouchDialect(mlir::MLIRContext &context);

/// Number of elements of a static-shape tensor type.
int64_t getNumElements(mlir::Type type);

/// The ops that declare or mark values rather than compute them (family
/// Structural in the op table: model, input, target, param, loss, output,
/// param_grad). Every other op computes.
bool isStructuralOp(mlir::OperationName name);
inline bool isStructuralOp(mlir::Operation *op) {
  return isStructuralOp(op->getName());
}

/// A double as a C++/CUDA literal that reads back to the same value (the
/// scalar formulas of pointwise ops and every emitter use it).
std::string exactLiteral(double value);

} // namespace vouch

#endif // VOUCH_IR_VOUCHOPS_H
