// blas.cc: the process's cuBLAS / cuBLASLt handles and the row-major GEMMs (blas.h).
#include "runtime/cuda/blas.h"

#include <cublasLt.h>
#include <cublas_v2.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <vector>

#include "runtime/cuda/cublas_check.h"
#include "runtime/cuda/status.h"

namespace vouch::rt::cuda {

static_assert(kLtReductionSchemeMask ==
                  (CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE | CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE),
              "kLtReductionSchemeMask: the two schemes that reduce in a separate step");

void log_blas_call(const char* api);  // BlasCallLog's friend, defined below

namespace {

// gemm_call.h's compute_type_name as the cuBLAS enum.
cublasComputeType_t compute_type(ProductMath math, GemmDType dtype) {
  if (dtype == GemmDType::F64) return CUBLAS_COMPUTE_64F;
  switch (math) {
    case ProductMath::Fp32: return CUBLAS_COMPUTE_32F;
    case ProductMath::Tf32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case ProductMath::Bf16: return CUBLAS_COMPUTE_32F;  // bf16 operands in memory
  }
  return CUBLAS_COMPUTE_32F;
}

// The storage types of a product's A / B operands and of C (gemm_data_types).
cudaDataType_t operand_type(ProductMath math, GemmDType dtype) {
  if (dtype == GemmDType::F64) return CUDA_R_64F;
  return math == ProductMath::Bf16 ? CUDA_R_16BF : CUDA_R_32F;
}
cudaDataType_t result_type(GemmDType dtype) {
  return dtype == GemmDType::F64 ? CUDA_R_64F : CUDA_R_32F;
}

// A cached cuBLASLt plan for one (shape, bias, math, alignment) key.
struct LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace_bytes = 0;  // the algorithm's, as the heuristic reported it
  bool refused = false;
  std::string refusal;  // why, when refused
  // Whether a call has met the refusal (and said so on stderr): once per plan, the
  // first call, however early a query (linear_algorithm) built the plan.
  bool refusal_noted = false;
};

void destroy_plan(LtPlan& p) {
  if (p.desc != nullptr) (void)cublasLtMatmulDescDestroy(p.desc);
  for (cublasLtMatrixLayout_t l : {p.a, p.b, p.c})
    if (l != nullptr) (void)cublasLtMatrixLayoutDestroy(l);
  p = LtPlan{};
}

// m, n, k, bias, math, align, f64, bias_grad
// (m, n, k, bias, math, align, f64, bias_grad, bf16_result)
using LtKey = std::tuple<int, int, int, bool, ProductMath, int, bool, bool, bool>;

// The rows of the column of ones linear_weight_grad's fallback multiplies dy by, in
// each element type (a longer dy is summed in slabs of this many rows).
constexpr int64_t kOnesRows = 8192;

// The innermost live BlasCallLog of this thread (nullptr: nobody is listening).
thread_local BlasCallLog* current_log = nullptr;

struct BlasState {
  std::mutex mu;
  bool initialized = false;
  cublasHandle_t handle = nullptr;
  cublasLtHandle_t lt = nullptr;
  void* workspace = nullptr;     // cuBLAS's
  void* lt_workspace = nullptr;  // cuBLASLt's
  float* one_f32 = nullptr;      // a device 1.0f, the "ones" operand of the bias GEMM
  double* one_f64 = nullptr;     // and 1.0 for f64
  // kOnesRows ones of each type: the column-sum GEMMs of linear_weight_grad's fallback.
  float* ones_f32 = nullptr;
  double* ones_f64 = nullptr;
  bf16_bits* ones_bf16 = nullptr;
  cudaStream_t stream = nullptr;
  std::map<LtKey, LtPlan> plans;
  bool refuse_for_testing = false;
};

// Never destroyed: no CUDA calls from static destructors while cudart unloads.
BlasState& state() {
  static BlasState* const s = new BlasState;
  return *s;
}

Status init_locked(BlasState& s) {
  if (s.initialized) return Status::Ok();
  Status device = require_native_cuda();
  if (!device.ok()) return Status::Error("cuBLAS not initialised: " + device.message());

  cublasHandle_t handle = nullptr;
  cublasLtHandle_t lt = nullptr;
  void* ws = nullptr;
  void* lt_ws = nullptr;
  float* one = nullptr;
  void* ones = nullptr;
  auto fail = [&](Status why) {
    if (handle != nullptr) (void)cublasDestroy(handle);
    if (lt != nullptr) (void)cublasLtDestroy(lt);
    if (ws != nullptr) (void)cudaFree(ws);
    if (lt_ws != nullptr) (void)cudaFree(lt_ws);
    if (one != nullptr) (void)cudaFree(one);
    if (ones != nullptr) (void)cudaFree(ones);
    (void)cudaGetLastError();
    return why;
  };
  cublasStatus_t st = cublasCreate(&handle);
  if (st != CUBLAS_STATUS_SUCCESS) return fail(check_cublas(st, "cublasCreate"));
  st = cublasLtCreate(&lt);
  if (st != CUBLAS_STATUS_SUCCESS) return fail(check_cublas(st, "cublasLtCreate"));
  cudaError_t e = cudaMalloc(&ws, kBlasWorkspaceBytes);
  if (e != cudaSuccess)
    return fail(cuda_failure("cudaMalloc(" + std::to_string(kBlasWorkspaceBytes) +
                             " bytes) for the cuBLAS workspace", e));
  e = cudaMalloc(&lt_ws, kBlasWorkspaceBytes);
  if (e != cudaSuccess)
    return fail(cuda_failure("cudaMalloc(" + std::to_string(kBlasWorkspaceBytes) +
                             " bytes) for the cuBLASLt workspace", e));
  // The constants 1.0f (bytes 0-3) and 1.0 (bytes 8-15): the bias GEMM's "ones".
  e = cudaMalloc(reinterpret_cast<void**>(&one), 16);
  if (e != cudaSuccess) return fail(cuda_failure("cudaMalloc(16 bytes) for the constant 1", e));
  struct {
    float f32;
    float pad;
    double f64;
  } host_one{1.0f, 0.0f, 1.0};
  static_assert(sizeof host_one == 16);
  e = cudaMemcpy(one, &host_one, 16, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) return fail(cuda_failure("cudaMemcpy(constant 1, host to device)", e));
  // The columns of ones: f64, then f32, then bf16 (0x3f80: 1.0).
  const size_t ones_bytes = size_t(kOnesRows) * (sizeof(double) + sizeof(float) + sizeof(bf16_bits));
  e = cudaMalloc(&ones, ones_bytes);
  if (e != cudaSuccess)
    return fail(cuda_failure("cudaMalloc(" + std::to_string(ones_bytes) + " bytes) for the ones", e));
  {
    std::vector<unsigned char> host(ones_bytes);
    unsigned char* at = host.data();
    for (int64_t i = 0; i < kOnesRows; i++, at += sizeof(double)) {
      const double v = 1.0;
      std::memcpy(at, &v, sizeof v);
    }
    for (int64_t i = 0; i < kOnesRows; i++, at += sizeof(float)) {
      const float v = 1.0f;
      std::memcpy(at, &v, sizeof v);
    }
    for (int64_t i = 0; i < kOnesRows; i++, at += sizeof(bf16_bits)) {
      const bf16_bits v = 0x3f80;
      std::memcpy(at, &v, sizeof v);
    }
    e = cudaMemcpy(ones, host.data(), ones_bytes, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) return fail(cuda_failure("cudaMemcpy(ones, host to device)", e));
  }
  st = cublasSetStream(handle, s.stream);
  if (st != CUBLAS_STATUS_SUCCESS) return fail(check_cublas(st, "cublasSetStream"));
  st = cublasSetWorkspace(handle, ws, kBlasWorkspaceBytes);
  if (st != CUBLAS_STATUS_SUCCESS) return fail(check_cublas(st, "cublasSetWorkspace"));
  // The default today, set so that no library default can change it: routines with an
  // atomics-based variant are not bitwise reproducible (cuBLAS documentation).
  st = cublasSetAtomicsMode(handle, CUBLAS_ATOMICS_NOT_ALLOWED);
  if (st != CUBLAS_STATUS_SUCCESS)
    return fail(check_cublas(st, "cublasSetAtomicsMode(CUBLAS_ATOMICS_NOT_ALLOWED)"));
  s.handle = handle;
  s.lt = lt;
  s.workspace = ws;
  s.lt_workspace = lt_ws;
  s.one_f32 = one;
  s.one_f64 = reinterpret_cast<double*>(reinterpret_cast<char*>(one) + 8);
  s.ones_f64 = static_cast<double*>(ones);
  s.ones_f32 = reinterpret_cast<float*>(s.ones_f64 + kOnesRows);
  s.ones_bf16 = reinterpret_cast<bf16_bits*>(s.ones_f32 + kOnesRows);
  s.initialized = true;
  return Status::Ok();
}

// Runs a described GEMM (GemmEx or GemmStridedBatchedEx): `a` and `b` are cuBLAS's
// operands (our B and our A).
Status run_gemm_locked(BlasState& s, const GemmCall& c, const void* a, const void* b,
                       void* out) {
  const bool f64 = c.dtype == GemmDType::F64;
  const cudaDataType_t dt = operand_type(c.math, c.dtype), ct_out = result_type(c.dtype);
  const cublasComputeType_t ct = compute_type(c.math, c.dtype);
  const float alpha_f = 1.0f, beta_f = c.accumulate ? 1.0f : 0.0f;
  const double alpha_d = 1.0, beta_d = c.accumulate ? 1.0 : 0.0;
  const void* alpha = f64 ? static_cast<const void*>(&alpha_d) : &alpha_f;
  const void* beta = f64 ? static_cast<const void*>(&beta_d) : &beta_f;
  const cublasOperation_t opa = c.op_a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opb = c.op_b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  switch (c.api) {
    case GemmCall::Api::None:
      return Status::Ok();
    case GemmCall::Api::MemsetZero:
      log_blas_call("cudaMemsetAsync");
      VOUCH_CUDA_CHECK_WHAT(cudaMemsetAsync(out, 0, c.zero_bytes, s.stream), c.to_string());
      return Status::Ok();
    case GemmCall::Api::GemmEx:
      log_blas_call("cublasGemmEx");
      VOUCH_CUBLAS_CHECK_WHAT(cublasGemmEx(s.handle, opa, opb, c.m, c.n, c.k, alpha, a, dt,
                                           c.lda, b, dt, c.ldb, beta, out, ct_out, c.ldc, ct,
                                           CUBLAS_GEMM_DEFAULT),
                              c.to_string());
      return Status::Ok();
    case GemmCall::Api::GemmStridedBatchedEx:
      log_blas_call("cublasGemmStridedBatchedEx");
      VOUCH_CUBLAS_CHECK_WHAT(
          cublasGemmStridedBatchedEx(s.handle, opa, opb, c.m, c.n, c.k, alpha, a, dt, c.lda,
                                     c.stride_a, b, dt, c.ldb, c.stride_b, beta, out, ct_out,
                                     c.ldc, c.stride_c, c.batch, ct, CUBLAS_GEMM_DEFAULT),
          c.to_string());
      return Status::Ok();
  }
  return Status::Error("internal: unknown GEMM api");
}

// `A`, `B` of the storage operand_type(math, dtype), C of result_type(dtype).
Status gemm_impl(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N, int64_t K,
                 const void* A, int64_t stride_a, const void* B, int64_t stride_b, void* C,
                 bool accumulate, ProductMath math, GemmDType dtype, int64_t pitch_a = 0,
                 int64_t pitch_b = 0) {
  Result<GemmCall> call = describe_gemm(trans_a, trans_b, batch, M, N, K, stride_a, stride_b,
                                        accumulate, math, dtype, pitch_a, pitch_b);
  if (!call.ok()) return call.status();
  if (call.value().api == GemmCall::Api::None) return Status::Ok();
  BlasState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  VOUCH_RETURN_IF_ERROR(init_locked(s));
  return run_gemm_locked(s, call.value(), B, A, C);  // column-major: Cᵀ = op(B)ᵀ op(A)ᵀ
}

Status refuse_f32_operands_for_bf16(const char* what) {
  return Status::Error(std::string(what) +
                       ": ProductMath::Bf16 takes operands already rounded to bf16 (the "
                       "bf16_bits overload); f32 operands were given");
}

// Largest power of two (<= 16) dividing the address: cuBLASLt's alignment preference.
int alignment_of(const void* p) {
  uintptr_t v = reinterpret_cast<uintptr_t>(p);
  int a = 16;
  while (a > 1 && v % uintptr_t(a) != 0) a /= 2;
  return a;
}

// Products of at most this many multiply-adds (m·n·k) take a cuBLASLt algorithm
// that needs no workspace when the heuristic offers one (see build_lt_plan).
constexpr int64_t kSmallProductMacs = int64_t(1) << 20;

uint32_t reduction_scheme_of(const cublasLtMatmulAlgo_t& algo) {
  uint32_t scheme = 0;
  size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
                                           &scheme, sizeof scheme,
                                           &written) != CUBLAS_STATUS_SUCCESS)
    return CUBLASLT_REDUCTION_SCHEME_MASK;  // unknown: allowed by no mask but the full one
  return scheme;
}

