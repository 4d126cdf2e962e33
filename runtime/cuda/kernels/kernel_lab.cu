// kernel_lab.cu: every kernel of the library on random data against a plain CPU
// reference written here, then (with --bench) timed. llm.c's dev/cuda habit: a kernel
// earns its place in the lab, validated first, measured second.
//
// Runs the entry points of kernel_instances.cu (the instantiations as codegen emits
// them) with the launch shapes the headers document. Per check it prints the largest
// absolute error against the reference and the tolerance; the reductions are also
// checked bitwise against a CPU emulation of their fixed order (per-thread strided
// sums, then the shared-memory tree), which is the reproducibility claim itself.
//
// Build (no Bazel needed; Bazel's //runtime/cuda/kernels:kernel_lab does the same):
//   nvcc -std=c++17 -O2 -gencode arch=compute_90,code=sm_90 -cudart static \
//        -o kernel_lab kernel_lab.cu
// Run: ./kernel_lab [--check-attention] [--bench | --bench-attention]
// (--check-attention: the f32 attention checks in place of every check; --bench-attention:
// the checks, then bench_attention alone). Exit 0 when every check passes, 1 on any
// failure, 3 (printing "SKIPPED (no CUDA device)") when no CUDA device is visible.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernel_instances.cu"
#include "col2im_matmul.cuh"

// col2im_matmul.cuh's entries as codegen emits them (conv.cuh's 21 geometry integers,
// then the rows): SIMT f32 / f64 and the f32 TF32 tensor-core one (three blocks per SM,
// as the header recommends).
extern "C" __global__ void lab_col2im_matmul_f32(const float* lhs, const float* rhs, float* image,
                                                 LAB_CONV_PARAMS, long long rows) {
  vouch::col2im_matmul_kernel<float>(lhs, rhs, image, LAB_CONV_GEOMETRY, rows);
}
extern "C" __global__ void lab_col2im_matmul_f64(const double* lhs, const double* rhs,
                                                 double* image, LAB_CONV_PARAMS, long long rows) {
  vouch::col2im_matmul_kernel<double>(lhs, rhs, image, LAB_CONV_GEOMETRY, rows);
}
extern "C" __global__ void __launch_bounds__(256, 3) lab_col2im_matmul_tf32_f32(
    const float* lhs, const float* rhs, float* image, LAB_CONV_PARAMS, long long rows) {
  vouch::col2im_matmul_tf32_kernel(lhs, rhs, image, LAB_CONV_GEOMETRY, rows);
}

// bench_attention's comparison: the TF32 d64 entries with __launch_bounds__(256, 1).
extern "C" __global__ void __launch_bounds__(256, 1) lab_attention_forward_tf32_d64_lb1_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, float* out, vouch::Dims od, float* lse, long long causal,
    double scale) {
  vouch::attention_forward_tf32_kernel<1>(q, qd, k, kd, v, vd, mask, md, out, od, lse, causal,
                                          scale);
}
extern "C" __global__ void __launch_bounds__(256, 1) lab_attention_dkdv_tf32_d64_lb1_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dk, vouch::Dims dkd, float* dv, vouch::Dims dvd, long long causal,
    double scale) {
  vouch::attention_dkdv_tf32_kernel<1, 1>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta,
                                          dk, dkd, dv, dvd, causal, scale);
}
extern "C" __global__ void __launch_bounds__(256, 1) lab_attention_dq_tf32_d64_lb1_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dq, vouch::Dims dqd, long long causal, double scale) {
  vouch::attention_dq_tf32_kernel<1>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, dq,
                                     dqd, causal, scale);
}

// attention.cuh's bf16-product twins with __launch_bounds__(256, 1), for bench_attention
// (kernel_instances.cu has the generic and the codegen-style d64 ones).
extern "C" __global__ void __launch_bounds__(256, 1) lab_attention_forward_bf16_d64_lb1_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, float* out, vouch::Dims od, float* lse, long long causal,
    double scale) {
  vouch::attention_forward_bf16_kernel<1>(q, qd, k, kd, v, vd, mask, md, out, od, lse, causal,
                                          scale);
}
extern "C" __global__ void __launch_bounds__(256, 1) lab_attention_dkdv_bf16_d64_lb1_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dk, vouch::Dims dkd, float* dv, vouch::Dims dvd, long long causal,
    double scale) {
  vouch::attention_dkdv_bf16_kernel<1, 1>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta,
                                          dk, dkd, dv, dvd, causal, scale);
}
extern "C" __global__ void __launch_bounds__(256, 1) lab_attention_dq_bf16_d64_lb1_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dq, vouch::Dims dqd, long long causal, double scale) {
  vouch::attention_dq_bf16_kernel<1>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, dq,
                                     dqd, causal, scale);
}

// Lab-only attention64 policies: the forward testing each entry's kept bit
// (codegen's takes the all-kept path where a tile is whole); the checks compare the two
// bitwise and bench_attention times both.
template <class Policy>
struct LabA64EachKept : Policy {
  static constexpr bool kAllKeptPath = false;
};
#define LAB_A64_FORWARD_EACH_KEPT(NAME, POLICY)                                                  \
  extern "C" __global__ void __launch_bounds__(128, 2)                                         \
      lab_attention64_forward_##NAME##_each_kept_f32(                                          \
          const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v,      \
          vouch::Dims vd, const int* mask, vouch::Dims md, float* out, vouch::Dims od,         \
          float* lse, long long causal, double scale) {                                        \
    vouch::attention64_forward_kernel<LabA64EachKept<POLICY>>(q, qd, k, kd, v, vd, mask, md,   \
                                                              out, od, lse, causal, scale);    \
  }
LAB_A64_FORWARD_EACH_KEPT(tf32, vouch::A64Tf32)
LAB_A64_FORWARD_EACH_KEPT(bf16, vouch::A64Bf16)
#undef LAB_A64_FORWARD_EACH_KEPT

// attention64's bf16 products given q, k, v as bf16 bits: the overloads of the bf16
// entries that codegen's calls with a bf16 qkv buffer pick, with BLOCKS blocks an SM in
// their launch bounds (their tiles' shared memory allows four). The checks compare them
// bitwise with the f32-input entries (kernel_instances.cu's), bench_attention times them.
#define LAB_A64_QKV_BF16(SUFFIX, BLOCKS)                                                         \
  extern "C" __global__ void __launch_bounds__(128, BLOCKS)                                    \
      lab_attention64_forward_bf16_qkv_bf16##SUFFIX(                                           \
          const unsigned short* q, vouch::Dims qd, const unsigned short* k, vouch::Dims kd,    \
          const unsigned short* v, vouch::Dims vd, const int* mask, vouch::Dims md,            \
          float* out, vouch::Dims od, float* lse, long long causal, double scale) {             \
    vouch::attention64_forward_bf16_kernel(q, qd, k, kd, v, vd, mask, md, out, od, lse,       \
                                           causal, scale);                                     \
  }                                                                                            \
  extern "C" __global__ void __launch_bounds__(128, BLOCKS)                                    \
      lab_attention64_dkdv_bf16_qkv_bf16##SUFFIX(                                              \
          const unsigned short* q, vouch::Dims qd, const unsigned short* k, vouch::Dims kd,    \
          const unsigned short* v, vouch::Dims vd, const int* mask, vouch::Dims md,            \
          const float* dout, vouch::Dims dod, const float* lse, const float* delta, float* dk, \
          vouch::Dims dkd, float* dv, vouch::Dims dvd, long long causal, double scale) {       \
    vouch::attention64_dkdv_bf16_kernel(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, \
                                        dk, dkd, dv, dvd, causal, scale);                      \
  }                                                                                            \
  extern "C" __global__ void __launch_bounds__(128, BLOCKS)                                    \
      lab_attention64_dq_bf16_qkv_bf16##SUFFIX(                                                \
          const unsigned short* q, vouch::Dims qd, const unsigned short* k, vouch::Dims kd,    \
          const unsigned short* v, vouch::Dims vd, const int* mask, vouch::Dims md,            \
          const float* dout, vouch::Dims dod, const float* lse, const float* delta, float* dq, \
          vouch::Dims dqd, long long causal, double scale) {                                   \
    vouch::attention64_dq_bf16_kernel(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta,   \
                                      dq, dqd, causal, scale);                                 \
  }
LAB_A64_QKV_BF16(, 2)
LAB_A64_QKV_BF16(_b3, 3)
LAB_A64_QKV_BF16(_b4, 4)
#undef LAB_A64_QKV_BF16

namespace {

// ------------------------------------------------------------------------- harness

#define LAB_CHECK(call)                                                                    \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "kernel_lab: %s failed: %s (%s:%d)\n", #call,                   \
                   cudaGetErrorString(e_), __FILE__, __LINE__);                            \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

// A check after every launch (llm.c's habit): launch errors, then execution errors.
#define LAB_LAUNCHED()                       \
  do {                                       \
    LAB_CHECK(cudaGetLastError());           \
    LAB_CHECK(cudaDeviceSynchronize());      \
  } while (0)

int g_checks = 0, g_failures = 0;

template <class T>
const char* type_name() {
  return sizeof(T) == 4 ? "f32" : "f64";
}

template <class T>
double eps() {
  return std::numeric_limits<T>::epsilon();
}

void report(const std::string& what, double max_err, double tol) {
  ++g_checks;
  const bool ok = max_err <= tol && !std::isnan(max_err);
  if (!ok) ++g_failures;
  std::printf("%s  %-64s max_abs_err=%-11.3g tol=%.3g\n", ok ? "PASS" : "FAIL", what.c_str(),
              max_err, tol);
}

void report_bitwise(const std::string& what, long long mismatches, long long total) {
  ++g_checks;
  if (mismatches) ++g_failures;
  std::printf("%s  %-64s %lld of %lld differ from the fixed-order emulation\n",
              mismatches ? "FAIL" : "PASS", what.c_str(), mismatches, total);
}

template <class T>
long long bit_mismatches(const std::vector<T>& a, const std::vector<T>& b) {
  long long n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += std::memcmp(&a[i], &b[i], sizeof(T)) != 0;
  return n;
}

// Two f32 results compared bit by bit: how many entries differ (a length difference
// counts its extra entries) and the first that does, for the lines under a FAIL.
struct BitDiff {
  long long count = 0, first = -1, got_size = 0, want_size = 0;
  float got = 0, want = 0;
};
BitDiff bit_diff(const std::vector<float>& got, const std::vector<float>& want) {
  BitDiff d;
  d.got_size = (long long)got.size(), d.want_size = (long long)want.size();
  const size_t n = std::min(got.size(), want.size());
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(&got[i], &want[i], 4) == 0) continue;
    if (d.first < 0) d.first = (long long)i, d.got = got[i], d.want = want[i];
    ++d.count;
  }
  d.count += (long long)(std::max(got.size(), want.size()) - n);
  return d;
}
void print_bit_diff(const std::string& what, const BitDiff& d) {
  if (d.got_size != d.want_size)
    std::printf("      %s: %lld entries against %lld\n", what.c_str(), d.got_size, d.want_size);
  if (d.first < 0) return;
  unsigned a, b;
  std::memcpy(&a, &d.got, 4);
  std::memcpy(&b, &d.want, 4);
  std::printf("      %s: %lld differ; the first, [%lld]: %.9g (0x%08x) against %.9g (0x%08x)\n",
              what.c_str(), d.count, d.first, d.got, a, d.want, b);
}

template <class T>
double max_abs_err(const std::vector<T>& got, const std::vector<double>& want) {
  double m = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::fabs(double(got[i]) - want[i]);
    if (std::isnan(d)) return NAN;
    m = std::max(m, d);
  }
  return m;
}

