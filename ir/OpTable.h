//===- OpTable.h - every op's facts, generated from its ODS record -*- C++ -*-===//
//
// The op table: one row per op of the vouch dialect, generated at build time
// from the fields of its record in VouchOps.td (llvm-tblgen --dump-json, then
// ir/gen_op_table.py), so an op's facts are written once, beside its
// definition. The frontend registers builtins from it, capsules/ derives its
// catalog from it, codegen picks a kernel recipe by family from it.
//
// Plain C++ (no MLIR): the capsule library and the runtime-facing parts of
// codegen read it without linking MLIR (target //ir:op_table).
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_IR_OPTABLE_H
#define VOUCH_IR_OPTABLE_H

#include <cstdint>
#include <string_view>
#include <vector>

namespace vouch {

/// What kind of computation an op is. Selects the kernel recipe in codegen,
/// the contract templates in capsules/, and the reduction order of the
/// numerical policy.
enum class OpFamily {
  Structural, ///< model structure (input, param, loss, ...): never planned
  Generator,  ///< no tensor operands (fill)
  Pointwise,  ///< elementwise over operands of one shape; fusible
  View,       ///< same elements, another shape (reshape): no work at all
  Index,      ///< each result element reads one input element (broadcast, permute)
  Reduction,  ///< sums over axes
  Loss,       ///< a rank-0 reduction of two operands (mse_loss)
  Gemm,       ///< matrix products on cuBLAS / cpu matmul (matmul, linear)
  /// Each row along one axis normalised with its own sums (softmax,
  /// log_softmax, layer_norm) and their gradients: one kernel per op.
  Normalization,
  /// Attention in one fused kernel (flash_attention, and qkv_attention over
  /// heads packed in one projection: online softmax, no Tq×Tk matrix in
  /// memory) and its gradient (three kernels).
  Attention,
  /// Windows over the spatial axes of [N, C, *spatial] (max_pool, avg_pool,
  /// smooth_max_pool) and their gradients: one kernel per op, the gradients
  /// gathered by each input element from the windows covering it.
  Pool,
  /// Stands for other ops (scaled_dot_product_attention): vouch-decompose
  /// replaces it by its composed form before autodiff; never planned.
  Composite,
  /// Each channel (axis 1) normalised with statistics over every other axis,
  /// kept as running statistics (the model's state) in training steps
  /// (batch_norm), and its gradient: one kernel per op.
  BatchNormalization,
  /// A convolution's product with its windows read in place, the columns
  /// never in memory (col2im_matmul: an implicit GEMM): one kernel per op.
  Convolution,
};

std::string_view toString(OpFamily family);

/// The widest head (q's and v's feature extents) the fused attention kernels
/// take: runtime/cuda/kernels/attention.cuh's kAttentionMaxHeadDim. Wider
/// heads run attention composed (vouch-decompose), and the gate refuses a
/// flash_attention or qkv_attention beyond it on cuda.
inline constexpr int64_t kMaxAttentionHeadDim = 256;

/// The widest head (q's and v's feature extents) of attention64.cuh's
/// kernels, which a tf32 / bf16 cuda build's f32 attention takes where its
/// heads fit (codegen/recipes/AttentionRecipe.cpp). Under bf16 products they
/// read qkv_attention's qkv as bf16, which vouch-round-bf16-operands then
/// rounds once.
inline constexpr int64_t kAttention64MaxHeadDim = 64;
/// Whether attention64.cuh's kernels take heads of q's `d` and v's `dv`
/// features.
inline constexpr bool attention64TakesHeads(int64_t d, int64_t dv) {
  return d <= kAttention64MaxHeadDim && dv <= kAttention64MaxHeadDim;
}

struct OpFacts {
  std::string_view mnemonic; ///< the dialect name without `vouch.`
  OpFamily family;
  std::string_view summary;  ///< the record's summary
  std::string_view formula;  ///< the value contract's claim ("lhs + rhs elementwise")
  bool hasVjp;               ///< implements VJPOpInterface
  /// Reads its operands through the unit attributes transpose_lhs /
  /// transpose_rhs (derived from the record's arguments).
  bool transposeFlags;
  /// The builtin of the model language that lowers to this op ("" when none),
  /// and its parameters as the language spells them: "x", "lhs, rhs",
  /// "x, axes = all", "input, weight, bias = none".
  std::string_view builtin;
  std::string_view builtinParams;
  /// cuda providers in the profile's order of preference, comma-separated
  /// ("cublaslt,cublas,native-cuda"; most ops "native-cuda").
  std::string_view cudaProviders;
  /// The runtime/cpu_kernels.h function computing it on cpu ("" when the cpu
  /// code is emitted inline, as for pointwise ops), and what the cpu code
  /// does besides calling it ("then divides by the reduced element count").
  std::string_view cpuKernel;
  std::string_view cpuKernelNote;
  /// Evidence keys (capsules/Evidence.cpp) for the value contracts of the
  /// reference (cpu) and the native cuda capsules ("" when none is cited).
  std::string_view cpuEvidence;
  std::string_view cudaEvidence;
  /// "none" when the op's formula rounds every product and sum on its own on
  /// every backend (its native cuda capsule then claims contract=none); ""
  /// when its native cuda kernel contracts as every other one does
  /// (capsules::kNativeCudaFmad).
  std::string_view contraction;
  /// The native cuda kernel's source files and symbol where they are not its
  /// family's ("" when the family's recipe and header compute it).
  std::string_view cudaKernelSource;
  std::string_view cudaKernel;
  /// What the native cuda kernel does besides the formula ("" when nothing
  /// the capsule must state); appended to its value summary.
  std::string_view cudaKernelNote;
  /// The op sums although its family does not (its capsules state an order).
  bool sums;
  /// The operand (index among the op's operands) whose storage its one
  /// result may be written over, -1 when none: both its cpu and cuda kernels
  /// read every element of that operand before overwriting it, and the two
  /// have one shape and element type. codegen's storage plan uses it where
  /// the op's step is the operand's last reader (codegen/StoragePlan.h).
  int32_t inPlaceOperand;
  /// The result its cuda kernel can store as bf16 (rounded to nearest even as
  /// stored), -1 when none: vouch-round-bf16-operands then folds a
  /// vouch.round_bf16 of it, which nothing else's reading of the f32 value
  /// keeps, into the op (passes/RoundBf16Operands.cpp).
  int32_t bf16Result;
  /// The operand its cuda kernels can read as bf16 under bf16 products (where
  /// its shapes allow: passes/RoundBf16Operands.cpp), -1 when none: the gate
  /// then lets its capsule read a bf16 value there.
  int32_t bf16Operand;
  /// The result its cuda kernel can store both as f32 and as bf16 (the twin
  /// rounded to nearest even as stored), -1 when none: vouch-round-bf16-operands
  /// then fuses a vouch.round_bf16 of it with the op where the f32 value has
  /// other readers (passes/RoundBf16Operands.cpp).
  int32_t bf16Twin;

