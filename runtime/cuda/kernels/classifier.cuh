// classifier.cuh: softmax cross-entropy of logit rows against int32 labels, forward
// and dlogits (llm.c's fused classifier in two kernels: the probabilities are never a
// tensor of their own; dlogits recomputes them from the logits).
//
// Row statistics in one pass (softmax.cuh's long_row_stats: the logits are read once
// per kernel for them): each thread folds its elements (16-byte vectors between the
// row's 16-byte boundaries, chunk c = t, t + blockDim.x, ...; the few before and after
// one per thread) in order into a running (max, sum of exp(z - max)) pair, rescaling
// the sum when the max grows (online softmax); the block's pairs are then combined by
// a fixed tree. Every order is fixed: the same bits every run, no float atomics.
//
// Forward: one block per row (grid-stride over rows). Block b adds the losses of its
// rows b, b + G, ... (G = min(gridDim.x, kCrossEntropyMaxBlocks)) in row order, from
// 0, and parks the sum and its kept-row count in a per-block slot of this module's
// scratch; the last block to take a ticket (an integer atomic: it only picks which
// block does the final sum, the values are the same whichever it is) folds the G
// slots per thread (b = t, t + 256, ...) and by the fixed tree, writes the mean and
// resets the ticket for the next launch. One launch; a stream runs one cross_entropy
// at a time, so the module-global scratch is never shared by concurrent launches.
// With G = 1 the order is the old single block's: rows in order, from 0.
//
// dlogits: each block first counts the kept rows itself (an integer sum: exact in any
// order); then, given the dynamic shared memory for its part of a row (codegen: more
// than 4096 classes, f32, clusters of two blocks of 512, Parts = 2), softmax.cuh's
// long_rows_staged (the row staged and read from memory once, exp(z - max) computed
// once); otherwise one block
// per row (grid-stride), one statistics pass and one writing pass (long_row_write:
// from the row's end, so the tail just read is read again first, from L2).
//
// A label outside [0, C) that is not ignore_index makes the loss, and its row of
// dlogits, NaN; the data loader refuses such labels before training.
//
// Rows lie `pitch` >= C elements apart (cross_entropy's `classes`: the logits of a
// vocabulary padded to a tensor-core product's quantum, vouch-pad-classes): the
// entries past C are never read, and dlogits writes them 0.
//
// Launch: cross_entropy_kernel block 256, grid min(rows, 1024) (any grid is correct:
// blocks past kCrossEntropyMaxBlocks only take a ticket); cross_entropy_grad_kernel
// block 256, grid min(rows, 65535), or for more than 4096 classes Recipe.cpp's
// longRowLaunch (clusters of two blocks of 512, shared memory, at most four blocks
// per SM; the entry point carries the cluster dims and Parts = 2).
// Generated entry points (t = float / double; dlogits also unsigned short, bf16 bits, in
// f32 runs: cross_entropy_grad's bf16 result):
//   extern "C" __global__ void k_<t>(const t* logits, const int* labels, t* out,
//       long long rows, long long classes, long long ignore_index, long long pitch)
//   extern "C" __global__ void k_<t>(const t* logits, const int* labels, const t* dloss,
//       t* dlogits, long long rows, long long classes, long long ignore_index,
//       long long pitch)
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_CLASSIFIER_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_CLASSIFIER_CUH_

#include "common.cuh"
#include "softmax.cuh"  // long_row_stats, long_row_write

