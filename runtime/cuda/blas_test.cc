// Tests for blas.h: cuBLAS / cuBLASLt GEMMs against runtime/cpu_kernels.h on random
// inputs (all transpose flags, batches with broadcast, accumulate, TF32, bf16 operands
// at dense and padded pitches, f64, degenerate shapes, the bias epilogue and its fallback, a CUDA graph capture is in
// stream_graph_test), and the reproducible configuration: atomics off on the handle,
// the cuBLASLt algorithm of a split-K-prone shape reducing in an allowed scheme and
// pinned, two runs of such products bitwise equal. Outputs are poisoned (NaN) before
// each run. Without a device: the errors (argument checks first, then the clear
// no-device message).
#include "runtime/cuda/blas.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <type_traits>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "runtime/cpu_kernels.h"
#include "runtime/cuda/memcpy.h"
#include "runtime/cuda/stream_graph.h"
#include "runtime/cuda/test_util.h"

namespace vouch::rt::cuda {
namespace {

constexpr ProductMath kFp32 = ProductMath::Fp32, kTf32 = ProductMath::Tf32;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

template <class T>
std::vector<T> random_values(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(n);
  for (T& x : v) x = T(dist(gen));
  return v;
}

// A device copy of a host vector, freed at scope exit.
template <class T>
struct DeviceArray {
  T* ptr = nullptr;
  size_t n = 0;
  explicit DeviceArray(const std::vector<T>& host) : n(host.size()) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&ptr), std::max<size_t>(1, n) * sizeof(T)),
              cudaSuccess);
    if (n > 0) {
      EXPECT_TRUE(upload(ptr, host.data(), n, nullptr).ok());
    }
  }
  ~DeviceArray() { cudaFree(ptr); }
  std::vector<T> read() const {
    std::vector<T> out(n);
    EXPECT_TRUE(download(out.data(), ptr, n, nullptr).ok());
    EXPECT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
    return out;
  }
};

// |got - want| <= tol · (1 + |want|) elementwise.
template <class T>
void expect_close(const std::vector<T>& got, const std::vector<double>& want, double tol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; i++) {
    if (!(std::abs(double(got[i]) - want[i]) <= tol * (1.0 + std::abs(want[i])))) {
      ADD_FAILURE() << what << ": element " << i << " got " << double(got[i]) << " want "
                    << want[i] << " (tol " << tol << ")";
      bad++;
    }
  }
}

template <class T>
std::vector<double> to_double(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

TEST(BlasTest, ArgumentErrorsComeFirstAndNameTheExtent) {
  Status s = gemm_row_major(false, false, 1, int64_t(1) << 31, 2, 2, static_cast<const float*>(nullptr),
                            0, nullptr, 0, nullptr, false, kFp32);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.message(), "M = 2147483648 does not fit the int extents")) << s.message();
  // Empty outputs need nothing, not even a device.
  EXPECT_TRUE(gemm_row_major(false, false, 1, 0, 2, 2, static_cast<const double*>(nullptr), 0,
                             nullptr, 0, nullptr, false, kFp32)
                  .ok());
  LinearPath path = LinearPath::LtEpilogue;
  EXPECT_TRUE(linear_bias_row_major(0, 2, 8, static_cast<const float*>(nullptr), nullptr, nullptr,
                                    static_cast<float*>(nullptr), kFp32, &path).ok());
  EXPECT_EQ(path, LinearPath::None);
}

TEST(BlasTest, WithoutADeviceTheErrorSaysSo) {
  if (cuda_device_present()) GTEST_SKIP() << "not applicable: a CUDA device is present";
  Status s = gemm_row_major(false, false, 1, 2, 2, 2, static_cast<const float*>(nullptr), 0,
                            nullptr, 0, nullptr, false, kFp32);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.message(), "cuBLAS not initialised: device `cuda` requested, but no "
                                    "usable CUDA device is visible"))
      << s.message();
  EXPECT_FALSE(set_blas_stream(nullptr).ok());
  EXPECT_FALSE(blas_configuration().ok());
  EXPECT_FALSE(linear_algorithm(2, 2, 2, true, kFp32).ok());
}

TEST(BlasTest, ReductionSchemeMaskExcludesInPlace) {
  // Only the schemes that stage partial sums and add them in a separate step.
  EXPECT_EQ(lt_reduction_scheme_name(0), "none");
  EXPECT_EQ(lt_reduction_scheme_name(1), "inplace");
  EXPECT_EQ(lt_reduction_scheme_name(2), "compute-type");
  EXPECT_EQ(lt_reduction_scheme_name(4), "output-type");
  EXPECT_EQ(lt_reduction_scheme_name(8), "8");
  EXPECT_EQ(kLtReductionSchemeMask, 2u | 4u);
}

template <class T>
void check_gemm(bool ta, bool tb, int64_t batch, int64_t M, int64_t N, int64_t K, int64_t sa,
                int64_t sb, bool accumulate, ProductMath math, double tol, uint32_t seed) {
  const int64_t na = sa == 0 ? M * K : batch * M * K, nb = sb == 0 ? K * N : batch * K * N;
  std::vector<T> A = random_values<T>(size_t(na), seed), B = random_values<T>(size_t(nb), seed + 1);
  std::vector<T> C0 = accumulate ? random_values<T>(size_t(batch * M * N), seed + 2)
                                 : std::vector<T>(size_t(batch * M * N),
                                                  std::numeric_limits<T>::quiet_NaN());
  // Reference in double on the same (rounded) inputs.
  std::vector<double> want(size_t(batch * M * N));
  matmul(ta, tb, batch, M, N, K, to_double(A).data(), sa, to_double(B).data(), sb, want.data());
  if (accumulate)
    for (size_t i = 0; i < want.size(); i++) want[i] += double(C0[i]);
  DeviceArray<T> dA(A), dB(B), dC(C0);
  Status s = gemm_row_major(ta, tb, batch, M, N, K, dA.ptr, sa, dB.ptr, sb, dC.ptr, accumulate,
                            math);
  ASSERT_TRUE(s.ok()) << s.message();
  Result<GemmCall> call = describe_gemm(ta, tb, batch, M, N, K, sa, sb, accumulate, math,
                                        sizeof(T) == 8 ? GemmDType::F64 : GemmDType::F32);
  expect_close(dC.read(), want, tol * std::sqrt(double(std::max<int64_t>(K, 1))),
               call.value().to_string_with_policy());
}