// Fills `plan` (descriptors, layouts, and the heuristic's algorithm or its refusal),
// offering the heuristic only the split-K reductions of `scheme_mask`.
Status build_lt_plan(BlasState& s, const LinearCall& c, int align, uint32_t scheme_mask,
                     LtPlan& plan) {
  const std::string what = c.to_string();
  if (s.refuse_for_testing) {
    plan.refused = true;
    plan.refusal = "refused for testing (set_lt_refusal_for_testing)";
    return Status::Ok();
  }
  // The scale type (alpha, beta) is the run's; D (y) is bf16 under bf16_result.
  const cudaDataType_t dt = operand_type(c.math, c.dtype), scale = result_type(c.dtype);
  const cudaDataType_t dt_out = c.bf16_result ? CUDA_R_16BF : scale;
  const cublasComputeType_t ct = compute_type(c.math, c.dtype);
  VOUCH_CUBLAS_CHECK_WHAT(cublasLtMatmulDescCreate(&plan.desc, ct, scale),
                          "cublasLtMatmulDescCreate for " + what);
  // A linear: opA = T (W), opB = N (x); its weight gradient: opA = N (x), opB = T (dy).
  const cublasOperation_t op_a = c.bias_grad ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t op_b = c.bias_grad ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasLtEpilogue_t epilogue = c.bias_grad ? CUBLASLT_EPILOGUE_BGRADB
                                      : c.bias    ? CUBLASLT_EPILOGUE_BIAS
                                                  : CUBLASLT_EPILOGUE_DEFAULT;
  VOUCH_CUBLAS_CHECK_WHAT(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                         &op_a, sizeof op_a),
                          "cublasLtMatmulDescSetAttribute(TRANSA) for " + what);
  VOUCH_CUBLAS_CHECK_WHAT(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                                         &op_b, sizeof op_b),
                          "cublasLtMatmulDescSetAttribute(TRANSB) for " + what);
  VOUCH_CUBLAS_CHECK_WHAT(
      cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                     sizeof epilogue),
      "cublasLtMatmulDescSetAttribute(EPILOGUE) for " + what);
  // A bf16 y's bias is bf16 (D's type, the default, said here): the epilogue adds it to
  // the f32 sums, then rounds once. (CUDA 13.0 offers no algorithm for an f32 bias
  // beside a bf16 D.)
  if (c.bf16_result && c.bias) {
    const cudaDataType_t bias_type = CUDA_R_16BF;
    VOUCH_CUBLAS_CHECK_WHAT(
        cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                       &bias_type, sizeof bias_type),
        "cublasLtMatmulDescSetAttribute(BIAS_DATA_TYPE) for " + what);
  }
  // The layouts describe the stored matrices. A linear: A = W stored column-major
  // [k, m] (ld = in), B = xᵀ [k, n], C = yᵀ [m, n]. Its weight gradient: A = xᵀ stored
  // [m, k] (ld = in), B = dyᵀ stored [n, k] (ld = out), C = dWᵀ [m, n].
  if (c.bias_grad) {
    VOUCH_CUBLAS_CHECK_WHAT(cublasLtMatrixLayoutCreate(&plan.a, dt, c.m, c.k, c.lda),
                            "cublasLtMatrixLayoutCreate(x) for " + what);
    VOUCH_CUBLAS_CHECK_WHAT(cublasLtMatrixLayoutCreate(&plan.b, dt, c.n, c.k, c.ldb),
                            "cublasLtMatrixLayoutCreate(dy) for " + what);
  } else {
    VOUCH_CUBLAS_CHECK_WHAT(cublasLtMatrixLayoutCreate(&plan.a, dt, c.k, c.m, c.lda),
                            "cublasLtMatrixLayoutCreate(W) for " + what);
    VOUCH_CUBLAS_CHECK_WHAT(cublasLtMatrixLayoutCreate(&plan.b, dt, c.k, c.n, c.ldb),
                            "cublasLtMatrixLayoutCreate(x) for " + what);
  }
  VOUCH_CUBLAS_CHECK_WHAT(cublasLtMatrixLayoutCreate(&plan.c, dt_out, c.m, c.n, c.ldc),
                          c.bias_grad ? "cublasLtMatrixLayoutCreate(dW) for " + what
                                      : "cublasLtMatrixLayoutCreate(y) for " + what);

  cublasLtMatmulPreference_t pref = nullptr;
  VOUCH_CUBLAS_CHECK_WHAT(cublasLtMatmulPreferenceCreate(&pref),
                          "cublasLtMatmulPreferenceCreate for " + what);
  const uint64_t ws = kBlasWorkspaceBytes;
  const uint32_t al = uint32_t(align);
  cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                              &scheme_mask, sizeof scheme_mask);
  for (cublasLtMatmulPreferenceAttributes_t attr :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulPreferenceSetAttribute(pref, attr, &al, sizeof al);
  }
  if (st != CUBLAS_STATUS_SUCCESS) {
    (void)cublasLtMatmulPreferenceDestroy(pref);
    return Status::Error(
        format_cublas_error("cublasLtMatmulPreferenceSetAttribute for " + what, st));
  }
  cublasLtMatmulHeuristicResult_t results[8] = {};
  int found = 0;
  st = cublasLtMatmulAlgoGetHeuristic(s.lt, plan.desc, plan.a, plan.b, plan.c, plan.c, pref, 8,
                                      results, &found);
  (void)cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS) found = 0;
  // The mask's guard: an algorithm whose split-K reduction the mask excludes is never
  // used, even if the heuristic offered one.
  auto allowed = [&](int i) {
    uint32_t scheme = reduction_scheme_of(results[i].algo);
    return scheme == CUBLASLT_REDUCTION_SCHEME_NONE || (scheme & scheme_mask) == scheme;
  };
  int chosen = -1;
  for (int i = 0; i < found && chosen < 0; i++)
    if (allowed(i)) chosen = i;
  // A small product is launch-bound: prefer the best algorithm that needs no
  // workspace, since the ones that do split K into extra kernels (a split-K
  // reduce and a separate epilogue: three graph nodes where one will do).
  if (int64_t(c.m) * c.n * c.k <= kSmallProductMacs)  // int fields: 2048³ overflows
    for (int i = 0; i < found; i++)
      if (results[i].workspaceSize == 0 && allowed(i)) {
        chosen = i;
        break;
      }
  // A bf16 D is refused by an error status for some epilogues (an f32 bias: INVALID_VALUE
  // from CUDA 13.0's heuristic on an H100): a refusal too, for the caller's fallback.
  if (st == CUBLAS_STATUS_NOT_SUPPORTED || (st == CUBLAS_STATUS_SUCCESS && chosen < 0) ||
      (c.bf16_result && st != CUBLAS_STATUS_SUCCESS)) {
    plan.refused = true;
    plan.refusal = found > 0 ? "cublasLtMatmulAlgoGetHeuristic offered no algorithm with an "
                               "allowed split-K reduction"
                             : "cublasLtMatmulAlgoGetHeuristic found no algorithm (" +
                                   cublas_status_name(st) + ")";
  } else if (st != CUBLAS_STATUS_SUCCESS) {
    return Status::Error(format_cublas_error("cublasLtMatmulAlgoGetHeuristic for " + what, st));
  } else {
    plan.algo = results[chosen].algo;
    plan.workspace_bytes = results[chosen].workspaceSize;
  }
  return Status::Ok();
}

