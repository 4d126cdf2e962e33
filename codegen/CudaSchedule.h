//===- CudaSchedule.h - what runs on the GPU, in which order ----*- C++ -*-===//
//
// The cuda target's schedule of a differentiated, fused model: the forward
// steps, each node's backward steps (what the tape calls), and a prologue.
// A step is one native kernel (a fused pointwise group or one structured op),
// one cuBLAS/cuBLASLt call, or an alias (reshape: no work at all).
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CODEGEN_CUDASCHEDULE_H
#define VOUCH_CODEGEN_CUDASCHEDULE_H

#include <map>
#include <string>
#include <vector>

#include "ir/VouchOps.h"

namespace vouch::codegen {

struct Step {
  enum Kind { Pointwise, Reduce, MseLoss, Broadcast, Permute, Matmul, Linear, Alias };
  Kind kind;
  llvm::SmallVector<mlir::Operation *> ops; ///< several only for Pointwise
  std::string symbol; ///< native kernel name (without _f32/_f64); "" otherwise
  int64_t elements = 0; ///< result elements (Pointwise: of every op)
  llvm::SmallVector<mlir::Value> loads;  ///< Pointwise: values read
  llvm::SmallVector<mlir::Value> stores; ///< Pointwise: values written

  /// Pointwise: 128-bit loads and stores (4 floats / 2 doubles per lane);
  /// possible when the element count is a multiple of 4 (buffers come from
  /// cudaMalloc, so they are aligned).
  bool vectorized() const { return kind == Pointwise && elements % 4 == 0; }
  /// Reduce over leading axes into trailing ones (bias gradients): a 32 x 32
  /// block per 32 outputs, so each warp reads 32 consecutive elements.
  bool columnReduce = false;
};

struct CudaSchedule {
  std::vector<Step> forward;
  std::map<int64_t, std::vector<Step>> backward; ///< by node id
  std::vector<Step> prologue; ///< backward ops of no node (constant grads)
};

/// Groups the model's ops into steps (after vouch-autodiff,
/// vouch-fuse-pointwise and vouch-plan, whose kernel symbols name the native
/// kernels; an op without one is an error).
mlir::FailureOr<CudaSchedule> scheduleForCuda(ModelOp model);

/// The CUDA C++ of every native kernel in `schedule`, plus the optimizer
/// kernels; every kernel has an `_f32` and an `_f64` entry point.
std::string emitCudaKernels(ModelOp model, const CudaSchedule &schedule);

/// Names of every kernel entry point emitted (for the report and tests).
std::vector<std::string> kernelSymbols(const CudaSchedule &schedule);

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_CUDASCHEDULE_H
