// deterministic.cc: the deterministic reduction mode (deterministic.h).
#include "runtime/cuda/deterministic.h"

#include <atomic>
#include <cstdlib>

namespace vouch::rt::cuda {

namespace {

// -1: not set explicitly (the environment decides); 0 / 1: set.
std::atomic<int> g_explicit{-1};

bool env_mode() {
  static const bool enabled = parse_deterministic_env(std::getenv(kDeterministicEnv));
  return enabled;
}

}  // namespace

bool parse_deterministic_env(const char* text) {
  return text != nullptr && text[0] != '\0' && !(text[0] == '0' && text[1] == '\0');
}

bool deterministic_reductions() {
  int e = g_explicit.load(std::memory_order_relaxed);
  if (e >= 0) return e == 1;
  return env_mode();
}

void set_deterministic_reductions(bool enabled) {
  g_explicit.store(enabled ? 1 : 0, std::memory_order_relaxed);
}

const char* deterministic_mode_name(bool deterministic) {
  return deterministic ? "required" : "not required";
}

const char* deterministic_mode_name() {
  return deterministic_mode_name(deterministic_reductions());
}

}  // namespace vouch::rt::cuda
