// dataset.h: the training data of an executable, as a dense (x, y) table.
//
// A model's data clause names either the built-in regression grid of the reference
// semantics (BRIEF.md) or a file; `--data` may override it. Files are CSV or an
// x.npy,y.npy pair. Every loader checks the column counts against the model and
// refuses bad files with `path:line: reason` (CSV) or `path: reason` (NPY).
#ifndef VOUCH_RUNTIME_DATASET_H_
#define VOUCH_RUNTIME_DATASET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/npy.h"
#include "runtime/status.h"

namespace vouch::rt {

struct Dataset {
  int64_t rows = 0, in_features = 0, out_features = 0;
  std::vector<double> x;  // [rows, in_features], row-major
  std::vector<double> y;  // [rows, out_features], row-major
  std::string description;
};

// xs = linspace(lo, hi, n); rows n*n; row r = (xs[r / n], xs[r % n]);
// y = 0.8 relu(x1 + x2) - 0.4 relu(x2 - x1) + 0.2.
Dataset regression_grid(double lo, double hi, int64_t n);

// Comma-separated numbers, in_features then out_features per line, each field one
// whole number (an optional sign, then a decimal: '+-1' and '1x' are refused) and
// finite. An optional header (a first non-blank line none of whose fields is a number;
// nan and inf are numbers, so a first row of them is data, and refused), blank lines,
// CRLF line ends and a UTF-8 byte order mark are skipped. Read a chunk at a time: the
// first problem stops the read with path:line, its field shown escaped and cut
// (quoted.h); a field longer than any number (4096 bytes) is refused as it is read.
Result<Dataset> load_csv(const std::string& path, int64_t in_features, int64_t out_features);

// x: [rows, in_features], y: [rows, out_features]; a 1-D array is accepted where the
// expected column count is 1. Non-finite values are refused.
Result<Dataset> load_npy_pair(const std::string& x_path, const std::string& y_path,
                              int64_t in_features, int64_t out_features);

// One .npy file per data field, in field order: field i's array is [rows, ...] with
// row_elems[i] elements after the first axis ([rows] where row_elems[i] == 1); the
// first `inputs` fields fill x's columns, the others y's. Non-finite values are refused
// with the file, the field (names[i], when given), the element and its row.
Result<Dataset> load_npy_fields(const std::vector<std::string>& paths,
                                const std::vector<int64_t>& row_elems, size_t inputs,
                                const std::vector<std::string>& names = {});

// "a.npy,b.npy" -> {"a.npy", "b.npy"} (a data spec's comma-separated paths).
std::vector<std::string> split_paths(const std::string& spec);

// spec: "file.csv", or one .npy per field, comma-separated ("x.npy,labels.npy").
// Without `row_elems`, the fields are one input of in_features and one target of
// out_features.
Result<Dataset> load_data_file(const std::string& spec, int64_t in_features,
                               int64_t out_features,
                               const std::vector<int64_t>& row_elems = {}, size_t inputs = 1,
                               const std::vector<std::string>& names = {});

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_DATASET_H_
