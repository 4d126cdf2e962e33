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
// described (and unit-tested) in gemm_call.h. The numeric policy: f32 by `math`
// (gemm_call.h's ProductMath): CUBLAS_COMPUTE_32F (fp32 products and sums),
// CUBLAS_COMPUTE_32F_FAST_TF32 (operands rounded to TF32, sums in f32; storage f32
// throughout), Bf16 (the bf16_bits overloads: operands the caller rounded to bf16,
// products and sums in f32, an f32 result); f64 always CUBLAS_COMPUTE_64F.
//
// Reproducibility: the summation order inside cuBLAS is the library's own (not the
// CPU's left fold), and the handles are always in the configuration under which NVIDIA
// documents it as fixed run to run for one toolkit and one GPU model (same SM count):
//  * cuBLAS: atomics mode CUBLAS_ATOMICS_NOT_ALLOWED, set explicitly; the handle's own
//    fixed workspace, set again after every cublasSetStream (cuBLAS otherwise picks
//    from an internal pool, which its documentation names as a source of
//    nondeterminism).
//  * cuBLASLt: a fixed, user-owned workspace and a fixed workspace limit for the
//    heuristic; only algorithms whose split-K reduction is NONE, COMPUTE_TYPE or
//    OUTPUT_TYPE (partial sums staged in the workspace and added by a separate step in a
//    fixed order; kLtReductionSchemeMask). INPLACE, which adds the partial sums into the
//    output serialised through counters, is excluded: cublasLt.h promises its
//    "sequentiality", not an order. One algorithm per (shape, bias, math, alignment),
//    chosen at its first call and reused by every later one.
//  * one call at a time: calls are serialised by a mutex, and the executor never puts
//    two side by side in a graph (they share the workspaces).
// The configuration is the same with and without deterministic mode (deterministic.h),
// so the cuBLAS capsules can state it for every run.
#ifndef VOUCH_RUNTIME_CUDA_BLAS_H_
#define VOUCH_RUNTIME_CUDA_BLAS_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/cuda/check.h"
#include "runtime/cuda/gemm_call.h"