TEST(BlasDeviceTest, GemmMatchesCpuMatmulForAllFlags) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuBLAS gemm vs cpu matmul (f32, all transpose flags)");
  ASSERT_TRUE(set_blas_stream(nullptr).ok());
  uint32_t seed = 1;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 8, 2}, {37, 19, 53},
                             {128, 64, 256}, {1, 1, 1}, {5, 1, 300}})
        check_gemm<float>(ta, tb, 1, M, N, K, 0, 0, false, kFp32, 1e-5, seed++);
}

TEST(BlasDeviceTest, BatchedBroadcastAccumulateF64AndTf32) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuBLAS strided-batched gemm, accumulate, f64, TF32");
  ASSERT_TRUE(set_blas_stream(nullptr).ok());
  uint32_t seed = 100;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const int64_t batch = 6, M = 17, N = 12, K = 33;
      check_gemm<float>(ta, tb, batch, M, N, K, M * K, K * N, false, kFp32, 1e-5, seed++);
      check_gemm<float>(ta, tb, batch, M, N, K, 0, K * N, false, kFp32, 1e-5, seed++);  // A shared
      check_gemm<float>(ta, tb, batch, M, N, K, M * K, 0, true, kFp32, 1e-5, seed++);   // B shared
      check_gemm<double>(ta, tb, batch, M, N, K, M * K, K * N, true, kFp32, 1e-13, seed++);
      check_gemm<double>(ta, tb, 1, M, N, K, 0, 0, false, kTf32, 1e-13, seed++);
      check_gemm<float>(ta, tb, 1, 64, 64, 256, 0, 0, false, kTf32, 5e-3, seed++);  // TF32
    }
  }
}

// What each ProductMath really rounds the operands to, at a small and a large shape, in
// cublasGemmEx and cublasLtMatmul: every entry of A is 1 + e, of B 1, so each output is
// K·(1 + e) exactly in f32 unless the operands were rounded first. e = 2^-12 survives
// fp32 only (TF32's spacing at 1 is 2^-10); e = 2^-9 survives both. (The same probe
// showed CUBLAS_COMPUTE_32F_FAST_16BF keeping 2^-9, which bf16 drops: gemm_call.h.)
TEST(BlasDeviceTest, ProductMathRoundsOperandsAsItSays) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuBLAS / cuBLASLt operand rounding per ProductMath");
  ASSERT_TRUE(set_blas_stream(nullptr).ok());
  for (int64_t n : {int64_t(64), int64_t(1024)}) {
    for (auto [e, name] : {std::pair<float, const char*>{0x1p-12f, "2^-12"}, {0x1p-9f, "2^-9"}}) {
      DeviceArray<float> dA(std::vector<float>(size_t(n * n), 1.0f + e)),
          dB(std::vector<float>(size_t(n * n), 1.0f));
      for (ProductMath math : {kFp32, kTf32}) {
        const bool kept = math == kFp32 || e == 0x1p-9f;
        const float want = float(n) * (kept ? 1.0f + e : 1.0f);
        DeviceArray<float> dC(std::vector<float>(size_t(n * n), 0.0f)),
            dY(std::vector<float>(size_t(n * n), 0.0f));
        ASSERT_TRUE(gemm_row_major(false, false, 1, n, n, n, dA.ptr, 0, dB.ptr, 0, dC.ptr, false,
                                   math)
                        .ok());
        ASSERT_TRUE(linear_bias_row_major(n, n, n, dA.ptr, dB.ptr, static_cast<float*>(nullptr),
                                          dY.ptr, math)
                        .ok());
        EXPECT_EQ(dC.read()[0], want) << "gemm n=" << n << " e=" << name << " math="
                                      << product_math_name(math);
        EXPECT_EQ(dY.read()[0], want) << "linear n=" << n << " e=" << name << " math="
                                      << product_math_name(math);
      }
    }
  }
}

// host_bf16 / bf16_value (test_util.h): the host's rounding, not executor.cuh's.

// A bf16 linear's case: x and W random and rounded on the host (their bf16 bits), an f32
// bias, and the double reference y of the rounded values (`seed` advanced). With
// `bias_bf16` the bias is rounded too (vouch.round_bf16's): `b16` its bits, `b` their
// values as f32, the reference of those.
struct Bf16Linear {
  std::vector<bf16_bits> x16, W16, b16;
  std::vector<float> b;
  std::vector<double> want;
};
Bf16Linear bf16_linear(int64_t rows, int64_t in, int64_t out, bool with_bias, uint32_t& seed,
                       bool bias_bf16 = false) {
  Bf16Linear c;
  std::vector<float> x = random_values<float>(size_t(rows * in), seed++),
                     W = random_values<float>(size_t(out * in), seed++);
  c.b = random_values<float>(size_t(out), seed++);
  if (bias_bf16)
    for (float& v : c.b) c.b16.push_back(host_bf16(v)), v = float(bf16_value(c.b16.back()));
  std::vector<double> xd, Wd, bd(c.b.begin(), c.b.end());
  for (float v : x) c.x16.push_back(host_bf16(v)), xd.push_back(bf16_value(c.x16.back()));
  for (float v : W) c.W16.push_back(host_bf16(v)), Wd.push_back(bf16_value(c.W16.back()));
  c.want.resize(size_t(rows * out));
  linear(rows, in, out, xd.data(), Wd.data(), with_bias ? bd.data() : nullptr, c.want.data());
  return c;
}

