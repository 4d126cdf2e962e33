// safetensors.cc: safetensors writer, validating reader and parameter check
// (safetensors.h). The header is parsed with the runtime's own JSON reader (json.h).
#include "runtime/safetensors.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "runtime/atomic_file.h"
#include "runtime/input_file.h"
#include "runtime/json.h"
#include "runtime/memory.h"
#include "runtime/quoted.h"

namespace vouch::rt {

static_assert(std::endian::native == std::endian::little,
              "safetensors.cc writes and reads little-endian data with memcpy");

namespace {

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); i++) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// numel(shape), or -1 on a negative dimension or overflow past 2^62.
int64_t checked_numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > (int64_t(1) << 62) / d) return -1;
    n *= d;
  }
  return n;
}

// safetensors' own limit on the JSON header (the Rust crate's MAX_HEADER_SIZE).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

// " ([1, 2])": the multi-index of flat element i of `shape`, for shapes of rank > 1.
std::string index_text(const std::vector<int64_t>& shape, size_t i) {
  if (shape.size() < 2) return "";
  std::vector<int64_t> index(shape.size());
  uint64_t rest = i;
  for (size_t k = shape.size(); k-- > 0;) {
    if (shape[k] == 0) return "";
    index[k] = int64_t(rest % uint64_t(shape[k]));
    rest /= uint64_t(shape[k]);
  }
  return " (" + shape_string(index) + ")";
}

Status file_error(const std::string& path, const std::string& reason) {
  return Status::Error(path + ": " + reason);
}

}  // namespace

Status save_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                        bool as_f64) {
  const size_t elem = as_f64 ? 8 : 4;
  std::string header = "{";
  uint64_t offset = 0;
  std::unordered_set<std::string> names;
  for (size_t i = 0; i < tensors.size(); i++) {
    const NamedTensor& t = tensors[i];
    if (t.name.empty() || t.name == "__metadata__")
      return file_error(path, "invalid tensor name " + quoted(t.name));
    if (!names.insert(t.name).second)
      return file_error(path, "duplicate tensor name " + quoted(t.name));
    int64_t numel = checked_numel(t.shape);
    if (numel < 0 || uint64_t(numel) != t.data.size())
      return file_error(path, "tensor '" + t.name + "' has shape " + shape_string(t.shape) +
                                  " but " + std::to_string(t.data.size()) + " elements");
    uint64_t end = offset + uint64_t(numel) * elem;
    header += json_quote(t.name) + ":{\"dtype\":\"" + (as_f64 ? "F64" : "F32") +
              "\",\"shape\":" + shape_string(t.shape) + ",\"data_offsets\":[" +
              std::to_string(offset) + "," + std::to_string(end) + "]},";
    offset = end;
  }
  header += "\"__metadata__\":{\"format\":\"vouch\"}}";
  while (header.size() % 8 != 0) header.push_back(' ');

  std::string bytes;
  bytes.reserve(8 + header.size() + offset);
  uint64_t header_len = header.size();
  for (int i = 0; i < 8; i++) bytes.push_back(char((header_len >> (8 * i)) & 0xFF));
  bytes += header;
  for (const NamedTensor& t : tensors) {
    for (double v : t.data) {
      char buf[8];
      if (as_f64) {
        std::memcpy(buf, &v, 8);
      } else {
        float f = static_cast<float>(v);
        std::memcpy(buf, &f, 4);
      }
      bytes.append(buf, elem);
    }
  }

  Status written = replace_file(path, bytes);
  return written;
}

