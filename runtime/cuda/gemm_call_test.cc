// Tests for gemm_call.h: the row-major -> column-major mapping, proved without a GPU.
//
// Each described cuBLAS call is run by a naive host emulation of cuBLAS's documented
// column-major semantics (C[i + j·ldc] = α Σ_l opA(A)[i,l] opB(B)[l,j] + β C, with
// opA(A)[i,l] = A[i + l·lda] for N and A[l + i·lda] for T, strides per batch), on the
// original row-major arrays, and compared with runtime/cpu_kernels.h's matmul / linear.
// The emulation sums l = 0..k-1 from 0, like the CPU kernels, and uses small integers,
// so the comparison is exact.
#include "runtime/cuda/gemm_call.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <tuple>
#include <vector>

#include "runtime/cpu_kernels.h"
#include "runtime/cuda/test_util.h"

namespace vouch::rt::cuda {
namespace {

constexpr ProductMath kFp32 = ProductMath::Fp32, kTf32 = ProductMath::Tf32;

// cuBLAS's gemm on host arrays: a = cuBLAS's A, b = cuBLAS's B.
void emulate(const GemmCall& c, const double* a, const double* b, double* out) {
  switch (c.api) {
    case GemmCall::Api::None:
      return;
    case GemmCall::Api::MemsetZero:
      for (size_t i = 0; i < c.zero_bytes / sizeof(double); i++) out[i] = 0.0;
      return;
    case GemmCall::Api::GemmEx:
    case GemmCall::Api::GemmStridedBatchedEx:
      break;
  }
  const int batch = c.api == GemmCall::Api::GemmEx ? 1 : c.batch;
  for (int p = 0; p < batch; p++) {
    const double* A = a + p * c.stride_a;
    const double* B = b + p * c.stride_b;
    double* C = out + p * c.stride_c;
    for (int i = 0; i < c.m; i++) {
      for (int j = 0; j < c.n; j++) {
        double acc = 0.0;
        for (int l = 0; l < c.k; l++) {
          double av = c.op_a_transposed ? A[l + int64_t(i) * c.lda] : A[i + int64_t(l) * c.lda];
          double bv = c.op_b_transposed ? B[j + int64_t(l) * c.ldb] : B[l + int64_t(j) * c.ldb];
          acc += av * bv;
        }
        double& dst = C[i + int64_t(j) * c.ldc];
        dst = c.accumulate ? dst + acc : acc;
      }
    }
  }
}

// Small integers (exact products and sums in double).
std::vector<double> values(int64_t n, int salt) {
  std::vector<double> v(size_t(n > 0 ? n : 0));
  for (int64_t i = 0; i < n; i++) v[size_t(i)] = double(((i + salt) * 7919 + salt * 31) % 13 - 6);
  return v;
}

GemmCall described(bool ta, bool tb, int64_t batch, int64_t M, int64_t N, int64_t K,
                   int64_t sa, int64_t sb, bool acc = false, ProductMath math = kFp32,
                   GemmDType dt = GemmDType::F64) {
  Result<GemmCall> c = describe_gemm(ta, tb, batch, M, N, K, sa, sb, acc, math, dt);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? c.value() : GemmCall{};
}

TEST(GemmCallTest, QuickstartLinearLayerString) {
  // x[1,2] · W[8,2]ᵀ: M=1, N=8, K=2, B (= W) stored [N,K] -> trans_b.
  GemmCall c = described(false, true, 1, 1, 8, 2, 0, 0, false, kFp32, GemmDType::F32);
  EXPECT_EQ(c.to_string(), "cublasGemmEx(opA=T, opB=N, m=8, n=1, k=2, lda=2, ldb=2, ldc=8)");
  EXPECT_EQ(c.to_string_with_policy(),
            "cublasGemmEx(opA=T, opB=N, m=8, n=1, k=2, lda=2, ldb=2, ldc=8) "
            "[CUDA_R_32F, CUBLAS_COMPUTE_32F, beta=0]");
}

TEST(GemmCallTest, AllFlagCombinationsMatchCpuMatmulThroughTheColumnMajorIdentity) {
  const int64_t M = 3, N = 5, K = 4;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      std::vector<double> A = values(M * K, 1), B = values(K * N, 2);
      std::vector<double> want(M * N, -99.0), got(M * N, -99.0);
      matmul(ta, tb, 1, M, N, K, A.data(), 0, B.data(), 0, want.data());
      GemmCall c = described(ta, tb, 1, M, N, K, 0, 0);
      ASSERT_EQ(c.api, GemmCall::Api::GemmEx);
      // No copies: cuBLAS's A is our B as stored, its B is our A as stored.
      emulate(c, B.data(), A.data(), got.data());
      EXPECT_EQ(got, want) << "trans_a=" << ta << " trans_b=" << tb << ": " << c.to_string();
      EXPECT_EQ(c.op_a_transposed, tb);
      EXPECT_EQ(c.op_b_transposed, ta);
      EXPECT_EQ(c.m, N);
      EXPECT_EQ(c.n, M);
      EXPECT_EQ(c.k, K);
      EXPECT_EQ(c.lda, tb ? K : N);
      EXPECT_EQ(c.ldb, ta ? M : K);
      EXPECT_EQ(c.ldc, N);
    }
  }
}

