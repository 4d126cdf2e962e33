// model_tables.h: a compiled Program as one binary blob, the form a generated
// executable carries its tables in.
//
// Everything of a model that grows with its ops (a backend's Program: buffers, steps,
// arguments, ints, tape nodes, kernel names, the schedule text) is data, not code.
// Codegen encodes each Program with encode_program_tables into a blob that the
// generated C++ holds as one string literal (a few tokens a line: g++ reads it in
// time linear in its size, where an aggregate initialiser per buffer, step and node,
// and an array per node, took g++ minutes and gigabytes at 10,000 ops), or, in vouch
// build's executables, as a file the assembler includes (codegen/ModelSource.h); the generated
// main() decodes it at startup with program_tables_or_exit, which rebuilds the Program
// the executors take. The model's description (a row per param) and the capsule
// reports (a block per distinct capsule) stay C++ tables: they grow with params and
// capsules, not with ops.
//
// The format (every integer a LEB128 varint, signed ones zigzag-encoded; a real the
// varint of its IEEE-754 binary64 bit pattern):
//
//   header   "VOUCHTBL" | u32 version (kProgramTablesVersion, 4 bytes little-endian) |
//            u64 payload bytes (8, little-endian) | u64 FNV-1a 64 of the payload (8)
//   payload  strings: count, then each: length, its bytes (no terminator); each distinct
//            string once, referred to by index + 1 (0: a null pointer);
//            then the Program's fields in the order encode_program_tables writes them
//            (model_tables.cc: the writer and the reader side by side, field for field)
//
// A blob of another version, with a wrong length or checksum, or whose fields do not
// read back (a count larger than the bytes left, a string index past the strings, an
// enum out of range, bytes left over, a program check_program refuses) is refused with
// the reason: decoding never trusts the blob, so a corrupt executable says so instead of
// running wrong tables.
#ifndef VOUCH_RUNTIME_MODEL_TABLES_H_
#define VOUCH_RUNTIME_MODEL_TABLES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/program.h"
#include "runtime/status.h"

namespace vouch::rt {

inline constexpr char kProgramTablesMagic[8] = {'V', 'O', 'U', 'C', 'H', 'T', 'B', 'L'};
// Raised whenever the layout changes: an executable's blob is written and read by one
// runtime version, so a mismatch means a blob from elsewhere.
inline constexpr uint32_t kProgramTablesVersion = 2;  // 2: the output's row pitch
inline constexpr size_t kProgramTablesHeaderBytes = 28;

// A decoded Program with the storage its pointers point into. Not copyable or movable:
// program() points into its members.
class ProgramTables {
 public:
  ProgramTables() = default;
  ProgramTables(const ProgramTables&) = delete;
  ProgramTables& operator=(const ProgramTables&) = delete;
  const Program& program() const { return program_; }

 private:
  friend class ProgramTablesReader;
  Program program_{};
  std::vector<std::string> strings_;
  std::vector<const char*> string_ptrs_;  // index + 1 -> pointer (0: null)
  std::vector<BufferDesc> buffers_;
  std::vector<int32_t> params_, grads_, fields_, states_;
  std::vector<StepDesc> steps_;
  std::vector<ArgDesc> args_;
  std::vector<int64_t> ints_;
  std::vector<NodeDesc> nodes_;
  std::vector<const char*> names_;  // every node's saved and state names, the kernel names
};

// The blob of `program`. Precondition: check_program(program).ok().
std::string encode_program_tables(const Program& program);

// The Program of the blob at `data` (`size` bytes), or why it is refused. The result
// owns every string and array (the blob may go once it returns).
Result<std::unique_ptr<ProgramTables>> decode_program_tables(const void* data, size_t size);

// For a generated main(): the Program of its `backend` blob, decoded once and kept until
// the process ends. A blob that does not decode ends the process with an internal error
// (exit status 1) naming what is wrong and saying to rebuild.
const Program& program_tables_or_exit(const char* backend, const void* data, size_t size);

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_MODEL_TABLES_H_
