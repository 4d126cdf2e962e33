// deterministic.cc: the deterministic reduction mode (deterministic.h).
#include "runtime/cuda/deterministic.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace vouch::rt::cuda {

namespace {

// -1: not set explicitly (the environment decides); 0 / 1: set.
std::atomic<int> g_explicit{-1};

bool env_mode() {
  static const bool enabled = [] {
    DeterministicEnvParse p = parse_deterministic_env(std::getenv(kDeterministicEnv));
    if (!p.warning.empty()) {
      std::fprintf(stderr, "%s\n", p.warning.c_str());
      std::fflush(stderr);
    }
    return p.enabled;
  }();
  return enabled;
}

}  // namespace

DeterministicEnvParse parse_deterministic_env(const char* text) {
  DeterministicEnvParse out;
  if (text == nullptr) return out;
  std::string v(text);
  if (v.empty() || v == "0") return out;
  if (v == "1") {
    out.enabled = true;
    return out;
  }
  std::string shown;
  for (char c : v) shown += (static_cast<unsigned char>(c) < 0x20) ? '?' : c;
  out.warning = std::string("warning: ") + kDeterministicEnv + "=\"" + shown +
                "\" is neither 0 nor 1; ignored; reductions are implementation-defined";
  return out;
}

bool deterministic_reductions() {
  int e = g_explicit.load(std::memory_order_relaxed);
  if (e >= 0) return e == 1;
  return env_mode();
}

void set_deterministic_reductions(bool enabled) {
  g_explicit.store(enabled ? 1 : 0, std::memory_order_relaxed);
}

const char* reduction_mode_name(bool deterministic) {
  return deterministic ? "fixed-order" : "implementation-defined";
}

const char* reduction_mode_name() { return reduction_mode_name(deterministic_reductions()); }

}  // namespace vouch::rt::cuda