TEST(GemmCallTest, BatchedWithStridesAndBroadcast) {
  const int64_t batch = 3, M = 4, N = 2, K = 5;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (int broadcast : {0, 1, 2}) {  // none, A broadcast, B broadcast
        const int64_t sa = broadcast == 1 ? 0 : M * K, sb = broadcast == 2 ? 0 : K * N;
        std::vector<double> A = values(batch * M * K, 3), B = values(batch * K * N, 4);
        std::vector<double> want(batch * M * N, -99.0), got(batch * M * N, -99.0);
        matmul(ta, tb, batch, M, N, K, A.data(), sa, B.data(), sb, want.data());
        GemmCall c = described(ta, tb, batch, M, N, K, sa, sb);
        ASSERT_EQ(c.api, GemmCall::Api::GemmStridedBatchedEx);
        EXPECT_EQ(c.stride_a, sb);
        EXPECT_EQ(c.stride_b, sa);
        EXPECT_EQ(c.stride_c, M * N);
        EXPECT_EQ(c.batch, batch);
        emulate(c, B.data(), A.data(), got.data());
        EXPECT_EQ(got, want) << c.to_string();
      }
    }
  }
  EXPECT_EQ(described(false, false, 3, 4, 2, 5, 20, 0).to_string(),
            "cublasGemmStridedBatchedEx(opA=N, opB=N, m=2, n=4, k=5, lda=2, strideA=0, ldb=5, "
            "strideB=20, ldc=2, strideC=8, batch=3)");
}

// The bf16 copies (OperandLayout) and the call made on them: each operand laid out
// as vouch_round_bf16_f32 writes it (rows at a pitch, K padded, every pad zero), then
// the described call emulated on those copies, against cpu matmul on the originals
// (small integers: exact either way). Odd and even
// extents, every flag, dense and broadcast batches, and a batch stride that is not the
// matrix size (copied flat, unpadded).
TEST(GemmCallTest, Bf16CopiesAtPaddedPitchesGiveTheSameProduct) {
  struct Case {
    bool ta, tb;
    int64_t batch, M, N, K, sa, sb;
  };
  std::vector<Case> cases;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      cases.push_back({ta, tb, 1, 5, 3, 7, 0, 0});
      cases.push_back({ta, tb, 1, 8, 16, 24, 0, 0});
      cases.push_back({ta, tb, 3, 9, 11, 13, 9 * 13, 0});
      cases.push_back({ta, tb, 2, 4, 6, 5, 4 * 5, 5 * 6});
      cases.push_back({ta, tb, 2, 3, 2, 3, 12, 0});  // stride 12 > 3·3: flat
    }
  int salt = 1;
  for (const Case& c : cases) {
    const int64_t na = c.sa == 0 ? c.M * c.K : (c.batch - 1) * c.sa + c.M * c.K;
    const int64_t nb = c.sb == 0 ? c.K * c.N : (c.batch - 1) * c.sb + c.K * c.N;
    std::vector<double> A = values(na, salt++), B = values(nb, salt++);
    std::vector<double> want(size_t(c.batch * c.M * c.N));
    matmul(c.ta, c.tb, c.batch, c.M, c.N, c.K, A.data(), c.sa, B.data(), c.sb, want.data());
    std::vector<double> copies[2];
    OperandLayout layouts[2];
    for (int which : {0, 1}) {
      const OperandLayout l =
          bf16_gemm_operand(which, c.ta, c.tb, c.batch, c.M, c.N, c.K, c.sa, c.sb);
      layouts[which] = l;
      copies[which] = lay_out(which == 0 ? A : B, l);
      EXPECT_EQ(l.pitch % 8 == 0 || l.flat, true) << "operand " << which;
    }
    const int64_t kp = bf16_padded_k(c.M, c.N, c.K, c.sa, c.sb);
    Result<GemmCall> call =
        describe_gemm(c.ta, c.tb, c.batch, c.M, c.N, kp, layouts[0].stride, layouts[1].stride,
                      false, ProductMath::Bf16, GemmDType::F32, layouts[0].gemm_pitch(),
                      layouts[1].gemm_pitch());
    ASSERT_TRUE(call.ok()) << call.status().message();
    std::vector<double> got(want.size(), std::nan(""));
    emulate(call.value(), copies[1].data(), copies[0].data(), got.data());
    EXPECT_EQ(got, want) << "ta=" << c.ta << " tb=" << c.tb << " batch=" << c.batch
                         << " M=" << c.M << " N=" << c.N << " K=" << c.K << " (K as " << kp
                         << ") " << call.value().to_string();
  }
  // Flat copies keep K (both operands must pad it, or neither).
  EXPECT_EQ(bf16_padded_k(3, 2, 3, 12, 0), 3);
  EXPECT_EQ(bf16_padded_k(3, 2, 3, 9, 0), 8);
}

