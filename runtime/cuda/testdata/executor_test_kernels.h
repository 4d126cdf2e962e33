// executor_test_kernels.h: the kernels of testdata/executor_test_kernels.cu, embedded at
// build time (sm_90 cubin and compute_90 PTX; see the genrule in ../BUILD.bazel).
#ifndef VOUCH_RUNTIME_CUDA_TESTDATA_EXECUTOR_TEST_KERNELS_H_
#define VOUCH_RUNTIME_CUDA_TESTDATA_EXECUTOR_TEST_KERNELS_H_

#include <cstddef>

namespace vouch::rt::cuda::testdata {

extern const unsigned char kExecutorKernelsSm90Cubin[];
extern const size_t kExecutorKernelsSm90CubinSize;
extern const unsigned char kExecutorKernelsPtx[];  // NUL-terminated
extern const size_t kExecutorKernelsPtxSize;       // without the NUL

}  // namespace vouch::rt::cuda::testdata

#endif  // VOUCH_RUNTIME_CUDA_TESTDATA_EXECUTOR_TEST_KERNELS_H_
