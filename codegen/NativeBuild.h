//===- NativeBuild.h - generated C++ to an executable -----------*- C++ -*-===//
#ifndef VOUCH_CODEGEN_NATIVEBUILD_H
#define VOUCH_CODEGEN_NATIVEBUILD_H

#include <string>
#include <vector>

#include "codegen/ModelSource.h"

namespace vouch::codegen {

struct NativeBuildOptions {
  std::string output;   ///< the executable to write
  std::string emitDir;  ///< keep generated sources here (empty: a temp dir)
  std::string cxx = "g++";
  bool verbose = false; ///< print the compiler commands
  unsigned jobs = 0;    ///< compiler processes at once (0: one per core)
  /// Link the cuda backend: static cudart, cuBLAS and cuBLASLt from
  /// /usr/local/cuda (no driver-API link: the executable starts anywhere).
  bool cuda = false;
};

/// Where built runtimes and compiled kernels are cached: $VOUCH_CACHE_DIR,
/// else $XDG_CACHE_HOME/vouch, else ~/.cache/vouch.
std::string cacheRoot();

/// Writes `source` (emitModelSource's) as model.cpp and its `blobs` beside
/// it (compiled with `-Xassembler -I` of that directory), compiles the embedded
/// runtime once into the cache (cacheRoot(); keyed by a hash of its sources
/// and flags), compiles the source's parts side by side and links the
/// executable. The output's missing directories are created, and the output
/// is replaced atomically (runtime/atomic_file.h: a
/// short temporary name beside it, renamed over it). Its work directory is
/// removed on every path out. On failure returns false with the compiler's
/// log in `error` (when the compiler printed nothing: how it ended, and the
/// command).
bool buildExecutable(const std::string &source,
                     const NativeBuildOptions &options, std::string &error,
                     const std::vector<SourceBlob> &blobs = {});

/// Writes `text` to `path` through runtime/atomic_file.h's replace_file, so
/// `path` is never half written (buildExecutable installs its output the same
/// way). On failure returns false with `error`.
bool writeFileAtomically(const std::string &path, const std::string &text,
                         std::string &error);

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_NATIVEBUILD_H
