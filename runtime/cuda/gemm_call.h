// gemm_call.h: how a row-major matmul maps onto a column-major cuBLAS call (pure).
//
// vouch stores matrices row-major; cuBLAS is column-major. A row-major [r,c] array is
// the column-major [c,r] array of its transpose, so the row-major product
//   C[M,N] = op(A)[M,K] · op(B)[K,N]
// is computed, without copying anything, as the column-major product
//   Cᵀ[N,M] = op(B)ᵀ · op(A)ᵀ
// i.e. cuBLAS's first operand is our B and its second is our A:
//   opA = trans_b ? T : N   lda = trans_b ? K : N   (B stored [N,K] or [K,N])
//   opB = trans_a ? T : N   ldb = trans_a ? M : K   (A stored [K,M] or [M,K])
//   m = N, n = M, k = K, ldc = N.
// Batched products (batch > 1) use cublasGemmStridedBatchedEx with strideA = stride_b,
// strideB = stride_a (0 broadcasts one matrix), strideC = M·N. Degenerate shapes call
// nothing (an empty output) or clear C (K = 0: every sum is empty).
//
// This file is plain C++ with no CUDA header, so the mapping is unit-tested on machines
// without a GPU (gemm_call_test emulates the described call on the host), and the audit
// report prints GemmCall::to_string(), e.g.
//   cublasGemmEx(opA=T, opB=N, m=8, n=1, k=2, lda=2, ldb=2, ldc=8)
#ifndef VOUCH_RUNTIME_CUDA_GEMM_CALL_H_
#define VOUCH_RUNTIME_CUDA_GEMM_CALL_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/status.h"

namespace vouch::rt::cuda {

enum class GemmDType { F32, F64 };

// What an f32 GEMM's operands are rounded to before they are multiplied (sums stay f32):
// Fp32 not at all (CUBLAS_COMPUTE_32F), Tf32 to 10 mantissa bits
// (CUBLAS_COMPUTE_32F_FAST_TF32), Bf16 to 7 mantissa bits, nearest even: the operands
// are bf16 in memory (CUDA_R_16BF A and B, CUDA_R_32F C, CUBLAS_COMPUTE_32F), rounded
// copies that the caller makes (the executor's vouch_round_bf16 launches). cuBLAS's
// own bf16 mode for f32 operands, CUBLAS_COMPUTE_32F_FAST_16BF, is not used: measured
// on an H200 with CUDA 13.0 it kept operand bits that bf16 drops and ran no faster
// than FAST_TF32, while bf16 operands in memory ran about twice as fast
// (docs/performance.md, 2026-12-02). F64 products ignore it (CUBLAS_COMPUTE_64F).
enum class ProductMath { Fp32, Tf32, Bf16 };
// A bf16 value's bits: the upper half of the f32 it was rounded from.
using bf16_bits = uint16_t;
const char* product_math_name(ProductMath math);  // "fp32", "tf32", "bf16"
// The cuBLAS compute type's name for `math` and `dtype`, e.g. "CUBLAS_COMPUTE_32F_FAST_TF32".
const char* compute_type_name(ProductMath math, GemmDType dtype);

struct GemmCall {
  enum class Api {
    None,                    // empty output: nothing to do
    MemsetZero,              // K = 0 and not accumulating: C = 0 (cudaMemsetAsync)
    GemmEx,                  // cublasGemmEx
    GemmStridedBatchedEx,    // cublasGemmStridedBatchedEx
  };
  Api api = Api::None;
  // cuBLAS's operands: A is the row-major B operand, B the row-major A operand.
  bool op_a_transposed = false, op_b_transposed = false;
  int m = 0, n = 0, k = 0, lda = 1, ldb = 1, ldc = 1;
  long long stride_a = 0, stride_b = 0, stride_c = 0;  // batched only
  int batch = 1;
  bool accumulate = false;  // beta = 1 (C += ...) or 0 (C = ...)
  GemmDType dtype = GemmDType::F32;
  ProductMath math = ProductMath::Fp32;  // F32 only; F64 always Fp32
  const char* data_type = "CUDA_R_32F";             // A, B and C (gemm_data_types)
  const char* compute_type = "CUBLAS_COMPUTE_32F";  // compute_type_name(math, dtype)
  size_t zero_bytes = 0;                            // MemsetZero: bytes of C to clear

