// deterministic.h: the deterministic reduction mode switch.
//
// On: the generated CUDA code uses fixed-order (block/warp tree in a fixed shape, no
// atomics) reductions, so two runs on the same GPU model are bitwise equal. Off: the
// fastest reductions, whose summation order is implementation-defined. The mode is on
// when TORCHLEAN_CUDA_DETERMINISTIC_REDUCTIONS=1 (read once, at first query) or when
// set_deterministic_reductions(true) was called (an executable's `--deterministic`);
// an explicit set_deterministic_reductions call wins over the environment. It does not
// make cuBLAS bitwise-reproducible across GPU models, nor seeded RNG unnecessary.
#ifndef VOUCH_RUNTIME_CUDA_DETERMINISTIC_H_
#define VOUCH_RUNTIME_CUDA_DETERMINISTIC_H_

#include <string>

namespace vouch::rt::cuda {

inline constexpr const char kDeterministicEnv[] = "TORCHLEAN_CUDA_DETERMINISTIC_REDUCTIONS";

struct DeterministicEnvParse {
  bool enabled = false;
  std::string warning;  // empty, or one line for stderr (no newline)
};

// nullptr / "" / "0" -> off; "1" -> on; anything else -> off with a warning.
DeterministicEnvParse parse_deterministic_env(const char* text);

// The active mode (thread-safe). The environment's warning, if any, is printed to
// stderr once, at the first query.
bool deterministic_reductions();
void set_deterministic_reductions(bool enabled);

// "fixed-order" or "implementation-defined": the `reduce=` field of the report.
const char* reduction_mode_name(bool deterministic);
const char* reduction_mode_name();  // of the active mode

}  // namespace vouch::rt::cuda

#endif  // VOUCH_RUNTIME_CUDA_DETERMINISTIC_H_