namespace vouch::rt::cuda {

// Bytes of each handle's workspace (NVIDIA's recommendation for Hopper).
inline constexpr size_t kBlasWorkspaceBytes = size_t(32) << 20;

// The split-K reductions cuBLASLt's heuristic may offer
// (CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK): COMPUTE_TYPE | OUTPUT_TYPE; NONE (no
// split) always passes. blas.cc checks the values against cublasLt.h.
inline constexpr uint32_t kLtReductionSchemeMask = 0x6;

// The configuration actually applied, read back where cuBLAS can report it.
struct BlasConfiguration {
  bool atomics_allowed = true;  // cublasGetAtomicsMode of the cuBLAS handle
  cudaStream_t stream = nullptr;  // cublasGetStream of the cuBLAS handle
  size_t workspace_bytes = 0;   // set on the cuBLAS handle (cuBLAS has no getter)
  size_t lt_workspace_bytes = 0;  // passed to every cublasLtMatmul
  uint32_t lt_reduction_scheme_mask = 0;  // given to every cuBLASLt heuristic query
};
// Creates the handles if needed (a device is required).
Result<BlasConfiguration> blas_configuration();

// One cuBLASLt algorithm, as its configuration attributes describe it.
struct LtAlgorithm {
  bool refused = false;      // the heuristic offered nothing usable (see linear_bias_row_major)
  std::string refusal;       // why, when refused
  int id = -1;               // CUBLASLT_ALGO_CONFIG_ID
  int split_k = 1;           // CUBLASLT_ALGO_CONFIG_SPLITK_NUM
  uint32_t reduction_scheme = 0;  // CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME
  size_t workspace_bytes = 0;     // what the heuristic said it needs
};
// "none", "inplace", "compute-type", "output-type" (or the number).
std::string lt_reduction_scheme_name(uint32_t scheme);

// The algorithm linear_bias_row_major uses for this linear with operands aligned to
// `align` bytes (chosen now if this is the shape's first use, then pinned); with
// `bf16_result`, that of the overload storing y as bf16.
Result<LtAlgorithm> linear_algorithm(int64_t rows, int64_t in, int64_t out, bool with_bias,
                                     ProductMath math, int align = 16,
                                     bool bf16_result = false);
// Tests only: the heuristic's first choice for that linear under another reduction
// scheme mask (CUBLASLT_REDUCTION_SCHEME_MASK: every scheme); never pinned nor used.
Result<LtAlgorithm> linear_heuristic_for_testing(int64_t rows, int64_t in, int64_t out,
                                                 bool with_bias, ProductMath math,
                                                 uint32_t reduction_scheme_mask);

// Creates the handles (if needed) and binds them to `stream` (the session's stream).
Status set_blas_stream(cudaStream_t stream);
// The bound stream (nullptr, the legacy default stream, until set).
cudaStream_t blas_stream();

// C[b] = op(A[b]) · op(B[b]) (or C[b] += ... when accumulate), row-major; see
// cpu_kernels.h's matmul for the exact meaning of every argument. All extents must be
// >= 0 and fit int (the cuBLAS ABI); errors name the cuBLAS call and its parameters.
Status gemm_row_major(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N,
                      int64_t K, const float* A, int64_t stride_a, const float* B,
                      int64_t stride_b, float* C, bool accumulate, ProductMath math);
// f64: `math` is ignored (CUBLAS_COMPUTE_64F); kept so generated code is uniform.
Status gemm_row_major(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N,
                      int64_t K, const double* A, int64_t stride_a, const double* B,
                      int64_t stride_b, double* C, bool accumulate, ProductMath math);
// ProductMath::Bf16: A and B already rounded to bf16, laid out as their f32 originals
// but for their rows' pitch (pitch_a / pitch_b elements, 0: dense; strides count
// elements of the padded layout), C f32: cublasGemmEx / cublasGemmStridedBatchedEx with
// CUDA_R_16BF operands. The f32 overload refuses ProductMath::Bf16 (it has no bf16
// operands to pass).
Status gemm_row_major(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N,
                      int64_t K, const bf16_bits* A, int64_t stride_a, const bf16_bits* B,
                      int64_t stride_b, float* C, bool accumulate, int64_t pitch_a = 0,
                      int64_t pitch_b = 0);

// Which path a linear_bias_row_major call took.
enum class LinearPath {
  None,           // empty output
  LtEpilogue,     // one cublasLtMatmul; the bias (if any) added by its epilogue
  GemmFallback,   // cublasGemmEx, then the bias as a broadcast GEMM (see below)
  // A bf16 y cuBLASLt would not store: the f32 linear into the caller's scratch, for it
  // to round, by the f32 cublasLtMatmul (F32ThenRound) or, that refused too, by the
  // GEMM fallback (F32GemmThenRound).
  F32ThenRound,
  F32GemmThenRound,
};
// "none", "cublasLt-epilogue", "gemm-fallback", "f32-then-round", "f32-gemm-then-round"
const char* linear_path_name(LinearPath path);
// What a fallback runs, as the stderr note, the tape and the launch audit name it:
// "cublasGemmEx + a bias broadcast GEMM" (or "cublasGemmEx" without a bias) for
// linear_bias_row_major, "cublasGemmEx + column-sum GEMMs" for linear_weight_grad_row_major.
const char* linear_fallback_name(bool bias);
const char* weight_grad_fallback_name();

// y[rows,out] = x[rows,in] · W[out,in]ᵀ + bias[out] (bias may be nullptr), as one
// cuBLASLt matmul with CUBLASLT_EPILOGUE_BIAS (describe_linear; f64 in
// CUBLAS_COMPUTE_64F, `math` ignored). If cuBLASLt refuses the epilogue for this
// shape / type / alignment (its heuristic returns no allowed algorithm), the call falls
// back to gemm_row_major plus one GEMM that adds the bias to every row
// (describe_bias_broadcast), and says so once per shape on stderr ("note: cuBLASLt
// refused ..."); `path`, when given, receives the path taken and `refusal` cuBLASLt's
// reason. Never a silent fallback. in = 0 gives y = bias (or 0).
Status linear_bias_row_major(int64_t rows, int64_t in, int64_t out, const float* x,
                             const float* W, const float* bias, float* y, ProductMath math,
                             LinearPath* path = nullptr, std::string* refusal = nullptr);
Status linear_bias_row_major(int64_t rows, int64_t in, int64_t out, const double* x,
                             const double* W, const double* bias, double* y, ProductMath math,
                             LinearPath* path = nullptr, std::string* refusal = nullptr);
// ProductMath::Bf16: x and W already rounded to bf16, bias and y f32 (the epilogue adds
// the f32 bias to the f32 sums).
Status linear_bias_row_major(int64_t rows, int64_t in, int64_t out, const bf16_bits* x,
                             const bf16_bits* W, const float* bias, float* y,
                             LinearPath* path = nullptr, std::string* refusal = nullptr);
// The same with y and the bias bf16 (a linear whose rounding vouch-round-bf16-operands
// folded into it, its bias rounded by a vouch.round_bf16): one cublasLtMatmul with D =
// CUDA_R_16BF, the bias added to the f32 sums in its epilogue (BIAS_DATA_TYPE =
// CUDA_R_16BF), then rounded to bf16. Where cuBLASLt refuses that (said once per shape on
// stderr, as above), and for in = 0, the f32 linear of the same values is computed into
// `y_f32` (rows·out floats; null: an error there), by the f32 cublasLtMatmul without a
// bias (path F32ThenRound) or by cublasGemmEx and, with a bias, its broadcast GEMM in
// bf16 operands (F32GemmThenRound): the caller rounds y_f32 into y (the executor's
// vouch_round_bf16 launch), which is the unfolded program.
Status linear_bias_row_major(int64_t rows, int64_t in, int64_t out, const bf16_bits* x,
                             const bf16_bits* W, const bf16_bits* bias, bf16_bits* y,
                             float* y_f32, LinearPath* path = nullptr,
                             std::string* refusal = nullptr);

// dW[out,in] = dy[rows,out]ᵀ · x[rows,in] and db[out] = Σ_rows dy[r,:] (a linear's
// weight and bias gradients) as one cuBLASLt matmul whose CUBLASLT_EPILOGUE_BGRADB sums
// dy's columns as the product reads them (describe_linear_weight_grad; f64 in
// CUBLAS_COMPUTE_64F, `math` ignored). If cuBLASLt refuses the epilogue (its heuristic
// offers no allowed algorithm), and for rows = 0 or in = 0, dW is one cublasGemmEx and
// db the column-sum GEMMs of describe_column_sums over slabs of column_sum_slab_rows()
// rows, said once per shape on stderr like linear_bias_row_major's fallback; `path` and
// `refusal` as there.
Status linear_weight_grad_row_major(int64_t rows, int64_t in, int64_t out, const float* dy,
                                    const float* x, float* dW, float* db, ProductMath math,
                                    LinearPath* path = nullptr, std::string* refusal = nullptr);
Status linear_weight_grad_row_major(int64_t rows, int64_t in, int64_t out, const double* dy,
                                    const double* x, double* dW, double* db, ProductMath math,
                                    LinearPath* path = nullptr, std::string* refusal = nullptr);
// ProductMath::Bf16: dy and x already rounded to bf16, dW and db f32: db sums the bf16
// values of dy (in f32), as the product reads them.
Status linear_weight_grad_row_major(int64_t rows, int64_t in, int64_t out, const bf16_bits* dy,
                                    const bf16_bits* x, float* dW, float* db,
                                    LinearPath* path = nullptr, std::string* refusal = nullptr);
// The rows of dy one column-sum GEMM of the fallback sums (its column of ones).
int64_t column_sum_slab_rows();

// The library entry points called by this thread while a BlasCallLog is alive, in
// order ("cublasGemmEx", "cublasGemmStridedBatchedEx", "cublasLtMatmul",
// "cudaMemsetAsync"): what --audit-launches compares with the call a step names.
class BlasCallLog {
 public:
  BlasCallLog();
  ~BlasCallLog();
  BlasCallLog(const BlasCallLog&) = delete;
  BlasCallLog& operator=(const BlasCallLog&) = delete;
  const std::vector<std::string>& calls() const { return calls_; }

 private:
  friend void log_blas_call(const char* api);  // blas.cc: appends to the innermost log
  std::vector<std::string> calls_;
  BlasCallLog* outer_;
};

// Tests only: pretend cuBLASLt refuses every epilogue, to exercise the fallback.
void set_lt_refusal_for_testing(bool refuse);

}  // namespace vouch::rt::cuda

#endif  // VOUCH_RUNTIME_CUDA_BLAS_H_
