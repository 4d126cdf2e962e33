// linear_bf16_out.cu: what a bf16 result would change in GPT-2's linears (bf16 x and W,
// an f32 bias, FP32 compute, cuBLASLt's BIAS epilogue, the runtime's preferences: 32 MiB
// workspace, reduction schemes 0x6). For each of the four linear shapes, D = f32 (what
// vouch runs today, its bf16 copy made by a round_bf16 kernel after) against D = bf16
// with the bias f32 (BIAS_DATA_TYPE 32F) and with the bias rounded to bf16: whether
// cuBLASLt takes them, its algorithm, the time, and how many results differ from the f32
// result (with the bf16 bias: the f32 result of that bias's values) rounded to nearest
// even (0: a folded round_bf16 keeps every bit). Also whether an f32 D takes a bf16 bias. The question
// behind docs/plans/gpt2.md's "cuBLASLt bf16 output". Also each algorithm the heuristic
// offers for the f32 result, the product without its bias, and cublasGemmEx's time for it
// (the forward linears measured at about half the TFLOP/s of the backward products).
// From the repository root:
//   nvcc -O2 -arch=sm_90 -I . tools/bench/linear_bf16_out.cu -lcublasLt -lcublas -o linear_bf16_out
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "runtime/cpu_kernels.h"  // round_to_bf16: vouch.round_bf16's reference
#include "runtime/cuda/blas.h"    // the runtime's cuBLASLt preferences
#include "tools/bench/event_timing.h"

namespace {

using vouch::rt::round_to_bf16;
constexpr size_t kWorkspaceBytes = vouch::rt::cuda::kBlasWorkspaceBytes;
constexpr uint32_t kReductionSchemes = vouch::rt::cuda::kLtReductionSchemeMask;

struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  int id = -1, tile = -1, splits = 1, stages = -1;
  size_t workspace = 0;
  bool ok = false;
  const char* why = "";
};

// y[rows, out] = x[rows, in] · W[out, in]ᵀ + bias as the runtime describes it: A = W
// stored column-major [in, out] (opA = T), B = xᵀ [in, rows] (opB = N), D = yᵀ [out, rows].
// The heuristic's choice `rank` (0: its first, which the runtime takes when its split-K
// reduction is allowed); ok false past the last it offers.
Plan make_plan(cublasLtHandle_t lt, int out, int rows, int in, cudaDataType_t d_type,
               cudaDataType_t bias_type,
               cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS, int rank = 0) {
  Plan p;
  const cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
  cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t);
  cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof n);
  cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                 sizeof epilogue);
  if (cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                     sizeof bias_type) != CUBLAS_STATUS_SUCCESS) {
    p.why = "BIAS_DATA_TYPE refused";
    return p;
  }
  cublasLtMatrixLayoutCreate(&p.a, CUDA_R_16BF, in, out, in);
  cublasLtMatrixLayoutCreate(&p.b, CUDA_R_16BF, in, rows, in);
  cublasLtMatrixLayoutCreate(&p.d, d_type, out, rows, out);
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulPreferenceCreate(&pref);
  const uint64_t workspace = kWorkspaceBytes;
  const uint32_t schemes = kReductionSchemes;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                       &workspace, sizeof workspace);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                       &schemes, sizeof schemes);
  cublasLtMatmulHeuristicResult_t results[8] = {};
  int found = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt, p.desc, p.a, p.b, p.d, p.d,
                                                           pref, 8, results, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || found <= rank) {
    p.why = "no algorithm offered";
    return p;
  }
  p.algo = results[rank].algo;
  p.workspace = results[rank].workspaceSize;
  size_t written = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&p.algo, CUBLASLT_ALGO_CONFIG_ID, &p.id, sizeof p.id,
                                       &written);
  cublasLtMatmulAlgoConfigGetAttribute(&p.algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &p.tile,
                                       sizeof p.tile, &written);
  cublasLtMatmulAlgoConfigGetAttribute(&p.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &p.splits,
                                       sizeof p.splits, &written);
  cublasLtMatmulAlgoConfigGetAttribute(&p.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &p.stages,
                                       sizeof p.stages, &written);
  p.ok = true;
  return p;
}

}  // namespace

