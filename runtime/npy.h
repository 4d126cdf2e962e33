// npy.h: a reader for NumPy's .npy files (format versions 1.0 and 2.0).
//
// Training data may come as one .npy file per data field. Only what numpy.save writes for plain
// numeric arrays is accepted: little-endian <f4, <f8, <i4, <i8 and |u1 (uint8) in C order. Anything
// else (Fortran order, big-endian, other dtypes, truncated data) is refused with the
// reason, never reinterpreted.
#ifndef VOUCH_RUNTIME_NPY_H_
#define VOUCH_RUNTIME_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/status.h"

namespace vouch::rt {

struct NpyArray {
  std::vector<int64_t> shape;  // empty for a 0-d array
  std::vector<double> data;    // row-major, converted to double
};

// Reads the header first, then checks the file's size against the shape (a truncated
// or overlong file is refused before its data is read) and the elements, as float64,
// against the memory available; then the data a chunk at a time. A directory, a read
// error or a file that ends early is refused with the path and the reason.
Result<NpyArray> load_npy(const std::string& path);

// The header of an .npy file whose first `size` bytes are `bytes` (the whole file):
// the dtype as numpy writes it ("<u2"), the shape, and where the data starts. Refuses
// a bad magic, an unsupported version, a malformed or truncated header, Fortran order
// and big-endian dtypes; the caller checks the dtype and the data's size.
struct NpyHeader {
  std::string descr;
  std::vector<int64_t> shape;
  size_t data_offset = 0;
};
Result<NpyHeader> parse_npy_header(const std::string& path, const char* bytes, size_t size);

// Writes `data` (row-major, `shape`) as a version 1.0 .npy of <f4 (as_f64 false) or
// <f8, through replace_file (atomic_file.h): an existing file is replaced whole or not
// at all; an existing path that is not a regular file is refused.
Status save_npy(const std::string& path, const std::vector<int64_t>& shape,
                const std::vector<double>& data, bool as_f64);

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_NPY_H_