TEST(GemmCallTest, AccumulateAddsToC) {
  const int64_t M = 2, N = 3, K = 4;
  std::vector<double> A = values(M * K, 5), B = values(K * N, 6), C0 = values(M * N, 7);
  std::vector<double> prod(M * N);
  matmul(true, false, 1, M, N, K, A.data(), 0, B.data(), 0, prod.data());
  std::vector<double> got = C0;
  GemmCall c = described(true, false, 1, M, N, K, 0, 0, /*acc=*/true);
  EXPECT_TRUE(c.accumulate);
  emulate(c, B.data(), A.data(), got.data());
  for (size_t i = 0; i < got.size(); i++) EXPECT_EQ(got[i], C0[i] + prod[i]);
}

TEST(GemmCallTest, DegenerateSizes) {
  // Empty outputs: nothing is called, C is untouched.
  for (auto [batch, M, N] : {std::tuple<int64_t, int64_t, int64_t>{0, 2, 3}, {2, 0, 3}, {2, 3, 0}}) {
    GemmCall c = described(false, false, batch, M, N, 4, M * 4, 4 * N);
    EXPECT_EQ(c.api, GemmCall::Api::None) << c.to_string();
    EXPECT_GE(c.lda, 1);
    EXPECT_GE(c.ldb, 1);
    EXPECT_GE(c.ldc, 1);
  }
  // K = 0: every sum is empty, C = 0, as cpu matmul writes.
  {
    const int64_t batch = 2, M = 3, N = 2;
    std::vector<double> want(batch * M * N, -99.0), got(batch * M * N, -99.0);
    matmul<double>(false, true, batch, M, N, 0, nullptr, 0, nullptr, 0, want.data());
    GemmCall c = described(false, true, batch, M, N, 0, 0, 0);
    EXPECT_EQ(c.api, GemmCall::Api::MemsetZero);
    EXPECT_EQ(c.zero_bytes, size_t(batch * M * N) * sizeof(double));
    EXPECT_EQ(c.to_string(), "cudaMemsetAsync(C, 0, 96 bytes) (K=0: empty sums)");
    emulate(c, nullptr, nullptr, got.data());
    EXPECT_EQ(got, want);
    EXPECT_EQ(described(false, false, 1, 3, 2, 0, 0, 0, false, kFp32, GemmDType::F32).zero_bytes,
              24u);
    // Accumulating an empty sum leaves C as it is.
    EXPECT_EQ(described(false, false, 1, 3, 2, 0, 0, 0, true).api, GemmCall::Api::None);
  }
  // 1x1x1 and vectors.
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {1, 7, 1}, {7, 1, 3},
                         {1, 1, 9}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        std::vector<double> A = values(M * K, 8), B = values(K * N, 9);
        std::vector<double> want(M * N), got(M * N, -99.0);
        matmul(ta, tb, 1, M, N, K, A.data(), 0, B.data(), 0, want.data());
        GemmCall c = described(ta, tb, 1, M, N, K, 0, 0);
        emulate(c, B.data(), A.data(), got.data());
        EXPECT_EQ(got, want) << c.to_string();
      }
    }
  }
}

