// step_times.h: --time's record of the wall time per training step, in bounded memory.
//
// The training loop adds one sample per loss read: the milliseconds per step over the
// steps since the previous read. A run of a billion steps must not keep a billion
// samples, so the record keeps the first kWarmup samples apart (the warm-up: CUDA
// graph capture, cold caches), the exact minimum, and at most kCapacity of the others,
// evenly spread: when full it drops every other sample kept and from then on keeps
// every second one (then every fourth, ...). Up to kWarmup + kCapacity samples the
// summary is exact; beyond, its median is the median of that even subsample.
#ifndef VOUCH_RUNTIME_STEP_TIMES_H_
#define VOUCH_RUNTIME_STEP_TIMES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace vouch::rt {

class StepTimes {
 public:
  static constexpr size_t kWarmup = 10;
  static constexpr size_t kCapacity = 4096;

  void add(double ms) {
    const uint64_t i = count_++;
    if (i < kWarmup) {
      head_.push_back(ms);
      return;
    }
    rest_min_ = i == kWarmup ? ms : std::min(rest_min_, ms);
    if ((i - kWarmup) % stride_ != 0) return;
    if (rest_.size() == kCapacity) {  // keep every other one, then sample half as often
      for (size_t j = 0; 2 * j < rest_.size(); j++) rest_[j] = rest_[2 * j];
      rest_.resize(rest_.size() / 2);
      stride_ *= 2;
      if ((i - kWarmup) % stride_ != 0) return;
    }
    rest_.push_back(ms);
  }

  uint64_t count() const { return count_; }
  // Samples held now: never more than kWarmup + kCapacity.
  size_t held() const { return head_.size() + rest_.size(); }

  struct Summary {
    double median_ms, min_ms;
    uint64_t intervals;  // samples after the warm-up
    uint64_t warmup;     // samples dropped as warm-up: min(kWarmup, count / 5)
    uint64_t every;      // the median is over every `every`-th of the later samples
  };
  // Nothing when every sample was warm-up.
  std::optional<Summary> summary() const {
    const uint64_t warmup = std::min<uint64_t>(kWarmup, count_ / 5);
    if (count_ <= warmup) return std::nullopt;
    std::vector<double> kept(head_.begin() + std::ptrdiff_t(warmup), head_.end());
    kept.insert(kept.end(), rest_.begin(), rest_.end());
    double min = *std::min_element(kept.begin(), kept.end());
    if (count_ > kWarmup) min = std::min(min, rest_min_);
    std::sort(kept.begin(), kept.end());
    return Summary{kept[kept.size() / 2], min, count_ - warmup, warmup, stride_};
  }

 private:
  uint64_t count_ = 0;
  std::vector<double> head_;  // the first kWarmup samples
  std::vector<double> rest_;  // every stride_-th later sample, at most kCapacity
  uint64_t stride_ = 1;
  double rest_min_ = 0;
};

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_STEP_TIMES_H_
