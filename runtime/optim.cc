// optim.cc: the optimizer updates declared in optim.h, one plain loop per parameter.
#include "runtime/optim.h"

#include <cmath>
#include <string>

namespace vouch::rt {

Status check_optimizer_config(const OptimizerConfig& c) {
  auto bad = [](const char* what, double v) {
    return Status::Error(std::string("optimizer: ") + what + " (got " + std::to_string(v) + ")");
  };
  if (!(c.lr >= 0) || !std::isfinite(c.lr)) return bad("lr must be finite and >= 0", c.lr);
  if (!(c.weight_decay >= 0)) return bad("weight_decay must be >= 0", c.weight_decay);
  if (c.kind == OptimizerConfig::Sgd) {
    if (!(c.momentum >= 0)) return bad("momentum must be >= 0", c.momentum);
    return Status::Ok();
  }
  if (!(c.beta1 >= 0 && c.beta1 < 1)) return bad("beta1 must be in [0, 1)", c.beta1);
  if (!(c.beta2 >= 0 && c.beta2 < 1)) return bad("beta2 must be in [0, 1)", c.beta2);
  if (!(c.eps >= 0)) return bad("eps must be >= 0", c.eps);
  return Status::Ok();
}

template <class T>
Optimizer<T>::Optimizer(const OptimizerConfig& config,
                        std::vector<std::pair<T*, T*>> params_and_grads,
                        std::vector<int64_t> sizes)
    : config_(config), params_(std::move(params_and_grads)), sizes_(std::move(sizes)) {
  status_ = check_optimizer_config(config_);
  if (status_.ok() && params_.size() != sizes_.size())
    status_ = Status::Error("optimizer: " + std::to_string(params_.size()) +
                            " parameters but " + std::to_string(sizes_.size()) + " sizes");
  for (size_t i = 0; status_.ok() && i < sizes_.size(); i++)
    if (sizes_[i] < 0) status_ = Status::Error("optimizer: negative size for parameter " +
                                               std::to_string(i));
  if (!status_.ok()) return;
  for (int64_t n : sizes_) {
    m_.emplace_back(config_.kind == OptimizerConfig::Sgd && config_.momentum == 0 ? 0 : n, T(0));
    v_.emplace_back(config_.kind == OptimizerConfig::Sgd ? 0 : n, T(0));
  }
}

template <class T>
void Optimizer<T>::step() {
  if (!status_.ok()) return;
  t_++;
  const T lr = T(config_.lr), wd = T(config_.weight_decay);
  if (config_.kind == OptimizerConfig::Sgd) {
    const T momentum = T(config_.momentum);
    for (size_t i = 0; i < params_.size(); i++) {
      T* p = params_[i].first;
      const T* g = params_[i].second;
      T* buf = m_[i].data();
      for (int64_t j = 0; j < sizes_[i]; j++) {
        T d = g[j];
        if (config_.weight_decay != 0) d = d + wd * p[j];
        if (config_.momentum != 0) {
          buf[j] = t_ == 1 ? d : momentum * buf[j] + d;
          d = buf[j];
        }
        p[j] = p[j] - lr * d;
      }
    }
    return;
  }
  const bool decoupled = config_.kind == OptimizerConfig::AdamW;
  const T beta1 = T(config_.beta1), beta2 = T(config_.beta2), eps = T(config_.eps);
  const T one_minus_beta1 = T(1.0 - config_.beta1), one_minus_beta2 = T(1.0 - config_.beta2);
  // Bias corrections from powers computed in double, then rounded once to T.
  const T bc1 = T(1.0 - std::pow(config_.beta1, double(t_)));
  const T bc2 = T(1.0 - std::pow(config_.beta2, double(t_)));
  for (size_t i = 0; i < params_.size(); i++) {
    T* p = params_[i].first;
    const T* g = params_[i].second;
    T* m = m_[i].data();
    T* v = v_[i].data();
    for (int64_t j = 0; j < sizes_[i]; j++) {
      T grad = g[j];
      if (config_.weight_decay != 0) {
        if (decoupled) {
          p[j] = p[j] - lr * wd * p[j];
        } else {
          grad = grad + wd * p[j];
        }
      }
      m[j] = beta1 * m[j] + one_minus_beta1 * grad;
      v[j] = beta2 * v[j] + one_minus_beta2 * grad * grad;
      T m_hat = m[j] / bc1;
      T v_hat = v[j] / bc2;
      p[j] = p[j] - lr * m_hat / (std::sqrt(v_hat) + eps);
    }
  }
}

template class Optimizer<float>;
template class Optimizer<double>;

}  // namespace vouch::rt
