// fuzz_file.h: a fuzz input as a file the runtime's loaders open by path.
//
// The loaders take paths (they stream through InputFile, map token files, check
// sizes with fstat), so each input is written into one anonymous in-memory file
// (memfd_create) and handed over as /proc/self/fd/N: the real open / read / mmap
// paths run, and nothing touches the disk between executions.
#ifndef VOUCH_TESTS_FUZZ_FUZZ_FILE_H_
#define VOUCH_TESTS_FUZZ_FUZZ_FILE_H_

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace vouch::fuzz {

class FuzzFile {
 public:
  explicit FuzzFile(const char* name) : fd_(memfd_create(name, 0)) {
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
  }
  FuzzFile(const FuzzFile&) = delete;
  FuzzFile& operator=(const FuzzFile&) = delete;
  ~FuzzFile() { close(fd_); }

  // Replaces the file's contents with bytes; returns the path that opens it.
  std::string write(const uint8_t* bytes, size_t size) {
    if (ftruncate(fd_, 0) != 0) std::abort();
    for (size_t done = 0; done < size;) {
      ssize_t n = pwrite(fd_, bytes + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
    return "/proc/self/fd/" + std::to_string(fd_);
  }

 private:
  int fd_;
};

// A path in a directory of this process's own, removed at exit, for what a target
// writes (savers replace files through a temporary one beside them: a real
// directory is needed).
inline std::string scratch_path(const std::string& name) {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = std::filesystem::temp_directory_path() /
                              ("vouch-fuzz-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                                      ("vouch-fuzz-" + std::to_string(getpid())),
                                  ec);
    });
    return d;
  }();
  return (dir / name).string();
}

// Ends the run with a message libFuzzer (or the corpus replay) reports as a crash:
// a property of the code under test did not hold.
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz property violated: %s\n", what.c_str());
  std::abort();
}

// What every refusal of a file must be (issue 14): a message that names the file,
// whose own text (the path's occurrences removed) is printable ASCII, since bytes
// from the file are shown escaped (runtime/quoted.h), and short, since long
// fields and headers are cut. `max_bytes` bounds that text.
inline void check_refusal(const std::string& message, const std::string& path,
                          size_t max_bytes = 1000) {
  if (message.find(path) == std::string::npos)
    fail("a refusal does not name the file " + path + ": " + message.substr(0, 300));
  std::string own;
  for (size_t at = 0; at < message.size();) {
    size_t next = message.find(path, at);
    if (next == std::string::npos) next = message.size();
    own.append(message, at, next - at);
    at = next == message.size() ? next : next + path.size();
  }
  if (own.size() > max_bytes)
    fail("a refusal of " + std::to_string(own.size()) + " bytes (at most " +
         std::to_string(max_bytes) + "): " + own.substr(0, 300) + "...");
  for (unsigned char c : own)
    if (c < 0x20 || c > 0x7e) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", c);
      fail(std::string("a refusal shows the byte ") + hex + " raw: " + own.substr(0, 300));
    }
}

}  // namespace vouch::fuzz

#endif  // VOUCH_TESTS_FUZZ_FUZZ_FILE_H_
