// npy.cc: load_npy and save_npy (see npy.h). The header is a Python dict literal such as
//   {'descr': '<f8', 'fortran_order': False, 'shape': (25, 2), }
// parsed here by a small recursive reader that knows only what that dict can hold.
#include "runtime/npy.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

namespace vouch::rt {

static_assert(std::endian::native == std::endian::little,
              "npy.cc reads little-endian data with memcpy");

namespace {

Status npy_error(const std::string& path, const std::string& reason) {
  return Status::Error(path + ": " + reason);
}

// Reader over the header dict. Values are strings, True/False, or tuples of integers.
struct HeaderReader {
  const std::string& text;
  size_t pos = 0;
  std::string error;

  void skip_space() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n'))
      pos++;
  }
  bool consume(char c) {
    skip_space();
    if (pos < text.size() && text[pos] == c) {
      pos++;
      return true;
    }
    return false;
  }
  bool fail(const std::string& why) {
    if (error.empty()) error = why + " at header byte " + std::to_string(pos);
    return false;
  }
  bool read_string(std::string* out) {
    skip_space();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return fail("expected a quoted string");
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string::npos) return fail("unterminated string");
    *out = text.substr(pos, end - pos);
    pos = end + 1;
    return true;
  }
  bool read_bool(bool* out) {
    skip_space();
    if (text.compare(pos, 4, "True") == 0) {
      pos += 4;
      *out = true;
      return true;
    }
    if (text.compare(pos, 5, "False") == 0) {
      pos += 5;
      *out = false;
      return true;
    }
    return fail("expected True or False");
  }
  bool read_shape(std::vector<int64_t>* out) {
    if (!consume('(')) return fail("expected a shape tuple");
    out->clear();
    while (true) {
      if (consume(')')) return true;
      skip_space();
      if (pos >= text.size() || text[pos] < '0' || text[pos] > '9')
        return fail("expected a non-negative integer in the shape");
      int64_t v = 0;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) return fail("shape too large");
        v = v * 10 + (text[pos++] - '0');
      }
      if (pos < text.size() && text[pos] == 'L') pos++;  // Python 2 longs
      out->push_back(v);
      if (!consume(',')) {
        if (consume(')')) return true;
        return fail("expected ',' or ')' in the shape");
      }
    }
  }
};

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

Status parse_header(const std::string& path, const std::string& text, Header* h) {
  HeaderReader r{text, 0, {}};
  bool have_descr = false, have_order = false, have_shape = false;
  if (!r.consume('{')) return npy_error(path, "malformed header: expected '{'");
  while (!r.consume('}')) {
    std::string key;
    if (!r.read_string(&key)) return npy_error(path, "malformed header: " + r.error);
    if (!r.consume(':')) return npy_error(path, "malformed header: expected ':' after '" + key + "'");
    bool ok = true;
    if (key == "descr") {
      r.skip_space();
      if (r.pos < text.size() && text[r.pos] == '[')
        return npy_error(path, "structured dtypes are not supported");
      ok = r.read_string(&h->descr);
      have_descr = true;
    } else if (key == "fortran_order") {
      ok = r.read_bool(&h->fortran_order);
      have_order = true;
    } else if (key == "shape") {
      ok = r.read_shape(&h->shape);
      have_shape = true;
    } else {
      return npy_error(path, "malformed header: unexpected key '" + key + "'");
    }
    if (!ok) return npy_error(path, "malformed header: " + r.error);
    if (!r.consume(',')) {
      if (r.consume('}')) break;
      return npy_error(path, "malformed header: expected ',' or '}'");
    }
  }
  if (!have_descr || !have_order || !have_shape)
    return npy_error(path, "malformed header: needs the keys descr, fortran_order and shape");
  return Status::Ok();
}

uint32_t read_le(const std::string& bytes, size_t at, int width) {
  uint32_t v = 0;
  for (int i = width - 1; i >= 0; i--) v = (v << 8) | uint8_t(bytes[at + i]);
  return v;
}

template <class S>
void convert(const char* src, int64_t n, double* dst) {
  for (int64_t i = 0; i < n; i++) {
    S v;
    std::memcpy(&v, src + i * sizeof(S), sizeof(S));
    dst[i] = static_cast<double>(v);
  }
}

}  // namespace

