// check.h: checked CUDA runtime calls (cuBLAS's: cublas_check.h).
//
// Every CUDA / cuBLAS / cuBLASLt call in runtime/cuda goes through these helpers, so a
// failure becomes a Status that names the call and the error, never an exit or an
// abort. Format: "<call> failed: <description> (<error name>)", e.g.
//   cudaMalloc(67108864 bytes) failed: out of memory (cudaErrorMemoryAllocation)
// cuBLAS's half is a header of its own so that what generated executables' host code
// includes (buffer.h, executor.h) parses no cuBLAS header (cublas_api.h brings
// cuda_fp16.h and cuda_bf16.h: about 0.4 s of every model's compile).
#ifndef VOUCH_RUNTIME_CUDA_CHECK_H_
#define VOUCH_RUNTIME_CUDA_CHECK_H_

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

#include "runtime/status.h"

namespace vouch::rt::cuda {

using ::vouch::rt::Result;
using ::vouch::rt::Status;

// "<what> failed: <cudaGetErrorString> (<cudaGetErrorName>)". Pure formatting (cudart's
// error tables need no driver), so it is testable on a machine without a GPU.
std::string format_cuda_error(std::string_view what, cudaError_t err);

// format_cuda_error as a Status, after clearing the runtime's per-thread "last error"
// (cudaGetLastError) so that a later launch check does not report this error again.
Status cuda_failure(std::string_view what, cudaError_t err);

// Ok for cudaSuccess, otherwise cuda_failure(what, err).
inline Status check_cuda(cudaError_t err, std::string_view what) {
  return err == cudaSuccess ? Status::Ok() : cuda_failure(what, err);
}

}  // namespace vouch::rt::cuda

// Inside a function returning Status or Result<T>: evaluates the CUDA runtime call and
// returns the error Status naming the call's source text if it did not succeed.
#define VOUCH_CUDA_CHECK(call)                                                      \
  do {                                                                              \
    cudaError_t vouch_cuda_err_ = (call);                                           \
    if (vouch_cuda_err_ != cudaSuccess)                                             \
      return ::vouch::rt::cuda::cuda_failure(#call, vouch_cuda_err_);               \
  } while (0)

// Same, with the call described by `what` (a std::string expression, e.g. one that
// names the byte count) instead of the source text.
#define VOUCH_CUDA_CHECK_WHAT(call, what)                                           \
  do {                                                                              \
    cudaError_t vouch_cuda_err_ = (call);                                           \
    if (vouch_cuda_err_ != cudaSuccess)                                             \
      return ::vouch::rt::cuda::cuda_failure((what), vouch_cuda_err_);              \
  } while (0)

// Propagates an error Status (from any expression yielding a Status).
#define VOUCH_RETURN_IF_ERROR(expr)                                                 \
  do {                                                                              \
    ::vouch::rt::Status vouch_status_ = (expr);                                     \
    if (!vouch_status_.ok()) return vouch_status_;                                  \
  } while (0)

#endif  // VOUCH_RUNTIME_CUDA_CHECK_H_
