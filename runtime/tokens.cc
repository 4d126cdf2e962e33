// tokens.cc: see tokens.h.
#include "runtime/tokens.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

#include "runtime/cuda/kernels/token_windows.h"
#include "runtime/npy.h"

namespace vouch::rt {

static_assert(std::endian::native == std::endian::little,
              "tokens.cc reads little-endian tokens in place");

namespace {

constexpr int64_t kHeaderInts = 256;
constexpr int32_t kMagicU16 = 20240520, kVersionU16 = 1;  // llm.c, GPT-2 tokens
constexpr int32_t kMagicU32 = 20240801, kVersionU32 = 7;  // llm.c, LLaMA 3 tokens

Status error(const std::string& path, const std::string& reason) {
  return Status::Error(path + ": " + reason);
}

}  // namespace

TokenFile::~TokenFile() {
  if (map_ != nullptr) munmap(map_, map_bytes_);
}

int64_t TokenFile::at(int64_t i) const {
  const auto* p = static_cast<const unsigned char*>(tokens_);
  if (token_bytes_ == 2) {
    uint16_t v;
    std::memcpy(&v, p + 2 * i, 2);
    return v;
  }
  if (uint32_) {
    uint32_t v;
    std::memcpy(&v, p + 4 * i, 4);
    return v;
  }
  int32_t v;
  std::memcpy(&v, p + 4 * i, 4);
  return v;
}

Result<std::shared_ptr<TokenFile>> TokenFile::open(const std::string& path) {
  std::shared_ptr<TokenFile> f(new TokenFile());
  f->path_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return error(path, std::string("cannot open file (") + std::strerror(errno) + ")");
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    // Mapped, so a file of its own: a directory is named as one (as InputFile
    // does), a pipe or device as what it is not.
    return error(path, S_ISDIR(st.st_mode) ? "is a directory, not a file"
                                           : "not a regular file (a token stream is mapped)");
  }
  const size_t size = size_t(st.st_size);
  if (size == 0) {
    ::close(fd);
    return error(path, "empty file: no header, no tokens");
  }
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  const int map_errno = errno;
  ::close(fd);  // the mapping keeps the file
  if (map == MAP_FAILED)
    return error(path, std::string("cannot map the file (") + std::strerror(map_errno) + ")");
  f->map_ = map;
  f->map_bytes_ = size;
  const char* bytes = static_cast<const char*>(map);