TEST(GemmCallTest, ExtentsMustFitTheIntAbi) {
  Result<GemmCall> big = describe_gemm(false, false, 1, int64_t(1) << 31, 2, 2, 0, 0, false,
                                       kFp32);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().message(),
            "gemm: M = 2147483648 does not fit the int extents of the cuBLAS ABI (max "
            "2147483647)");
  EXPECT_FALSE(describe_gemm(false, false, int64_t(1) << 32, 1, 1, 1, 0, 0, false, kFp32).ok());
  EXPECT_FALSE(describe_gemm(false, false, 1, 1, int64_t(3000000000), 1, 0, 0, false, kFp32).ok());
  EXPECT_FALSE(describe_gemm(false, false, 1, 1, 1, int64_t(3000000000), 0, 0, false, kFp32).ok());
  // The limit itself is fine.
  EXPECT_TRUE(describe_gemm(false, false, 1, 2147483647, 1, 1, 0, 0, false, kFp32).ok());
  Result<GemmCall> neg = describe_gemm(false, false, 1, 2, 2, -1, 0, 0, false, kFp32);
  ASSERT_FALSE(neg.ok());
  EXPECT_EQ(neg.status().message(), "gemm: K = -1 is negative");
  Result<GemmCall> neg_stride = describe_gemm(false, false, 2, 2, 2, 2, -4, 0, false, kFp32);
  ASSERT_FALSE(neg_stride.ok());
  EXPECT_EQ(neg_stride.status().message(), "gemm: stride_a = -4 is negative");
  Result<LinearCall> lin = describe_linear(int64_t(1) << 31, 2, 2, true, kFp32);
  ASSERT_FALSE(lin.ok());
  EXPECT_EQ(lin.status().message(),
            "linear: rows = 2147483648 does not fit the int extents of the cuBLAS ABI (max "
            "2147483647)");
}

TEST(GemmCallTest, NumericPolicy) {
  EXPECT_STREQ(described(false, false, 1, 2, 2, 2, 0, 0, false, kFp32, GemmDType::F32).compute_type,
               "CUBLAS_COMPUTE_32F");
  GemmCall tf32 = described(false, false, 1, 2, 2, 2, 0, 0, false, kTf32, GemmDType::F32);
  EXPECT_STREQ(tf32.compute_type, "CUBLAS_COMPUTE_32F_FAST_TF32");
  EXPECT_EQ(tf32.math, kTf32);
  EXPECT_STREQ(tf32.data_type, "CUDA_R_32F");  // storage stays f32
  EXPECT_EQ(tf32.to_string_with_policy(),
            "cublasGemmEx(opA=N, opB=N, m=2, n=2, k=2, lda=2, ldb=2, ldc=2) "
            "[CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, beta=0]");
  // bf16: the operands are bf16 in memory, the products f32 (no FAST_16BF mode).
  GemmCall bf16 = described(false, false, 1, 2, 2, 2, 0, 0, false, ProductMath::Bf16,
                            GemmDType::F32);
  EXPECT_STREQ(bf16.compute_type, "CUBLAS_COMPUTE_32F");
  EXPECT_STREQ(bf16.data_type, "CUDA_R_16BF A/B, CUDA_R_32F C");
  EXPECT_STREQ(product_math_name(bf16.math), "bf16");
  Result<LinearCall> lin16 = describe_linear(4, 8, 2, true, ProductMath::Bf16);
  EXPECT_STREQ(lin16.value().data_type, "CUDA_R_16BF A/B, CUDA_R_32F C");
  EXPECT_STREQ(lin16.value().compute_type, "CUBLAS_COMPUTE_32F");
  EXPECT_STREQ(described(false, false, 1, 2, 2, 2, 0, 0, false, ProductMath::Bf16,
                         GemmDType::F64).data_type,
               "CUDA_R_64F");  // f64 ignores the option
  // Padded rows: the leading dimensions are the pitches; a short pitch is an error.
  Result<GemmCall> padded = describe_gemm(true, false, 1, 5, 3, 7, 0, 0, false,
                                          ProductMath::Bf16, GemmDType::F32, 8, 16);
  EXPECT_EQ(padded.value().ldb, 8);   // cuBLAS's B is our A, stored [K, M] rows of 5
  EXPECT_EQ(padded.value().lda, 16);  // cuBLAS's A is our B, stored [K, N] rows of 3
  Result<GemmCall> short_pitch = describe_gemm(false, false, 1, 5, 3, 7, 0, 0, false,
                                               ProductMath::Bf16, GemmDType::F32, 6, 0);
  ASSERT_FALSE(short_pitch.ok());
  EXPECT_EQ(short_pitch.status().message(), "gemm: pitch_a = 6 is shorter than the row (7)");
  GemmCall f64 = described(false, false, 1, 2, 2, 2, 0, 0, true, kTf32, GemmDType::F64);
  EXPECT_STREQ(f64.compute_type, "CUBLAS_COMPUTE_64F");
  EXPECT_STREQ(f64.data_type, "CUDA_R_64F");
  EXPECT_EQ(f64.math, kFp32);  // f64 products are never rounded
  EXPECT_EQ(f64.to_string_with_policy(),
            "cublasGemmEx(opA=N, opB=N, m=2, n=2, k=2, lda=2, ldb=2, ldc=2) "
            "[CUDA_R_64F, CUBLAS_COMPUTE_64F, beta=1]");
}