int main() {
  cublasLtHandle_t lt = nullptr;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) {
    std::printf("linear_bf16_out: cublasLtCreate failed (no CUDA device?)\n");
    return 1;
  }
  void* workspace = nullptr;
  cudaMalloc(&workspace, kWorkspaceBytes);
  // GPT-2's linears at B·T = 8192 rows: qkv, the attention's projection, fc, fc's projection.
  const int shapes[4][3] = {{2304, 8192, 768}, {768, 8192, 768}, {3072, 8192, 768},
                            {768, 8192, 3072}};
  std::mt19937 gen(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  int failures = 0;
  for (const auto& s : shapes) {
    const int out = s[0], rows = s[1], in = s[2];
    std::vector<uint16_t> w(size_t(out) * in), x(size_t(rows) * in), bias16(out);
    std::vector<float> bias(out);
    for (uint16_t& v : w) v = round_to_bf16(0.02f * normal(gen));
    for (uint16_t& v : x) v = round_to_bf16(normal(gen));
    for (int i = 0; i < out; i++) bias16[i] = round_to_bf16(bias[i] = 0.1f * normal(gen));
    // The bf16 bias widened back to f32: the f32 D's bias whose rounding a bf16 D with
    // the bf16 bias should give.
    std::vector<float> bias_widened(out);
    for (int i = 0; i < out; i++) {
      const uint32_t bits = uint32_t(bias16[i]) << 16;
      std::memcpy(&bias_widened[i], &bits, 4);
    }
    void *dw, *dx, *dbias, *dbias16, *dbias_widened, *y32, *y16;
    cudaMalloc(&dw, w.size() * 2);
    cudaMalloc(&dx, x.size() * 2);
    cudaMalloc(&dbias, out * 4);
    cudaMalloc(&dbias16, out * 2);
    cudaMalloc(&dbias_widened, out * 4);
    cudaMalloc(&y32, size_t(out) * rows * 4);
    cudaMalloc(&y16, size_t(out) * rows * 2);
    cudaMemcpy(dw, w.data(), w.size() * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(dx, x.data(), x.size() * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(dbias, bias.data(), out * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dbias16, bias16.data(), out * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(dbias_widened, bias_widened.data(), out * 4, cudaMemcpyHostToDevice);
    std::printf("linear rows=%d in=%d out=%d\n", rows, in, out);
    const float one = 1.f, zero = 0.f;
    auto call = [&](Plan& p, const void* b, void* d) {
      if (b != nullptr)
        cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &b, sizeof b);
      return cublasLtMatmul(lt, p.desc, &one, dw, p.a, dx, p.b, &zero, d, p.d, d, p.d, &p.algo,
                            workspace, kWorkspaceBytes, nullptr) == CUBLAS_STATUS_SUCCESS;
    };
    Plan f32 = make_plan(lt, out, rows, in, CUDA_R_32F, CUDA_R_32F);
    if (!f32.ok || !call(f32, dbias, y32) || cudaDeviceSynchronize() != cudaSuccess) {
      std::printf("  D f32: refused (%s)\n", f32.why);
      ++failures;
      continue;
    }
    std::vector<float> want(size_t(out) * rows);
    cudaMemcpy(want.data(), y32, want.size() * 4, cudaMemcpyDeviceToHost);
    const double gflop = 2e-9 * double(out) * rows * in;
    auto line = [&](const char* name, const Plan& p, float us) {
      std::printf("  %s algo %3d tile %3d stages %3d splitK %2d ws %8zu  %8.1f us %6.0f TFLOP/s",
                  name, p.id, p.tile, p.stages, p.splits, p.workspace, us, gflop / us * 1e3);
    };
    line("D f32, bias f32:   ", f32, 1000.f * time_ms([&] { return call(f32, dbias, y32); }));
    std::printf("\n");
    // Whether the heuristic's first is the fastest it offers, and what the bias costs
    // (GPT-2's forward linears ran at about half the TFLOP/s of its backward products).
    for (int rank = 1; rank < 8; rank++) {
      Plan p = make_plan(lt, out, rows, in, CUDA_R_32F, CUDA_R_32F, CUBLASLT_EPILOGUE_BIAS, rank);
      if (!p.ok) break;
      char name[32];
      std::snprintf(name, sizeof name, "  ... its choice %d:", rank);
      line(name, p, 1000.f * time_ms([&] { return call(p, dbias, y32); }));
      std::printf("\n");
    }
    // cuBLAS's cublasGemmEx, as the runtime's backward products call it, on the same
    // operands (no bias): what the same product takes through the other API.
    {
      cublasHandle_t blas = nullptr;
      cublasCreate(&blas);
      cublasSetWorkspace(blas, workspace, kWorkspaceBytes);
      const float us = 1000.f * time_ms([&] {
        return cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, out, rows, in, &one, dw, CUDA_R_16BF,
                            in, dx, CUDA_R_16BF, in, &zero, y32, CUDA_R_32F, out,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
      });
      std::printf("  cublasGemmEx, D f32, no bias: %8.1f us %6.0f TFLOP/s\n", us,
                  gflop / us * 1e3);
      cublasDestroy(blas);
    }
    // The bias-free f32 result: the reference of the bias-free bf16 D.
    std::vector<float> want_plain(want.size());
    Plan plain = make_plan(lt, out, rows, in, CUDA_R_32F, CUDA_R_32F, CUBLASLT_EPILOGUE_DEFAULT);
    if (plain.ok && call(plain, nullptr, y32) && cudaDeviceSynchronize() == cudaSuccess) {
      cudaMemcpy(want_plain.data(), y32, want_plain.size() * 4, cudaMemcpyDeviceToHost);
      line("D f32, no bias:    ", plain, 1000.f * time_ms([&] { return call(plain, nullptr, y32); }));
      std::printf("\n");
    }
    // The f32 D with the bf16 bias's values: the reference of the bf16 D with that bias.
    std::vector<float> want_widened(want.size());
    if (call(f32, dbias_widened, y32) && cudaDeviceSynchronize() == cudaSuccess)
      cudaMemcpy(want_widened.data(), y32, want_widened.size() * 4, cudaMemcpyDeviceToHost);
    // An f32 D beside a bf16 bias (BIAS_DATA_TYPE 16BF): whether cuBLASLt offers it.
    {
      Plan p = make_plan(lt, out, rows, in, CUDA_R_32F, CUDA_R_16BF);
      if (!p.ok || !call(p, dbias16, y32) || cudaDeviceSynchronize() != cudaSuccess) {
        std::printf("  D f32, bias bf16:  refused (%s)\n", p.why);
      } else {
        std::vector<float> got(want.size());
        cudaMemcpy(got.data(), y32, got.size() * 4, cudaMemcpyDeviceToHost);
        long long differ = 0;
        for (size_t i = 0; i < got.size(); i++) differ += got[i] != want_widened[i];
        line("D f32, bias bf16:  ", p, 1000.f * time_ms([&] { return call(p, dbias16, y32); }));
        std::printf("  %lld of %zu differ from D f32 with the widened bias\n", differ,
                    got.size());
      }
    }
    struct Variant {
      const char* name;
      cudaDataType_t bias_type;
      const void* bias;
      cublasLtEpilogue_t epilogue;
      const std::vector<float>& reference;
    };
    for (const Variant& v :
         {Variant{"D bf16, bias f32: ", CUDA_R_32F, dbias, CUBLASLT_EPILOGUE_BIAS, want},
          Variant{"D bf16, bias bf16:", CUDA_R_16BF, dbias16, CUBLASLT_EPILOGUE_BIAS,
                  want_widened},
          Variant{"D bf16, no bias:  ", CUDA_R_16BF, nullptr, CUBLASLT_EPILOGUE_DEFAULT,
                  want_plain}}) {
      Plan p = make_plan(lt, out, rows, in, CUDA_R_16BF, v.bias_type, v.epilogue);
      if (!p.ok || !call(p, v.bias, y16) || cudaDeviceSynchronize() != cudaSuccess) {
        std::printf("  %s refused (%s)\n", v.name, p.why);
        continue;
      }
      std::vector<uint16_t> got(want.size());
      cudaMemcpy(got.data(), y16, got.size() * 2, cudaMemcpyDeviceToHost);
      long long differ = 0, first = -1;
      const std::vector<float>& ref = v.reference;
      for (size_t i = 0; i < got.size(); i++)
        if (got[i] != round_to_bf16(ref[i])) {
          if (first < 0) first = (long long)i;
          ++differ;
        }
      line(v.name, p, 1000.f * time_ms([&] { return call(p, v.bias, y16); }));
      std::printf("  %lld of %zu differ from RNE(D f32)", differ, got.size());
      if (first >= 0)
        std::printf(" (first at %lld: %04x, RNE %04x of %.9g)", first, got[size_t(first)],
                    round_to_bf16(ref[size_t(first)]), ref[size_t(first)]);
      std::printf("\n");
    }
    for (void* ptr : {dw, dx, dbias, dbias16, dbias_widened, y32, y16}) cudaFree(ptr);
  }
  cudaFree(workspace);
  cublasLtDestroy(lt);
  return failures == 0 ? 0 : 1;
}
