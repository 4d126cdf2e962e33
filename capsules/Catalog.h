//===- Catalog.h - the capsules vouch ships ---------------------*- C++ -*-===//
//
// Two catalogs cover every compute op of the dialect: `reference.<op>`
// (provider reference, device cpu: runtime/cpu_kernels.h and the cpu
// emitter's loops) and, for cuda, `native_cuda.<op>` for pointwise,
// reduction and shape ops plus `cublas.matmul` and `cublaslt.linear` (GEMM
// with the bias epilogue). Evidence cites only tests that exist
// (capsules/Evidence.h); where none exists yet the contract says
// not-provided, and reports show it.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CAPSULES_CATALOG_H
#define VOUCH_CAPSULES_CATALOG_H

#include <string_view>
#include <vector>

#include "capsules/Capsule.h"

namespace vouch::capsules {

/// What kind of computation an op is; selects contract templates and the
/// reduction order of its numerical policy.
enum class OpFamily { Generator, Pointwise, View, Reduction, Accumulation };

struct OpSpec {
  std::string_view op;      ///< dialect name without `vouch.`
  OpFamily family;
  std::string_view formula; ///< the value contract's claim
  bool hasVjp;              ///< the op implements VJPOpInterface
};

/// The dialect's compute ops, in ODS order. passes/PlanTest.cpp checks this
/// list against the ops registered by the vouch dialect.
const std::vector<OpSpec> &computeOps();
const OpSpec *findOpSpec(std::string_view op);

/// `reference.<op>` for every compute op.
std::vector<KernelCapsule> referenceCatalog();
/// `native_cuda.<op>`, `cublas.matmul`, `cublaslt.linear`: every compute op.
std::vector<KernelCapsule> cudaCatalog();

} // namespace vouch::capsules

#endif // VOUCH_CAPSULES_CATALOG_H
