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

// A bf16 product's operand: how it lies in its f32 buffer, from the buffer's start, and
// in the bf16 copy the executor rounds it into (vouch_round_bf16_f32's arguments):
// `batches` dense matrices of `rows` rows of `cols` elements, written as matrices of
// `out_rows` rows at a row pitch of `pitch` elements, the pad zero; `stride`: the batch
// stride of the copy (0: one matrix for every entry). A gemm_row_major operand's rows
// are padded to a multiple of 8 elements (16 bytes of bf16: the stride alignment of
// cuBLAS's fastest, TMA, kernels) and, where K is not a multiple of 8, K to one in both
// operands (zero rows or columns: the added products are 0 · 0); an odd extent (GPT-2's
// 50257 logits) otherwise costs several times the product. A batch whose stride is
// not its matrix size is copied flat (one row), unpadded, and K is then not padded.
struct OperandLayout {
  int64_t batches = 0, rows = 0, cols = 0, out_rows = 0, pitch = 0, stride = 0;
  bool flat = false;  // copied as one row: the product reads it dense
  int64_t scratch_elements() const { return batches * out_rows * pitch; }
  // gemm_row_major's pitch argument for it (0: dense).
  int64_t gemm_pitch() const { return flat ? 0 : pitch; }
  bool operator==(const OperandLayout& o) const {
    return batches == o.batches && rows == o.rows && cols == o.cols &&
           out_rows == o.out_rows && pitch == o.pitch && stride == o.stride && flat == o.flat;
  }
};
// The K a bf16 gemm_row_major product runs with (K rounded up to a multiple of 8 where
// both operands can be padded).
int64_t bf16_padded_k(int64_t M, int64_t N, int64_t K, int64_t stride_a, int64_t stride_b);
// Operand `which` (0: A, 1: B) of a bf16 gemm_row_major product.
OperandLayout bf16_gemm_operand(int which, bool trans_a, bool trans_b, int64_t batch, int64_t M,
                                int64_t N, int64_t K, int64_t stride_a, int64_t stride_b);
// Operand `which` (0: x, 1: W) of a bf16 linear_bias_row_major: unpadded (its cuBLASLt
// plan reads dense rows).
OperandLayout bf16_linear_operand(int which, int64_t rows, int64_t in, int64_t out);

// linear_bias_row_major (blas.h): y[rows,out] = x[rows,in] · W[out,in]ᵀ (+ bias[out])
// as one cuBLASLt matmul: column-major yᵀ[out,rows] = op_T(W) · xᵀ with the bias
// broadcast over columns by the epilogue (CUBLASLT_EPILOGUE_BIAS).
struct LinearCall {
  enum class Api {
    None,          // rows = 0 or out = 0
    LtMatmul,      // cublasLtMatmul
    GemmThenBias,  // in = 0 (or the epilogue was refused): C cleared, then bias GEMM
  };
  Api api = Api::LtMatmul;
  int m = 0, n = 0, k = 0, lda = 1, ldb = 1, ldc = 1;  // opA = T, opB = N
  bool bias = false;
  ProductMath math = ProductMath::Fp32;  // F32 only; F64 always Fp32
  GemmDType dtype = GemmDType::F32;
  const char* compute_type = "CUBLAS_COMPUTE_32F";  // compute_type_name(math, dtype)
  const char* data_type = "CUDA_R_32F";             // gemm_data_types(math, dtype)
  // "cublasLtMatmul(opA=T, opB=N, m=8, n=1, k=2, lda=2, ldb=2, ldc=8, epilogue=BIAS)".
  std::string to_string() const;
};

// f64: CUBLAS_COMPUTE_64F, `math` ignored.
Result<LinearCall> describe_linear(int64_t rows, int64_t in, int64_t out, bool has_bias,
                                   ProductMath math, GemmDType dtype = GemmDType::F32);

// The bias broadcast of the fallback path (y[r,:] += bias for every row r), as one
// strided-batched GEMM: per row, column-major y_r[out,1] += bias[out,1] · one[1,1], with
// strideA = strideB = 0 and strideC = out. `rows` and `out` must be > 0.
Result<GemmCall> describe_bias_broadcast(int64_t rows, int64_t out,
                                         GemmDType dtype = GemmDType::F32);

}  // namespace vouch::rt::cuda

#endif  // VOUCH_RUNTIME_CUDA_GEMM_CALL_H_
