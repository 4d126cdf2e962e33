// optim.h: SGD (with momentum), Adam, AdamW, RMSprop and Adagrad over flat parameter
// buffers, with a learning-rate schedule and gradient clipping by global norm.
//
// Semantics are PyTorch's (torch.optim.SGD with dampening 0, Adam, AdamW, RMSprop with
// centered=False, Adagrad with initial_accumulator_value=0; the schedulers StepLR,
// ExponentialLR and a LambdaLR warmup-cosine; torch.nn.utils.clip_grad_norm_), as the
// CPU reference for the fused CUDA optimizer kernels. Arithmetic is in T (an f32 run
// updates in f32); the bias-correction powers beta^t, the learning rate of a step and
// the global gradient norm are kept in double.
#ifndef VOUCH_RUNTIME_OPTIM_H_
#define VOUCH_RUNTIME_OPTIM_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "runtime/status.h"

namespace vouch::rt {

struct OptimizerConfig {
  // The values are ir's OptimizerKind (ir/VouchAttrs.td) and the CUDA kernel's kind.
  enum Kind { Sgd, Adam, AdamW, RmsProp, Adagrad } kind = Adam;
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weight_decay = 0;
  double momentum = 0;  // SGD and RMSprop
  double alpha = 0.99;  // RMSprop: smoothing constant of the squared-gradient average
  double lr_decay = 0;  // Adagrad: lr / (1 + (t - 1) lr_decay)
  // AdamW: weight decay only for params of rank >= decay_min_rank (0: every param,
  // PyTorch's default; 2: matrices only, as GPT-2 trains), given their ranks in
  // param_ranks (declaration order; train_main fills it from the model; empty: every
  // param decays). See decays_param.
  double decay_min_rank = 0;
  std::vector<int64_t> param_ranks;

  // The learning-rate schedule (ir's ScheduleKind): the lr of step i (0-based) is
  // lr_at(config, i), see below.
  enum Schedule { Constant, Step, Exponential, WarmupCosine } schedule = Constant;
  int64_t step_size = 1;  // Step: decay every step_size steps
  double gamma = 0.1;     // Step, Exponential: the decay factor
  int64_t warmup = 0;     // WarmupCosine: linear warmup steps
  int64_t total = 1;      // WarmupCosine: the step at which the lr reaches min_lr
  double min_lr = 0;      // WarmupCosine: the floor of the cosine

  // Gradient clipping by the global L2 norm of all gradients; 0: off.
  double clip_grad_norm = 0;
};

// Ok, or the first out-of-range hyper-parameter.
Status check_optimizer_config(const OptimizerConfig& config);

// Whether param i gets the weight decay: always, unless decay_min_rank exempts its
// rank (param_ranks[i]). The cpu optimizer and the CUDA one's slots both ask.
inline bool decays_param(const OptimizerConfig& c, size_t i) {
  return c.param_ranks.empty() || i >= c.param_ranks.size() ||
         double(c.param_ranks[i]) >= c.decay_min_rank;
}

// The learning rate of step i (0-based: the first update is i = 0), in double. The same
// formula runs on the device (runtime/cuda/kernels/optimizer.cuh, optimizer_lr_at):
//   Constant:     lr
//   Step:         lr * gamma^floor(i / step_size)              (torch StepLR)
//   Exponential:  lr * gamma^i                                  (torch ExponentialLR)
//   WarmupCosine: i < warmup:  lr * i / warmup                  (linear from 0)
//                 else: p = min(1, (i - warmup) / (total - warmup));
//                       min_lr + (lr - min_lr) * 0.5 * (1 + cos(pi * p))
//                 (so step warmup uses lr, step total and after use min_lr)
double lr_at(const OptimizerConfig& config, int64_t i);

// The factor clip_grad_norm_ multiplies every gradient by, from the global norm of all
// gradients: max_norm / (norm + 1e-6) when that is below 1, else 1 (no change).
double clip_coefficient(double max_norm, double norm);

template <class T>
class Optimizer {
 public:
  // params_and_grads[i] = (parameter i, its gradient), each sizes[i] elements long.
  // The buffers are borrowed; they must outlive the optimizer.
  Optimizer(const OptimizerConfig& config, std::vector<std::pair<T*, T*>> params_and_grads,
            std::vector<int64_t> sizes);

  // Ok unless construction found a problem (bad hyper-parameter, sizes/params count
  // mismatch, negative size); step() does nothing then.
  const Status& status() const { return status_; }

  // One update of every parameter from its current gradient.
  //   Adam:  g += wd p;  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
  //          p -= lr (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)
  //   AdamW: p -= lr wd p; then Adam without the g += wd p.
  //   SGD:   g += wd p;  buf = g (first step) or momentum buf + g;  p -= lr buf
  //          (buf is g itself when momentum == 0).
  //   RMSprop: g += wd p;  v = alpha v + (1-alpha) g^2;  d = g / (sqrt(v) + eps);
  //          buf = momentum buf + d, p -= lr buf (momentum > 0), else p -= lr d
  //   Adagrad: g += wd p;  v += g^2;  p -= lr / (1 + (t-1) lr_decay) g / (sqrt(v) + eps)
  // wd is 0 for a param decays_param exempts.
  // lr is lr_at(config, t - 1). With clip_grad_norm > 0 every gradient is first scaled
  // by clip_coefficient(clip_grad_norm, global norm) (the norm summed in double, in
  // parameter order); the gradient buffers are not modified.
  void step();

  // The global gradient norm and lr of the last step (0 before the first).
  double last_grad_norm() const { return last_norm_; }
  double last_lr() const { return last_lr_; }

  // Number of steps taken so far.
  int64_t t() const { return t_; }

 private:
  OptimizerConfig config_;
  std::vector<std::pair<T*, T*>> params_;
  std::vector<int64_t> sizes_;
  std::vector<std::vector<T>> m_, v_;  // Adam moments, or SGD momentum buffers in m_
  int64_t t_ = 0;
  double last_norm_ = 0, last_lr_ = 0;
  Status status_ = Status::Ok();
};

extern template class Optimizer<float>;
extern template class Optimizer<double>;

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_OPTIM_H_