LtAlgorithm describe_plan(const LtPlan& p) {
  LtAlgorithm a;
  a.refused = p.refused;
  a.refusal = p.refusal;
  if (p.refused) return a;
  size_t written = 0;
  int32_t id = -1, split_k = 1;
  if (cublasLtMatmulAlgoConfigGetAttribute(&p.algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id,
                                           &written) == CUBLAS_STATUS_SUCCESS)
    a.id = id;
  if (cublasLtMatmulAlgoConfigGetAttribute(&p.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split_k,
                                           sizeof split_k, &written) == CUBLAS_STATUS_SUCCESS)
    a.split_k = split_k;
  a.reduction_scheme = reduction_scheme_of(p.algo);
  a.workspace_bytes = p.workspace_bytes;
  return a;
}

LtKey key_of(const LinearCall& c, int align) {
  return LtKey{c.m,     c.n,   c.k, c.bias, c.math, align, c.dtype == GemmDType::F64,
               c.bias_grad, c.bf16_result};
}

Result<LtPlan*> lt_plan_locked(BlasState& s, const LinearCall& c, int align) {
  const LtKey key = key_of(c, align);
  auto it = s.plans.find(key);
  if (it != s.plans.end()) return &it->second;
  LtPlan plan;
  Status built = build_lt_plan(s, c, align, kLtReductionSchemeMask, plan);
  if (!built.ok()) {
    destroy_plan(plan);
    return built;
  }
  return &s.plans.emplace(key, plan).first->second;
}

}  // namespace