Result<std::vector<NamedTensor>> load_safetensors(const std::string& path) {
  Result<InputFile> opened = InputFile::open(path);
  if (!opened.ok()) return opened.status();
  InputFile& in = opened.value();
  const int64_t file_size = in.size();  // -1: a pipe
  if (file_size >= 0 && file_size < 8)
    return file_error(path, "file is " + std::to_string(file_size) +
                                " bytes, shorter than the 8-byte header length");
  unsigned char length[8];
  Status st = in.read_exact(reinterpret_cast<char*>(length), 8, "the header length");
  if (!st.ok()) return st;
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; i--) header_len = (header_len << 8) | length[i];
  if (file_size >= 0 && header_len > uint64_t(file_size) - 8)
    return file_error(path, "header length " + std::to_string(header_len) +
                                " is larger than the file (" + std::to_string(file_size) +
                                " bytes)");
  if (header_len > kMaxHeaderBytes)
    return file_error(path, "header length " + std::to_string(header_len) +
                                " is larger than the format allows (" +
                                std::to_string(kMaxHeaderBytes) + " bytes)");
  std::string header_text(size_t(header_len), '\0');
  st = in.read_exact(header_text.data(), header_text.size(), "the header");
  if (!st.ok()) return st;
  Result<JsonValue> parsed = parse_json(header_text);
  if (!parsed.ok()) return file_error(path, "header: " + parsed.status().message());
  const JsonValue& header = parsed.value();
  if (header.kind != JsonValue::Object) return file_error(path, "header is not a JSON object");

  // A pipe's data area is what its tensors cover (and nothing may follow it).
  const uint64_t kUnknown = std::numeric_limits<uint64_t>::max();
  uint64_t data_size = file_size >= 0 ? uint64_t(file_size) - 8 - header_len : kUnknown;
  struct Range {
    uint64_t begin, end;
    size_t tensor;
  };
  std::vector<Range> ranges;
  std::vector<NamedTensor> out;
  std::vector<bool> is_f64;
  for (size_t k = 0; k < header.keys.size(); k++) {
    const std::string& name = header.keys[k];
    const JsonValue& entry = header.items[k];
    if (name == "__metadata__") {
      if (entry.kind != JsonValue::Object)
        return file_error(path, "__metadata__ is not a JSON object");
      continue;
    }
    // What save_safetensors refuses to write, load refuses too: a checkpoint names
    // each tensor (the fuzzer found an empty name loaded, then refused on saving).
    if (name.empty()) return file_error(path, "a tensor has an empty name");
    std::string where = "tensor " + quoted(name) + ": ";
    if (entry.kind != JsonValue::Object) return file_error(path, where + "entry is not an object");
    for (const std::string& field : entry.keys)
      if (field != "dtype" && field != "shape" && field != "data_offsets")
        return file_error(path, where + "unexpected field " + quoted(field));
    const JsonValue* dtype = entry.find("dtype");
    const JsonValue* shape = entry.find("shape");
    const JsonValue* offsets = entry.find("data_offsets");
    if (!dtype || !shape || !offsets)
      return file_error(path, where + "needs the fields dtype, shape and data_offsets");
    if (dtype->kind != JsonValue::String)
      return file_error(path, where + "dtype is not a string");
    if (dtype->text != "F32" && dtype->text != "F64")
      return file_error(path, where + "unsupported dtype " + quoted(dtype->text) +
                                  " (only F32 and F64)");
    NamedTensor t;
    t.name = name;
    if (shape->kind != JsonValue::Array)
      return file_error(path, where + "shape is not an array");
    for (const JsonValue& d : shape->items) {
      uint64_t v;
      if (!d.as_uint(&v)) return file_error(path, where + "shape holds a non-integer or negative entry");
      t.shape.push_back(int64_t(v));
    }
    int64_t numel = checked_numel(t.shape);
    if (numel < 0) return file_error(path, where + "shape " + shape_string(t.shape) + " is too large");
    uint64_t begin, end;
    if (offsets->kind != JsonValue::Array || offsets->items.size() != 2 ||
        !offsets->items[0].as_uint(&begin) || !offsets->items[1].as_uint(&end))
      return file_error(path, where + "data_offsets must be two non-negative integers [begin, end]");
    std::string range = "[" + std::to_string(begin) + "," + std::to_string(end) + "]";
    if (begin > end) return file_error(path, where + "data_offsets " + range + " are reversed");
    const uint64_t elem = dtype->text == "F64" ? 8 : 4;
    // Its bytes, checked: 2^61 F64 elements are 2^64 bytes, which wrapped to 0 and
    // matched an empty range (a tensor of that shape loaded holding nothing).
    uint64_t bytes;
    if (__builtin_mul_overflow(uint64_t(numel), elem, &bytes))
      return file_error(path, where + "shape " + shape_string(t.shape) + " is too large");
    if (end - begin != bytes)
      return file_error(path, where + "shape " + shape_string(t.shape) + " as " + dtype->text +
                                  " needs " + std::to_string(bytes) + " bytes but data_offsets " +
                                  range + " span " + std::to_string(end - begin));
    if (begin > data_size)
      return file_error(path, where + "data_offsets " + range + " lie outside the data area (" +
                                  std::to_string(data_size) + " bytes)");
    if (end > data_size)
      return file_error(path, "truncated data: tensor " + quoted(name) + " ends at byte " +
                                  std::to_string(end) + " but the data area holds " +
                                  std::to_string(data_size) + " bytes");
    ranges.push_back({begin, end, out.size()});
    out.push_back(std::move(t));
    is_f64.push_back(elem == 8);
  }

  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (size_t i = 0; i + 1 < ranges.size(); i++) {
    // Empty tensors occupy no bytes and overlap nothing.
    for (size_t j = i + 1; j < ranges.size() && ranges[j].begin < ranges[i].end; j++) {
      if (ranges[j].begin == ranges[j].end) continue;
      return file_error(path, "tensors " + quoted(out[ranges[i].tensor].name) + " and " +
                                  quoted(out[ranges[j].tensor].name) +
                                  " overlap in the data area");
    }
  }

  // The data area is indexed whole, without holes (the format's rule): a header length
  // off by a byte, trailing bytes, or a hand-made file with a gap shows here, instead of
  // loading tensors shifted by the gap.
  uint64_t covered = 0;
  for (const Range& r : ranges) {
    if (r.begin == r.end) continue;
    if (r.begin != covered)
      return file_error(path, "bytes [" + std::to_string(covered) + "," +
                                  std::to_string(r.begin) +
                                  ") of the data area belong to no tensor (a wrong header "
                                  "length, or not a safetensors file)");
    covered = r.end;
  }
  if (data_size == kUnknown) data_size = covered;
  if (covered != data_size)
    return file_error(path, "the data area holds " + std::to_string(data_size) +
                                " bytes but its tensors cover " + std::to_string(covered) +
                                " (a wrong header length, or trailing bytes)");

  // Held as float64: refused before reading when that cannot fit.
  uint64_t elements = 0;
  for (const Range& r : ranges) elements += (r.end - r.begin) / (is_f64[r.tensor] ? 8 : 4);
  std::string source;
  Result<uint64_t> available = host_memory_available(&source);
  if (available.ok() && mul_bytes(elements, sizeof(double)) > available.value())
    return file_error(path, "its " + std::to_string(elements) + " elements need " +
                                format_bytes(mul_bytes(elements, sizeof(double))) +
                                " as float64, more than the " +
                                format_bytes(available.value()) + " available (" + source + ")");

  // The tensors tile the data area in order: read one after another, a chunk at a time.
  std::vector<char> chunk(size_t(1) << 16);
  for (const Range& r : ranges) {
    NamedTensor& t = out[r.tensor];
    const uint64_t elem = is_f64[r.tensor] ? 8 : 4;
    const uint64_t n = (r.end - r.begin) / elem;
    t.data.resize(size_t(n));
    for (uint64_t first = 0; first < n;) {
      const uint64_t count = std::min<uint64_t>(chunk.size() / elem, n - first);
      st = in.read_exact(chunk.data(), size_t(count * elem), "tensor " + quoted(t.name));
      if (!st.ok()) return st;
      for (uint64_t i = 0; i < count; i++) {
        if (elem == 8) {
          std::memcpy(&t.data[first + i], chunk.data() + 8 * i, 8);
        } else {
          float f;
          std::memcpy(&f, chunk.data() + 4 * i, 4);
          t.data[first + i] = f;
        }
      }
      first += count;
    }
  }
  if (file_size < 0) {  // a pipe: nothing may follow the data area
    char extra;
    Result<size_t> more = in.read_some(&extra, 1);
    if (!more.ok()) return more.status();
    if (more.value() != 0)
      return file_error(path, "bytes after the data area (a wrong header length, or trailing "
                              "bytes)");
  }
  return out;
}

