// optim.h: SGD (with momentum), Adam and AdamW over flat parameter buffers.
//
// Semantics are PyTorch's (torch.optim.SGD with dampening 0, Adam, AdamW), as the
// CPU reference for the fused CUDA optimizer kernels. Arithmetic is in T (an f32 run
// updates in f32); only the bias-correction powers beta^t are kept in double.
#ifndef VOUCH_RUNTIME_OPTIM_H_
#define VOUCH_RUNTIME_OPTIM_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "runtime/status.h"

namespace vouch::rt {

struct OptimizerConfig {
  enum Kind { Sgd, Adam, AdamW } kind = Adam;
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weight_decay = 0;
  double momentum = 0;  // SGD only
};

// Ok, or the first out-of-range hyper-parameter.
Status check_optimizer_config(const OptimizerConfig& config);

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
  void step();

  // Number of steps taken so far.
  int64_t t() const { return t_; }

 private:
  OptimizerConfig config_;
  std::vector<std::pair<T*, T*>> params_;
  std::vector<int64_t> sizes_;
  std::vector<std::vector<T>> m_, v_;  // Adam moments, or SGD momentum buffers in m_
  int64_t t_ = 0;
  Status status_ = Status::Ok();
};

extern template class Optimizer<float>;
extern template class Optimizer<double>;

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_OPTIM_H_
