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

// A tensor-core product's plan (ProductPlan): its copies laid out as the executor's
// vouch_round_bf16_f32 / vouch_repitch_f32 write them (extents padded, every pad zero),
// the described call emulated at the padded extents on those copies (or on the
// originals, where an operand is read in place), a padded C copied out; against cpu
// matmul on the originals (small integers: exact either way). Odd and aligned extents,
// every flag, dense and broadcast batches, a batch stride that is not the matrix size
// (not padded), in Tf32 and Bf16.
TEST(GemmCallTest, PaddedProductPlansGiveTheSameProduct) {
  struct Case {
    bool ta, tb;
    int64_t batch, M, N, K, sa, sb;
  };
  std::vector<Case> cases;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      cases.push_back({ta, tb, 1, 5, 3, 7, 0, 0});
      cases.push_back({ta, tb, 1, 8, 16, 24, 0, 0});
      cases.push_back({ta, tb, 1, 12, 8, 4, 0, 0});  // aligned for Tf32, not for Bf16
      cases.push_back({ta, tb, 3, 9, 11, 13, 9 * 13, 0});
      cases.push_back({ta, tb, 2, 4, 6, 5, 4 * 5, 5 * 6});
      cases.push_back({ta, tb, 2, 3, 2, 3, 12, 0});  // stride 12 > 3·3: not padded
    }
  int salt = 1;
  for (ProductMath math : {ProductMath::Tf32, ProductMath::Bf16})
    for (const Case& c : cases) {
      const int64_t q = product_quantum(math);
      const std::string what = std::string(product_math_name(math)) + " ta=" +
                               std::to_string(c.ta) + " tb=" + std::to_string(c.tb) +
                               " batch=" + std::to_string(c.batch) + " M=" +
                               std::to_string(c.M) + " N=" + std::to_string(c.N) +
                               " K=" + std::to_string(c.K);
      const int64_t na = c.sa == 0 ? c.M * c.K : (c.batch - 1) * c.sa + c.M * c.K;
      const int64_t nb = c.sb == 0 ? c.K * c.N : (c.batch - 1) * c.sb + c.K * c.N;
      std::vector<double> A = values(na, salt++), B = values(nb, salt++);
      std::vector<double> want(size_t(c.batch * c.M * c.N));
      matmul(c.ta, c.tb, c.batch, c.M, c.N, c.K, A.data(), c.sa, B.data(), c.sb, want.data());
      const ProductPlan p = plan_gemm(math, c.ta, c.tb, c.batch, c.M, c.N, c.K, c.sa, c.sb);
      const bool dense = (c.sa == 0 || c.sa == c.M * c.K) && (c.sb == 0 || c.sb == c.K * c.N);
      if (dense) {
        // Padded where the extent is a row pitch: N (C's), M when A is transposed, K when
        // it is A's or B's; a bare row count stays.
        EXPECT_EQ(p.M, c.ta ? (c.M + q - 1) / q * q : c.M) << what;
        EXPECT_EQ(p.N % q, 0) << what;
        EXPECT_EQ(p.K, !c.ta || c.tb ? (c.K + q - 1) / q * q : c.K) << what;
        EXPECT_EQ(p.padded_output(), p.M != c.M || p.N != c.N) << what;
      } else {
        EXPECT_EQ(p.M, c.M) << what;
        EXPECT_EQ(p.N, c.N) << what;
        EXPECT_EQ(p.K, c.K) << what;
        EXPECT_FALSE(p.padded_output()) << what;
      }
      // Bf16 copies every operand (the product reads bf16); Tf32 only a padded one.
      const bool aligned = c.M % q == 0 && c.N % q == 0 && c.K % q == 0;
      if (math == ProductMath::Bf16) {
        EXPECT_GT(p.a.rows, 0) << what;
        EXPECT_GT(p.b.rows, 0) << what;
      } else if (aligned || !dense) {
        EXPECT_EQ(p.a.rows, 0) << what;
        EXPECT_EQ(p.b.rows, 0) << what;
      }
      const std::vector<double> a = p.a.rows > 0 ? lay_out(A, p.a) : A;
      const std::vector<double> b = p.b.rows > 0 ? lay_out(B, p.b) : B;
      Result<GemmCall> call = describe_gemm(c.ta, c.tb, c.batch, p.M, p.N, p.K, p.stride_a,
                                            p.stride_b, false, math, GemmDType::F32,
                                            p.pitch_a, p.pitch_b);
      ASSERT_TRUE(call.ok()) << call.status().message();
      std::vector<double> got(size_t(c.batch * p.M * p.N), std::nan(""));
      emulate(call.value(), b.data(), a.data(), got.data());
      if (p.padded_output()) got = un_lay_out(got, p.c);
      EXPECT_EQ(got, want) << what << " as M=" << p.M << " N=" << p.N << " K=" << p.K << " "
                           << call.value().to_string();
    }
  // Fp32 products are never padded nor copied.
  const ProductPlan fp32 = plan_gemm(ProductMath::Fp32, false, false, 1, 5, 3, 7, 0, 0);
  EXPECT_EQ(fp32.M, 5);
  EXPECT_EQ(fp32.N, 3);
  EXPECT_EQ(fp32.K, 7);
  EXPECT_EQ(fp32.a.rows + fp32.b.rows + fp32.c.rows, 0);
  // GPT-2's tied LM head under Tf32 (logits [8192, 50257]): forward (a linear), dX, dW.
  const ProductPlan fwd = plan_linear(ProductMath::Tf32, 8192, 768, 50257, false);
  EXPECT_EQ(fwd.N, 50260);
  EXPECT_EQ(fwd.a.rows, 0);       // x read in place
  EXPECT_EQ(fwd.b.out_rows, 50260);  // W with 3 zero rows
  EXPECT_EQ(fwd.c.pitch, 50260);  // y written at 50260 a row, copied out
  EXPECT_EQ(describe_padding(fwd, ProductMath::Tf32, true, 8192, 50257, 768),
            "padded N 50257 -> 50260, W copied by vouch_repitch_f32, y copied out by "
            "vouch_repitch_f32");
  EXPECT_EQ(describe_padding(plan_linear(ProductMath::Bf16, 8192, 768, 50257, true),
                             ProductMath::Bf16, true, 8192, 50257, 768),
            "padded N 50257 -> 50264, bias copied by vouch_repitch_f32, y copied out by "
            "vouch_repitch_f32");
  const ProductPlan dx = plan_gemm(ProductMath::Tf32, false, false, 1, 8192, 768, 50257, 0, 0);
  EXPECT_EQ(dx.K, 50260);
  EXPECT_EQ(dx.a.pitch, 50260);  // dlogits at 50260 a row
  EXPECT_FALSE(dx.padded_output());
  const ProductPlan dw = plan_gemm(ProductMath::Tf32, true, false, 1, 50257, 768, 8192, 0, 0);
  EXPECT_EQ(dw.a, dx.a);  // the same copy of dlogits serves both
  EXPECT_EQ(dw.b.rows, 0);
  EXPECT_EQ(dw.c.out_rows, 50260);
  EXPECT_EQ(describe_padding(plan_gemm(ProductMath::Tf32, false, false, 1, 8, 8, 8, 0, 0),
                             ProductMath::Tf32, false, 8, 8, 8),
            "");
}

