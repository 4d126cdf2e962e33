// model_tables.cc: the Program blob's writer and reader, side by side field for field
// (model_tables.h gives the format).
#include "runtime/model_tables.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "runtime/executor.h"

namespace vouch::rt {
namespace {

uint64_t fnv1a64(const unsigned char* data, size_t size) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < size; i++) {
    h ^= data[i];
    h *= 1099511628211ull;
  }
  return h;
}

void put_fixed(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

uint64_t get_fixed(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

class ProgramTablesWriter {
 public:
  void u(uint64_t v) {
    while (v >= 0x80) {
      body_ += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    body_ += static_cast<char>(v);
  }
  void s(int64_t v) {
    u((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
  }
  void real(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    u(bits);
  }
  void str(const char* p) {
    if (!p) return u(0);
    auto [it, added] = index_.try_emplace(p, static_cast<uint32_t>(strings_.size()));
    if (added) strings_.push_back(p);
    u(it->second + 1);
  }
  template <class T>
  void ints(const T* v, int32_t n) {
    u(static_cast<uint64_t>(n));
    for (int32_t i = 0; i < n; i++) s(v[i]);
  }
  void strs(const char* const* v, int32_t n) {
    u(static_cast<uint64_t>(n));
    for (int32_t i = 0; i < n; i++) str(v[i]);
  }

  // The strings, then the body: the payload.
  std::string payload() {
    std::string body = std::move(body_);
    body_.clear();
    u(strings_.size());
    for (const std::string& text : strings_) {
      u(text.size());
      body_ += text;
    }
    return body_ + body;
  }

 private:
  std::string body_;
  std::vector<std::string> strings_;
  std::unordered_map<std::string, uint32_t> index_;
};

}  // namespace

// Reads the payload, refusing anything that does not read back; `error_` keeps the
// first reason (the field and its byte offset).
class ProgramTablesReader {
 public:
  ProgramTablesReader(const unsigned char* data, size_t size) : begin_(data), p_(data), end_(data + size) {}

  Status read(ProgramTables& t);

 private:
  bool fail(const std::string& what) {
    if (error_.empty())
      error_ = what + " (at payload byte " + std::to_string(p_ - begin_) + ")";
    return false;
  }
  bool u(uint64_t& v, const char* what) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return fail(std::string(what) + ": the blob ends inside a number");
      unsigned char byte = *p_++;
      if (shift == 63 && (byte & 0x7e)) return fail(std::string(what) + ": a number overflows 64 bits");
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return true;
    }
    return fail(std::string(what) + ": a number longer than 10 bytes");
  }
  bool s(int64_t& v, const char* what) {
    uint64_t z;
    if (!u(z, what)) return false;
    v = static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
    return true;
  }
  template <class T>
  bool in_range(T& out, int64_t v, const char* what) {
    if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
        v > static_cast<int64_t>(std::numeric_limits<T>::max()))
      return fail(std::string(what) + ": " + std::to_string(v) + " is out of range");
    out = static_cast<T>(v);
    return true;
  }
  bool i32(int32_t& out, const char* what) {
    int64_t v;
    return s(v, what) && in_range(out, v, what);
  }
  bool u32(uint32_t& out, const char* what) {
    uint64_t v;
    if (!u(v, what)) return false;
    if (v > std::numeric_limits<uint32_t>::max())
      return fail(std::string(what) + ": " + std::to_string(v) + " is out of range");
    out = static_cast<uint32_t>(v);
    return true;
  }
  bool flag(bool& out, const char* what) {
    uint64_t v;
    if (!u(v, what)) return false;
    if (v > 1) return fail(std::string(what) + ": " + std::to_string(v) + " is not 0 or 1");
    out = v == 1;
    return true;
  }
  bool real(double& out, const char* what) {
    uint64_t bits;
    if (!u(bits, what)) return false;
    std::memcpy(&out, &bits, sizeof out);
    return true;
  }
  // A count of entries of at least `min_bytes` bytes each: never more than the bytes
  // left could hold (so a corrupt count cannot make the reader allocate gigabytes).
  bool count(size_t& n, size_t min_bytes, const char* what) {
    uint64_t v;
    if (!u(v, what)) return false;
    if (v > static_cast<uint64_t>(end_ - p_) / min_bytes ||
        v > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
      return fail(std::string(what) + ": a count of " + std::to_string(v) +
                  ", more than the blob's remaining " + std::to_string(end_ - p_) +
                  " bytes hold");
    n = static_cast<size_t>(v);
    return true;
  }
  bool str(const char*& out, const char* what) {
    uint64_t v;
    if (!u(v, what)) return false;
    if (v > strings_->size())
      return fail(std::string(what) + ": string " + std::to_string(v) + " of " +
                  std::to_string(strings_->size()));
    out = (*strings_)[v];
    return true;
  }
  bool nonnull_str(const char*& out, const char* what) {
    if (!str(out, what)) return false;
    if (!out) return fail(std::string(what) + ": a null string where one is required");
    return true;
  }
  template <class T>
  bool int_table(std::vector<T>& v, const T*& ptr, int32_t* n, const char* what) {
    size_t size;
    if (!count(size, 1, what)) return false;
    v.resize(size);
    for (T& x : v)
      if (!i32(x, what)) return false;
    ptr = v.empty() ? nullptr : v.data();
    if (n) *n = static_cast<int32_t>(size);
    return true;
  }

  const unsigned char* begin_;
  const unsigned char* p_;
  const unsigned char* end_;
  const std::vector<const char*>* strings_ = nullptr;
  std::string error_;
};

std::string encode_program_tables(const Program& p) {
  ProgramTablesWriter w;
  w.str(p.name);
  w.u(static_cast<uint64_t>(p.num_buffers));
  for (int32_t i = 0; i < p.num_buffers; i++) {
    const BufferDesc& b = p.buffers[i];
    w.s(b.numel);
    w.s(b.alias_of);
    w.str(b.name);
    w.str(b.shape);
    w.u(static_cast<uint64_t>(b.dtype));
    w.u(b.zero_init);
  }
  w.ints(p.params, p.num_params);
  w.ints(p.grads, p.num_params);
  w.s(p.loss);
  w.s(p.output);
  w.u(static_cast<uint64_t>(p.num_steps));
  for (int32_t i = 0; i < p.num_steps; i++) {
    const StepDesc& s = p.steps[i];
    w.u(static_cast<uint64_t>(s.kind));
    w.s(s.kernel);
    w.s(s.first_arg);
    w.s(s.num_args);
    w.u(s.grid_x);
    w.u(s.block_x);
    w.u(s.block_y);
    w.u(s.trans_a);
    w.u(s.trans_b);
    for (int64_t v : {s.batch, s.m, s.n, s.k, s.stride_a, s.stride_b}) w.s(v);
    for (int32_t v : {s.a, s.b, s.c, s.bias}) w.s(v);
    w.str(s.what);
    w.str(s.capsule);
    w.u(s.shared_bytes);
    w.u(s.blocks_per_sm);
    w.u(s.shared_bytes_f64);
  }
  w.s(p.forward_end);
  w.s(p.prologue_begin);
  w.s(p.prologue_end);
  w.u(static_cast<uint64_t>(p.num_args));
  for (int32_t i = 0; i < p.num_args; i++) {
    const ArgDesc& a = p.args[i];
    w.u(static_cast<uint64_t>(a.kind));
    w.s(a.value);
    w.s(a.count);
    w.real(a.real);
  }
  w.u(static_cast<uint64_t>(p.num_ints));
  for (int32_t i = 0; i < p.num_ints; i++) w.s(p.ints[i]);
  w.u(static_cast<uint64_t>(p.num_nodes));
  for (int32_t i = 0; i < p.num_nodes; i++) {
    const NodeDesc& n = p.nodes[i];
    w.s(n.id);
    w.str(n.op);
    w.str(n.capsule);
    w.str(n.kernel);
    w.s(n.after_step);
    w.s(n.vjp_begin);
    w.s(n.vjp_end);
    w.strs(n.saved, n.num_saved);
    w.strs(n.state, n.num_state);
  }
  w.strs(p.kernel_names, p.num_kernels);
  w.str(p.schedule);
  w.str(p.batch_capsule);
  w.str(p.optimizer_capsule);
  w.ints(p.fields, p.num_fields);
  w.str(p.clip_capsule);
  w.ints(p.states, p.num_states);
  w.s(p.output_pitch);
  w.s(p.output_columns);

  std::string payload = w.payload();
  std::string blob(kProgramTablesMagic, sizeof kProgramTablesMagic);
  put_fixed(blob, kProgramTablesVersion, 4);
  put_fixed(blob, payload.size(), 8);
  put_fixed(blob, fnv1a64(reinterpret_cast<const unsigned char*>(payload.data()), payload.size()), 8);
  return blob + payload;
}

Status ProgramTablesReader::read(ProgramTables& t) {
  Program& p = t.program_;
  auto done = [&](bool ok) {
    return ok ? Status::Ok() : Status::Error(error_);
  };
  // The strings.
  size_t num_strings;
  if (!count(num_strings, 1, "strings")) return done(false);
  t.strings_.resize(num_strings);
  for (std::string& text : t.strings_) {
    size_t length;
    if (!count(length, 1, "a string's length")) return done(false);
    text.assign(reinterpret_cast<const char*>(p_), length);
    if (text.find('\0') != std::string::npos) return done(fail("a string holds a NUL byte"));
    p_ += length;
  }
  t.string_ptrs_.assign(1, nullptr);
  for (const std::string& text : t.strings_) t.string_ptrs_.push_back(text.c_str());
  strings_ = &t.string_ptrs_;

  if (!nonnull_str(p.name, "the program's name")) return done(false);
  size_t n;
  // Buffers: at least 6 bytes each (numel, alias, name, shape, dtype, zero_init).
  if (!count(n, 6, "buffers")) return done(false);
  t.buffers_.resize(n);
  for (BufferDesc& b : t.buffers_) {
    uint64_t dtype;
    if (!s(b.numel, "a buffer's elements") || !i32(b.alias_of, "a buffer's alias") ||
        !nonnull_str(b.name, "a buffer's name") || !str(b.shape, "a buffer's shape") ||
        !u(dtype, "a buffer's dtype") || !flag(b.zero_init, "a buffer's zero_init"))
      return done(false);
    if (dtype > static_cast<uint64_t>(DType::Bf16))
      return done(fail("a buffer's dtype: " + std::to_string(dtype) + " is not a DType"));
    b.dtype = static_cast<DType>(dtype);
  }
  p.buffers = t.buffers_.data();
  p.num_buffers = static_cast<int32_t>(n);
  int32_t num_grads;
  if (!int_table(t.params_, p.params, &p.num_params, "params") ||
      !int_table(t.grads_, p.grads, &num_grads, "grads"))
    return done(false);
  if (num_grads != p.num_params)
    return done(fail(std::to_string(num_grads) + " gradients for " +
                     std::to_string(p.num_params) + " params"));
  if (!i32(p.loss, "the loss buffer") || !i32(p.output, "the output buffer")) return done(false);
  // Steps: at least 25 bytes each.
  if (!count(n, 25, "steps")) return done(false);
  t.steps_.resize(n);
  for (StepDesc& st : t.steps_) {
    uint64_t kind;
    if (!u(kind, "a step's kind")) return done(false);
    if (kind > static_cast<uint64_t>(StepKind::LinearWeightGrad))
      return done(fail("a step's kind: " + std::to_string(kind) + " is not a StepKind"));
    st.kind = static_cast<StepKind>(kind);
    if (!i32(st.kernel, "a step's kernel") || !i32(st.first_arg, "a step's first argument") ||
        !i32(st.num_args, "a step's argument count") || !u32(st.grid_x, "a step's grid") ||
        !u32(st.block_x, "a step's block") || !u32(st.block_y, "a step's block") ||
        !flag(st.trans_a, "a step's trans_a") || !flag(st.trans_b, "a step's trans_b"))
      return done(false);
    for (int64_t* v : {&st.batch, &st.m, &st.n, &st.k, &st.stride_a, &st.stride_b})
      if (!s(*v, "a step's product extent")) return done(false);
    for (int32_t* v : {&st.a, &st.b, &st.c, &st.bias})
      if (!i32(*v, "a step's product operand")) return done(false);
    if (!nonnull_str(st.what, "what a step runs") || !str(st.capsule, "a step's capsule") ||
        !u32(st.shared_bytes, "a step's shared memory") ||
        !u32(st.blocks_per_sm, "a step's blocks per SM") ||
        !u32(st.shared_bytes_f64, "a step's f64 shared memory"))
      return done(false);
  }
  p.steps = t.steps_.data();
  p.num_steps = static_cast<int32_t>(n);
  if (!i32(p.forward_end, "the forward pass's end") ||
      !i32(p.prologue_begin, "the prologue's begin") || !i32(p.prologue_end, "the prologue's end"))
    return done(false);
  // Arguments: at least 4 bytes each.
  if (!count(n, 4, "arguments")) return done(false);
  t.args_.resize(n);
  for (ArgDesc& a : t.args_) {
    uint64_t kind;
    if (!u(kind, "an argument's kind")) return done(false);
    if (kind > ArgDesc::Context)
      return done(fail("an argument's kind: " + std::to_string(kind) + " is not an ArgDesc kind"));
    a.kind = static_cast<ArgDesc::Kind>(kind);
    if (!s(a.value, "an argument's value") || !i32(a.count, "an argument's count") ||
        !real(a.real, "an argument's real"))
      return done(false);
  }
  p.args = t.args_.data();
  p.num_args = static_cast<int32_t>(n);
  if (!count(n, 1, "ints")) return done(false);
  t.ints_.resize(n);
  for (int64_t& v : t.ints_)
    if (!s(v, "an int")) return done(false);
  p.ints = t.ints_.data();
  p.num_ints = static_cast<int32_t>(n);
  // Nodes: at least 9 bytes each. Their names go into names_, whose pointers are taken
  // once it is complete (it grows as it is read).
  if (!count(n, 9, "tape nodes")) return done(false);
  t.nodes_.resize(n);
  std::vector<std::pair<size_t, size_t>> saved_at(n), state_at(n);
  auto names = [&](std::pair<size_t, size_t>& at, const char* what) {
    size_t k;
    if (!count(k, 1, what)) return false;
    at = {t.names_.size(), k};
    for (size_t i = 0; i < k; i++) {
      const char* name;
      if (!nonnull_str(name, what)) return false;
      t.names_.push_back(name);
    }
    return true;
  };
  for (size_t i = 0; i < n; i++) {
    NodeDesc& node = t.nodes_[i];
    if (!i32(node.id, "a node's id") || !nonnull_str(node.op, "a node's op") ||
        !str(node.capsule, "a node's capsule") || !str(node.kernel, "a node's kernel") ||
        !i32(node.after_step, "a node's step") || !i32(node.vjp_begin, "a node's VJP begin") ||
        !i32(node.vjp_end, "a node's VJP end") || !names(saved_at[i], "a node's saved names") ||
        !names(state_at[i], "a node's state names"))
      return done(false);
  }
  std::pair<size_t, size_t> kernels_at;
  if (!names(kernels_at, "kernel names")) return done(false);
  // names_ is complete: every pointer into it is taken now. A node's `saved` points at
  // a valid (empty) spot even when it has none, as generated arrays did; `state` is
  // null then, as the Program says.
  t.names_.push_back(nullptr);
  for (size_t i = 0; i < n; i++) {
    NodeDesc& node = t.nodes_[i];
    node.saved = t.names_.data() + saved_at[i].first;
    node.num_saved = static_cast<int32_t>(saved_at[i].second);
    node.state = state_at[i].second ? t.names_.data() + state_at[i].first : nullptr;
    node.num_state = static_cast<int32_t>(state_at[i].second);
  }
  p.nodes = t.nodes_.data();
  p.num_nodes = static_cast<int32_t>(n);
  p.kernel_names = t.names_.data() + kernels_at.first;
  p.num_kernels = static_cast<int32_t>(kernels_at.second);
  if (!nonnull_str(p.schedule, "the schedule") || !str(p.batch_capsule, "the batch capsule") ||
      !str(p.optimizer_capsule, "the optimizer capsule") ||
      !int_table(t.fields_, p.fields, &p.num_fields, "data fields") ||
      !str(p.clip_capsule, "the clipping capsule") ||
      !int_table(t.states_, p.states, &p.num_states, "states") ||
      !s(p.output_pitch, "the output's row pitch") ||
      !s(p.output_columns, "the output's columns"))
    return done(false);
  if (p_ != end_)
    return done(fail(std::to_string(end_ - p_) + " bytes after the tables"));
  return Status::Ok();
}

Result<std::unique_ptr<ProgramTables>> decode_program_tables(const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  if (size < kProgramTablesHeaderBytes)
    return Status::Error("program tables: " + std::to_string(size) +
                         " bytes, fewer than the header's " +
                         std::to_string(kProgramTablesHeaderBytes));
  if (std::memcmp(bytes, kProgramTablesMagic, sizeof kProgramTablesMagic) != 0)
    return Status::Error("program tables: no VOUCHTBL header (not vouch program tables)");
  uint64_t version = get_fixed(bytes + 8, 4);
  if (version != kProgramTablesVersion)
    return Status::Error("program tables: version " + std::to_string(version) +
                         ", this runtime reads version " +
                         std::to_string(kProgramTablesVersion));
  uint64_t payload_size = get_fixed(bytes + 12, 8);
  if (payload_size != size - kProgramTablesHeaderBytes)
    return Status::Error("program tables: the header says " + std::to_string(payload_size) +
                         " bytes of tables, the blob has " +
                         std::to_string(size - kProgramTablesHeaderBytes));
  const unsigned char* payload = bytes + kProgramTablesHeaderBytes;
  if (fnv1a64(payload, payload_size) != get_fixed(bytes + 20, 8))
    return Status::Error("program tables: checksum mismatch (the tables are corrupt)");
  auto tables = std::make_unique<ProgramTables>();
  ProgramTablesReader reader(payload, payload_size);
  if (Status read = reader.read(*tables); !read.ok())
    return Status::Error("program tables: " + read.message());
  if (Status valid = check_program(tables->program()); !valid.ok())
    return Status::Error("program tables: " + valid.message());
  return tables;
}

const Program& program_tables_or_exit(const char* backend, const void* data, size_t size) {
  Result<std::unique_ptr<ProgramTables>> tables = decode_program_tables(data, size);
  if (!tables.ok()) {
    std::fprintf(stderr,
                 "error: internal: this executable's %s tables are refused: %s; rebuild it "
                 "with vouch build\n",
                 backend, tables.status().message().c_str());
    std::exit(1);  // kExitInternal (train_main.h)
  }
  // Kept until the process ends: the backends hold references into it.
  return tables.value().release()->program();
}

}  // namespace vouch::rt
