// optimizer.cuh: the parameter update of one training step (SGD with momentum, Adam,
// AdamW, RMSprop, Adagrad) for every parameter in one launch, with the learning rate of
// the step's schedule and, optionally, gradients scaled by the clipping coefficient that
// grad_norm.cuh left in device memory.
//
// Why one launch: a model has a handful to hundreds of parameters; one kernel whose
// blockIdx.y selects the parameter (a ParamSlot, param_slot.h) replaces one launch per
// parameter. The step count lives on the device so a captured CUDA graph replays
// correctly: this kernel reads it, and executor.cuh's entry point advances it once
// every block is done.
//
// Formulas: those of the CPU runtime (runtime/optim.cc), hyper-parameters in double,
// element math in T; t = *step + 1 (1-based), bias corrections c1 = 1 - beta1^t,
// c2 = 1 - beta2^t, eps added after the square root.
//   kind 0  SGD:   g += wd * p (if wd != 0); buf = g, or with momentum buf = g at
//                  t == 1 and momentum * m + g after (m = buf); p -= lr * buf
//   kind 1  Adam:  g += wd * p (if wd != 0, L2); m = b1 m + (1 - b1) g;
//                  v = b2 v + (1 - b2) g g; p -= lr (m / c1) / (sqrt(v / c2) + eps)
//   kind 2  AdamW: p -= (lr wd) p first (decoupled decay), then Adam without L2
//   kind 3  RMSprop: g += wd * p; v = alpha v + (1 - alpha) g g; d = g / (sqrt(v) + eps);
//                  with momentum m = momentum m + d, d = m; p -= lr d
//   kind 4  Adagrad: g += wd * p; v += g g; p -= lr / (1 + (t - 1) lr_decay) g / (sqrt(v) + eps)
// lr is optimizer_lr_at(h, t - 1), in double, from the device step counter: a captured
// graph replays every step of a schedule without a host update. With clipping, `clip`
// points at grad_norm.cuh's [norm, coefficient]; a coefficient below 1 scales every
// gradient first (g = g * T(coef), torch's g.mul_(coef)).
//
// Launch: optimizer_kernel grid (min(ceil(largest param numel / 256), 1024), number of
// params), block 256; grid-stride over each parameter's elements. Entry points:
// executor.cuh (vouch_optimizer_f32 / _f64).
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_OPTIMIZER_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_OPTIMIZER_CUH_

#include "common.cuh"
#include "param_slot.h"

namespace vouch {

// The learning rate of step i (0-based): runtime/optim.cc lr_at, the same formula in
// double.
__device__ inline double optimizer_lr_at(const OptimizerHyper& h, long long i) {
  switch (h.schedule) {
    case 1:
      return h.lr * pow(h.gamma, (double)(i / h.step_size));
    case 2:
      return h.lr * pow(h.gamma, (double)i);
    case 3: {
      if (i < h.warmup) return h.lr * (double)i / (double)h.warmup;
      double p = (double)(i - h.warmup) / (double)(h.total - h.warmup);
      if (p > 1) p = 1;
      const double pi = 3.14159265358979323846;
      return h.min_lr + (h.lr - h.min_lr) * 0.5 * (1.0 + cos(pi * p));
    }
    default:
      return h.lr;
  }
}

template <class T>
__device__ void optimizer_kernel(const ParamSlot<T>* slots, int num_params,
                                 const long long* step, const OptimizerHyper h,
                                 const double* clip) {
  if ((int)blockIdx.y >= num_params) return;  // no params: the grid is (1, 1)
  const ParamSlot<T> s = slots[blockIdx.y];
  const long long t = *step + 1;
  const int kind = h.kind;
  const double lr = optimizer_lr_at(h, t - 1);
  const double beta1 = h.beta1, beta2 = h.beta2, eps = h.eps;
  const double weight_decay = s.decay ? h.weight_decay : 0.0, momentum = h.momentum;
  const double c1 = 1.0 - pow(beta1, (double)t), c2 = 1.0 - pow(beta2, (double)t);
  const bool scale = clip != nullptr && clip[1] < 1.0;
  const T coef = scale ? T(clip[1]) : T(1);
  for (long long i = grid_stride_begin(); i < s.n; i += grid_stride_step()) {
    T g = s.g[i];
    if (scale) g = g * coef;
    T p = s.p[i];
    if (kind == 3 || kind == 4) {
      if (weight_decay != 0) g = g + T(weight_decay) * p;
      if (kind == 4) {
        const T v = s.v[i] + g * g;
        s.v[i] = v;
        const T clr = T(lr / (1.0 + (double)(t - 1) * h.lr_decay));
        s.p[i] = p - clr * (g / (sqrt(v) + T(eps)));
        continue;
      }
      const T v = T(h.alpha) * s.v[i] + T(1.0 - h.alpha) * g * g;
      s.v[i] = v;
      T d = g / (sqrt(v) + T(eps));
      if (momentum != 0) {
        d = T(momentum) * s.m[i] + d;
        s.m[i] = d;
      }
      s.p[i] = p - T(lr) * d;
      continue;
    }
    if (kind == 0) {
      if (weight_decay != 0) g = g + T(weight_decay) * p;
      T buf = g;
      if (momentum != 0) {
        buf = t == 1 ? g : T(momentum) * s.m[i] + g;
        s.m[i] = buf;
      }
      s.p[i] = p - T(lr) * buf;
      continue;
    }
    if (kind == 2) p = p - T(lr * weight_decay) * p;
    else if (weight_decay != 0) g = g + T(weight_decay) * p;
    const T m = T(beta1) * s.m[i] + T(1.0 - beta1) * g;
    const T v = T(beta2) * s.v[i] + T(1.0 - beta2) * g * g;
    s.m[i] = m;
    s.v[i] = v;
    s.p[i] = p - T(lr) * (m / T(c1)) / (sqrt(v / T(c2)) + T(eps));
  }
}

// Gradient clipping by global norm (torch.nn.utils.clip_grad_norm_), the part before
// the update: out[0] = sqrt(sum over every parameter's gradient of g^2), out[1] =
// max_norm / (out[0] + 1e-6) when that is below 1, else 1. The optimizer launch that
// follows reads out[1].
//
// Why one block: the result must be bitwise repeatable (no float atomics) and the
// norm is one scalar the whole update waits for anyway. Thread x sums, in double, the
// squares of elements x, x + blockDim.x, ... of parameter 0, then of parameter 1, ...
// (a fixed assignment), and block_sum_tree combines the partial sums in a fixed order.
// The cost is one pass over the gradients by one block; for the models this compiler
// trains that is small beside the backward pass.
//
// Launch: grid 1, block kGradNormThreads (param_slot.h), no dynamic shared memory.

template <class T>
__device__ void grad_norm_kernel(const ParamSlot<T>* slots, int num_params,
                                 double max_norm, double* out) {
  __shared__ double partial[kGradNormThreads];
  double sum = 0;
  for (int k = 0; k < num_params; k++) {
    const ParamSlot<T> s = slots[k];
    for (long long i = threadIdx.x; i < s.n; i += blockDim.x) {
      const double g = (double)s.g[i];
      sum += g * g;
    }
  }
  block_sum_tree(partial, sum);
  if (threadIdx.x == 0) {
    const double norm = sqrt(partial[0]);
    const double coef = max_norm / (norm + 1e-6);
    out[0] = norm;
    out[1] = coef < 1.0 ? coef : 1.0;
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_OPTIMIZER_CUH_