Status set_blas_stream(cudaStream_t stream) {
  BlasState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.stream = stream;
  VOUCH_RETURN_IF_ERROR(init_locked(s));
  VOUCH_CUBLAS_CHECK(cublasSetStream(s.handle, stream));
  // cublasSetStream resets the handle to cuBLAS's internal workspace pool: set ours again.
  VOUCH_CUBLAS_CHECK(cublasSetWorkspace(s.handle, s.workspace, kBlasWorkspaceBytes));
  return Status::Ok();
}

cudaStream_t blas_stream() {
  BlasState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.stream;
}

Status gemm_row_major(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N,
                      int64_t K, const float* A, int64_t stride_a, const float* B,
                      int64_t stride_b, float* C, bool accumulate, ProductMath math) {
  if (math == ProductMath::Bf16) return refuse_f32_operands_for_bf16("gemm_row_major");
  return gemm_impl(trans_a, trans_b, batch, M, N, K, A, stride_a, B, stride_b, C, accumulate,
                   math, GemmDType::F32);
}

Status gemm_row_major(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N,
                      int64_t K, const double* A, int64_t stride_a, const double* B,
                      int64_t stride_b, double* C, bool accumulate, ProductMath math) {
  return gemm_impl(trans_a, trans_b, batch, M, N, K, A, stride_a, B, stride_b, C, accumulate,
                   math, GemmDType::F64);
}

