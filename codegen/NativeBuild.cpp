//===- NativeBuild.cpp - generated C++ to an executable ---------*- C++ -*-===//
#include "codegen/NativeBuild.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "codegen/ContentHash.h"
#include "codegen/ModelSource.h"
#include "codegen/Parallel.h"
#include "codegen/RuntimeSources.h"
#include "runtime/atomic_file.h"

namespace fs = std::filesystem;

namespace vouch::codegen {
namespace {

// -ffp-contract=off: the reference capsules promise contract=none (no FMA
// contraction), which GCC would otherwise be free to break.
const char *kCxxFlags = "-std=c++20 -O2 -fno-math-errno -ffp-contract=off "
                        "-isystem /usr/local/cuda/include "
                        "-isystem /usr/local/cuda/include/cccl";
const char *kCudaLinkFlags =
    " /usr/local/cuda/lib64/libcudart_static.a -L/usr/local/cuda/lib64"
    " -Wl,-rpath,/usr/local/cuda/lib64 -lcublasLt -lcublas -ldl -lrt -lpthread";

std::string shellQuote(const std::string &s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// Runs `command`, capturing its output in `log`. True on exit status 0. A
/// command that fails without a word (`--cxx false`) gets one in `log`: how
/// it ended, and the command.
bool runCommand(const std::string &command, bool verbose, std::string &log) {
  if (verbose)
    std::fprintf(stderr, "vouch: %s\n", command.c_str());
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) {
    log = "cannot run: " + command + " (" + std::strerror(errno) + ")";
    return false;
  }
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof(chunk), pipe)) > 0)
    log.append(chunk, n);
  int status = pclose(pipe);
  if (status == 0)
    return true;
  if (log.find_first_not_of(" \t\r\n") == std::string::npos)
    log = "the command " +
          (status == -1 ? std::string("could not be waited for")
           : WIFEXITED(status)
               ? "exited with status " + std::to_string(WEXITSTATUS(status))
               : "was killed by signal " + std::to_string(WTERMSIG(status))) +
          " and printed nothing: " + command + "\n";
  return false;
}

/// A directory of this build's own (mkdtemp: a pid is not unique across
/// sandboxes sharing /tmp), removed with everything in it when this goes out
/// of scope, on every path out of buildExecutable.
class TempDir {
public:
  bool create(std::string &error) {
    std::error_code ec;
    fs::path tmp = fs::temp_directory_path(ec);
    if (ec)
      tmp = "/tmp";
    std::string name = (tmp / "vouch-build-XXXXXX").string();
    if (!mkdtemp(name.data())) {
      error = "cannot create " + name + ": " + std::strerror(errno);
      return false;
    }
    path_ = name;
    return true;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty())
      fs::remove_all(path_, ec);
  }
  const fs::path &path() const { return path_; }

private:
  fs::path path_;
};

/// Runs `commands` side by side, up to `jobs` at once (0: as many as the
/// machine has cores), printed in order when `verbose`. Returns the index of
/// the first (in order) that failed, with its output in `log`; -1 when all
/// succeeded.
int runCommands(const std::vector<std::string> &commands, unsigned jobs,
                bool verbose, std::string &log) {
  if (verbose)
    for (const std::string &command : commands)
      std::fprintf(stderr, "vouch: %s\n", command.c_str());
  std::vector<std::string> logs(commands.size());
  std::vector<char> ok(commands.size(), false); // not bool: threads write it
  parallelFor(commands.size(), jobs, [&](size_t i) {
    ok[i] = runCommand(commands[i], /*verbose=*/false, logs[i]);
  });
  for (size_t i = 0; i < commands.size(); ++i)
    if (!ok[i]) {
      log = logs[i];
      return static_cast<int>(i);
    }
  return -1;
}

bool writeFile(const fs::path &path, const std::string &text,
               std::string &error) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) {
    error = "cannot write " + path.string();
    return false;
  }
  return true;
}

/// The runtime compiled into an archive, once per (sources, compiler, flags).
/// Returns the directory holding runtime/ headers and libvouch_runtime.a.
bool ensureRuntime(const NativeBuildOptions &options, fs::path &dir,
                   std::string &error) {
  ContentHash hash;
  hash.add(options.cxx).add(kCxxFlags);
  for (int i = 0; i < kRuntimeSourceCount; ++i)
    hash.add(kRuntimeSources[i].path).add(kRuntimeSources[i].text);
  const std::string name = hash.name("runtime-");
  dir = fs::path(cacheRoot()) / name;
  if (fs::exists(dir / "libvouch_runtime.a"))
    return true;

  std::error_code ec;
  fs::create_directories(fs::path(cacheRoot()), ec);
  fs::path staging = fs::path(cacheRoot()) / (name + ".tmp." +
                                    std::to_string(getpid()));
  fs::create_directories(staging / "runtime" / "cuda", ec);
  if (ec) {
    error = "cannot create the runtime cache " + staging.string() + ": " +
            ec.message();
    return false;
  }
  std::fprintf(stderr, "vouch: compiling the runtime (once; cached in %s)\n",
               dir.string().c_str());
  for (int i = 0; i < kRuntimeSourceCount; ++i)
    if (!writeFile(staging / kRuntimeSources[i].path, kRuntimeSources[i].text,
                   error)) {
      fs::remove_all(staging, ec);
      return false;
    }
  std::vector<std::string> compiles;
  std::string objects;
  for (int i = 0; i < kRuntimeSourceCount; ++i) {
    fs::path file = staging / kRuntimeSources[i].path;
    if (file.extension() != ".cc")
      continue;
    fs::path object = file;
    object.replace_extension(".o");
    compiles.push_back(options.cxx + " " + kCxxFlags + " -I" +
                       shellQuote(staging.string()) + " -c " +
                       shellQuote(file.string()) + " -o " +
                       shellQuote(object.string()));
    objects += " " + shellQuote(object.string());
  }
  if (std::string log; runCommands(compiles, options.jobs, options.verbose, log) >= 0) {
    error = "compiling the runtime failed:\n" + log;
    fs::remove_all(staging, ec);
    return false;
  }
  std::string log;
  if (!runCommand("ar rcs " +
                      shellQuote((staging / "libvouch_runtime.a").string()) +
                      objects,
                  options.verbose, log)) {
    error = "archiving the runtime failed:\n" + log;
    fs::remove_all(staging, ec);
    return false;
  }
  fs::rename(staging, dir, ec);
  if (ec) { // another process won the race: use its copy
    fs::remove_all(staging, ec);
    if (!fs::exists(dir / "libvouch_runtime.a")) {
      error = "cannot install the runtime cache in " + dir.string();
      return false;
    }
  }
  return true;
}

} // namespace

