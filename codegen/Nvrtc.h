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

namespace vouch::codegen {

struct CudaBinary {
  std::string cubin; ///< machine code for `arch`
  std::string ptx;   ///< the same kernels as PTX (compute_<arch>)
  std::string arch;  ///< e.g. "sm_90"
};

/// Compiles `source` (named `name` in NVRTC's log) for `arch`. On failure
/// returns false; `error` holds NVRTC's log with each reported line of the
/// generated source quoted under it.
bool compileCuda(const std::string &source, const std::string &name,
                 const std::string &arch, CudaBinary &out, std::string &error);

/// NVRTC's version, e.g. "13.0".
std::string nvrtcVersionString();

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_NVRTC_H