// The bf16 overloads: operands rounded on the host, products and sums f32, against
// double products of the same rounded values (only the summation order differs).
TEST(BlasDeviceTest, Bf16OperandsGemmAndLinear) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuBLAS / cuBLASLt with CUDA_R_16BF operands and f32 results");
  ASSERT_TRUE(set_blas_stream(nullptr).ok());
  uint32_t seed = 100;
  for (auto [ta, tb, batch, M, N, K, sa, sb] :
       {std::tuple<bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>{
            false, false, 1, 37, 19, 53, 0, 0},
        {true, false, 1, 64, 128, 256, 0, 0},
        {false, true, 3, 16, 24, 40, 16 * 40, 0},
        {true, true, 2, 8, 8, 600, 8 * 600, 600 * 8}}) {
    const int64_t na = sa == 0 ? M * K : batch * M * K, nb = sb == 0 ? K * N : batch * K * N;
    std::vector<float> A = random_values<float>(size_t(na), seed++),
                       B = random_values<float>(size_t(nb), seed++);
    std::vector<bf16_bits> a16, b16;
    std::vector<double> ad, bd;
    for (float x : A) a16.push_back(host_bf16(x)), ad.push_back(bf16_value(a16.back()));
    for (float x : B) b16.push_back(host_bf16(x)), bd.push_back(bf16_value(b16.back()));
    std::vector<double> want(size_t(batch * M * N));
    matmul(ta, tb, batch, M, N, K, ad.data(), sa, bd.data(), sb, want.data());
    DeviceArray<bf16_bits> dA(a16), dB(b16);
    DeviceArray<float> dC(std::vector<float>(want.size(), std::numeric_limits<float>::quiet_NaN()));
    Status s = gemm_row_major(ta, tb, batch, M, N, K, dA.ptr, sa, dB.ptr, sb, dC.ptr, false);
    ASSERT_TRUE(s.ok()) << s.message();
    Result<GemmCall> call = describe_gemm(ta, tb, batch, M, N, K, sa, sb, false,
                                          ProductMath::Bf16);
    EXPECT_STREQ(call.value().data_type, "CUDA_R_16BF A/B, CUDA_R_32F C");
    // f32 sums of exact products (two 8-bit mantissas multiply exactly in f32).
    expect_close(dC.read(), want, 1e-6 * std::sqrt(double(K)),
                 call.value().to_string_with_policy());
  }
  // Padded extents (the executor pads the pitch extents to multiples of 8 with zeros, C
  // copied out): the same products, batch strides in padded elements; K = 21 runs as 24 with
  // zero rows / columns in both operands.
  for (auto [ta, tb, batch, M, N, K] :
       {std::tuple<bool, bool, int64_t, int64_t, int64_t, int64_t>{false, false, 1, 9, 13, 7},
        {true, true, 3, 11, 5, 21}}) {
    // The executor's layouts (plan_gemm), the values rounded on the host.
    const ProductPlan plan = plan_gemm(ProductMath::Bf16, ta, tb, batch, M, N, K, M * K, K * N);
    const OperandLayout la = plan.a, lb = plan.b;
    const int64_t Kp = plan.K, pa = plan.pitch_a, pb = plan.pitch_b;
    ASSERT_EQ(Kp, (K + 7) / 8 * 8);
    ASSERT_EQ(plan.M, ta ? (M + 7) / 8 * 8 : M);  // M is a pitch only of a transposed A
    std::vector<float> A = random_values<float>(size_t(batch * M * K), seed++),
                       B = random_values<float>(size_t(batch * K * N), seed++);
    std::vector<bf16_bits> a16, b16;
    std::vector<double> ad, bd;
    for (float x : A) a16.push_back(host_bf16(x)), ad.push_back(bf16_value(a16.back()));
    for (float x : B) b16.push_back(host_bf16(x)), bd.push_back(bf16_value(b16.back()));
    a16 = lay_out(a16, la);
    b16 = lay_out(b16, lb);
    std::vector<double> want(size_t(batch * M * N));
    matmul(ta, tb, batch, M, N, K, ad.data(), M * K, bd.data(), K * N, want.data());
    DeviceArray<bf16_bits> dA(a16), dB(b16);
    DeviceArray<float> dC(std::vector<float>(size_t(batch * plan.M * plan.N),
                                             std::numeric_limits<float>::quiet_NaN()));
    Status s = gemm_row_major(ta, tb, batch, plan.M, plan.N, Kp, dA.ptr, la.stride, dB.ptr,
                              lb.stride, dC.ptr, false, pa, pb);
    ASSERT_TRUE(s.ok()) << s.message();
    std::vector<float> got = dC.read();
    if (plan.padded_output()) got = un_lay_out(got, plan.c);
    expect_close(got, want, 1e-6 * std::sqrt(double(K)),
                 "bf16 gemm at " + std::to_string(plan.M) + " x " + std::to_string(plan.N) +
                     " x " + std::to_string(Kp));
  }
  for (bool with_bias : {true, false}) {
    const int64_t rows = 48, in = 96, out = 80;
    Bf16Linear c = bf16_linear(rows, in, out, with_bias, seed);
    const std::vector<double>& want = c.want;
    DeviceArray<bf16_bits> dx(c.x16), dW(c.W16);
    DeviceArray<float> db(c.b), dy(std::vector<float>(want.size(), std::numeric_limits<float>::quiet_NaN()));
    LinearPath path = LinearPath::None;
    Status s = linear_bias_row_major(rows, in, out, dx.ptr, dW.ptr, with_bias ? db.ptr : nullptr,
                                     dy.ptr, &path);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(path, LinearPath::LtEpilogue);
    expect_close(dy.read(), want, 1e-6 * std::sqrt(double(in)),
                 std::string("bf16 linear, bias ") + (with_bias ? "on" : "off"));
  }
  // The f32 overloads have no bf16 operands to pass: a clear error, not f32 products.
  DeviceArray<float> one(std::vector<float>(4, 1.0f));
  Status s = gemm_row_major(false, false, 1, 2, 2, 1, one.ptr, 0, one.ptr, 0, one.ptr, false,
                            ProductMath::Bf16);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.message(), "takes operands already rounded to bf16")) << s.message();
  s = linear_bias_row_major(2, 1, 2, one.ptr, one.ptr, nullptr, one.ptr, ProductMath::Bf16);
  ASSERT_FALSE(s.ok());
}

