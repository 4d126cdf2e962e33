// batchnorm.cuh: batch normalisation over every axis but the channels (axis 1),
// torch.nn.functional.batch_norm with BatchNorm1d / 2d / 3d's layout, forward and
// backward: one kernel each.
//
// Layout: x is [n, channels, spatial] (the input [N, C, *spatial], its spatial axes
// flattened); channel c's M = n · spatial elements are x[(i · channels + c) · spatial +
// k]. weight and bias are [channels] or null; the running statistics, mean and rstd
// [channels].
//
// Work: a channel per Parts blocks of kBatchNormThreads. Parts = 1: a block per channel;
// Parts = 8: a thread-block cluster of 8 per channel (cluster.cuh; the entry point
// carries __cluster_dims__(8, 1, 1)) where a channel has many elements and the channels
// alone would leave the GPU idle (codegen/recipes/BatchNormRecipe.cpp picks Parts by
// shape, never by device, so a shape always sums in one order). Channels grid-stride
// over the clusters. Thread t of rank r visits the channel's elements j = r · B + t,
// + Parts · B, ... (B = blockDim.x), j = i · spatial + k in (i, k) order, stepping (i,
// k) by an add and a compare instead of a division per element.
//
// Statistics: in double for every element type (f32 runs too), and the arithmetic of
// each element likewise, rounded to T once when stored. Each thread folds its elements
// in j order, common.cuh's fixed halving tree adds a block's threads, and a cluster's
// blocks are added in rank order through distributed shared memory (combine_parts, the
// same bits in every block): a fixed order for a shape, no atomics, the same bits every
// launch. The forward's mean, then its squared deviations (two passes, no E[x²] - E[x]²
// cancellation), as runtime/cpu_kernels.h's batch_norm (a left fold; the orders
// differ, the formulas do not).
//
// Training (the step context's flag, counter_rng.h's kRngTraining: a forward that
// records the tape): mean[c] = T(mean), rstd[c] = T(1 / sqrt(var + eps)) of the batch
// (var biased), and the running statistics updated in place by rank 0's thread 0 (no
// other thread reads them in a training step): running_mean = (1 - momentum) ·
// running_mean + momentum · mean, running_var likewise with Σ (x - mean)² / (M - 1).
// Otherwise mean[c] = running_mean[c], rstd[c] = T(1 / sqrt(running_var[c] + eps)), the
// running statistics only read. y = (x - mean[c]) · rstd[c] · weight[c] + bias[c] from
// the stored (rounded) mean and rstd, which the backward reads.
//
// Backward (a training step's): Σ grad and Σ grad · x̂ per channel (x̂ = (x - mean) ·
// rstd), then dx = weight · rstd · (grad - Σ grad / M - x̂ · Σ(grad · x̂) / M), dweight =
// Σ grad · x̂, dbias = Σ grad, in the same order and precision.
//
// Launch: blocks of kBatchNormThreads (the tree's width); grid Parts · min(channels,
// kBatchNormMaxChannelsInFlight). Generated entry points (weight / bias / dweight /
// dbias parameters only where the op has them; the others pass nullptr):
//   extern "C" __global__ void [__cluster_dims__(8, 1, 1)] __launch_bounds__(512)
//   k_f32(const float* x, const float* weight, const float* bias, float* running_mean,
//         float* running_var, float* y, float* mean, float* rstd, long long n,
//         long long channels, long long spatial, double eps, double momentum,
//         const long long* ctx) {
//     vouch::batch_norm_kernel<float, Parts>(x, weight, bias, running_mean, running_var,
//         y, mean, rstd, n, channels, spatial, eps, momentum, ctx); }
//   extern "C" __global__ void ... k_f32(const float* grad, const float* x,
//         const float* mean, const float* rstd, const float* weight, float* dx,
//         float* dweight, float* dbias, long long n, long long channels,
//         long long spatial) {
//     vouch::batch_norm_grad_kernel<float, Parts>(grad, x, mean, rstd, weight, dx,
//         dweight, dbias, n, channels, spatial); }
//
// Performance note: the elements of a channel are `spatial` apart from one sample to
// the next, so a warp's loads are contiguous for spatial ≥ 32 and strided for small
// spatial extents ([N, C]: a column per channel); the latter is correct, and slower.
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_BATCHNORM_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_BATCHNORM_CUH_

#include "cluster.cuh"
#include "common.cuh"
#include "counter_rng.h"

