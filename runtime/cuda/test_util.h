// test_util.h: the guard of tests that need a CUDA device, and host helpers they share.
//
// CI has no GPU; the GPU suite runs the same test binaries on an H200. A test that
// needs a device starts with VOUCH_REQUIRE_CUDA_DEVICE("what it checks"): with no
// usable device it prints exactly one line `SKIPPED (no CUDA device): <what>` and
// skips (GTEST_SKIP), so a skip is never silent.
#ifndef VOUCH_RUNTIME_CUDA_TEST_UTIL_H_
#define VOUCH_RUNTIME_CUDA_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "runtime/cuda/gemm_call.h"
#include "runtime/cuda/status.h"

namespace vouch::rt::cuda {

inline bool cuda_device_present() {
  return probe_runtime().state == RuntimeState::NativeWithDevice;
}

// An f32's bf16 bits, nearest even, computed as the quotient of an integer division
// (not executor.cuh's bit trick): u / 2^16 rounded half to even. NaN never occurs here.
inline bf16_bits host_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t q = u / 65536u, r = u % 65536u;
  return bf16_bits(r > 32768u || (r == 32768u && q % 2u == 1u) ? q + 1u : q);
}

// The value of bf16 bits.
inline double bf16_value(bf16_bits b) {
  const uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return double(f);
}

// A copy laid out as vouch_round_bf16_f32 / vouch_repitch_f32 write it into the scratch
// (gemm_call.h's OperandLayout), its values as given: `in`'s matrices at the layout's
// rows and pitch, every pad zero.
template <class T>
std::vector<T> lay_out(const std::vector<T>& in, const OperandLayout& l) {
  std::vector<T> out(size_t(l.scratch_elements()), T(0));
  for (int64_t b = 0; b < l.batches; b++)
    for (int64_t r = 0; r < l.rows; r++)
      for (int64_t c = 0; c < l.cols; c++)
        out[size_t((b * l.out_rows + r) * l.pitch + c)] = in[size_t((b * l.rows + r) * l.cols + c)];
  return out;
}

// The reverse: a padded output's real rows and columns (vouch_repitch_f32 copying C out).
template <class T>
std::vector<T> un_lay_out(const std::vector<T>& padded, const OperandLayout& l) {
  std::vector<T> out(size_t(l.batches * l.rows * l.cols));
  for (int64_t b = 0; b < l.batches; b++)
    for (int64_t r = 0; r < l.rows; r++)
      for (int64_t c = 0; c < l.cols; c++)
        out[size_t((b * l.rows + r) * l.cols + c)] =
            padded[size_t((b * l.out_rows + r) * l.pitch + c)];
  return out;
}

}  // namespace vouch::rt::cuda

#define VOUCH_REQUIRE_CUDA_DEVICE(what)                                  \
  do {                                                                   \
    if (!::vouch::rt::cuda::cuda_device_present()) {                     \
      std::printf("SKIPPED (no CUDA device): %s\n", (what));             \
      std::fflush(stdout);                                               \
      GTEST_SKIP();                                                      \
    }                                                                    \
  } while (0)

#endif  // VOUCH_RUNTIME_CUDA_TEST_UTIL_H_