TEST(BlasDeviceTest, DegenerateShapes) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuBLAS gemm degenerate shapes");
  ASSERT_TRUE(set_blas_stream(nullptr).ok());
  // K = 0: C is cleared (the poison is overwritten), as cpu matmul does.
  std::vector<float> poison(2 * 3 * 4, std::numeric_limits<float>::quiet_NaN());
  DeviceArray<float> dC(poison), dummy(std::vector<float>(1, 0.f));
  ASSERT_TRUE(gemm_row_major(false, false, 2, 3, 4, 0, dummy.ptr, 0, dummy.ptr, 0, dC.ptr, false,
                             kFp32)
                  .ok());
  for (float v : dC.read()) EXPECT_EQ(v, 0.0f);
  // K = 0 with accumulate: unchanged.
  std::vector<float> ones(12, 1.0f);
  DeviceArray<float> dD(ones);
  ASSERT_TRUE(gemm_row_major(false, false, 1, 3, 4, 0, dummy.ptr, 0, dummy.ptr, 0, dD.ptr, true,
                             kFp32)
                  .ok());
  EXPECT_EQ(dD.read(), ones);
}

// One linear against the host reference; returns the path taken. `expected` None:
// either path (f64: whether cuBLASLt offers the f64 bias epilogue is its own answer),
// but the calls made must be the ones of the path taken, and a fallback says why.
template <class T = float>
LinearPath check_linear(int64_t rows, int64_t in, int64_t out, bool with_bias, ProductMath math,
                        LinearPath expected, uint32_t seed) {
  std::vector<T> x = random_values<T>(size_t(rows * in), seed),
                 W = random_values<T>(size_t(out * in), seed + 1),
                 b = random_values<T>(size_t(out), seed + 2);
  std::vector<double> want(size_t(rows * out));
  std::vector<double> xd = to_double(x), Wd = to_double(W), bd = to_double(b);
  linear(rows, in, out, xd.data(), Wd.data(), with_bias ? bd.data() : nullptr, want.data());
  DeviceArray<T> dx(x), dW(W), db(b),
      dy(std::vector<T>(size_t(rows * out), std::numeric_limits<T>::quiet_NaN()));
  LinearPath path = LinearPath::None;
  std::string refusal;
  BlasCallLog calls;
  Status s = linear_bias_row_major(rows, in, out, dx.ptr, dW.ptr, with_bias ? db.ptr : nullptr,
                                   dy.ptr, math, &path, &refusal);
  if (!s.ok()) {
    ADD_FAILURE() << s.message();
    return path;
  }
  if (expected != LinearPath::None) {
    EXPECT_EQ(path, expected) << linear_path_name(path);
  }
  if (path == LinearPath::LtEpilogue) {
    EXPECT_EQ(calls.calls(), std::vector<std::string>{"cublasLtMatmul"});
    EXPECT_EQ(refusal, "");
  } else {
    EXPECT_FALSE(calls.calls().empty()) << linear_path_name(path);
    for (const std::string& c : calls.calls()) EXPECT_NE(c, "cublasLtMatmul");
    if (in > 0) {
      EXPECT_NE(refusal, "") << "a fallback says why";
    }
  }
  constexpr bool f64 = std::is_same_v<T, double>;
  Result<LinearCall> call = describe_linear(rows, in, out, with_bias, math,
                                            f64 ? GemmDType::F64 : GemmDType::F32);
  double tol = f64 ? 1e-12
               : (math == kTf32 ? 5e-3 : 1e-5) *
                     std::sqrt(double(std::max<int64_t>(in, 1)));
  expect_close(dy.read(), want, tol, call.value().to_string() + " via " + linear_path_name(path));
  return path;
}

// f64 linears take the same road: cuBLASLt with the bias epilogue in CUBLAS_COMPUTE_64F
// where cuBLASLt offers it, else the visible fallback; printed, so the log says which.
TEST(BlasDeviceTest, LinearF64TakesTheCublasLtRoadOrFallsBackVisibly) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuBLASLt linear in f64");
  ASSERT_TRUE(set_blas_stream(nullptr).ok());
  uint32_t seed = 400;
  for (auto [rows, in, out] : {std::tuple<int64_t, int64_t, int64_t>{1, 2, 8}, {25, 2, 8},
                               {64, 128, 96}, {7, 13, 5}})
    for (bool with_bias : {true, false}) {
      LinearPath path = check_linear<double>(rows, in, out, with_bias, kFp32, LinearPath::None,
                                             seed++);
      std::printf("f64 linear(rows=%lld, in=%lld, out=%lld, bias=%d): %s\n", (long long)rows,
                  (long long)in, (long long)out, int(with_bias), linear_path_name(path));
    }
  set_lt_refusal_for_testing(true);
  testing::internal::CaptureStderr();
  check_linear<double>(5, 3, 4, true, kFp32, LinearPath::GemmFallback, 500);
  std::string err = testing::internal::GetCapturedStderr();
  set_lt_refusal_for_testing(false);
  EXPECT_TRUE(contains(err, "out=4, f64): refused for testing")) << err;
}

TEST(BlasDeviceTest, LinearWithBiasEpilogue) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuBLASLt linear with the bias epilogue");
  ASSERT_TRUE(set_blas_stream(nullptr).ok());
  uint32_t seed = 200;
  for (auto [rows, in, out] : {std::tuple<int64_t, int64_t, int64_t>{1, 2, 8}, {1, 8, 1},
                               {25, 2, 8}, {64, 128, 96}, {7, 13, 5}}) {
    for (bool with_bias : {true, false}) {
      check_linear(rows, in, out, with_bias, kFp32, LinearPath::LtEpilogue, seed++);
    }
  }
  check_linear(64, 256, 128, true, kTf32, LinearPath::LtEpilogue, seed++);
  // in = 0: y = bias (the gemm path: clear, then the bias broadcast).
  check_linear(3, 0, 4, true, kFp32, LinearPath::GemmFallback, seed++);
}

