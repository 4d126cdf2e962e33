// pointwise.cuh: one fused chain of elementwise ops over n elements, as one kernel.
//
// Why a template: the fusion pass groups pointwise ops (add, relu, the mse gradient's
// sub/scale/mul, fills, scalar broadcasts, ...) into chains; codegen emits each chain
// only as a small functor (its scalar expression) plus an `extern "C"` entry point.
// The loop, the loads and stores and their vector width live here, once, and the
// element count is an argument: one entry point serves every size.
//
// The functor, generated:
//   struct vouch_k3_op {
//     template <class T> __device__ void operator()(const T* a, T* r) const {
//       const T t0 = (a[0] + a[1]); r[0] = (t0 > T(0) ? t0 : T(0)); } };
// reads the NIn lane values a[0..NIn) and writes the NOut results r[0..NOut).
//
// The entry point, generated:
//   extern "C" __global__ void vouch_k3_f32(float* o0, const float* i0,
//       const float* i1, long long n, unsigned long long scalar_mask) {
//     float* out[] = {o0}; const float* in[] = {i0, i1};
//     vouch::pointwise_kernel<1, 2>(vouch_k3_op{}, out, in, n, scalar_mask); }
// With NIn = 0 (a constant fill) codegen passes `nullptr` for `in`.
//
// A chain ending in vouch.round_bf16 (a bf16 product's operand, rounded by the kernel
// that computes it) stores that result as bf16: bit k of the template argument Bf16Out
// marks output k as bf16 bits, its pointer the unsigned short buffer's cast to T*, each
// value rounded by round_to_bf16 as it is stored (f32 chains only; the entry point is
// f32 only):
//   extern "C" __global__ void vouch_k4_f32(unsigned short* o0, const float* i0,
//       long long n, unsigned long long scalar_mask) {
//     float* out[] = {reinterpret_cast<float*>(o0)}; const float* in[] = {i0};
//     vouch::pointwise_kernel<1, 1, 0x1ull>(vouch_k4_op{}, out, in, n, scalar_mask); }
//
// Launch: block 256; grid = max(1, min(ceil(n_lanes / 256), 1056)) with
// n_lanes = n / 4 when n % 4 == 0 (the f32 vector width), else n; the same grid for
// f32 and f64 (a Program's launch shape does not depend on the element type). The
// loop is grid-stride, so any grid computes every element; 1056 = 8 blocks of 256 on
// each of the H200's 132 SMs.
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_POINTWISE_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_POINTWISE_CUH_

#include "common.cuh"
#include "gelu.cuh"  // the scalar helpers gelu's formulas call

namespace vouch {

// Keeps `in` out of template argument deduction: T comes from `out`, so `nullptr`
// (NIn = 0) is accepted for `in`.
template <class T>
struct NonDeduced {
  using type = T;
};

// Input k with bit k of `scalar_mask` set is one element, in[k][0], read by every lane
// (a rank-0 value broadcast); the others have n elements.
//
// 128-bit path: taken when n is a multiple of the vector width and every non-scalar
// pointer (inputs and outputs) is 16-byte aligned (a bf16 output's 8 bytes of 4 values:
// 8-byte aligned); decided from the arguments alone, so every thread takes the same
// path. Otherwise one element per lane. Each element's value is the functor's
// expression either way: the path changes no result.
template <int NOut, int NIn, unsigned long long Bf16Out = 0, class T, class F>
__device__ void pointwise_kernel(const F& f, T* const* out,
                                 const typename NonDeduced<T>::type* const* in,
                                 long long n, unsigned long long scalar_mask) {
  static_assert(NOut >= 1, "a pointwise kernel writes at least one result");
  static_assert(NIn >= 0 && NIn <= 64, "scalar_mask has 64 bits");
  static_assert(Bf16Out == 0 || sizeof(T) == 4, "bf16 results are rounded from f32");
  constexpr int kIn = NIn > 0 ? NIn : 1;  // no zero-length arrays
  constexpr int W = Vec16<T>::kWidth;
  const long long begin = grid_stride_begin(), step = grid_stride_step();

  bool vector = n % W == 0;
#pragma unroll
  for (int k = 0; k < NOut; ++k)
    vector = vector && (reinterpret_cast<unsigned long long>(out[k]) &
                        ((Bf16Out >> k) & 1 ? 7 : 15)) == 0;
#pragma unroll
  for (int k = 0; k < NIn; ++k)
    if (!((scalar_mask >> k) & 1))
      vector = vector && (reinterpret_cast<unsigned long long>(in[k]) & 15) == 0;

  // Scalars are read once per thread, and only by threads with work (n may be 0).
  T s[kIn];
#pragma unroll
  for (int k = 0; k < kIn; ++k)
    s[k] = T(0);
  if (begin < n) {
#pragma unroll
    for (int k = 0; k < NIn; ++k)
      if ((scalar_mask >> k) & 1) s[k] = in[k][0];
  }

  if (vector) {
    const long long lanes = n / W;
    // Lane i's vectors: loaded, computed, stored.
    auto load = [&](long long i, Vec16<T>* l) {
#pragma unroll
      for (int k = 0; k < NIn; ++k)
        if (!((scalar_mask >> k) & 1)) l[k] = reinterpret_cast<const Vec16<T>*>(in[k])[i];
    };
    auto compute_store = [&](long long i, const Vec16<T>* l) {
      Vec16<T> o[NOut];
#pragma unroll
      for (int j = 0; j < W; ++j) {
        T a[kIn];
#pragma unroll
        for (int k = 0; k < kIn; ++k)
          a[k] = k < NIn && !((scalar_mask >> k) & 1) ? l[k].v[j] : s[k];
        T r[NOut];
        f(static_cast<const T*>(a), r);
#pragma unroll
        for (int k = 0; k < NOut; ++k)
          o[k].v[j] = r[k];
      }
#pragma unroll
      for (int k = 0; k < NOut; ++k) {
        if constexpr (Bf16Out != 0) {
          if ((Bf16Out >> k) & 1) {
            ushort4 q;
            q.x = round_to_bf16(o[k].v[0]), q.y = round_to_bf16(o[k].v[1]);
            q.z = round_to_bf16(o[k].v[2]), q.w = round_to_bf16(o[k].v[3]);
            reinterpret_cast<ushort4*>(out[k])[i] = q;
            continue;
          }
        }
        reinterpret_cast<Vec16<T>*>(out[k])[i] = o[k];
      }
    };
    long long i = begin;
    for (; i + step < lanes; i += 2 * step) {  // two lanes' loads in flight
      Vec16<T> l0[kIn], l1[kIn];
      load(i, l0);
      load(i + step, l1);
      compute_store(i, l0);
      compute_store(i + step, l1);
    }
    for (; i < lanes; i += step) {
      Vec16<T> l[kIn];
      load(i, l);
      compute_store(i, l);
    }
    return;
  }
  for (long long i = begin; i < n; i += step) {
    T a[kIn];
#pragma unroll
    for (int k = 0; k < kIn; ++k)
      a[k] = k < NIn && !((scalar_mask >> k) & 1) ? in[k][i] : s[k];
    T r[NOut];
    f(static_cast<const T*>(a), r);
#pragma unroll
    for (int k = 0; k < NOut; ++k) {
      if constexpr (Bf16Out != 0) {
        if ((Bf16Out >> k) & 1) {
          reinterpret_cast<unsigned short*>(out[k])[i] = round_to_bf16(r[k]);
          continue;
        }
      }
      out[k][i] = r[k];
    }
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_POINTWISE_CUH_
