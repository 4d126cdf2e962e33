// train_flags.h: the command-line flags of a generated executable.
//
// Parsing is separate from the training loop so that every flag, default and error
// message can be tested on its own, and --help is generated from the same table the
// parser reads.
#ifndef VOUCH_RUNTIME_TRAIN_FLAGS_H_
#define VOUCH_RUNTIME_TRAIN_FLAGS_H_

#include <cstdint>
#include <string>

#include "runtime/device.h"
#include "runtime/model_api.h"
#include "runtime/status.h"

namespace vouch::rt {

struct TrainOptions {
  Device device = Device::Auto;
  int64_t steps = 0;       // default: ModelDescription::steps
  uint64_t seed = 0;
  bool f32 = false;        // --dtype f32 (see run_in_f32 for the default)
  bool dtype_given = false;  // --dtype was on the command line
  int64_t log_every = 1;   // default: ModelDescription::log_every
  std::string data;        // --data, empty: the model's data clause
  std::string eval;        // --eval: held-out data (same forms as --data); default: the
                           // eval clause's file; empty: none
  bool eval_from_clause = false;  // `eval` holds the eval clause's files (no --eval)
  double eval_fraction = 0;  // the eval clause's fraction (0: none, or --eval/--no-eval)
  int64_t eval_every = 0;  // --eval-every: also evaluate every N steps (0: at the end);
                           // default: the train clause's eval_every
  bool shuffle = false;    // the train clause's shuffle, unless --no-shuffle
  enum class Progress { Auto, On, Off } progress = Progress::Auto;  // --[no-]progress
  std::string predict;     // --predict: the inputs' .npy files; empty: none
  std::string predict_out = "predictions.npy";  // --predict-out
  int64_t sample = 0;         // --sample: tokens to generate after training (runtime/sample.h)
  double temperature = 1.0;   // --temperature: of the draws; 0 takes the argmax
  std::string prompt;         // --prompt: the text the sample continues (needs --vocab)
  std::string vocab;          // --vocab: the tokens' strings (a JSON array); empty: print ids
  std::string save_params, load_params;
  std::string trace;       // --trace: every loss at full precision, for golden tests
  // --profile-launches: where to write the profiled step's launches in order (implies
  // --profile; model_api.h's profile_launches).
  std::string profile_launches;
  bool init_only = false, show_tape = false, help = false;
  bool show_backend = false;  // capsules of the ops that ran, at first use
  bool mem_stats = false;     // allocator telemetry after the run (cuda)
  bool time = false;          // wall time per step (benchmarks)
  // --allow-nonfinite: load a checkpoint holding NaN or infinity, and train on past a
  // non-finite loss, each with a warning, instead of exit 4 / 7.
  bool allow_nonfinite = false;
  RunConfig run;              // --no-cuda-graph, --deterministic, --audit-launches
};

// Parses argv[1..argc) (`--flag V` or `--flag=V`). Errors name the flag and the
// offending text; the caller prints them with a hint to --help.
Result<TrainOptions> parse_train_flags(int argc, char** argv, const ModelDescription& model);

// The element type of a run on `device`: --dtype when given; otherwise f32 on cuda
// (what GPU training runs in) and f64 everywhere else (the reference semantics).
bool run_in_f32(const TrainOptions& o, Device device);

// The --help text: every flag with its default, the exit statuses.
std::string train_usage(const std::string& program, const ModelDescription& model);

// The eval clause's held-out data: its file, "the last F of the data's rows", or "none".
std::string describe_eval(const ModelDescription& model);

// "regression_grid(-1, 1, 5)" or the data file of the model's data clause.
std::string describe_data_spec(const DataSpec& data);

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_TRAIN_FLAGS_H_