TEST(BlasDeviceTest, RefusedEpilogueFallsBackVisibly) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuBLASLt epilogue refusal fallback");
  ASSERT_TRUE(set_blas_stream(nullptr).ok());
  set_lt_refusal_for_testing(true);
  testing::internal::CaptureStderr();
  check_linear(9, 6, 10, true, kFp32, LinearPath::GemmFallback, 300);
  check_linear(9, 6, 10, true, kFp32, LinearPath::GemmFallback, 301);  // same shape: no 2nd note
  std::string err = testing::internal::GetCapturedStderr();
  set_lt_refusal_for_testing(false);
  EXPECT_TRUE(contains(err, "note: cuBLASLt refused CUBLASLT_EPILOGUE_BIAS for linear(rows=9, "
                            "in=6, out=10, f32)"))
      << err;
  EXPECT_EQ(err.find("note:"), err.rfind("note:")) << err;  // once per shape
  check_linear(9, 6, 10, true, kFp32, LinearPath::LtEpilogue, 302);
}

// The bf16-result overload (y stored as bf16, a folded round_bf16; its bias bf16 too):
// cuBLASLt's D = CUDA_R_16BF with the bf16 bias is within half a bf16 ulp (plus the f32
// sum's error) of the double reference of the rounded bias, each value a bf16; where
// cuBLASLt refuses it the f32 linear of the same values lands in the caller's scratch
// (path F32GemmThenRound: cublasGemmEx and, with a bias, its broadcast GEMM of bf16
// operands; y untouched) with the bits of the f32-result overload given the bias's
// values as f32; without scratch, a clear error.
TEST(BlasDeviceTest, Bf16ResultLinear) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuBLASLt linear with bf16 operands and a bf16 result");
  ASSERT_TRUE(set_blas_stream(nullptr).ok());
  uint32_t seed = 600;
  for (bool with_bias : {true, false}) {
    const int64_t rows = 48, in = 96, out = 80;
    // The bias rounded to bf16 (c.b16), its values as f32 (c.b) in the reference.
    Bf16Linear c = bf16_linear(rows, in, out, with_bias, seed, /*bias_bf16=*/true);
    const std::vector<double>& want = c.want;
    DeviceArray<bf16_bits> dx(c.x16), dW(c.W16), db(c.b16);
    DeviceArray<float> db_widened(c.b);
    const bf16_bits poison16 = 0x7fc1;
    DeviceArray<bf16_bits> dy(std::vector<bf16_bits>(want.size(), poison16));
    const std::string what = std::string("bf16-result linear, bias ") + (with_bias ? "on" : "off");
    // The f32-result overload's y of the same values: what a refused call leaves in the
    // scratch.
    DeviceArray<float> f32(std::vector<float>(want.size(), std::numeric_limits<float>::quiet_NaN()));
    ASSERT_TRUE(linear_bias_row_major(rows, in, out, dx.ptr, dW.ptr,
                                      with_bias ? db_widened.ptr : nullptr, f32.ptr)
                    .ok());
    LinearPath path = LinearPath::None;
    {
      // cuBLASLt stores the bf16 D, beside a bf16 bias or none.
      DeviceArray<float> scratch(std::vector<float>(want.size(), -1.f));
      BlasCallLog calls;
      testing::internal::CaptureStderr();
      Status s = linear_bias_row_major(rows, in, out, dx.ptr, dW.ptr,
                                       with_bias ? db.ptr : nullptr, dy.ptr, scratch.ptr, &path);
      std::string note = testing::internal::GetCapturedStderr();
      ASSERT_TRUE(s.ok()) << s.message();
      ASSERT_EQ(path, LinearPath::LtEpilogue) << linear_path_name(path) << " " << what << note;
      EXPECT_EQ(note, "") << what;
      EXPECT_EQ(calls.calls(), std::vector<std::string>{"cublasLtMatmul"}) << what;
      EXPECT_EQ(scratch.read(), std::vector<float>(want.size(), -1.f)) << what;
      std::vector<bf16_bits> got = dy.read();
      for (size_t i = 0; i < got.size(); i++) {
        const double v = bf16_value(got[i]), tol = std::ldexp(std::fabs(want[i]), -8) + 1e-5;
        ASSERT_NEAR(v, want[i], tol) << what << " at " << i << " (tolerance: half a bf16 "
                                     << "ulp of the value and the f32 sum's error)";
      }
    }
    // Refused: the f32 linear into y_f32, y untouched; the same bits as the f32 overload.
    DeviceArray<bf16_bits> dy2(std::vector<bf16_bits>(want.size(), poison16));
    DeviceArray<float> scratch(std::vector<float>(want.size(), -1.f));
    set_lt_refusal_for_testing(true);
    testing::internal::CaptureStderr();
    std::string refusal;
    BlasCallLog calls;
    Status refused = linear_bias_row_major(rows, in, out, dx.ptr, dW.ptr,
                                           with_bias ? db.ptr : nullptr, dy2.ptr, scratch.ptr,
                                           &path, &refusal);
    const std::vector<std::string> ran = calls.calls();
    Status no_scratch = linear_bias_row_major(rows, in, out, dx.ptr, dW.ptr,
                                              with_bias ? db.ptr : nullptr, dy2.ptr, nullptr);
    std::string err = testing::internal::GetCapturedStderr();
    set_lt_refusal_for_testing(false);
    ASSERT_TRUE(refused.ok()) << refused.message();
    // Every cuBLASLt call refused: the f32 linear is the GEMM fallback.
    EXPECT_EQ(path, LinearPath::F32GemmThenRound) << linear_path_name(path);
    EXPECT_STREQ(linear_path_name(path), "f32-gemm-then-round");
    const std::vector<std::string> gemms =
        with_bias ? std::vector<std::string>{"cublasGemmEx", "cublasGemmStridedBatchedEx"}
                  : std::vector<std::string>{"cublasGemmEx"};
    EXPECT_EQ(ran, gemms) << what;
    EXPECT_TRUE(contains(refusal, "refused for testing")) << refusal;
    EXPECT_EQ(scratch.read(), f32.read()) << what;
    EXPECT_EQ(dy2.read(), std::vector<bf16_bits>(want.size(), poison16)) << what;
    EXPECT_TRUE(contains(err, "using the f32 linear, then vouch_round_bf16 instead")) << err;
    if (with_bias) {
      EXPECT_TRUE(contains(err, "refused CUBLASLT_EPILOGUE_BIAS with a bf16 bias and D"))
          << err;
    }
    ASSERT_FALSE(no_scratch.ok());
    EXPECT_TRUE(contains(no_scratch.message(), "no f32 scratch was given")) << no_scratch.message();
  }
  // Only a product of bf16 operands in an f32 run has a bf16 result.
  EXPECT_FALSE(describe_linear(4, 8, 8, true, ProductMath::Tf32, GemmDType::F32, true).ok());
  EXPECT_FALSE(describe_linear(4, 8, 8, true, ProductMath::Bf16, GemmDType::F64, true).ok());
  EXPECT_TRUE(contains(describe_linear(4, 8, 8, true, ProductMath::Bf16, GemmDType::F32, true)
                           .value()
                           .to_string(),
                       "epilogue=BIAS, bias=bf16, D=bf16)"));
  EXPECT_TRUE(contains(describe_linear(4, 8, 8, false, ProductMath::Bf16, GemmDType::F32, true)
                           .value()
                           .to_string(),
                       "epilogue=DEFAULT, D=bf16)"));
  // The bias broadcast of a bf16 bias reads bf16 operands into the f32 y.
  EXPECT_STREQ(describe_bias_broadcast(4, 8, GemmDType::F32, ProductMath::Bf16).value().data_type,
               "CUDA_R_16BF A/B, CUDA_R_32F C");
  EXPECT_STREQ(describe_bias_broadcast(4, 8, GemmDType::F32, ProductMath::Tf32).value().compute_type,
               "CUBLAS_COMPUTE_32F");
}

