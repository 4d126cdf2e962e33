// gemm_modes.cu: what cuBLAS's f32 compute modes cost at GPT-2 small's GEMM shapes
// (B·T = 8192 tokens), to choose the bf16 policy's GEMMs (docs/performance.md,
// 2026-12-02). Times cublasGemmEx with f32 operands and output under
// CUBLAS_COMPUTE_32F, _FAST_TF32 and _FAST_16BF, and with bf16 operands and output
// (CUDA_R_16BF, CUBLAS_COMPUTE_32F), then checks what each f32 mode rounds the
// operands to: A = 1 + 2^-9 (kept by TF32, dropped by bf16), B = 1, K = 64.
//   nvcc -O2 -arch=sm_90 gemm_modes.cu -lcublas -o gemm_modes && ./gemm_modes
#include <cstdio>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "event_timing.h"

namespace {

struct Shape {
  const char* name;
  int m, n, k;
};

// Mean ms of `reps` calls C[m,n] = A[m,k] · B[n,k]ᵀ (row-major, as vouch's linear),
// after 3 warm-up calls; -1 when cuBLAS refuses the combination.
float time_gemm(cublasHandle_t h, const Shape& s, cudaDataType io, cublasComputeType_t ct,
                void* a, void* b, void* c, int reps) {
  const float alpha = 1.f, beta = 0.f;
  auto call = [&] {
    return cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, s.n, s.m, s.k, &alpha, b, io, s.k, a, io,
                        s.k, &beta, c, io, s.n, ct, CUBLAS_GEMM_DEFAULT);
  };
  return time_ms([&] { return call() == CUBLAS_STATUS_SUCCESS; }, reps);
}

}  // namespace

int main() {
  const Shape shapes[] = {{"qkv", 8192, 2304, 768},       {"attn_proj", 8192, 768, 768},
                          {"fc", 8192, 3072, 768},        {"fc_proj", 8192, 768, 3072},
                          {"lm_head", 8192, 50304, 768},  {"lm_head_dW", 50304, 768, 8192}};
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    std::printf("no cuBLAS handle (no usable GPU?)\n");
    return 1;
  }
  const size_t most = size_t(50304) * 8192;
  void *a, *b, *c;
  if (cudaMalloc(&a, most * 4) != cudaSuccess || cudaMalloc(&b, most * 4) != cudaSuccess ||
      cudaMalloc(&c, most * 4) != cudaSuccess) {
    std::printf("out of device memory\n");
    return 1;
  }
  cudaMemset(a, 0, most * 4);
  cudaMemset(b, 0, most * 4);
  std::printf("%-11s %9s %9s %9s %9s   (ms per call; TFLOP/s)\n", "shape", "f32", "tf32",
              "f32_16bf", "bf16_io");
  for (const Shape& s : shapes) {
    const double flop = 2.0 * s.m * s.n * s.k;
    const float t[4] = {
        time_gemm(h, s, CUDA_R_32F, CUBLAS_COMPUTE_32F, a, b, c, 10),
        time_gemm(h, s, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, a, b, c, 20),
        time_gemm(h, s, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_16BF, a, b, c, 20),
        time_gemm(h, s, CUDA_R_16BF, CUBLAS_COMPUTE_32F, a, b, c, 20)};
    std::printf("%-11s %9.3f %9.3f %9.3f %9.3f   (%.0f %.0f %.0f %.0f)\n", s.name, t[0], t[1],
                t[2], t[3], flop / t[0] / 1e9, flop / t[1] / 1e9, flop / t[2] / 1e9,
                flop / t[3] / 1e9);
  }
  // What the f32 modes round to: every output is 64 · (1 + 2^-9) = 64.125 unless the
  // operands lost 2^-9 (bf16 rounding: 64).
  const int n = 64;
  std::vector<float> ha(n * n, 1.0f + 0x1p-9f), hb(n * n, 1.0f), hc(1);
  cudaMemcpy(a, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(b, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice);
  const Shape probe{"probe", n, n, n};
  for (auto [mode, name] : {std::pair<cublasComputeType_t, const char*>{
                                CUBLAS_COMPUTE_32F_FAST_TF32, "FAST_TF32"},
                            {CUBLAS_COMPUTE_32F_FAST_16BF, "FAST_16BF"}}) {
    time_gemm(h, probe, CUDA_R_32F, mode, a, b, c, 1);
    cudaMemcpy(hc.data(), c, 4, cudaMemcpyDeviceToHost);
    std::printf("%s: 64 x (1 + 2^-9) = %.4f (%s)\n", name, hc[0],
                hc[0] == 64.125f ? "operands kept 2^-9: not bf16" : "operands rounded to bf16");
  }
  return 0;
}