namespace vouch {

// The block width (common.cuh's tree over partial[kBatchNormThreads]), the cluster of
// the many-element path, and the most channels a launch has in flight at once (more
// grid-stride over the clusters).
constexpr int kBatchNormThreads = 512;
constexpr int kBatchNormClusterParts = 8;
constexpr long long kBatchNormMaxChannelsInFlight = 16384;

// f(at) for channel c's elements j = first, first + step, ... < m (m = n · spatial), at
// = (i · channels + c) · spatial + k for j = i · spatial + k, in j order.
template <class F>
__device__ inline void for_channel_elements(long long c, long long channels, long long spatial,
                                            long long m, long long first, long long step,
                                            F f) {
  if (first >= m) return;
  long long i = index_div(first, spatial), k = first - i * spatial;
  const long long di = index_div(step, spatial), dk = step - di * spatial;
  for (long long j = first; j < m; j += step) {
    f((i * channels + c) * spatial + k);
    i += di;
    k += dk;
    if (k >= spatial) {
      k -= spatial;
      ++i;
    }
  }
}

// The channel's total of every thread's `value` (its fold), the same in every thread of
// every block of the cluster: the block's tree, then the blocks in rank order. `slot`
// is this block's value for the cluster's others (one per sum of an iteration).
// Leaves `partial` free for reuse.
template <int Parts>
__device__ inline double channel_total(double value, double* partial, double* slot,
                                       unsigned rank) {
  block_sum_tree(partial, value);
  const double total = combine_parts<Parts>(partial[0], SumCombine(), slot, rank);
  __syncthreads();  // every thread has read partial[0]: the next tree may write it
  return total;
}

template <class T, int Parts>
__device__ void batch_norm_kernel(const T* x, const T* weight, const T* bias,
                                  T* running_mean, T* running_var, T* y, T* mean, T* rstd,
                                  long long n, long long channels, long long spatial,
                                  double eps, double momentum, const long long* ctx) {
  __shared__ double partial[kBatchNormThreads];
  __shared__ double part_sum, part_sq;  // this block's, read by the cluster's others
  unsigned rank;
  long long first_channel, channel_step;
  cluster_position<Parts>(rank, first_channel, channel_step);
  const bool training = ctx[kRngTraining] != 0;
  const long long m = n * spatial;
  const long long first = (long long)rank * blockDim.x + threadIdx.x;
  const long long step = (long long)Parts * blockDim.x;
  const bool writer = rank == 0 && threadIdx.x == 0;
  for (long long c = first_channel; c < channels; c += channel_step) {
    T mean_t, rstd_t;
    if (training) {
      double sum = 0;
      for_channel_elements(c, channels, spatial, m, first, step,
                           [&](long long at) { sum += double(x[at]); });
      const double mu = channel_total<Parts>(sum, partial, &part_sum, rank) / double(m);
      double sq = 0;
      for_channel_elements(c, channels, spatial, m, first, step, [&](long long at) {
        const double d = double(x[at]) - mu;
        sq += d * d;
      });
      const double total_sq = channel_total<Parts>(sq, partial, &part_sq, rank);
      mean_t = T(mu);
      rstd_t = T(1.0 / sqrt(total_sq / double(m) + eps));
      if (writer) {
        mean[c] = mean_t;
        rstd[c] = rstd_t;
        running_mean[c] = T((1.0 - momentum) * double(running_mean[c]) + momentum * mu);
        running_var[c] =
            T((1.0 - momentum) * double(running_var[c]) + momentum * (total_sq / double(m - 1)));
      }
    } else {
      mean_t = running_mean[c];
      rstd_t = T(1.0 / sqrt(double(running_var[c]) + eps));
      if (writer) {
        mean[c] = mean_t;
        rstd[c] = rstd_t;
      }
    }
    const double mu = double(mean_t), r = double(rstd_t);
    const double w = weight ? double(weight[c]) : 1.0, b = bias ? double(bias[c]) : 0.0;
    for_channel_elements(c, channels, spatial, m, first, step, [&](long long at) {
      y[at] = T((double(x[at]) - mu) * r * w + b);
    });
    // The cluster's others may still read part_sum / part_sq (and a block's shared
    // memory must outlive their reads).
    if constexpr (Parts > 1) cluster_sync();
  }
}

template <class T, int Parts>
__device__ void batch_norm_grad_kernel(const T* grad, const T* x, const T* mean,
                                       const T* rstd, const T* weight, T* dx, T* dweight,
                                       T* dbias, long long n, long long channels,
                                       long long spatial) {
  __shared__ double partial[kBatchNormThreads];
  __shared__ double part_g, part_gx;  // this block's, read by the cluster's others
  unsigned rank;
  long long first_channel, channel_step;
  cluster_position<Parts>(rank, first_channel, channel_step);
  const long long m = n * spatial;
  const long long first = (long long)rank * blockDim.x + threadIdx.x;
  const long long step = (long long)Parts * blockDim.x;
  for (long long c = first_channel; c < channels; c += channel_step) {
    const double mu = double(mean[c]), r = double(rstd[c]);
    double sum_g = 0, sum_gx = 0;
    for_channel_elements(c, channels, spatial, m, first, step, [&](long long at) {
      const double g = double(grad[at]);
      sum_g += g;
      sum_gx += g * ((double(x[at]) - mu) * r);
    });
    const double total_g = channel_total<Parts>(sum_g, partial, &part_g, rank);
    const double total_gx = channel_total<Parts>(sum_gx, partial, &part_gx, rank);
    if (rank == 0 && threadIdx.x == 0) {
      if (dweight) dweight[c] = T(total_gx);
      if (dbias) dbias[c] = T(total_g);
    }
    const double scale = (weight ? double(weight[c]) : 1.0) * r;
    const double mean_g = total_g / double(m), mean_gx = total_gx / double(m);
    for_channel_elements(c, channels, spatial, m, first, step, [&](long long at) {
      const double xhat = (double(x[at]) - mu) * r;
      dx[at] = T(scale * (double(grad[at]) - mean_g - xhat * mean_gx));
    });
    if constexpr (Parts > 1) cluster_sync();  // as the forward's
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_BATCHNORM_CUH_
