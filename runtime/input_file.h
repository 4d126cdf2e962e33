// input_file.h: an input file the runtime reads (data, checkpoints, vocabularies).
//
// Opened and read through POSIX calls, so that everything that can go wrong is a
// Status naming the path and the reason: a missing file, a directory where a file is
// expected (a std::ifstream opens one, then throws std::ios_failure on the first read),
// a read error, a file that ends early, or more bytes than the reader can hold. Readers
// stream through read_some / read_exact instead of holding the whole file, so a file
// far larger than what the model could use is refused at its first bad byte or by its
// size, never slurped.
#ifndef VOUCH_RUNTIME_INPUT_FILE_H_
#define VOUCH_RUNTIME_INPUT_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "runtime/status.h"

namespace vouch::rt {

class InputFile {
 public:
  // Opens `path` for reading. Refused: a path that cannot be opened ("path: cannot open
  // file (No such file or directory)") and a directory ("path: is a directory, not a
  // file"). Pipes and devices are read like files (their size() is -1).
  static Result<InputFile> open(const std::string& path);

  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  const std::string& path() const { return path_; }
  // Bytes of a regular file; -1 when not known (a pipe).
  int64_t size() const { return size_; }
  // Bytes read so far.
  uint64_t offset() const { return offset_; }

  // Reads at most n bytes into buf: how many (0 at the end of the file), or the read
  // error ("path: read error (...)").
  Result<size_t> read_some(char* buf, size_t n);
  // Reads exactly n bytes, or refuses: a read error, or "path: truncated: `what` needs
  // N bytes at byte offset O, the file ends after M".
  Status read_exact(char* buf, size_t n, const std::string& what);

 private:
  InputFile(std::string path, int fd, int64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}
  std::string path_;
  int fd_ = -1;
  int64_t size_ = -1;
  uint64_t offset_ = 0;
};

// The whole of a small file (a vocabulary, a JSON header): refused, with `what` it
// should be, when it holds more than max_bytes.
Result<std::string> read_small_file(const std::string& path, uint64_t max_bytes,
                                    const std::string& what);

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_INPUT_FILE_H_
