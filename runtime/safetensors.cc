// safetensors.cc: safetensors writer, validating reader and parameter check
// (safetensors.h). The header is parsed with the runtime's own JSON reader (json.h).
#include "runtime/safetensors.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "runtime/json.h"

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

Status write_file(const std::string& tmp, const std::string& bytes) {
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr)
    return Status::Error("cannot create temporary file " + tmp + " (" + std::strerror(errno) + ")");
  const char* failed = nullptr;
  if (std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) failed = "write";
  else if (std::fflush(f) != 0) failed = "flush";
  else if (::fsync(fileno(f)) != 0) failed = "fsync";
  int err = errno;
  if (std::fclose(f) != 0 && failed == nullptr) {
    failed = "close";
    err = errno;
  }
  if (failed != nullptr) {
    std::remove(tmp.c_str());
    return Status::Error(std::string("cannot ") + failed + " temporary file " + tmp + " (" +
                         std::strerror(err) + ")");
  }
  return Status::Ok();
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
  for (size_t i = 0; i < tensors.size(); i++) {
    const NamedTensor& t = tensors[i];
    if (t.name.empty() || t.name == "__metadata__")
      return file_error(path, "invalid tensor name '" + t.name + "'");
    for (size_t j = 0; j < i; j++)
      if (tensors[j].name == t.name) return file_error(path, "duplicate tensor name '" + t.name + "'");
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

  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  Status st = write_file(tmp, bytes);
  if (!st.ok()) return file_error(path, st.message());
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    std::remove(tmp.c_str());
    return file_error(path, std::string("cannot rename ") + tmp + " into place (" +
                                std::strerror(e) + ")");
  }
  return Status::Ok();
}

Result<std::vector<NamedTensor>> load_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return file_error(path, std::string("cannot open file (") + std::strerror(errno) + ")");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return file_error(path, "read error");
  if (bytes.size() < 8)
    return file_error(path, "file is " + std::to_string(bytes.size()) +
                                " bytes, shorter than the 8-byte header length");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; i--) header_len = (header_len << 8) | uint8_t(bytes[i]);
  if (header_len > bytes.size() - 8)
    return file_error(path, "header length " + std::to_string(header_len) +
                                " is larger than the file (" + std::to_string(bytes.size()) +
                                " bytes)");
  Result<JsonValue> parsed = parse_json(std::string_view(bytes).substr(8, header_len));
  if (!parsed.ok()) return file_error(path, "header: " + parsed.status().message());
  const JsonValue& header = parsed.value();
  if (header.kind != JsonValue::Object) return file_error(path, "header is not a JSON object");

  const uint64_t data_size = bytes.size() - 8 - header_len;
  const char* data = bytes.data() + 8 + header_len;
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
    std::string where = "tensor '" + name + "': ";
    if (entry.kind != JsonValue::Object) return file_error(path, where + "entry is not an object");
    for (const std::string& field : entry.keys)
      if (field != "dtype" && field != "shape" && field != "data_offsets")
        return file_error(path, where + "unexpected field '" + field + "'");
    const JsonValue* dtype = entry.find("dtype");
    const JsonValue* shape = entry.find("shape");
    const JsonValue* offsets = entry.find("data_offsets");
    if (!dtype || !shape || !offsets)
      return file_error(path, where + "needs the fields dtype, shape and data_offsets");
    if (dtype->kind != JsonValue::String)
      return file_error(path, where + "dtype is not a string");
    if (dtype->text != "F32" && dtype->text != "F64")
      return file_error(path, where + "unsupported dtype '" + dtype->text + "' (only F32 and F64)");
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
    if (end - begin != uint64_t(numel) * elem)
      return file_error(path, where + "shape " + shape_string(t.shape) + " as " + dtype->text +
                                  " needs " + std::to_string(uint64_t(numel) * elem) +
                                  " bytes but data_offsets " + range + " span " +
                                  std::to_string(end - begin));
    if (begin > data_size)
      return file_error(path, where + "data_offsets " + range + " lie outside the data area (" +
                                  std::to_string(data_size) + " bytes)");
    if (end > data_size)
      return file_error(path, "truncated data: tensor '" + name + "' ends at byte " +
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
      return file_error(path, "tensors '" + out[ranges[i].tensor].name + "' and '" +
                                  out[ranges[j].tensor].name + "' overlap in the data area");
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
  if (covered != data_size)
    return file_error(path, "the data area holds " + std::to_string(data_size) +
                                " bytes but its tensors cover " + std::to_string(covered) +
                                " (a wrong header length, or trailing bytes)");

  for (const Range& r : ranges) {
    NamedTensor& t = out[r.tensor];
    const char* src = data + r.begin;
    uint64_t n = (r.end - r.begin) / (is_f64[r.tensor] ? 8 : 4);
    t.data.resize(n);
    for (uint64_t i = 0; i < n; i++) {
      if (is_f64[r.tensor]) {
        std::memcpy(&t.data[i], src + 8 * i, 8);
      } else {
        float f;
        std::memcpy(&f, src + 4 * i, 4);
        t.data[i] = f;
      }
    }
  }
  return out;
}

Status check_params(const std::vector<NamedTensor>& loaded,
                    const std::vector<std::pair<std::string, std::vector<int64_t>>>& expected) {
  std::vector<std::string> problems;
  for (const auto& [name, shape] : expected) {
    auto it = std::find_if(loaded.begin(), loaded.end(),
                           [&](const NamedTensor& t) { return t.name == name; });
    if (it == loaded.end()) {
      problems.push_back("missing parameter '" + name + "' (expected shape " +
                         shape_string(shape) + ")");
    } else if (it->shape != shape) {
      problems.push_back("parameter '" + name + "' has shape " + shape_string(it->shape) +
                         ", the model expects " + shape_string(shape));
    }
  }
  for (const NamedTensor& t : loaded) {
    bool known = std::any_of(expected.begin(), expected.end(),
                             [&](const auto& e) { return e.first == t.name; });
    if (!known) problems.push_back("unexpected parameter '" + t.name + "'");
  }
  if (problems.empty()) return Status::Ok();
  std::string msg = "parameters do not match the model (" + std::to_string(problems.size()) +
                    (problems.size() == 1 ? " problem):" : " problems):");
  for (const std::string& p : problems) msg += "\n  " + p;
  return Status::Error(msg);
}

}  // namespace vouch::rt
