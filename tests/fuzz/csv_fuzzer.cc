// csv_fuzzer.cc: the CSV loader (runtime/dataset.h, load_csv) against arbitrary
// bytes, and against a reference reading of the same bytes.
//
// The input's first two bytes choose the model's columns (1 to 3 inputs, 1 or 2
// outputs); the rest is the file. The reference below reads the whole text at once,
// by docs/language.md's rules rather than the loader's streaming state machine: a
// UTF-8 byte order mark is skipped; lines end at '\n'; a field is what lies between
// commas, without the spaces, tabs and CRs around it; a line of one empty field is
// blank and skipped; the first other line is a header when none of its fields is a
// number (an optional sign, then a decimal, inf or nan: Python's float() of a
// decimal, so 1e-400 is 0 and 1e400 is inf); every other line holds exactly the
// columns, each a finite number; no field (as read, spaces included) is longer than
// 4096 bytes; at least one row. The loader must accept exactly what the reference
// accepts, with the same values bit for bit, and refuse with a message that names
// the file and shows none of its bytes raw (fuzz_file.h).
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/dataset.h"
#include "tests/fuzz/fuzz_file.h"

using namespace vouch::rt;
using vouch::fuzz::check_refusal;
using vouch::fuzz::fail;

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  return true;
}

bool digits(std::string_view s, size_t* at) {
  size_t start = *at;
  while (*at < s.size() && s[*at] >= '0' && s[*at] <= '9') ++*at;
  return *at > start;
}

// The number a trimmed field spells (finite or not), or false.
bool reference_number(std::string_view field, double* value) {
  std::string_view s = field;
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (iequals(s, "inf") || iequals(s, "infinity")) {
    *value = negative ? -HUGE_VAL : HUGE_VAL;
    return true;
  }
  if (s.size() >= 3 && iequals(s.substr(0, 3), "nan")) {
    std::string_view rest = s.substr(3);
    bool ok = rest.empty();
    if (rest.size() >= 2 && rest.front() == '(' && rest.back() == ')') {
      ok = true;
      for (char c : rest.substr(1, rest.size() - 2))
        ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    }
    if (!ok) return false;
    *value = negative ? -NAN : NAN;
    return true;
  }
  // digits [. digits] or . digits, then an optional exponent with digits.
  size_t at = 0;
  bool whole = digits(s, &at);
  bool fraction = false;
  if (at < s.size() && s[at] == '.') {
    ++at;
    fraction = digits(s, &at);
  }
  if (!whole && !fraction) return false;
  if (at < s.size() && (s[at] == 'e' || s[at] == 'E')) {
    ++at;
    if (at < s.size() && (s[at] == '+' || s[at] == '-')) ++at;
    if (!digits(s, &at)) return false;
  }
  if (at != s.size()) return false;
  // glibc's strtod rounds correctly: 0 below the range, infinity above it.
  std::string text(s);
  *value = std::strtod(text.c_str(), nullptr);
  if (negative) *value = -*value;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char by) {
  std::vector<std::string_view> parts;
  for (size_t begin = 0;;) {
    size_t end = s.find(by, begin);
    parts.push_back(s.substr(begin, end == std::string_view::npos ? end : end - begin));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

bool reference(std::string_view text, int64_t in, int64_t out, Dataset* d) {
  if (text.substr(0, 3) == "\xef\xbb\xbf") text.remove_prefix(3);
  const size_t columns = size_t(in + out);
  bool seen_first = false;
  for (std::string_view line : split(text, '\n')) {
    std::vector<std::string_view> fields = split(line, ',');
    for (std::string_view f : fields)
      if (f.size() > 4096) return false;
    if (fields.size() == 1 && trim(fields[0]).empty()) continue;  // blank
    double v;
    if (!seen_first) {
      seen_first = true;
      bool any_number = false;
      for (std::string_view f : fields) any_number = any_number || reference_number(trim(f), &v);
      if (!any_number) continue;  // the header
    }
    if (fields.size() != columns) return false;
    for (size_t c = 0; c < columns; c++) {
      if (!reference_number(trim(fields[c]), &v) || !std::isfinite(v)) return false;
      (int64_t(c) < in ? d->x : d->y).push_back(v);
    }
    d->rows++;
  }
  return d->rows > 0;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int64_t in = 1 + data[0] % 3, out = 1 + data[1] % 2;
  static vouch::fuzz::FuzzFile file("fuzz.csv");
  const std::string path = file.write(data + 2, size - 2);

  Result<Dataset> loaded = load_csv(path, in, out);
  Dataset expected;
  const bool valid =
      reference(std::string_view(reinterpret_cast<const char*>(data) + 2, size - 2), in, out,
                &expected);
  if (loaded.ok() != valid)
    fail(std::string("load_csv ") + (loaded.ok() ? "accepted" : "refused") +
         " what the reference " + (valid ? "accepts" : "refuses") +
         (loaded.ok() ? "" : ": " + loaded.status().message()));
  if (!loaded.ok()) {
    check_refusal(loaded.status().message(), path);
    return 0;
  }
  const Dataset& d = loaded.value();
  if (d.rows != expected.rows || d.in_features != in || d.out_features != out ||
      !same_bits(d.x, expected.x) || !same_bits(d.y, expected.y))
    fail("load_csv read other rows or values than the reference: " +
         std::to_string(d.rows) + " rows, the reference " + std::to_string(expected.rows));
  return 0;
}
