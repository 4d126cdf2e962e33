// npy_fuzzer.cc: the .npy reader (runtime/npy.h) and the data loaders built on it
// (runtime/dataset.h) against arbitrary bytes.
//
// Properties, besides "no crash, no sanitizer report": parse_npy_header on the bytes
// agrees with load_npy on the file; an array holds exactly its shape's elements and
// survives save_npy / load_npy bit for bit; every refusal names the file and shows
// no raw byte of it (fuzz_file.h); the dataset loaders accept an array exactly when
// it has rows and only finite values, and keep its values.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/dataset.h"
#include "runtime/npy.h"
#include "tests/fuzz/fuzz_file.h"

using namespace vouch::rt;
using vouch::fuzz::check_refusal;
using vouch::fuzz::fail;

namespace {

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

void check_loaders(const std::string& path, const NpyArray& array) {
  // One field of [rows, ...]: its elements per row are the trailing axes' product
  // when that is a row length a model can have; else a model's expected 4, which
  // the loader must refuse (a shape of (0, 2^62, 2^62) holds no element at all).
  int64_t trailing = 1;
  bool overflow = false;
  for (size_t k = 1; k < array.shape.size(); k++)
    overflow |= __builtin_mul_overflow(trailing, array.shape[k], &trailing);
  const bool fits = !overflow && trailing > 0;
  const int64_t row_elems = fits ? trailing : 4;
  bool finite = true;
  for (double v : array.data) finite = finite && std::isfinite(v);
  const bool has_rows = !array.shape.empty() && array.shape[0] > 0;

  Result<Dataset> fields = load_npy_fields({path}, {row_elems}, 1, {"f"});
  if (fields.ok() != (fits && has_rows && finite))
    fail(std::string("load_npy_fields ") + (fields.ok() ? "accepted" : "refused") +
         " an array with rows=" + std::to_string(has_rows) +
         ", finite=" + std::to_string(finite) + ", row length fits=" + std::to_string(fits) +
         (fields.ok() ? "" : ": " + fields.status().message()));
  if (!fields.ok()) {
    check_refusal(fields.status().message(), path);
    return;
  }
  if (fields.value().rows != array.shape[0] || !same_bits(fields.value().x, array.data))
    fail("load_npy_fields changed the array's rows or values");

  // The classic x.npy,y.npy pair, the same file as both.
  if (array.shape.size() == 2) {
    Result<Dataset> pair = load_npy_pair(path, path, row_elems, row_elems);
    if (!pair.ok()) fail("load_npy_pair refused what load_npy_fields accepted: " +
                         pair.status().message());
    if (!same_bits(pair.value().x, array.data) || !same_bits(pair.value().y, array.data))
      fail("load_npy_pair changed the array's values");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static vouch::fuzz::FuzzFile file("fuzz.npy");
  const std::string path = file.write(data, size);

  Result<NpyHeader> header = parse_npy_header(path, reinterpret_cast<const char*>(data), size);
  if (!header.ok()) check_refusal(header.status().message(), path);
  Result<NpyArray> array = load_npy(path);
  if (!array.ok()) {
    check_refusal(array.status().message(), path);
    return 0;
  }
  if (!header.ok()) fail("load_npy accepted what parse_npy_header refused");
  const NpyArray& a = array.value();
  if (a.shape != header.value().shape) fail("load_npy's shape is not the header's");
  int64_t numel = 1;
  for (int64_t d : a.shape) numel *= d;  // load_npy checked that it fits
  if (int64_t(a.data.size()) != numel)
    fail("an array of " + std::to_string(numel) + " elements holds " +
         std::to_string(a.data.size()));

  // Written as float64 and read back: the same shape, the same bits. (Unless the
  // shape cannot be a float64 array: an empty one whose other extents times 8 bytes
  // pass int64, which numpy refuses to make and load_npy refuses to read; as <i4 it
  // was one.)
  int64_t f64_bytes = 8;
  bool f64_shape = true;
  for (int64_t d : a.shape)
    if (d != 0) f64_shape = f64_shape && !__builtin_mul_overflow(f64_bytes, d, &f64_bytes);
  if (a.data.size() <= 4096 && f64_shape) {
    const std::string copy = vouch::fuzz::scratch_path("copy.npy");
    Status saved = save_npy(copy, a.shape, a.data, /*as_f64=*/true);
    if (!saved.ok()) fail("save_npy: " + saved.message());
    Result<NpyArray> again = load_npy(copy);
    if (!again.ok()) fail("load_npy refused what save_npy wrote: " + again.status().message());
    if (again.value().shape != a.shape || !same_bits(again.value().data, a.data))
      fail("save_npy / load_npy changed the array");
  }
  check_loaders(path, a);
  return 0;
}