  bool isStructural() const { return family == OpFamily::Structural; }
  /// Planned under capsules of its own: neither structure nor a composite
  /// (whose composed form's ops are planned instead).
  bool isPlanned() const {
    return family != OpFamily::Structural && family != OpFamily::Composite;
  }
};

/// Every op of the dialect, in ODS definition order.
const std::vector<OpFacts> &opTable();

/// The row of `mnemonic` (without `vouch.`), or nullptr.
const OpFacts *findOpFacts(std::string_view mnemonic);

/// The row whose builtin is `name`, or nullptr.
const OpFacts *findBuiltinOp(std::string_view name);

/// One parameter of a signature as the table spells it: "axes = all" is
/// {"axes", "all"}; `defaultText` is empty for a required parameter.
struct SignatureParam {
  std::string_view name;
  std::string_view defaultText;
};

/// "x, axes = all" -> {{"x", ""}, {"axes", "all"}} (builtinParams, and the
/// parameters of clause callees in ir/ClauseTable.h).
std::vector<SignatureParam> parseSignature(std::string_view params);

/// "cublas,cublaslt,native-cuda" -> {"cublas", "cublaslt", "native-cuda"}.
std::vector<std::string_view> splitList(std::string_view commaSeparated);

} // namespace vouch

#endif // VOUCH_IR_OPTABLE_H
