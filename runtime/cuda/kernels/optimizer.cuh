// optimizer.cuh: the parameter update of one training step (SGD with momentum, Adam,
// AdamW, RMSprop, Adagrad) for every parameter in one launch, with the learning rate of
// the step's schedule and, optionally, gradients scaled by the clipping coefficient that
// grad_norm.cuh left in device memory.
//
// Why one launch: a model has a handful to hundreds of parameters; one kernel over all
// their elements (ParamSlots, param_slot.h) replaces one launch per
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
// Launch: optimizer_kernel any grid, block 256 (the executor's: min(ceil(quads / 256),
// 2048) blocks, quads = number_quads(slots)); the slots' first_quad set by
// number_quads. Entry points: executor.cuh (vouch_optimizer_f32 / _f64).
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

// Adam and AdamW on one element (kinds 1, 2 above), the constants in T once per launch.
template <class T>
struct AdamElement {
  bool decoupled, l2;  // AdamW's decay of p first; Adam's g += wd p
  T decay, weight_decay, lr, beta1, one_minus_beta1, beta2, one_minus_beta2, c1, c2, eps;
  __device__ void operator()(T& p, T g, T& m, T& v) const {
    if (decoupled) p = p - decay * p;
    else if (l2) g = g + weight_decay * p;
    m = beta1 * m + one_minus_beta1 * g;
    v = beta2 * v + one_minus_beta2 * g * g;
    p = p - lr * (m / c1) / (sqrt(v / c2) + eps);
  }
};

// The step's constants of every element update, in T (double where the formulas
// above compute in double), for a slot with and without the weight decay.
template <class T>
struct OptimizerStep {
  int kind;
  long long t;
  double lr, lr_decay, weight_decay, momentum, alpha;
  T eps, coef;  // coef: the clipping scale (1: none)
  bool scale;
  AdamElement<T> adam[2];  // [0]: the slot is exempt from the decay, [1]: it decays
};

// Element i of slot s: the update of kind 1-4 above (Adam and AdamW by adam[]), in T.
template <class T>
__device__ inline void optimizer_element(const OptimizerStep<T>& c, const ParamSlot<T>& s,
                                         long long i) {
  T g = s.g[i];
  if (c.scale) g = g * c.coef;
  T p = s.p[i];
  const double weight_decay = s.decay ? c.weight_decay : 0.0;
  if (c.kind == 1 || c.kind == 2) {
    T m = s.m[i], v = s.v[i];
    c.adam[s.decay ? 1 : 0](p, g, m, v);
    s.m[i] = m;
    s.v[i] = v;
    s.p[i] = p;
    return;
  }
  if (c.kind == 3 || c.kind == 4) {
    if (weight_decay != 0) g = g + T(weight_decay) * p;
    if (c.kind == 4) {
      const T v = s.v[i] + g * g;
      s.v[i] = v;
      const T clr = T(c.lr / (1.0 + (double)(c.t - 1) * c.lr_decay));
      s.p[i] = p - clr * (g / (sqrt(v) + c.eps));
      return;
    }
    const T v = T(c.alpha) * s.v[i] + T(1.0 - c.alpha) * g * g;
    s.v[i] = v;
    T d = g / (sqrt(v) + c.eps);
    if (c.momentum != 0) {
      d = T(c.momentum) * s.m[i] + d;
      s.m[i] = d;
    }
    s.p[i] = p - T(c.lr) * d;
    return;
  }
  if (weight_decay != 0) g = g + T(weight_decay) * p;  // kind 0, SGD
  T buf = g;
  if (c.momentum != 0) {
    buf = c.t == 1 ? g : T(c.momentum) * s.m[i] + g;
    s.m[i] = buf;
  }
  s.p[i] = p - T(c.lr) * buf;
}

