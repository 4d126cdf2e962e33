// cublas_check.cc: error formatting for checked cuBLAS / cuBLASLt calls (cublas_check.h).
#include "runtime/cuda/cublas_check.h"

namespace vouch::rt::cuda {

namespace {

struct CublasStatusInfo {
  cublasStatus_t status;
  const char* name;
  const char* description;
};

// cublasStatus_t of CUDA 13.0 (cublas_api.h), descriptions after the cuBLAS docs.
constexpr CublasStatusInfo kCublasStatus[] = {
    {CUBLAS_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS", "the operation completed successfully"},
    {CUBLAS_STATUS_NOT_INITIALIZED, "CUBLAS_STATUS_NOT_INITIALIZED",
     "the cuBLAS library was not initialized (usually: no usable CUDA driver or device)"},
    {CUBLAS_STATUS_ALLOC_FAILED, "CUBLAS_STATUS_ALLOC_FAILED",
     "resource allocation failed inside the cuBLAS library"},
    {CUBLAS_STATUS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE",
     "an unsupported value or parameter was passed to the function"},
    {CUBLAS_STATUS_ARCH_MISMATCH, "CUBLAS_STATUS_ARCH_MISMATCH",
     "the function requires a feature absent from the device architecture"},
    {CUBLAS_STATUS_MAPPING_ERROR, "CUBLAS_STATUS_MAPPING_ERROR",
     "an access to GPU memory space failed"},
    {CUBLAS_STATUS_EXECUTION_FAILED, "CUBLAS_STATUS_EXECUTION_FAILED",
     "the GPU program failed to execute"},
    {CUBLAS_STATUS_INTERNAL_ERROR, "CUBLAS_STATUS_INTERNAL_ERROR",
     "an internal cuBLAS operation failed"},
    {CUBLAS_STATUS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED",
     "the functionality requested is not supported"},
    {CUBLAS_STATUS_LICENSE_ERROR, "CUBLAS_STATUS_LICENSE_ERROR",
     "the functionality requested requires some license"},
};

const CublasStatusInfo* find_status(cublasStatus_t status) {
  for (const CublasStatusInfo& info : kCublasStatus)
    if (info.status == status) return &info;
  return nullptr;
}

}  // namespace

std::string cublas_status_name(cublasStatus_t status) {
  const CublasStatusInfo* info = find_status(status);
  if (info != nullptr) return info->name;
  return "CUBLAS_STATUS_<unknown " + std::to_string(int(status)) + ">";
}

const char* cublas_status_description(cublasStatus_t status) {
  const CublasStatusInfo* info = find_status(status);
  return info != nullptr ? info->description : "unknown cuBLAS status code";
}

std::string format_cublas_error(std::string_view what, cublasStatus_t status) {
  std::string out(what);
  out += " failed: ";
  out += cublas_status_description(status);
  out += " (" + cublas_status_name(status) + ")";
  return out;
}

}  // namespace vouch::rt::cuda
