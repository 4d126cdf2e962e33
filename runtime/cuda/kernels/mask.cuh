// mask.cuh: causal_mask, the causal (lower-triangular) attention mask: out [rows,
// columns] is 1 where j <= i, else 0 (an i1 mask stored as int32 0 / 1, as masked_softmax
// reads it; the same as runtime/cpu_kernels.h's causal_mask).
//
// Launch: block 256, grid-stride over rows · columns elements.
// Generated entry points (the run's real type does not enter; one per dtype suffix):
//   extern "C" __global__ void k_f32(int* out, long long rows, long long columns) {
//     vouch::causal_mask_kernel(out, rows, columns); }
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_MASK_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_MASK_CUH_

#include "common.cuh"

namespace vouch {

__device__ inline void causal_mask_kernel(int* out, long long rows, long long columns) {
  const long long n = rows * columns;
  for (long long idx = grid_stride_begin(); idx < n; idx += grid_stride_step()) {
    const long long i = index_div(idx, columns), j = idx - i * columns;
    out[idx] = j <= i ? 1 : 0;
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_MASK_CUH_