// The slot holding quad q of the slots' one range: the last whose first quad is <= q.
template <class T>
__device__ inline int slot_of_quad(const ParamSlot<T>* slots, int num_params, long long q) {
  int lo = 0, hi = num_params - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (slots[mid].first_quad <= q) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// Every slot's elements as one range of quads (param_slot.h's first_quad), walked
// grid-stride by every block of any grid: a quad's slot is found by a binary search
// of the slots. One range, not a block row per slot, so the grid is sized by the
// elements, not by the largest slot times the number of slots (GPT-2's 148 slots of up
// to 38.6M elements made 151k blocks, whose launch and end-of-step tickets cost more
// than the update). Adam and AdamW update a whole quad whose four arrays are 16-byte
// aligned in 16-byte accesses (memory-bound: 7 accesses an element); every other
// element one by one.
template <class T>
__device__ void optimizer_kernel(const ParamSlot<T>* slots, int num_params,
                                 const long long* step, const OptimizerHyper h,
                                 const double* clip) {
  if (num_params <= 0) return;
  OptimizerStep<T> c;
  c.kind = h.kind;
  c.t = *step + 1;
  c.lr = optimizer_lr_at(h, c.t - 1);
  c.lr_decay = h.lr_decay;
  c.weight_decay = h.weight_decay;
  c.momentum = h.momentum;
  c.alpha = h.alpha;
  c.eps = T(h.eps);
  c.scale = clip != nullptr && clip[1] < 1.0;
  c.coef = c.scale ? T(clip[1]) : T(1);
  const double c1 = 1.0 - pow(h.beta1, (double)c.t), c2 = 1.0 - pow(h.beta2, (double)c.t);
  for (int decays = 0; decays < 2; ++decays) {
    const double wd = decays ? h.weight_decay : 0.0;
    c.adam[decays] = AdamElement<T>{c.kind == 2,        wd != 0,           T(c.lr * wd),
                                    T(wd),              T(c.lr),           T(h.beta1),
                                    T(1.0 - h.beta1),   T(h.beta2),        T(1.0 - h.beta2),
                                    T(c1),              T(c2),             T(h.eps)};
  }
  const ParamSlot<T>& last = slots[num_params - 1];
  const long long quads = last.first_quad + (last.n + 3) / 4;
  const long long begin = ((long long)blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
  const long long stride = (long long)gridDim.x * gridDim.y * blockDim.x;
  for (long long q = begin; q < quads; q += stride) {
    const ParamSlot<T> s = slots[slot_of_quad(slots, num_params, q)];
    const long long i = (q - s.first_quad) * 4;
    const bool aligned = ((reinterpret_cast<unsigned long long>(s.p) |
                           reinterpret_cast<unsigned long long>(s.g) |
                           reinterpret_cast<unsigned long long>(s.m) |
                           reinterpret_cast<unsigned long long>(s.v)) & 15) == 0;
    if ((c.kind == 1 || c.kind == 2) && aligned && i + 4 <= s.n) {
      Quad<T> p = reinterpret_cast<const Quad<T>*>(s.p + i)[0];
      Quad<T> g = reinterpret_cast<const Quad<T>*>(s.g + i)[0];
      Quad<T> m = reinterpret_cast<const Quad<T>*>(s.m + i)[0];
      Quad<T> v = reinterpret_cast<const Quad<T>*>(s.v + i)[0];
      const AdamElement<T>& adam = c.adam[s.decay ? 1 : 0];
#pragma unroll
      for (int e = 0; e < 4; ++e) adam(p.v[e], c.scale ? g.v[e] * c.coef : g.v[e], m.v[e], v.v[e]);
      reinterpret_cast<Quad<T>*>(s.m + i)[0] = m;
      reinterpret_cast<Quad<T>*>(s.v + i)[0] = v;
      reinterpret_cast<Quad<T>*>(s.p + i)[0] = p;
      continue;
    }
    for (long long j = i; j < i + 4 && j < s.n; ++j) optimizer_element(c, s, j);
  }
}

// Gradient clipping by global norm (torch.nn.utils.clip_grad_norm_), the part before
// the update: out[0] = sqrt(sum over every parameter's gradient of g^2), out[1] =
// max_norm / (out[0] + 1e-6) when that is below 1, else 1. The optimizer launch that
// follows reads out[1].
//
// Why a fixed grid and two levels: the result must be bitwise repeatable (no float
// atomics), and one block's pass over GPT-2's 124M gradients took 187 ms. Every block
// of the launch's kGradNormBlocks (param_slot.h) walks the slots' one range of quads
// grid-stride, as the optimizer does; thread x of block b sums, in double, the squares
// of its quads' elements in ascending order (a fixed assignment for the fixed grid),
// block_sum_tree combines the block's partial sums, and the block stores its sum in
// partials[b]. The last block to finish (arrived_last: an integer ticket picks which
// block, never an order) adds partials[0..grid) by the same fixed tree, in block
// order, and writes out.
//
// Launch: grid kGradNormBlocks (any grid gives the norm; this one fixes its bits),
// block kGradNormThreads, no dynamic shared memory; partials: gridDim.x doubles;
// ticket: 0 before the launch (the last block sets it back to 0).

template <class T>
__device__ void grad_norm_kernel(const ParamSlot<T>* slots, int num_params,
                                 double max_norm, double* out, double* partials,
                                 unsigned* ticket) {
  __shared__ double partial[kGradNormThreads];
  double sum = 0;
  if (num_params > 0) {
    const ParamSlot<T>& last = slots[num_params - 1];
    const long long quads = last.first_quad + (last.n + 3) / 4;
    for (long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x; q < quads;
         q += (long long)gridDim.x * blockDim.x) {
      const ParamSlot<T> s = slots[slot_of_quad(slots, num_params, q)];
      const long long i = (q - s.first_quad) * 4;
      for (long long j = i; j < i + 4 && j < s.n; ++j) {
        const double g = (double)s.g[j];
        sum += g * g;
      }
    }
  }
  block_sum_tree(partial, sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = partial[0];
  if (!arrived_last(ticket, gridDim.x)) return;
  double total = 0;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) total += __ldcg(partials + b);
  block_sum_tree(partial, total);
  if (threadIdx.x == 0) {
    const double norm = sqrt(partial[0]);
    const double coef = max_norm / (norm + 1e-6);
    out[0] = norm;
    out[1] = coef < 1.0 ? coef : 1.0;
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_OPTIMIZER_CUH_