Result<NpyHeader> parse_npy_header(const std::string& path, const char* data, size_t size) {
  const std::string bytes(data, std::min<size_t>(size, 12));
  static const char kMagic[] = "\x93NUMPY";
  if (size < 10 || bytes.compare(0, 6, kMagic, 6) != 0)
    return npy_error(path, "bad magic: not an NPY file");
  int major = uint8_t(bytes[6]), minor = uint8_t(bytes[7]);
  size_t header_start;
  uint32_t header_len;
  if (major == 1 && minor == 0) {
    header_start = 10;
    header_len = read_le(bytes, 8, 2);
  } else if (major == 2 && minor == 0) {
    if (size < 12) return npy_error(path, "truncated header");
    header_start = 12;
    header_len = read_le(bytes, 8, 4);
  } else {
    return npy_error(path, "unsupported NPY version " + std::to_string(major) + "." +
                               std::to_string(minor) + " (only 1.0 and 2.0)");
  }
  if (header_start + header_len > size)
    return npy_error(path, "truncated header: header length " + std::to_string(header_len) +
                               " exceeds the file");

  Header h;
  Status st = parse_header(path, std::string(data + header_start, header_len), &h);
  if (!st.ok()) return st;

  if (h.fortran_order)
    return npy_error(path, "fortran_order arrays are not supported (save a C-contiguous array)");
  if (h.descr.size() >= 1 && h.descr[0] == '>')
    return npy_error(path, "big-endian dtype '" + h.descr + "' is not supported");
  return NpyHeader{h.descr, h.shape, header_start + header_len};
}

Result<NpyArray> load_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return npy_error(path, std::string("cannot open file (") + std::strerror(errno) + ")");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return npy_error(path, "read error");

  Result<NpyHeader> parsed = parse_npy_header(path, bytes.data(), bytes.size());
  if (!parsed.ok()) return parsed.status();
  const NpyHeader& h = parsed.value();
  size_t elem;
  if (h.descr == "|u1" || h.descr == "|b1") {  // |b1: numpy bool, one byte 0 or 1
    elem = 1;
  } else if (h.descr == "<f4" || h.descr == "<i4") {
    elem = 4;
  } else if (h.descr == "<f8" || h.descr == "<i8") {
    elem = 8;
  } else {
    return npy_error(path, "unsupported dtype '" + h.descr + "' (only <f4, <f8, <i4, <i8, |u1, |b1)");
  }

  int64_t numel = 1;
  for (int64_t d : h.shape) {
    if (d != 0 && numel > std::numeric_limits<int64_t>::max() / int64_t(elem) / d)
      return npy_error(path, "shape too large");
    numel *= d;
  }
  size_t data_start = h.data_offset;
  uint64_t need = uint64_t(numel) * elem;
  uint64_t have = bytes.size() - data_start;
  if (have < need)
    return npy_error(path, "truncated data: shape needs " + std::to_string(need) +
                               " bytes, file has " + std::to_string(have));
  if (have > need)
    return npy_error(path, std::to_string(have - need) + " unexpected bytes after the data");

  NpyArray out;
  out.shape = h.shape;
  out.data.resize(numel);
  const char* src = bytes.data() + data_start;
  if (h.descr == "<f4") convert<float>(src, numel, out.data.data());
  if (h.descr == "<f8") convert<double>(src, numel, out.data.data());
  if (h.descr == "<i4") convert<int32_t>(src, numel, out.data.data());
  if (h.descr == "<i8") convert<int64_t>(src, numel, out.data.data());
  if (h.descr == "|u1" || h.descr == "|b1") convert<uint8_t>(src, numel, out.data.data());
  return out;
}

Status save_npy(const std::string& path, const std::vector<int64_t>& shape,
                const std::vector<double>& data, bool as_f64) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return npy_error(path, "exists and is not a regular file; refusing to replace it");
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  if (numel != int64_t(data.size()))
    return npy_error(path, "shape holds " + std::to_string(numel) + " elements, data " +
                               std::to_string(data.size()));
  std::string dims;  // numpy's tuple: "3," for one axis, "3, 4" for two
  for (size_t i = 0; i < shape.size(); i++) dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  std::string header = std::string("{'descr': '") + (as_f64 ? "<f8" : "<f4") +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded to 64 bytes.
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header.push_back('\n');
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes.push_back(char(header.size() & 0xFF));
  bytes.push_back(char(header.size() >> 8));
  bytes += header;
  for (double v : data) {
    char buf[8];
    if (as_f64) {
      std::memcpy(buf, &v, 8);
    } else {
      const float f = float(v);
      std::memcpy(buf, &f, 4);
    }
    bytes.append(buf, as_f64 ? 8 : 4);
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return npy_error(path, "cannot write " + tmp + " (" + std::strerror(errno) + ")");
    out.write(bytes.data(), std::streamsize(bytes.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return npy_error(path, "write error on " + tmp);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    return npy_error(path, "cannot rename " + tmp + " into place (" + std::strerror(e) + ")");
  }
  return Status::Ok();
}

}  // namespace vouch::rt