// cuBLASLt's column-major yᵀ = op_T(W) · xᵀ + bias (broadcast over columns), emulated.
void emulate_linear(const LinearCall& c, const double* W, const double* x, const double* bias,
                    double* y) {
  for (int i = 0; i < c.m; i++) {
    for (int j = 0; j < c.n; j++) {
      double acc = 0.0;
      for (int l = 0; l < c.k; l++) acc += W[l + int64_t(i) * c.lda] * x[l + int64_t(j) * c.ldb];
      y[i + int64_t(j) * c.ldc] = c.bias ? acc + bias[i] : acc;
    }
  }
}

TEST(GemmCallTest, LinearEpilogueMatchesCpuLinear) {
  Result<LinearCall> q = describe_linear(1, 2, 8, true, kFp32);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q.value().to_string(),
            "cublasLtMatmul(opA=T, opB=N, m=8, n=1, k=2, lda=2, ldb=2, ldc=8, epilogue=BIAS)");
  for (auto [rows, in, out] : {std::tuple<int64_t, int64_t, int64_t>{1, 2, 8}, {5, 8, 1},
                               {4, 3, 6}, {1, 1, 1}}) {
    for (bool with_bias : {false, true}) {
      std::vector<double> x = values(rows * in, 10), W = values(out * in, 11),
                          b = values(out, 12);
      std::vector<double> want(rows * out), got(rows * out, -99.0);
      linear(rows, in, out, x.data(), W.data(), with_bias ? b.data() : nullptr, want.data());
      Result<LinearCall> c = describe_linear(rows, in, out, with_bias, kFp32);
      ASSERT_TRUE(c.ok());
      ASSERT_EQ(c.value().api, LinearCall::Api::LtMatmul);
      emulate_linear(c.value(), W.data(), x.data(), b.data(), got.data());
      EXPECT_EQ(got, want) << c.value().to_string();
    }
  }
  EXPECT_EQ(describe_linear(0, 2, 8, true, kFp32).value().api, LinearCall::Api::None);
  EXPECT_EQ(describe_linear(3, 0, 8, true, kFp32).value().api, LinearCall::Api::GemmThenBias);
  EXPECT_STREQ(describe_linear(3, 2, 8, true, kTf32).value().compute_type,
               "CUBLAS_COMPUTE_32F_FAST_TF32");
  Result<LinearCall> f64 = describe_linear(3, 2, 8, true, kTf32, GemmDType::F64);
  EXPECT_STREQ(f64.value().compute_type, "CUBLAS_COMPUTE_64F");
  EXPECT_EQ(f64.value().math, kFp32);
}

TEST(GemmCallTest, FallbackPathGemmPlusBiasBroadcastMatchesCpuLinear) {
  const int64_t rows = 4, in = 3, out = 5;
  std::vector<double> x = values(rows * in, 13), W = values(out * in, 14), b = values(out, 15);
  std::vector<double> want(rows * out), got(rows * out, -99.0);
  linear(rows, in, out, x.data(), W.data(), b.data(), want.data());
  // y = x · Wᵀ as gemm_row_major(trans_b) ...
  GemmCall g = described(false, true, 1, rows, out, in, 0, 0);
  emulate(g, W.data(), x.data(), got.data());
  // ... then y[r,:] += bias · 1 for every row, one strided-batched GEMM.
  Result<GemmCall> bc = describe_bias_broadcast(rows, out);
  ASSERT_TRUE(bc.ok());
  EXPECT_EQ(bc.value().to_string(),
            "cublasGemmStridedBatchedEx(opA=N, opB=N, m=5, n=1, k=1, lda=5, strideA=0, ldb=1, "
            "strideB=0, ldc=5, strideC=5, batch=4)");
  const double one = 1.0;
  emulate(bc.value(), b.data(), &one, got.data());
  EXPECT_EQ(got, want);
  EXPECT_FALSE(describe_bias_broadcast(0, 5).ok());
}

}  // namespace
}  // namespace vouch::rt::cuda
