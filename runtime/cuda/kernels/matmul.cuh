// matmul.cuh: small matrix products (matmul, and linear with its bias), one thread per
// output element.
//
// Why vouch has its own: a product of a few thousand multiply-adds is bound by launch
// latency, not arithmetic, and cuBLAS's kernels for it (gemv, a 128x32 SIMT tile) take
// several microseconds where this one takes about one. The plan sends a product here
// only under the profile's small-product rule (capsules/Profile.h); larger ones run in
// cuBLAS / cuBLASLt.
//
// Order: each output is one left fold over p = 0 .. k-1 starting at 0, then + bias[j]
// (the cpu reference's order, runtime/cpu_kernels.h); no atomics, so two runs give the
// same bits. Operands are read in place through the transpose flags (no copy).
//
// Launch: grid-stride over batch * m * n outputs, block 256.
// Generated entry points (codegen/recipes/GemmRecipe.cpp):
//   k_f32(const float* a, const float* b, float* c, long long batch, long long m,
//         long long n, long long k, long long stride_a, long long stride_b,
//         long long trans_a, long long trans_b)            -> small_product_kernel
//   k_f32(const float* x, const float* w, const float* bias, float* y, long long m,
//         long long n, long long k)                         -> small_linear_kernel
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_MATMUL_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_MATMUL_CUH_

#include "common.cuh"

namespace vouch {

// C[b] (m x n) = op(A[b]) (m x k) · op(B[b]) (k x n), row-major; A[b] at a + b * stride_a,
// B[b] at b + b * stride_b, C[b] at c + b * m * n. op() reads the stored [k, m] / [n, k]
// operand when its flag is set. `bias` (n values, or null) is added to every row.
template <class T>
__device__ void product_element(const T* a, const T* b, const T* bias, T* c, long long m,
                                long long n, long long k, long long stride_a,
                                long long stride_b, bool trans_a, bool trans_b,
                                long long flat) {
  const long long mn = m * n;
  const long long batch_index = index_div(flat, mn), rest = flat - batch_index * mn;
  const long long i = index_div(rest, n), j = rest - i * n;
  const T* A = a + batch_index * stride_a;
  const T* B = b + batch_index * stride_b;
  T acc = T(0);
  for (long long p = 0; p < k; p++) {
    const T x = trans_a ? A[p * m + i] : A[i * k + p];
    const T y = trans_b ? B[j * k + p] : B[p * n + j];
    acc += x * y;
  }
  c[flat] = bias != nullptr ? acc + bias[j] : acc;
}

template <class T>
__device__ void small_product_kernel(const T* a, const T* b, T* c, long long batch,
                                     long long m, long long n, long long k,
                                     long long stride_a, long long stride_b,
                                     long long trans_a, long long trans_b) {
  const long long total = batch * m * n;
  for (long long t = grid_stride_begin(); t < total; t += grid_stride_step())
    product_element<T>(a, b, nullptr, c, m, n, k, stride_a, stride_b, trans_a != 0,
                       trans_b != 0, t);
}

// y (m x n) = x (m x k) · W (n x k)ᵀ + bias (n): W is read through trans_b.
template <class T>
__device__ void small_linear_kernel(const T* x, const T* w, const T* bias, T* y, long long m,
                                    long long n, long long k) {
  const long long total = m * n;
  for (long long t = grid_stride_begin(); t < total; t += grid_stride_step())
    product_element<T>(x, w, bias, y, m, n, k, 0, 0, false, true, t);
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_MATMUL_CUH_