// A linear's weight and bias gradients in one cuBLASLt call (BGRADB) against double
// products and sums of the same values: fp32, tf32 (dW's operands rounded, db's sums of
// the f32 values: the epilogue reads them before the tensor cores round them), bf16
// (dy and x rounded on the host; db sums the rounded dy), f64; two runs give the same
// bits; the refused epilogue's fallback (dW's GEMM, db's column-sum GEMMs in slabs of
// column_sum_slab_rows() rows) gives the same values and says so once per shape.
template <class T, class In = T>
LinearPath check_weight_grad(int64_t rows, int64_t in, int64_t out, ProductMath math,
                             uint32_t seed, std::vector<T>* db_out = nullptr) {
  constexpr bool bf16 = std::is_same_v<In, bf16_bits>;
  std::vector<T> dy = random_values<T>(size_t(rows * out), seed),
                 x = random_values<T>(size_t(rows * in), seed + 1);
  std::vector<In> dy_in, x_in;
  std::vector<double> dyd, xd;
  for (T v : dy) {
    if constexpr (bf16) dy_in.push_back(host_bf16(v)), dyd.push_back(bf16_value(dy_in.back()));
    else dy_in.push_back(v), dyd.push_back(double(v));
  }
  for (T v : x) {
    if constexpr (bf16) x_in.push_back(host_bf16(v)), xd.push_back(bf16_value(x_in.back()));
    else x_in.push_back(v), xd.push_back(double(v));
  }
  std::vector<double> want_dw(size_t(out * in)), want_db(size_t(out), 0.0);
  matmul(true, false, 1, out, in, rows, dyd.data(), 0, xd.data(), 0, want_dw.data());
  for (int64_t r = 0; r < rows; r++)
    for (int64_t o = 0; o < out; o++) want_db[size_t(o)] += dyd[size_t(r * out + o)];
  DeviceArray<In> ddy(dy_in), dx(x_in);
  DeviceArray<T> ddw(std::vector<T>(want_dw.size(), std::numeric_limits<T>::quiet_NaN())),
      ddb(std::vector<T>(want_db.size(), std::numeric_limits<T>::quiet_NaN()));
  LinearPath path = LinearPath::None;
  std::string refusal;
  Status s = [&] {
    if constexpr (bf16)
      return linear_weight_grad_row_major(rows, in, out, ddy.ptr, dx.ptr, ddw.ptr, ddb.ptr,
                                          &path, &refusal);
    else
      return linear_weight_grad_row_major(rows, in, out, ddy.ptr, dx.ptr, ddw.ptr, ddb.ptr,
                                          math, &path, &refusal);
  }();
  EXPECT_TRUE(s.ok()) << s.message();
  const GemmDType dtype = std::is_same_v<T, double> ? GemmDType::F64 : GemmDType::F32;
  const std::string what =
      describe_linear_weight_grad(rows, in, out, math, dtype).value().to_string() + " via " +
      linear_path_name(path) + (refusal.empty() ? "" : " (" + refusal + ")");
  const double scale = std::sqrt(double(std::max<int64_t>(rows, 1)));
  const double dw_tol = std::is_same_v<T, double> ? 1e-13 * scale
                        : bf16                     ? 1e-6 * scale
                        : math == kTf32            ? 5e-3 * scale
                                                   : 1e-5 * scale;
  const double db_tol = std::is_same_v<T, double> ? 1e-13 * scale : 1e-6 * scale;
  expect_close(ddw.read(), want_dw, dw_tol, "dW of " + what);
  expect_close(ddb.read(), want_db, db_tol, "db of " + what);
  if (db_out != nullptr) *db_out = ddb.read();
  return path;
}

