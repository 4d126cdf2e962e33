// blas.h: cuBLAS / cuBLASLt GEMMs on row-major storage, with transpose flags.
//
// One cuBLAS handle and one cuBLASLt handle per process, created on first use (or by
// set_blas_stream, which should run before any graph capture: handle creation and the
// workspaces' cudaMalloc cannot be captured) and bound to one stream. Each handle gets
// its own fixed workspace, so calls are capturable into CUDA graphs. Calls are
// serialised by a mutex.
//
// gemm_row_major has exactly the semantics of runtime/cpu_kernels.h's matmul and never
// copies or transposes an operand: the mapping onto cuBLAS's column-major convention is
// described (and unit-tested) in gemm_call.h. The numeric policy: CUBLAS_COMPUTE_32F
// (fp32 products and sums; no TF32) unless allow_tf32, then
// CUBLAS_COMPUTE_32F_FAST_TF32; f64 always CUBLAS_COMPUTE_64F. Summation order inside
// cuBLAS is implementation-defined (reproducible run to run on one GPU model, not
// bitwise equal to the CPU's left fold).
#ifndef VOUCH_RUNTIME_CUDA_BLAS_H_
#define VOUCH_RUNTIME_CUDA_BLAS_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "runtime/cuda/check.h"
#include "runtime/cuda/gemm_call.h"

namespace vouch::rt::cuda {

// Bytes of each handle's workspace (NVIDIA's recommendation for Hopper).
inline constexpr size_t kBlasWorkspaceBytes = size_t(32) << 20;

// Creates the handles (if needed) and binds them to `stream` (the session's stream).
Status set_blas_stream(cudaStream_t stream);
// The bound stream (nullptr, the legacy default stream, until set).
cudaStream_t blas_stream();

// C[b] = op(A[b]) · op(B[b]) (or C[b] += ... when accumulate), row-major; see
// cpu_kernels.h's matmul for the exact meaning of every argument. All extents must be
// >= 0 and fit int (the cuBLAS ABI); errors name the cuBLAS call and its parameters.
Status gemm_row_major(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N,
                      int64_t K, const float* A, int64_t stride_a, const float* B,
                      int64_t stride_b, float* C, bool accumulate, bool allow_tf32);
// f64: allow_tf32 is ignored (CUBLAS_COMPUTE_64F); kept so generated code is uniform.
Status gemm_row_major(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N,
                      int64_t K, const double* A, int64_t stride_a, const double* B,
                      int64_t stride_b, double* C, bool accumulate, bool allow_tf32);

// Which path a linear_bias_row_major call took.
enum class LinearPath {
  None,           // empty output
  LtEpilogue,     // one cublasLtMatmul; the bias (if any) added by its epilogue
  GemmFallback,   // cublasGemmEx, then the bias as a broadcast GEMM (see below)
};
const char* linear_path_name(LinearPath path);  // "none", "cublasLt-epilogue", "gemm-fallback"

// y[rows,out] = x[rows,in] · W[out,in]ᵀ + bias[out] (bias may be nullptr), float only,
// as one cuBLASLt matmul with CUBLASLT_EPILOGUE_BIAS (describe_linear). If cuBLASLt
// refuses the epilogue for this shape / alignment (its heuristic returns no
// algorithm), the call falls back to gemm_row_major plus one strided-batched GEMM that
// adds the bias to every row (describe_bias_broadcast), and says so once per shape on
// stderr ("note: cuBLASLt refused ..."); `path`, when given, receives the path taken.
// Never a silent fallback. in = 0 gives y = bias (or 0).
Status linear_bias_row_major(int64_t rows, int64_t in, int64_t out, const float* x,
                             const float* W, const float* bias, float* y, bool allow_tf32,
                             LinearPath* path = nullptr);

// Tests only: pretend cuBLASLt refuses every epilogue, to exercise the fallback.
void set_lt_refusal_for_testing(bool refuse);

}  // namespace vouch::rt::cuda

#endif  // VOUCH_RUNTIME_CUDA_BLAS_H_
