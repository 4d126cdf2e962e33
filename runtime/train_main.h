// train_main.h: the main() of every generated executable.
//
// Generated code provides a ModelDescription and its backends (usually
// cpu_program_backend / cuda_program_backend over its Programs, see model_api.h), and
// its main() is one call to train_main. Output follows TorchLean's
// quickstart (BRIEF.md, "Reference semantics") line for line, so runs can be compared
// with the reference by text.
#ifndef VOUCH_RUNTIME_TRAIN_MAIN_H_
#define VOUCH_RUNTIME_TRAIN_MAIN_H_

#include <memory>
#include <vector>

#include "runtime/model_api.h"

namespace vouch::rt {

// Exit statuses of train_main.
enum TrainExit {
  kExitOk = 0,
  kExitInternal = 1,   // inconsistent model description
  kExitUsage = 2,      // unknown flag, missing value, malformed number
  kExitDevice = 3,     // requested device has no runtime in this build
  kExitParams = 4,     // --load-params / --save-params refused
  kExitData = 5,       // data file refused, rows not a multiple of the batch
  kExitMemory = 6,     // the model does not fit in the host's or the device's memory
  kExitNonFinite = 7,  // the training loss became NaN or infinite
};

// The table of exit statuses, as --help prints it; docs/language.md ("Exit statuses")
// holds the same lines (train_flags_test checks).
struct ExitStatusInfo {
  int code;
  const char* meaning;
};
inline constexpr ExitStatusInfo kTrainExitStatuses[] = {
    {kExitOk, "success"},
    {kExitInternal, "internal error (an inconsistent model, a failed launch audit)"},
    {kExitUsage, "bad flags (or one this model cannot serve), or an output that cannot be "
                 "written"},
    {kExitDevice, "the device is not available, or failed"},
    {kExitParams, "the parameter file (--load-params, --save-params) refused"},
    {kExitData, "the data refused"},
    {kExitMemory, "the model does not fit in the memory available (host or device)"},
    {kExitNonFinite, "the training loss became NaN or infinite (see --allow-nonfinite)"},
};

// Parses the flags, initialises (param i from init_tensor(..., param_seed(seed, i))),
// optionally loads parameters, evaluates, trains, prints, optionally saves. A factory
// may be nullptr when the executable was not built for that element type.
int train_main(int argc, char** argv, const ModelDescription& model,
               std::unique_ptr<CompiledModel<float>> (*make_f32)(),
               std::unique_ptr<CompiledModel<double>> (*make_f64)());

// The same for an executable with several backends (the cuda target carries cpu
// and cuda). `--device auto` picks cuda only when its ready() succeeds; an
// explicit device without a usable backend is an error, never another device. Without
// --dtype a cuda run is f32 and a cpu run f64 (run_in_f32). A device-resident model's
// losses are read at log points, the last step and, with --trace, before its loss ring
// would overflow (see Run::train in train_main.cc).
int train_main(int argc, char** argv, const ModelDescription& model,
               const std::vector<Backend>& backends);

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_TRAIN_MAIN_H_