Status check_finite_params(const std::string& path, const std::vector<NamedTensor>& tensors) {
  for (const NamedTensor& t : tensors)
    for (size_t i = 0; i < t.data.size(); i++)
      if (!std::isfinite(t.data[i])) {
        char value[32];
        std::snprintf(value, sizeof value, "%g", t.data[i]);
        return file_error(path, "tensor " + quoted(t.name) + " holds " + value + " at index " +
                                    std::to_string(i) + index_text(t.shape, i) +
                                    ": parameters must be finite");
      }
  return Status::Ok();
}

Status check_params(const std::vector<NamedTensor>& loaded,
                    const std::vector<std::pair<std::string, std::vector<int64_t>>>& expected) {
  // By name, hashed: a checkpoint of a million tensors is matched in linear time.
  std::unordered_map<std::string, const NamedTensor*> by_name;
  for (const NamedTensor& t : loaded) by_name.emplace(t.name, &t);
  std::unordered_set<std::string> expected_names;
  std::vector<std::string> problems;
  for (const auto& entry : expected) {
    const std::string& name = entry.first;
    const std::vector<int64_t>& shape = entry.second;
    expected_names.insert(name);
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      problems.push_back("missing parameter '" + name + "' (expected shape " +
                         shape_string(shape) + ")");
    } else if (it->second->shape != shape) {
      problems.push_back("parameter '" + name + "' has shape " +
                         shape_string(it->second->shape) + ", the model expects " +
                         shape_string(shape));
    }
  }
  for (const NamedTensor& t : loaded)
    if (expected_names.count(t.name) == 0)
      problems.push_back("unexpected parameter " + quoted(t.name));
  if (problems.empty()) return Status::Ok();
  std::string msg = "parameters do not match the model (" + std::to_string(problems.size()) +
                    (problems.size() == 1 ? " problem):" : " problems):");
  // A hostile checkpoint of a million names is not listed whole.
  constexpr size_t kListed = 20;
  for (size_t i = 0; i < problems.size() && i < kListed; i++) msg += "\n  " + problems[i];
  if (problems.size() > kListed)
    msg += "\n  ... and " + std::to_string(problems.size() - kListed) + " more";
  return Status::Error(msg);
}

}  // namespace vouch::rt
