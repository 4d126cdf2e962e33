//===- Catalog.h - the capsules vouch ships ---------------------*- C++ -*-===//
//
// Two catalogs cover every compute op of the dialect, derived from the op's
// row of the op table (ir/OpTable.h, generated from its ODS record):
// `reference.<op>` (provider reference, device cpu: the row's cpu kernel of
// runtime/cpu_kernels.h, or the cpu emitter's inline loop), and, for cuda,
// one capsule per provider the row lists: `native_cuda.<op>` for every op,
// and for products also `cublas.matmul` and `cublaslt.linear` (GEMM with
// the bias epilogue); the plan chooses among them (passes/Plan.h). Evidence cites only tests that exist
// (capsules/Evidence.h), by the keys the row names; where none is named the
// contract says not-provided, and reports show it.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CAPSULES_CATALOG_H
#define VOUCH_CAPSULES_CATALOG_H

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capsules/Capsule.h"
#include "ir/OpTable.h"

namespace vouch::capsules {

/// Whether NVRTC may contract a·b + c into one FMA in vouch's CUDA kernels:
/// codegen/Nvrtc.cpp passes -fmad accordingly, and the native capsules say
/// contract=fma (or none) from this one fact.
inline constexpr bool kNativeCudaFmad = true;
inline constexpr const char *kNativeCudaFmadOption =
    kNativeCudaFmad ? "-fmad=true" : "-fmad=false";

/// The ops that get capsules: every row of the op table but the structural
/// and composite ones (OpFacts::isPlanned), in ODS order.
std::vector<const OpFacts *> computeOpFacts();

/// The providers of `facts.cudaProviders`, in its order; an unknown name is
/// an error naming the op.
Expected<std::vector<Provider>> cudaProvidersOf(const OpFacts &facts);

/// `<provider>.<op>` with the provider's `-` written `_`: "native_cuda.relu".
std::string capsuleName(Provider provider, std::string_view op);

/// `reference.<op>` for every compute op.
std::vector<KernelCapsule> referenceCatalog();
/// One cuda capsule per provider of each compute op's row, in the row's
/// order. A provider without a capsule template for the op ships nothing
/// (the catalog test then fails).
std::vector<KernelCapsule> cudaCatalog();

/// The training step's own work besides the model's ops, per device:
/// `<provider>.select_batch` (the batch a step trains on) and
/// `<provider>.<optimizer>_step` (the update of every parameter), provider
/// `reference` on cpu (runtime/executor.cc, runtime/optim.cc) and
/// `native-cuda` on cuda (runtime/cuda/kernels/executor.cuh, optimizer.cuh),
/// and `<provider>.clip_grad_norm` (the global gradient norm and the scaling
/// before the update, for a model that clips).
std::vector<KernelCapsule> stepCatalog();
/// The optimizers the step catalog covers, by the train clause's spelling.
const std::vector<std::string_view> &stepOptimizers();
/// The "op" of a step capsule: "select_batch", or "<optimizer>_step".
inline constexpr std::string_view kSelectBatchWork = "select_batch";
/// The batch selection of a model whose data is a token stream (`data
/// tokens(...)`): windows read from the host-resident file.
inline constexpr std::string_view kSelectWindowsWork = "select_windows";
/// The "op" of the gradient-clipping capsule (train clause `clip_grad_norm`).
inline constexpr std::string_view kClipGradNormWork = "clip_grad_norm";
std::string optimizerWork(std::string_view optimizer);
/// The provider of the step's own work on `device` (reference on cpu,
/// native-cuda on cuda); nothing for a device without an executor.
std::optional<Provider> stepProvider(Device device);

} // namespace vouch::capsules

#endif // VOUCH_CAPSULES_CATALOG_H
