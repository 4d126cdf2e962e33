// tensor_cores.cuh: the two TF32 tensor-core primitives the attention kernels
// (attention.cuh, attention64.cuh) and the implicit-GEMM convolution (col2im_matmul.cuh)
// share: an f32 rounded to TF32, and one m16n8k8 TF32 mma. sm_80 or newer (they trap
// below).
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_TENSOR_CORES_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_TENSOR_CORES_CUH_

namespace vouch {

// x rounded to TF32 (10 mantissa bits; nearest, ties away from zero), as a float.
__device__ inline float tf32_round(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
#else
  __trap();
  return x;
#endif
}

// c += a · b for one m16n8k8 tile, operands TF32 bit patterns in PTX's fragment layout
// (a0 row g col t, a1 row g + 8, a2 col t + 4, a3; b0 k t n g, b1 k t + 4; c0, c1 row g
// cols 2t, 2t + 1, c2, c3 row g + 8; g = lane / 4, t = lane % 4), sums in f32.
__device__ inline void mma_tf32_m16n8k8(float (&c)[4], unsigned a0, unsigned a1, unsigned a2,
                                        unsigned a3, unsigned b0, unsigned b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
  __trap();
#endif
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_TENSOR_CORES_CUH_