Status gemm_row_major(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N,
                      int64_t K, const bf16_bits* A, int64_t stride_a, const bf16_bits* B,
                      int64_t stride_b, float* C, bool accumulate, int64_t pitch_a,
                      int64_t pitch_b) {
  return gemm_impl(trans_a, trans_b, batch, M, N, K, A, stride_a, B, stride_b, C, accumulate,
                   ProductMath::Bf16, GemmDType::F32, pitch_a, pitch_b);
}

const char* linear_fallback_name(bool bias) {
  return bias ? "cublasGemmEx + a bias broadcast GEMM" : "cublasGemmEx";
}

const char* weight_grad_fallback_name() { return "cublasGemmEx + column-sum GEMMs"; }

const char* linear_path_name(LinearPath path) {
  switch (path) {
    case LinearPath::None: return "none";
    case LinearPath::LtEpilogue: return "cublasLt-epilogue";
    case LinearPath::GemmFallback: return "gemm-fallback";
    case LinearPath::F32ThenRound: return "f32-then-round";
    case LinearPath::F32GemmThenRound: return "f32-gemm-then-round";
  }
  return "?";
}

namespace {

// The cublasLtMatmul of `c` with its plan for `align` (built on first use): D = op(A) ·
// op(B) in T, the epilogue's vector `bias` read (BIAS) or written (BGRADB), null for
// none. `ran` is false where cuBLASLt refused the plan (its reason in `refusal`);
// `first` says whether this is the first call to meet that refusal (a refusal is noted
// once per shape).
template <class T>
Status lt_matmul_locked(BlasState& s, const LinearCall& c, int align, const void* a,
                        const void* b, void* d, const void* bias, bool& ran, bool& first,
                        std::string* refusal) {
  first = false;
  Result<LtPlan*> plan = lt_plan_locked(s, c, align);
  if (!plan.ok()) return plan.status();
  LtPlan& p = *plan.value();
  ran = !p.refused;
  if (p.refused) {
    first = !p.refusal_noted;
    p.refusal_noted = true;
    if (refusal != nullptr) *refusal = p.refusal;
    return Status::Ok();
  }
  if (bias != nullptr) {
    VOUCH_CUBLAS_CHECK_WHAT(
        cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                       sizeof bias),
        "cublasLtMatmulDescSetAttribute(BIAS_POINTER) for " + c.to_string());
  }
  const T alpha = 1, beta = 0;
  log_blas_call("cublasLtMatmul");
  VOUCH_CUBLAS_CHECK_WHAT(cublasLtMatmul(s.lt, p.desc, &alpha, a, p.a, b, p.b, &beta, d, p.c, d,
                                         p.c, &p.algo, s.lt_workspace, kBlasWorkspaceBytes,
                                         s.stream),
                          c.to_string());
  return Status::Ok();
}

const char* linear_precision_name(const LinearCall& c) {
  return c.dtype == GemmDType::F64         ? "f64"
         : c.math == ProductMath::Bf16 ? "bf16 operands"
                                           : "f32";
}