namespace vouch {

// A quiet NaN of T (NVRTC has no <cmath> NAN).
template <class T>
__device__ inline T quiet_nan() {
  return sizeof(T) == 8 ? T(__longlong_as_double(0x7ff8000000000000ULL))
                        : T(__int_as_float(0x7fc00000));
}

// The forward's per-block slots (the sum of the block's row losses, as double: exact
// for both element types, and its kept rows) and the ticket. Module globals: NVRTC
// and nvcc zero them at load; arrived_last (common.cuh) resets the ticket.
constexpr unsigned kCrossEntropyMaxBlocks = 1024;
__device__ double cross_entropy_block_loss[kCrossEntropyMaxBlocks];
__device__ long long cross_entropy_block_kept[kCrossEntropyMaxBlocks];
__device__ unsigned cross_entropy_ticket;

// The row's max and sum of exp(z - max) over the block (softmax.cuh's one-pass
// statistics); every thread gets both. `pm`, `ps` hold 32 values each.
template <class T>
__device__ void row_max_and_sum(const T* z, long long classes, T* pm, T* ps, T& max,
                                T& sum) {
  long_row_stats(z, 0, classes, KeepAll(), pm, ps, max, sum);
}

template <class T>
__device__ void cross_entropy_kernel(const T* logits, const int* labels, T* out,
                                     long long rows, long long classes,
                                     long long ignore_index, long long pitch) {
  __shared__ T pm[256], ps[256];
  __shared__ long long counts[256];
  const unsigned blocks = gridDim.x < kCrossEntropyMaxBlocks ? gridDim.x
                                                              : kCrossEntropyMaxBlocks;
  if (blockIdx.x < blocks) {
    T total = T(0);
    long long kept = 0;
    for (long long r = blockIdx.x; r < rows; r += blocks) {
      const int label = labels[r];
      if (label == ignore_index) continue;
      ++kept;
      const T* z = logits + r * pitch;
      T max, sum;
      row_max_and_sum(z, classes, pm, ps, max, sum);
      if (threadIdx.x == 0) {
        const bool valid = label >= 0 && label < classes;
        total += valid ? log(sum) + max - z[valid ? label : 0] : quiet_nan<T>();
      }
    }
    if (threadIdx.x == 0) {
      cross_entropy_block_loss[blockIdx.x] = double(total);
      cross_entropy_block_kept[blockIdx.x] = kept;
    }
  }
  if (!arrived_last(&cross_entropy_ticket)) return;
  // The slots were written by other blocks: read them past this SM's L1.
  const volatile double* loss = cross_entropy_block_loss;
  const volatile long long* kept = cross_entropy_block_kept;
  T s = T(0);
  long long k = 0;
  for (unsigned b = threadIdx.x; b < blocks; b += blockDim.x) {
    s += T(loss[b]);
    k += kept[b];
  }
  block_sum_tree(pm, s);
  block_sum_tree(counts, k);
  if (threadIdx.x == 0) out[0] = pm[0] / T(counts[0]);
}

// dlogits of one row with a valid label: scale · (softmax - onehot).
// (The probabilities scale by the sum's reciprocal: a multiply per element instead of
// a division, within an ulp.)
template <class T>
struct DlogitsOf {
  T scale, max, inv_sum;
  int label;
  __device__ T operator()(long long c, T z) const {
    return scale * (exp(z - max) * inv_sum - (c == label ? T(1) : T(0)));
  }
  // The same from e = exp(z - max).
  __device__ T of_exp(long long c, T e) const {
    return scale * (e * inv_sum - (c == label ? T(1) : T(0)));
  }
};

// cross_entropy_grad as a long_rows_staged op: ignored rows 0, rows with a label
// outside [0, C) NaN, the others DlogitsOf.
template <class T>
struct DlogitsRowOp {
  const int* labels;
  long long classes, ignore_index;
  T scale;
  __device__ bool fill(long long row, T& value) const {
    const int label = labels[row];
    if (label != ignore_index && label >= 0 && label < classes) return false;
    value = label == ignore_index ? T(0) : quiet_nan<T>();
    return true;
  }
  __device__ bool keep(long long) const { return true; }
  __device__ bool stash() const { return true; }
  __device__ DlogitsOf<T> writer(long long row, long long, T max, T sum) const {
    return DlogitsOf<T>{scale, max, T(1) / sum, labels[row]};
  }
};

// Parts: the blocks that stage a row (softmax.cuh's long_rows_staged; 2: a cluster's).
// O: T, or unsigned short (f32 only): dlogits stored as bf16 bits, each rounded to
// nearest even as it is stored (rows.cuh's row_store; the op's bf16Result).
template <class T, int Parts = 1, class O = T>
__device__ void cross_entropy_grad_kernel(const T* logits, const int* labels,
                                          const T* dloss, O* dlogits, long long rows,
                                          long long classes, long long ignore_index,
                                          long long pitch) {
  __shared__ T pm[32], ps[32];
  __shared__ long long counts[32];
  long long mine = 0;
  for (long long r = threadIdx.x; r < rows; r += blockDim.x) mine += labels[r] != ignore_index;
  const long long kept = block_reduce(mine, SumCombine(), counts);
  const DlogitsRowOp<T> op{labels, classes, ignore_index, dloss[0] / T(kept)};
  const long long staged_bytes = long_row_part_bytes(classes, sizeof(T), Parts);
  if (staged_bytes > 0 && dynamic_shared_bytes() >= staged_bytes)
    return long_rows_staged<Parts>(logits, dlogits, rows, classes, op, pitch);
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    O* d = dlogits + r * pitch;
    for (long long c = classes + threadIdx.x; c < pitch; c += blockDim.x) row_store(d + c, T(0));
    T fill;
    if (op.fill(r, fill)) {
      for (long long c = threadIdx.x; c < classes; c += blockDim.x) row_store(d + c, fill);
      continue;
    }
    T max, sum;
    row_max_and_sum(logits + r * pitch, classes, pm, ps, max, sum);
    long_row_write(logits, dlogits, r * pitch, classes, op.writer(r, r * pitch, max, sum));
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_CLASSIFIER_CUH_
