// classifier.cuh: softmax cross-entropy of logit rows against int32 labels, forward
// and dlogits (llm.c's fused classifier in two kernels: the probabilities are never a
// tensor of their own; dlogits recomputes them from the logits).
//
// Why these shapes: the loss is one number per step, so its kernel is one block that
// walks the rows in order, each row's max and sum of exponentials by the block's fixed
// tree (common.cuh), the row losses added by thread 0 in row order: the same bits
// every run, no atomics. (One block bounds its speed on very large logits; a
// multi-block variant with an ordered final sum is the GPT-2 issue's.) dlogits has one
// block per row (grid-stride over rows); each block first counts the kept rows itself
// (an integer sum: exact in any order).
//
// A label outside [0, C) that is not ignore_index makes the loss, and its row of
// dlogits, NaN; the data loader refuses such labels before training.
//
// Launch: cross_entropy_kernel grid 1, block 256; cross_entropy_grad_kernel grid
// min(rows, 65535), block 256.
// Generated entry points (t = float / double):
//   extern "C" __global__ void k_<t>(const t* logits, const int* labels, t* out,
//       long long rows, long long classes, long long ignore_index)
//   extern "C" __global__ void k_<t>(const t* logits, const int* labels, const t* dloss,
//       t* dlogits, long long rows, long long classes, long long ignore_index)
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_CLASSIFIER_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_CLASSIFIER_CUH_

#include "common.cuh"

namespace vouch {

// A quiet NaN of T (NVRTC has no <cmath> NAN).
template <class T>
__device__ inline T quiet_nan() {
  return sizeof(T) == 8 ? T(__longlong_as_double(0x7ff8000000000000ULL))
                        : T(__int_as_float(0x7fc00000));
}

// NaN-propagating max (a NaN logit makes its row's loss NaN, as on cpu).
template <class T>
__device__ inline T nan_max(T a, T b) {
  return (a > b || a != a) ? a : b;
}

// The row's max and sum of exp(z - max) over the block, by the fixed tree; every
// thread gets both. `partial` holds blockDim.x (= 256) values.
template <class T>
__device__ void row_max_and_sum(const T* z, long long classes, T* partial, T& max, T& sum) {
  T m = z[0];
  for (long long c = threadIdx.x; c < classes; c += blockDim.x) m = nan_max(m, z[c]);
  block_tree(partial, m, [](T a, T b) { return nan_max(a, b); });
  max = partial[0];
  __syncthreads();
  T s = T(0);
  for (long long c = threadIdx.x; c < classes; c += blockDim.x) s += exp(z[c] - max);
  block_sum_tree(partial, s);
  sum = partial[0];
  __syncthreads();
}

template <class T>
__device__ void cross_entropy_kernel(const T* logits, const int* labels, T* out,
                                     long long rows, long long classes,
                                     long long ignore_index) {
  __shared__ T partial[256];
  T total = T(0);
  long long kept = 0;
  for (long long r = 0; r < rows; ++r) {
    const int label = labels[r];
    if (label == ignore_index) continue;
    ++kept;
    const T* z = logits + r * classes;
    T max, sum;
    row_max_and_sum(z, classes, partial, max, sum);
    if (threadIdx.x == 0) {
      const bool valid = label >= 0 && label < classes;
      total += valid ? log(sum) + max - z[valid ? label : 0] : quiet_nan<T>();
    }
  }
  if (threadIdx.x == 0) out[0] = total / T(kept);
}

template <class T>
__device__ void cross_entropy_grad_kernel(const T* logits, const int* labels,
                                          const T* dloss, T* dlogits, long long rows,
                                          long long classes, long long ignore_index) {
  __shared__ T partial[256];
  __shared__ long long counts[256];
  long long mine = 0;
  for (long long r = threadIdx.x; r < rows; r += blockDim.x) mine += labels[r] != ignore_index;
  block_sum_tree(counts, mine);
  const T scale = dloss[0] / T(counts[0]);
  __syncthreads();
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const int label = labels[r];
    const T* z = logits + r * classes;
    T* d = dlogits + r * classes;
    if (label == ignore_index || label < 0 || label >= classes) {
      const T fill = label == ignore_index ? T(0) : quiet_nan<T>();
      for (long long c = threadIdx.x; c < classes; c += blockDim.x) d[c] = fill;
      continue;
    }
    T max, sum;
    row_max_and_sum(z, classes, partial, max, sum);
    for (long long c = threadIdx.x; c < classes; c += blockDim.x)
      d[c] = scale * (exp(z[c] - max) / sum - (c == label ? T(1) : T(0)));
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_CLASSIFIER_CUH_
