// atomic_file.cc: see atomic_file.h.
#include "runtime/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vouch::rt {

namespace {

Status error(const std::string& path, const std::string& reason) {
  return Status::Error("cannot write " + path + ": " + reason);
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

mode_t without_umask(mode_t mode) {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mode & ~mask;
}

// A new temporary file beside `path`, open for writing: its descriptor and name.
Result<int> create_temp(const std::string& path, std::string* name) {
  struct stat st;
  if (path.empty()) return Status::Error("cannot write a file of no name");
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return error(path, S_ISDIR(st.st_mode)
                           ? "it is a directory"
                           : "it exists and is not a regular file (a device, FIFO or "
                             "socket); refusing to replace it");
  const std::string dir = directory_of(path);
  if (::stat(dir.c_str(), &st) != 0)
    return error(path, "its directory " + dir + " does not exist (" + std::strerror(errno) + ")");
  if (!S_ISDIR(st.st_mode)) return error(path, dir + " is not a directory");
  std::string temp = (dir == "/" ? "" : dir) + "/.vouch-XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0)
    return error(path, "cannot create a file in " + dir + " (" + std::strerror(errno) + ")");
  *name = temp;
  return fd;
}

}  // namespace

Status rename_over(const std::string& temp, const std::string& path, mode_t mode) {
  if (::chmod(temp.c_str(), without_umask(mode)) != 0 ||
      std::rename(temp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(temp.c_str());
    return error(path, std::strerror(e));
  }
  return Status::Ok();
}

Result<std::string> temp_file_beside(const std::string& path) {
  std::string temp;
  Result<int> fd = create_temp(path, &temp);
  if (!fd.ok()) return fd.status();
  ::close(fd.value());
  return temp;
}

Status replace_file(const std::string& path, std::string_view bytes, mode_t mode) {
  std::string temp;
  Result<int> fd = create_temp(path, &temp);
  if (!fd.ok()) return fd.status();
  const char* failed = nullptr;
  for (size_t done = 0; done < bytes.size() && failed == nullptr;) {
    const ssize_t n = ::write(fd.value(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) failed = "write";
    else done += size_t(n);
  }
  if (failed == nullptr && ::fsync(fd.value()) != 0) failed = "fsync";
  int e = errno;
  if (::close(fd.value()) != 0 && failed == nullptr) {
    failed = "close";
    e = errno;
  }
  if (failed != nullptr) {
    ::unlink(temp.c_str());
    return error(path, std::string(failed) + " of " + temp + " failed (" + std::strerror(e) + ")");
  }
  return rename_over(temp, path, mode);
}

}  // namespace vouch::rt