std::string cacheRoot() {
  if (const char *dir = std::getenv("VOUCH_CACHE_DIR"); dir && *dir)
    return std::string(dir);
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return (fs::path(xdg) / "vouch").string();
  if (const char *home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".cache" / "vouch").string();
  return (fs::temp_directory_path() / "vouch-cache").string();
}

bool buildExecutable(const std::string &source,
                     const NativeBuildOptions &options, std::string &error,
                     const std::vector<SourceBlob> &blobs) {
  // The output's temporary name first (its missing directories created): an
  // output that cannot be written is refused before any compiling.
  {
    std::error_code ec;
    fs::path parent = fs::path(options.output).parent_path();
    if (!parent.empty())
      fs::create_directories(parent, ec); // a failure shows just below
  }
  // Linked under this short name beside the output (a name of 255 bytes has no room for a suffix), then renamed over
  // it; removed on every failure.
  rt::Result<std::string> partial = rt::temp_file_beside(options.output);
  if (!partial.ok()) {
    error = partial.status().message();
    return false;
  }
  struct RemoveUnlessRenamed {
    std::string path;
    ~RemoveUnlessRenamed() {
      if (!path.empty())
        std::remove(path.c_str());
    }
  } partialFile{partial.value()};
  fs::path runtime;
  if (!ensureRuntime(options, runtime, error))
    return false;

  // The objects, and model.cpp unless kept in emitDir, in a directory of
  // this build's own, gone however this function returns.
  TempDir work;
  if (!work.create(error))
    return false;
  std::error_code ec;
  const fs::path &workDir = work.path();
  fs::path sourceDir =
      options.emitDir.empty() ? workDir : fs::path(options.emitDir);
  fs::create_directories(sourceDir, ec);
  if (ec) {
    error = "cannot create " + sourceDir.string() + ": " + ec.message();
    return false;
  }
  fs::path modelSource = sourceDir / "model.cpp";
  if (!writeFile(modelSource, source, error))
    return false;
  for (const SourceBlob &blob : blobs)
    if (!writeFile(sourceDir / blob.file, blob.bytes, error))
      return false;
  // The assembler finds the blobs' files there (`.incbin`); one argument,
  // whatever the path holds (-Wa, would split it at commas).
  const std::string blobSearch =
      blobs.empty() ? ""
                    : " -Xassembler " +
                          shellQuote("-I" + fs::absolute(sourceDir).string());

  std::vector<std::string> compiles;
  std::string objects;
  for (int part = 1; part <= kModelSourceParts; ++part) {
    fs::path object = workDir / ("model." + std::to_string(part) + ".o");
    compiles.push_back(options.cxx + " " + kCxxFlags + " -DVOUCH_PART=" +
                       std::to_string(part) + " -I" +
                       shellQuote(runtime.string()) + blobSearch + " -c " +
                       shellQuote(modelSource.string()) + " -o " +
                       shellQuote(object.string()));
    objects += " " + shellQuote(object.string());
  }
  std::string log;
  if (runCommands(compiles, options.jobs, options.verbose, log) >= 0) {
    error = "compiling the generated code failed (keep it with --emit-dir):\n" +
            log;
    return false;
  }
  if (!runCommand(options.cxx + objects + " " +
                      shellQuote((runtime / "libvouch_runtime.a").string()) +
                      " -o " + shellQuote(partial.value()) +
                      (options.cuda ? kCudaLinkFlags : ""),
                  options.verbose, log)) {
    error = "linking the executable failed:\n" + log;
    return false;
  }
  partialFile.path.clear(); // rename_over removes it if it fails
  rt::Status moved = rt::rename_over(partial.value(), options.output, 0777);
  if (!moved.ok()) {
    error = moved.message();
    return false;
  }
  return true;
}

bool writeFileAtomically(const std::string &path, const std::string &text,
                         std::string &error) {
  rt::Status written = rt::replace_file(path, text);
  if (!written.ok())
    error = written.message();
  return written.ok();
}

} // namespace vouch::codegen
