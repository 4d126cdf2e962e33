// embedding.cuh: torch.nn.functional.embedding (rows of a [V, D] table picked by int32
// ids) and its VJP, the rows of dy summed into [V, D] by id.
//
// Why no atomics: embedding_grad gives each table element (v, d) one thread, which folds
// dy[p, d] over the positions p whose id is v in ascending order from 0. The order of
// every sum is fixed (the cpu kernel folds the same sequence: the same bits), at the
// cost of reading all `positions` ids per element: fine for the tables vouch trains,
// a sort-based scheme would be the next step for large V·D·positions.
//
// Out-of-range ids (computed ones; data fields are refused at load): embedding writes a
// row of NaN instead of reading outside the table; embedding_grad writes NaN everywhere
// (each thread sees every id), so a bad lookup's gradient is never silently dropped.
// Launch: block 256, grid = max(1, min(ceil(total / 256), 1056)); grid-stride.
// Generated entry points:
//   extern "C" __global__ void k_f32(const int* ids, const float* table, float* out,
//       long long positions, long long V, long long D) {
//     vouch::embedding_kernel<float>(ids, table, out, positions, V, D); }
//   extern "C" __global__ void k_f32(const int* ids, const float* dy, float* out,
//       long long positions, long long V, long long D) {
//     vouch::embedding_grad_kernel<float>(ids, dy, out, positions, V, D); }
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_EMBEDDING_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_EMBEDDING_CUH_

#include "common.cuh"
#include "gather.cuh"

namespace vouch {

// out [positions, D] row p = table [V, D] row ids[p]; NaN for an id outside [0, V).
template <class T>
__device__ void embedding_kernel(const int* ids, const T* table, T* out,
                                 long long positions, long long V, long long D) {
  const long long total = positions * D;
  for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
    const long long p = index_div(idx, D), d = idx - p * D;
    const long long v = ids[p];
    out[idx] = (v >= 0 && v < V) ? table[v * D + d] : lookup_nan<T>();
  }
}

// out [V, D] (v, d) = sum over p ascending with ids[p] = v of dy[p, d], from 0.
template <class T>
__device__ void embedding_grad_kernel(const int* ids, const T* dy, T* out,
                                      long long positions, long long V, long long D) {
  const long long total = V * D;
  for (long long idx = grid_stride_begin(); idx < total; idx += grid_stride_step()) {
    const long long v = index_div(idx, D), d = idx - v * D;
    T acc = T(0);
    bool bad = false;
    for (long long p = 0; p < positions; p++) {
      const long long id = ids[p];
      bad = bad || id < 0 || id >= V;
      if (id == v) acc += dy[p * D + d];
    }
    out[idx] = bad ? lookup_nan<T>() : acc;
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_EMBEDDING_CUH_