  // The call with its parameters, e.g. "cublasGemmEx(opA=T, opB=N, m=8, n=1, k=2,
  // lda=2, ldb=2, ldc=8)"; "none (empty output: ...)"; "cudaMemsetAsync(C, 0, 80 bytes)
  // (K=0: empty sums)".
  std::string to_string() const;
  // to_string() plus " [CUDA_R_32F, CUBLAS_COMPUTE_32F, beta=0]" for GEMM calls.
  std::string to_string_with_policy() const;
};

// The storage types of a product's operands and result, as the report prints them:
// "CUDA_R_32F", "CUDA_R_64F", or "CUDA_R_16BF A/B, CUDA_R_32F C" (Bf16).
const char* gemm_data_types(ProductMath math, GemmDType dtype);

// The call gemm_row_major (blas.h) makes for these arguments (same meaning as
// runtime/cpu_kernels.h's matmul). Errors: a negative extent or stride, or an extent
// (batch, M, N, K) above INT_MAX, which the cuBLAS ABI cannot take. `math` selects the
// F32 compute type (compute_type_name) and is ignored for F64 (CUBLAS_COMPUTE_64F).
// `pitch_a` / `pitch_b`: the stored row length of A / B in elements when it exceeds
// the dense one (rows padded; 0: dense); a smaller one is an error.
Result<GemmCall> describe_gemm(bool trans_a, bool trans_b, int64_t batch, int64_t M,
                               int64_t N, int64_t K, int64_t stride_a, int64_t stride_b,
                               bool accumulate, ProductMath math,
                               GemmDType dtype = GemmDType::F32, int64_t pitch_a = 0,
                               int64_t pitch_b = 0);

// A copy the executor makes around a product (vouch_round_bf16_f32's or
// vouch_repitch_f32's arguments): `batches` dense matrices of `rows` rows of `cols`
// elements, as they lie in their buffer from its start, and the same matrices laid out
// with `out_rows` >= rows rows at a row pitch of `pitch` >= cols elements, every pad
// element zero; `stride`: the padded batch stride (0: one matrix for every entry).
// rows = 0: no copy. `flat`: a batch whose stride is not its matrix size, copied as
// one row (bf16 only: the product reads it dense, unpadded).
struct OperandLayout {
  int64_t batches = 0, rows = 0, cols = 0, out_rows = 0, pitch = 0, stride = 0;
  bool flat = false;
  int64_t scratch_elements() const { return batches * out_rows * pitch; }
  // gemm_row_major's pitch argument for it (0: dense).
  int64_t gemm_pitch() const { return flat ? 0 : pitch; }
  // Whether an operand already stored as bf16 (a bf16 buffer, rounded by its producer)
  // may be read where it lies instead of through this copy: the copy would not move a
  // value (no padded row or pitch; a flat copy is the buffer as it lies). rows = 0 (no
  // copy) reads in place too.
  bool in_place_as_bf16() const { return rows == out_rows && cols == pitch; }
  bool operator==(const OperandLayout& o) const {
    return batches == o.batches && rows == o.rows && cols == o.cols &&
           out_rows == o.out_rows && pitch == o.pitch && stride == o.stride && flat == o.flat;
  }
};

// How an f32 product runs under tensor-core math (Tf32, Bf16): every extent that is a
// row pitch (N, C's; M when A is transposed; K when A is not, or B is) and is not a
// multiple of the quantum (16 bytes of operand: 4 f32 for Tf32, 8 bf16 for Bf16) is
// padded up to one, with zeros, and the library call runs on the padded extents (a bare
// row count is left: padding it buys only copies). Measured on an H200 at GPT-2's LM head (50257 logits a row:
// tools/bench/lm_head_pitch.cu, docs/performance.md 2026-12-04): an odd extent costs
// 2-7x the product in either precision, whichever operand or output it falls on, and
// a 16-byte pitch alone does not remove it (the extents must be padded).
//  - An operand whose padded shape differs from its stored one (or, for Bf16, every
//    operand: the product reads bf16) is copied into the executor's scratch first:
//    `a` / `b` (vouch_round_bf16_f32 for Bf16, vouch_repitch_f32 for Tf32); an
//    aligned Tf32 operand is read in place (rows = 0).
//  - A padded output (M or N padded) is written at its padded shape into the scratch
//    and copied out by vouch_repitch_f32 (`c`: rows / cols the real extents, out_rows /
//    pitch the padded ones); else C is written in place (rows = 0).
//  - A linear's bias is copied to the padded N (`bias`, f32), when N is padded.
// The added products are 0 · 0 at the end of every sum (K) or land in rows and columns
// nobody reads (M, N): the values are the unpadded product's. A batch whose stride is
// not its matrix size is not padded (Tf32 reads it in place; Bf16 copies it flat and
// pads the other operand's rows only); nor is an empty product. Fp32 and F64 products
// are never padded.
struct ProductPlan {
  int64_t M = 0, N = 0, K = 0;         // the extents the library call runs with
  int64_t stride_a = 0, stride_b = 0;  // its batch strides (of the copies, where copied)
  int64_t pitch_a = 0, pitch_b = 0;    // its operand pitches (0: dense)
  OperandLayout a, b, c, bias;         // the copies (rows = 0: none)
  bool padded_output() const { return c.rows > 0; }
};
// The quantum of `math`'s padding: 8 (Bf16), 4 (Tf32), 1 (Fp32: no padding).
int64_t product_quantum(ProductMath math);
// A gemm_row_major product of f32 operands (blas.h's arguments) under `math`.
ProductPlan plan_gemm(ProductMath math, bool trans_a, bool trans_b, int64_t batch, int64_t M,
                      int64_t N, int64_t K, int64_t stride_a, int64_t stride_b);
// A linear_bias_row_major product (y[rows,out] = x[rows,in] · W[out,in]ᵀ + bias): M =
// rows, N = out, K = in; `a` copies x, `b` copies W.
ProductPlan plan_linear(ProductMath math, int64_t rows, int64_t in, int64_t out, bool has_bias);
// "" for a plan of a product (M, N, K) without padding, else what it pads and what
// vouch_repitch_f32 copies (Bf16's operand roundings are not named), e.g. "padded N
// 50257 -> 50260, W copied by vouch_repitch_f32, y copied out by vouch_repitch_f32".
std::string describe_padding(const ProductPlan& plan, ProductMath math, bool linear, int64_t M,
                             int64_t N, int64_t K);

// linear_bias_row_major (blas.h): y[rows,out] = x[rows,in] · W[out,in]ᵀ (+ bias[out])
// as one cuBLASLt matmul: column-major yᵀ[out,rows] = op_T(W) · xᵀ with the bias
// broadcast over columns by the epilogue (CUBLASLT_EPILOGUE_BIAS).
// linear_weight_grad_row_major (blas.h, bias_grad): dW[out,in] = dy[rows,out]ᵀ ·
// x[rows,in] and db[out] = Σ_rows dy as one cuBLASLt matmul: column-major dWᵀ[in,out] =
// (xᵀ col-major [in,rows]) · op_T(dy stored as col-major [out,rows]), the epilogue
// summing B's (dy's) columns over k = rows (CUBLASLT_EPILOGUE_BGRADB).
struct LinearCall {
  enum class Api {
    None,          // empty output: rows = 0 or out = 0 (bias_grad: out = 0)
    LtMatmul,      // cublasLtMatmul
    GemmThenBias,  // in = 0 (or the epilogue was refused): C cleared, then bias GEMM;
                   // bias_grad: rows = 0 or in = 0 (or refused): dW's GEMM, then db's
  };
  Api api = Api::LtMatmul;
  int m = 0, n = 0, k = 0, lda = 1, ldb = 1, ldc = 1;  // opA = T, opB = N (bias_grad: N, T)
  bool bias = false;       // a bias vector: read (BIAS), or written (bias_grad)
  bool bias_grad = false;  // a linear's weight gradient with its bias's (BGRADB)
  // A linear's y stored as bf16 (D = CUDA_R_16BF; the bias, if any, f32:
  // BIAS_DATA_TYPE = CUDA_R_32F): ProductMath::Bf16 and F32 only.
  bool bf16_result = false;
  ProductMath math = ProductMath::Fp32;  // F32 only; F64 always Fp32
  GemmDType dtype = GemmDType::F32;
  const char* compute_type = "CUBLAS_COMPUTE_32F";  // compute_type_name(math, dtype)
  const char* data_type = "CUDA_R_32F";             // gemm_data_types(math, dtype)
  // "cublasLtMatmul(opA=T, opB=N, m=8, n=1, k=2, lda=2, ldb=2, ldc=8, epilogue=BIAS)".
  std::string to_string() const;
};

// f64: CUBLAS_COMPUTE_64F, `math` ignored. `bf16_result`: y stored as bf16 (an error
// but under ProductMath::Bf16 with GemmDType::F32).
Result<LinearCall> describe_linear(int64_t rows, int64_t in, int64_t out, bool has_bias,
                                   ProductMath math, GemmDType dtype = GemmDType::F32,
                                   bool bf16_result = false);
// The weight and bias gradients of a linear (bias_grad). f64: as describe_linear.
Result<LinearCall> describe_linear_weight_grad(int64_t rows, int64_t in, int64_t out,
                                               ProductMath math,
                                               GemmDType dtype = GemmDType::F32);

// The column sums of linear_weight_grad_row_major's fallback: db[out] (+)= Σ over
// `rows` rows of dy[rows,out] as one GEMM with a column of ones, row-major db[1,out] =
// ones[1,rows] · dy[rows,out] (describe_gemm's mapping; `accumulate` adds to db). Its
// products are x · 1, exact in every precision: Tf32 runs as Fp32 (no rounding of dy),
// Bf16 reads bf16 dy and bf16 ones.
Result<GemmCall> describe_column_sums(int64_t rows, int64_t out, bool accumulate,
                                      ProductMath math, GemmDType dtype = GemmDType::F32);

// The bias broadcast of the fallback path (y[r,:] += bias for every row r), as one
// strided-batched GEMM: per row, column-major y_r[out,1] += bias[out,1] · one[1,1], with
// strideA = strideB = 0 and strideC = out. `rows` and `out` must be > 0. ProductMath::Bf16
// (an f32 run): a bf16 bias and one (CUDA_R_16BF A/B), y f32; the bias's values exactly.
Result<GemmCall> describe_bias_broadcast(int64_t rows, int64_t out,
                                         GemmDType dtype = GemmDType::F32,
                                         ProductMath math = ProductMath::Fp32);

}  // namespace vouch::rt::cuda

#endif  // VOUCH_RUNTIME_CUDA_GEMM_CALL_H_
