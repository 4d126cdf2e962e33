// npy.cc: load_npy and save_npy (see npy.h). The header is a Python dict literal such as
//   {'descr': '<f8', 'fortran_order': False, 'shape': (25, 2), }
// parsed here by a small recursive reader that knows only what that dict can hold.
#include "runtime/npy.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/atomic_file.h"
#include "runtime/input_file.h"
#include "runtime/memory.h"
#include "runtime/quoted.h"

namespace vouch::rt {

static_assert(std::endian::native == std::endian::little,
              "npy.cc reads little-endian data with memcpy");

namespace {

// numpy writes headers of a few hundred bytes; version 2.0's 4-byte length could
// otherwise ask for 4 GiB before the shape is known.
constexpr uint32_t kMaxHeaderBytes = 1 << 20;

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
    if (!r.consume(':'))
      return npy_error(path, "malformed header: expected ':' after " + quoted(key));
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
      return npy_error(path, "malformed header: unexpected key " + quoted(key));
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
    return npy_error(path, "big-endian dtype " + quoted(h.descr) + " is not supported");
  return NpyHeader{h.descr, h.shape, header_start + header_len};
}

Result<NpyArray> load_npy(const std::string& path) {
  Result<InputFile> opened = InputFile::open(path);
  if (!opened.ok()) return opened.status();
  InputFile& in = opened.value();
  // The magic, the version and the header's length (2 bytes in 1.0, 4 in 2.0), then
  // the header: read first, so that nothing else is read before the shape is known.
  std::string head(10, '\0');
  Result<size_t> got = in.read_some(head.data(), head.size());
  if (!got.ok()) return got.status();
  size_t have_head = got.value();
  while (have_head < head.size()) {  // a pipe may deliver less
    got = in.read_some(head.data() + have_head, head.size() - have_head);
    if (!got.ok()) return got.status();
    if (got.value() == 0) break;
    have_head += got.value();
  }
  head.resize(have_head);
  if (head.size() < 10 || head.compare(0, 6, "\x93NUMPY", 6) != 0)
    return npy_error(path, "bad magic: not an NPY file");
  if (head[6] == 2) {
    head.resize(12);
    Status st = in.read_exact(head.data() + 10, 2, "the header length");
    if (!st.ok()) return st;
  }
  const uint32_t header_len =
      head.size() == 12 ? read_le(head, 8, 4) : read_le(head, 8, 2);
  if ((head[6] == 1 || head[6] == 2) && head[7] == 0) {
    if (header_len > kMaxHeaderBytes)
      return npy_error(path, "header length " + std::to_string(header_len) +
                                 " is larger than an NPY header (" +
                                 std::to_string(kMaxHeaderBytes) + " bytes at most here)");
    if (in.size() >= 0 && uint64_t(in.size()) < head.size() + uint64_t(header_len))
      return npy_error(path, "truncated header: header length " + std::to_string(header_len) +
                                 " exceeds the file");
    head.resize(head.size() + header_len);
    Status st = in.read_exact(head.data() + head.size() - header_len, header_len, "the header");
    if (!st.ok()) return npy_error(path, "truncated header: header length " +
                                             std::to_string(header_len) + " exceeds the file");
  }
  Result<NpyHeader> parsed = parse_npy_header(path, head.data(), head.size());
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
    return npy_error(path, "unsupported dtype " + quoted(h.descr) +
                               " (only <f4, <f8, <i4, <i8, |u1, |b1)");
  }

  // The extents other than 0 must multiply within int64 too, as numpy requires:
  // (0, 2^62, 2^62) holds no element, but its rows' length overflows wherever it is
  // computed (the data loaders' elements per row).
  int64_t numel = 1, nonzero = 1;
  for (int64_t d : h.shape) {
    if (d != 0 && nonzero > std::numeric_limits<int64_t>::max() / int64_t(elem) / d)
      return npy_error(path, "shape too large");
    if (d != 0) nonzero *= d;
    numel *= d;
  }
  const uint64_t need = uint64_t(numel) * elem;
  if (in.size() >= 0) {  // a regular file: its size says it all before any data is read
    const uint64_t have = uint64_t(in.size()) - h.data_offset;
    if (have < need)
      return npy_error(path, "truncated data: shape needs " + std::to_string(need) +
                                 " bytes, file has " + std::to_string(have));
    if (have > need)
      return npy_error(path, std::to_string(have - need) + " unexpected bytes after the data");
  }
  // Held as float64: refused before reading when that cannot fit.
  std::string source;
  Result<uint64_t> available = host_memory_available(&source);
  if (available.ok() && mul_bytes(uint64_t(numel), sizeof(double)) > available.value())
    return npy_error(path, "its " + std::to_string(numel) + " elements need " +
                               format_bytes(mul_bytes(uint64_t(numel), sizeof(double))) +
                               " as float64, more than the " + format_bytes(available.value()) +
                               " available (" + source + ")");

  NpyArray out;
  out.shape = h.shape;
  out.data.resize(size_t(numel));
  // The data a chunk at a time, each element converted as it arrives.
  std::vector<char> chunk(size_t(1) << 16);
  const size_t per_chunk = chunk.size() / elem;
  for (int64_t first = 0; first < numel; first += int64_t(per_chunk)) {
    const int64_t n = std::min<int64_t>(int64_t(per_chunk), numel - first);
    Status st = in.read_exact(chunk.data(), size_t(n) * elem, "the data");
    if (!st.ok())
      return npy_error(path, "truncated data: shape needs " + std::to_string(need) +
                                 " bytes, file has " +
                                 std::to_string(in.offset() - h.data_offset));
    double* dst = out.data.data() + first;
    if (h.descr == "<f4") convert<float>(chunk.data(), n, dst);
    if (h.descr == "<f8") convert<double>(chunk.data(), n, dst);
    if (h.descr == "<i4") convert<int32_t>(chunk.data(), n, dst);
    if (h.descr == "<i8") convert<int64_t>(chunk.data(), n, dst);
    if (h.descr == "|u1" || h.descr == "|b1") convert<uint8_t>(chunk.data(), n, dst);
  }
  if (in.size() < 0) {  // a pipe: nothing may follow the data
    char extra;
    Result<size_t> more = in.read_some(&extra, 1);
    if (!more.ok()) return more.status();
    if (more.value() != 0) return npy_error(path, "unexpected bytes after the data");
  }
  return out;
}

Status save_npy(const std::string& path, const std::vector<int64_t>& shape,
                const std::vector<double>& data, bool as_f64) {
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
  Status written = replace_file(path, bytes);
  return written;
}

}  // namespace vouch::rt