TEST(BlasDeviceTest, LinearWeightGradSumsTheBiasInTheEpilogue) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuBLASLt linear weight gradient with the BGRADB epilogue");
  ASSERT_TRUE(set_blas_stream(nullptr).ok());
  uint32_t seed = 700;
  for (auto [rows, in, out] : {std::tuple<int64_t, int64_t, int64_t>{64, 16, 24},
                               {256, 96, 128}, {1000, 40, 72}, {9, 5, 13}}) {
    EXPECT_EQ(check_weight_grad<float>(rows, in, out, kFp32, seed), LinearPath::LtEpilogue);
    EXPECT_EQ(check_weight_grad<float>(rows, in, out, kTf32, seed + 2), LinearPath::LtEpilogue);
    EXPECT_EQ((check_weight_grad<float, bf16_bits>(rows, in, out, ProductMath::Bf16, seed + 4)),
              LinearPath::LtEpilogue);
    LinearPath f64 = check_weight_grad<double>(rows, in, out, kFp32, seed + 6);
    std::printf("f64 linear_weight_grad(rows=%lld, in=%lld, out=%lld): %s\n", (long long)rows,
                (long long)in, (long long)out, linear_path_name(f64));
    seed += 8;
  }
  // The same call twice: the same bits (one algorithm pinned per shape).
  std::vector<float> first, second;
  check_weight_grad<float>(512, 64, 96, kTf32, 800, &first);
  check_weight_grad<float>(512, 64, 96, kTf32, 800, &second);
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0);
  // rows = 0 (empty sums: dW and db cleared) and in = 0 (db only): the GEMM path.
  EXPECT_EQ(check_weight_grad<float>(0, 8, 16, kFp32, 810), LinearPath::GemmFallback);
  EXPECT_EQ(check_weight_grad<float>(32, 0, 16, kFp32, 811), LinearPath::GemmFallback);
}

TEST(BlasDeviceTest, RefusedBgradbFallsBackVisibly) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuBLASLt BGRADB refusal fallback");
  ASSERT_TRUE(set_blas_stream(nullptr).ok());
  set_lt_refusal_for_testing(true);
  testing::internal::CaptureStderr();
  // More rows than one column-sum slab: db is summed in slabs, accumulated.
  const int64_t rows = column_sum_slab_rows() + 300;
  check_weight_grad<float>(rows, 8, 24, kFp32, 900);
  check_weight_grad<float>(rows, 8, 24, kFp32, 901);  // same shape: no second note
  check_weight_grad<float>(rows, 8, 24, kTf32, 902);
  check_weight_grad<float, bf16_bits>(300, 16, 8, ProductMath::Bf16, 903);
  check_weight_grad<double>(rows, 8, 24, kFp32, 904);
  std::string err = testing::internal::GetCapturedStderr();
  set_lt_refusal_for_testing(false);
  EXPECT_TRUE(contains(err, "note: cuBLASLt refused CUBLASLT_EPILOGUE_BGRADB for "
                            "linear_weight_grad(rows=" + std::to_string(rows) +
                                ", in=8, out=24, f32): refused for testing"))
      << err;
  EXPECT_TRUE(contains(err, "out=8, bf16 operands)")) << err;
  EXPECT_TRUE(contains(err, "out=24, f64)")) << err;
  // Three f32 shapes' notes: fp32, tf32 (its own plan), and none for the repeat.
  size_t notes = 0;
  for (size_t at = err.find("linear_weight_grad(rows=" + std::to_string(rows) + ", in=8, out=24, f32)");
       at != std::string::npos;
       at = err.find("linear_weight_grad(rows=" + std::to_string(rows) + ", in=8, out=24, f32)", at + 1))
    notes++;
  EXPECT_EQ(notes, 2u) << err;
}

// A product with a long K and a small output: a few output tiles for 132 SMs, the shape
// split-K exists for. The test prints the unrestricted heuristic's choice beside the
// algorithm used.
constexpr int64_t kSplitKRows = 64, kSplitKIn = int64_t(1) << 18, kSplitKOut = 64;

bool scheme_allowed(uint32_t scheme) {
  return scheme == 0 || (scheme & kLtReductionSchemeMask) == scheme;
}

std::string describe(const LtAlgorithm& a) {
  if (a.refused) return "refused: " + a.refusal;
  return "algo " + std::to_string(a.id) + ", split-K " + std::to_string(a.split_k) +
         ", reduction " + lt_reduction_scheme_name(a.reduction_scheme) + ", workspace " +
         std::to_string(a.workspace_bytes) + " bytes";
}

TEST(BlasDeviceTest, ReproducibleConfigurationIsApplied) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuBLAS atomics off, cuBLASLt split-K reductions restricted");
  ASSERT_TRUE(set_blas_stream(nullptr).ok());
  Result<BlasConfiguration> config = blas_configuration();
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_FALSE(config.value().atomics_allowed);
  EXPECT_EQ(config.value().stream, nullptr);
  EXPECT_EQ(config.value().workspace_bytes, kBlasWorkspaceBytes);
  EXPECT_EQ(config.value().lt_workspace_bytes, kBlasWorkspaceBytes);
  EXPECT_EQ(config.value().lt_reduction_scheme_mask, kLtReductionSchemeMask);
  // Rebinding the stream keeps the configuration (cublasSetStream resets the workspace,
  // which set_blas_stream sets again; the atomics mode stays).
  Result<Stream> stream = Stream::create();
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE(set_blas_stream(stream.value().get()).ok());
  config = blas_configuration();
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_FALSE(config.value().atomics_allowed);
  EXPECT_EQ(config.value().stream, stream.value().get());
  ASSERT_TRUE(set_blas_stream(nullptr).ok());

  // The algorithm pinned for split-K-prone linears (with and without the bias
  // epilogue, and TF32) reduces in an allowed scheme; a second query returns the same
  // pinned algorithm.
  for (bool with_bias : {true, false}) {
    for (ProductMath math : {kFp32, kTf32}) {
      Result<LtAlgorithm> used =
          linear_algorithm(kSplitKRows, kSplitKIn, kSplitKOut, with_bias, math);
      ASSERT_TRUE(used.ok()) << used.status().message();
      Result<LtAlgorithm> unrestricted = linear_heuristic_for_testing(
          kSplitKRows, kSplitKIn, kSplitKOut, with_bias, math, 0x7);
      ASSERT_TRUE(unrestricted.ok()) << unrestricted.status().message();
      std::printf("linear(rows=%lld, in=%lld, out=%lld, bias=%d, math=%s): used %s; "
                  "unrestricted heuristic: %s\n",
                  (long long)kSplitKRows, (long long)kSplitKIn, (long long)kSplitKOut,
                  int(with_bias), product_math_name(math), describe(used.value()).c_str(),
                  describe(unrestricted.value()).c_str());
      ASSERT_FALSE(used.value().refused) << used.value().refusal;
      EXPECT_TRUE(scheme_allowed(used.value().reduction_scheme)) << describe(used.value());
      EXPECT_NE(used.value().reduction_scheme, 1u) << "in-place split-K reduction";
      if (used.value().split_k > 1) {
        EXPECT_NE(used.value().reduction_scheme, 0u) << describe(used.value());
      }
      Result<LtAlgorithm> again =
          linear_algorithm(kSplitKRows, kSplitKIn, kSplitKOut, with_bias, math);
      ASSERT_TRUE(again.ok());
      EXPECT_EQ(describe(again.value()), describe(used.value()));
    }
  }
  std::fflush(stdout);
}