// What linear_impl and weight_grad_impl share: `call` (a LinearCall or its error) run as
// one cublasLtMatmul with its epilogue (operands a, b, output d, epilogue vector `vec`);
// where cuBLASLt refuses it, the refusal is said once per shape on stderr ("note: cuBLASLt
// refused <epilogue> for <op>(rows, in, out, precision): why; using <fallback> instead")
// and `fallback(s)` runs under the same lock. Also the path where the Lt call does not
// apply (Api::GemmThenBias: an empty sum).
template <class T, class Fallback>
Status run_linear_call(const Result<LinearCall>& call, int align, const void* a,
                       const void* b, void* d, const void* vec, const char* op,
                       const char* epilogue, const char* fallback_name, LinearPath* path,
                       std::string* refusal, Fallback&& fallback) {
  if (!call.ok()) return call.status();
  const LinearCall& c = call.value();
  if (path != nullptr) *path = LinearPath::None;
  if (refusal != nullptr) refusal->clear();
  if (c.api == LinearCall::Api::None) return Status::Ok();

  BlasState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  VOUCH_RETURN_IF_ERROR(init_locked(s));

  if (c.api == LinearCall::Api::LtMatmul) {
    bool ran = false, first_refusal = false;
    std::string why;
    VOUCH_RETURN_IF_ERROR(
        lt_matmul_locked<T>(s, c, align, a, b, d, vec, ran, first_refusal, &why));
    if (ran) {
      if (path != nullptr) *path = LinearPath::LtEpilogue;
      return Status::Ok();
    }
    if (refusal != nullptr) *refusal = why;
    if (first_refusal) {
      // c.bias_grad: (m, n, k) = (in, out, rows); else (out, rows, in).
      const int rows = c.bias_grad ? c.k : c.n, in = c.bias_grad ? c.m : c.k,
                out = c.bias_grad ? c.n : c.m;
      std::fprintf(stderr,
                   "note: cuBLASLt refused %s for %s(rows=%d, in=%d, out=%d, %s): %s; using %s "
                   "instead\n",
                   epilogue, op, rows, in, out, linear_precision_name(c), why.c_str(),
                   fallback_name);
      std::fflush(stderr);
    }
  }
  VOUCH_RETURN_IF_ERROR(fallback(s));
  if (path != nullptr) *path = LinearPath::GemmFallback;
  return Status::Ok();
}

// A linear's fallback (or in = 0), under the lock: y = x · Wᵀ (cublasGemmEx), then
// y[r,:] += bias for every row (a bias-broadcast GEMM; a bf16 bias's with bf16 operands).
template <class In, class T, class Bias>
Status gemm_then_bias_locked(BlasState& s, int64_t rows, int64_t in, int64_t out, const In* x,
                             const In* W, const Bias* bias, T* y, ProductMath math) {
  constexpr bool f64 = std::is_same_v<T, double>, bf16_bias = std::is_same_v<Bias, bf16_bits>;
  static_assert(std::is_same_v<Bias, T> || (bf16_bias && std::is_same_v<T, float>));
  constexpr GemmDType dtype = f64 ? GemmDType::F64 : GemmDType::F32;
  Result<GemmCall> gemm = describe_gemm(false, true, 1, rows, out, in, 0, 0, false, math, dtype);
  if (!gemm.ok()) return gemm.status();
  VOUCH_RETURN_IF_ERROR(run_gemm_locked(s, gemm.value(), W, x, y));
  if (bias != nullptr) {
    Result<GemmCall> bc = describe_bias_broadcast(
        rows, out, dtype, bf16_bias ? ProductMath::Bf16 : ProductMath::Fp32);
    if (!bc.ok()) return bc.status();
    const void* one = f64         ? static_cast<const void*>(s.one_f64)
                      : bf16_bias ? static_cast<const void*>(s.ones_bf16)
                                  : static_cast<const void*>(s.one_f32);
    VOUCH_RETURN_IF_ERROR(run_gemm_locked(s, bc.value(), bias, one, y));
  }
  return Status::Ok();
}

int linear_alignment(const void* x, const void* W, const void* y, const void* bias) {
  return std::min({alignment_of(x), alignment_of(W), alignment_of(y),
                   bias != nullptr ? alignment_of(bias) : 16});
}

// `In`: the operands' storage (T, or bf16_bits under ProductMath::Bf16); T: bias and y.
template <class In, class T>
Status linear_impl(int64_t rows, int64_t in, int64_t out, const In* x, const In* W,
                   const T* bias, T* y, ProductMath math, LinearPath* path,
                   std::string* refusal) {
  static_assert(std::is_same_v<In, T> || std::is_same_v<In, bf16_bits>);
  constexpr GemmDType dtype = std::is_same_v<T, double> ? GemmDType::F64 : GemmDType::F32;
  auto fallback = [&](BlasState& s) -> Status {
    return gemm_then_bias_locked(s, rows, in, out, x, W, bias, y, math);
  };
  return run_linear_call<T>(describe_linear(rows, in, out, bias != nullptr, math, dtype),
                            linear_alignment(x, W, y, bias), W, x, y, bias, "linear",
                            bias != nullptr ? "CUBLASLT_EPILOGUE_BIAS" : "the matmul",
                            linear_fallback_name(bias != nullptr), path, refusal, fallback);
}

