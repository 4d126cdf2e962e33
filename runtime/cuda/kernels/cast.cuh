// cast.cuh: cast(x, f32|f64|i32), element type conversion between the run's real type T
// and int32 (i32 values, and i1 masks stored as int32 0 / 1).
//
// Which conversion runs is which pointers are non-null: one of in_real / in_int, one of
// out_real / out_int. real -> real is a copy (a run has one real type, --dtype, so an
// f32 <-> f64 cast changes nothing at run time); int -> int a copy; int -> real exact
// (every int32 is a double; f32 rounds |v| > 2^24 to nearest, as torch's .to(float32)).
// real -> int truncates toward zero as torch's .to(torch.int32) does in range; outside
// it the result is defined here, never C++'s undefined conversion: NaN gives 0, values
// >= 2^31 - 1 give INT32_MAX, values <= -2^31 give INT32_MIN (saturation, the cpu
// kernel's and the interpreter's rule too).
//
// Launch: block 256, grid-stride over n elements.
// Generated entry points (the four pointer combinations the op's types select):
//   extern "C" __global__ void k_f32(const float* in, int* out, long long n) {
//     vouch::cast_kernel<float>(in, nullptr, nullptr, out, n); }
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_CAST_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_CAST_CUH_

#include "common.cuh"

namespace vouch {

// v truncated toward zero, saturated to int32, NaN -> 0.
template <class T>
__device__ inline int cast_to_int32(T v) {
  if (!(v == v)) return 0;
  if (v >= T(2147483647.0)) return 2147483647;
  if (v <= T(-2147483648.0)) return -2147483647 - 1;
  return static_cast<int>(v);  // in range: C++ truncates toward zero
}

template <class T>
__device__ void cast_kernel(const T* in_real, const int* in_int, T* out_real, int* out_int,
                            long long n) {
  for (long long i = grid_stride_begin(); i < n; i += grid_stride_step()) {
    if (out_real)
      out_real[i] = in_real ? in_real[i] : static_cast<T>(in_int[i]);
    else
      out_int[i] = in_int ? in_int[i] : cast_to_int32(in_real[i]);
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_CAST_CUH_
