// check.cc: error formatting for checked CUDA runtime calls (check.h).
#include "runtime/cuda/check.h"

namespace vouch::rt::cuda {

std::string format_cuda_error(std::string_view what, cudaError_t err) {
  const char* description = cudaGetErrorString(err);
  const char* name = cudaGetErrorName(err);
  std::string out(what);
  out += " failed: ";
  out += description != nullptr ? description : "unknown error";
  out += " (";
  out += name != nullptr ? std::string(name) : "cudaError " + std::to_string(int(err));
  out += ")";
  return out;
}

Status cuda_failure(std::string_view what, cudaError_t err) {
  (void)cudaGetLastError();  // consume it: the next launch check must not see it again
  return Status::Error(format_cuda_error(what, err));
}

}  // namespace vouch::rt::cuda