// y stored as bf16 by cublasLtMatmul (D = CUDA_R_16BF, the bias bf16); where cuBLASLt
// refuses that (or in = 0), the f32 linear into `y_f32`, which the caller rounds into y:
// without a bias its own cublasLtMatmul (path F32ThenRound), else (that refused too, or
// a bias: CUDA 13.0's cuBLASLt offers no algorithm for an f32 D beside a bf16 bias,
// tools/bench/linear_bf16_out.cu) the GEMM fallback with the bf16 bias broadcast
// (F32GemmThenRound).
Status linear_bf16_result_impl(int64_t rows, int64_t in, int64_t out, const bf16_bits* x,
                               const bf16_bits* W, const bf16_bits* bias, bf16_bits* y,
                               float* y_f32, LinearPath* path, std::string* refusal) {
  bool f32_lt = false;  // whether the fallback's f32 linear was a cublasLtMatmul
  auto fallback = [&](BlasState& s) -> Status {
    if (y_f32 == nullptr)
      return Status::Error("linear(rows=" + std::to_string(rows) + ", in=" +
                           std::to_string(in) + ", out=" + std::to_string(out) +
                           ", bf16 result): cuBLASLt stores no bf16 y here and no f32 "
                           "scratch was given for the f32 linear to round from");
    bool ran = false, first = false;
    if (bias == nullptr) {
      Result<LinearCall> f32 =
          describe_linear(rows, in, out, false, ProductMath::Bf16, GemmDType::F32);
      if (!f32.ok()) return f32.status();
      if (f32.value().api == LinearCall::Api::LtMatmul)
        VOUCH_RETURN_IF_ERROR(lt_matmul_locked<float>(s, f32.value(),
                                                      linear_alignment(x, W, y_f32, nullptr),
                                                      W, x, y_f32, nullptr, ran, first,
                                                      nullptr));
    }
    f32_lt = ran;
    if (!ran)
      VOUCH_RETURN_IF_ERROR(gemm_then_bias_locked(s, rows, in, out, x, W, bias, y_f32,
                                                  ProductMath::Bf16));
    return Status::Ok();
  };
  VOUCH_RETURN_IF_ERROR(run_linear_call<float>(
      describe_linear(rows, in, out, bias != nullptr, ProductMath::Bf16, GemmDType::F32,
                      /*bf16_result=*/true),
      linear_alignment(x, W, y, bias), W, x, y, bias, "linear",
      bias != nullptr ? "CUBLASLT_EPILOGUE_BIAS with a bf16 bias and D"
                      : "the matmul with a bf16 D",
      "the f32 linear, then vouch_round_bf16", path, refusal, fallback));
  if (path != nullptr && *path == LinearPath::GemmFallback)
    *path = f32_lt ? LinearPath::F32ThenRound : LinearPath::F32GemmThenRound;
  return Status::Ok();
}

// `In`: the operands' storage (T, or bf16_bits under ProductMath::Bf16); T: dW and db.
template <class In, class T>
Status weight_grad_impl(int64_t rows, int64_t in, int64_t out, const In* dy, const In* x,
                        T* dW, T* db, ProductMath math, LinearPath* path, std::string* refusal) {
  static_assert(std::is_same_v<In, T> || std::is_same_v<In, bf16_bits>);
  constexpr bool f64 = std::is_same_v<T, double>;
  constexpr GemmDType dtype = f64 ? GemmDType::F64 : GemmDType::F32;
  const int align =
      std::min({alignment_of(dy), alignment_of(x), alignment_of(dW), alignment_of(db)});
  // Fallback (or rows = 0, in = 0): dW = dyᵀ · x, then db = Σ_rows dy as GEMMs of dy's
  // slabs of kOnesRows rows with a column of ones, each slab's sums added to db.
  auto fallback = [&](BlasState& s) -> Status {
    Result<GemmCall> gemm =
        describe_gemm(true, false, 1, out, in, rows, 0, 0, false, math, dtype);
    if (!gemm.ok()) return gemm.status();
    VOUCH_RETURN_IF_ERROR(run_gemm_locked(s, gemm.value(), x, dy, dW));
    const void* ones = f64 ? static_cast<const void*>(s.ones_f64)
                       : std::is_same_v<In, bf16_bits> ? static_cast<const void*>(s.ones_bf16)
                                                       : static_cast<const void*>(s.ones_f32);
    int64_t first = 0;
    do {
      const int64_t slab = std::min(kOnesRows, rows - first);
      Result<GemmCall> sums = describe_column_sums(slab, out, first > 0, math, dtype);
      if (!sums.ok()) return sums.status();
      VOUCH_RETURN_IF_ERROR(run_gemm_locked(s, sums.value(), dy + first * out, ones, db));
      first += slab;
    } while (first < rows);
    return Status::Ok();
  };
  return run_linear_call<T>(describe_linear_weight_grad(rows, in, out, math, dtype), align, x,
                            dy, dW, db, "linear_weight_grad", "CUBLASLT_EPILOGUE_BGRADB",
                            weight_grad_fallback_name(), path, refusal,
                            fallback);
}

}  // namespace

Status linear_bias_row_major(int64_t rows, int64_t in, int64_t out, const float* x,
                             const float* W, const float* bias, float* y, ProductMath math,
                             LinearPath* path, std::string* refusal) {
  if (math == ProductMath::Bf16) return refuse_f32_operands_for_bf16("linear_bias_row_major");
  return linear_impl(rows, in, out, x, W, bias, y, math, path, refusal);
}

Status linear_bias_row_major(int64_t rows, int64_t in, int64_t out, const double* x,
                             const double* W, const double* bias, double* y, ProductMath math,
                             LinearPath* path, std::string* refusal) {
  return linear_impl(rows, in, out, x, W, bias, y, math, path, refusal);
}

