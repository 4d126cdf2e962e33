//===- GemmCall.h - row-major products as cuBLAS calls ----------*- C++ -*-===//
//
// vouch stores every tensor row-major; cuBLAS reads column-major. A
// row-major C[M,N] = op(lhs)·op(rhs) is, read column-major, Cᵀ =
// op(rhs)ᵀ·op(lhs)ᵀ: so cuBLAS's A is rhs with transa from transpose_rhs,
// its B is lhs with transb from transpose_lhs, m = N, n = M. No operand is
// ever copied into a transposed buffer (seed 5.3.7). Codegen emits these
// calls and reports print them; both take them from here.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CAPSULES_GEMMCALL_H
#define VOUCH_CAPSULES_GEMMCALL_H

#include <string>

#include "capsules/Capsule.h"

namespace vouch::capsules {

struct GemmCall {
  std::string function; ///< cublasGemmEx, cublasGemmStridedBatchedEx, cublasLtMatmul
  char transa = 'N';    ///< 'N' or 'T', applied to cuBLAS's A
  char transb = 'N';    ///< applied to cuBLAS's B
  std::string a, b;     ///< which vouch operand cuBLAS's A and B are
  std::string epilogue; ///< cublasLt only: "BIAS", "BGRADB" or "DEFAULT"; else empty
  /// Operands rounded to bf16 first (a bf16 profile's f32 products), read
  /// as CUDA_R_16BF: each by a vouch_round_bf16 launch of the executor,
  /// or, where `aInPlace` / `bInPlace` says so, already bf16 (a value made
  /// by vouch-round-bf16-operands) and read in place; `aStoredBy` /
  /// `bStoredBy` name the op that stored it (vouch.round_bf16, or an op
  /// whose kernel stores its result as bf16: vouch.cross_entropy_grad,
  /// vouch.layer_norm).
  bool bf16Operands = false;
  bool aInPlace = false, bInPlace = false;
  /// Under bf16 operands: the result D stored as bf16 (CUDA_R_16BF, a linear
  /// whose rounding vouch-round-bf16-operands folded into it), and its bias,
  /// if any, read as bf16 (vouch.round_bf16's).
  bool bf16Result = false;
  std::string aStoredBy = "vouch.round_bf16", bStoredBy = "vouch.round_bf16";
  /// The extents a tensor-core product pads and the copies that makes
  /// (runtime/cuda/gemm_call.h's describe_padding), e.g. "padded N 50257 ->
  /// 50260, W copied by vouch_repitch_f32, y copied out by vouch_repitch_f32";
  /// empty: none.
  std::string padding;
};

/// vouch.matmul (rank 2, or rank 3 with `batched`) as a cuBLAS call.
GemmCall matmulCall(bool transposeLhs, bool transposeRhs, bool batched);
/// vouch.linear (y = x·Wᵀ + b, W stored [out, in]) as a cublasLt call.
GemmCall linearCall(bool hasBias);
/// vouch.linear_weight_grad (dW = gradᵀ·input, db = Σ_rows grad) as a
/// cublasLt call with the BGRADB epilogue.
GemmCall linearWeightGradCall();

/// `cublasGemmEx(transa=N, transb=T, A=rhs, B=lhs)`; cublasLt calls add
/// `epilogue=BIAS`; bf16 operands add `, A/B rounded to bf16 by
/// vouch_round_bf16` (`, A/B bf16 in place (vouch.round_bf16)` for operands
/// read in place, naming the op that stored them, or one clause for each when
/// they differ); a bf16 result adds `, D bf16`; padding adds
/// `, ` and its text.
std::string formatGemmCall(const GemmCall &);

} // namespace vouch::capsules

#endif // VOUCH_CAPSULES_GEMMCALL_H
