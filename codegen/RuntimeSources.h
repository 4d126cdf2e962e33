//===- RuntimeSources.h - the runtime, carried inside vouch -----*- C++ -*-===//
//
// `vouch build` compiles generated code against the thin runtime. The
// runtime's sources are embedded in the vouch binary (at Bazel build time),
// so a vouch binary copied anywhere can still build executables.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CODEGEN_RUNTIMESOURCES_H
#define VOUCH_CODEGEN_RUNTIMESOURCES_H

namespace vouch::codegen {

struct EmbeddedFile {
  const char *path; ///< e.g. "runtime/tape.h"
  const char *text;
};

extern const EmbeddedFile kRuntimeSources[];
extern const int kRuntimeSourceCount;

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_RUNTIMESOURCES_H