Status linear_bias_row_major(int64_t rows, int64_t in, int64_t out, const bf16_bits* x,
                             const bf16_bits* W, const float* bias, float* y, LinearPath* path,
                             std::string* refusal) {
  return linear_impl(rows, in, out, x, W, bias, y, ProductMath::Bf16, path, refusal);
}

Status linear_bias_row_major(int64_t rows, int64_t in, int64_t out, const bf16_bits* x,
                             const bf16_bits* W, const bf16_bits* bias, bf16_bits* y,
                             float* y_f32, LinearPath* path, std::string* refusal) {
  return linear_bf16_result_impl(rows, in, out, x, W, bias, y, y_f32, path, refusal);
}

Status linear_weight_grad_row_major(int64_t rows, int64_t in, int64_t out, const float* dy,
                                    const float* x, float* dW, float* db, ProductMath math,
                                    LinearPath* path, std::string* refusal) {
  if (math == ProductMath::Bf16)
    return refuse_f32_operands_for_bf16("linear_weight_grad_row_major");
  return weight_grad_impl(rows, in, out, dy, x, dW, db, math, path, refusal);
}

Status linear_weight_grad_row_major(int64_t rows, int64_t in, int64_t out, const double* dy,
                                    const double* x, double* dW, double* db, ProductMath math,
                                    LinearPath* path, std::string* refusal) {
  return weight_grad_impl(rows, in, out, dy, x, dW, db, math, path, refusal);
}

Status linear_weight_grad_row_major(int64_t rows, int64_t in, int64_t out, const bf16_bits* dy,
                                    const bf16_bits* x, float* dW, float* db, LinearPath* path,
                                    std::string* refusal) {
  return weight_grad_impl(rows, in, out, dy, x, dW, db, ProductMath::Bf16, path, refusal);
}

int64_t column_sum_slab_rows() { return kOnesRows; }

BlasCallLog::BlasCallLog() : outer_(current_log) { current_log = this; }
BlasCallLog::~BlasCallLog() { current_log = outer_; }

void log_blas_call(const char* api) {
  if (current_log != nullptr) current_log->calls_.push_back(api);
}

Result<BlasConfiguration> blas_configuration() {
  BlasState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  VOUCH_RETURN_IF_ERROR(init_locked(s));
  BlasConfiguration c;
  cublasAtomicsMode_t mode = CUBLAS_ATOMICS_ALLOWED;
  VOUCH_CUBLAS_CHECK(cublasGetAtomicsMode(s.handle, &mode));
  c.atomics_allowed = mode != CUBLAS_ATOMICS_NOT_ALLOWED;
  VOUCH_CUBLAS_CHECK(cublasGetStream(s.handle, &c.stream));
  c.workspace_bytes = kBlasWorkspaceBytes;
  c.lt_workspace_bytes = kBlasWorkspaceBytes;
  c.lt_reduction_scheme_mask = kLtReductionSchemeMask;
  return c;
}

std::string lt_reduction_scheme_name(uint32_t scheme) {
  switch (scheme) {
    case CUBLASLT_REDUCTION_SCHEME_NONE: return "none";
    case CUBLASLT_REDUCTION_SCHEME_INPLACE: return "inplace";
    case CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE: return "compute-type";
    case CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE: return "output-type";
  }
  return std::to_string(scheme);
}

namespace {

Result<LinearCall> lt_linear_call(int64_t rows, int64_t in, int64_t out, bool with_bias,
                                  ProductMath math, bool bf16_result = false) {
  Result<LinearCall> call =
      describe_linear(rows, in, out, with_bias, math, GemmDType::F32, bf16_result);
  if (call.ok() && call.value().api != LinearCall::Api::LtMatmul)
    return Status::Error("linear(rows=" + std::to_string(rows) + ", in=" + std::to_string(in) +
                         ", out=" + std::to_string(out) + ") makes no cublasLtMatmul call");
  return call;
}

}  // namespace

Result<LtAlgorithm> linear_algorithm(int64_t rows, int64_t in, int64_t out, bool with_bias,
                                     ProductMath math, int align, bool bf16_result) {
  Result<LinearCall> call = lt_linear_call(rows, in, out, with_bias, math, bf16_result);
  if (!call.ok()) return call.status();
  BlasState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  VOUCH_RETURN_IF_ERROR(init_locked(s));
  Result<LtPlan*> plan = lt_plan_locked(s, call.value(), align);
  if (!plan.ok()) return plan.status();
  return describe_plan(*plan.value());
}

Result<LtAlgorithm> linear_heuristic_for_testing(int64_t rows, int64_t in, int64_t out,
                                                 bool with_bias, ProductMath math,
                                                 uint32_t reduction_scheme_mask) {
  Result<LinearCall> call = lt_linear_call(rows, in, out, with_bias, math);
  if (!call.ok()) return call.status();
  BlasState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  VOUCH_RETURN_IF_ERROR(init_locked(s));
  LtPlan plan;
  Status built = build_lt_plan(s, call.value(), 16, reduction_scheme_mask, plan);
  LtAlgorithm a = describe_plan(plan);
  destroy_plan(plan);
  if (!built.ok()) return built;
  return a;
}

void set_lt_refusal_for_testing(bool refuse) {
  BlasState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.refuse_for_testing = refuse;
  for (auto& [key, plan] : s.plans) destroy_plan(plan);
  s.plans.clear();
}

}  // namespace vouch::rt::cuda
