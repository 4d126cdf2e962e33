// input_file.cc: see input_file.h.
#include "runtime/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace vouch::rt {

Result<InputFile> InputFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Error(path + ": cannot open file (" + std::strerror(errno) + ")");
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return Status::Error(path + ": cannot open file (" + std::strerror(e) + ")");
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Status::Error(path + ": is a directory, not a file");
  }
  return InputFile(path, fd, S_ISREG(st.st_mode) ? int64_t(st.st_size) : -1);
}

InputFile::InputFile(InputFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), size_(other.size_),
      offset_(other.offset_) {}

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
    offset_ = other.offset_;
  }
  return *this;
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<size_t> InputFile::read_some(char* buf, size_t n) {
  while (true) {
    const ssize_t got = ::read(fd_, buf, n);
    if (got >= 0) {
      offset_ += uint64_t(got);
      return size_t(got);
    }
    if (errno != EINTR)
      return Status::Error(path_ + ": read error (" + std::strerror(errno) + ")");
  }
}

Status InputFile::read_exact(char* buf, size_t n, const std::string& what) {
  const uint64_t start = offset_;
  size_t done = 0;
  while (done < n) {
    Result<size_t> got = read_some(buf + done, n - done);
    if (!got.ok()) return got.status();
    if (got.value() == 0)
      return Status::Error(path_ + ": truncated: " + what + " needs " + std::to_string(n) +
                           " bytes at byte offset " + std::to_string(start) +
                           ", the file ends after " + std::to_string(offset_));
    done += got.value();
  }
  return Status::Ok();
}

Result<std::string> read_small_file(const std::string& path, uint64_t max_bytes,
                                    const std::string& what) {
  Result<InputFile> file = InputFile::open(path);
  if (!file.ok()) return file.status();
  InputFile& in = file.value();
  auto too_large = [&] {
    return Status::Error(path + ": more than " + std::to_string(max_bytes) + " bytes; " + what +
                         " is not that large");
  };
  if (in.size() > 0 && uint64_t(in.size()) > max_bytes) return too_large();
  std::string text;
  char chunk[1 << 16];
  while (true) {
    Result<size_t> got = in.read_some(chunk, sizeof chunk);
    if (!got.ok()) return got.status();
    if (got.value() == 0) return text;
    if (text.size() + got.value() > max_bytes) return too_large();
    text.append(chunk, got.value());
  }
}

}  // namespace vouch::rt
