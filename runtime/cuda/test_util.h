// test_util.h: the guard of tests that need a CUDA device.
//
// CI has no GPU; the GPU suite runs the same test binaries on an H200. A test that
// needs a device starts with VOUCH_REQUIRE_CUDA_DEVICE("what it checks"): with no
// usable device it prints exactly one line `SKIPPED (no CUDA device): <what>` and
// skips (GTEST_SKIP), so a skip is never silent.
#ifndef VOUCH_RUNTIME_CUDA_TEST_UTIL_H_
#define VOUCH_RUNTIME_CUDA_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdio>

#include "runtime/cuda/status.h"

namespace vouch::rt::cuda {

inline bool cuda_device_present() {
  return probe_runtime().state == RuntimeState::NativeWithDevice;
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