// Bitwise equality of two device arrays, with the first differing element.
template <class T>
void expect_bitwise_equal(const std::vector<T>& a, const std::vector<T>& b,
                          const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); i++) {
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) {
      ADD_FAILURE() << what << ": element " << i << " differs between two runs: " << a[i]
                    << " vs " << b[i];
      return;
    }
  }
}

TEST(BlasDeviceTest, SplitKProneProductsAreBitwiseReproducible) {
  VOUCH_REQUIRE_CUDA_DEVICE("two runs of a split-K-prone GEMM and linear, bitwise equal");
  ASSERT_TRUE(set_blas_stream(nullptr).ok());
  const int64_t M = kSplitKRows, N = kSplitKOut, K = kSplitKIn;
  // Values of mixed sign: any change of summation order changes low bits.
  std::vector<float> A = random_values<float>(size_t(M * K), 900),
                     B = random_values<float>(size_t(K * N), 901),
                     bias = random_values<float>(size_t(N), 902);
  DeviceArray<float> dA(A), dB(B), dbias(bias), dW(random_values<float>(size_t(N * K), 903));
  const std::vector<float> poison(size_t(M * N), std::numeric_limits<float>::quiet_NaN());

  // C = A · B through cublasGemmEx, twice, another product between the two runs.
  DeviceArray<float> c1(poison), c2(poison), other(std::vector<float>(64 * 64, 0.f));
  ASSERT_TRUE(gemm_row_major(false, false, 1, M, N, K, dA.ptr, 0, dB.ptr, 0, c1.ptr, false, kFp32)
                  .ok());
  ASSERT_TRUE(gemm_row_major(false, true, 1, 64, 64, 64, dA.ptr, 0, dA.ptr, 0, other.ptr, false,
                             kFp32)
                  .ok());
  ASSERT_TRUE(gemm_row_major(false, false, 1, M, N, K, dA.ptr, 0, dB.ptr, 0, c2.ptr, false, kFp32)
                  .ok());
  std::vector<float> g1 = c1.read();
  expect_bitwise_equal(g1, c2.read(), "cublasGemmEx m=n=64, k=2^18");
  std::vector<double> want(size_t(M * N));
  matmul(false, false, 1, M, N, K, to_double(A).data(), 0, to_double(B).data(), 0, want.data());
  expect_close(g1, want, 1e-5 * std::sqrt(double(K)), "cublasGemmEx m=n=64, k=2^18");

  // y = x · Wᵀ + b through cublasLtMatmul with the bias epilogue (and without), twice.
  for (bool with_bias : {true, false}) {
    DeviceArray<float> y1(poison), y2(poison);
    const float* b = with_bias ? dbias.ptr : nullptr;
    LinearPath p1 = LinearPath::None, p2 = LinearPath::None;
    ASSERT_TRUE(linear_bias_row_major(M, K, N, dA.ptr, dW.ptr, b, y1.ptr, kFp32, &p1).ok());
    ASSERT_TRUE(gemm_row_major(false, true, 1, 64, 64, 64, dA.ptr, 0, dA.ptr, 0, other.ptr,
                               false, kFp32)
                    .ok());
    ASSERT_TRUE(linear_bias_row_major(M, K, N, dA.ptr, dW.ptr, b, y2.ptr, kFp32, &p2).ok());
    EXPECT_EQ(p1, LinearPath::LtEpilogue) << linear_path_name(p1);
    EXPECT_EQ(p2, p1);
    expect_bitwise_equal(y1.read(), y2.read(),
                         std::string("cublasLtMatmul rows=64, in=2^18, out=64") +
                             (with_bias ? ", epilogue=BIAS" : ""));
  }
}

TEST(BlasDeviceTest, BoundToASessionStream) {
  VOUCH_REQUIRE_CUDA_DEVICE("cuBLAS bound to a non-blocking stream");
  Result<Stream> stream = Stream::create();
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE(set_blas_stream(stream.value().get()).ok());
  EXPECT_EQ(blas_stream(), stream.value().get());
  std::vector<float> A = random_values<float>(64 * 32, 7), B = random_values<float>(32 * 16, 8);
  std::vector<double> want(64 * 16);
  matmul(false, false, 1, 64, 16, 32, to_double(A).data(), 0, to_double(B).data(), 0, want.data());
  DeviceArray<float> dA(A), dB(B), dC(std::vector<float>(64 * 16, 0.f));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_TRUE(gemm_row_major(false, false, 1, 64, 16, 32, dA.ptr, 0, dB.ptr, 0, dC.ptr, false,
                             kFp32)
                  .ok());
  ASSERT_TRUE(stream.value().synchronize().ok());
  expect_close(dC.read(), want, 1e-5 * std::sqrt(32.0), "gemm on the session stream");
  ASSERT_TRUE(set_blas_stream(nullptr).ok());
}

}  // namespace
}  // namespace vouch::rt::cuda
