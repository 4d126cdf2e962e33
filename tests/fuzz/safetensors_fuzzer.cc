// safetensors_fuzzer.cc: the checkpoint reader (runtime/safetensors.h, with the JSON
// reader of its header, runtime/json.h) against arbitrary bytes.
//
// Properties, besides "no crash, no sanitizer report": every tensor loaded holds
// exactly its shape's elements; what was loaded survives save_safetensors /
// load_safetensors (F64) bit for bit, names, order and shapes included; every
// refusal names the file and shows none of its bytes raw (fuzz_file.h); the checks
// the executables run next (check_finite_params, check_params against a model's
// parameters) hold the same rules.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "runtime/safetensors.h"
#include "tests/fuzz/fuzz_file.h"

using namespace vouch::rt;
using vouch::fuzz::check_refusal;
using vouch::fuzz::fail;

namespace {

bool same(const std::vector<NamedTensor>& a, const std::vector<NamedTensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (a[i].name != b[i].name || a[i].shape != b[i].shape ||
        a[i].data.size() != b[i].data.size() ||
        (!a[i].data.empty() &&
         std::memcmp(a[i].data.data(), b[i].data.data(), a[i].data.size() * 8) != 0))
      return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static vouch::fuzz::FuzzFile file("fuzz.safetensors");
  const std::string path = file.write(data, size);

  Result<std::vector<NamedTensor>> loaded = load_safetensors(path);
  if (!loaded.ok()) {
    check_refusal(loaded.status().message(), path);
    return 0;
  }
  const std::vector<NamedTensor>& tensors = loaded.value();
  size_t elements = 0;
  for (const NamedTensor& t : tensors) {
    uint64_t numel = 1;
    bool overflow = false;
    for (int64_t d : t.shape)
      overflow |= d < 0 || __builtin_mul_overflow(numel, uint64_t(d), &numel);
    if (overflow || numel != t.data.size())
      fail("tensor of shape rank " + std::to_string(t.shape.size()) + " holds " +
           std::to_string(t.data.size()) + " elements, not its shape's");
    elements += t.data.size();
  }

  // What the executables check next: finiteness, and the model's parameters (a
  // model of two, w [2, 3] and b [3], as --load-params would).
  Status finite = check_finite_params(path, tensors);
  bool all_finite = true;
  for (const NamedTensor& t : tensors)
    for (double v : t.data) all_finite = all_finite && std::isfinite(v);
  if (finite.ok() != all_finite) fail("check_finite_params disagrees with isfinite");
  if (!finite.ok()) check_refusal(finite.message(), path);
  Status matched = check_params(tensors, {{"w", {2, 3}}, {"b", {3}}});
  if (!matched.ok()) {
    // Not about a file (the caller names it): its lines, each printable and short.
    const std::string& m = matched.message();
    size_t line_start = 0;
    for (size_t i = 0; i <= m.size(); i++) {
      if (i < m.size() && m[i] != '\n') {
        const unsigned char c = static_cast<unsigned char>(m[i]);
        if (c < 0x20 || c > 0x7e) fail("check_params shows a raw byte: " + m.substr(0, 300));
        continue;
      }
      if (i - line_start > 400) fail("check_params writes a line of " +
                                     std::to_string(i - line_start) + " bytes");
      line_start = i + 1;
    }
  }

  // Saved as F64 and loaded again: the same tensors, bit for bit.
  if (elements <= 4096) {
    const std::string copy = vouch::fuzz::scratch_path("copy.safetensors");
    Status saved = save_safetensors(copy, tensors, /*as_f64=*/true);
    if (!saved.ok()) fail("save_safetensors refused what was loaded: " + saved.message());
    Result<std::vector<NamedTensor>> again = load_safetensors(copy);
    if (!again.ok())
      fail("load_safetensors refused what save_safetensors wrote: " + again.status().message());
    if (!same(again.value(), tensors)) fail("save_safetensors / load_safetensors changed them");
  }
  return 0;
}