  if (size >= 6 && std::memcmp(bytes, "\x93NUMPY", 6) == 0) {
    Result<NpyHeader> h = parse_npy_header(path, bytes, size);
    if (!h.ok()) return h.status();
    const NpyHeader& header = h.value();
    if (header.descr != "<u2" && header.descr != "<i4")
      return error(path, "a token .npy holds <u2 (uint16) or <i4 (int32) ids, got dtype '" +
                             header.descr + "'");
    if (header.shape.size() != 1) {
      std::string shape;
      for (int64_t d : header.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
      return error(path, "a token .npy is 1-D (the stream of ids), got shape (" + shape + ")");
    }
    f->token_bytes_ = header.descr == "<u2" ? 2 : 4;
    f->count_ = header.shape[0];
    const uint64_t need = uint64_t(f->count_) * uint64_t(f->token_bytes_);
    const uint64_t have = size - header.data_offset;
    if (have != need)
      return error(path, (have < need ? "truncated data: " : "size mismatch: ") +
                             std::to_string(f->count_) + " tokens need " + std::to_string(need) +
                             " bytes after the header, the file has " + std::to_string(have));
    f->tokens_ = bytes + header.data_offset;
    f->format_ = "npy " + header.descr;
    return f;
  }

  if (size < size_t(kHeaderInts * 4))
    return error(path, "truncated: " + std::to_string(size) +
                           " bytes, less than llm.c's header of 256 int32 (1024 bytes)");
  int32_t header[3];
  std::memcpy(header, bytes, sizeof header);
  if (header[0] == kMagicU16) {
    if (header[1] != kVersionU16)
      return error(path, "llm.c magic 20240520 (uint16 tokens) needs version 1, got " +
                             std::to_string(header[1]));
    f->token_bytes_ = 2;
  } else if (header[0] == kMagicU32) {
    if (header[1] != kVersionU32)
      return error(path, "llm.c magic 20240801 (uint32 tokens) needs version 7, got " +
                             std::to_string(header[1]));
    f->token_bytes_ = 4;
    f->uint32_ = true;
  } else {
    return error(path, "bad magic " + std::to_string(header[0]) +
                           ": neither an .npy nor an llm.c token shard (magic 20240520 or "
                           "20240801)");
  }
  if (header[2] < 0)
    return error(path, "the header claims " + std::to_string(header[2]) + " tokens");
  f->count_ = header[2];
  const uint64_t expected = uint64_t(kHeaderInts * 4) + uint64_t(f->count_) * f->token_bytes_;
  if (uint64_t(size) != expected)
    return error(path, "file size mismatch: the header claims " + std::to_string(f->count_) +
                           " tokens of " + std::to_string(f->token_bytes_) + " bytes, " +
                           std::to_string(expected) + " bytes with the header, but the file has " +
                           std::to_string(size) + " bytes");
  f->tokens_ = bytes + kHeaderInts * 4;
  f->format_ = std::string("llm.c shard, magic ") + std::to_string(header[0]) +
               (f->token_bytes_ == 2 ? " (uint16 tokens)" : " (uint32 tokens)");
  return f;
}

Result<int64_t> token_context(const ModelDescription& m) {
  const std::vector<FieldInfo>& fields = m.fields;
  std::string got;
  for (const FieldInfo& f : fields)
    got += (got.empty() ? "" : ", ") + std::string(f.target ? "target '" : "input '") + f.name +
           "' " + (f.dtype == DType::I32 ? "i32" : "real") + " of " +
           std::to_string(f.row_elems) + " per row";
  const bool ok = fields.size() == 2 && !fields[0].target && fields[1].target &&
                  fields[0].dtype == DType::I32 && fields[1].dtype == DType::I32 &&
                  fields[0].row_elems == fields[1].row_elems && fields[0].row_elems >= 1;
  if (!ok)
    return Status::Error("model `" + m.name +
                         "`: a token stream feeds exactly one input and one target, both "
                         "i32[batch, T]; this model has " +
                         (got.empty() ? std::string("none") : got));
  return fields[0].row_elems;
}

int64_t token_window_count(int64_t count, int64_t context) { return (count - 1) / context; }

Status check_token_ids(const TokenFile& file, const ModelDescription& m, int64_t context) {
  if (file.count() < context + 1)
    return error(file.path(), std::to_string(file.count()) + " tokens, fewer than one window of " +
                                  std::to_string(context + 1) + " (the context " +
                                  std::to_string(context) + " and the next token)");
  const FieldInfo& in = m.fields[0];
  const FieldInfo& out = m.fields[1];
  const int64_t lo = std::max<int64_t>({in.min_value, out.min_value, INT32_MIN});
  const int64_t hi = std::min<int64_t>({in.max_value, out.max_value, INT32_MAX});
  for (int64_t i = 0; i < file.count(); i++) {
    const int64_t v = file.at(i);
    if (v >= lo && v <= hi) continue;
    // The field whose rule the token breaks (the input's first).
    std::string why;
    for (const FieldInfo* f : {&in, &out}) {
      if (v >= f->min_value && v <= f->max_value) continue;
      why = "field '" + f->name + "' is " +
            (f->use.empty() ? std::string("i32") : f->use) + ": " +
            std::to_string(f->min_value) + ".." + std::to_string(f->max_value);
      break;
    }
    if (why.empty()) why = "not an int32";
    return error(file.path(), "token " + std::to_string(i) + " is " + std::to_string(v) +
                                  ", not an id the model accepts: " + why);
  }
  return Status::Ok();
}

void fill_token_batch(const TokenFile& file, int64_t context, int64_t step, int64_t batch,
                      int64_t rows, bool random, uint64_t seed, int32_t* input,
                      int32_t* target) {
  for (int64_t r = 0; r < rows; r++) {
    const int64_t start = vouch::token_window_start(step, r, batch, file.count(), context,
                                                    random, seed);
    for (int64_t t = 0; t < context; t++) {
      input[r * context + t] = int32_t(file.at(start + t));
      target[r * context + t] = int32_t(file.at(start + t + 1));
    }
  }
}

TokenStream token_stream(const std::shared_ptr<TokenFile>& file, int64_t context, bool random) {
  TokenStream s;
  s.keep = file;
  s.tokens = file->tokens();
  s.count = file->count();
  s.token_bytes = file->token_bytes();
  s.context = context;
  s.random = random;
  s.mapping = file->mapping();
  s.mapping_bytes = file->mapping_bytes();
  return s;
}

}  // namespace vouch::rt
