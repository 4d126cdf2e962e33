// deterministic.h: the deterministic reduction mode switch.
//
// The mode records that a run requires reductions whose order is fixed run to run, so a
// training log can say so. It changes no kernel: vouch's generated CUDA kernels always
// reduce in a fixed order (block trees of a fixed shape or left folds, no atomics), and
// the cuBLAS / cuBLASLt handles are always in their reproducible configuration
// (blas.h); the assurance gate under `deterministic` is what refuses a capsule whose
// order is implementation-defined. The mode is on when
// TORCHLEAN_CUDA_DETERMINISTIC_REDUCTIONS is set to any non-empty value other than `0`
// (read once, at first query) or when set_deterministic_reductions(true) was called (an
// executable's `--deterministic`); an explicit call wins over the environment. It does
// not make results equal across GPU models or toolkit versions, nor seeded RNG
// unnecessary.
#ifndef VOUCH_RUNTIME_CUDA_DETERMINISTIC_H_
#define VOUCH_RUNTIME_CUDA_DETERMINISTIC_H_

namespace vouch::rt::cuda {

inline constexpr const char kDeterministicEnv[] = "TORCHLEAN_CUDA_DETERMINISTIC_REDUCTIONS";

// nullptr, "" and "0" -> off; any other value (" 0", "yes", "false" included) -> on,
// as the runtime guide specifies.
bool parse_deterministic_env(const char* text);

// The active mode (thread-safe).
bool deterministic_reductions();
void set_deterministic_reductions(bool enabled);

// "required" or "not required": cuda_info's `deterministic=` line. Not a reduction
// order: every reduction is in a fixed order either way (see above).
const char* deterministic_mode_name(bool deterministic);
const char* deterministic_mode_name();  // of the active mode

}  // namespace vouch::rt::cuda

#endif  // VOUCH_RUNTIME_CUDA_DETERMINISTIC_H_
