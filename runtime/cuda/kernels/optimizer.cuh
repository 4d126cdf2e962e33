// optimizer.cuh: the parameter update of one training step (SGD with momentum, Adam,
// AdamW) for every parameter in one launch.
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
//
// Launch: optimizer_kernel grid (min(ceil(largest param numel / 256), 1024), number of
// params), block 256; grid-stride over each parameter's elements. Entry points:
// executor.cuh (vouch_optimizer_f32 / _f64).
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_OPTIMIZER_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_OPTIMIZER_CUH_

#include "common.cuh"
#include "param_slot.h"

namespace vouch {

template <class T>
__device__ void optimizer_kernel(const ParamSlot<T>* slots, int num_params,
                                 const long long* step, int kind, double lr, double beta1,
                                 double beta2, double eps, double weight_decay,
                                 double momentum) {
  if ((int)blockIdx.y >= num_params) return;  // no params: the grid is (1, 1)
  const ParamSlot<T> s = slots[blockIdx.y];
  const long long t = *step + 1;
  const double c1 = 1.0 - pow(beta1, (double)t), c2 = 1.0 - pow(beta2, (double)t);
  for (long long i = grid_stride_begin(); i < s.n; i += grid_stride_step()) {
    T g = s.g[i];
    T p = s.p[i];
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

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_OPTIMIZER_CUH_
