// gelu.cuh: GELU's formula and derivative as scalar device helpers, for the pointwise
// functors (gelu emits `vouch::gelu_tanh(x)` / `vouch::gelu_erf(x)`, its VJP
// `vouch::gelu_tanh_grad(x)` / `vouch::gelu_erf_grad(x)`).
//
// Why intrinsics: NVRTC compiles vouch's kernels with -fmad=true (capsules::
// kNativeCudaFmad), which lets it contract a·b + c into one FMA. gelu's capsule claims
// contract=none instead (its ODS record), as TorchLean evaluates it: every product and
// sum here is __fmul_rn / __fadd_rn (__dmul_rn / __dadd_rn for double), which the
// compiler never merges into an FMA, whatever -fmad says and whatever chain the helper
// is inlined into. tanh, erf and exp are CUDA's math functions (their documented ulp
// bounds; how they are computed inside is theirs). The steps are those of
// runtime/cpu_kernels.h's cpu helpers, so both targets round the same operations.
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_GELU_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_GELU_CUH_

#include "common.cuh"  // mul_rn, add_rn, sub_rn

namespace vouch {

// u = √(2/π)·(x + 0.044715·x³), the argument of tanh.
template <class T>
__device__ inline T gelu_tanh_inner(T x) {
  const T x3 = mul_rn(mul_rn(x, x), x);
  return mul_rn(T(0.7978845608028654), add_rn(x, mul_rn(T(0.044715), x3)));
}

// 0.5·x·(1 + t): the outer product of both forms (t = tanh(u) or erf(x/√2)).
template <class T>
__device__ inline T gelu_outer(T x, T t) {
  return mul_rn(mul_rn(T(0.5), x), add_rn(T(1), t));
}

// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))): TorchLean's (PyTorch's "tanh") form.
template <class T>
__device__ inline T gelu_tanh(T x) {
  return gelu_outer(x, tanh(gelu_tanh_inner(x)));
}

// 0.5·x·(1 + erf(x/√2)): PyTorch's exact ("none") form.
template <class T>
__device__ inline T gelu_erf(T x) {
  return gelu_outer(x, erf(mul_rn(x, T(0.7071067811865476))));
}

// ½(1 + t) + ½x·((1 - t²)·u'), u' = √(2/π)(1 + 3·0.044715·x²), t = tanh(u).
template <class T>
__device__ inline T gelu_tanh_grad(T x) {
  const T x2 = mul_rn(x, x);
  const T t = tanh(gelu_tanh_inner(x));
  const T du = mul_rn(T(0.7978845608028654), add_rn(T(1), mul_rn(T(0.134145), x2)));
  const T left = mul_rn(T(0.5), add_rn(T(1), t));
  return add_rn(left, mul_rn(mul_rn(T(0.5), x), mul_rn(sub_rn(T(1), mul_rn(t, t)), du)));
}

// Φ(x) + x·φ(x): the standard normal's cdf and density.
template <class T>
__device__ inline T gelu_erf_grad(T x) {
  const T cdf = mul_rn(T(0.5), add_rn(T(1), erf(mul_rn(x, T(0.7071067811865476)))));
  const T pdf = mul_rn(exp(mul_rn(T(-0.5), mul_rn(x, x))), T(0.3989422804014327));
  return add_rn(cdf, mul_rn(x, pdf));
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_GELU_CUH_
