// cublas_check.h: checked cuBLAS / cuBLASLt calls, as check.h's CUDA runtime ones.
// Format: "<call> failed: <description> (<status name>)", e.g.
//   cublasGemmEx(opA=T, opB=N, m=8, n=1, k=2, lda=2, ldb=2, ldc=8) failed:
//     an invalid value was passed (CUBLAS_STATUS_INVALID_VALUE)
#ifndef VOUCH_RUNTIME_CUDA_CUBLAS_CHECK_H_
#define VOUCH_RUNTIME_CUDA_CUBLAS_CHECK_H_

#include <cublas_api.h>

#include <string>
#include <string_view>

#include "runtime/cuda/check.h"

namespace vouch::rt::cuda {

// "CUBLAS_STATUS_INVALID_VALUE", ...; "CUBLAS_STATUS_<unknown N>" for codes not in the
// table (written here, not taken from cublasGetStatusName, so it is testable anywhere).
std::string cublas_status_name(cublasStatus_t status);
// A short description of the status code, from the cuBLAS documentation.
const char* cublas_status_description(cublasStatus_t status);
// "<what> failed: <description> (<name>)".
std::string format_cublas_error(std::string_view what, cublasStatus_t status);

inline Status check_cublas(cublasStatus_t status, std::string_view what) {
  return status == CUBLAS_STATUS_SUCCESS ? Status::Ok()
                                         : Status::Error(format_cublas_error(what, status));
}

}  // namespace vouch::rt::cuda

// check.h's VOUCH_CUDA_CHECK for cuBLAS / cuBLASLt calls (both return cublasStatus_t).
#define VOUCH_CUBLAS_CHECK(call)                                                    \
  do {                                                                              \
    cublasStatus_t vouch_cublas_st_ = (call);                                       \
    if (vouch_cublas_st_ != CUBLAS_STATUS_SUCCESS)                                  \
      return ::vouch::rt::Status::Error(                                            \
          ::vouch::rt::cuda::format_cublas_error(#call, vouch_cublas_st_));         \
  } while (0)

#define VOUCH_CUBLAS_CHECK_WHAT(call, what)                                         \
  do {                                                                              \
    cublasStatus_t vouch_cublas_st_ = (call);                                       \
    if (vouch_cublas_st_ != CUBLAS_STATUS_SUCCESS)                                  \
      return ::vouch::rt::Status::Error(                                            \
          ::vouch::rt::cuda::format_cublas_error((what), vouch_cublas_st_));        \
  } while (0)

#endif  // VOUCH_RUNTIME_CUDA_CUBLAS_CHECK_H_
