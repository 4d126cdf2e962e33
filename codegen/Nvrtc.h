//===- Nvrtc.h - CUDA C++ to cubin and PTX with NVRTC -----------*- C++ -*-===//
//
// Kernels are compiled when the model is built, not when it runs: the cubin
// for sm_90 is what an H200 loads, the PTX lets a newer GPU JIT it. NVRTC
// needs no GPU, so this runs in CI too.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CODEGEN_NVRTC_H
#define VOUCH_CODEGEN_NVRTC_H

#include <string>
#include <utility>
#include <vector>

namespace vouch::codegen {

struct CudaBinary {
  std::string cubin; ///< machine code for `arch`
  std::string ptx;   ///< the same kernels as PTX (compute_<arch>)
  std::string arch;  ///< e.g. "sm_90"
};

/// Headers NVRTC may include: (include name, text).
using CudaHeaders = std::vector<std::pair<std::string, std::string>>;

/// The kernel library (runtime/cuda/kernels/*.cuh and .h) embedded in this
/// binary, by file name: the include names generated kernels and the
/// headers themselves use.
const CudaHeaders &kernelLibraryHeaders();

/// Compiles `source` (named `name` in NVRTC's log) for `arch`: the cubin
/// and the PTX it was assembled from, in one compile. On failure returns
/// false; `error` holds NVRTC's log with each reported line of the generated
/// source quoted under it.
bool compileCuda(const std::string &source, const std::string &name,
                 const std::string &arch, const CudaHeaders &headers,
                 CudaBinary &out, std::string &error);

/// compileCuda through a cache keyed by the content hash of everything that
/// decides the output (source, headers, arch, options, NVRTC's version):
/// `<cache>/cubin-<hash>/{kernels.cubin,kernels.ptx}`. `hit` says whether
/// the cache answered.
bool compileCudaCached(const std::string &source, const std::string &name,
                       const std::string &arch, const CudaHeaders &headers,
                       const std::string &cacheDir, CudaBinary &out,
                       bool &hit, std::string &error);

/// One NVRTC program: a part of a model's kernels that compiles on its own
/// (it includes the library headers it instantiates).
struct CudaUnit {
  std::string name;   ///< for NVRTC's log, e.g. "gpt2_124m.3.cu"
  std::string source;
};

/// Compiles every unit through the cache (compileCudaCached), up to
/// `threads` at a time (0: one per hardware thread; NVRTC compiles distinct
/// programs concurrently): `out[i]` is `units[i]`'s binary, whatever the
/// order they finish in. `hits` counts the units the cache answered. On
/// failure returns false with the first failing unit's error.
bool compileCudaUnits(const std::vector<CudaUnit> &units,
                      const std::string &arch, const CudaHeaders &headers,
                      const std::string &cacheDir, unsigned threads,
                      std::vector<CudaBinary> &out, size_t &hits,
                      std::string &error);

/// NVRTC's version, e.g. "13.0".
std::string nvrtcVersionString();

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_NVRTC_H
