// fast_divide.h: n / d for 32-bit unsigned n by a divisor known only at run time, as a
// multiply-high, an add and a shift (Granlund & Montgomery, "Division by invariant
// integers using multiplication", 1994; PyTorch's IntDivider). The GPU has no integer
// divider: a 32-bit division is a ~20-instruction sequence, and im2col / col2im divide
// every element's flat index by several extents of the geometry. Exact for every n and
// every d ≥ 1 (fast_divide_test checks it on the host against `/`). Plain C++ that
// also compiles as CUDA device code (NVRTC included), like conv_geometry.h.
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_FAST_DIVIDE_H_
#define VOUCH_RUNTIME_CUDA_KERNELS_FAST_DIVIDE_H_

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define VOUCH_FAST_DIVIDE_HD __host__ __device__
#else
#define VOUCH_FAST_DIVIDE_HD
#endif

namespace vouch {

struct FastDivide {
  unsigned divisor, multiplier, shift;

  // shift = ceil(log2 d), multiplier = floor(2^32·(2^shift − d) / d) + 1 (< 2^32).
  VOUCH_FAST_DIVIDE_HD explicit FastDivide(unsigned d) : divisor(d), multiplier(0), shift(0) {
    while (shift < 32 && (1ull << shift) < d) ++shift;
    multiplier = unsigned(((1ull << 32) * ((1ull << shift) - d)) / d + 1);
  }
  // n / d = (mulhi(n, multiplier) + n) >> shift, the sum in 64 bits (it can pass 2^32).
  VOUCH_FAST_DIVIDE_HD unsigned quotient(unsigned n) const {
#if defined(__CUDA_ARCH__)
    const unsigned high = __umulhi(n, multiplier);
#else
    const unsigned high = unsigned((static_cast<unsigned long long>(n) * multiplier) >> 32);
#endif
    return unsigned((static_cast<unsigned long long>(high) + n) >> shift);
  }
};

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_FAST_DIVIDE_H_
