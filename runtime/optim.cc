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
  if (!(c.decay_min_rank >= 0 && c.decay_min_rank <= 8) ||
      c.decay_min_rank != std::floor(c.decay_min_rank))
    return bad("decay_min_rank must be an integer in [0, 8]", c.decay_min_rank);
  if (!(c.clip_grad_norm >= 0) || !std::isfinite(c.clip_grad_norm))
    return bad("clip_grad_norm must be finite and >= 0", c.clip_grad_norm);
  switch (c.schedule) {
    case OptimizerConfig::Constant:
      break;
    case OptimizerConfig::Step:
      if (c.step_size < 1) return bad("schedule step: step_size must be >= 1", double(c.step_size));
      [[fallthrough]];
    case OptimizerConfig::Exponential:
      if (!(c.gamma > 0) || !std::isfinite(c.gamma)) return bad("schedule: gamma must be > 0", c.gamma);
      break;
    case OptimizerConfig::WarmupCosine:
      if (c.warmup < 0) return bad("schedule warmup_cosine: warmup must be >= 0", double(c.warmup));
      if (c.total <= c.warmup)
        return bad("schedule warmup_cosine: total must be greater than warmup", double(c.total));
      if (!(c.min_lr >= 0 && c.min_lr <= c.lr))
        return bad("schedule warmup_cosine: min_lr must be in [0, lr]", c.min_lr);
      break;
    default:
      return bad("unknown schedule", double(c.schedule));
  }
  if (c.kind == OptimizerConfig::Sgd) {
    if (!(c.momentum >= 0)) return bad("momentum must be >= 0", c.momentum);
    return Status::Ok();
  }
  if (c.kind == OptimizerConfig::RmsProp) {
    if (!(c.alpha >= 0 && c.alpha < 1)) return bad("alpha must be in [0, 1)", c.alpha);
    if (!(c.momentum >= 0)) return bad("momentum must be >= 0", c.momentum);
    if (!(c.eps > 0)) return bad("eps must be > 0", c.eps);
    return Status::Ok();
  }
  if (c.kind == OptimizerConfig::Adagrad) {
    if (!(c.lr_decay >= 0)) return bad("lr_decay must be >= 0", c.lr_decay);
    if (!(c.eps > 0)) return bad("eps must be > 0", c.eps);
    return Status::Ok();
  }
  if (!(c.beta1 >= 0 && c.beta1 < 1)) return bad("beta1 must be in [0, 1)", c.beta1);
  if (!(c.beta2 >= 0 && c.beta2 < 1)) return bad("beta2 must be in [0, 1)", c.beta2);
  if (!(c.eps >= 0)) return bad("eps must be >= 0", c.eps);
  return Status::Ok();
}

double lr_at(const OptimizerConfig& c, int64_t i) {
  switch (c.schedule) {
    case OptimizerConfig::Step:
      return c.lr * std::pow(c.gamma, double(i / c.step_size));
    case OptimizerConfig::Exponential:
      return c.lr * std::pow(c.gamma, double(i));
    case OptimizerConfig::WarmupCosine: {
      if (i < c.warmup) return c.lr * double(i) / double(c.warmup);
      double p = double(i - c.warmup) / double(c.total - c.warmup);
      if (p > 1) p = 1;
      const double pi = 3.14159265358979323846;
      return c.min_lr + (c.lr - c.min_lr) * 0.5 * (1.0 + std::cos(pi * p));
    }
    default:
      return c.lr;
  }
}

double clip_coefficient(double max_norm, double norm) {
  double coef = max_norm / (norm + 1e-6);
  return coef < 1.0 ? coef : 1.0;
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
  // m_: Adam's first moment, the momentum buffer of SGD and RMSprop. v_: Adam's second
  // moment, RMSprop's square average, Adagrad's sum of squares.
  const bool has_m = config_.kind == OptimizerConfig::Adam ||
                     config_.kind == OptimizerConfig::AdamW || config_.momentum != 0;
  const bool has_v = config_.kind != OptimizerConfig::Sgd;
  for (int64_t n : sizes_) {
    m_.emplace_back(has_m && config_.kind != OptimizerConfig::Adagrad ? n : 0, T(0));
    v_.emplace_back(has_v ? n : 0, T(0));
  }
}

template <class T>
void Optimizer<T>::step() {
  if (!status_.ok()) return;
  t_++;
  last_lr_ = lr_at(config_, t_ - 1);
  // Clipping: the global norm summed in double in parameter order (torch sums per-param
  // f32 norms; the difference is far below the tolerances that compare the two), the
  // factor rounded once to T and applied as torch's g.mul_(coef) would.
  bool clip = false;
  T coef = T(1);
  if (config_.clip_grad_norm > 0) {
    double sum = 0;
    for (size_t i = 0; i < params_.size(); i++)
      for (int64_t j = 0; j < sizes_[i]; j++) {
        double g = double(params_[i].second[j]);
        sum += g * g;
      }
    last_norm_ = std::sqrt(sum);
    double c = clip_coefficient(config_.clip_grad_norm, last_norm_);
    clip = c < 1.0;
    coef = T(c);
  }
  auto grad_of = [&](const T* g, int64_t j) { return clip ? g[j] * coef : g[j]; };
  const T lr = T(last_lr_), wd = T(config_.weight_decay);
  if (config_.kind == OptimizerConfig::RmsProp || config_.kind == OptimizerConfig::Adagrad) {
    const bool rms = config_.kind == OptimizerConfig::RmsProp;
    const T alpha = T(config_.alpha), one_minus_alpha = T(1.0 - config_.alpha);
    const T eps = T(config_.eps), momentum = T(config_.momentum);
    // Adagrad's decayed lr, in double as torch computes it from the Python float lr.
    const T clr = T(last_lr_ / (1.0 + double(t_ - 1) * config_.lr_decay));
    for (size_t i = 0; i < params_.size(); i++) {
      T* p = params_[i].first;
      const T* g = params_[i].second;
      T* v = v_[i].data();
      const bool decay = config_.weight_decay != 0 && decays_param(config_, i);
      for (int64_t j = 0; j < sizes_[i]; j++) {
        T grad = grad_of(g, j);
        if (decay) grad = grad + wd * p[j];
        if (!rms) {
          v[j] = v[j] + grad * grad;
          p[j] = p[j] - clr * (grad / (std::sqrt(v[j]) + eps));
          continue;
        }
        v[j] = alpha * v[j] + one_minus_alpha * grad * grad;
        T d = grad / (std::sqrt(v[j]) + eps);
        if (config_.momentum != 0) {
          T* buf = m_[i].data();
          buf[j] = momentum * buf[j] + d;
          d = buf[j];
        }
        p[j] = p[j] - lr * d;
      }
    }
    return;
  }
  if (config_.kind == OptimizerConfig::Sgd) {
    const T momentum = T(config_.momentum);
    for (size_t i = 0; i < params_.size(); i++) {
      T* p = params_[i].first;
      const T* g = params_[i].second;
      T* buf = m_[i].data();
      const bool decay = config_.weight_decay != 0 && decays_param(config_, i);
      for (int64_t j = 0; j < sizes_[i]; j++) {
        T d = grad_of(g, j);
        if (decay) d = d + wd * p[j];
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
    const bool decay = config_.weight_decay != 0 && decays_param(config_, i);
    for (int64_t j = 0; j < sizes_[i]; j++) {
      T grad = grad_of(g, j);
      if (decay) {
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
