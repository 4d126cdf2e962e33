// Tests for check.h: error formatting of CUDA and cuBLAS failures and the checking
// macros. Everything here runs without a device (cudart's error tables need no driver).
#include "runtime/cuda/check.h"
#include "runtime/cuda/cublas_check.h"

#include <gtest/gtest.h>

#include <string>

#include "runtime/cuda/test_util.h"

namespace vouch::rt::cuda {
namespace {

TEST(CheckTest, FormatsCudaErrorsWithCallDescriptionAndName) {
  EXPECT_EQ(format_cuda_error("cudaMalloc(67108864 bytes)", cudaErrorMemoryAllocation),
            "cudaMalloc(67108864 bytes) failed: out of memory (cudaErrorMemoryAllocation)");
  std::string driver = format_cuda_error("cudaGetDeviceCount", cudaErrorInsufficientDriver);
  EXPECT_NE(driver.find("cudaGetDeviceCount failed: "), std::string::npos) << driver;
  EXPECT_NE(driver.find("(cudaErrorInsufficientDriver)"), std::string::npos) << driver;
}

TEST(CheckTest, CublasStatusTableNamesEveryCode) {
  struct Case {
    cublasStatus_t status;
    const char* name;
  } cases[] = {
      {CUBLAS_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS"},
      {CUBLAS_STATUS_NOT_INITIALIZED, "CUBLAS_STATUS_NOT_INITIALIZED"},
      {CUBLAS_STATUS_ALLOC_FAILED, "CUBLAS_STATUS_ALLOC_FAILED"},
      {CUBLAS_STATUS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE"},
      {CUBLAS_STATUS_ARCH_MISMATCH, "CUBLAS_STATUS_ARCH_MISMATCH"},
      {CUBLAS_STATUS_MAPPING_ERROR, "CUBLAS_STATUS_MAPPING_ERROR"},
      {CUBLAS_STATUS_EXECUTION_FAILED, "CUBLAS_STATUS_EXECUTION_FAILED"},
      {CUBLAS_STATUS_INTERNAL_ERROR, "CUBLAS_STATUS_INTERNAL_ERROR"},
      {CUBLAS_STATUS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED"},
      {CUBLAS_STATUS_LICENSE_ERROR, "CUBLAS_STATUS_LICENSE_ERROR"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(cublas_status_name(c.status), c.name);
    EXPECT_STRNE(cublas_status_description(c.status), "unknown cuBLAS status code") << c.name;
  }
  EXPECT_EQ(cublas_status_name(static_cast<cublasStatus_t>(42)), "CUBLAS_STATUS_<unknown 42>");
  EXPECT_EQ(format_cublas_error("cublasGemmEx(opA=T, opB=N, m=8, n=1, k=2, lda=2, ldb=2, ldc=8)",
                                CUBLAS_STATUS_INVALID_VALUE),
            "cublasGemmEx(opA=T, opB=N, m=8, n=1, k=2, lda=2, ldb=2, ldc=8) failed: an "
            "unsupported value or parameter was passed to the function "
            "(CUBLAS_STATUS_INVALID_VALUE)");
}

Status succeeding_call() {
  VOUCH_CUDA_CHECK(cudaSuccess);
  VOUCH_CUBLAS_CHECK(CUBLAS_STATUS_SUCCESS);
  return Status::Ok();
}

// A call that fails with and without a device: device -1 never exists.
Status failing_cuda_call() {
  VOUCH_CUDA_CHECK(cudaSetDevice(-1));
  return Status::Ok();
}

Result<int> failing_cublas_call() {
  VOUCH_CUBLAS_CHECK(static_cast<cublasStatus_t>(CUBLAS_STATUS_NOT_SUPPORTED));
  return 1;
}

Status failing_with_description() {
  VOUCH_CUDA_CHECK_WHAT(cudaErrorMemoryAllocation, "cudaMalloc(" + std::to_string(64) + " bytes)");
  return Status::Ok();
}

TEST(CheckTest, MacrosReturnStatusNamingTheCall) {
  EXPECT_TRUE(succeeding_call().ok());

  Status s = failing_cuda_call();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("cudaSetDevice(-1) failed: ", 0), 0u) << s.message();
  EXPECT_NE(s.message().find("(cudaError"), std::string::npos) << s.message();
  // The failure was consumed: it does not linger as the "last error". (Without a
  // driver, the runtime's failed initialisation is reported by every call, this too.)
  if (cuda_device_present()) {
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  }

  Result<int> r = failing_cublas_call();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("failed: the functionality requested is not supported "
                                      "(CUBLAS_STATUS_NOT_SUPPORTED)"),
            std::string::npos)
      << r.status().message();

  EXPECT_EQ(failing_with_description().message(),
            "cudaMalloc(64 bytes) failed: out of memory (cudaErrorMemoryAllocation)");
}

}  // namespace
}  // namespace vouch::rt::cuda
