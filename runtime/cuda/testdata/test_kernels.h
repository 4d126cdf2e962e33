// test_kernels.h: the test kernels of testdata/test_kernels.cu, embedded at build time
// (sm_90 cubin, sm_80 cubin, compute_90 PTX; see the genrule in ../BUILD.bazel).
#ifndef VOUCH_RUNTIME_CUDA_TESTDATA_TEST_KERNELS_H_
#define VOUCH_RUNTIME_CUDA_TESTDATA_TEST_KERNELS_H_

#include <cstddef>

namespace vouch::rt::cuda::testdata {

extern const unsigned char kTestKernelsSm90Cubin[];
extern const size_t kTestKernelsSm90CubinSize;
extern const unsigned char kTestKernelsSm80Cubin[];
extern const size_t kTestKernelsSm80CubinSize;
extern const unsigned char kTestKernelsPtx[];  // NUL-terminated
extern const size_t kTestKernelsPtxSize;       // without the NUL

}  // namespace vouch::rt::cuda::testdata

#endif  // VOUCH_RUNTIME_CUDA_TESTDATA_TEST_KERNELS_H_
