//===- CudaEmitter.h - host C++ of the cuda backend -------------*- C++ -*-===//
//
// The cuda target's executable carries two backends: the cpu one
// (CpuEmitter, planned for checked_cpu) and this one (planned for
// checked_cuda): a device-resident CompiledModel<T> whose training step is
// the forward kernels, the tape's VJP kernels and one optimizer kernel,
// captured once per batch as a CUDA graph and replayed.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CODEGEN_CUDAEMITTER_H
#define VOUCH_CODEGEN_CUDAEMITTER_H

#include <string>

#include "codegen/CudaSchedule.h"
#include "codegen/Nvrtc.h"
#include "passes/Gate.h"

namespace vouch::codegen {

/// Emits the cuda backend and main() (with both backends) to append after
/// emitCpuModel(..., emitMain = false). `binary` holds the NVRTC output of
/// emitCudaKernels for the same schedule.
mlir::FailureOr<std::string> emitCudaBackend(ModelOp model,
                                             const AcceptedGraphPlan &plan,
                                             const CudaSchedule &schedule,
                                             const CudaBinary &binary);

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_CUDAEMITTER_H
