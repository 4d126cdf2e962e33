// lm_head_pitch.cu: what the row pitch of GPT-2's tied LM head costs (50257 logits per
// row, an odd leading dimension) in its three products, under TF32 (f32 operands) and
// bf16 operands (f32 output), dense against padded pitches, and what the copies that
// pad or unpad 8192 rows cost (docs/performance.md, 2026-12-04).
//   nvcc -O2 -arch=sm_90 lm_head_pitch.cu -lcublas -o lm_head_pitch && ./lm_head_pitch
#include <cstdio>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "event_timing.h"

namespace {

constexpr int kTokens = 8192, kVocab = 50257, kWidth = 768;

// Four elements a thread where both pitches are multiples of 4.
__global__ void repitch4(const float* in, long long in_pitch, float* out, long long out_pitch,
                         long long rows, long long cols) {
  for (long long r = blockIdx.x; r < rows; r += gridDim.x)
    for (long long c = 4 * threadIdx.x; c < cols; c += 4 * blockDim.x) {
      if (c + 4 <= cols) {
        *reinterpret_cast<float4*>(out + r * out_pitch + c) =
            *reinterpret_cast<const float4*>(in + r * in_pitch + c);
      } else {
        for (long long e = c; e < cols; e++) out[r * out_pitch + e] = in[r * in_pitch + e];
      }
    }
}

// Unaligned source rows: the row's head until the first 16-byte boundary of the input
// one element a thread, then float4 loads; stores one by one.
__global__ void repitch_mixed(const float* in, long long in_pitch, float* out,
                              long long out_pitch, long long rows, long long cols) {
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* src = in + r * in_pitch;
    float* dst = out + r * out_pitch;
    const long long head = ((16 - (reinterpret_cast<unsigned long long>(src) & 15)) & 15) / 4;
    if (threadIdx.x < head) dst[threadIdx.x] = src[threadIdx.x];
    for (long long c = head + 4 * threadIdx.x; c < cols; c += 4 * blockDim.x) {
      if (c + 4 <= cols) {
        const float4 v = *reinterpret_cast<const float4*>(src + c);
        dst[c] = v.x, dst[c + 1] = v.y, dst[c + 2] = v.z, dst[c + 3] = v.w;
      } else {
        for (long long e = c; e < cols; e++) dst[e] = src[e];
      }
    }
  }
}

__global__ void repitch(const float* in, long long in_pitch, float* out, long long out_pitch,
                        long long rows, long long cols) {
  for (long long r = blockIdx.x; r < rows; r += gridDim.x)
    for (long long c = threadIdx.x; c < cols; c += blockDim.x)
      out[r * out_pitch + c] = in[r * in_pitch + c];
}

}  // namespace

int main() {
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    std::printf("no cuBLAS handle (no usable GPU?)\n");
    return 1;
  }
  void* ws;
  cudaMalloc(&ws, 64 << 20);
  cublasSetWorkspace(h, ws, 64 << 20);
  const size_t big = size_t(kTokens) * 50304;
  void *logits, *w, *x, *out;
  cudaMalloc(&logits, big * 4);
  cudaMalloc(&out, big * 4);
  cudaMalloc(&w, size_t(50304) * kWidth * 4);
  cudaMalloc(&x, size_t(kTokens) * kWidth * 4);
  cudaMemset(logits, 0, big * 4);
  cudaMemset(w, 0, size_t(50304) * kWidth * 4);
  cudaMemset(x, 0, size_t(kTokens) * kWidth * 4);
  const float one = 1.f, zero = 0.f;
  const int pitches[] = {kVocab, 50260, 50264, 50304};
  for (int bf16 = 0; bf16 < 2; bf16++) {
    const cudaDataType io = bf16 ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t ct = bf16 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
    for (int p : pitches) {
      for (int kpad = 0; kpad < 2; kpad++) {
        const int kv = kpad ? p : kVocab;  // dX's K: the vocabulary, padded with zero rows
        // forward: logitsᵀ[V, tokens] = Wᵀ(op T) · xᵀ, ldc = p
        // (kpad: M padded too, W with zero rows)
        const float fwd = time_ms([&] {
          return cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, kv, kTokens, kWidth, &one, w,
                              io, kWidth, x, io, kWidth, &zero, out, CUDA_R_32F, p, ct,
                              CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
        });
        // dX: dxᵀ[768, tokens] = Wᵀ(op N, [768, V]) · dlogitsᵀ(op N, ld p), K = V
        const float dx = time_ms([&] {
          return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, kWidth, kTokens, kv, &one, w, io,
                              kWidth, logits, io, p, &zero, out, CUDA_R_32F, kWidth, ct,
                              CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
        });
        // dW: dWᵀ[768, V] = xᵀ(op N) · dlogits(op T, ld p), K = tokens
        // (kpad: N padded, written to a scratch)
        const float dw = time_ms([&] {
          return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, kWidth, kv, kTokens, &one, x,
                              io, kWidth, logits, io, p, &zero, out, CUDA_R_32F, kWidth, ct,
                              CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
        });
        std::printf("%s pitch %d%s: fwd %.3f ms, dX %.3f ms, dW %.3f ms\n",
                    bf16 ? "bf16" : "tf32", p, kpad ? " K padded" : "", fwd, dx, dw);
      }
    }
  }
  for (int p : {50260, 50264}) {
    const float unpad = time_ms([&] {
      repitch<<<8192, 256>>>(static_cast<float*>(logits), p, static_cast<float*>(out), kVocab,
                             kTokens, kVocab);
      return cudaGetLastError() == cudaSuccess;
    });
    const float pad = time_ms([&] {
      repitch<<<8192, 256>>>(static_cast<float*>(logits), kVocab, static_cast<float*>(out), p,
                             kTokens, kVocab);
      return cudaGetLastError() == cudaSuccess;
    });
    const float pad4 = time_ms([&] {
      repitch4<<<8192, 256>>>(static_cast<float*>(logits), p, static_cast<float*>(out), p,
                              kTokens, kVocab);
      return cudaGetLastError() == cudaSuccess;
    });
    const float mixed = time_ms([&] {
      repitch_mixed<<<8192, 256>>>(static_cast<float*>(logits), kVocab, static_cast<float*>(out),
                                   p, kTokens, kVocab);
      return cudaGetLastError() == cudaSuccess;
    });
    const float mixed_un = time_ms([&] {
      repitch_mixed<<<8192, 256>>>(static_cast<float*>(logits), p, static_cast<float*>(out),
                                   kVocab, kTokens, kVocab);
      return cudaGetLastError() == cudaSuccess;
    });
    std::printf("copy 8192 x 50257 f32: pitch %d -> dense %.3f ms (mixed %.3f), dense -> pitch "
                "%.3f ms (mixed %.3f), pitch -> pitch float4 %.3f ms\n",
                p, unpad, mixed_un, pad, mixed, pad4);
  }
  return 0;
}
