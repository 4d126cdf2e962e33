// gemm_call.cc: the row-major -> column-major GEMM mapping (gemm_call.h).
#include "runtime/cuda/gemm_call.h"

#include <algorithm>
#include <climits>
#include <tuple>
#include <utility>

namespace vouch::rt::cuda {

namespace {

// Checks that `value` (named `name` in the message) is a non-negative int.
Status check_extent(const char* what, const char* name, int64_t value) {
  if (value < 0)
    return Status::Error(std::string(what) + ": " + name + " = " + std::to_string(value) +
                         " is negative");
  if (value > INT_MAX)
    return Status::Error(std::string(what) + ": " + name + " = " + std::to_string(value) +
                         " does not fit the int extents of the cuBLAS ABI (max " +
                         std::to_string(INT_MAX) + ")");
  return Status::Ok();
}

const char* op_name(bool transposed) { return transposed ? "T" : "N"; }

}  // namespace

const char* product_math_name(ProductMath math) {
  switch (math) {
    case ProductMath::Fp32: return "fp32";
    case ProductMath::Tf32: return "tf32";
    case ProductMath::Bf16: return "bf16";
  }
  return "fp32";
}

const char* compute_type_name(ProductMath math, GemmDType dtype) {
  if (dtype == GemmDType::F64) return "CUBLAS_COMPUTE_64F";
  switch (math) {
    case ProductMath::Fp32: return "CUBLAS_COMPUTE_32F";
    case ProductMath::Tf32: return "CUBLAS_COMPUTE_32F_FAST_TF32";
    case ProductMath::Bf16: return "CUBLAS_COMPUTE_32F";  // bf16 operands, f32 products
  }
  return "CUBLAS_COMPUTE_32F";
}

const char* gemm_data_types(ProductMath math, GemmDType dtype) {
  if (dtype == GemmDType::F64) return "CUDA_R_64F";
  return math == ProductMath::Bf16 ? "CUDA_R_16BF A/B, CUDA_R_32F C" : "CUDA_R_32F";
}

Result<GemmCall> describe_gemm(bool trans_a, bool trans_b, int64_t batch, int64_t M,
                               int64_t N, int64_t K, int64_t stride_a, int64_t stride_b,
                               bool accumulate, ProductMath math, GemmDType dtype,
                               int64_t pitch_a, int64_t pitch_b) {
  const char* what = "gemm";
  for (auto [name, v] : {std::pair<const char*, int64_t>{"batch", batch}, {"M", M}, {"N", N},
                         {"K", K}}) {
    Status s = check_extent(what, name, v);
    if (!s.ok()) return s;
  }
  if (stride_a < 0)
    return Status::Error("gemm: stride_a = " + std::to_string(stride_a) + " is negative");
  if (stride_b < 0)
    return Status::Error("gemm: stride_b = " + std::to_string(stride_b) + " is negative");

  GemmCall c;
  c.dtype = dtype;
  c.accumulate = accumulate;
  c.math = dtype == GemmDType::F64 ? ProductMath::Fp32 : math;
  c.data_type = gemm_data_types(c.math, dtype);
  c.compute_type = compute_type_name(c.math, dtype);
  // Column-major Cᵀ = op(B)ᵀ op(A)ᵀ: cuBLAS's A is our B, its B is our A.
  c.op_a_transposed = trans_b;
  c.op_b_transposed = trans_a;
  c.m = int(N);
  c.n = int(M);
  c.k = int(K);
  // Leading dimensions are the stored row lengths; cuBLAS wants them >= 1 even for
  // empty matrices.
  const int64_t row_a = trans_a ? M : K, row_b = trans_b ? K : N;
  for (auto [name, pitch, row] : {std::tuple<const char*, int64_t, int64_t>{"pitch_a", pitch_a,
                                                                            row_a},
                                  {"pitch_b", pitch_b, row_b}}) {
    if (pitch != 0 && pitch < row)
      return Status::Error(std::string("gemm: ") + name + " = " + std::to_string(pitch) +
                           " is shorter than the row (" + std::to_string(row) + ")");
    Status s = check_extent(what, name, pitch);
    if (!s.ok()) return s;
  }
  c.lda = int(std::max<int64_t>(1, pitch_b != 0 ? pitch_b : row_b));
  c.ldb = int(std::max<int64_t>(1, pitch_a != 0 ? pitch_a : row_a));
  c.ldc = int(std::max<int64_t>(1, N));
  c.batch = int(batch);
  c.stride_a = stride_b;
  c.stride_b = stride_a;
  c.stride_c = M * N;  // <= INT_MAX², fits int64

  if (batch == 0 || M == 0 || N == 0) {
    c.api = GemmCall::Api::None;
  } else if (K == 0) {
    c.api = accumulate ? GemmCall::Api::None : GemmCall::Api::MemsetZero;
    c.zero_bytes = accumulate ? 0
                              : size_t(batch) * size_t(M) * size_t(N) *
                                    (dtype == GemmDType::F64 ? sizeof(double) : sizeof(float));
  } else if (batch == 1) {
    c.api = GemmCall::Api::GemmEx;
  } else {
    c.api = GemmCall::Api::GemmStridedBatchedEx;
  }
  return c;
}

std::string GemmCall::to_string() const {
  switch (api) {
    case Api::None:
      return "none (nothing to compute: batch=" + std::to_string(batch) +
             ", M=" + std::to_string(n) + ", N=" + std::to_string(m) +
             ", K=" + std::to_string(k) + (accumulate ? ", accumulate" : "") + ")";
    case Api::MemsetZero:
      return "cudaMemsetAsync(C, 0, " + std::to_string(zero_bytes) + " bytes) (K=0: empty sums)";
    case Api::GemmEx:
      return std::string("cublasGemmEx(opA=") + op_name(op_a_transposed) +
             ", opB=" + op_name(op_b_transposed) + ", m=" + std::to_string(m) +
             ", n=" + std::to_string(n) + ", k=" + std::to_string(k) +
             ", lda=" + std::to_string(lda) + ", ldb=" + std::to_string(ldb) +
             ", ldc=" + std::to_string(ldc) + ")";
    case Api::GemmStridedBatchedEx:
      return std::string("cublasGemmStridedBatchedEx(opA=") + op_name(op_a_transposed) +
             ", opB=" + op_name(op_b_transposed) + ", m=" + std::to_string(m) +
             ", n=" + std::to_string(n) + ", k=" + std::to_string(k) +
             ", lda=" + std::to_string(lda) + ", strideA=" + std::to_string(stride_a) +
             ", ldb=" + std::to_string(ldb) + ", strideB=" + std::to_string(stride_b) +
             ", ldc=" + std::to_string(ldc) + ", strideC=" + std::to_string(stride_c) +
             ", batch=" + std::to_string(batch) + ")";
  }
  return "?";
}

std::string GemmCall::to_string_with_policy() const {
  std::string s = to_string();
  if (api == Api::GemmEx || api == Api::GemmStridedBatchedEx)
    s += std::string(" [") + data_type + ", " + compute_type +
         ", beta=" + (accumulate ? "1" : "0") + "]";
  return s;
}

namespace {

// What describe_linear and describe_linear_weight_grad share: the extents checked
// against cuBLASLt's int arguments (named after `op`), and the precision of the call.
Result<LinearCall> linear_call_precision(const char* op, int64_t rows, int64_t in,
                                         int64_t out, ProductMath math, GemmDType dtype) {
  for (auto [name, v] : {std::pair<const char*, int64_t>{"rows", rows}, {"in", in},
                         {"out", out}}) {
    Status s = check_extent(op, name, v);
    if (!s.ok()) return s;
  }
  LinearCall c;
  c.dtype = dtype;
  c.math = dtype == GemmDType::F64 ? ProductMath::Fp32 : math;
  c.compute_type = compute_type_name(c.math, dtype);
  c.data_type = gemm_data_types(c.math, dtype);
  return c;
}

}  // namespace

Result<LinearCall> describe_linear(int64_t rows, int64_t in, int64_t out, bool has_bias,
                                   ProductMath math, GemmDType dtype, bool bf16_result) {
  if (bf16_result && (math != ProductMath::Bf16 || dtype != GemmDType::F32))
    return Status::Error(
        "linear: a bf16 result is a product of bf16 operands (ProductMath::Bf16, f32 run)");
  Result<LinearCall> base = linear_call_precision("linear", rows, in, out, math, dtype);
  if (!base.ok()) return base;
  LinearCall c = base.value();
  c.bias = has_bias;
  c.bf16_result = bf16_result;
  // Column-major yᵀ[out,rows] = op_T(W stored as col-major [in,out]) · (xᵀ col-major [in,rows]).
  c.m = int(out);
  c.n = int(rows);
  c.k = int(in);
  c.lda = int(std::max<int64_t>(1, in));
  c.ldb = int(std::max<int64_t>(1, in));
  c.ldc = int(std::max<int64_t>(1, out));
  if (rows == 0 || out == 0)
    c.api = LinearCall::Api::None;
  else if (in == 0)
    c.api = LinearCall::Api::GemmThenBias;
  else
    c.api = LinearCall::Api::LtMatmul;
  return c;
}

Result<LinearCall> describe_linear_weight_grad(int64_t rows, int64_t in, int64_t out,
                                               ProductMath math, GemmDType dtype) {
  Result<LinearCall> base =
      linear_call_precision("linear_weight_grad", rows, in, out, math, dtype);
  if (!base.ok()) return base;
  LinearCall c = base.value();
  c.bias = true;
  c.bias_grad = true;
  // Column-major dWᵀ[in,out] = (x col-major [in,rows]) · op_T(dy col-major [out,rows]).
  c.m = int(in);
  c.n = int(out);
  c.k = int(rows);
  c.lda = int(std::max<int64_t>(1, in));
  c.ldb = int(std::max<int64_t>(1, out));
  c.ldc = int(std::max<int64_t>(1, in));
  if (out == 0)
    c.api = LinearCall::Api::None;
  else if (rows == 0 || in == 0)
    c.api = LinearCall::Api::GemmThenBias;
  else
    c.api = LinearCall::Api::LtMatmul;
  return c;
}

std::string LinearCall::to_string() const {
  std::string params = std::string(bias_grad ? "opA=N, opB=T" : "opA=T, opB=N") +
                       ", m=" + std::to_string(m) + ", n=" + std::to_string(n) +
                       ", k=" + std::to_string(k) + ", lda=" + std::to_string(lda) +
                       ", ldb=" + std::to_string(ldb) + ", ldc=" + std::to_string(ldc);
  switch (api) {
    case Api::None:
      return bias_grad ? "none (empty output: out=" + std::to_string(n) + ")"
                       : "none (empty output: rows=" + std::to_string(n) +
                             ", out=" + std::to_string(m) + ")";
    case Api::LtMatmul:
      return "cublasLtMatmul(" + params + ", epilogue=" +
             (bias_grad ? "BGRADB" : bias ? "BIAS" : "DEFAULT") +
             (bf16_result ? bias ? ", bias=bf16, D=bf16" : ", D=bf16" : "") + ")";
    case Api::GemmThenBias:
      if (bias_grad)
        return "dW's GEMM + db's column-sum GEMM (rows=" + std::to_string(k) +
               ", in=" + std::to_string(m) + ": empty sums)";
      return std::string("cudaMemsetAsync(y, 0) (in=0: empty sums)") +
             (bias ? " + bias broadcast GEMM" : "");
  }
  return "?";
}

Result<GemmCall> describe_column_sums(int64_t rows, int64_t out, bool accumulate,
                                      ProductMath math, GemmDType dtype) {
  return describe_gemm(false, false, 1, 1, out, rows, 0, 0, accumulate,
                       math == ProductMath::Tf32 ? ProductMath::Fp32 : math, dtype);
}

namespace {

int64_t round_up(int64_t n, int64_t q) { return (n + q - 1) / q * q; }

// Dense matrices, or one broadcast matrix: what padding needs.
bool dense_batch(int64_t matrix, int64_t stride) { return stride == 0 || stride == matrix; }

// A matrix stored [rows, cols] (batch stride `stride`), padded to [out_rows, pitch].
OperandLayout padded_layout(int64_t batch, int64_t rows, int64_t cols, int64_t stride,
                            int64_t out_rows, int64_t pitch) {
  OperandLayout l;
  l.batches = stride == 0 ? 1 : batch;
  l.rows = rows;
  l.cols = cols;
  l.out_rows = out_rows;
  l.pitch = pitch;
  l.stride = stride == 0 ? 0 : out_rows * pitch;
  return l;
}

// Bf16 with a batch that is not dense: the operands copied as they lie (the flat one as
// one row, the dense one with its rows padded to 8), K unpadded.
ProductPlan plan_flat_bf16(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N,
                           int64_t K, int64_t stride_a, int64_t stride_b) {
  ProductPlan p;
  p.M = M;
  p.N = N;
  p.K = K;
  for (int which : {0, 1}) {
    const int64_t matrix = which == 0 ? M * K : K * N;
    const int64_t stride = which == 0 ? stride_a : stride_b;
    OperandLayout l;
    if (!dense_batch(matrix, stride)) {
      l.batches = l.rows = l.out_rows = 1;
      l.cols = l.pitch = (batch - 1) * stride + matrix;
      l.stride = stride;
      l.flat = true;
    } else {
      const bool trans = which == 0 ? trans_a : trans_b;
      const int64_t rows = which == 0 ? (trans ? K : M) : (trans ? N : K);
      const int64_t cols = matrix / rows;
      l = padded_layout(batch, rows, cols, stride, rows, round_up(cols, 8));
    }
    (which == 0 ? p.a : p.b) = l;
    (which == 0 ? p.stride_a : p.stride_b) = l.stride;
    (which == 0 ? p.pitch_a : p.pitch_b) = l.gemm_pitch();
  }
  return p;
}

}  // namespace

int64_t product_quantum(ProductMath math) {
  switch (math) {
    case ProductMath::Fp32: return 1;
    case ProductMath::Tf32: return 4;
    case ProductMath::Bf16: return 8;
  }
  return 1;
}

ProductPlan plan_gemm(ProductMath math, bool trans_a, bool trans_b, int64_t batch, int64_t M,
                      int64_t N, int64_t K, int64_t stride_a, int64_t stride_b) {
  ProductPlan p;
  p.M = M;
  p.N = N;
  p.K = K;
  p.stride_a = stride_a;
  p.stride_b = stride_b;
  const int64_t q = product_quantum(math);
  if (q == 1 || batch <= 0 || M <= 0 || N <= 0 || K <= 0) return p;
  const bool bf16 = math == ProductMath::Bf16;
  if (!dense_batch(M * K, stride_a) || !dense_batch(K * N, stride_b))
    return bf16 ? plan_flat_bf16(trans_a, trans_b, batch, M, N, K, stride_a, stride_b) : p;
  // An extent is padded only where it is some matrix's row pitch (the pitch is what the
  // tensor-core kernels want aligned; padding a bare row count buys only copies): N is
  // C's pitch, M is A's when A is transposed, K is A's unless A is transposed, or B's
  // when B is.
  p.M = trans_a ? round_up(M, q) : M;
  p.N = round_up(N, q);
  p.K = !trans_a || trans_b ? round_up(K, q) : K;
  // Stored [rows, cols]: A is [M, K] ([K, M] transposed), B [K, N] ([N, K] transposed).
  const auto operand = [&](bool trans, int64_t other, int64_t other_p, int64_t stride,
                           bool k_rows_when_trans) {
    const bool k_rows = trans == k_rows_when_trans;
    const int64_t rows = k_rows ? K : other, cols = k_rows ? other : K;
    const int64_t prows = k_rows ? p.K : other_p, pcols = k_rows ? other_p : p.K;
    if (!bf16 && rows == prows && cols == pcols) return OperandLayout();  // read in place
    return padded_layout(batch, rows, cols, stride, prows, pcols);
  };
  p.a = operand(trans_a, M, p.M, stride_a, /*k_rows_when_trans=*/true);
  p.b = operand(trans_b, N, p.N, stride_b, /*k_rows_when_trans=*/false);
  if (p.a.rows > 0) p.stride_a = p.a.stride;
  if (p.b.rows > 0) p.stride_b = p.b.stride;
  if (p.M != M || p.N != N) p.c = padded_layout(batch, M, N, M * N, p.M, p.N);
  return p;
}

ProductPlan plan_linear(ProductMath math, int64_t rows, int64_t in, int64_t out,
                        bool has_bias) {
  // y = x · Wᵀ: x is A [M = rows, K = in], W is B transposed [N = out, K = in].
  ProductPlan p = plan_gemm(math, false, true, 1, rows, out, in, 0, 0);
  if (has_bias && p.N != out) p.bias = padded_layout(1, 1, out, 0, 1, p.N);
  return p;
}

std::string describe_padding(const ProductPlan& plan, ProductMath math, bool linear, int64_t M,
                             int64_t N, int64_t K) {
  std::string padded;
  for (auto [name, from, to] : {std::tuple<const char*, int64_t, int64_t>{"M", M, plan.M},
                                {"N", N, plan.N}, {"K", K, plan.K}})
    if (from != to)
      padded += std::string(padded.empty() ? "" : ", ") + name + " " + std::to_string(from) +
                " -> " + std::to_string(to);
  if (padded.empty()) return "";
  // Bf16's operand copies are its roundings (said by the caller); Tf32's are copies.
  std::string copied;
  // A Gemm's factors by their row-major names (its call passes rhs as cuBLAS's A).
  const char* names[] = {linear ? "x" : "lhs", linear ? "W" : "rhs", "bias"};
  const OperandLayout* copies[] = {&plan.a, &plan.b, &plan.bias};
  for (int i = 0; i < 3; i++)
    if (copies[i]->rows > 0 && (i == 2 || math != ProductMath::Bf16))
      copied += std::string(copied.empty() ? "" : ", ") + names[i];
  std::string s = "padded " + padded;
  if (!copied.empty()) s += ", " + copied + " copied by vouch_repitch_f32";
  if (plan.padded_output())
    s += std::string(", ") + (linear ? "y" : "C") + " copied out by vouch_repitch_f32";
  return s;
}

Result<GemmCall> describe_bias_broadcast(int64_t rows, int64_t out, GemmDType dtype,
                                         ProductMath math) {
  for (auto [name, v] : {std::pair<const char*, int64_t>{"rows", rows}, {"out", out}}) {
    Status s = check_extent("bias broadcast", name, v);
    if (!s.ok()) return s;
  }
  if (rows == 0 || out == 0) return Status::Error("bias broadcast: rows and out must be > 0");
  GemmCall c;
  c.api = rows == 1 ? GemmCall::Api::GemmEx : GemmCall::Api::GemmStridedBatchedEx;
  c.op_a_transposed = false;
  c.op_b_transposed = false;
  c.m = int(out);
  c.n = 1;
  c.k = 1;
  c.lda = int(out);
  c.ldb = 1;
  c.ldc = int(out);
  c.stride_a = 0;
  c.stride_b = 0;
  c.stride_c = out;
  c.batch = int(rows);
  c.accumulate = true;
  c.dtype = dtype;
  // A product of the bias and 1 is exact in every compute type but TF32's (whose
  // rounding of the bias is not wanted): FP32 compute, or bf16 operands for a bf16 bias.
  c.math = dtype == GemmDType::F32 && math == ProductMath::Bf16 ? ProductMath::Bf16
                                                                 : ProductMath::Fp32;
  c.data_type = gemm_data_types(c.math, dtype);
  c.compute_type = compute_type_name(c.math, dtype);
  return c;
}

}  // namespace vouch::rt::cuda
