// executor_test_kernels.cu (tests only): CUDA kernels for executor_test.cc, built by a
// test-only nvcc genrule (-fmad=false, like the host reference): the MLP kernels of
// runtime/test_program.h under its kernel names plus _f32 / _f64, and the executor's own
// kernels (batch selection, the optimizer that ends the step): the real ones of
// runtime/cuda/kernels/executor.cuh, as NVRTC compiles them into every model's module.
// The MLP kernels are plain grid-stride loops; sums run in one thread in the host
// reference's order, so only the cuBLAS GEMMs differ from the cpu.
#include "runtime/cuda/kernels/dims.h"
#include "runtime/cuda/kernels/executor.cuh"

namespace {

__device__ long long first_index() { return blockIdx.x * (long long)blockDim.x + threadIdx.x; }
__device__ long long stride_of_grid() { return (long long)gridDim.x * blockDim.x; }

__device__ long long dims_numel(const vouch::Dims& d) {
  long long n = 1;
  for (int a = 0; a < d.rank; a++) n *= d.extent[a];
  return n;
}
__device__ long long dims_offset(const vouch::Dims& d, long long flat) {
  long long offset = 0;
  for (int a = d.rank; a-- > 0;) {
    offset += (flat % d.extent[a]) * d.stride[a];
    flat /= d.extent[a];
  }
  return offset;
}

template <class T>
__device__ void relu(T* out, const T* in, long long n) {
  for (long long i = first_index(); i < n; i += stride_of_grid()) out[i] = in[i] > T(0) ? in[i] : T(0);
}
template <class T>
__device__ void step(T* out, const T* in, long long n) {
  for (long long i = first_index(); i < n; i += stride_of_grid()) out[i] = in[i] > T(0) ? T(1) : T(0);
}
template <class T>
__device__ void mul(T* out, const T* a, const T* b, long long n) {
  for (long long i = first_index(); i < n; i += stride_of_grid()) out[i] = a[i] * b[i];
}
template <class T>
__device__ void sub(T* out, const T* a, const T* b, long long n) {
  for (long long i = first_index(); i < n; i += stride_of_grid()) out[i] = a[i] - b[i];
}
template <class T>
__device__ void scale(T* out, const T* in, double s, long long n) {
  for (long long i = first_index(); i < n; i += stride_of_grid()) out[i] = in[i] * T(s);
}
template <class T>
__device__ void fill(T* out, double v, long long n) {
  for (long long i = first_index(); i < n; i += stride_of_grid()) out[i] = T(v);
}
template <class T>
__device__ void mse_loss(T* out, const T* pred, const T* target, long long n) {
  if (first_index() != 0) return;
  T acc = T(0);
  for (long long i = 0; i < n; i++) {
    T d = pred[i] - target[i];
    acc += d * d;
  }
  out[0] = acc / T(n);
}
// One thread per kept element (2-D blocks flattened).
template <class T>
__device__ void reduce_sum(T* out, const T* in, vouch::Dims kept, vouch::Dims reduced) {
  long long tid = blockIdx.x * (long long)(blockDim.x * blockDim.y) + threadIdx.y * blockDim.x +
                  threadIdx.x;
  long long threads = (long long)gridDim.x * blockDim.x * blockDim.y;
  for (long long o = tid; o < dims_numel(kept); o += threads) {
    long long base = dims_offset(kept, o);
    T acc = T(0);
    for (long long r = 0; r < dims_numel(reduced); r++) acc += in[base + dims_offset(reduced, r)];
    out[o] = acc;
  }
}

}  // namespace

#define VOUCH_TEST_KERNELS(T, SUFFIX)                                                          \
  extern "C" __global__ void mlp_relu##SUFFIX(T* out, const T* in, long long n) {              \
    relu(out, in, n);                                                                          \
  }                                                                                            \
  extern "C" __global__ void mlp_step##SUFFIX(T* out, const T* in, long long n) {              \
    step(out, in, n);                                                                          \
  }                                                                                            \
  extern "C" __global__ void mlp_mul##SUFFIX(T* out, const T* a, const T* b, long long n) {    \
    mul(out, a, b, n);                                                                         \
  }                                                                                            \
  extern "C" __global__ void mlp_sub##SUFFIX(T* out, const T* a, const T* b, long long n) {    \
    sub(out, a, b, n);                                                                         \
  }                                                                                            \
  extern "C" __global__ void mlp_scale##SUFFIX(T* out, const T* in, double s, long long n) {   \
    scale(out, in, s, n);                                                                      \
  }                                                                                            \
  extern "C" __global__ void mlp_fill##SUFFIX(T* out, double v, long long n) { fill(out, v, n); } \
  extern "C" __global__ void mlp_mse_loss##SUFFIX(T* out, const T* p, const T* t, long long n) { \
    mse_loss(out, p, t, n);                                                                    \
  }                                                                                            \
  extern "C" __global__ void mlp_reduce_sum##SUFFIX(T* out, const T* in, vouch::Dims kept,     \
                                                    vouch::Dims reduced) {                     \
    reduce_sum(out, in, kept, reduced);                                                        \
  }

VOUCH_TEST_KERNELS(float, _f32)
VOUCH_TEST_KERNELS(double, _f64)

// A kernel with a different argument list than mlp_relu's step passes (for the
// argument-check test): a Dims where the step passes a pointer.
extern "C" __global__ void mlp_wrong_f64(vouch::Dims d, const double* in, long long n) {}
extern "C" __global__ void mlp_wrong_f32(vouch::Dims d, const float* in, long long n) {}