// A linear's plan: x and W padded like a gemm's operands, the bias copied to the padded
// N, y copied out; emulated as its cuBLASLt call (an NT product plus the bias).
TEST(GemmCallTest, PaddedLinearPlansGiveTheSameProduct) {
  int salt = 50;
  for (ProductMath math : {ProductMath::Tf32, ProductMath::Bf16})
    for (auto [rows, in, out] : {std::tuple<int64_t, int64_t, int64_t>{5, 3, 7}, {8, 16, 13},
                                 {16, 8, 8}, {3, 9, 4}})
      for (bool bias : {false, true}) {
        const std::string what = std::string(product_math_name(math)) + " rows=" +
                                 std::to_string(rows) + " in=" + std::to_string(in) +
                                 " out=" + std::to_string(out) + (bias ? " bias" : "");
        std::vector<double> x = values(rows * in, salt++), W = values(out * in, salt++),
                            b = values(out, salt++);
        std::vector<double> want(size_t(rows * out));
        linear(rows, in, out, x.data(), W.data(), bias ? b.data() : nullptr, want.data());
        const ProductPlan p = plan_linear(math, rows, in, out, bias);
        EXPECT_EQ(p.bias.rows > 0, bias && p.N != out) << what;
        const std::vector<double> xc = p.a.rows > 0 ? lay_out(x, p.a) : x;
        const std::vector<double> Wc = p.b.rows > 0 ? lay_out(W, p.b) : W;
        const std::vector<double> bc = p.bias.rows > 0 ? lay_out(b, p.bias) : b;
        Result<LinearCall> call = describe_linear(p.M, p.K, p.N, bias, math);
        ASSERT_TRUE(call.ok()) << call.status().message();
        // y[r, o] = Σ_i x[r, i] W[o, i] (+ bias[o]) at the call's extents and pitches.
        const LinearCall& lc = call.value();
        std::vector<double> got(size_t(lc.n) * size_t(lc.ldc), std::nan(""));
        for (int r = 0; r < lc.n; r++)
          for (int o = 0; o < lc.m; o++) {
            double acc = 0;
            for (int i = 0; i < lc.k; i++) acc += Wc[size_t(o) * lc.lda + i] * xc[size_t(r) * lc.ldb + i];
            got[size_t(r) * lc.ldc + o] = acc + (bias ? bc[size_t(o)] : 0.0);
          }
        if (p.padded_output()) got = un_lay_out(got, p.c);
        EXPECT_EQ(got, want) << what << " " << lc.to_string();
      }
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