template <class T>
struct DeviceArray {
  T* p = nullptr;
  size_t n = 0;
  explicit DeviceArray(size_t count, size_t pad = 0) : n(count) {
    LAB_CHECK(cudaMalloc(&p, sizeof(T) * (count + pad + 1)));
    LAB_CHECK(cudaMemset(p, 0xff, sizeof(T) * (count + pad + 1)));  // NaN: unwritten shows
  }
  DeviceArray(const std::vector<T>& h) : DeviceArray(h.size()) { upload(h); }
  ~DeviceArray() { cudaFree(p); }
  DeviceArray(const DeviceArray&) = delete;
  void upload(const std::vector<T>& h) {
    LAB_CHECK(cudaMemcpy(p, h.data(), sizeof(T) * h.size(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> h(n);
    LAB_CHECK(cudaMemcpy(h.data(), p, sizeof(T) * n, cudaMemcpyDeviceToHost));
    return h;
  }
};

std::mt19937_64 g_rng(2026);

template <class T>
std::vector<T> random_vector(size_t n, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = T(u(g_rng));
  return v;
}

// The launch rules of the headers.
unsigned pointwise_grid(long long n) {  // pointwise.cuh
  const long long lanes = n % 4 == 0 ? n / 4 : n;
  return unsigned(std::max(1LL, std::min((lanes + 255) / 256, 1056LL)));
}
unsigned elementwise_grid(long long n) {  // index.cuh (and the lab's batch copy)
  return unsigned(std::max(1LL, std::min((n + 255) / 256, 1056LL)));
}
unsigned reduce_grid(long long outputs) {  // reduce.cuh
  return unsigned(std::max(1LL, std::min(outputs, 4096LL)));
}

std::vector<long long> row_major_strides(const std::vector<long long>& shape) {
  std::vector<long long> s(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

vouch::Dims make_dims(const std::vector<long long>& extent, const std::vector<long long>& stride) {
  vouch::Dims d{};
  d.rank = int(extent.size());
  for (size_t k = 0; k < extent.size(); ++k) {
    d.extent[k] = extent[k];
    d.stride[k] = stride[k];
  }
  return d;
}

std::string shape_text(const std::vector<long long>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// The entry points the lab runs, for element type T (kernel_instances.cu's lab_*_<t>,
// executor.cuh's vouch_*_<t>).
template <class T>
struct Lab;
#define LAB_ENTRY_POINTS(T, SUFFIX)                                 \
  template <>                                                       \
  struct Lab<T> {                                                   \
    static constexpr auto fill = lab_fill##SUFFIX;                  \
    static constexpr auto relu = lab_relu##SUFFIX;                  \
    static constexpr auto add_relu = lab_add_relu##SUFFIX;          \
    static constexpr auto mul_sub = lab_mul_sub##SUFFIX;            \
    static constexpr auto sub_scale_mul = lab_sub_scale_mul##SUFFIX; \
    static constexpr auto tanh_ = lab_tanh##SUFFIX;                 \
    static constexpr auto reduce = lab_reduce##SUFFIX;              \
    static constexpr auto reduce_extreme = lab_reduce_extreme##SUFFIX; \
    static constexpr auto column_sum = lab_column_sum##SUFFIX;      \
    static constexpr auto mse = lab_mse_loss##SUFFIX;               \
    static constexpr auto cross_entropy = lab_cross_entropy##SUFFIX; \
    static constexpr auto cross_entropy_grad = lab_cross_entropy_grad##SUFFIX; \
    static constexpr auto softmax = lab_softmax##SUFFIX;            \
    static constexpr auto softmax_grad = lab_softmax_grad##SUFFIX;  \
    static constexpr auto masked_softmax = lab_masked_softmax##SUFFIX; \
    static constexpr auto cast_to_int = lab_cast_to_int##SUFFIX;    \
    static constexpr auto cast_from_int = lab_cast_from_int##SUFFIX; \
    static constexpr auto layer_norm = lab_layer_norm##SUFFIX;      \
    static constexpr auto layer_norm_grad = lab_layer_norm_grad##SUFFIX; \
    static constexpr auto layer_norm_grad_shared = lab_layer_norm_grad_shared##SUFFIX; \
    static constexpr auto batch_norm = lab_batch_norm##SUFFIX;      \
    static constexpr auto batch_norm_grad = lab_batch_norm_grad##SUFFIX; \
    static constexpr auto batch_norm_cluster = lab_batch_norm_cluster##SUFFIX; \
    static constexpr auto batch_norm_grad_cluster = lab_batch_norm_grad_cluster##SUFFIX; \
    static constexpr auto softmax_long = lab_softmax_long##SUFFIX;  \
    static constexpr auto cross_entropy_grad_long = lab_cross_entropy_grad_long##SUFFIX; \
    static constexpr auto softmax_cluster = lab_softmax_cluster##SUFFIX; \
    static constexpr auto masked_softmax_cluster = lab_masked_softmax_cluster##SUFFIX; \
    static constexpr auto cross_entropy_grad_cluster = lab_cross_entropy_grad_cluster##SUFFIX; \
    static constexpr auto gather = lab_gather##SUFFIX;              \
    static constexpr auto gather_quads = lab_gather_quads##SUFFIX;  \
    static constexpr auto gelu = lab_gelu##SUFFIX;                  \
    static constexpr auto gelu_arith = lab_gelu_arith##SUFFIX;      \
    static constexpr auto slice = lab_slice##SUFFIX;                \
    static constexpr auto slice_scatter = lab_slice_scatter##SUFFIX; \
    static constexpr auto concat3 = lab_concat3##SUFFIX;            \
    static constexpr auto slice_quads = lab_slice_quads##SUFFIX;    \
    static constexpr auto concat3_quads = lab_concat3_quads##SUFFIX; \
    static constexpr auto embedding = lab_embedding##SUFFIX;        \
    static constexpr auto embedding_grad = lab_embedding_grad##SUFFIX; \
    static constexpr auto gather_axis = lab_gather_axis##SUFFIX;    \
    static constexpr auto scatter_add_axis = lab_scatter_add_axis##SUFFIX; \
    static constexpr auto im2col = lab_im2col##SUFFIX;              \
    static constexpr auto col2im = lab_col2im##SUFFIX;              \
    static constexpr auto col2im_matmul = lab_col2im_matmul##SUFFIX; \
    static constexpr auto small_product = lab_small_product##SUFFIX; \
    static constexpr auto small_linear = lab_small_linear##SUFFIX;  \
    static constexpr auto optimizer = vouch_optimizer##SUFFIX;      \
    static constexpr auto grad_norm = vouch_grad_norm##SUFFIX;      \
    static constexpr auto select_batch = vouch_select_batch##SUFFIX; \
    static constexpr auto dropout = lab_dropout##SUFFIX;            \
    static constexpr auto rand_uniform = lab_rand_uniform##SUFFIX;  \
    static constexpr auto bernoulli_mask = lab_bernoulli_mask##SUFFIX; \
    static constexpr auto attention_forward = lab_attention_forward##SUFFIX; \
    static constexpr auto attention_forward_d64 = lab_attention_forward_d64##SUFFIX; \
    static constexpr auto attention_delta = lab_attention_delta##SUFFIX; \
    static constexpr auto attention_dkdv = lab_attention_dkdv##SUFFIX; \
    static constexpr auto attention_dkdv_d64 = lab_attention_dkdv_d64##SUFFIX; \
    static constexpr auto attention_dq = lab_attention_dq##SUFFIX; \
    static constexpr auto attention_dq_d64 = lab_attention_dq_d64##SUFFIX; \
  };
LAB_ENTRY_POINTS(float, _f32)
LAB_ENTRY_POINTS(double, _f64)
#undef LAB_ENTRY_POINTS

// ------------------------------------------------------------------------ pointwise


// `offset` elements past a 256-byte boundary: 1 makes every pointer misaligned for the
// 128-bit path, so the kernel must take the scalar one.
template <class T>
void test_pointwise(long long n, int offset, bool one_block) {
  using K = Lab<T>;
  const std::string tag = std::string(type_name<T>()) + " n=" + std::to_string(n) +
                          (offset ? " misaligned" : "") + (one_block ? " grid=1" : "");
  const unsigned grid = one_block ? 1 : pointwise_grid(n);
  const std::vector<T> a = random_vector<T>(n), b = random_vector<T>(n);
  const std::vector<T> s = random_vector<T>(1);
  DeviceArray<T> da(n, offset), db(n, offset), ds(s), o0(n, offset), o1(n, offset);
  T* const pa = da.p + offset;
  T* const pb = db.p + offset;
  T* const p0 = o0.p + offset;
  T* const p1 = o1.p + offset;
  LAB_CHECK(cudaMemcpy(pa, a.data(), sizeof(T) * n, cudaMemcpyHostToDevice));
  LAB_CHECK(cudaMemcpy(pb, b.data(), sizeof(T) * n, cudaMemcpyHostToDevice));
  auto down = [&](T* p) {
    std::vector<T> h(n);
    LAB_CHECK(cudaMemcpy(h.data(), p, sizeof(T) * n, cudaMemcpyDeviceToHost));
    return h;
  };
  std::vector<double> want(n), want1(n);

  K::fill<<<grid, 256>>>(p0, n, 0);
  LAB_LAUNCHED();
  for (long long i = 0; i < n; ++i) want[i] = 0.5;
  report("pointwise fill (NIn=0) " + tag, max_abs_err(down(p0), want), 0);

  K::relu<<<grid, 256>>>(p0, pa, n, 0);
  LAB_LAUNCHED();
  for (long long i = 0; i < n; ++i) want[i] = a[i] > T(0) ? a[i] : T(0);
  report("pointwise relu (NIn=1) " + tag, max_abs_err(down(p0), want), 0);

  K::add_relu<<<grid, 256>>>(p0, pa, pb, n, 0);
  LAB_LAUNCHED();
  for (long long i = 0; i < n; ++i) {
    const T t = a[i] + b[i];
    want[i] = t > T(0) ? t : T(0);
  }
  report("pointwise add_relu (NIn=2) " + tag, max_abs_err(down(p0), want), 0);

  K::add_relu<<<grid, 256>>>(p0, pa, ds.p, n, 2);  // bit 1: input 1 is a rank-0 value
  LAB_LAUNCHED();
  for (long long i = 0; i < n; ++i) {
    const T t = a[i] + s[0];
    want[i] = t > T(0) ? t : T(0);
  }
  report("pointwise add_relu, input 1 rank-0 (mask 0b10) " + tag, max_abs_err(down(p0), want), 0);

  K::add_relu<<<grid, 256>>>(p0, ds.p, ds.p, n, 3);  // every input rank-0
  LAB_LAUNCHED();
  for (long long i = 0; i < n; ++i) {
    const T t = s[0] + s[0];
    want[i] = t > T(0) ? t : T(0);
  }
  report("pointwise add_relu, both rank-0 (mask 0b11) " + tag, max_abs_err(down(p0), want), 0);

  K::mul_sub<<<grid, 256>>>(p0, p1, pa, pb, n, 0);
  LAB_LAUNCHED();
  for (long long i = 0; i < n; ++i) {
    want[i] = a[i] * b[i];
    want1[i] = a[i] - b[i];
  }
  report("pointwise mul_sub result 0 (NOut=2) " + tag, max_abs_err(down(p0), want), 0);
  report("pointwise mul_sub result 1 (NOut=2) " + tag, max_abs_err(down(p1), want1), 0);

  K::sub_scale_mul<<<grid, 256>>>(p0, pa, pb, ds.p, n, 4);  // bit 2: the seed
  LAB_LAUNCHED();
  for (long long i = 0; i < n; ++i) want[i] = ((a[i] - b[i]) * T(0.125)) * s[0];
  report("pointwise sub_scale_mul, input 2 rank-0 (NIn=3) " + tag, max_abs_err(down(p0), want),
         0);

  K::tanh_<<<grid, 256>>>(p0, pa, n, 0);
  LAB_LAUNCHED();
  for (long long i = 0; i < n; ++i) want[i] = std::tanh(a[i]);  // T's own tanh
  report("pointwise tanh (CUDA math, 2 ulp) " + tag, max_abs_err(down(p0), want), 4 * eps<T>());
}

// ----------------------------------------------------------------------- reductions


long long host_offset(long long flat, const vouch::Dims& d) {
  long long off = 0;
  for (int k = d.rank - 1; k >= 0; --k) {
    off += (flat % d.extent[k]) * d.stride[k];
    flat /= d.extent[k];
  }
  return off;
}

// The fixed tree of common.cuh over `width` partial sums, sequentially: at each step
// the entries read ([i + s], i < s) are not the ones written, so this is its order.
template <class T>
T tree_sum(std::vector<T> partial) {
  for (size_t s = partial.size() / 2; s > 0; s >>= 1)
    for (size_t i = 0; i < s; ++i) partial[i] += partial[i + s];
  return partial[0];
}

// A reduction of `shape` over `axes`, as the kernels take it: the kept and the
// reduced axes (extents and row-major input strides), output and slice sizes, and
// the output each input element falls into.
struct ReductionSplit {
  std::vector<long long> ke, ks, re, rs;
  long long numel = 1, outputs = 1, count = 1;
  std::string axes_text = "{";
  ReductionSplit(const std::vector<long long>& shape, const std::vector<int>& axes)
      : shape_(shape), axes_(axes) {
    const std::vector<long long> strides = row_major_strides(shape);
    for (size_t i = 0; i < shape.size(); ++i) {
      numel *= shape[i];
      const bool reduced = std::find(axes.begin(), axes.end(), int(i)) != axes.end();
      (reduced ? re : ke).push_back(shape[i]);
      (reduced ? rs : ks).push_back(strides[i]);
    }
    for (long long e : ke) outputs *= e;
    for (long long e : re) count *= e;
    for (size_t i = 0; i < axes.size(); ++i)
      axes_text += (i ? "," : "") + std::to_string(axes[i]);
    axes_text += "}";
  }
  long long output_of(long long flat) const {
    std::vector<long long> coord(shape_.size());
    long long o = 0, weight = 1;
    for (int i = int(shape_.size()) - 1; i >= 0; --i) {
      coord[i] = flat % shape_[i];
      flat /= shape_[i];
    }
    for (int i = int(shape_.size()) - 1; i >= 0; --i)
      if (std::find(axes_.begin(), axes_.end(), i) == axes_.end()) {
        o += coord[i] * weight;
        weight *= shape_[i];
      }
    return o;
  }

 private:
  std::vector<long long> shape_;
  std::vector<int> axes_;
};

template <class T>
void test_reduce(const std::vector<long long>& shape, const std::vector<int>& axes, bool mean) {
  const ReductionSplit split(shape, axes);
  const long long numel = split.numel, outputs = split.outputs, count = split.count;
  const vouch::Dims kept = make_dims(split.ke, split.ks), red = make_dims(split.re, split.rs);
  const long long divisor = mean ? count : 1;
  const std::string tag = std::string(mean ? "reduce_mean " : "reduce_sum ") + type_name<T>() +
                          " " + shape_text(shape) + " axes " + split.axes_text;

  const std::vector<T> x = random_vector<T>(numel);
  DeviceArray<T> din(x), dout(outputs);
  Lab<T>::reduce<<<reduce_grid(outputs), 256>>>(din.p, dout.p, kept, red, outputs, count,
                                                   divisor);
  LAB_LAUNCHED();
  const std::vector<T> got = dout.download();

  // Plain reference: every input element added, in double, into its output.
  std::vector<double> want(outputs, 0.0);
  for (long long flat = 0; flat < numel; ++flat) want[split.output_of(flat)] += double(x[flat]);
  for (double& w : want) w /= double(divisor);
  // |x| <= 1: any order's error is within count roundings of at most `count`.
  report(tag, max_abs_err(got, want), eps<T>() * count / double(divisor) * 2 + eps<T>());

  // The fixed order, emulated: thread t adds r = t, t + 256, ..., then the tree.
  std::vector<T> order(outputs);
  for (long long o = 0; o < outputs; ++o) {
    const long long base = host_offset(o, kept);
    std::vector<T> partial(256, T(0));
    for (long long r = 0; r < count; ++r) partial[r % 256] += x[base + host_offset(r, red)];
    const T sum = tree_sum(partial);
    order[o] = divisor > 1 ? sum / T(divisor) : sum;
  }
  report_bitwise(tag + " order", bit_mismatches(got, order), outputs);
}

// reduce_extreme_kernel: the maximum (minimum) of every slice, exactly (no rounding
// in a max), against a plain loop; a NaN in one slice makes that output NaN only.
template <class T>
void test_reduce_extreme(const std::vector<long long>& shape, const std::vector<int>& axes,
                         bool max, bool with_nan) {
  const ReductionSplit split(shape, axes);
  const long long numel = split.numel, outputs = split.outputs, count = split.count;
  const std::string tag = std::string(max ? "reduce_max " : "reduce_min ") + type_name<T>() +
                          " " + shape_text(shape) + " axes " + split.axes_text +
                          (with_nan ? " with a NaN" : "");
  std::vector<T> x = random_vector<T>(numel);
  if (with_nan) x[numel / 2] = std::numeric_limits<T>::quiet_NaN();
  DeviceArray<T> din(x), dout(outputs);
  Lab<T>::reduce_extreme<<<reduce_grid(outputs), 256>>>(
      din.p, dout.p, make_dims(split.ke, split.ks), make_dims(split.re, split.rs), outputs,
      count, max ? 1 : 0);
  LAB_LAUNCHED();
  const std::vector<T> got = dout.download();
  std::vector<T> want(outputs, max ? -std::numeric_limits<T>::infinity()
                                   : std::numeric_limits<T>::infinity());
  for (long long flat = 0; flat < numel; ++flat) {
    const long long o = split.output_of(flat);
    const T v = x[flat];
    if (std::isnan(v) || std::isnan(want[o])) {
      want[o] = std::numeric_limits<T>::quiet_NaN();
    } else if (max ? v > want[o] : v < want[o]) {
      want[o] = v;
    }
  }
  report_bitwise(tag, bit_mismatches(got, want), outputs);
}

// The most dynamic shared memory a block may have on this device.
long long lab_shared_optin() {
  int device = 0, optin = 0;
  LAB_CHECK(cudaGetDevice(&device));
  LAB_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return optin;
}
// Lets kernel f be launched with `bytes` of dynamic shared memory (beyond 48 KB);
// false where the device cannot give it (with the kernel's static shared memory).
template <class K>
bool allow_dynamic_shared(K f, long long bytes) {
  cudaFuncAttributes attributes{};
  LAB_CHECK(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(f)));
  if (bytes + (long long)attributes.sharedSizeBytes > lab_shared_optin()) return false;
  LAB_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(f),
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  return true;
}

// cross_entropy and its dlogits against a float64 loop: rows with an ignored label,
// more classes than threads (several per thread), more rows than the grad grid
// (grid-stride), and a label out of range (NaN loss, NaN row). Run twice: bitwise.
// `pitch` > classes: rows lie pitch apart (cross_entropy's `classes`, vouch-pad-
// classes' padding); the padding of the logits is NaN (read, it would make the loss
// and rows NaN) and every dlogits buffer starts NaN (the padding must be written 0);
// and the codegen launch again in place (dlogits over the logits, as the storage plan
// runs it).
// The bf16 bits nearest a finite or infinite f (ties to even), from the values of its
// two bf16 neighbours (truncated, and one bf16 step away from zero, 2^128 past the
// largest) compared in double, not by the kernels' bit arithmetic. (NaN: the callers
// test it apart.)
unsigned bf16_bits_by_value(float f) {
  auto value = [](unsigned bits16) {
    const unsigned b = bits16 << 16;
    if ((b & 0x7fffffffu) == 0x7f800000u) return std::ldexp(b >> 31 ? -1.0 : 1.0, 128);
    float v;
    std::memcpy(&v, &b, 4);
    return double(v);
  };
  unsigned u;
  std::memcpy(&u, &f, 4);
  const unsigned lo = u >> 16, hi = lo + 1;  // hi: one step away from zero
  if (std::isinf(f) || (u & 0xffffu) == 0) return lo;
  const double dlo = std::fabs(double(f) - value(lo)), dhi = std::fabs(value(hi) - double(f));
  if (dlo != dhi) return dlo < dhi ? lo : hi;
  return (lo & 1u) == 0 ? lo : hi;
}

// The bf16 bits in `got` against `of` rounded (bf16_bits_by_value; a NaN must stay NaN).
long long bf16_mismatches(const std::vector<unsigned short>& got, const std::vector<float>& of) {
  long long wrong = 0;
  for (size_t i = 0; i < of.size(); ++i)
    wrong += std::isnan(of[i]) ? (got[i] & 0x7fffu) <= 0x7f80u
                               : got[i] != bf16_bits_by_value(of[i]);
  return wrong;
}

// f32 values as bf16 bits, nearest even (bf16_bits_by_value: what round_to_bf16 stores;
// finite or infinite values): the bf16 q, k, v of the attention64 checks and bench.
std::vector<unsigned short> bf16_bits_of(const std::vector<float>& x) {
  std::vector<unsigned short> r(x.size());
  for (size_t i = 0; i < x.size(); ++i) r[i] = (unsigned short)bf16_bits_by_value(x[i]);
  return r;
}

template <class T>
void test_cross_entropy(long long rows, long long classes, unsigned grad_grid, bool bad_label,
                        long long pitch = 0) {
  if (pitch == 0) pitch = classes;
  const std::string tag = std::string("cross_entropy ") + type_name<T>() + " [" +
                          std::to_string(rows) + "," + std::to_string(classes) + "]" +
                          (pitch != classes ? " pitch " + std::to_string(pitch) : "") +
                          (bad_label ? " label out of range" : "");
  const long long ignore = -100, n = rows * pitch;
  std::vector<T> z = random_vector<T>(n, -4, 4);
  for (long long r = 0; r < rows; ++r)
    for (long long c = classes; c < pitch; ++c) z[r * pitch + c] = std::numeric_limits<T>::quiet_NaN();
  std::vector<int> labels(rows);
  for (long long r = 0; r < rows; ++r) labels[r] = r % 5 == 3 ? int(ignore) : int((r * 7) % classes);
  if (bad_label) labels[rows / 2] = int(classes);
  const T dloss = T(0.75);
  DeviceArray<T> dz(z), dl(std::vector<T>{dloss}), out(1), grad(n), again(1);
  DeviceArray<int> dlab(labels);
  // The loss at codegen's grid (min(rows, 1024): one block per row, then the last
  // block's ordered sum), twice, and on one block (every row in order, from 0).
  const unsigned loss_grid = unsigned(std::min(rows, 1024LL));
  DeviceArray<T> single(1);
  Lab<T>::cross_entropy<<<loss_grid, 256>>>(dz.p, dlab.p, out.p, rows, classes, ignore, pitch);
  LAB_LAUNCHED();
  Lab<T>::cross_entropy<<<loss_grid, 256>>>(dz.p, dlab.p, again.p, rows, classes, ignore, pitch);
  LAB_LAUNCHED();
  Lab<T>::cross_entropy<<<1, 256>>>(dz.p, dlab.p, single.p, rows, classes, ignore, pitch);
  LAB_LAUNCHED();
  Lab<T>::cross_entropy_grad<<<grad_grid, 256>>>(dz.p, dlab.p, dl.p, grad.p, rows, classes,
                                                   ignore, pitch);
  LAB_LAUNCHED();
  // Long rows staged by one block of 1024 (Parts = 1), the rows through dynamic shared
  // memory where it fits, on fewer blocks than rows (each block stages its next row
  // while writing this one); and with none (the other long-row path). Codegen's
  // clusters of two blocks (Parts = 2) follow.
  DeviceArray<T> grad_shared(n), grad_unshared(n);
  const long long shared = vouch::long_row_shared_bytes(classes, sizeof(T));
  const bool staged = allow_dynamic_shared(Lab<T>::cross_entropy_grad_long, shared);
  if (staged) {
    Lab<T>::cross_entropy_grad_long<<<unsigned(std::min(rows, 3LL)), 1024, shared>>>(
        dz.p, dlab.p, dl.p, grad_shared.p, rows, classes, ignore, pitch);
    LAB_LAUNCHED();
  }
  Lab<T>::cross_entropy_grad_long<<<unsigned(std::min(rows, 3LL)), 1024>>>(
      dz.p, dlab.p, dl.p, grad_unshared.p, rows, classes, ignore, pitch);
  LAB_LAUNCHED();
  // By clusters of two blocks of 512, half a row each.
  DeviceArray<T> grad_pair(n);
  const long long half = vouch::long_row_part_bytes(classes, sizeof(T), 2);
  const bool paired = allow_dynamic_shared(Lab<T>::cross_entropy_grad_cluster, half);
  if (paired) {
    Lab<T>::cross_entropy_grad_cluster<<<unsigned(2 * std::min(rows, 3LL)), 512, half>>>(
        dz.p, dlab.p, dl.p, grad_pair.p, rows, classes, ignore, pitch);
    LAB_LAUNCHED();
  }
  // In place: the clusters where they stage, else the block of 256 per row.
  DeviceArray<T> in_place(z);
  if (paired) {
    Lab<T>::cross_entropy_grad_cluster<<<unsigned(2 * std::min(rows, 3LL)), 512, half>>>(
        in_place.p, dlab.p, dl.p, in_place.p, rows, classes, ignore, pitch);
  } else {
    Lab<T>::cross_entropy_grad<<<grad_grid, 256>>>(in_place.p, dlab.p, dl.p, in_place.p, rows,
                                                     classes, ignore, pitch);
  }
  LAB_LAUNCHED();
  // dlogits stored as bf16 (cross_entropy_grad's bf16 result, f32): bitwise the f32
  // kernel's values rounded, the pads 0, a NaN row NaN; by a block per row and by
  // codegen's clusters of two.
  if constexpr (sizeof(T) == 4) {
    DeviceArray<unsigned short> block16(n), pair16(n);
    lab_cross_entropy_grad_bf16_f32<<<grad_grid, 256>>>(dz.p, dlab.p, dl.p, block16.p, rows,
                                                         classes, ignore, pitch);
    LAB_LAUNCHED();
    report_bitwise(tag + ": dlogits stored as bf16 (a block per row) vs f32's rounded",
                   bf16_mismatches(block16.download(), grad.download()), n);
    if (paired && allow_dynamic_shared(lab_cross_entropy_grad_cluster_bf16_f32, half)) {
      lab_cross_entropy_grad_cluster_bf16_f32<<<unsigned(2 * std::min(rows, 3LL)), 512, half>>>(
          dz.p, dlab.p, dl.p, pair16.p, rows, classes, ignore, pitch);
      LAB_LAUNCHED();
      report_bitwise(tag + ": dlogits stored as bf16 (clusters of 2) vs f32's rounded",
                     bf16_mismatches(pair16.download(), grad_pair.download()), n);
    }
  }
  long long kept = 0;
  for (int l : labels) kept += l != ignore;
  double loss = 0;
  std::vector<double> want(n, 0.0);
  for (long long r = 0; r < rows; ++r) {
    const T* zr = z.data() + r * pitch;
    double* wr = want.data() + r * pitch;
    if (labels[r] == ignore) continue;
    if (labels[r] < 0 || labels[r] >= classes) {
      loss = NAN;
      for (long long c = 0; c < classes; ++c) wr[c] = NAN;
      continue;
    }
    double m = -INFINITY, s = 0;
    for (long long c = 0; c < classes; ++c) m = std::max(m, double(zr[c]));
    for (long long c = 0; c < classes; ++c) s += std::exp(double(zr[c]) - m);
    loss += std::log(s) + m - double(zr[labels[r]]);
    for (long long c = 0; c < classes; ++c)
      wr[c] = double(dloss) * (std::exp(double(zr[c]) - m) / s - (c == labels[r] ? 1.0 : 0.0)) /
              double(kept);
  }
  loss /= double(kept);
  const double eps = std::numeric_limits<T>::epsilon();
  const std::vector<T> got = out.download();
  struct Written {
    const char* what;
    const DeviceArray<T>* grad;
    bool ran;
  };
  const Written written[] = {{"", &grad, true},
                             {" staged in shared memory", &grad_shared, staged},
                             {", 1024 threads unstaged,", &grad_unshared, true},
                             {" staged by a cluster of 2", &grad_pair, paired},
                             {" in place", &in_place, true}};
  if (bad_label) {
    report(tag + ": loss is NaN", std::isnan(double(got[0])) ? 0 : 1, 0);
    report(tag + ": loss is NaN (one block)", std::isnan(double(single.download()[0])) ? 0 : 1,
           0);
    for (const Written& w : written) {
      if (!w.ran) continue;
      const std::vector<T> g = w.grad->download();
      long long not_nan = 0;
      for (long long c = 0; c < classes; ++c) not_nan += !std::isnan(double(g[rows / 2 * pitch + c]));
      report(tag + ": dlogits" + w.what + " row is NaN (elements that are not)",
             double(not_nan), 0);
    }
    return;
  }
  const double loss_tol = 64 * eps * std::log2(double(classes) + 1);
  report(tag + ": loss vs float64 (relative)",
         std::fabs(double(got[0]) - loss) / std::max(1.0, std::fabs(loss)), loss_tol);
  report(tag + ": loss on one block vs float64 (relative)",
         std::fabs(double(single.download()[0]) - loss) / std::max(1.0, std::fabs(loss)),
         loss_tol);
  // (max_abs_err is NaN where an element is: an unwritten pad or a pad read.)
  for (const Written& w : written)
    if (w.ran)
      report(tag + ": dlogits" + w.what + " vs float64", max_abs_err(w.grad->download(), want),
             16 * eps / double(kept) + 16 * eps);
  report_bitwise(tag + ": loss run twice", bit_mismatches(again.download(), got), 1);
}

template <class T>
void test_column_sum(long long rows, long long cols, bool mean) {
  const std::string tag = std::string(mean ? "column_mean " : "column_sum ") + type_name<T>() +
                          " [" + std::to_string(rows) + "," + std::to_string(cols) + "]";
  const std::vector<T> x = random_vector<T>(rows * cols);
  const long long divisor = mean ? rows : 1;
  // reduce.cuh's launch rule: ceil(cols / 32) column blocks times the row slabs.
  const long long col_blocks = (cols + 31) / 32, slabs = vouch::column_sum_slabs(rows, cols);
  DeviceArray<T> din(x), dout(cols), dout2(cols), partials(slabs * cols);
  DeviceArray<unsigned> arrivals(col_blocks);
  LAB_CHECK(cudaMemset(arrivals.p, 0, sizeof(unsigned) * col_blocks));  // zero_init
  T* const runs[] = {dout.p, dout2.p};
  for (T* out : runs) {  // the second launch checks the tickets' reset
    Lab<T>::column_sum<<<unsigned(col_blocks * slabs), dim3(32, 32)>>>(
        din.p, out, rows, cols, divisor, partials.p, arrivals.p);
    LAB_LAUNCHED();
  }
  const std::vector<T> got = dout.download();
  std::vector<double> want(cols, 0.0);
  std::vector<T> order(cols);
  const long long per_slab = (rows + slabs - 1) / slabs;
  for (long long c = 0; c < cols; ++c) {
    T total = T(0);
    for (long long s = 0; s < slabs; ++s) {  // each slab: 32 row phases, the tree
      std::vector<T> partial(32, T(0));
      for (long long r = s * per_slab; r < std::min(rows, (s + 1) * per_slab); ++r) {
        want[c] += double(x[r * cols + c]);
        partial[(r - s * per_slab) % 32] += x[r * cols + c];
      }
      total = slabs == 1 ? tree_sum(partial) : total + tree_sum(partial);
    }
    want[c] /= double(divisor);
    order[c] = divisor > 1 ? total / T(divisor) : total;
  }
  report(tag + " slabs=" + std::to_string(slabs), max_abs_err(got, want),
         eps<T>() * rows / double(divisor) * 2 + eps<T>());
  report_bitwise(tag + " order", bit_mismatches(got, order), cols);
  report_bitwise(tag + " relaunch", bit_mismatches(dout2.download(), got), cols);
}

template <class T>
void test_mse(long long n, long long grid) {
  const std::string tag = std::string("mse_loss ") + type_name<T>() + " n=" + std::to_string(n) +
                          " grid=" + std::to_string(grid);
  const std::vector<T> p = random_vector<T>(n), t = random_vector<T>(n);
  DeviceArray<T> dp(p), dt(t), dout(1);
  std::vector<T> got;
  for (int run = 0; run < 2; ++run) {  // the second launch checks the ticket's reset
    Lab<T>::mse<<<unsigned(grid), 256>>>(dp.p, dt.p, dout.p, n);
    LAB_LAUNCHED();
    std::vector<T> again = dout.download();
    if (run == 1) report_bitwise(tag + " relaunch", bit_mismatches(again, got), 1);
    got = again;
  }
  double want = 0;
  // The order: block b's thread j adds i = b*256 + j + k*grid*256 ascending (one fma
  // each: nvcc contracts `sum += d * d`, contract=implementation-defined in the
  // capsules' numeric policy), the block tree, a double slot; the last block's thread
  // j adds slots j, j + 256, ... (plain adds), then the tree.
  std::vector<std::vector<T>> partial(size_t(grid), std::vector<T>(256, T(0)));
  for (long long i = 0; i < n; ++i) {
    const double d = double(p[i]) - double(t[i]);
    want += d * d;
    const T dt_ = p[i] - t[i];
    const long long lane = i % (grid * 256);
    T& acc = partial[size_t(lane / 256)][size_t(lane % 256)];
    acc = std::fma(dt_, dt_, acc);
  }
  want /= double(n);
  std::vector<T> last(256, T(0));
  for (long long b = 0; b < grid; ++b) last[size_t(b % 256)] += T(double(tree_sum(partial[size_t(b)])));
  report(tag, max_abs_err(got, std::vector<double>{want}), 8 * eps<T>() * (1 + n / 256.0));
  std::vector<T> order{tree_sum(last) / T(n)};
  report_bitwise(tag + " order", bit_mismatches(got, order), 1);
}

// ---------------------------------------------------------------------- normalizations

// The launch rule of softmax.cuh and layernorm.cuh: one block per row, grid-stride.
unsigned row_grid(long long rows) { return unsigned(std::max(1LL, std::min(rows, 4096LL))); }

// Tolerance of a row statistic over n elements in T: each thread folds n / 256 terms,
// the tree adds 8 levels; `scale` bounds the magnitudes involved.
template <class T>
double row_tolerance(long long n, double scale) {
  return 64 * eps<T>() * (8 + n / 256.0) * (1 + scale);
}

// softmax_kernel (take_log: log_softmax) and softmax_grad_kernel on rows (outer, n,
// inner) against double references written here (softmax as exp(x - max) / sum, its
// VJPs as y (g - sum g y) and g - exp(y) sum g); both kernels run twice and must give
// the same bits (no atomics).
template <class T>
void test_softmax(long long outer, long long n, long long inner, bool take_log) {
  const std::string tag = std::string(take_log ? "log_softmax " : "softmax ") +
                          type_name<T>() + " outer=" + std::to_string(outer) +
                          " n=" + std::to_string(n) + " inner=" + std::to_string(inner);
  const long long total = outer * n * inner, rows = outer * inner;
  const std::vector<T> x = random_vector<T>(total, -3, 3), g = random_vector<T>(total);
  std::vector<double> y(total), dx(total);
  std::vector<T> yt(total);
  double grad_scale = 0;
  for (long long o = 0; o < outer; ++o)
    for (long long i = 0; i < inner; ++i) {
      auto at = [&](long long k) { return (o * n + k) * inner + i; };
      double m = -INFINITY, sum = 0, s = 0, terms = 0;
      for (long long k = 0; k < n; ++k) m = std::max(m, double(x[at(k)]));
      for (long long k = 0; k < n; ++k) sum += std::exp(double(x[at(k)]) - m);
      for (long long k = 0; k < n; ++k) {
        y[at(k)] = take_log ? double(x[at(k)]) - m - std::log(sum)
                            : std::exp(double(x[at(k)]) - m) / sum;
        yt[at(k)] = T(y[at(k)]);
      }
      // The VJP is checked on the rounded forward result, as the kernel reads it.
      for (long long k = 0; k < n; ++k) {
        const double term = take_log ? double(g[at(k)]) : double(g[at(k)]) * double(yt[at(k)]);
        s += term;
        terms += std::fabs(term);
      }
      for (long long k = 0; k < n; ++k)
        dx[at(k)] = take_log ? double(g[at(k)]) - std::exp(double(yt[at(k)])) * s
                             : double(yt[at(k)]) * (double(g[at(k)]) - s);
      grad_scale = std::max(grad_scale, terms);
    }
  DeviceArray<T> dxin(x), dg(g), dyt(yt), dout(total), dout2(total), dgrad(total),
      dgrad2(total);
  T* const forward_runs[] = {dout.p, dout2.p};
  for (T* out : forward_runs) {
    Lab<T>::softmax<<<row_grid(rows), 256>>>(dxin.p, out, outer, n, inner, take_log ? 1 : 0);
    LAB_LAUNCHED();
  }
  T* const grad_runs[] = {dgrad.p, dgrad2.p};
  for (T* out : grad_runs) {
    Lab<T>::softmax_grad<<<row_grid(rows), 256>>>(dg.p, dyt.p, out, outer, n, inner,
                                                   take_log ? 1 : 0);
    LAB_LAUNCHED();
  }
  const std::vector<T> got = dout.download(), grad = dgrad.download();
  report(tag, max_abs_err(got, y), row_tolerance<T>(n, take_log ? std::log(double(n)) + 6 : 1));
  if (inner == 1 && n > 4096) {
    // Long rows staged in dynamic shared memory, on fewer blocks than rows (a block
    // stages its next row while it writes this one), twice; and with no shared memory
    // (the other long-row path at the same block size). By one block of 1024 holding
    // the row (Parts = 1), then by codegen's clusters of two blocks of 512, half a row
    // each (Parts = 2).
    const unsigned rows_in_flight = unsigned(std::max(1LL, std::min(rows, 2LL)));
    const double tolerance = row_tolerance<T>(n, take_log ? std::log(double(n)) + 6 : 1);
    auto staged_runs = [&](auto kernel, const std::string& how, unsigned grid,
                           unsigned threads, long long bytes) {
      DeviceArray<T> staged(total), staged2(total), unstaged(total);
      if (allow_dynamic_shared(kernel, bytes)) {
        T* const runs[] = {staged.p, staged2.p};
        for (T* out : runs) {
          kernel<<<grid, threads, bytes>>>(dxin.p, out, outer, n, take_log ? 1 : 0);
          LAB_LAUNCHED();
        }
        const std::vector<T> s1 = staged.download();
        report(tag + " staged by " + how, max_abs_err(s1, y), tolerance);
        report_bitwise(tag + " staged by " + how + " repeat",
                       bit_mismatches(s1, staged2.download()), total);
      }
      kernel<<<grid, threads>>>(dxin.p, unstaged.p, outer, n, take_log ? 1 : 0);
      LAB_LAUNCHED();
      report(tag + " " + how + "'s kernel unstaged", max_abs_err(unstaged.download(), y),
             tolerance);
    };
    staged_runs(Lab<T>::softmax_long, "one block", rows_in_flight, 1024,
                vouch::long_row_shared_bytes(n, sizeof(T)));
    staged_runs(Lab<T>::softmax_cluster, "a cluster of 2", 2 * rows_in_flight, 512,
                vouch::long_row_part_bytes(n, sizeof(T), 2));
  }
  report_bitwise(tag + " repeat", bit_mismatches(got, dout2.download()), total);
  report(tag + " grad", max_abs_err(grad, dx), row_tolerance<T>(n, grad_scale));
  report_bitwise(tag + " grad repeat", bit_mismatches(grad, dgrad2.download()), total);
}

// masked_softmax_kernel on [outer, n, inner] along the middle axis with a random mask
// (kept with probability 1/2) of shape [outer or 1, n, inner], broadcast over the first
// axis when `broadcast`; the first row of every 7 is fully blocked. Against a double
// reference written here (softmax over the kept elements, 0 elsewhere); blocked elements
// and fully blocked rows must be exact zeros; two runs give the same bits. The VJP is
// softmax_grad_kernel (checked by test_softmax) on this result.
template <class T>
void test_masked_softmax(long long outer, long long n, long long inner, bool broadcast) {
  const std::string tag = std::string("masked_softmax ") + type_name<T>() +
                          " outer=" + std::to_string(outer) + " n=" + std::to_string(n) +
                          " inner=" + std::to_string(inner) +
                          (broadcast ? " mask broadcast over axis 0" : "");
  const long long total = outer * n * inner, rows = outer * inner;
  const long long mouter = broadcast ? 1 : outer;
  const std::vector<T> x = random_vector<T>(total, -3, 3);
  const std::vector<T> coin = random_vector<T>(mouter * n * inner);
  std::vector<int> mask(coin.size());
  for (size_t e = 0; e < mask.size(); ++e) mask[e] = coin[e] > 0 ? 1 : 0;
  for (long long o = 0; o < mouter; ++o)
    for (long long i = 0; i < inner; ++i)
      if ((o * inner + i) % 7 == 0)
        for (long long k = 0; k < n; ++k) mask[(o * n + k) * inner + i] = 0;
  auto kept = [&](long long o, long long k, long long i) {
    return mask[((broadcast ? 0 : o) * n + k) * inner + i] != 0;
  };
  std::vector<double> y(total, 0.0);
  long long blocked = 0;
  for (long long o = 0; o < outer; ++o)
    for (long long i = 0; i < inner; ++i) {
      auto at = [&](long long k) { return (o * n + k) * inner + i; };
      double m = -INFINITY, sum = 0;
      for (long long k = 0; k < n; ++k)
        if (kept(o, k, i)) m = std::max(m, double(x[at(k)]));
      for (long long k = 0; k < n; ++k)
        if (kept(o, k, i)) sum += std::exp(double(x[at(k)]) - m);
      for (long long k = 0; k < n; ++k) {
        if (kept(o, k, i)) y[at(k)] = std::exp(double(x[at(k)]) - m) / sum;
        else blocked++;
      }
    }
  DeviceArray<T> din(x), dout(total), dout2(total);
  DeviceArray<int> dmask(mask);
  const vouch::Dims dims =
      make_dims({outer, n, inner}, {broadcast ? 0 : n * inner, inner, 1});
  T* const runs[] = {dout.p, dout2.p};
  for (T* out : runs) {
    Lab<T>::masked_softmax<<<row_grid(rows), 256>>>(din.p, dmask.p, dims, out, outer, n,
                                                     inner);
    LAB_LAUNCHED();
  }
  const std::vector<T> got = dout.download();
  long long nonzero_blocked = 0;
  for (long long o = 0; o < outer; ++o)
    for (long long k = 0; k < n; ++k)
      for (long long i = 0; i < inner; ++i)
        if (!kept(o, k, i) && got[(o * n + k) * inner + i] != T(0)) nonzero_blocked++;
  report(tag, max_abs_err(got, y), row_tolerance<T>(n, 1));
  report_bitwise(tag + " blocked elements exact zeros", nonzero_blocked, blocked);
  report_bitwise(tag + " repeat", bit_mismatches(got, dout2.download()), total);
  if (inner == 1 && n > 4096) {
    // Codegen's launch of long rows: staged in shared memory by clusters of two blocks
    // of 512, fewer clusters than rows (the row 0 of every 7 fully blocked).
    const long long half = vouch::long_row_part_bytes(n, sizeof(T), 2);
    if (allow_dynamic_shared(Lab<T>::masked_softmax_cluster, half)) {
      DeviceArray<T> staged(total);
      Lab<T>::masked_softmax_cluster<<<unsigned(2 * std::min(rows, 2LL)), 512, half>>>(
          din.p, dmask.p, dims, staged.p, outer, n);
      LAB_LAUNCHED();
      const std::vector<T> s1 = staged.download();
      long long staged_nonzero = 0;
      for (long long o = 0; o < outer; ++o)
        for (long long k = 0; k < n; ++k)
          if (!kept(o, k, 0) && s1[o * n + k] != T(0)) staged_nonzero++;
      report(tag + " staged by a cluster of 2", max_abs_err(s1, y), row_tolerance<T>(n, 1));
      report_bitwise(tag + " staged: blocked elements exact zeros", staged_nonzero, blocked);
    }
  }
}

// cast.cuh: real -> int32 on random values in [-3e9, 3e9] (beyond int32 both ways) plus
// NaN, ±0.5, ±2.5 and the limits, against the rule written here (truncation toward zero,
// NaN 0, saturation); int32 -> real exact. Bit-exact.
template <class T>
void test_cast(long long n) {
  std::vector<T> x = random_vector<T>(n, -3e9, 3e9);
  const T special[] = {std::numeric_limits<T>::quiet_NaN(), T(0.5), T(-0.5), T(2.5), T(-2.5),
                       T(2147483647.0), T(-2147483648.0), T(-0.0)};
  for (size_t k = 0; k < sizeof special / sizeof special[0] && k < x.size(); ++k)
    x[k] = special[k];
  for (long long i = 8; i < n; i += 3) x[i] = x[i] * T(1e-6);  // in range, fractional
  std::vector<int> want(n);
  for (long long i = 0; i < n; ++i) {
    const double v = double(x[i]);
    want[i] = std::isnan(v) ? 0 : v >= 2147483647.0 ? 2147483647
            : v <= -2147483648.0 ? std::numeric_limits<int>::min() : int(std::trunc(v));
  }
  DeviceArray<T> din(x);
  DeviceArray<int> dout(std::vector<int>(n, 12345));
  Lab<T>::cast_to_int<<<elementwise_grid(n), 256>>>(din.p, dout.p, n);
  LAB_LAUNCHED();
  const std::vector<int> got = dout.download();
  long long wrong = 0;
  for (long long i = 0; i < n; ++i) wrong += got[i] != want[i];
  report_bitwise(std::string("cast ") + type_name<T>() + " -> i32 n=" + std::to_string(n),
                 wrong, n);
  DeviceArray<int> dint(want);
  DeviceArray<T> dreal(n);
  Lab<T>::cast_from_int<<<elementwise_grid(n), 256>>>(dint.p, dreal.p, n);
  LAB_LAUNCHED();
  const std::vector<T> back = dreal.download();
  wrong = 0;
  for (long long i = 0; i < n; ++i) wrong += back[i] != T(want[i]);
  report_bitwise(std::string("cast i32 -> ") + type_name<T>() + " n=" + std::to_string(n),
                 wrong, n);
}

// A NaN makes its own row NaN and leaves the others alone.
// A row whose first 600 of 1000 logits are -inf (masking by -inf, as attention
// does): the one-pass statistics must skip them, not turn NaN where a thread meets
// -inf before any finite logit. softmax: exact zeros there; log_softmax: -inf.
template <class T>
void test_softmax_neg_inf(bool take_log) {
  const std::string tag = std::string(take_log ? "log_softmax " : "softmax ") +
                          type_name<T>() + " 600 of 1000 logits -inf";
  const long long n = 1000, masked = 600;
  std::vector<T> x = random_vector<T>(n, -3, 3);
  for (long long k = 0; k < masked; ++k) x[k] = -std::numeric_limits<T>::infinity();
  double m = -INFINITY, sum = 0;
  for (long long k = masked; k < n; ++k) m = std::max(m, double(x[k]));
  for (long long k = masked; k < n; ++k) sum += std::exp(double(x[k]) - m);
  DeviceArray<T> din(x), dout(n);
  Lab<T>::softmax<<<1, 256>>>(din.p, dout.p, 1, n, 1, take_log ? 1 : 0);
  LAB_LAUNCHED();
  const std::vector<T> got = dout.download();
  long long wrong_masked = 0;
  double err = 0;
  for (long long k = 0; k < n; ++k) {
    if (k < masked) {
      wrong_masked += take_log ? !(std::isinf(double(got[k])) && got[k] < 0) : got[k] != T(0);
      continue;
    }
    const double want = take_log ? double(x[k]) - m - std::log(sum)
                                 : std::exp(double(x[k]) - m) / sum;
    const double d = std::fabs(double(got[k]) - want);
    err = std::isnan(d) ? NAN : std::max(err, d);
  }
  report(tag + ": the -inf entries (wrong)", double(wrong_masked), 0);
  report(tag + ": the others", err, row_tolerance<T>(n, 8));
}

template <class T>
void test_softmax_nan() {
  std::vector<T> x = {T(1), std::numeric_limits<T>::quiet_NaN(), T(0), T(2), T(-1), T(0.5)};
  DeviceArray<T> din(x), dout(6);
  Lab<T>::softmax<<<2, 256>>>(din.p, dout.p, 2, 3, 1, 0);
  LAB_LAUNCHED();
  const std::vector<T> got = dout.download();
  const double sum = std::exp(2.0 - 2) + std::exp(-1.0 - 2) + std::exp(0.5 - 2);
  const std::vector<double> want = {std::exp(2.0 - 2) / sum, std::exp(-1.0 - 2) / sum,
                                    std::exp(0.5 - 2) / sum};
  bool nan_row = std::isnan(double(got[0])) && std::isnan(double(got[1])) &&
                 std::isnan(double(got[2]));
  report(std::string("softmax ") + type_name<T>() + " NaN row (the other row)",
         max_abs_err(std::vector<T>(got.begin() + 3, got.end()), want), 8 * eps<T>());
  report(std::string("softmax ") + type_name<T>() + " NaN row is NaN", nan_row ? 0 : 1, 0);
}

// layer_norm_kernel and layer_norm_grad_kernel over rows of d (weight and bias present
// or null) against double references written here: mean and biased variance, then
// dx = rstd (g - mean(g) - xhat mean(g xhat)), g = grad weight, dweight = Σ_rows g_in
// xhat, dbias = Σ_rows g_in (computed in the one backward launch where the op has
// weight / bias); run twice, same bits. The backward's second launch gets fresh
// (poisoned) outputs and partials and the counter the first left: a counter not reset
// in the kernel would leave dweight / dbias unwritten (NaN) or wrong.
template <class T>
void test_layer_norm(long long rows, long long d, bool weight, bool bias) {
  const std::string tag = std::string("layer_norm ") + type_name<T>() + " rows=" +
                          std::to_string(rows) + " d=" + std::to_string(d) +
                          (weight ? " weight" : "") + (bias ? " bias" : "");
  const double eps_ln = 1e-5;
  const std::vector<T> x = random_vector<T>(rows * d, -2, 3), g = random_vector<T>(rows * d),
                       w = random_vector<T>(d, 0.5, 1.5), b = random_vector<T>(d);
  std::vector<double> y(rows * d), dx(rows * d), dwant_w(d, 0), dwant_b(d, 0), wscale(d, 0),
      bscale(d, 0);
  double y_scale = 0, dx_scale = 0;
  for (long long r = 0; r < rows; ++r) {
    double mean = 0, var = 0, mg = 0, mgx = 0;
    for (long long k = 0; k < d; ++k) mean += double(x[r * d + k]) / d;
    for (long long k = 0; k < d; ++k) var += (x[r * d + k] - mean) * (x[r * d + k] - mean) / d;
    const double rstd = 1 / std::sqrt(var + eps_ln);
    for (long long k = 0; k < d; ++k) {
      const double xhat = (x[r * d + k] - mean) * rstd, gk = g[r * d + k] * (weight ? double(w[k]) : 1);
      y[r * d + k] = xhat * (weight ? double(w[k]) : 1) + (bias ? double(b[k]) : 0);
      mg += gk / d;
      mgx += gk * xhat / d;
      y_scale = std::max(y_scale, std::fabs(y[r * d + k]));
      dwant_w[k] += double(g[r * d + k]) * xhat;
      dwant_b[k] += double(g[r * d + k]);
      wscale[k] += std::fabs(double(g[r * d + k]) * xhat);
      bscale[k] += std::fabs(double(g[r * d + k]));
    }
    for (long long k = 0; k < d; ++k) {
      const double xhat = (x[r * d + k] - mean) * rstd, gk = g[r * d + k] * (weight ? double(w[k]) : 1);
      dx[r * d + k] = rstd * (gk - mg - xhat * mgx);
      dx_scale = std::max(dx_scale, rstd * (std::fabs(gk) + std::fabs(mg) + std::fabs(xhat * mgx)));
    }
  }
  DeviceArray<T> dxin(x), dg(g), dw(w), db(b), dy(rows * d), dy2(rows * d);
  T* const forward_runs[] = {dy.p, dy2.p};
  for (T* out : forward_runs) {
    Lab<T>::layer_norm<<<row_grid(rows), 256>>>(dxin.p, weight ? dw.p : nullptr,
                                                bias ? db.p : nullptr, nullptr, out, nullptr,
                                                rows, d, eps_ln);
    LAB_LAUNCHED();
  }
  const std::vector<T> got = dy.download();
  report(tag, max_abs_err(got, y), row_tolerance<T>(d, y_scale));
  report_bitwise(tag + " repeat", bit_mismatches(got, dy2.download()), rows * d);
  {
    // The addend (vouch-fold-layer-norm-add): the sum written must be bitwise T(x + a),
    // and y bitwise the plain launch's on that sum (the separate add and layer_norm).
    const std::vector<T> a = random_vector<T>(rows * d, -4, 4);
    std::vector<T> added(rows * d);
    for (long long i = 0; i < rows * d; ++i) added[i] = T(x[i] + a[i]);
    DeviceArray<T> da(a), dadded(added), plain(rows * d), fused(rows * d), sum(rows * d);
    Lab<T>::layer_norm<<<row_grid(rows), 256>>>(dadded.p, weight ? dw.p : nullptr,
                                                bias ? db.p : nullptr, nullptr, plain.p,
                                                nullptr, rows, d, eps_ln);
    LAB_LAUNCHED();
    Lab<T>::layer_norm<<<row_grid(rows), 256>>>(dxin.p, weight ? dw.p : nullptr,
                                                bias ? db.p : nullptr, da.p, fused.p, sum.p,
                                                rows, d, eps_ln);
    LAB_LAUNCHED();
    report_bitwise(tag + " plus addend: sum = x + addend", bit_mismatches(sum.download(), added),
                   rows * d);
    report_bitwise(tag + " plus addend: y = layer_norm(sum)",
                   bit_mismatches(fused.download(), plain.download()), rows * d);
    // y stored as bf16 (the op's bf16Result, f32 only), with and without the addend:
    // bitwise the f32 kernel's y rounded to nearest even, and the same sum.
    if constexpr (sizeof(T) == 4) {
      DeviceArray<unsigned short> y16(rows * d), fused16(rows * d);
      DeviceArray<T> sum16(rows * d);
      lab_layer_norm_bf16_f32<<<row_grid(rows), 256>>>(dxin.p, weight ? dw.p : nullptr,
                                                       bias ? db.p : nullptr, nullptr, y16.p,
                                                       nullptr, rows, d, eps_ln);
      LAB_LAUNCHED();
      lab_layer_norm_bf16_f32<<<row_grid(rows), 256>>>(dxin.p, weight ? dw.p : nullptr,
                                                       bias ? db.p : nullptr, da.p, fused16.p,
                                                       sum16.p, rows, d, eps_ln);
      LAB_LAUNCHED();
      report_bitwise(tag + ": y stored as bf16 vs f32's rounded",
                     bf16_mismatches(y16.download(), got), rows * d);
      report_bitwise(tag + " plus addend: y stored as bf16 vs f32's rounded",
                     bf16_mismatches(fused16.download(), fused.download()), rows * d);
      report_bitwise(tag + " plus addend, y stored as bf16: sum = x + addend",
                     bit_mismatches(sum16.download(), added), rows * d);
    }
  }

  // The backward, with layernorm.cuh's launch rule and scratch sizes.
  const long long grid = vouch::layer_norm_grad_grid(rows);
  const long long groups = vouch::layer_norm_grad_groups(grid);
  const bool params = weight || bias;
  DeviceArray<unsigned> arrivals(groups + 1);
  LAB_CHECK(cudaMemset(arrivals.p, 0, sizeof(unsigned) * (groups + 1)));  // zero_init
  std::vector<T> grads[2], dweights[2], dbiases[2];
  for (int run = 0; run < 2; ++run) {
    DeviceArray<T> ddx(rows * d), ddw(d), ddb(d),
        partials(params ? (grid + groups) * 2 * d : 1);
    Lab<T>::layer_norm_grad<<<unsigned(grid), 256>>>(
        dg.p, dxin.p, weight ? dw.p : nullptr, nullptr, ddx.p, weight ? ddw.p : nullptr,
        bias ? ddb.p : nullptr, rows, d, eps_ln, params ? partials.p : nullptr,
        params ? arrivals.p : nullptr);
    LAB_LAUNCHED();
    grads[run] = ddx.download();
    dweights[run] = ddw.download();
    dbiases[run] = ddb.download();
  }
  report(tag + " grad", max_abs_err(grads[0], dx), row_tolerance<T>(d, dx_scale));
  report_bitwise(tag + " grad repeat", bit_mismatches(grads[0], grads[1]), rows * d);
  // The SharedSums launch codegen makes: its dynamic shared memory, where the row fits
  // the register path and the device allows it.
  const int group = vouch::row_group_for(d);
  const long long shared =
      group == 0 ? 0 : vouch::layer_norm_grad_shared_bytes(d, group, sizeof(T));
  const bool fits = shared > 0 && allow_dynamic_shared(Lab<T>::layer_norm_grad_shared, shared);
  {
    // The column sums in dynamic shared memory (SharedSums, as codegen launches the
    // register path): the same adds in the same order, so the same bits; without the
    // shared memory, the general path (checked against the reference).
    // (Rows longer than the register path: the general path either way.)
    for (int given = fits ? 1 : 0; given >= 0; --given) {
      DeviceArray<T> sdx(rows * d), sdw(d), sdb(d), sp(params ? (grid + groups) * 2 * d : 1);
      Lab<T>::layer_norm_grad_shared<<<unsigned(grid), 256, given ? shared : 0>>>(
          dg.p, dxin.p, weight ? dw.p : nullptr, nullptr, sdx.p, weight ? sdw.p : nullptr,
          bias ? sdb.p : nullptr, rows, d, eps_ln, params ? sp.p : nullptr,
          params ? arrivals.p : nullptr);
      LAB_LAUNCHED();
      const std::vector<T> got_dx = sdx.download();
      const std::string how = given ? " shared sums" : " shared sums, none given";
      if (given) {
        report_bitwise(tag + how + " dx", bit_mismatches(got_dx, grads[0]), rows * d);
        if (weight) report_bitwise(tag + how + " dweight", bit_mismatches(sdw.download(), dweights[0]), d);
        if (bias) report_bitwise(tag + how + " dbias", bit_mismatches(sdb.download(), dbiases[0]), d);
      } else {
        report(tag + how + " grad", max_abs_err(got_dx, dx), row_tolerance<T>(d, dx_scale));
      }
    }
  }
  {
    // The addend (vouch-fold-layer-norm-grad-sum): dx + addend must be bitwise the
    // separate add of the addend and the dx above, T(a + dx) with dx rounded first,
    // on the launch codegen makes (the register path where the row fits, its column
    // sums in shared memory where given) and the plain one; dweight and dbias as
    // without it.
    const std::vector<T> a = random_vector<T>(rows * d, -4, 4);
    std::vector<T> want(rows * d);
    for (long long i = 0; i < rows * d; ++i) want[i] = T(a[i] + grads[0][i]);
    DeviceArray<T> da(a);
    for (int how = 0; how < (fits ? 2 : 1); ++how) {
      DeviceArray<T> adx(rows * d), adw(d), adb(d), ap(params ? (grid + groups) * 2 * d : 1);
      if (how == 0)
        Lab<T>::layer_norm_grad<<<unsigned(grid), 256>>>(
            dg.p, dxin.p, weight ? dw.p : nullptr, da.p, adx.p, weight ? adw.p : nullptr,
            bias ? adb.p : nullptr, rows, d, eps_ln, params ? ap.p : nullptr,
            params ? arrivals.p : nullptr);
      else
        Lab<T>::layer_norm_grad_shared<<<unsigned(grid), 256, shared>>>(
            dg.p, dxin.p, weight ? dw.p : nullptr, da.p, adx.p, weight ? adw.p : nullptr,
            bias ? adb.p : nullptr, rows, d, eps_ln, params ? ap.p : nullptr,
            params ? arrivals.p : nullptr);
      LAB_LAUNCHED();
      const std::string what = tag + (how == 0 ? " plus addend" : " plus addend, shared sums");
      report_bitwise(what + " dx = addend + dx", bit_mismatches(adx.download(), want), rows * d);
      if (weight) report_bitwise(what + " dweight", bit_mismatches(adw.download(), dweights[0]), d);
      if (bias) report_bitwise(what + " dbias", bit_mismatches(adb.download(), dbiases[0]), d);
    }
  }
  if constexpr (sizeof(T) == sizeof(float)) {
    // dx's bf16 twin (the op's bf16Twin, f32 only) on the plain launch and codegen's
    // (SharedSums where the row fits), with and without the addend: dx, dweight and
    // dbias bitwise as without the twin, the twin bitwise dx rounded to nearest even.
    const std::vector<T> a = random_vector<T>(rows * d, -4, 4);
    std::vector<T> plus(rows * d);
    for (long long i = 0; i < rows * d; ++i) plus[i] = T(a[i] + grads[0][i]);
    DeviceArray<T> da(a);
    const bool twin_fits = fits && allow_dynamic_shared(lab_layer_norm_grad_shared_twin_f32, shared);
    for (int how = 0; how < (twin_fits ? 2 : 1); ++how)
      for (int with_addend = 0; with_addend < 2; ++with_addend) {
        DeviceArray<T> tdx(rows * d), tdw(d), tdb(d), tp(params ? (grid + groups) * 2 * d : 1);
        DeviceArray<unsigned short> twin(rows * d);
        const T* const addend = with_addend ? da.p : nullptr;
        if (how == 0)
          lab_layer_norm_grad_twin_f32<<<unsigned(grid), 256>>>(
              dg.p, dxin.p, weight ? dw.p : nullptr, addend, tdx.p, weight ? tdw.p : nullptr,
              bias ? tdb.p : nullptr, rows, d, eps_ln, params ? tp.p : nullptr,
              params ? arrivals.p : nullptr, twin.p);
        else
          lab_layer_norm_grad_shared_twin_f32<<<unsigned(grid), 256, shared>>>(
              dg.p, dxin.p, weight ? dw.p : nullptr, addend, tdx.p, weight ? tdw.p : nullptr,
              bias ? tdb.p : nullptr, rows, d, eps_ln, params ? tp.p : nullptr,
              params ? arrivals.p : nullptr, twin.p);
        LAB_LAUNCHED();
        const std::string what = tag + " bf16 twin" + (how ? ", shared sums" : "") +
                                 (with_addend ? ", plus addend" : "");
        const std::vector<T> got = tdx.download();
        report_bitwise(what + ": dx as without the twin",
                       bit_mismatches(got, with_addend ? plus : grads[0]), rows * d);
        report_bitwise(what + ": the twin vs dx rounded", bf16_mismatches(twin.download(), got),
                       rows * d);
        if (weight) report_bitwise(what + " dweight", bit_mismatches(tdw.download(), dweights[0]), d);
        if (bias) report_bitwise(what + " dbias", bit_mismatches(tdb.download(), dbiases[0]), d);
      }
  }
  // Column sums: a fold over a group's rows (at most every row of the block's
  // chunks), the block's 8 warps, the 16 blocks of a group, then the groups, over terms
  // whose xhat carries a row statistic's error.
  const double depth = 32 * double((rows + 32 * grid - 1) / (32 * grid)) + 8 + 16 +
                       double(groups);
  for (int which = 0; which < 2; ++which) {
    if (!(which == 0 ? weight : bias)) continue;
    const std::vector<T>* got_p = which == 0 ? dweights : dbiases;
    const std::vector<double>& want = which == 0 ? dwant_w : dwant_b;
    const std::vector<double>& scale = which == 0 ? wscale : bscale;
    double worst = 0;  // error over the column's own tolerance
    for (long long k = 0; k < d; ++k) {
      const double tol = (4 * depth * eps<T>() + row_tolerance<T>(d, 0)) * (1 + scale[k]);
      const double err = std::fabs(double(got_p[0][k]) - want[k]);
      worst = std::max(worst, err != err ? INFINITY : err / tol);
    }
    const std::string what = tag + (which == 0 ? " dweight" : " dbias");
    report(what + " (error / tolerance)", worst, 1);
    report_bitwise(what + " repeat", bit_mismatches(got_p[0], got_p[1]), d);
  }
  if (params) {
    std::vector<unsigned> left(groups + 1);
    LAB_CHECK(cudaMemcpy(left.data(), arrivals.p, sizeof(unsigned) * (groups + 1),
                         cudaMemcpyDeviceToHost));
    double unreset = 0;
    for (unsigned v : left) unreset += v;
    report(tag + " arrival counters reset", unreset, 0);
  }
}

// ------------------------------------------------------------------------ batch norm

// batch_norm_kernel and batch_norm_grad_kernel over x [n, channels, spatial] (weight and
// bias present or null), a block per channel or (`cluster`) 8 blocks per channel, as
// batchnorm.cuh documents, against double references written here: in a training step
// the batch's mean and biased variance, the running statistics updated with momentum
// (the variance unbiased); in evaluation the running statistics, left untouched; the
// backward's dx = w rstd (g - mean(g) - x̂ mean(g x̂)), dweight = Σ g x̂, dbias = Σ g.
// Every launch runs twice (the state reset between) and must give the same bits.
template <class T>
void test_batch_norm(long long n, long long channels, long long spatial, bool weight,
                     bool bias, bool cluster) {
  const std::string tag = std::string("batch_norm ") + type_name<T>() + " [" +
                          std::to_string(n) + ", " + std::to_string(channels) + ", " +
                          std::to_string(spatial) + "]" + (weight ? " weight" : "") +
                          (bias ? " bias" : "") + (cluster ? " cluster of 8" : "");
  const double eps_bn = 1e-5, momentum = 0.1;
  const long long total = n * channels * spatial, m = n * spatial;
  const std::vector<T> x = random_vector<T>(total, -2, 3), g = random_vector<T>(total),
                       w = random_vector<T>(channels, 0.5, 1.5), b = random_vector<T>(channels),
                       rm0 = random_vector<T>(channels), rv0 = random_vector<T>(channels, 0.5, 2);
  auto at = [&](long long i, long long c, long long k) { return (i * channels + c) * spatial + k; };
  // The references, per channel.
  std::vector<double> y(total), ye(total), dx(total), mean(channels), rstd(channels),
      rm(channels), rv(channels), dw(channels), db(channels), dwscale(channels, 0),
      dbscale(channels, 0);
  double y_scale = 0, dx_scale = 0;
  for (long long c = 0; c < channels; ++c) {
    double mu = 0, sq = 0;
    for (long long i = 0; i < n; ++i)
      for (long long k = 0; k < spatial; ++k) mu += double(x[at(i, c, k)]);
    mu /= double(m);
    for (long long i = 0; i < n; ++i)
      for (long long k = 0; k < spatial; ++k) sq += (x[at(i, c, k)] - mu) * (x[at(i, c, k)] - mu);
    mean[c] = mu;
    rstd[c] = 1 / std::sqrt(sq / double(m) + eps_bn);
    rm[c] = 0.9 * double(rm0[c]) + 0.1 * mu;
    rv[c] = 0.9 * double(rv0[c]) + 0.1 * sq / double(m - 1);
    const double wc = weight ? double(w[c]) : 1, bc = bias ? double(b[c]) : 0;
    const double re = 1 / std::sqrt(double(rv0[c]) + eps_bn);
    double sg = 0, sgx = 0;
    for (long long i = 0; i < n; ++i)
      for (long long k = 0; k < spatial; ++k) {
        const long long a = at(i, c, k);
        const double xhat = (x[a] - mu) * rstd[c];
        y[a] = xhat * wc + bc;
        ye[a] = (x[a] - double(rm0[c])) * re * wc + bc;
        y_scale = std::max({y_scale, std::fabs(y[a]), std::fabs(ye[a])});
        sg += double(g[a]);
        sgx += double(g[a]) * xhat;
        dwscale[c] += std::fabs(double(g[a]) * xhat);
        dbscale[c] += std::fabs(double(g[a]));
      }
    dw[c] = sgx;
    db[c] = sg;
    for (long long i = 0; i < n; ++i)
      for (long long k = 0; k < spatial; ++k) {
        const long long a = at(i, c, k);
        const double xhat = (x[a] - mu) * rstd[c];
        dx[a] = wc * rstd[c] * (double(g[a]) - sg / double(m) - xhat * sgx / double(m));
        dx_scale = std::max(dx_scale, std::fabs(wc) * rstd[c] *
                                          (std::fabs(double(g[a])) + std::fabs(sg / double(m)) +
                                           std::fabs(xhat * sgx / double(m))));
      }
  }
  // Statistics in double, stored in T: the rounding of T dominates (f64: the folds'
  // order, over m terms).
  const double unit = sizeof(T) == 4 ? 16 * eps<T>() : 64 * eps<T>() * (8 + m / 512.0);
  auto forward = Lab<T>::batch_norm;
  auto backward = Lab<T>::batch_norm_grad;
  if (cluster) {
    forward = Lab<T>::batch_norm_cluster;
    backward = Lab<T>::batch_norm_grad_cluster;
  }
  const int parts = cluster ? vouch::kBatchNormClusterParts : 1;
  const unsigned grid =
      unsigned(parts * std::min(channels, vouch::kBatchNormMaxChannelsInFlight));
  DeviceArray<T> dxin(x), dg(g), dwt(w), dbs(b);
  for (bool training : {true, false}) {
    DeviceArray<long long> ctx(std::vector<long long>{0, 0, training ? 1 : 0, 0});
    std::vector<T> ys[2], means[2], rstds[2], rms[2], rvs[2];
    for (int run = 0; run < 2; ++run) {
      DeviceArray<T> drm(rm0), drv(rv0), dy(total), dmean(channels), drstd(channels);
      forward<<<grid, vouch::kBatchNormThreads>>>(
          dxin.p, weight ? dwt.p : nullptr, bias ? dbs.p : nullptr, drm.p, drv.p, dy.p, dmean.p,
          drstd.p, n, channels, spatial, eps_bn, momentum, ctx.p);
      LAB_LAUNCHED();
      ys[run] = dy.download();
      means[run] = dmean.download();
      rstds[run] = drstd.download();
      rms[run] = drm.download();
      rvs[run] = drv.download();
    }
    const std::string how = tag + (training ? " training" : " evaluation");
    report(how, max_abs_err(ys[0], training ? y : ye), unit * (1 + y_scale));
    report_bitwise(how + " repeat", bit_mismatches(ys[0], ys[1]), total);
    report_bitwise(how + " repeat statistics",
                   bit_mismatches(means[0], means[1]) + bit_mismatches(rstds[0], rstds[1]) +
                       bit_mismatches(rms[0], rms[1]) + bit_mismatches(rvs[0], rvs[1]),
                   4 * channels);
    if (training) {
      report(how + " mean", max_abs_err(means[0], mean), unit * 4);
      report(how + " rstd", max_abs_err(rstds[0], rstd), unit * 4 * (1 + 1 / std::sqrt(eps_bn)));
      report(how + " running_mean", max_abs_err(rms[0], rm), unit * 4);
      report(how + " running_var (unbiased)", max_abs_err(rvs[0], rv), unit * 16);
    } else {
      report_bitwise(how + " running statistics untouched",
                     bit_mismatches(rms[0], rm0) + bit_mismatches(rvs[0], rv0), 2 * channels);
      report_bitwise(how + " mean is the running mean", bit_mismatches(means[0], rm0), channels);
    }
  }

  // The backward from the training forward's statistics, as the VJP reads them.
  std::vector<T> mean_t(channels), rstd_t(channels);
  for (long long c = 0; c < channels; ++c) {
    mean_t[c] = T(mean[c]);
    rstd_t[c] = T(rstd[c]);
  }
  DeviceArray<T> dmean(mean_t), drstd(rstd_t);
  std::vector<T> dxs[2], dws[2], dbs_[2];
  for (int run = 0; run < 2; ++run) {
    DeviceArray<T> ddx(total), ddw(channels), ddb(channels);
    backward<<<grid, vouch::kBatchNormThreads>>>(dg.p, dxin.p, dmean.p, drstd.p,
                                                  weight ? dwt.p : nullptr, ddx.p,
                                                  weight ? ddw.p : nullptr, bias ? ddb.p : nullptr,
                                                  n, channels, spatial);
    LAB_LAUNCHED();
    dxs[run] = ddx.download();
    dws[run] = ddw.download();
    dbs_[run] = ddb.download();
  }
  report(tag + " grad", max_abs_err(dxs[0], dx), unit * 8 * (1 + dx_scale));
  report_bitwise(tag + " grad repeat", bit_mismatches(dxs[0], dxs[1]), total);
  double worst = 0;
  for (long long c = 0; c < channels; ++c) {
    if (weight)
      worst = std::max(worst, std::fabs(double(dws[0][c]) - dw[c]) / (unit * 8 * (1 + dwscale[c])));
    if (bias)
      worst = std::max(worst, std::fabs(double(dbs_[0][c]) - db[c]) / (unit * 8 * (1 + dbscale[c])));
  }
  if (weight || bias) {
    report(tag + " dweight, dbias (error / tolerance)", worst, 1);
    report_bitwise(tag + " dweight, dbias repeat",
                   (weight ? bit_mismatches(dws[0], dws[1]) : 0) +
                       (bias ? bit_mismatches(dbs_[0], dbs_[1]) : 0),
                   2 * channels);
  }
}

// ---------------------------------------------------------------------- small products

// C[b] = op(A[b]) op(B[b]) (+ bias for linear) against a double reference, and bit for
// bit against matmul.cuh's order emulated on the host (a left fold from 0 over p, each
// step one fma as nvcc contracts `acc += x * y`, then + bias).
template <class T>
void test_small_product(long long batch, long long m, long long n, long long k, bool ta,
                        bool tb, bool linear) {
  const std::string tag = std::string(linear ? "small_linear " : "small_product ") +
                          type_name<T>() + " b=" + std::to_string(batch) + " m=" +
                          std::to_string(m) + " n=" + std::to_string(n) + " k=" +
                          std::to_string(k) + (ta ? " A^T" : "") + (tb ? " B^T" : "");
  const std::vector<T> a = random_vector<T>(batch * m * k), b = random_vector<T>(batch * k * n),
                       bias = random_vector<T>(n);
  DeviceArray<T> da(a), db(b), dbias(bias), dc(batch * m * n);
  const unsigned grid = unsigned(std::min<long long>((batch * m * n + 255) / 256, 1056));
  if (linear)
    Lab<T>::small_linear<<<grid, 256>>>(da.p, db.p, dbias.p, dc.p, m, n, k);
  else
    Lab<T>::small_product<<<grid, 256>>>(da.p, db.p, dc.p, batch, m, n, k, m * k, k * n,
                                            ta, tb);
  LAB_LAUNCHED();
  const std::vector<T> got = dc.download();
  std::vector<double> want(got.size());
  std::vector<T> order(got.size());
  for (long long bi = 0; bi < batch; ++bi)
    for (long long i = 0; i < m; ++i)
      for (long long j = 0; j < n; ++j) {
        double w = 0;
        T acc = T(0);
        for (long long p = 0; p < k; ++p) {
          const T x = ta ? a[bi * m * k + p * m + i] : a[bi * m * k + i * k + p];
          const T y = tb ? b[bi * k * n + j * k + p] : b[bi * k * n + p * n + j];
          w += double(x) * double(y);
          acc = std::fma(x, y, acc);
        }
        const long long at = (bi * m + i) * n + j;
        want[at] = linear ? w + double(bias[j]) : w;
        order[at] = linear ? acc + bias[j] : acc;
      }
  report(tag, max_abs_err(got, want), 4 * eps<T>() * (k + 1));
  report_bitwise(tag + " order", bit_mismatches(got, order), (long long)got.size());
}

// ------------------------------------------------------------ broadcast and permute

// Where the map reads the input's last axis in order in runs of four from offsets that
// are multiples of four (IndexRecipe's rule for gather_quads_kernel), the quad twin
// against the same reference, exactly; a map that does not qualify is not run (the
// caller's cases include both kinds).
template <class T>
void test_gather_quads(const std::string& tag, const DeviceArray<T>& din,
                       const std::vector<long long>& res, const std::vector<long long>& source,
                       const std::vector<double>& want) {
  if (res.empty() || source.back() != 1 || res.back() % 4 != 0) return;
  for (size_t k = 0; k + 1 < source.size(); ++k)
    if (source[k] % 4 != 0) return;
  std::vector<long long> extents = res, strides = source;
  extents.back() /= 4;
  for (size_t k = 0; k + 1 < strides.size(); ++k) strides[k] /= 4;
  const long long quads = (long long)want.size() / 4;
  DeviceArray<T> dout(want.size());
  Lab<T>::gather_quads<<<elementwise_grid(quads), 256>>>(din.p, dout.p,
                                                         make_dims(extents, strides), quads);
  LAB_LAUNCHED();
  report(tag + " in quads", max_abs_err(dout.download(), want), 0);
}

template <class T>
void test_permute(const std::vector<long long>& in_shape, const std::vector<int>& perm) {
  const std::vector<long long> in_strides = row_major_strides(in_shape);
  std::vector<long long> res(perm.size()), source(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) {
    res[k] = in_shape[perm[k]];
    source[k] = in_strides[perm[k]];
  }
  long long n = 1;
  for (long long e : res) n *= e;
  std::string p = "(";
  for (size_t k = 0; k < perm.size(); ++k) p += (k ? "," : "") + std::to_string(perm[k]);
  const std::string tag = std::string("permute ") + type_name<T>() + " " + shape_text(in_shape) +
                          " perm " + p + ")";
  const std::vector<T> x = random_vector<T>(n);
  DeviceArray<T> din(x), dout(n);
  Lab<T>::gather<<<elementwise_grid(n), 256>>>(din.p, dout.p, make_dims(res, source), n);
  LAB_LAUNCHED();
  // Reference: result coordinate c reads the input at coordinate c' with c'[perm[k]] = c[k].
  std::vector<double> want(n);
  std::vector<long long> c(res.size()), ci(res.size());
  for (long long i = 0; i < n; ++i) {
    long long rest = i;
    for (int k = int(res.size()) - 1; k >= 0; --k) {
      c[k] = rest % res[k];
      rest /= res[k];
    }
    for (size_t k = 0; k < perm.size(); ++k) ci[perm[k]] = c[k];
    long long from = 0;
    for (size_t a = 0; a < in_shape.size(); ++a) from = from * in_shape[a] + ci[a];
    want[i] = x[from];
  }
  report(tag, max_abs_err(dout.download(), want), 0);
  test_gather_quads<T>(tag, din, res, source, want);
}

// ------------------------------------------------------------ gelu, slice, concat

// gelu's helpers (gelu.cuh) against float64 formulas, within 64 ulps of the largest
// value (|x| ≤ 6); and their arithmetic without tanh / erf (gelu_tanh_inner,
// gelu_outer) bit for bit against a cpu loop that rounds every step through a volatile:
// an FMA contraction on the device would change some of these bits (gelu's capsule
// claims contract=none).
template <class T>
void test_gelu(long long n) {
  using K = Lab<T>;
  const std::string tag = std::string("gelu ") + type_name<T>() + " n=" + std::to_string(n);
  const std::vector<T> x = random_vector<T>(n, -6, 6), t = random_vector<T>(n);
  DeviceArray<T> dx(x), dt(t), o0(n), o1(n), o2(n), o3(n), inner(n), outer(n);
  T* outs[] = {o0.p, o1.p, o2.p, o3.p};
  K::gelu<<<pointwise_grid(n), 256>>>(outs[0], outs[1], outs[2], outs[3], dx.p, n, 0);
  LAB_LAUNCHED();
  K::gelu_arith<<<elementwise_grid(n), 256>>>(dx.p, dt.p, inner.p, outer.p, n);
  LAB_LAUNCHED();
  const double beta = 0.7978845608028654, kappa = 0.044715;
  std::vector<double> want[4];
  std::vector<T> want_inner(n), want_outer(n);
  for (long long i = 0; i < n; ++i) {
    const double a = x[i], th = std::tanh(beta * (a + kappa * a * a * a));
    const double cdf = 0.5 * (1 + std::erf(a / std::sqrt(2.0)));
    want[0].push_back(0.5 * a * (1 + th));
    want[1].push_back(a * cdf);
    want[2].push_back(0.5 * (1 + th) + 0.5 * a * (1 - th * th) * beta * (1 + 3 * kappa * a * a));
    want[3].push_back(cdf + a * std::exp(-0.5 * a * a) / std::sqrt(2 * M_PI));
    volatile T x2 = x[i] * x[i];
    volatile T x3 = x2 * x[i];
    volatile T kx3 = T(kappa) * x3;
    volatile T sum = x[i] + kx3;
    want_inner[i] = T(beta) * sum;
    volatile T half = T(0.5) * x[i];
    volatile T one_t = T(1) + t[i];
    want_outer[i] = half * one_t;
  }
  const char* names[] = {"tanh", "erf", "tanh grad", "erf grad"};
  const DeviceArray<T>* got[] = {&o0, &o1, &o2, &o3};
  for (int k = 0; k < 4; ++k)
    report(tag + " " + names[k], max_abs_err(got[k]->download(), want[k]), 64 * eps<T>() * 6);
  report_bitwise(tag + " inner (no fma)", bit_mismatches(inner.download(), want_inner), n);
  report_bitwise(tag + " outer (no fma)", bit_mismatches(outer.download(), want_outer), n);
}

// slice of [outer, n, inner] at start + j·step (a copy: exact), then slice_scatter of a
// fresh [outer, m, inner] back into [outer, n, inner] (zeros elsewhere: exact).
template <class T>
void test_slice(long long outer, long long n, long long inner, long long start,
                long long end, long long step, bool one_block) {
  using K = Lab<T>;
  const long long m = (end - start + step - 1) / step, big = outer * n * inner,
                  small = outer * m * inner;
  const std::string tag = std::string("slice ") + type_name<T>() + " [" +
                          std::to_string(outer) + "," + std::to_string(n) + "," +
                          std::to_string(inner) + "] " + std::to_string(start) + ":" +
                          std::to_string(end) + ":" + std::to_string(step) +
                          (one_block ? " grid=1" : "");
  const std::vector<T> x = random_vector<T>(big), d = random_vector<T>(small);
  DeviceArray<T> dx(x), dy(small), dd(d), dg(big);
  K::slice<<<one_block ? 1 : elementwise_grid(small), 256>>>(dx.p, dy.p, outer, n, inner,
                                                              start, step, m);
  LAB_LAUNCHED();
  K::slice_scatter<<<one_block ? 1 : elementwise_grid(big), 256>>>(dd.p, dg.p, outer, n,
                                                                   inner, start, step, m);
  LAB_LAUNCHED();
  std::vector<double> want_y(small), want_g(big, 0.0);
  for (long long o = 0; o < outer; ++o)
    for (long long j = 0; j < m; ++j)
      for (long long i = 0; i < inner; ++i) {
        const long long at = (o * n + start + j * step) * inner + i;
        want_y[(o * m + j) * inner + i] = x[at];
        want_g[at] = d[(o * m + j) * inner + i];
      }
  report(tag, max_abs_err(dy.download(), want_y), 0);
  report(tag + " scatter", max_abs_err(dg.download(), want_g), 0);
  // The quad twin where SliceRecipe's toQuads allows it: rows of whole quads (inner a
  // multiple of 4), or the last axis in quads (inner 1, step 1, n, start, m multiples).
  long long qn = n, qinner = inner, qstart = start, qm = m;
  if (inner % 4 == 0) {
    qinner = inner / 4;
  } else if (inner == 1 && step == 1 && n % 4 == 0 && start % 4 == 0 && m % 4 == 0) {
    qn = n / 4, qstart = start / 4, qm = m / 4;
  } else {
    return;
  }
  DeviceArray<T> dq(small);
  K::slice_quads<<<one_block ? 1 : elementwise_grid(small / 4), 256>>>(
      dx.p, dq.p, outer, qn, qinner, qstart, step, qm);
  LAB_LAUNCHED();
  report(tag + " in quads", max_abs_err(dq.download(), want_y), 0);
}

// The random ops (random.cuh) against counter_rng.h's generator run on the host (the
// cpu kernels' loops): bitwise, for seeds, steps and ordinals at the ends of their
// ranges and every index of n elements; dropout in a training step and outside one;
// and the dropped fraction against p (binomial, 5 standard deviations).
template <class T>
void test_random(unsigned long long seed, long long step, long long ordinal, long long n,
                 bool one_block) {
  using K = Lab<T>;
  const std::string tag = std::string("random ") + type_name<T>() + " seed=" +
                          std::to_string(seed) + " step=" + std::to_string(step) +
                          " ordinal=" + std::to_string(ordinal) + " n=" + std::to_string(n) +
                          (one_block ? " grid=1" : "");
  const unsigned grid = one_block ? 1 : elementwise_grid(n);
  const double p = 0.3;
  long long host_ctx[vouch::kRngContextWords] = {step, 0, 1, (long long)seed};
  DeviceArray<long long> ctx(std::vector<long long>(host_ctx, host_ctx + 4));
  const std::vector<T> x = random_vector<T>(n);
  DeviceArray<T> dx(x), du(n), dm(n), dd(n), di(n);
  K::rand_uniform<<<grid, 256>>>(du.p, n, ctx.p, ordinal);
  LAB_LAUNCHED();
  K::bernoulli_mask<<<grid, 256>>>(dm.p, n, p, ctx.p, ordinal);
  LAB_LAUNCHED();
  K::dropout<<<grid, 256>>>(dx.p, dd.p, n, p, ctx.p, ordinal);
  LAB_LAUNCHED();
  host_ctx[vouch::kRngTraining] = 0;  // not a training step: the identity
  ctx.upload(std::vector<long long>(host_ctx, host_ctx + 4));
  K::dropout<<<grid, 256>>>(dx.p, di.p, n, p, ctx.p, ordinal);
  LAB_LAUNCHED();

  const unsigned long long stream = vouch::rng_stream(seed, ordinal, step);
  const unsigned long long threshold = vouch::rng_threshold(p);
  const T keep = T(1.0 / (1.0 - p));
  std::vector<T> want_u(n), want_m(n), want_d(n);
  long long dropped = 0;
  for (long long i = 0; i < n; ++i) {
    const unsigned long long u = vouch::rng_u53(stream, (unsigned long long)i);
    want_u[i] = T(vouch::rng_uniform(u));
    want_m[i] = u < threshold ? T(1) : T(0);
    want_d[i] = x[i] * (u < threshold ? T(0) : keep);
    dropped += u < threshold;
  }
  report_bitwise(tag + " rand_uniform", bit_mismatches(du.download(), want_u), n);
  report_bitwise(tag + " bernoulli_mask", bit_mismatches(dm.download(), want_m), n);
  report_bitwise(tag + " dropout", bit_mismatches(dd.download(), want_d), n);
  report_bitwise(tag + " dropout (eval: identity)", bit_mismatches(di.download(), x), n);
  if (n >= 10000)
    report(tag + " dropped fraction vs p", std::fabs(double(dropped) / double(n) - p),
           5 * std::sqrt(p * (1 - p) / double(n)));
}

// concat of three inputs [outer, e_k, inner] along the middle axis (a copy: exact).
template <class T>
void test_concat(long long outer, const long long (&e)[3], long long inner, bool one_block) {
  using K = Lab<T>;
  const long long n = e[0] + e[1] + e[2], total = outer * n * inner;
  const std::string tag = std::string("concat ") + type_name<T>() + " outer=" +
                          std::to_string(outer) + " extents " + std::to_string(e[0]) + "," +
                          std::to_string(e[1]) + "," + std::to_string(e[2]) + " inner=" +
                          std::to_string(inner) + (one_block ? " grid=1" : "");
  const std::vector<T> a = random_vector<T>(outer * e[0] * inner),
                       b = random_vector<T>(outer * e[1] * inner),
                       c = random_vector<T>(outer * e[2] * inner);
  DeviceArray<T> da(a), db(b), dc(c), dout(total);
  K::concat3<<<one_block ? 1 : elementwise_grid(total), 256>>>(
      dout.p, da.p, db.p, dc.p, e[0], e[1], e[2], outer, n, inner);
  LAB_LAUNCHED();
  const std::vector<T>* ins[] = {&a, &b, &c};
  std::vector<double> want;
  for (long long o = 0; o < outer; ++o)
    for (int k = 0; k < 3; ++k)
      for (long long j = 0; j < e[k] * inner; ++j) want.push_back((*ins[k])[o * e[k] * inner + j]);
  report(tag, max_abs_err(dout.download(), want), 0);
  // The quad twin where SliceRecipe's toQuads allows it (inner a multiple of 4, or
  // inner 1 and every extent one).
  long long q[3] = {e[0], e[1], e[2]}, qn = n, qinner = inner;
  if (inner % 4 == 0) {
    qinner = inner / 4;
  } else if (inner == 1 && e[0] % 4 == 0 && e[1] % 4 == 0 && e[2] % 4 == 0) {
    for (long long& x : q) x /= 4;
    qn = n / 4;
  } else {
    return;
  }
  DeviceArray<T> dq(total);
  K::concat3_quads<<<one_block ? 1 : elementwise_grid(total / 4), 256>>>(
      dq.p, da.p, db.p, dc.p, q[0], q[1], q[2], outer, qn, qinner);
  LAB_LAUNCHED();
  report(tag + " in quads", max_abs_err(dq.download(), want), 0);
}

// broadcast(in, result shape, dims): input axis k becomes result axis dims[k]; an input
// axis of extent 1 and every result axis not in dims repeat (stride 0).
template <class T>
void test_broadcast(const std::vector<long long>& in_shape, const std::vector<long long>& res,
                    const std::vector<int>& dims) {
  const std::vector<long long> in_strides = row_major_strides(in_shape);
  std::vector<long long> source(res.size(), 0);
  for (size_t k = 0; k < dims.size(); ++k)
    source[dims[k]] = in_shape[k] == 1 ? 0 : in_strides[k];
  long long n = 1, in_n = 1;
  for (long long e : res) n *= e;
  for (long long e : in_shape) in_n *= e;
  const std::string tag = std::string("broadcast ") + type_name<T>() + " " +
                          shape_text(in_shape) + " -> " + shape_text(res);
  const std::vector<T> x = random_vector<T>(in_n);
  DeviceArray<T> din(x), dout(n);
  Lab<T>::gather<<<elementwise_grid(n), 256>>>(din.p, dout.p, make_dims(res, source), n);
  LAB_LAUNCHED();
  std::vector<double> want(n);
  std::vector<long long> c(res.size());
  for (long long i = 0; i < n; ++i) {
    long long rest = i;
    for (int k = int(res.size()) - 1; k >= 0; --k) {
      c[k] = rest % res[k];
      rest /= res[k];
    }
    long long from = 0;
    for (size_t k = 0; k < dims.size(); ++k)
      from = from * in_shape[k] + (in_shape[k] == 1 ? 0 : c[dims[k]]);
    want[i] = x[from];
  }
  report(tag, max_abs_err(dout.download(), want), 0);
  test_gather_quads<T>(tag, din, res, source, want);
}

// ------------------------------------------------------------------------ optimizer


struct Hyper {
  vouch::OptimizerHyper h;
  double clip;  // max_norm; 0: no clipping (no vouch_grad_norm launch)
  const char* name;
};

// An OptimizerHyper: the kind and its hyper-parameters, a constant schedule.
vouch::OptimizerHyper hyper(int kind, double lr, double beta1, double beta2, double eps,
                            double weight_decay, double momentum, double alpha = 0.99,
                            double lr_decay = 0) {
  vouch::OptimizerHyper h{};
  h.kind = kind;
  h.lr = lr;
  h.beta1 = beta1;
  h.beta2 = beta2;
  h.eps = eps;
  h.weight_decay = weight_decay;
  h.momentum = momentum;
  h.alpha = alpha;
  h.lr_decay = lr_decay;
  h.schedule = 0;
  h.step_size = 1;
  h.gamma = 1;
  h.warmup = 0;
  h.total = 1;
  return h;
}

// runtime/optim.cc lr_at, written out again (the lab does not link the runtime).
double cpu_lr_at(const vouch::OptimizerHyper& h, long long i) {
  if (h.schedule == 1) return h.lr * std::pow(h.gamma, double(i / h.step_size));
  if (h.schedule == 2) return h.lr * std::pow(h.gamma, double(i));
  if (h.schedule == 3) {
    if (i < h.warmup) return h.lr * double(i) / double(h.warmup);
    double p = std::min(1.0, double(i - h.warmup) / double(h.total - h.warmup));
    return h.min_lr + (h.lr - h.min_lr) * 0.5 * (1.0 + std::cos(3.14159265358979323846 * p));
  }
  return h.lr;
}

// runtime/optim.cc's formulas, as optimizer.cuh writes them, in T; `coef` is the
// clipping coefficient (1: none).
template <class T>
void cpu_optimizer(std::vector<T>& p, const std::vector<T>& gs, std::vector<T>& mb,
                   std::vector<T>& vb, long long step, const vouch::OptimizerHyper& h,
                   double coef) {
  const long long t = step + 1;
  const double lr = cpu_lr_at(h, step);
  const double c1 = 1.0 - std::pow(h.beta1, double(t)), c2 = 1.0 - std::pow(h.beta2, double(t));
  for (size_t i = 0; i < p.size(); ++i) {
    T g = gs[i];
    if (coef < 1.0) g = g * T(coef);
    T pi = p[i];
    if (h.kind == 3 || h.kind == 4) {
      if (h.weight_decay != 0) g = g + T(h.weight_decay) * pi;
      if (h.kind == 4) {
        vb[i] = vb[i] + g * g;
        const T clr = T(lr / (1.0 + double(t - 1) * h.lr_decay));
        p[i] = pi - clr * (g / (std::sqrt(vb[i]) + T(h.eps)));
        continue;
      }
      vb[i] = T(h.alpha) * vb[i] + T(1.0 - h.alpha) * g * g;
      T d = g / (std::sqrt(vb[i]) + T(h.eps));
      if (h.momentum != 0) {
        d = T(h.momentum) * mb[i] + d;
        mb[i] = d;
      }
      p[i] = pi - T(lr) * d;
      continue;
    }
    if (h.kind == 0) {
      if (h.weight_decay != 0) g = g + T(h.weight_decay) * pi;
      T buf = g;
      if (h.momentum != 0) {
        buf = t == 1 ? g : T(h.momentum) * mb[i] + g;
        mb[i] = buf;
      }
      p[i] = pi - T(lr) * buf;
      continue;
    }
    if (h.kind == 2) pi = pi - T(lr * h.weight_decay) * pi;
    else if (h.weight_decay != 0) g = g + T(h.weight_decay) * pi;
    const T m = T(h.beta1) * mb[i] + T(1.0 - h.beta1) * g;
    const T v = T(h.beta2) * vb[i] + T(1.0 - h.beta2) * g * g;
    mb[i] = m;
    vb[i] = v;
    p[i] = pi - T(lr) * (m / T(c1)) / (std::sqrt(v / T(c2)) + T(h.eps));
  }
}

template <class T>
void test_optimizer(const Hyper& hy, int steps) {
  const vouch::OptimizerHyper& h = hy.h;
  const std::vector<long long> sizes = {1, 1000, 4097};
  std::vector<std::vector<T>> p, m, v;
  std::vector<DeviceArray<T>*> dp, dg, dm, dv;
  std::vector<vouch::ParamSlot<T>> slots;
  long long largest = 1;
  for (long long n : sizes) {
    p.push_back(random_vector<T>(n));
    m.push_back(std::vector<T>(n, T(0)));
    v.push_back(std::vector<T>(n, T(0)));
    dp.push_back(new DeviceArray<T>(p.back()));
    dg.push_back(new DeviceArray<T>(n));
    dm.push_back(new DeviceArray<T>(m.back()));
    dv.push_back(new DeviceArray<T>(v.back()));
    slots.push_back({dp.back()->p, dg.back()->p, dm.back()->p, dv.back()->p, n});
    largest = std::max(largest, n);
  }
  // The one-element param is exempt from the weight decay (decay_min_rank's slots).
  slots[0].decay = 0;
  vouch::number_quads(slots.data(), int(slots.size()));
  DeviceArray<vouch::ParamSlot<T>> dslots(slots.size());
  LAB_CHECK(cudaMemcpy(dslots.p, slots.data(), sizeof(slots[0]) * slots.size(),
                       cudaMemcpyHostToDevice));
  // The step counter, then the blocks' ticket (executor.h's layout).
  DeviceArray<long long> dstep(std::vector<long long>{0, 0});
  DeviceArray<double> dclip(std::vector<double>{0, 0});  // [norm, coefficient]
  DeviceArray<double> dpartials(vouch::kGradNormBlocks);  // the norm's blocks' sums
  DeviceArray<unsigned> dticket(std::vector<unsigned>{0});
  DeviceArray<T> loss(1), ring(2);
  const dim3 grid(unsigned(std::min<long long>((largest + 255) / 256, 1024)),
                  unsigned(sizes.size()));
  double norm_err = 0, norm_repeat = 0, norm_ticket = 0;
  for (int s = 0; s < steps; ++s) {
    std::vector<std::vector<T>> gs;
    double sum = 0;
    for (size_t k = 0; k < sizes.size(); ++k) {
      // Gradients of a few units per element: the norm (~40) is clipped at max_norm 1.
      gs.push_back(random_vector<T>(sizes[k]));
      dg[k]->upload(gs.back());
      for (T g : gs.back()) sum += double(g) * double(g);
    }
    const double norm = std::sqrt(sum);
    const double coef = hy.clip > 0 ? std::min(1.0, hy.clip / (norm + 1e-6)) : 1.0;
    for (size_t k = 0; k < sizes.size(); ++k) {
      vouch::OptimizerHyper hk = h;
      if (!slots[k].decay) hk.weight_decay = 0;
      cpu_optimizer(p[k], gs[k], m[k], v[k], s, hk, coef);
    }
    const double* clip = nullptr;
    if (hy.clip > 0) {
      // The executor's grid, then one block (any grid gives the norm): fixed-order sums
      // in double, a few ulps of the norm apart from the host's order.
      for (unsigned blocks : {unsigned(vouch::kGradNormBlocks), 1u}) {
        Lab<T>::grad_norm<<<blocks, vouch::kGradNormThreads>>>(
            dslots.p, int(sizes.size()), hy.clip, dclip.p, dpartials.p, dticket.p);
        LAB_LAUNCHED();
        norm_err = std::max(norm_err, std::fabs(dclip.download()[0] - norm) / norm);
      }
      Lab<T>::grad_norm<<<vouch::kGradNormBlocks, vouch::kGradNormThreads>>>(
          dslots.p, int(sizes.size()), hy.clip, dclip.p, dpartials.p, dticket.p);
      LAB_LAUNCHED();
      const std::vector<double> got = dclip.download();
      // Deterministic: a second launch on the same gradients gives the same bits.
      Lab<T>::grad_norm<<<vouch::kGradNormBlocks, vouch::kGradNormThreads>>>(
          dslots.p, int(sizes.size()), hy.clip, dclip.p, dpartials.p, dticket.p);
      LAB_LAUNCHED();
      const std::vector<double> again = dclip.download();
      norm_repeat += std::memcmp(got.data(), again.data(), 2 * sizeof(double)) != 0;
      norm_ticket += dticket.download()[0];
      clip = dclip.p;
    }
    // Any grid updates every element once: a 2-D grid of many blocks on even steps, one
    // block (every thread walking many quads) on odd ones.
    Lab<T>::optimizer<<<s % 2 == 0 ? grid : dim3(1), 256>>>(
        dslots.p, int(sizes.size()), dstep.p, h, clip, loss.p, ring.p, 2,
        reinterpret_cast<unsigned*>(dstep.p + 1));
    LAB_LAUNCHED();
  }
  // FMA contraction on the GPU (implementation-defined) and pow's last bit: a few ulps
  // per step of values of magnitude ~1.
  const double tol = 64 * eps<T>() * steps;
  double ep = 0, em = 0, ev = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    auto as_double = [](const std::vector<T>& x) { return std::vector<double>(x.begin(), x.end()); };
    ep = std::max(ep, max_abs_err(dp[k]->download(), as_double(p[k])));
    em = std::max(em, max_abs_err(dm[k]->download(), as_double(m[k])));
    ev = std::max(ev, max_abs_err(dv[k]->download(), as_double(v[k])));
  }
  const std::string tag = std::string("optimizer ") + hy.name + " " + type_name<T>() + ", " +
                          std::to_string(steps) + " steps, params {1,1000,4097}";
  report(tag + ": p", ep, tol);
  const bool has_m = h.kind == 1 || h.kind == 2 || (h.kind != 4 && h.momentum != 0);
  if (has_m) report(tag + ": m", em, tol);
  if (h.kind != 0) report(tag + ": v", ev, tol);
  if (hy.clip > 0) {
    report(tag + ": grad norm (relative, vs the host's double sum)", norm_err, 1e-12);
    report(tag + ": grad norm bitwise repeatable (launches differing)", norm_repeat, 0);
    report(tag + ": grad norm's ticket back to 0", norm_ticket, 0);
  }
  const std::vector<long long> counters = dstep.download();
  report(tag + ": step count (advanced once per launch)", std::fabs(double(counters[0] - steps)), 0);
  report(tag + ": block ticket back to 0", std::fabs(double(counters[1])), 0);
  for (size_t k = 0; k < sizes.size(); ++k) {
    delete dp[k];
    delete dg[k];
    delete dm[k];
    delete dv[k];
  }
}

// ------------------------------------------------------------------------- executor

// Batch selection copies 32-bit words (the executor packs every data field, of any
// dtype, into one block of `words` words); checked word for word against the block.
template <class T>
void test_executor(long long words) {
  const long long batches = 7, capacity = 4, steps = 10;
  std::vector<unsigned> data(size_t(batches * words));
  for (size_t i = 0; i < data.size(); ++i) data[i] = unsigned(i * 2654435761u + 17);
  DeviceArray<unsigned> d(data), batch{size_t(words)};
  DeviceArray<T> loss(1), ring(capacity);
  DeviceArray<long long> step(std::vector<long long>{0, 0});  // counter, ticket
  long long wrong_words = 0;
  std::vector<double> want_ring(capacity, NAN);
  for (long long s = 0; s < steps; ++s) {
    Lab<T>::select_batch<<<elementwise_grid(words), 256>>>(d.p, batch.p, step.p, batches,
                                                           words, vouch::RowOrder{});
    LAB_LAUNCHED();
    const long long b = s % batches;
    std::vector<unsigned> got = batch.download();
    for (long long i = 0; i < words; ++i) wrong_words += got[i] != data[b * words + i];
    const T l = T(0.25 * double(s + 1));
    loss.upload({l});
    // The optimizer of a model with no params (grid (3, 1): three blocks take
    // tickets) ends the step alone.
    Lab<T>::optimizer<<<3, 256>>>(nullptr, 0, step.p, hyper(1, 0.1, 0.9, 0.999, 1e-8, 0, 0),
                                  nullptr, loss.p, ring.p, capacity,
                                  reinterpret_cast<unsigned*>(step.p + 1));
    LAB_LAUNCHED();
    want_ring[s % capacity] = l;
  }
  const std::string tag =
      std::string("executor ") + type_name<T>() + " words=" + std::to_string(words);
  report(tag + ": select_batch, words differing over 10 steps", double(wrong_words), 0);
  report(tag + ": end of step: loss ring", max_abs_err(ring.download(), want_ring), 0);
  report(tag + ": end of step: counter", std::fabs(double(step.download()[0] - steps)), 0);
}

// A shuffled order (shuffle.h): two fields (3 and 2 words per row, the second at an
// aligned offset with padding before it), batch 4, 7 batches; over 3 epochs every
// batch row must be the data row shuffled_row names, as the cpu loop gathers it, and
// each epoch must visit every row once.
void test_select_shuffled() {
  const long long B = 4, batches = 7, rows = B * batches, steps = 3 * batches;
  vouch::RowOrder order{};
  order.seed = 12345;
  order.rows = rows;
  order.batch = B;
  order.num_fields = 2;
  order.word_offset[0] = 0;
  order.row_words[0] = 3;
  order.word_offset[1] = 16;  // 12 words of field 0, padded to 16
  order.row_words[1] = 2;
  const long long words = 16 + 8;
  std::vector<unsigned> data(size_t(batches * words));
  for (size_t i = 0; i < data.size(); ++i) data[i] = unsigned(i * 2654435761u + 3);
  DeviceArray<unsigned> d(data), batch{size_t(words)};
  long long wrong_words = 0, not_once = 0;
  std::vector<int> seen(size_t(rows), 0);
  for (long long s = 0; s < steps; ++s) {
    DeviceArray<long long> step(std::vector<long long>{s, 0});
    Lab<float>::select_batch<<<2, 256>>>(d.p, batch.p, step.p, batches, words, order);
    LAB_LAUNCHED();
    const long long epoch = s / batches, b = s % batches;
    if (b == 0) std::fill(seen.begin(), seen.end(), 0);
    std::vector<unsigned> got = batch.download();
    for (long long j = 0; j < B; ++j) {
      const long long r = vouch::shuffled_row(b * B + j, rows, order.seed, epoch);
      seen[size_t(r)]++;
      const long long rb = r / B, rj = r % B;
      for (int f = 0; f < 2; ++f)
        for (long long w = 0; w < order.row_words[f]; ++w)
          wrong_words += got[size_t(order.word_offset[f] + j * order.row_words[f] + w)] !=
                         data[size_t(rb * words + order.word_offset[f] +
                                     rj * order.row_words[f] + w)];
    }
    if (b == batches - 1)
      for (int c : seen) not_once += c != 1;
  }
  report("executor: select_batch shuffled, words differing over 3 epochs", double(wrong_words),
         0);
  report("executor: select_batch shuffled, rows not visited exactly once per epoch",
         double(not_once), 0);
}

// ------------------------------------------------------------------------ pooling

// pool.cuh's entry points (kernel_instances.cu's lab_*_pool*) for element type T.
template <class T>
struct PoolLab;
#define LAB_POOL(T, SUFFIX)                                                  \
  template <>                                                               \
  struct PoolLab<T> {                                                       \
    static constexpr auto max_pool = lab_max_pool##SUFFIX;                  \
    static constexpr auto max_pool_grad = lab_max_pool_grad##SUFFIX;        \
    static constexpr auto avg_pool = lab_avg_pool##SUFFIX;                  \
    static constexpr auto avg_pool_grad = lab_avg_pool_grad##SUFFIX;        \
    static constexpr auto smooth_max_pool = lab_smooth_max_pool##SUFFIX;    \
    static constexpr auto smooth_max_pool_grad = lab_smooth_max_pool_grad##SUFFIX; \
  };
LAB_POOL(float, _f32)
LAB_POOL(double, _f64)
#undef LAB_POOL

// pool_shape.h's 16 integers, as PoolRecipe passes them.
#define LAB_POOL_ARGS(s)                                                                    \
  s.planes, s.in[0], s.in[1], s.in[2], s.out[0], s.out[1], s.out[2], s.kernel[0],         \
      s.kernel[1], s.kernel[2], s.stride[0], s.stride[1], s.stride[2], s.pad[0], s.pad[1], \
      s.pad[2]

// A 3-D geometry (leading unit axes for 1-D and 2-D) with its window counts.
vouch::PoolShape lab_pool_shape(long long planes, std::vector<long long> in,
                                std::vector<long long> k, std::vector<long long> st,
                                std::vector<long long> pad) {
  vouch::PoolShape s{};
  s.planes = planes;
  for (int a = 0; a < 3; ++a) {
    s.in[a] = in[a], s.kernel[a] = k[a], s.stride[a] = st[a], s.pad[a] = pad[a];
    s.out[a] = (in[a] + 2 * pad[a] - k[a]) / st[a] + 1;
  }
  return s;
}

// The positions (within a plane) of window w, in row-major order of its kernel
// offsets, the padded ones skipped: the reference's reading of a window.
std::vector<long long> lab_window(const vouch::PoolShape& s, long long w) {
  const long long o[3] = {w / (s.out[1] * s.out[2]), (w / s.out[2]) % s.out[1], w % s.out[2]};
  std::vector<long long> at;
  for (long long k0 = 0; k0 < s.kernel[0]; ++k0)
    for (long long k1 = 0; k1 < s.kernel[1]; ++k1)
      for (long long k2 = 0; k2 < s.kernel[2]; ++k2) {
        const long long c[3] = {o[0] * s.stride[0] - s.pad[0] + k0,
                                o[1] * s.stride[1] - s.pad[1] + k1,
                                o[2] * s.stride[2] - s.pad[2] + k2};
        bool inside = true;
        for (int a = 0; a < 3; ++a) inside = inside && c[a] >= 0 && c[a] < s.in[a];
        if (inside) at.push_back((c[0] * s.in[1] + c[1]) * s.in[2] + c[2]);
      }
  return at;
}

// Every kernel of pool.cuh on one geometry, against references written here: max_pool
// exactly (its tie rule: the first maximum of the window in row-major order; the first
// NaN), its `values` form, max_pool_grad, avg_pool (both divisors) and avg_pool_grad
// bit for bit against the documented order emulated in T (each input element's windows
// ascending, from 0), smooth_max_pool and its gradient against float64 formulas; every
// gradient run twice (the same bits: no atomics). Inputs are quantised so windows tie;
// with `nan`, one input is NaN.
template <class T>
void test_pool(const vouch::PoolShape& s, bool one_block, bool nan) {
  using K = PoolLab<T>;
  const long long in = s.in[0] * s.in[1] * s.in[2], out = s.out[0] * s.out[1] * s.out[2];
  const long long n = s.planes * in, m = s.planes * out;
  char dims[160];
  std::snprintf(dims, sizeof dims, " %lldx[%lld,%lld,%lld] k[%lld,%lld,%lld] s[%lld,%lld,%lld] p[%lld,%lld,%lld]%s%s",
                s.planes, s.in[0], s.in[1], s.in[2], s.kernel[0], s.kernel[1], s.kernel[2],
                s.stride[0], s.stride[1], s.stride[2], s.pad[0], s.pad[1], s.pad[2],
                one_block ? " grid=1" : "", nan ? " NaN" : "");
  const std::string tag = std::string(type_name<T>()) + dims;
  std::vector<T> x = random_vector<T>(n), values = random_vector<T>(n), dy = random_vector<T>(m);
  for (T& v : x) v = T(std::floor(double(v) * 4) / 4);  // 8 levels: ties in most windows
  if (nan) x[n / 3] = T(NAN);
  std::vector<std::vector<long long>> windows(out);
  for (long long w = 0; w < out; ++w) windows[w] = lab_window(s, w);
  auto winner = [&](long long p, long long w) {
    const T* plane = x.data() + p * in;
    for (long long at : windows[w])
      if (std::isnan(double(plane[at]))) return at;
    long long best = windows[w][0];
    for (long long at : windows[w])
      if (plane[at] > plane[best]) best = at;
    return best;
  };
  const unsigned fwd = one_block ? 1 : elementwise_grid(m), bwd = one_block ? 1 : elementwise_grid(n);
  DeviceArray<T> dx_(x), dvalues(values), ddy(dy), y(m), picked(m), g1(n), g2(n);

  // max_pool and its values form: exact.
  K::max_pool<<<fwd, 256>>>(dx_.p, dx_.p, y.p, LAB_POOL_ARGS(s));
  LAB_LAUNCHED();
  K::max_pool<<<fwd, 256>>>(dx_.p, dvalues.p, picked.p, LAB_POOL_ARGS(s));
  LAB_LAUNCHED();
  std::vector<T> got = y.download(), got_picked = picked.download();
  long long wrong = 0;
  for (long long p = 0; p < s.planes; ++p)
    for (long long w = 0; w < out; ++w) {
      const long long at = p * in + winner(p, w);
      const T v = got[p * out + w];
      wrong += !(v == x[at] || (std::isnan(double(v)) && std::isnan(double(x[at]))));
      wrong += got_picked[p * out + w] != values[at];
    }
  report("max_pool" + tag + ": first maximum, values form (wrong)", double(wrong), 0);

  // max_pool_grad: each element folds the windows it wins, ascending, in T.
  K::max_pool_grad<<<bwd, 256>>>(ddy.p, dx_.p, g1.p, LAB_POOL_ARGS(s));
  LAB_LAUNCHED();
  K::max_pool_grad<<<bwd, 256>>>(ddy.p, dx_.p, g2.p, LAB_POOL_ARGS(s));
  LAB_LAUNCHED();
  std::vector<T> want(n, T(0));
  for (long long p = 0; p < s.planes; ++p)
    for (long long w = 0; w < out; ++w) {
      T& at = want[p * in + winner(p, w)];
      at = at + dy[p * out + w];
    }
  std::vector<T> a = g1.download(), b = g2.download();
  report_bitwise("max_pool_grad" + tag + " (ascending windows)", bit_mismatches(a, want), n);
  report_bitwise("max_pool_grad" + tag + " run twice", bit_mismatches(a, b), n);

  // avg_pool with both divisors and its gradient, bit for bit.
  for (long long include : {1LL, 0LL}) {
    const std::string mode = include ? " count_include_pad" : " positions only";
    K::avg_pool<<<fwd, 256>>>(dx_.p, y.p, LAB_POOL_ARGS(s), include);
    LAB_LAUNCHED();
    K::avg_pool_grad<<<bwd, 256>>>(ddy.p, g1.p, LAB_POOL_ARGS(s), include);
    LAB_LAUNCHED();
    K::avg_pool_grad<<<bwd, 256>>>(ddy.p, g2.p, LAB_POOL_ARGS(s), include);
    LAB_LAUNCHED();
    std::vector<T> want_y(m), want_g(n, T(0));
    for (long long p = 0; p < s.planes; ++p)
      for (long long w = 0; w < out; ++w) {
        const T divisor = T(include ? s.kernel[0] * s.kernel[1] * s.kernel[2]
                                    : (long long)windows[w].size());
        T sum = T(0);
        for (long long at : windows[w]) sum = sum + x[p * in + at];
        want_y[p * out + w] = sum / divisor;
        for (long long at : windows[w]) want_g[p * in + at] = want_g[p * in + at] + dy[p * out + w] / divisor;
      }
    if (nan) {  // a NaN's windows are NaN; compare the rest
      for (long long w = 0; w < m; ++w)
        if (std::isnan(double(want_y[w]))) want_y[w] = T(0);
    }
    std::vector<T> gy = y.download();
    if (nan)
      for (long long w = 0; w < m; ++w)
        if (std::isnan(double(gy[w]))) gy[w] = T(0);
    a = g1.download(), b = g2.download();
    report_bitwise("avg_pool" + tag + mode, bit_mismatches(gy, want_y), m);
    report_bitwise("avg_pool_grad" + tag + mode + " (ascending windows)", bit_mismatches(a, want_g), n);
    report_bitwise("avg_pool_grad" + tag + mode + " run twice", bit_mismatches(a, b), n);
  }
  if (nan) return;  // smooth_max_pool's NaN is its whole window's: checked by the cpu tests

  // smooth_max_pool (beta of either sign) and its gradient against float64.
  for (double beta : {3.0, -0.5}) {
    std::vector<T> xs = random_vector<T>(n, -4, 4);
    DeviceArray<T> dxs(xs), gs(n), gs2(n);
    K::smooth_max_pool<<<fwd, 256>>>(dxs.p, y.p, LAB_POOL_ARGS(s), beta);
    LAB_LAUNCHED();
    K::smooth_max_pool_grad<<<bwd, 256>>>(ddy.p, dxs.p, y.p, gs.p, LAB_POOL_ARGS(s), beta);
    LAB_LAUNCHED();
    K::smooth_max_pool_grad<<<bwd, 256>>>(ddy.p, dxs.p, y.p, gs2.p, LAB_POOL_ARGS(s), beta);
    LAB_LAUNCHED();
    std::vector<double> want_y(m), want_g(n, 0.0);
    double scale = 0;
    for (long long p = 0; p < s.planes; ++p)
      for (long long w = 0; w < out; ++w) {
        double top = -INFINITY, sum = 0;
        for (long long at : windows[w]) top = std::max(top, beta * double(xs[p * in + at]));
        for (long long at : windows[w]) sum += std::exp(beta * double(xs[p * in + at]) - top);
        const double v = (top + std::log(sum)) / beta;
        want_y[p * out + w] = v;
        for (long long at : windows[w]) {
          want_g[p * in + at] += double(dy[p * out + w]) * std::exp(beta * (double(xs[p * in + at]) - v));
          scale = std::max(scale, std::fabs(want_g[p * in + at]));
        }
      }
    const std::vector<T> gy = y.download();
    a = gs.download(), b = gs2.download();
    char bt[32];
    std::snprintf(bt, sizeof bt, " beta=%g", beta);
    // Each value: a max, a sum of at most 64 exponentials and a log, in T; the
    // gradient adds at most 27 windows' terms of y's rounding times beta.
    report("smooth_max_pool" + tag + bt, max_abs_err(gy, want_y), 64 * eps<T>() * 8);
    report("smooth_max_pool_grad" + tag + bt, max_abs_err(a, want_g), 64 * eps<T>() * 8 * (1 + scale));
    report_bitwise("smooth_max_pool_grad" + tag + bt + " run twice", bit_mismatches(a, b), n);
  }
}

// ------------------------------------------------------------------------ the suite

// ------------------------------------------------------------ im2col, col2im (conv)

// A convolution's geometry as the lab writes it: image [N, C, *s], columns [G, C/G·K, N,
// *grid], 1 to 3 spatial axes (padded to three with extent 1 in front, as codegen does:
// the kernels' axis 2 is the image's last, where im2col's quads run).
struct LabConv {
  long long n, c, g;
  std::vector<long long> s, grid, k, stride, pad, dil;
  const char* what;
  long long at(const std::vector<long long>& v, int a, long long fill) const {
    const int real = a - (3 - int(v.size()));
    return real >= 0 ? v[real] : fill;
  }
  long long prod(const std::vector<long long>& v) const {
    long long p = 1;
    for (long long e : v) p *= e;
    return p;
  }
};

// Launches an entry point with the geometry's 21 integers.
template <class F, class T>
void launch_conv(F f, unsigned grid, const T* in, T* out, const LabConv& c) {
  auto a = [&](const std::vector<long long>& v, int i, long long fill) { return c.at(v, i, fill); };
  f<<<grid, 256>>>(in, out, c.n, c.c, c.g, a(c.s, 0, 1), a(c.s, 1, 1), a(c.s, 2, 1),
                   a(c.grid, 0, 1), a(c.grid, 1, 1), a(c.grid, 2, 1), a(c.k, 0, 1), a(c.k, 1, 1),
                   a(c.k, 2, 1), a(c.stride, 0, 1), a(c.stride, 1, 1), a(c.stride, 2, 1),
                   a(c.pad, 0, 0), a(c.pad, 1, 0), a(c.pad, 2, 0), a(c.dil, 0, 1), a(c.dil, 1, 1),
                   a(c.dil, 2, 1));
}

// im2col against its definition written here (exact: a copy, zeros in the padding), and
// col2im against a scatter in T whose outer loop is the kernel offset, so every image
// element receives its terms in ascending offset order from 0 (bit for bit: the
// documented order), against float64 within a bound, and run twice (the same bits).
template <class T>
void test_conv_windows(const LabConv& c, bool one_block) {
  using K = Lab<T>;
  const std::string tag = std::string("im2col/col2im ") + type_name<T>() + " " + c.what +
                          (one_block ? " grid=1" : "");
  const int axes = int(c.s.size());
  const long long P = c.prod(c.s), L = c.prod(c.grid), KK = c.prod(c.k);
  const long long image_n = c.n * c.c * P, cols_n = c.c * KK * c.n * L;
  // The image position window o reads at kernel offset k (flat, row-major), -1 in padding.
  auto reads = [&](long long o, long long k) {
    long long oc[3], kc[3];
    for (int a = axes - 1; a >= 0; --a) {
      oc[a] = o % c.grid[a];
      o /= c.grid[a];
      kc[a] = k % c.k[a];
      k /= c.k[a];
    }
    long long flat = 0;
    for (int a = 0; a < axes; ++a) {
      const long long p = oc[a] * c.stride[a] - c.pad[a] + kc[a] * c.dil[a];
      if (p < 0 || p >= c.s[a]) return -1LL;
      flat = flat * c.s[a] + p;
    }
    return flat;
  };
  const std::vector<T> x = random_vector<T>(image_n), cols = random_vector<T>(cols_n);
  DeviceArray<T> dx(x), dcols(cols), windows(cols_n), image(image_n), again(image_n);
  launch_conv(K::im2col, one_block ? 1 : elementwise_grid(cols_n), dx.p, windows.p, c);
  LAB_LAUNCHED();
  launch_conv(K::col2im, one_block ? 1 : elementwise_grid(image_n), dcols.p, image.p, c);
  LAB_LAUNCHED();
  launch_conv(K::col2im, one_block ? 1 : elementwise_grid(image_n), dcols.p, again.p, c);
  LAB_LAUNCHED();
  std::vector<double> want_cols(cols_n), want_image(image_n, 0.0);
  std::vector<T> fold(image_n, T(0));
  long long covers = 0;  // the most terms an image element receives
  std::vector<long long> count(image_n, 0);
  for (long long k = 0; k < KK; ++k)
    for (long long ch = 0; ch < c.c; ++ch)
      for (long long n = 0; n < c.n; ++n)
        for (long long o = 0; o < L; ++o) {
          const long long col = ((ch * KK + k) * c.n + n) * L + o, p = reads(o, k);
          const long long pixel = (n * c.c + ch) * P + p;
          want_cols[col] = p < 0 ? 0.0 : double(x[pixel]);
          if (p < 0) continue;
          want_image[pixel] += double(cols[col]);
          fold[pixel] = fold[pixel] + cols[col];
          covers = std::max(covers, ++count[pixel]);
        }
  const std::vector<T> got = image.download();
  report(tag + ": im2col", max_abs_err(windows.download(), want_cols), 0);
  // |cols| ≤ 1: a fold of k terms rounds k times, each error ≤ eps·k.
  report(tag + ": col2im vs float64", max_abs_err(got, want_image),
         double(covers) * double(covers) * eps<T>());
  report_bitwise(tag + ": col2im, ascending kernel offsets", bit_mismatches(got, fold), image_n);
  report_bitwise(tag + ": col2im run twice", bit_mismatches(again.download(), got), image_n);
}

// ------------------------------------------------------------ col2im_matmul (implicit GEMM)

// A LabConv whose grid is every window that fits (a conv's output), less `shrink` per
// axis (conv_transpose with output_padding: its image has room past the last window).
LabConv conv_case(long long n, long long c, long long g, std::vector<long long> s,
                  std::vector<long long> k, std::vector<long long> stride,
                  std::vector<long long> pad, std::vector<long long> dil, long long shrink,
                  const char* what) {
  std::vector<long long> grid(s.size());
  for (size_t a = 0; a < s.size(); ++a)
    grid[a] = (s[a] + 2 * pad[a] - dil[a] * (k[a] - 1) - 1) / stride[a] + 1 - shrink;
  return {n, c, g, s, grid, k, stride, pad, dil, what};
}

vouch::ConvGeometry lab_geometry(const LabConv& c) {
  vouch::ConvGeometry g{c.n, c.c, c.g, {}, {}, {}, {}, {}, {}};
  for (int a = 0; a < 3; ++a) {
    g.image[a] = c.at(c.s, a, 1);
    g.grid[a] = c.at(c.grid, a, 1);
    g.kernel[a] = c.at(c.k, a, 1);
    g.stride[a] = c.at(c.stride, a, 1);
    g.padding[a] = c.at(c.pad, a, 0);
    g.dilation[a] = c.at(c.dil, a, 1);
  }
  return g;
}

// An implicit-GEMM entry point with the geometry's 21 integers and the rows, on
// conv_implicit_tiles(g) blocks (or `grid`) of kImplicitThreads.
template <class F, class T>
void launch_implicit(F f, unsigned grid, const T* lhs, const T* rhs, T* image,
                     const vouch::ConvGeometry& g, long long rows) {
  f<<<grid, vouch::kImplicitThreads>>>(
      lhs, rhs, image, g.batch, g.channels, g.groups, g.image[0], g.image[1], g.image[2],
      g.grid[0], g.grid[1], g.grid[2], g.kernel[0], g.kernel[1], g.kernel[2], g.stride[0],
      g.stride[1], g.stride[2], g.padding[0], g.padding[1], g.padding[2], g.dilation[0],
      g.dilation[1], g.dilation[2], rows);
}

// col2im_matmul (col2im_matmul.cuh) against its definition, computed here in float64
// (not from columns): image[n, gi·Cg + c, p] = Σ_k Σ_r lhs[gi, r, c·K + k] ·
// rhs[gi, r, n·L + w(p, k)] over the offsets k whose window w exists. Per element
// |got - want| ≤ tol · Σ|terms| (f64 and f32: (R·K + 2)·eps, a fold of R·K roundings;
// tf32: 2^-9 for the operands' rounding to 10 bits, plus the f32 fold's), the worst
// element printed on failure; the SIMT kernels bit for bit against a fold in T, one fma
// per term, k ascending outer, r ascending inside, from +0 (their documented order);
// run twice (the same bits); elements without terms exactly 0. `misaligned`: the image
// one element past an aligned address (no vector stores).
template <class T>
void test_col2im_matmul(const LabConv& c, long long R, bool one_block, bool misaligned = false) {
  const vouch::ConvGeometry geo = lab_geometry(c);
  const long long S = vouch::conv_image_positions(geo), L = vouch::conv_windows(geo);
  const long long KK = vouch::conv_offsets(geo), G = c.g, Cg = c.c / c.g, N = c.n;
  const long long image_n = N * c.c * S, lhs_n = G * R * Cg * KK, rhs_n = G * R * N * L;
  const std::vector<T> lhs = random_vector<T>(lhs_n), rhs = random_vector<T>(rhs_n);
  // The definition: per element, its terms' sum in float64, Σ|terms|, and the fold in T.
  std::vector<double> want(image_n, 0.0), mag(image_n, 0.0);
  std::vector<T> fold(image_n, T(0));
  std::vector<char> has_terms(image_n, 0);
  long long without = 0;  // elements without terms
  for (long long n = 0; n < N; ++n)
    for (long long gi = 0; gi < G; ++gi)
      for (long long cc = 0; cc < Cg; ++cc)
        for (long long p = 0; p < S; ++p) {
          const long long e = (n * c.c + gi * Cg + cc) * S + p;
          const long long pa[3] = {p / (geo.image[1] * geo.image[2]),
                                   p / geo.image[2] % geo.image[1], p % geo.image[2]};
          for (long long k = 0; k < KK; ++k) {
            const long long ka[3] = {k / (geo.kernel[1] * geo.kernel[2]),
                                     k / geo.kernel[2] % geo.kernel[1], k % geo.kernel[2]};
            long long w = 0;
            bool ok = true;
            for (int a = 0; a < 3; ++a) {
              const long long t = pa[a] + geo.padding[a] - ka[a] * geo.dilation[a];
              const long long o = t / geo.stride[a];
              ok = ok && t >= 0 && t % geo.stride[a] == 0 && o < geo.grid[a];
              w = w * geo.grid[a] + o;
            }
            if (!ok) continue;
            for (long long r = 0; r < R; ++r) {
              const T a = lhs[(gi * R + r) * Cg * KK + cc * KK + k];
              const T b = rhs[(gi * R + r) * N * L + n * L + w];
              want[e] += double(a) * double(b);
              mag[e] += std::fabs(double(a) * double(b));
              fold[e] = std::fma(a, b, fold[e]);
              has_terms[e] = 1;
            }
          }
          without += !has_terms[e];
        }
  const unsigned grid = one_block ? 1 : unsigned(vouch::conv_implicit_tiles(geo));
  const std::string where = std::string(" ") + c.what + " R=" + std::to_string(R) +
                            (one_block ? " grid=1" : "") + (misaligned ? " misaligned" : "");
  auto check = [&](auto f, const char* variant, double tol, bool bitwise) {
    const std::string tag = std::string("col2im_matmul ") + variant + where;
    DeviceArray<T> dl(lhs), dr(rhs), image(image_n, 1), again(image_n, 1);
    T* const out = image.p + (misaligned ? 1 : 0);
    T* const out2 = again.p + (misaligned ? 1 : 0);
    auto down = [&](const T* p) {
      std::vector<T> h(image_n);
      LAB_CHECK(cudaMemcpy(h.data(), p, sizeof(T) * image_n, cudaMemcpyDeviceToHost));
      return h;
    };
    launch_implicit(f, grid, dl.p, dr.p, out, geo, R);
    LAB_LAUNCHED();
    launch_implicit(f, grid, dl.p, dr.p, out2, geo, R);
    LAB_LAUNCHED();
    const std::vector<T> got = down(out), got2 = down(out2);
    double worst = 0;  // max |got - want| / Σ|terms|
    long long at = -1, nonzero = 0;
    for (long long e = 0; e < image_n; ++e) {
      if (!has_terms[e]) {
        nonzero += !(got[e] == T(0));
        continue;
      }
      double rel = std::fabs(double(got[e]) - want[e]) / std::max(mag[e], 1e-300);
      if (std::isnan(rel)) rel = INFINITY;  // unwritten (the buffer starts NaN) or NaN
      if (at < 0 || rel > worst) worst = rel, at = e;
    }
    report(tag + ": |err| / sum|terms| vs float64", worst, tol);
    if (!(worst <= tol) && at >= 0)
      std::printf("      worst element %lld (n %lld, channel %lld, position %lld): got %.17g, "
                  "want %.17g, sum|terms| %.6g\n",
                  at, at / (c.c * S), at / S % c.c, at % S, double(got[at]), want[at], mag[at]);
    if (bitwise)
      report_bitwise(tag + ": fma fold, k outer, r ascending", bit_mismatches(got, fold), image_n);
    report_bitwise(tag + ": run twice", bit_mismatches(got2, got), image_n);
    report_bitwise(tag + ": exact 0 without terms", nonzero, without);
  };
  const double rk = double(R * KK + 2);
  check(Lab<T>::col2im_matmul, type_name<T>(), rk * eps<T>(), true);
  if constexpr (sizeof(T) == 4)
    check(lab_col2im_matmul_tf32_f32, "tf32", std::ldexp(1.0, -9) + rk * eps<float>(), false);
}

template <class T>
void test_col2im_matmul_all() {
  // 1-D to 3-D; odd extents, padding, strides 2 and 3, dilation 2; groups, depthwise;
  // channel tails (Cg 70 of two groups, Cg 130: three channel tiles) and column tails
  // (N·S not a multiple of 128 almost everywhere); rows 1, 37 (a chunk's tail), 0 (all
  // zeros); a grid one window short of what fits (conv_transpose with output_padding);
  // 40 kernel offsets; one block (the tiles' grid-stride loop); the image misaligned (no
  // vector stores); ResNet-18 CIFAR's shapes at batch 1-2.
  test_col2im_matmul<T>(conv_case(3, 5, 1, {11}, {3}, {2}, {1}, {1}, 0, "1-D k3 s2 p1"), 7, false);
  test_col2im_matmul<T>(conv_case(2, 3, 1, {50}, {40}, {1}, {5}, {1}, 0, "1-D k40 p5"), 3, false);
  test_col2im_matmul<T>(conv_case(2, 6, 1, {7, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 0,
                                  "2-D 7x5 k3 p1"), 16, false);
  test_col2im_matmul<T>(conv_case(2, 4, 2, {3, 4, 5}, {2, 2, 3}, {1, 2, 2}, {0, 1, 1},
                                  {2, 1, 1}, 0, "3-D strides, dilation, 2 groups"), 9, false);
  test_col2im_matmul<T>(conv_case(2, 3, 1, {10, 11}, {3, 2}, {3, 3}, {1, 0}, {1, 1}, 0,
                                  "2-D stride 3"), 5, false);
  test_col2im_matmul<T>(conv_case(2, 8, 1, {9, 9}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, 0,
                                  "2-D dilation 2 p2"), 12, false);
  test_col2im_matmul<T>(conv_case(2, 16, 4, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 0,
                                  "2-D 4 groups"), 10, false);
  test_col2im_matmul<T>(conv_case(2, 16, 4, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 0,
                                  "2-D 4 groups"), 10, false, true);
  test_col2im_matmul<T>(conv_case(3, 8, 8, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 0,
                                  "2-D depthwise (Cg 1)"), 1, false);
  test_col2im_matmul<T>(conv_case(2, 140, 2, {5, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 0,
                                  "2-D Cg 70, 2 groups"), 37, false);
  test_col2im_matmul<T>(conv_case(1, 130, 1, {9, 9}, {5, 5}, {1, 1}, {2, 2}, {1, 1}, 0,
                                  "2-D Cg 130 k5 p2"), 20, true);
  test_col2im_matmul<T>(conv_case(2, 5, 1, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 0,
                                  "2-D rows 0"), 0, false);
  test_col2im_matmul<T>(conv_case(2, 6, 1, {9, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 1,
                                  "2-D s2 p1, grid one short (conv_transpose)"), 8, false);
  // Stride phases (strides dividing the extents): 1-D, 3-D with dilation, stride 3 with
  // dilation, the grid one short, tiles spanning four classes in one block, and dilation
  // a multiple of the stride (three classes of four without a single term).
  test_col2im_matmul<T>(conv_case(3, 5, 1, {12}, {3}, {2}, {1}, {1}, 0, "1-D k3 s2 p1 (phases)"),
                        7, false);
  test_col2im_matmul<T>(conv_case(2, 4, 2, {4, 4, 6}, {2, 2, 3}, {1, 2, 2}, {0, 1, 1},
                                  {2, 1, 2}, 0, "3-D phases, dilation, 2 groups"), 9, false);
  test_col2im_matmul<T>(conv_case(2, 3, 1, {9, 12}, {3, 2}, {3, 3}, {1, 0}, {2, 1}, 0,
                                  "2-D stride 3, dilation 2 (phases)"), 5, false);
  test_col2im_matmul<T>(conv_case(2, 6, 1, {10, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 1,
                                  "2-D s2 p1 (phases), grid one short"), 8, false);
  test_col2im_matmul<T>(conv_case(2, 70, 1, {8, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 0,
                                  "2-D s2 Cg 70 (phases: 4 in a tile)"), 37, true);
  test_col2im_matmul<T>(conv_case(2, 4, 1, {8, 8}, {3, 3}, {2, 2}, {2, 2}, {2, 2}, 0,
                                  "2-D s2 dilation 2 (phases)"), 6, false);
  test_col2im_matmul<T>(conv_case(2, 64, 1, {32, 32}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 0,
                                  "ResNet-18 CIFAR 64x32x32 k3 p1"), 64, false);
  test_col2im_matmul<T>(conv_case(1, 64, 1, {32, 32}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 0,
                                  "ResNet-18 CIFAR stride 2 (grid 16x16)"), 128, false);
  test_col2im_matmul<T>(conv_case(2, 64, 1, {32, 32}, {1, 1}, {2, 2}, {0, 0}, {1, 1}, 0,
                                  "ResNet-18 CIFAR 1x1 stride-2 shortcut"), 128, false);
}

// ------------------------------------------------------------ embedding, gather, scatter_add

// embedding of [positions] ids into a [V, D] table (a copy: exact) and embedding_grad
// against an emulation in T that folds dy's rows per table element in ascending position
// order from 0 (bit for bit: the documented order), against float64 within a bound, and
// run twice (the same bits). Ids repeat (several per row) and skip rows. With `bad`, one
// id is V: its forward row is NaN, the other rows exact, and the whole gradient NaN.
template <class T>
void test_embedding(long long positions, long long V, long long D, bool one_block, bool bad) {
  using K = Lab<T>;
  const std::string tag = std::string("embedding ") + type_name<T>() + " [" +
                          std::to_string(positions) + "] of [" + std::to_string(V) + "," +
                          std::to_string(D) + "]" + (one_block ? " grid=1" : "") +
                          (bad ? " an id out of range" : "");
  std::vector<int> ids(positions);
  for (long long p = 0; p < positions; ++p) ids[p] = int((p * 7 + p / 3) % V);
  if (bad) ids[positions / 2] = int(V);
  const std::vector<T> table = random_vector<T>(V * D), dy = random_vector<T>(positions * D);
  DeviceArray<int> did(ids);
  DeviceArray<T> dtable(table), ddy(dy), out(positions * D), grad(V * D), again(V * D);
  K::embedding<<<one_block ? 1 : elementwise_grid(positions * D), 256>>>(
      did.p, dtable.p, out.p, positions, V, D);
  LAB_LAUNCHED();
  K::embedding_grad<<<one_block ? 1 : elementwise_grid(V * D), 256>>>(did.p, ddy.p, grad.p,
                                                                     positions, V, D);
  LAB_LAUNCHED();
  K::embedding_grad<<<one_block ? 1 : elementwise_grid(V * D), 256>>>(did.p, ddy.p, again.p,
                                                                     positions, V, D);
  LAB_LAUNCHED();
  const std::vector<T> got = out.download(), g = grad.download();
  if (bad) {
    long long wrong = 0;
    for (long long p = 0; p < positions; ++p)
      for (long long d = 0; d < D; ++d) {
        const double x = double(got[p * D + d]);
        wrong += p == positions / 2 ? !std::isnan(x) : x != double(table[ids[p] * D + d]);
      }
    report(tag + ": NaN row, other rows exact (elements wrong)", double(wrong), 0);
    long long not_nan = 0;
    for (T x : g) not_nan += !std::isnan(double(x));
    report(tag + ": gradient all NaN (elements that are not)", double(not_nan), 0);
    return;
  }
  std::vector<double> want_y(positions * D), want_g(V * D, 0.0);
  std::vector<T> fold(V * D, T(0));
  double bound = 0;
  for (long long p = 0; p < positions; ++p)
    for (long long d = 0; d < D; ++d) {
      want_y[p * D + d] = double(table[ids[p] * D + d]);
      want_g[ids[p] * D + d] += double(dy[p * D + d]);
      fold[ids[p] * D + d] = fold[ids[p] * D + d] + dy[p * D + d];
    }
  long long per_row = 0;
  for (long long v = 0; v < V; ++v) {
    long long c = 0;
    for (int id : ids) c += id == v;
    per_row = std::max(per_row, c);
  }
  // |dy| ≤ 1: a fold of k terms rounds k times, each error ≤ eps·k.
  bound = double(per_row) * double(per_row) * eps<T>();
  report(tag + ": rows", max_abs_err(got, want_y), 0);
  report(tag + ": gradient vs float64", max_abs_err(g, want_g), bound);
  report_bitwise(tag + ": gradient, ascending positions", bit_mismatches(g, fold), V * D);
  report_bitwise(tag + ": gradient run twice", bit_mismatches(again.download(), g), V * D);
}

// gather of [outer, n, inner] by an index [outer, m, inner] (exact) and scatter_add of src
// [outer, m, inner] into x [outer, n, inner] against an emulation in T (x's element, then
// the matches with j ascending: bit for bit), run twice. With `bad`, index[0] is -1: the
// gather's element 0 is NaN and the scatter's fiber through element 0 is NaN.
template <class T>
void test_gather_scatter(long long outer, long long n, long long m, long long inner,
                         bool one_block, bool bad) {
  using K = Lab<T>;
  const std::string tag = std::string("gather/scatter_add ") + type_name<T>() + " [" +
                          std::to_string(outer) + "," + std::to_string(n) + "," +
                          std::to_string(inner) + "] m=" + std::to_string(m) +
                          (one_block ? " grid=1" : "") + (bad ? " an index out of range" : "");
  const long long big = outer * n * inner, small = outer * m * inner;
  std::vector<int> index(small);
  for (long long k = 0; k < small; ++k) index[k] = int((k * 5 + k / 7) % n);
  if (bad) index[0] = -1;
  const std::vector<T> x = random_vector<T>(big), src = random_vector<T>(small);
  DeviceArray<int> dindex(index);
  DeviceArray<T> dx(x), dsrc(src), gathered(small), scattered(big), again(big);
  K::gather_axis<<<one_block ? 1 : elementwise_grid(small), 256>>>(dx.p, dindex.p, gathered.p,
                                                                   outer, n, m, inner);
  LAB_LAUNCHED();
  for (DeviceArray<T>* out : {&scattered, &again}) {
    K::scatter_add_axis<<<one_block ? 1 : elementwise_grid(big), 256>>>(
        dx.p, dindex.p, dsrc.p, out->p, outer, n, m, inner);
    LAB_LAUNCHED();
  }
  std::vector<double> want_g(small);
  std::vector<T> fold = x;
  std::vector<bool> nan_fiber(big, false);
  for (long long o = 0; o < outer; ++o)
    for (long long j = 0; j < m; ++j)
      for (long long i = 0; i < inner; ++i) {
        const long long k = (o * m + j) * inner + i, a = index[k];
        if (a < 0 || a >= n) {
          want_g[k] = NAN;
          for (long long b = 0; b < n; ++b) nan_fiber[(o * n + b) * inner + i] = true;
          continue;
        }
        want_g[k] = double(x[(o * n + a) * inner + i]);
        fold[(o * n + a) * inner + i] = fold[(o * n + a) * inner + i] + src[k];
      }
  const std::vector<T> g = gathered.download(), sc = scattered.download();
  long long wrong = 0, sc_wrong = 0;
  for (long long k = 0; k < small; ++k)
    wrong += std::isnan(want_g[k]) ? !std::isnan(double(g[k])) : double(g[k]) != want_g[k];
  for (long long k = 0; k < big; ++k)
    sc_wrong += nan_fiber[k] ? !std::isnan(double(sc[k]))
                             : std::memcmp(&sc[k], &fold[k], sizeof(T)) != 0;
  report(tag + ": gather (elements wrong, NaN where out of range)", double(wrong), 0);
  report_bitwise(tag + ": scatter_add, j ascending", sc_wrong, big);
  report_bitwise(tag + ": scatter_add run twice", bit_mismatches(again.download(), sc), big);
}

// ------------------------------------------------------------------------ attention

// attention.cuh against a materialised double reference written here (S, P, O, lse,
// delta, dP, dS and the three gradients directly): torch's scaled_dot_product_attention
// with a hard mask (blocked entries exactly 0, a fully blocked row's O, dq exact zeros,
// its lse -inf). Tensors through Dims: contiguous, a [B, T, H, D] buffer viewed as
// [B, H, T, D] (permuted), a feature stride of 2, or qkv_attention's packed heads (q,
// k, v and dq, dk, dv each one [B, T, 3·H·D] storage, read and written at offsets 0,
// H·D and 2·H·D as [B, H, T, D]; out, dout as [B, T, H·D]). Each case runs the generic
// instantiation (DV = DK = 4) and, where D and Dv are at most 64, codegen's d64 one;
// forward and backward run twice and must give the same bits.
struct AttnCase {
  const char* name;
  std::vector<long long> batch;
  long long tq, tk, d, dv;
  bool causal;
  int mask;    // 0 none, 1 random with fully blocked rows, 2 random broadcast over batch axis 0
  // 0 contiguous, 1 [B,T,H,F] storage viewed as [B,H,T,F], 2 feature stride 2, 3 q, k, v
  // (and dq, dk, dv) in one [B,T,3·H·F] storage at offsets 0, H·F, 2·H·F viewed as
  // [B,H,T,F], out and dout as layout 1 (qkv_attention's; needs tq == tk, d == dv).
  int layout;
};

struct AttnTensor {
  vouch::Dims dims;
  long long size;  // elements of the storage
  long long base = 0;  // the view's first element in the storage (the kernels get p + base)
  std::vector<long long> batch_offset;  // base included
  long long rs, fs;
  long long at(long long b, long long i, long long f) const {
    return batch_offset[b] + i * rs + f * fs;
  }
};

// Layout 3: `part` 0, 1, 2 is q, k, v's (or dq, dk, dv's) view of the packed storage;
// -1 (out, dout) is layout 1's.
AttnTensor attn_tensor(const std::vector<long long>& batch, long long t, long long f,
                       int layout, int part = -1) {
  std::vector<long long> shape = batch;
  shape.push_back(t);
  shape.push_back(f);
  std::vector<long long> stride;
  long long size, base = 0;
  if (layout == 1 || (layout == 3 && part < 0)) {  // storage [B, T, H, F]
    const long long B = batch[0], H = batch[1];
    stride = {t * H * f, f, H * f, 1};
    size = B * t * H * f;
  } else if (layout == 3) {  // storage [B, T, 3·H·F], this part's heads at part·H·F
    const long long B = batch[0], H = batch[1];
    stride = {t * 3 * H * f, f, 3 * H * f, 1};
    size = B * t * 3 * H * f;
    base = part * H * f;
  } else {
    stride = row_major_strides(shape);
    size = 1;
    for (long long e : shape) size *= e;
    if (layout == 2) {
      for (long long& x : stride) x *= 2;
      size *= 2;
    }
  }
  AttnTensor a;
  a.dims = make_dims(shape, stride);
  a.size = size;
  a.base = base;
  const int nb = int(batch.size());
  long long count = 1;
  for (long long e : batch) count *= e;
  for (long long b = 0; b < count; ++b) {
    long long rest = b, off = base;
    for (int k = nb - 1; k >= 0; --k) {
      off += (rest % batch[k]) * stride[k];
      rest /= batch[k];
    }
    a.batch_offset.push_back(off);
  }
  a.rs = stride[nb];
  a.fs = stride[nb + 1];
  return a;
}

template <class T, class F>
void attn_set_shared(F f, long long bytes) {
  if (!allow_dynamic_shared(f, bytes)) {
    std::fprintf(stderr, "kernel_lab: attention needs %lld bytes of shared memory\n", bytes);
    std::exit(1);
  }
}

template <class T>
void test_attention(const AttnCase& c) {
  using K = Lab<T>;
  const std::string tag = std::string("attention ") + type_name<T>() + " " + c.name;
  long long count = 1;
  for (long long e : c.batch) count *= e;
  const bool packed = c.layout == 3;  // q, k, v (and dq, dk, dv) share one storage
  if (packed && (c.batch.size() != 2 || c.tq != c.tk || c.d != c.dv)) {
    std::fprintf(stderr,
                 "kernel_lab: %s: the packed layout needs batch [B, H], Tq == Tk, D == Dv\n",
                 c.name);
    std::exit(1);
  }
  const AttnTensor tq_ = attn_tensor(c.batch, c.tq, c.d, c.layout, 0),
                   tk_ = attn_tensor(c.batch, c.tk, c.d, c.layout, 1),
                   tv_ = attn_tensor(c.batch, c.tk, c.dv, c.layout, 2),
                   to_ = attn_tensor(c.batch, c.tq, c.dv, c.layout);
  std::vector<T> q = random_vector<T>(tq_.size, -2, 2), k = random_vector<T>(tk_.size, -2, 2),
                 v = random_vector<T>(tv_.size);
  const std::vector<T> dout = random_vector<T>(to_.size);
  if (packed) {  // one storage, q's: k's and v's heads written into their parts of it
    for (long long b = 0; b < count; ++b)
      for (long long i = 0; i < c.tk; ++i)
        for (long long f = 0; f < c.d; ++f) {
          q[tk_.at(b, i, f)] = k[tk_.at(b, i, f)];
          q[tv_.at(b, i, f)] = v[tv_.at(b, i, f)];
        }
    k = q;
    v = q;
  }
  const double scale = 1.0 / std::sqrt(double(c.d));
  // The mask: [batch..., tq, tk], row-major, axis 0 broadcast (stride 0) for mask 2.
  std::vector<long long> mshape = c.batch;
  mshape.push_back(c.tq);
  mshape.push_back(c.tk);
  std::vector<long long> mstride = row_major_strides(mshape);
  long long msize = 1;
  for (long long e : mshape) msize *= e;
  if (c.mask == 2) {
    msize /= c.batch[0];
    mstride[0] = 0;
  }
  std::vector<int> mask(std::max(msize, 1LL), 1);
  if (c.mask) {
    std::uniform_real_distribution<double> u(0, 1);
    for (int& x : mask) x = u(g_rng) < 0.6 ? 1 : 0;
    for (long long e = 0; e < msize; ++e)  // rows (i % 4 == 1) fully blocked in some batches
      if ((e / c.tk) % c.tq % 4 == 1 && (e / (c.tq * c.tk)) % 2 == 0) mask[e] = 0;
  }
  const AttnTensor tm = [&] {
    AttnTensor a;
    a.dims = make_dims(mshape, mstride);
    const int nb = int(c.batch.size());
    for (long long b = 0; b < count; ++b) {
      long long rest = b, off = 0;
      for (int x = nb - 1; x >= 0; --x) {
        off += (rest % c.batch[x]) * mstride[x];
        rest /= c.batch[x];
      }
      a.batch_offset.push_back(off);
    }
    a.rs = mstride[nb];
    a.fs = mstride[nb + 1];
    return a;
  }();
  auto kept = [&](long long b, long long i, long long j) {
    if (c.causal && j > i) return false;
    return c.mask == 0 || mask[tm.at(b, i, j)] != 0;
  };

  // The reference, materialised in double.
  const long long rows = count * c.tq;
  std::vector<double> o_ref(rows * c.dv, 0), lse_ref(rows), delta_ref(rows, 0),
      dq_ref(rows * c.d, 0), dk_ref(count * c.tk * c.d, 0), dv_ref(count * c.tk * c.dv, 0);
  std::vector<char> blocked_row(rows, 0);
  for (long long b = 0; b < count; ++b)
    for (long long i = 0; i < c.tq; ++i) {
      const long long row = b * c.tq + i;
      std::vector<double> s(c.tk), p(c.tk, 0), dp(c.tk, 0);
      double m = -INFINITY, l = 0;
      for (long long j = 0; j < c.tk; ++j) {
        double acc = 0;
        for (long long f = 0; f < c.d; ++f)
          acc += double(q[tq_.at(b, i, f)]) * double(k[tk_.at(b, j, f)]);
        s[j] = acc * scale;
        if (kept(b, i, j)) m = std::max(m, s[j]);
      }
      for (long long j = 0; j < c.tk; ++j)
        if (kept(b, i, j)) l += std::exp(s[j] - m);
      blocked_row[row] = l == 0;
      lse_ref[row] = l == 0 ? -INFINITY : m + std::log(l);
      if (l == 0) continue;
      for (long long j = 0; j < c.tk; ++j)
        if (kept(b, i, j)) p[j] = std::exp(s[j] - m) / l;
      for (long long j = 0; j < c.tk; ++j)
        for (long long f = 0; f < c.dv; ++f) {
          o_ref[row * c.dv + f] += p[j] * double(v[tv_.at(b, j, f)]);
          dp[j] += double(dout[to_.at(b, i, f)]) * double(v[tv_.at(b, j, f)]);
        }
      for (long long j = 0; j < c.tk; ++j) delta_ref[row] += p[j] * dp[j];
      for (long long j = 0; j < c.tk; ++j) {
        if (p[j] == 0) continue;
        const double ds = p[j] * (dp[j] - delta_ref[row]);
        for (long long f = 0; f < c.d; ++f) {
          dq_ref[row * c.d + f] += scale * ds * double(k[tk_.at(b, j, f)]);
          dk_ref[(b * c.tk + j) * c.d + f] += scale * ds * double(q[tq_.at(b, i, f)]);
        }
        for (long long f = 0; f < c.dv; ++f)
          dv_ref[(b * c.tk + j) * c.dv + f] += p[j] * double(dout[to_.at(b, i, f)]);
      }
    }

  // Packed: the one storage dq_in holds q, k and v (dk_in, dv_in its copies, unused).
  DeviceArray<T> dq_in(q), dk_in(k), dv_in(v), ddout(dout);
  const T* const q_p = dq_in.p + tq_.base;
  const T* const k_p = (packed ? dq_in.p : dk_in.p) + tk_.base;
  const T* const v_p = (packed ? dq_in.p : dv_in.p) + tv_.base;
  DeviceArray<int> dmask(mask);
  const int* const mask_p = c.mask ? dmask.p : nullptr;
  const double rel = sizeof(T) == 4 ? 1e-4 : 1e-11;
  auto gather = [&](const std::vector<T>& got, const AttnTensor& t, long long n, long long f) {
    std::vector<T> r(count * n * f);
    for (long long b = 0; b < count; ++b)
      for (long long i = 0; i < n; ++i)
        for (long long x = 0; x < f; ++x) r[(b * n + i) * f + x] = got[t.at(b, i, x)];
    return r;
  };
  auto check = [&](const std::string& what, const std::vector<T>& got,
                   const std::vector<double>& want, double tol) {
    double mx = 1;
    for (double w : want) mx = std::max(mx, std::fabs(w));
    report(what, max_abs_err(got, want), tol * mx);
  };
  const bool small = c.d <= 64 && c.dv <= 64;
  // Variants: 0 generic, 1 d64 (SIMT, T); f32 only: 2 TF32 generic, 3 TF32 d64, 4 bf16
  // generic, 5 bf16 d64 (the tensor-core ones share their shared-memory layout), 6 TF32
  // and 7 bf16 attention64.cuh (heads of at most 64: blocks of 128, their own tiles); 8
  // bf16 and 9 TF32 attention64 whose forward tests each entry's kept bit (the lab's
  // policies; they must match 7 and 6 bitwise: the all-kept path changes no bit).
  std::vector<T> a64_bits[2][5];  // variants 6's and 7's out, lse, dq, dk, dv
  for (int variant = 0; variant < 10; ++variant) {
    const bool a64 = variant >= 6, each_kept = variant >= 8;
    const bool d64 = variant % 2 == 1 && !a64,
               tf32 = variant == 2 || variant == 3 || variant == 6 || variant == 9,
               bf16 = variant == 4 || variant == 5 || variant == 7 || variant == 8;
    if ((d64 || a64) && !small) continue;
    if ((tf32 || bf16) && sizeof(T) != 4) continue;
    const char* const kind = tf32 ? "tf32 " : bf16 ? "bf16 " : "";
    const std::string vt =
        tag + " (" + kind +
        (each_kept ? "attention64, each entry tested)"
         : a64     ? "attention64)"
         : d64     ? "d64)"
                   : "generic)");
    unsigned block = vouch::attention_block();
    auto fwd = d64 ? K::attention_forward_d64 : K::attention_forward;
    auto dkdv = d64 ? K::attention_dkdv_d64 : K::attention_dkdv;
    auto dqk = d64 ? K::attention_dq_d64 : K::attention_dq;
    long long fbytes = vouch::attention_forward_shared_bytes(sizeof(T));
    long long bbytes = vouch::attention_backward_shared_bytes(sizeof(T));
    if constexpr (sizeof(T) == 4) {
      if (tf32) {
        fwd = d64 ? lab_attention_forward_tf32_d64_f32 : lab_attention_forward_tf32_f32;
        dkdv = d64 ? lab_attention_dkdv_tf32_d64_f32 : lab_attention_dkdv_tf32_f32;
        dqk = d64 ? lab_attention_dq_tf32_d64_f32 : lab_attention_dq_tf32_f32;
      }
      if (bf16) {
        fwd = d64 ? lab_attention_forward_bf16_d64_f32 : lab_attention_forward_bf16_f32;
        dkdv = d64 ? lab_attention_dkdv_bf16_d64_f32 : lab_attention_dkdv_bf16_f32;
        dqk = d64 ? lab_attention_dq_bf16_d64_f32 : lab_attention_dq_bf16_f32;
      }
      if (tf32 || bf16) {
        fbytes = vouch::attention_tf32_forward_shared_bytes();
        bbytes = vouch::attention_tf32_backward_shared_bytes();
      }
      if (a64) {
        fwd = tf32 ? lab_attention64_forward_tf32_f32 : lab_attention64_forward_bf16_f32;
        dkdv = tf32 ? lab_attention64_dkdv_tf32_f32 : lab_attention64_dkdv_bf16_f32;
        dqk = tf32 ? lab_attention64_dq_tf32_f32 : lab_attention64_dq_bf16_f32;
        if (each_kept)
          fwd = tf32 ? lab_attention64_forward_tf32_each_kept_f32
                     : lab_attention64_forward_bf16_each_kept_f32;
        fbytes = vouch::attention64_forward_shared_bytes();
        bbytes = std::max(vouch::attention64_dq_shared_bytes(),
                          vouch::attention64_dkdv_shared_bytes());
        block = vouch::kAttention64Threads;
      }
    }
    // TF32 (10 mantissa bits, as cuBLAS's TF32 mode): ~1e-3 of the magnitudes expected.
    // bf16 (8 bits, round to nearest even: relative error up to 2^-8 = 3.9e-3 per operand):
    // a CPU model of these kernels' roundings over these cases gave at most ~6e-3 of the
    // largest |reference| (dk, dv and delta worst); 2e-2 leaves 3x for the tensor cores'
    // own accumulation, yet a wrong fragment layout (errors ~ the values) still fails.
    const double tol = tf32 ? 5e-3 : bf16 ? 2e-2 : rel;
    attn_set_shared<T>(fwd, fbytes);
    attn_set_shared<T>(dkdv, bbytes);
    attn_set_shared<T>(dqk, bbytes);
    const unsigned qgrid = unsigned(vouch::attention_tile_grid(count, c.tq));
    const unsigned kgrid = unsigned(vouch::attention_tile_grid(count, c.tk));
    std::vector<T> out_runs[2], lse_runs[2], dq_runs[2], dk_runs[2], dv_runs[2], delta_got;
    for (int run = 0; run < 2; ++run) {
      // Packed: dq, dk and dv written into one storage (dk and dv unused).
      DeviceArray<T> out(to_.size), lse(rows), delta(rows), dq(tq_.size),
          dk(packed ? 0 : tk_.size), dv(packed ? 0 : tv_.size);
      T* const dq_p = dq.p + tq_.base;
      T* const dk_p = (packed ? dq.p : dk.p) + tk_.base;
      T* const dv_p = (packed ? dq.p : dv.p) + tv_.base;
      // A one-block grid on the second run: the tile loop (the same bits either way).
      fwd<<<run ? 1 : qgrid, block, fbytes>>>(q_p, tq_.dims, k_p, tk_.dims, v_p, tv_.dims,
                                               mask_p, tm.dims, out.p, to_.dims, lse.p,
                                               c.causal, scale);
      LAB_LAUNCHED();
      K::attention_delta<<<run ? 1u : unsigned(vouch::attention_delta_grid(count, c.tq)), 256>>>(
          ddout.p, to_.dims, out.p, to_.dims, delta.p);
      LAB_LAUNCHED();
      auto launch_dkdv = [&] {
        dkdv<<<run ? 1 : kgrid, block, bbytes>>>(
            q_p, tq_.dims, k_p, tk_.dims, v_p, tv_.dims, mask_p, tm.dims, ddout.p, to_.dims,
            lse.p, delta.p, dk_p, tk_.dims, dv_p, tv_.dims, c.causal, scale);
        LAB_LAUNCHED();
      };
      auto launch_dq = [&] {
        dqk<<<run ? 1 : qgrid, block, bbytes>>>(q_p, tq_.dims, k_p, tk_.dims, v_p, tv_.dims,
                                                 mask_p, tm.dims, ddout.p, to_.dims, lse.p,
                                                 delta.p, dq_p, tq_.dims, c.causal, scale);
        LAB_LAUNCHED();
      };
      // Packed, the second run writes dq first: a kernel writing outside its own part of
      // the storage shows in the first run's checks (dq's) or in the repeat's bits (dkdv's).
      if (packed && run) {
        launch_dq();
        launch_dkdv();
      } else {
        launch_dkdv();
        launch_dq();
      }
      out_runs[run] = gather(out.download(), to_, c.tq, c.dv);
      lse_runs[run] = lse.download();
      const std::vector<T> dq_h = dq.download();
      dq_runs[run] = gather(dq_h, tq_, c.tq, c.d);
      dk_runs[run] = gather(packed ? dq_h : dk.download(), tk_, c.tk, c.d);
      dv_runs[run] = gather(packed ? dq_h : dv.download(), tv_, c.tk, c.dv);
      if (run == 0) delta_got = delta.download();
    }
    lse_runs[0].resize(rows);
    lse_runs[1].resize(rows);
    delta_got.resize(rows);
    check(vt + " out", out_runs[0], o_ref, tol);
    std::vector<T> lse_kept;
    std::vector<double> lse_want;
    long long blocked = 0, blocked_wrong = 0;
    for (long long row = 0; row < rows; ++row) {
      if (!blocked_row[row]) {
        lse_kept.push_back(lse_runs[0][row]);
        lse_want.push_back(lse_ref[row]);
        continue;
      }
      ++blocked;
      blocked_wrong += !(std::isinf(double(lse_runs[0][row])) && lse_runs[0][row] < 0);
      for (long long f = 0; f < c.dv; ++f)
        blocked_wrong += std::memcmp(&out_runs[0][row * c.dv + f], "\0\0\0\0\0\0\0\0",
                                     sizeof(T)) != 0;
      for (long long f = 0; f < c.d; ++f)
        blocked_wrong += std::memcmp(&dq_runs[0][row * c.d + f], "\0\0\0\0\0\0\0\0",
                                     sizeof(T)) != 0;
    }
    check(vt + " lse", lse_kept, lse_want, tol);
    check(vt + " delta", delta_got, delta_ref, tol);
    check(vt + " dq", dq_runs[0], dq_ref, tol);
    check(vt + " dk", dk_runs[0], dk_ref, tol);
    check(vt + " dv", dv_runs[0], dv_ref, tol);
    if (c.mask)
      report_bitwise(vt + " fully blocked rows (" + std::to_string(blocked) +
                         "): out, dq +0, lse -inf",
                     blocked_wrong, blocked * (c.d + c.dv + 1));
    report_bitwise(vt + " repeat (grid 1) out, lse",
                   bit_mismatches(out_runs[0], out_runs[1]) +
                       bit_mismatches(lse_runs[0], lse_runs[1]),
                   rows * (c.dv + 1));
    report_bitwise(vt + " repeat (grid 1) dq, dk, dv",
                   bit_mismatches(dq_runs[0], dq_runs[1]) + bit_mismatches(dk_runs[0], dk_runs[1]) +
                       bit_mismatches(dv_runs[0], dv_runs[1]),
                   rows * c.d + count * c.tk * (c.d + c.dv));
    std::vector<T>(&bits)[5] = a64_bits[bf16 ? 1 : 0];
    if (a64 && !each_kept) {
      bits[0] = out_runs[0], bits[1] = lse_runs[0], bits[2] = dq_runs[0];
      bits[3] = dk_runs[0], bits[4] = dv_runs[0];
    }
    if (each_kept && !bits[0].empty())
      report_bitwise(vt + " against the all-kept path: out, lse, dq, dk, dv",
                     bit_mismatches(out_runs[0], bits[0]) + bit_mismatches(lse_runs[0], bits[1]) +
                         bit_mismatches(dq_runs[0], bits[2]) +
                         bit_mismatches(dk_runs[0], bits[3]) + bit_mismatches(dv_runs[0], bits[4]),
                     rows * (c.dv + 1 + c.d) + count * c.tk * (c.d + c.dv));
  }

  // attention64's bf16 products given q, k, v as bf16 bits (the f32 storage rounded to
  // nearest even, as codegen's bf16 qkv buffer holds them): the f32-input kernels
  // (variant 7) round the same values by cvt.rn.bf16x2 into the same tiles, so out, lse,
  // dq, dk and dv must be variant 7's bits. The second run on a one-block grid. bf16 rows
  // go by cp.async where they are whole 16-byte vectors (feature stride 1, row stride and
  // D multiples of 8, 16-byte aligned), else by plain loads: cases (c), (c2), (k), (m).
  if constexpr (sizeof(T) == 4) {
    if (small) {
      const std::vector<T>(&want)[5] = a64_bits[1];
      const std::string vt = tag + " (bf16 attention64, q k v bf16)";
      DeviceArray<unsigned short> q16(bf16_bits_of(q)), k16(bf16_bits_of(k)),
          v16(bf16_bits_of(v));
      const unsigned short* const q16_p = q16.p + tq_.base;
      const unsigned short* const k16_p = (packed ? q16.p : k16.p) + tk_.base;
      const unsigned short* const v16_p = (packed ? q16.p : v16.p) + tv_.base;
      const long long fbytes = vouch::attention64_forward_shared_bytes(true);
      const long long bbytes = std::max(vouch::attention64_dq_shared_bytes(true),
                                        vouch::attention64_dkdv_shared_bytes(true));
      // codegen's launch bounds: forward and dq three blocks an SM, dkdv two.
      attn_set_shared<T>(lab_attention64_forward_bf16_qkv_bf16_b3, fbytes);
      attn_set_shared<T>(lab_attention64_dkdv_bf16_qkv_bf16, bbytes);
      attn_set_shared<T>(lab_attention64_dq_bf16_qkv_bf16_b3, bbytes);
      const unsigned block = vouch::kAttention64Threads;
      const unsigned qgrid = unsigned(vouch::attention_tile_grid(count, c.tq));
      const unsigned kgrid = unsigned(vouch::attention_tile_grid(count, c.tk));
      for (int run = 0; run < 2; ++run) {
        DeviceArray<T> out(to_.size), lse(rows), delta(rows), dq(tq_.size),
            dk(packed ? 0 : tk_.size), dv(packed ? 0 : tv_.size);
        T* const dq_p = dq.p + tq_.base;
        T* const dk_p = (packed ? dq.p : dk.p) + tk_.base;
        T* const dv_p = (packed ? dq.p : dv.p) + tv_.base;
        lab_attention64_forward_bf16_qkv_bf16_b3<<<run ? 1 : qgrid, block, fbytes>>>(
            q16_p, tq_.dims, k16_p, tk_.dims, v16_p, tv_.dims, mask_p, tm.dims, out.p, to_.dims,
            lse.p, c.causal, scale);
        LAB_LAUNCHED();
        K::attention_delta<<<run ? 1u : unsigned(vouch::attention_delta_grid(count, c.tq)),
                             256>>>(ddout.p, to_.dims, out.p, to_.dims, delta.p);
        LAB_LAUNCHED();
        lab_attention64_dkdv_bf16_qkv_bf16<<<run ? 1 : kgrid, block, bbytes>>>(
            q16_p, tq_.dims, k16_p, tk_.dims, v16_p, tv_.dims, mask_p, tm.dims, ddout.p,
            to_.dims, lse.p, delta.p, dk_p, tk_.dims, dv_p, tv_.dims, c.causal, scale);
        LAB_LAUNCHED();
        lab_attention64_dq_bf16_qkv_bf16_b3<<<run ? 1 : qgrid, block, bbytes>>>(
            q16_p, tq_.dims, k16_p, tk_.dims, v16_p, tv_.dims, mask_p, tm.dims, ddout.p,
            to_.dims, lse.p, delta.p, dq_p, tq_.dims, c.causal, scale);
        LAB_LAUNCHED();
        const std::vector<T> dq_h = dq.download();
        std::vector<T> lse_h = lse.download();
        lse_h.resize(rows);
        const BitDiff diff[5] = {
            bit_diff(gather(out.download(), to_, c.tq, c.dv), want[0]),
            bit_diff(lse_h, want[1]),
            bit_diff(gather(dq_h, tq_, c.tq, c.d), want[2]),
            bit_diff(gather(packed ? dq_h : dk.download(), tk_, c.tk, c.d), want[3]),
            bit_diff(gather(packed ? dq_h : dv.download(), tv_, c.tk, c.dv), want[4])};
        const char* const names[5] = {"out", "lse", "dq", "dk", "dv"};
        long long differ = 0;
        for (const BitDiff& d : diff) differ += d.count;
        report_bitwise(vt + (run ? " (grid 1)" : "") +
                           " out, lse, dq, dk, dv against f32 q k v's",
                       differ, rows * (c.dv + 1 + c.d) + count * c.tk * (c.d + c.dv));
        for (int x = 0; x < 5; ++x) print_bit_diff(names[x], diff[x]);
      }
    }
  }
}

template <class T>
void test_attention_all() {
  const AttnCase cases[] = {
      {"(a) no mask [3,17,8] x [3,17,8]", {3}, 17, 17, 8, 8, false, 0, 0},
      {"(b) causal [2,64,64]", {2}, 64, 64, 64, 64, true, 0, 0},
      {"(c) Tq=5 Tk=37 D=33 Dv=7 random mask, blocked rows", {2}, 5, 37, 33, 7, false, 1, 0},
      {"(c2) causal Tq=70 Tk=130 D=33 Dv=7 random mask", {2}, 70, 130, 33, 7, true, 1, 0},
      {"(d) batch [2,3] mask broadcast over axis 0, T=40 D=16", {2, 3}, 40, 40, 16, 16, false, 2,
       0},
      {"(e) causal [B,T,H,D] viewed as [B,H,T,D] 2x3, T=50 D=24", {2, 3}, 50, 50, 24, 24, true, 0,
       1},
      {"(g) causal feature stride 2, T=70 D=130 Dv=200, mask", {2}, 70, 70, 130, 200, true, 1, 2},
      {"(f) causal batch [2,2] T=1024 D=64", {2, 2}, 1024, 1024, 64, 64, true, 0, 0},
      {"(h) causal [B,T,H,D] Tq=100 Tk=200 D=64 random mask, blocked rows", {2, 2}, 100, 200,
       64, 64, true, 1, 1},
      // qkv_attention's packed heads: batch [B, H], q, k, v at offsets 0, H·D, 2·H·D of
      // one [B, T, 3·H·D] storage.
      {"(i) causal packed qkv [B,T,3HD] 2x3, T=50 D=24", {2, 3}, 50, 50, 24, 24, true, 0, 3},
      {"(j) causal packed qkv 2x12 (GPT-2's heads), T=160 D=64", {2, 12}, 160, 160, 64, 64,
       true, 0, 3},
      {"(k) packed qkv 2x3, T=70 D=10 (HD=30: rows not 16-byte multiples) random mask, "
       "blocked rows",
       {2, 3}, 70, 70, 10, 10, false, 1, 3},
      // Heads below 64 features: D, Dv multiples of 8 (bf16 rows of whole 16-byte vectors,
      // the tile's last chunks zeros), then multiples of 4 but not 8 (f32 rows by cp.async,
      // bf16 ones by plain loads).
      {"(l) causal [2,3] T=100 D=40 Dv=24", {2, 3}, 100, 100, 40, 24, true, 0, 0},
      {"(m) Tq=90 Tk=75 D=36 Dv=20 random mask, blocked rows", {2}, 90, 75, 36, 20, false, 1,
       0},
  };
  for (const AttnCase& c : cases) test_attention<T>(c);
}


template <class T>
void validate() {
  for (long long n : {1LL, 3LL, 4LL, 7LL, 8LL, 1000LL, 1001LL, 1LL << 20, (1LL << 20) + 2})
    test_pointwise<T>(n, 0, false);
  test_pointwise<T>(4096, 1, false);       // n % 4 == 0 but misaligned: scalar path
  test_pointwise<T>(1000003, 0, true);     // one block: the grid-stride loop
  test_pointwise<T>(1 << 20, 0, true);

  for (bool max : {true, false}) {
    test_reduce_extreme<T>({7, 33, 5}, {1}, max, false);
    if (max) {  // once per element type
      test_cross_entropy<T>(37, 10, 16, false);     // grid-stride rows in the gradient
      test_cross_entropy<T>(9, 1000, 65535, false);   // several classes per thread
      test_cross_entropy<T>(12, 7, 4, true);
      test_cross_entropy<T>(2500, 300, 700, false);   // loss: several rows per block
      test_cross_entropy<T>(3, 50257, 3, false);      // GPT-2's vocabulary: the 8-wide loop
      test_cross_entropy<T>(1500, 9, 1500, true);     // NaN through the last block's sum
      // Padded rows (vouch-pad-classes): GPT-2's vocabulary at the tf32 and bf16
      // quanta, a short row, and a bad label's NaN row with its padding.
      test_cross_entropy<T>(5, 50257, 5, false, 50260);
      test_cross_entropy<T>(4, 50257, 2, false, 50264);
      test_cross_entropy<T>(37, 13, 16, false, 16);
      test_cross_entropy<T>(12, 4099, 4, true, 4100);
    }
    test_reduce_extreme<T>({300, 513}, {1}, max, false);   // count > 256
    test_reduce_extreme<T>({4099, 3}, {1}, max, false);    // grid-stride outputs
    test_reduce_extreme<T>({3, 4, 5, 6}, {0, 2}, max, true);
  }
  for (bool mean : {false, true}) {
    test_reduce<T>({7, 33, 5}, {0}, mean);        // leading
    test_reduce<T>({7, 33, 5}, {2}, mean);        // trailing
    test_reduce<T>({7, 33, 5}, {1}, mean);        // middle
    test_reduce<T>({7, 33, 5}, {0, 2}, mean);     // outer two
    test_reduce<T>({7, 33, 5}, {0, 1, 2}, mean);  // everything: rank-0 result
    test_reduce<T>({300, 513}, {1}, mean);        // count > 256: several per thread
    test_reduce<T>({300, 513}, {0}, mean);
    test_reduce<T>({2, 1000, 3}, {1}, mean);
    test_reduce<T>({4099, 3}, {1}, mean);         // outputs > 4096 blocks: grid-stride
    test_reduce<T>({3, 4, 5, 6}, {1, 3}, mean);
    test_reduce<T>({5, 3001}, {1}, mean);         // count > 1024: four loads in flight
    test_reduce<T>({1100, 3}, {0}, mean);         // the same through a strided axis
    test_column_sum<T>(1000, 70, mean);
    test_column_sum<T>(5001, 33, mean);           // sixteen loads in flight, then the tail
    test_column_sum<T>(3, 32, mean);
    test_column_sum<T>(33, 100, mean);
    test_column_sum<T>(1, 40, mean);
    test_column_sum<T>(8192, 768, mean);          // GPT-2's bias gradient: 11 slabs
    test_column_sum<T>(3001, 33, mean);           // 11 slabs, the last one short
  }
  for (long long n : {1LL, 5LL, 255LL, 256LL, 1000LL, 100003LL, 6291456LL})
    test_mse<T>(n, vouch::mse_loss_grid(n));
  test_mse<T>(100003, 1);   // one block: the single-block order
  test_mse<T>(100003, 7);   // blocks that end unevenly
  for (bool take_log : {false, true}) {
    test_softmax<T>(7, 33, 1, take_log);
    test_softmax<T>(3, 1000, 1, take_log);   // n > 256: several elements per thread
    test_softmax<T>(2, 5, 3, take_log);      // an inner axis: strided rows
    test_softmax<T>(5000, 4, 1, take_log);   // rows > 4096: grid-stride
    test_softmax<T>(3, 5000, 1, take_log);   // n > 4096: long rows, aligned
    test_softmax<T>(5, 5001, 1, take_log);   // long rows split differently row to row
    // The register paths (rows.cuh): a warp's 16-byte vectors (768), the block's (3072),
    // the block's scalar layout (3001); long rows split at 16-byte boundaries (5001:
    // heads and tails) and GPT-2's vocabulary.
    test_softmax<T>(5, 768, 1, take_log);
    test_softmax<T>(4, 3072, 1, take_log);
    test_softmax<T>(3, 3001, 1, take_log);
    test_softmax<T>(7, 5001, 1, take_log);
    test_softmax<T>(2, 50257, 1, take_log);
    test_softmax_neg_inf<T>(take_log);
  }
  test_softmax_nan<T>();
  test_masked_softmax<T>(9, 33, 1, false);
  test_masked_softmax<T>(3, 1000, 1, false);  // n > 256: several elements per thread
  test_masked_softmax<T>(4, 5, 3, true);      // strided rows, a broadcast mask
  test_masked_softmax<T>(5000, 4, 1, false);  // rows > 4096: grid-stride
  test_masked_softmax<T>(6, 768, 1, true);    // a warp's vectors, a mask broadcast over rows
  test_masked_softmax<T>(5, 768, 1, false);   // the mask's own vectors
  test_masked_softmax<T>(3, 3000, 1, false);  // the block's
  test_masked_softmax<T>(3, 5001, 1, false);  // long rows
  for (bool affine : {false, true}) {
    test_layer_norm<T>(7, 40, affine, affine);
    test_layer_norm<T>(3, 1000, affine, false);
    test_layer_norm<T>(5000, 8, false, affine);
    test_layer_norm<T>(2, 1, affine, affine);
    // The fused backward's chunks: rows not a multiple of 32, more chunks than the
    // grid's 512 blocks (blocks take several), GPT-2's d = 768.
    test_layer_norm<T>(1000, 64, affine, affine);
    test_layer_norm<T>(20001, 64, affine, affine);
    test_layer_norm<T>(515, 768, affine, affine);
    // batch_norm: BatchNorm1d [N, C] (a column per channel), [N, C, L], 2d's [N, C, H·W],
    // odd extents, and a channel of many elements split over a cluster.
    test_batch_norm<T>(64, 10, 1, affine, affine, false);
    test_batch_norm<T>(7, 3, 13, affine, !affine, false);
    test_batch_norm<T>(4, 5, 1000, !affine, affine, false);
    test_batch_norm<T>(2, 1, 3, affine, affine, false);
    test_batch_norm<T>(16, 4, 9000, affine, affine, true);
    test_batch_norm<T>(33, 3, 17, affine, affine, true);
  }
  test_layer_norm<T>(333, 768, true, false);
  // More channels than a launch has in flight: blocks take several, grid-stride.
  test_batch_norm<T>(4, 20000, 1, true, true, false);
  // The block's register path (3072: vectors, 2001: scalar layout) and the general one.
  test_layer_norm<T>(100, 3072, true, true);
  test_layer_norm<T>(70, 2001, true, true);
  test_layer_norm<T>(9, 5001, true, true);
  test_layer_norm<T>(40, 3072, false, false);
  test_layer_norm<T>(333, 64, false, true);
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      test_small_product<T>(1, 8, 1, 1, ta, tb, false);  // the quickstart's weight gradient
      test_small_product<T>(3, 5, 7, 9, ta, tb, false);  // batched, every flag
    }
  test_small_product<T>(1, 1, 8, 2, false, true, true);   // the quickstart's first layer
  test_small_product<T>(1, 561, 100, 1, false, true, true);  // grid over > 256 outputs

  test_permute<T>({2, 3, 4, 5}, {3, 1, 0, 2});
  test_permute<T>({2, 3, 4, 5}, {0, 1, 2, 3});
  test_permute<T>({64, 33}, {1, 0});
  test_permute<T>({5, 1, 7}, {2, 1, 0});
  // The last axis kept (quads too): a transformer's heads both ways, and a grid-stride
  // loop over more quads than the grid has threads.
  test_permute<T>({2, 5, 3, 8}, {0, 2, 1, 3});
  test_permute<T>({2, 3, 5, 8}, {0, 2, 1, 3});
  test_permute<T>({8, 128, 12, 96}, {0, 2, 1, 3});
  test_permute<T>({3, 4, 6, 12}, {2, 0, 1, 3});
  test_permute<T>({6, 4}, {1, 0});  // last axis moved: no quads
  test_broadcast<T>({5}, {4, 5}, {1});          // new leading axis
  test_broadcast<T>({3, 1}, {3, 4}, {0, 1});    // extent 1 -> 4
  test_broadcast<T>({}, {6, 7}, {});            // rank-0 to a matrix
  test_broadcast<T>({2, 1, 3}, {2, 5, 3}, {0, 1, 2});
  test_broadcast<T>({4}, {4, 9}, {0});          // trailing repeat
  test_broadcast<T>({8}, {3, 8}, {1});          // rows of 8: quads too

  for (long long n : {1LL, 1000LL, 100003LL}) test_gelu<T>(n);
  test_slice<T>(4, 8, 1, 1, 8, 2, false);        // h[:, 1::2]
  test_slice<T>(5, 6, 7, 2, 5, 1, false);        // a middle axis
  test_slice<T>(1, 1000, 3, 0, 1000, 7, false);
  test_slice<T>(300, 70, 11, 69, 70, 1, true);   // one block: the grid-stride loop
  test_concat<T>(5, {4, 3, 2}, 1, false);        // features of a batch
  test_concat<T>(1, {2, 5, 1}, 6, false);        // the leading axis
  test_concat<T>(70, {33, 1, 64}, 9, true);
  // Whole quads: a qkv split on the last axis and its gradient's concat, rows of quads,
  // and one block over many quads (the grid-stride loop).
  test_slice<T>(6, 24, 1, 8, 16, 1, false);
  test_slice<T>(3, 5, 8, 1, 5, 2, false);
  test_slice<T>(512, 96, 1, 32, 64, 1, true);
  test_concat<T>(6, {8, 8, 8}, 1, false);
  test_concat<T>(2, {1, 2, 3}, 4, false);
  // Convolution windows: 1-D to 3-D, strides, padding, dilation, groups, odd extents, a
  // grid smaller than the windows that fit (conv_transpose's gradient), one block (the
  // grid-stride loops), and a ResNet-18 CIFAR layer's shape (64 channels of 32x32, 3x3,
  // padding 1, batch 8).
  test_conv_windows<T>({2, 3, 1, {7}, {4}, {3}, {2}, {1}, {1}, "1-D stride 2 pad 1"}, false);
  test_conv_windows<T>({2, 4, 2, {9}, {3}, {2}, {2}, {0}, {3}, "1-D dilation 3, 2 groups, grid 3 of 4"},
                       false);
  test_conv_windows<T>({3, 6, 3, {5, 6}, {3, 3}, {3, 2}, {2, 2}, {1, 0}, {1, 2},
                        "2-D strides, dilation, 3 groups"}, false);
  test_conv_windows<T>({2, 4, 2, {3, 4, 5}, {2, 2, 3}, {2, 3, 2}, {1, 2, 2}, {0, 1, 1}, {2, 1, 1},
                        "3-D everything"}, false);
  test_conv_windows<T>({5, 8, 1, {9, 7}, {9, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, "2-D pad 1"}, true);
  test_conv_windows<T>({8, 64, 1, {32, 32}, {32, 32}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                        "ResNet-18 CIFAR 64x32x32 3x3"}, false);
  test_conv_windows<T>({8, 64, 1, {32, 32}, {16, 16}, {3, 3}, {2, 2}, {1, 1}, {1, 1},
                        "ResNet-18 CIFAR stride 2"}, false);
  test_col2im_matmul_all<T>();
  test_concat<T>(300, {8, 4, 12}, 1, true);
  test_embedding<T>(37, 10, 8, false, false);      // ids repeat, rows skipped
  test_embedding<T>(1000, 50, 33, true, false);    // one block: the grid-stride loop
  test_embedding<T>(12, 5, 3, false, true);
  test_embedding<T>(3000, 300, 70, false, false);  // chunks of ids, several row groups
  test_embedding<T>(5000, 7, 300, false, false);   // many hits per group, D > 256
  test_embedding<T>(3000, 300, 70, false, true);
  test_embedding<T>(300, 50, 768, true, true);      // a warp per row, grid-stride, bad ids
  test_embedding<T>(2000, 1000, 768, false, false);  // GPT-2's width: a warp per row
  test_embedding<T>(700, 40, 1000, false, false);    // rows in several passes of a warp
  test_gather_scatter<T>(4, 8, 3, 1, false, false);    // the last axis
  test_gather_scatter<T>(5, 6, 9, 7, false, false);    // a middle axis, m > n
  test_gather_scatter<T>(1, 100, 300, 5, true, false); // the first axis, one block
  test_gather_scatter<T>(3, 4, 5, 2, false, true);
  // Pooling: 1-D overlapping padded windows, 2-D stride != kernel, 3-D, gaps (stride >
  // kernel), a big plane (grid-stride), one block, a NaN.
  test_pool<T>(lab_pool_shape(6, {1, 1, 9}, {1, 1, 3}, {1, 1, 2}, {0, 0, 1}), false, false);
  test_pool<T>(lab_pool_shape(5, {1, 7, 6}, {1, 3, 2}, {1, 2, 1}, {0, 1, 1}), false, false);
  test_pool<T>(lab_pool_shape(3, {4, 5, 5}, {2, 3, 3}, {1, 2, 2}, {1, 1, 0}), false, false);
  test_pool<T>(lab_pool_shape(4, {1, 9, 9}, {1, 2, 2}, {1, 3, 3}, {0, 1, 0}), false, false);
  test_pool<T>(lab_pool_shape(256, {1, 28, 28}, {1, 3, 3}, {1, 2, 2}, {0, 1, 1}), false, false);
  test_pool<T>(lab_pool_shape(64, {3, 8, 8}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}), true, false);
  test_pool<T>(lab_pool_shape(3, {1, 6, 7}, {1, 3, 3}, {1, 2, 2}, {0, 1, 1}), false, true);
  for (unsigned long long seed : {0ull, 2026ull, ~0ull})
    for (long long step : {0LL, 1LL, 123456789LL, (1LL << 62) + 3})
      test_random<T>(seed, step, seed == 2026 ? 5 : 0, 1000, false);
  test_random<T>(11, 199, 3, 1000003, false);
  test_random<T>(11, 199, 3, 300001, true);  // one block: the grid-stride loop
  for (long long n : {8LL, 1000LL, 100003LL}) test_cast<T>(n);

  std::vector<Hyper> hypers = {
      {hyper(0, 0.05, 0, 0, 0, 0, 0), 0, "sgd"},
      {hyper(0, 0.05, 0, 0, 0, 0.01, 0.9), 0, "sgd momentum=0.9 wd=0.01"},
      {hyper(1, 0.03, 0.9, 0.999, 1e-8, 0, 0), 0, "adam"},
      {hyper(1, 0.03, 0.9, 0.999, 1e-8, 0.01, 0), 0, "adam wd=0.01 (L2)"},
      {hyper(2, 0.03, 0.9, 0.999, 1e-8, 0.01, 0), 0, "adamw wd=0.01"},
      {hyper(3, 0.01, 0, 0, 1e-8, 0, 0, 0.99), 0, "rmsprop"},
      {hyper(3, 0.01, 0, 0, 1e-6, 0.01, 0.5, 0.9), 0, "rmsprop momentum=0.5 wd=0.01 alpha=0.9"},
      {hyper(4, 0.1, 0, 0, 1e-10, 0, 0), 0, "adagrad"},
      {hyper(4, 0.1, 0, 0, 1e-10, 0.01, 0, 0.99, 0.1), 0, "adagrad lr_decay=0.1 wd=0.01"},
      {hyper(0, 0.05, 0, 0, 0, 0, 0), 1.0, "sgd clip_grad_norm=1"},
      {hyper(2, 0.03, 0.9, 0.999, 1e-8, 0.01, 0), 1.0, "adamw clip_grad_norm=1"},
      {hyper(1, 0.03, 0.9, 0.999, 1e-8, 0, 0), 1e6, "adam clip_grad_norm=1e6 (not clipped)"},
  };
  // Schedules: the lr of step i computed on the device from the step counter.
  Hyper step = {hyper(0, 0.05, 0, 0, 0, 0, 0.9), 0, "sgd momentum=0.9 schedule step(2, 0.5)"};
  step.h.schedule = 1, step.h.step_size = 2, step.h.gamma = 0.5;
  Hyper expo = {hyper(3, 0.01, 0, 0, 1e-8, 0, 0), 0, "rmsprop schedule exponential(0.8)"};
  expo.h.schedule = 2, expo.h.gamma = 0.8;
  Hyper warm = {hyper(2, 0.03, 0.9, 0.999, 1e-8, 0.01, 0), 1.0,
                "adamw schedule warmup_cosine(2, 4, 0.001) clip_grad_norm=1"};
  warm.h.schedule = 3, warm.h.warmup = 2, warm.h.total = 4, warm.h.min_lr = 0.001;
  hypers.push_back(step);
  hypers.push_back(expo);
  hypers.push_back(warm);
  for (const Hyper& h : hypers) test_optimizer<T>(h, 5);

  test_executor<T>(13);
  test_executor<T>(2000);
  test_executor<T>(300000);  // more than one block per thread: the grid-stride loop
  test_attention_all<T>();
}


// ------------------------------------------------------------------------- --bench

// Times `launch` (after one warm-up) over `reps` runs; prints ms and the bandwidth of
// `bytes` moved per run; returns the ms.
template <class F>
double bench(const char* what, double bytes, F launch, int reps = 20) {
  cudaEvent_t a, b;
  LAB_CHECK(cudaEventCreate(&a));
  LAB_CHECK(cudaEventCreate(&b));
  launch();
  LAB_LAUNCHED();
  LAB_CHECK(cudaEventRecord(a));
  for (int i = 0; i < reps; ++i) launch();
  LAB_CHECK(cudaEventRecord(b));
  LAB_LAUNCHED();
  float ms = 0;
  LAB_CHECK(cudaEventElapsedTime(&ms, a, b));
  ms /= reps;
  std::printf("BENCH %-60s %9.4f ms  %8.1f GB/s\n", what, ms, bytes / (ms * 1e-3) / 1e9);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms;
}

template <class T>
void run_bench() {
  using K = Lab<T>;
  using R = Lab<T>;
  const std::string t = type_name<T>();
  const long long n = 1LL << 26;  // 256 MiB of f32 per operand: well past the L2
  DeviceArray<T> a(random_vector<T>(n)), b(random_vector<T>(n)), o(n + 4), o1(n + 4);
  bench((t + " pointwise add_relu n=2^26 (128-bit)").c_str(), 3.0 * n * sizeof(T),
        [&] { K::add_relu<<<pointwise_grid(n), 256>>>(o.p, a.p, b.p, n, 0); });
  bench((t + " pointwise add_relu n=2^26-4, misaligned (scalar)").c_str(),
        3.0 * (n - 4) * sizeof(T), [&] {
          K::add_relu<<<pointwise_grid(n - 4), 256>>>(o.p + 1, a.p + 1, b.p + 1, n - 4, 0);
        });
  bench((t + " pointwise mul_sub n=2^26 (NOut=2)").c_str(), 4.0 * n * sizeof(T),
        [&] { K::mul_sub<<<pointwise_grid(n), 256>>>(o.p, o1.p, a.p, b.p, n, 0); });

  const long long rows = 1 << 13, cols = 1 << 13;  // [8192, 8192] of a
  const vouch::Dims none = make_dims({}, {});
  bench((t + " reduce_sum [8192,8192] axes {1} (rows)").c_str(), double(rows * cols) * sizeof(T),
        [&] {
          R::reduce<<<reduce_grid(rows), 256>>>(a.p, o.p, make_dims({rows}, {cols}),
                                                make_dims({cols}, {1}), rows, cols, 1);
        });
  bench((t + " reduce_sum [8192,8192] axes {0} (one block per column)").c_str(),
        double(rows * cols) * sizeof(T), [&] {
          R::reduce<<<reduce_grid(cols), 256>>>(a.p, o.p, make_dims({cols}, {1}),
                                                make_dims({rows}, {cols}), cols, rows, 1);
        });
  bench((t + " column_sum [8192,8192]").c_str(), double(rows * cols) * sizeof(T), [&] {
    // 256 column blocks: one slab (column_sum_slabs), no scratch.
    R::column_sum<<<unsigned((cols + 31) / 32), dim3(32, 32)>>>(a.p, o.p, rows, cols, 1,
                                                                nullptr, nullptr);
  });
  bench((t + " reduce_sum all of 2^26 (one block)").c_str(), double(n) * sizeof(T), [&] {
    R::reduce<<<1, 256>>>(a.p, o.p, none, make_dims({n}, {1}), 1, n, 1);
  }, 3);
  bench((t + " mse_loss n=2^20").c_str(), 2.0 * (1 << 20) * sizeof(T),
        [&] { R::mse<<<unsigned(vouch::mse_loss_grid(1 << 20)), 256>>>(a.p, b.p, o.p, 1 << 20); });
  bench((t + " permute [8192,8192] (1,0)").c_str(), 2.0 * rows * cols * sizeof(T), [&] {
    R::gather<<<elementwise_grid(n), 256>>>(a.p, o.p, make_dims({cols, rows}, {1, cols}), n);
  });
  bench((t + " broadcast [8192] -> [8192,8192]").c_str(), double(n) * sizeof(T), [&] {
    R::gather<<<elementwise_grid(n), 256>>>(a.p, o.p, make_dims({rows, cols}, {0, 1}), n);
  });

  // Adam over a model's params: p, g, m, v read, p, m, v written; the grid the executor
  // launches (executor.cc: min(ceil(quads / 256), 2048) blocks). Three params of 2^26
  // elements together, and GPT-2 small's 148 (124,439,808 elements; wte 50257 x 768).
  std::vector<long long> gpt2 = {50257 * 768, 1024 * 768};
  for (int layer = 0; layer < 12; ++layer)
    for (long long size : {768LL, 768LL, 2304LL * 768, 2304LL, 768LL * 768, 768LL, 768LL, 768LL,
                           3072LL * 768, 3072LL, 768LL * 3072, 768LL})
      gpt2.push_back(size);
  gpt2.push_back(768);
  gpt2.push_back(768);
  for (const auto& [what, sizes] :
       {std::pair<const char*, std::vector<long long>>{"3 params, 2^26 elements",
                                                      {1LL << 25, 1LL << 24, 1LL << 24}},
        {"GPT-2's 148 params, 124M elements", gpt2}}) {
    std::vector<vouch::ParamSlot<T>> slots;
    std::vector<DeviceArray<T>*> bufs;
    long long elements = 0;
    for (long long size : sizes) {
      for (int k = 0; k < 4; ++k) {
        bufs.push_back(new DeviceArray<T>(size));
        LAB_CHECK(cudaMemset(bufs.back()->p, 0, sizeof(T) * size));
      }
      const size_t at = bufs.size() - 4;
      slots.push_back({bufs[at]->p, bufs[at + 1]->p, bufs[at + 2]->p, bufs[at + 3]->p, size});
      elements += size;
    }
    const long long quads = vouch::number_quads(slots.data(), int(slots.size()));
    const int count = int(slots.size());
    DeviceArray<vouch::ParamSlot<T>> dslots(slots.size());
    LAB_CHECK(cudaMemcpy(dslots.p, slots.data(), sizeof(slots[0]) * slots.size(),
                         cudaMemcpyHostToDevice));
    DeviceArray<long long> step(std::vector<long long>{0, 0});
    DeviceArray<T> loss(1), ring(1);
    const unsigned grid = unsigned(std::min<long long>((quads + 255) / 256, 2048));
    bench((t + " optimizer adam, " + what).c_str(), 7.0 * elements * sizeof(T), [&] {
      Lab<T>::optimizer<<<grid, 256>>>(dslots.p, count, step.p,
                                       hyper(1, 1e-3, 0.9, 0.999, 1e-8, 0, 0), nullptr, loss.p,
                                       ring.p, 1, reinterpret_cast<unsigned*>(step.p + 1));
    });
    // The gradient norm over the same elements (the executor's grid): its cost beside
    // the update.
    DeviceArray<double> clip(2), partials(vouch::kGradNormBlocks);
    DeviceArray<unsigned> ticket(std::vector<unsigned>{0});
    bench((t + " grad_norm (clip_grad_norm), " + what).c_str(), 1.0 * elements * sizeof(T), [&] {
      Lab<T>::grad_norm<<<vouch::kGradNormBlocks, vouch::kGradNormThreads>>>(
          dslots.p, count, 1.0, clip.p, partials.p, ticket.p);
    });
    for (DeviceArray<T>* p : bufs) delete p;
  }
}

// GPT-2's attention (batch 8 x 12 heads, T 1024, D 64, causal), f32, codegen's d64
// instantiations: the forward, and the backward (delta + dkdv + dq).
// bench_attention's backward timings at one shape: delta + dkdv + dq (run once and
// checked first), then dkdv and dq alone. Bytes: q, k and v at qkv_bytes an
// element, every other tensor (dO, out, the gradients) 4, n elements each.
template <class Backward, class Dkdv, class Dq>
void bench_attention_backward(const std::string& tag, const Backward& backward,
                              const Dkdv& dkdv, const Dq& dq, long long n, double qkv_bytes) {
  backward();
  LAB_LAUNCHED();
  const double inputs = 3.0 * qkv_bytes * n;
  bench((tag + " backward GPT-2 (delta + dkdv + dq)").c_str(), inputs + 6.0 * 4 * n, backward);
  bench((tag + " backward: dkdv alone").c_str(), inputs + 3.0 * 4 * n, dkdv);
  bench((tag + " backward: dq alone").c_str(), inputs + 2.0 * 4 * n, dq);
}

// An attention variant bench_attention times: its name, forward, dkdv and dq entries.
template <class Forward, class Dkdv, class Dq>
struct AttentionSet {
  const char* name;
  Forward fwd;
  Dkdv dkdv;
  Dq dq;
};

void bench_attention() {
  using K = Lab<float>;
  const long long B = 8, H = 12, T = 1024, D = 64;
  const std::vector<long long> shape = {B, H, T, D};
  const vouch::Dims dims = make_dims(shape, row_major_strides(shape));
  const long long n = B * H * T * D;
  const std::vector<float> hq = random_vector<float>(n), hk = random_vector<float>(n),
                           hv = random_vector<float>(n);  // kept for their bf16 twins
  DeviceArray<float> q(hq), k(hk), v(hv), dout(random_vector<float>(n)), out(n), dq(n), dk(n),
      dv(n), lse(B * H * T), delta(B * H * T);
  const long long fbytes = vouch::attention_forward_shared_bytes(4);
  const long long bbytes = vouch::attention_backward_shared_bytes(4);
  attn_set_shared<float>(K::attention_forward_d64, fbytes);
  attn_set_shared<float>(K::attention_dkdv_d64, bbytes);
  attn_set_shared<float>(K::attention_dq_d64, bbytes);
  const unsigned grid = unsigned(vouch::attention_tile_grid(B * H, T));
  const double scale = 0.125;
  const double flops = 4.0 * B * H * T * T * D / 2;  // QK^T and PV, causal half
  auto forward = [&] {
    K::attention_forward_d64<<<grid, 256, fbytes>>>(q.p, dims, k.p, dims, v.p, dims, nullptr,
                                                    dims, out.p, dims, lse.p, 1, scale);
  };
  forward();
  LAB_LAUNCHED();
  bench("f32 attention forward GPT-2 [8,12,1024,64] causal (bytes: q,k,v,o)", 4.0 * n * 4,
        forward);
  auto backward = [&] {
    K::attention_delta<<<unsigned(vouch::attention_delta_grid(B * H, T)), 256>>>(
        dout.p, dims, out.p, dims, delta.p);
    K::attention_dkdv_d64<<<grid, 256, bbytes>>>(q.p, dims, k.p, dims, v.p, dims, nullptr, dims,
                                                 dout.p, dims, lse.p, delta.p, dk.p, dims, dv.p,
                                                 dims, 1, scale);
    K::attention_dq_d64<<<grid, 256, bbytes>>>(q.p, dims, k.p, dims, v.p, dims, nullptr, dims,
                                               dout.p, dims, lse.p, delta.p, dq.p, dims, 1, scale);
  };
  bench("f32 attention backward GPT-2 (delta + dkdv + dq)", 9.0 * n * 4, backward);
  auto dkdv_only = [&] {
    K::attention_dkdv_d64<<<grid, 256, bbytes>>>(q.p, dims, k.p, dims, v.p, dims, nullptr, dims,
                                                 dout.p, dims, lse.p, delta.p, dk.p, dims, dv.p,
                                                 dims, 1, scale);
  };
  bench("f32 attention backward: dkdv alone", 6.0 * n * 4, dkdv_only);
  auto dq_only = [&] {
    K::attention_dq_d64<<<grid, 256, bbytes>>>(q.p, dims, k.p, dims, v.p, dims, nullptr, dims,
                                               dout.p, dims, lse.p, delta.p, dq.p, dims, 1, scale);
  };
  bench("f32 attention backward: dq alone", 5.0 * n * 4, dq_only);
  auto delta_only = [&] {
    K::attention_delta<<<unsigned(vouch::attention_delta_grid(B * H, T)), 256>>>(
        dout.p, dims, out.p, dims, delta.p);
  };
  bench("f32 attention backward: delta alone", 2.0 * n * 4, delta_only);
  std::printf("BENCH attention forward useful work %.2f GFLOP (causal half of QK^T and PV)\n",
              flops / 1e9);

  // The tensor-core variants (TF32, bf16 products) at the same shape: codegen's d64
  // entries (__launch_bounds__(256, 2)) and, for comparison, the same with (256, 1).
  const long long tf_f = vouch::attention_tf32_forward_shared_bytes();
  const long long tf_b = vouch::attention_tf32_backward_shared_bytes();
  using TfSet = AttentionSet<decltype(&lab_attention_forward_tf32_d64_f32),
                             decltype(&lab_attention_dkdv_tf32_d64_f32),
                             decltype(&lab_attention_dq_tf32_d64_f32)>;
  const TfSet sets[] = {
      {"tf32 d64 lb(256,2)", lab_attention_forward_tf32_d64_f32, lab_attention_dkdv_tf32_d64_f32,
       lab_attention_dq_tf32_d64_f32},
      {"tf32 d64 lb(256,1)", lab_attention_forward_tf32_d64_lb1_f32,
       lab_attention_dkdv_tf32_d64_lb1_f32, lab_attention_dq_tf32_d64_lb1_f32},
      {"bf16 d64 lb(256,2)", lab_attention_forward_bf16_d64_f32, lab_attention_dkdv_bf16_d64_f32,
       lab_attention_dq_bf16_d64_f32},
      {"bf16 d64 lb(256,1)", lab_attention_forward_bf16_d64_lb1_f32,
       lab_attention_dkdv_bf16_d64_lb1_f32, lab_attention_dq_bf16_d64_lb1_f32},
  };
  for (const TfSet& t : sets) {
    attn_set_shared<float>(t.fwd, tf_f);
    attn_set_shared<float>(t.dkdv, tf_b);
    attn_set_shared<float>(t.dq, tf_b);
    const std::string tag = std::string("f32 attention ") + t.name;
    auto tf_forward = [&] {
      t.fwd<<<grid, 256, tf_f>>>(q.p, dims, k.p, dims, v.p, dims, nullptr, dims, out.p, dims,
                                 lse.p, 1, scale);
    };
    tf_forward();
    LAB_LAUNCHED();
    bench((tag + " forward GPT-2 [8,12,1024,64] causal").c_str(), 4.0 * n * 4, tf_forward);
    auto tf_dkdv = [&] {
      t.dkdv<<<grid, 256, tf_b>>>(q.p, dims, k.p, dims, v.p, dims, nullptr, dims, dout.p, dims,
                                  lse.p, delta.p, dk.p, dims, dv.p, dims, 1, scale);
    };
    auto tf_dq = [&] {
      t.dq<<<grid, 256, tf_b>>>(q.p, dims, k.p, dims, v.p, dims, nullptr, dims, dout.p, dims,
                                lse.p, delta.p, dq.p, dims, 1, scale);
    };
    auto tf_backward = [&] {
      K::attention_delta<<<unsigned(vouch::attention_delta_grid(B * H, T)), 256>>>(
          dout.p, dims, out.p, dims, delta.p);
      tf_dkdv();
      tf_dq();
    };
    bench_attention_backward(tag, tf_backward, tf_dkdv, tf_dq, n, 4.0);
  }

  // attention64.cuh (what codegen emits for heads of at most 64 under tf32 / bf16):
  // blocks of 128, its own shared memory.
  const long long a_f = vouch::attention64_forward_shared_bytes();
  const long long a_q = vouch::attention64_dq_shared_bytes();
  const long long a_k = vouch::attention64_dkdv_shared_bytes();
  const TfSet sets64[] = {
      {"attention64 tf32", lab_attention64_forward_tf32_f32, lab_attention64_dkdv_tf32_f32,
       lab_attention64_dq_tf32_f32},
      {"attention64 tf32 each entry tested", lab_attention64_forward_tf32_each_kept_f32,
       lab_attention64_dkdv_tf32_f32, lab_attention64_dq_tf32_f32},
      {"attention64 bf16", lab_attention64_forward_bf16_f32, lab_attention64_dkdv_bf16_f32,
       lab_attention64_dq_bf16_f32},
      {"attention64 bf16 each entry tested", lab_attention64_forward_bf16_each_kept_f32,
       lab_attention64_dkdv_bf16_f32, lab_attention64_dq_bf16_f32},
  };
  const unsigned block64 = vouch::kAttention64Threads;
  // The results (out, lse, dq, dk, dv, one after another) and their bits' FNV-1a hash: two
  // builds of the lab (a kernel before and after a change meant to keep its arithmetic)
  // compare by it, run after run.
  auto results = [&] {
    std::vector<float> got;
    for (const DeviceArray<float>* a : {&out, &lse, &dq, &dk, &dv})
      for (float x : a->download()) got.push_back(x);
    return got;
  };
  auto bits_hash = [](const std::vector<float>& got) {
    unsigned long long hash = 14695981039346656037ull;
    for (const unsigned char byte : std::string(reinterpret_cast<const char*>(got.data()),
                                                got.size() * sizeof(float)))
      hash = (hash ^ byte) * 1099511628211ull;
    return hash;
  };
  std::vector<float> bits_codegen, bits_bf16;
  for (const TfSet& t : sets64) {
    attn_set_shared<float>(t.fwd, a_f);
    attn_set_shared<float>(t.dkdv, a_k);
    attn_set_shared<float>(t.dq, a_q);
    const std::string tag = std::string("f32 ") + t.name;
    auto a_forward = [&] {
      t.fwd<<<grid, block64, a_f>>>(q.p, dims, k.p, dims, v.p, dims, nullptr, dims, out.p, dims,
                                    lse.p, 1, scale);
    };
    a_forward();
    LAB_LAUNCHED();
    bench((tag + " forward GPT-2 [8,12,1024,64] causal").c_str(), 4.0 * n * 4, a_forward);
    auto a_dkdv = [&] {
      t.dkdv<<<grid, block64, a_k>>>(q.p, dims, k.p, dims, v.p, dims, nullptr, dims, dout.p,
                                     dims, lse.p, delta.p, dk.p, dims, dv.p, dims, 1, scale);
    };
    auto a_dq = [&] {
      t.dq<<<grid, block64, a_q>>>(q.p, dims, k.p, dims, v.p, dims, nullptr, dims, dout.p, dims,
                                   lse.p, delta.p, dq.p, dims, 1, scale);
    };
    auto a_backward = [&] {
      K::attention_delta<<<unsigned(vouch::attention_delta_grid(B * H, T)), 256>>>(
          dout.p, dims, out.p, dims, delta.p);
      a_dkdv();
      a_dq();
    };
    bench_attention_backward(tag, a_backward, a_dkdv, a_dq, n, 4.0);
    // The all-kept path changes no bit: codegen's forward against the one that tests
    // each entry, on this causal GPT-2 shape (most tiles whole).
    a_forward();
    a_backward();
    LAB_LAUNCHED();
    const std::vector<float> got = results();
    std::printf("BENCH %s: results' bits hash to %016llx\n", t.name, bits_hash(got));
    if (t.fwd == lab_attention64_forward_bf16_f32) bits_bf16 = got;
    const std::string name = t.name, suffix = " each entry tested";
    if (name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      bits_codegen = got;  // codegen's kernels; their each-entry twin follows
    } else {
      const bool same = got.size() == bits_codegen.size() &&
                        std::memcmp(got.data(), bits_codegen.data(), got.size() * 4) == 0;
      std::printf("BENCH %s, the all-kept path against each entry tested: %s\n",
                  name.substr(0, name.size() - suffix.size()).c_str(),
                  same ? "bitwise the same" : "DIFFERENT BITS");
      if (!same) ++g_failures;
    }
  }

  // The bf16 products given q, k, v as bf16 bits (codegen's bf16 qkv buffer): the same
  // q, k, v rounded to nearest even; bytes as the f32 lines count them, q, k and v at 2
  // bytes. The results must be the bits of "attention64 bf16" (f32 q, k, v) above. Their
  // tiles take half the shared memory, so three or four blocks an SM fit where registers
  // allow: the launch bounds' variants, each timed and checked.
  using QkvBf16Set = AttentionSet<decltype(&lab_attention64_forward_bf16_qkv_bf16),
                                  decltype(&lab_attention64_dkdv_bf16_qkv_bf16),
                                  decltype(&lab_attention64_dq_bf16_qkv_bf16)>;
  const QkvBf16Set qkv_sets[] = {
      {"attention64 bf16 (q,k,v bf16)", lab_attention64_forward_bf16_qkv_bf16,
       lab_attention64_dkdv_bf16_qkv_bf16, lab_attention64_dq_bf16_qkv_bf16},
      {"attention64 bf16 (q,k,v bf16, 3 blocks/SM)", lab_attention64_forward_bf16_qkv_bf16_b3,
       lab_attention64_dkdv_bf16_qkv_bf16_b3, lab_attention64_dq_bf16_qkv_bf16_b3},
      {"attention64 bf16 (q,k,v bf16, 4 blocks/SM)", lab_attention64_forward_bf16_qkv_bf16_b4,
       lab_attention64_dkdv_bf16_qkv_bf16_b4, lab_attention64_dq_bf16_qkv_bf16_b4},
  };
  DeviceArray<unsigned short> q16(bf16_bits_of(hq)), k16(bf16_bits_of(hk)), v16(bf16_bits_of(hv));
  const long long b_f = vouch::attention64_forward_shared_bytes(true);
  const long long b_q = vouch::attention64_dq_shared_bytes(true);
  const long long b_k = vouch::attention64_dkdv_shared_bytes(true);
  for (const QkvBf16Set& t : qkv_sets) {
    attn_set_shared<float>(t.fwd, b_f);
    attn_set_shared<float>(t.dkdv, b_k);
    attn_set_shared<float>(t.dq, b_q);
    const std::string name = t.name, tag = "f32 " + name;
    auto b_forward = [&] {
      t.fwd<<<grid, block64, b_f>>>(q16.p, dims, k16.p, dims, v16.p, dims, nullptr, dims, out.p,
                                    dims, lse.p, 1, scale);
    };
    auto b_dkdv = [&] {
      t.dkdv<<<grid, block64, b_k>>>(q16.p, dims, k16.p, dims, v16.p, dims, nullptr, dims,
                                     dout.p, dims, lse.p, delta.p, dk.p, dims, dv.p, dims, 1,
                                     scale);
    };
    auto b_dq = [&] {
      t.dq<<<grid, block64, b_q>>>(q16.p, dims, k16.p, dims, v16.p, dims, nullptr, dims, dout.p,
                                   dims, lse.p, delta.p, dq.p, dims, 1, scale);
    };
    auto b_backward = [&] {
      K::attention_delta<<<unsigned(vouch::attention_delta_grid(B * H, T)), 256>>>(
          dout.p, dims, out.p, dims, delta.p);
      b_dkdv();
      b_dq();
    };
    b_forward();
    LAB_LAUNCHED();
    bench((tag + " forward GPT-2 [8,12,1024,64] causal").c_str(), (3.0 * 2 + 1.0 * 4) * n,
          b_forward);
    bench_attention_backward(tag, b_backward, b_dkdv, b_dq, n, 2.0);
    b_forward();
    b_backward();
    LAB_LAUNCHED();
    const std::vector<float> got = results();
    std::printf("BENCH %s: results' bits hash to %016llx\n", name.c_str(), bits_hash(got));
    const bool same = got.size() == bits_bf16.size() &&
                      std::memcmp(got.data(), bits_bf16.data(), got.size() * 4) == 0;
    std::printf("BENCH %s against f32 q,k,v: %s\n", name.c_str(),
                same ? "bitwise the same" : "DIFFERENT BITS");
    if (!same) {
      ++g_failures;
      print_bit_diff("out, lse, dq, dk, dv one after another", bit_diff(got, bits_bf16));
    }
  }
}


// col2im_matmul at ResNet-18 CIFAR's dx shapes, batch 256: 64 channels of 32x32, 3x3,
// padding 1, R = 64; and the stride-2 layer's (image 32x32, grid 16x16, R = 128). Bytes:
// lhs, rhs and the image once; TFLOP/s counts 2·C·R·K·N·S (every offset's terms, windows
// or not). Beside them conv.cuh's col2im alone on the columns of the same product (the
// two-launch path's second launch, without its cuBLAS product).
void bench_col2im_matmul() {
  struct Case {
    const char* what;
    LabConv c;
    long long rows;
  };
  const Case cases[] = {
      {"64x32x32 k3 s1 p1 R=64", conv_case(256, 64, 1, {32, 32}, {3, 3}, {1, 1}, {1, 1},
                                           {1, 1}, 0, ""), 64},
      {"64x32x32 k3 s2 p1 grid 16x16 R=128", conv_case(256, 64, 1, {32, 32}, {3, 3}, {2, 2},
                                                       {1, 1}, {1, 1}, 0, ""), 128},
  };
  for (const Case& k : cases) {
    const vouch::ConvGeometry g = lab_geometry(k.c);
    const long long S = vouch::conv_image_positions(g), L = vouch::conv_windows(g);
    const long long KK = vouch::conv_offsets(g), C = g.channels, N = g.batch, R = k.rows;
    const long long image_n = N * C * S, lhs_n = R * C * KK, rhs_n = R * N * L;
    DeviceArray<float> lhs(random_vector<float>(lhs_n)), rhs(random_vector<float>(rhs_n)),
        image(image_n);
    const unsigned grid = unsigned(vouch::conv_implicit_tiles(g));
    const double bytes = 4.0 * (lhs_n + rhs_n + image_n), flops = 2.0 * C * R * KK * N * S;
    using Entry = decltype(&lab_col2im_matmul_f32);
    for (const std::pair<const char*, Entry>& v :
         {std::pair<const char*, Entry>{"tf32", lab_col2im_matmul_tf32_f32},
          {"f32", lab_col2im_matmul_f32}}) {
      const Entry f = v.second;
      const std::string what = std::string("f32 col2im_matmul ") + v.first + " N=256 " + k.what;
      const double ms = bench(what.c_str(), bytes, [&] {
        launch_implicit(f, grid, lhs.p, rhs.p, image.p, g, R);
      });
      std::printf("BENCH   %.1f us per launch, %.1f TFLOP/s\n", ms * 1e3, flops / (ms * 1e-3) / 1e12);
    }
    {  // the old path's col2im over the product's columns [C·K, N·L]
      DeviceArray<float> columns(C * KK * N * L);  // its values do not change the time
      const std::string what = std::string("f32 col2im alone (old path's 2nd launch) N=256 ") + k.what;
      const double ms = bench(what.c_str(), 4.0 * (C * KK * N * L + image_n), [&] {
        launch_conv(Lab<float>::col2im, elementwise_grid(image_n), columns.p, image.p, k.c);
      });
      std::printf("BENCH   %.1f us per launch\n", ms * 1e3);
    }
  }
}

}  // namespace

// causal_mask against j <= i written here, square and not, one block (the grid-stride
// loop) and many; every element set (the buffer starts at -1).
// vouch_round_bf16_f32 (executor.cuh) against a host rounding written differently: the
// two bf16 neighbours of x (truncated, and one bf16 step away from zero, 2^128 past the
// largest) and the nearer of them in double, a tie to the even one. Exact bits for every
// value: ties both ways, the largest float, subnormals, ±0, ±inf; NaN must stay NaN;
// every pad element (extra columns, extra rows) zero.
void test_round_bf16() {
  std::mt19937 rng(7);
  std::vector<float> x;
  for (unsigned bits : {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7f7fffffu,
                        0x3f808000u, 0x3f818000u, 0xbf808000u, 0x3f807fffu, 0x3f808001u,
                        0x00000001u, 0x00008000u, 0x00018000u, 0x7fc00000u, 0x7f800001u,
                        0x7f7f8000u, 0x7f7f7fffu}) {
    float f;
    std::memcpy(&f, &bits, 4);
    x.push_back(f);
  }
  while (x.size() < 1003) {
    const unsigned bits = unsigned(rng());
    float f;
    std::memcpy(&f, &bits, 4);
    x.push_back(f);
  }
  auto want_bits = bf16_bits_by_value;
  // (batches, rows, cols, out_rows, pitch, input 4 bytes past a 16-byte boundary): one
  // odd row; padded odd rows and zero rows (the scalar path); padded rows of 4s, two
  // matrices with a zero row each (the vector path); a misaligned input.
  struct Case {
    long long batches, rows, cols, out_rows, pitch;
    bool shifted;
  };
  for (const Case& k : {Case{1, 1, 1003, 1, 1003, false}, Case{1, 17, 59, 24, 64, false},
                        Case{2, 5, 100, 6, 104, false}, Case{1, 10, 100, 10, 100, true}}) {
    const long long n = k.batches * k.rows * k.cols;
    std::vector<float> in(x.begin(), x.begin() + n);
    DeviceArray<float> din{size_t(n + 1)};
    LAB_CHECK(cudaMemcpy(din.p + (k.shifted ? 1 : 0), in.data(), sizeof(float) * size_t(n),
                         cudaMemcpyHostToDevice));
    DeviceArray<unsigned short> dout{size_t(k.batches * k.out_rows * k.pitch)};  // 0xffff
    vouch_round_bf16_f32<<<3, 256>>>(din.p + (k.shifted ? 1 : 0), dout.p, k.batches, k.rows,
                                     k.cols, k.out_rows, k.pitch);
    LAB_LAUNCHED();
    std::vector<unsigned short> got = dout.download();
    long long wrong = 0;
    for (long long b = 0; b < k.batches; ++b)
      for (long long r = 0; r < k.out_rows; ++r)
        for (long long c = 0; c < k.pitch; ++c) {
          const unsigned short g = got[size_t((b * k.out_rows + r) * k.pitch + c)];
          if (r >= k.rows || c >= k.cols) {
            wrong += g != 0;  // the pad is zero
            continue;
          }
          const float f = in[size_t((b * k.rows + r) * k.cols + c)];
          if (std::isnan(f))
            wrong += (g & 0x7f80u) != 0x7f80u || (g & 0x7fu) == 0;
          else
            wrong += g != want_bits(f);
        }
    report("round_bf16 " + std::to_string(k.batches) + "x" + std::to_string(k.rows) + "x" +
               std::to_string(k.cols) + " as " + std::to_string(k.out_rows) + "x" +
               std::to_string(k.pitch) + (k.shifted ? " misaligned" : "") +
               ": values differing from nearest-even, or a nonzero pad",
           double(wrong), 0);
  }
  // vouch.round_bf16 fused into a pointwise chain (pointwise.cuh's Bf16Out): relu's
  // result stored as f32 and as bf16, both exact (the bf16 nearest-even); the vector
  // path (n a multiple of 4, aligned), the tail-free scalar path (n = 1003), and a
  // misaligned bf16 output (scalar); nothing written outside n.
  for (long long n : {1003LL, 1000LL, 3LL})
    for (int shift : {0, 1}) {
      std::vector<float> in(x.begin(), x.begin() + n);
      DeviceArray<float> din(in);
      DeviceArray<float> dout32{size_t(n)};
      DeviceArray<unsigned short> dout{size_t(n + 2)};  // 0xffff
      lab_relu_round_bf16_f32<<<2, 256>>>(dout32.p, dout.p + shift, din.p, n, 0);
      LAB_LAUNCHED();
      std::vector<unsigned short> got = dout.download();
      std::vector<float> got32 = dout32.download();
      long long wrong = 0;
      for (long long i = 0; i < n + 2; ++i) {
        const unsigned short g = got[size_t(i)];
        if (i < shift || i >= n + shift) {
          wrong += g != 0xffffu;  // untouched
          continue;
        }
        const float f = in[size_t(i - shift)];
        const float r = f > 0.0f ? f : 0.0f;  // relu; NaN -> 0
        unsigned rb, gb;
        std::memcpy(&rb, &r, 4);
        std::memcpy(&gb, &got32[size_t(i - shift)], 4);
        wrong += rb != gb;
        wrong += g != want_bits(r);
      }
      report("pointwise relu + round_bf16 n=" + std::to_string(n) +
                 (shift ? " misaligned bf16" : "") +
                 ": f32 or bf16 results differing from relu and its nearest-even, or a "
                 "write outside",
             double(wrong), 0);
    }
}

// vouch_repitch_f32 (executor.cuh) against a host copy: every value's bits moved
// (NaN payloads, -0 included), every pad element zero and nothing written past the
// output. Into a padded layout (odd and aligned pitches, extra zero rows, two
// matrices), out of one (the padded output's copy back), misaligned input or output
// (the scalar paths), a chunk boundary (a row past 1024 columns) and grid 3 (the
// grid-stride loop over many rows).
void test_repitch() {
  struct Case {
    long long batches, rows, cols, in_rows, in_pitch, out_rows, out_pitch;
    int in_shift, out_shift;  // elements past a 16-byte boundary
  };
  std::mt19937 rng(11);
  for (const Case& k : {Case{1, 3, 7, 3, 7, 4, 8, 0, 0}, Case{2, 5, 13, 5, 13, 8, 16, 0, 0},
                        Case{1, 9, 2050, 9, 2050, 12, 2052, 1, 0},
                        Case{1, 9, 2050, 12, 2052, 9, 2050, 0, 3},
                        Case{3, 6, 10, 8, 12, 6, 10, 0, 0}, Case{1, 40, 100, 40, 100, 40, 100, 2, 2},
                        Case{1, 1, 5, 1, 5, 1, 8, 0, 0}}) {
    const long long n_in = k.batches * k.in_rows * k.in_pitch;
    const long long n_out = k.batches * k.out_rows * k.out_pitch;
    std::vector<float> in(static_cast<size_t>(n_in));
    for (float& f : in) {
      const unsigned bits = unsigned(rng());
      std::memcpy(&f, &bits, 4);
    }
    DeviceArray<float> din{size_t(n_in + 4)}, dout{size_t(n_out + 8)};
    std::vector<float> sentinel(size_t(n_out + 8), 12345.f);
    LAB_CHECK(cudaMemcpy(dout.p, sentinel.data(), sizeof(float) * sentinel.size(),
                         cudaMemcpyHostToDevice));
    LAB_CHECK(cudaMemcpy(din.p + k.in_shift, in.data(), sizeof(float) * size_t(n_in),
                         cudaMemcpyHostToDevice));
    vouch_repitch_f32<<<3, 256>>>(din.p + k.in_shift, dout.p + k.out_shift, k.batches, k.rows,
                                  k.cols, k.in_rows, k.in_pitch, k.out_rows, k.out_pitch);
    LAB_LAUNCHED();
    const std::vector<float> got = dout.download();
    long long wrong = 0;
    for (long long i = 0; i < (long long)got.size(); ++i) {
      const long long o = i - k.out_shift;
      float want = 12345.f;  // outside the output: untouched
      if (o >= 0 && o < n_out) {
        const long long b = o / (k.out_rows * k.out_pitch), r = o / k.out_pitch % k.out_rows,
                        c = o % k.out_pitch;
        want = r < k.rows && c < k.cols ? in[size_t((b * k.in_rows + r) * k.in_pitch + c)] : 0.f;
      }
      wrong += std::memcmp(&want, &got[size_t(i)], 4) != 0;
    }
    report("repitch " + std::to_string(k.batches) + "x" + std::to_string(k.rows) + "x" +
               std::to_string(k.cols) + " from " + std::to_string(k.in_rows) + "x" +
               std::to_string(k.in_pitch) + " to " + std::to_string(k.out_rows) + "x" +
               std::to_string(k.out_pitch) + " (shifts " + std::to_string(k.in_shift) + ", " +
               std::to_string(k.out_shift) + "): elements whose bits differ from the copy",
           double(wrong), 0);
  }
}

void test_causal_mask() {
  for (auto [rows, columns] : {std::pair<long long, long long>{1, 1}, {5, 5}, {7, 3},
                               {3, 700}, {1024, 1024}})
    for (bool one_block : {false, true}) {
      std::vector<int> init(rows * columns, -1);
      DeviceArray<int> mask(init);
      lab_causal_mask<<<one_block ? 1 : elementwise_grid(rows * columns), 256>>>(mask.p, rows,
                                                                                  columns);
      LAB_LAUNCHED();
      const std::vector<int> got = mask.download();
      long long wrong = 0;
      for (long long i = 0; i < rows; ++i)
        for (long long j = 0; j < columns; ++j) wrong += got[i * columns + j] != (j <= i ? 1 : 0);
      report_bitwise("causal_mask [" + std::to_string(rows) + "," + std::to_string(columns) +
                         "]" + (one_block ? " grid=1" : "") + ": j <= i",
                     wrong, rows * columns);
    }
}

int main(int argc, char** argv) {
  bool do_bench = false, attention_only = false, unchecked = false, attention_checks = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--bench") == 0) {
      do_bench = true;
    } else if (std::strcmp(argv[i], "--check-attention") == 0) {
      attention_checks = true;
    } else if (std::strcmp(argv[i], "--bench-attention") == 0) {
      do_bench = attention_only = true;
    } else if (std::strcmp(argv[i], "--bench-attention-unchecked") == 0) {
      do_bench = attention_only = unchecked = true;
    } else {
      std::fprintf(stderr,
                   "usage: kernel_lab [--check-attention] [--bench | --bench-attention | "
                   "--bench-attention-unchecked]\n"
                   "  (no flag: every check; --check-attention: the f32 attention checks\n"
                   "  alone (attention.cuh's and attention64.cuh's kernels) in place of\n"
                   "  every check; --bench: the checks, then every bench;\n"
                   "  --bench-attention: the checks, then the attention bench;\n"
                   "  --bench-attention-unchecked: the attention bench alone, for a\n"
                   "  profiler: its times are not evidence of anything correct)\n");
      return 2;
    }
  }
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("kernel_lab: SKIPPED (no CUDA device): %s\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount() found none");
    return 3;
  }
  cudaDeviceProp prop;
  LAB_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("kernel_lab on %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  if (unchecked) {
    bench_attention();
    return g_failures == 0 ? 0 : 1;
  }
  if (attention_checks) {
    test_attention_all<float>();
  } else {
    validate<float>();
    validate<double>();
    test_select_shuffled();
    test_causal_mask();
    test_round_bf16();
    test_repitch();
  }
  std::printf("kernel_lab: %d checks, %d failed\n", g_checks, g_failures);
  if (attention_only && g_failures == 0) {
    bench_attention();
  } else if (do_bench && g_failures == 0) {
    run_bench<float>();
    run_bench<double>();
    bench_attention();
    bench_col2im_matmul();
  }
  return g_failures == 0 ? 0 : 1;
}
