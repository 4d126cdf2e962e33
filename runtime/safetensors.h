// safetensors.h: parameter checkpoints in the safetensors format.
//
// --save-params / --load-params read and write the format PyTorch and Hugging Face
// use (8-byte little-endian header length, a JSON header naming each tensor's dtype,
// shape and byte range, then raw little-endian data), so checkpoints move between
// vouch and reference scripts. Writes are atomic (atomic_file.h: a temporary file
// beside the target, fsync, rename); reads validate the header and the data area's
// layout before reading any data, then read the tensors a chunk at a time, and refuse
// a bad file with the reason and the file name.
#ifndef VOUCH_RUNTIME_SAFETENSORS_H_
#define VOUCH_RUNTIME_SAFETENSORS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/status.h"

namespace vouch::rt {

struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<double> data;  // row-major, numel(shape) elements
};

// Writes the tensors (in the given order) as F64, or as F32 when !as_f64, through
// replace_file (atomic_file.h). On failure path is untouched.
Status save_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                        bool as_f64);

// Reads every tensor (F32 or F64, converted to double), in header order. Refused
// before any data is read: a directory, a header that is not one, tensors that do not
// tile the data area exactly, more elements than the memory available holds as
// float64.
Result<std::vector<NamedTensor>> load_safetensors(const std::string& path);

// Ok when every value is finite; else the first NaN or infinity: "path: tensor 'w1'
// holds nan at index 5 ([2, 1]): parameters must be finite". The loader itself accepts
// them (train_main refuses them unless --allow-nonfinite).
Status check_finite_params(const std::string& path, const std::vector<NamedTensor>& tensors);

// Ok when loaded holds exactly the expected names with the expected shapes; otherwise
// one error listing every missing parameter, unexpected parameter and wrong shape (the
// first 20, then how many more).
Status check_params(const std::vector<NamedTensor>& loaded,
                    const std::vector<std::pair<std::string, std::vector<int64_t>>>& expected);

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_SAFETENSORS_H_
