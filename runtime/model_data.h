// model_data.h: the data and the initial parameters of a described model.
//
// One place for the rules every consumer of a ModelDescription follows: the
// executable's training loop (train_main) and the compiler's reference
// interpreter (`vouch run --interpret`) start from the same batches and the
// same seeded parameters.
#ifndef VOUCH_RUNTIME_MODEL_DATA_H_
#define VOUCH_RUNTIME_MODEL_DATA_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/dataset.h"
#include "runtime/model_api.h"
#include "runtime/safetensors.h"

namespace vouch::rt {

// The model's dataset: `override_path` (file.csv, or one .npy per field,
// comma-separated in field order) when not empty, else its data clause. Refused with
// the reason when the regression grid does not fit the model's features, the rows are
// not a multiple of the batch, or an integer field holds a value that is not an int32.
// With an eval fraction (the model's eval clause, ModelDescription::eval_fraction) the
// data is split first (split_held_out): the training part is returned and the held-out
// rows go to `held_out` when it is given. A token stream (DataSpec::Tokens, whose
// training reads windows per step: runtime/tokens.h) gives its first batch of sequential
// windows, its ids checked.
Result<Dataset> load_model_data(const ModelDescription& m, const std::string& override_path,
                                Dataset* held_out = nullptr);

// Splits off the held-out rows of an eval fraction: the last ones, at least
// ceil(fraction * rows) of them, and as many more as make the rows kept for training a
// whole number of batches. Refused when no whole batch is left for training.
Result<Dataset> split_held_out(Dataset& d, double fraction, int64_t batch);

// Held-out data (--eval PATH): as load_model_data, but any number of rows (the
// evaluation pads its last batch).
Result<Dataset> load_eval_data(const ModelDescription& m, const std::string& path);

// The model's data fields: ModelDescription::fields, or, for a description that
// lists none (hand-written ones), one real input of in_features and one real target
// of out_features.
std::vector<FieldInfo> model_fields(const ModelDescription& m);

// True when `v` (finite) rounds to infinity as an f32: its magnitude is at least
// FLT_MAX plus half of FLT_MAX's ulp (round to nearest even: that midpoint rounds up, as
// FLT_MAX's significand is odd). A value that rounds to FLT_MAX is not; one below f32's
// smallest subnormal becomes 0 and subnormals lose digits, which is not refused.
inline bool overflows_f32(double v) {
  return std::isfinite(v) && (v >= 0x1.ffffffp+127 || v <= -0x1.ffffffp+127);
}

// An f32 run's data: Ok when every value of every real field of `d` is finite as an f32
// (overflows_f32); else the first one, with its file (`spec`: the data spec, one file
// per field when npy), field, row and element. (The loaders already refused NaN and
// infinity.)
Status check_fits_f32(const ModelDescription& m, const Dataset& d, const std::string& spec);

// An f32 run's loaded parameters (`path`: the checkpoint): Ok when every value is finite
// as an f32; else the first one, with its tensor and index.
Status check_params_fit_f32(const std::string& path, const std::vector<NamedTensor>& params);

// Every parameter initialised in float64, in declaration order: parameter i
// from init_tensor(its InitSpec, param_seed(seed, i)).
std::vector<NamedTensor> initial_params(const ModelDescription& m, uint64_t seed);

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_MODEL_DATA_H_
