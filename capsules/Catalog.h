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

#include <string>
#include <string_view>
#include <vector>

#include "capsules/Capsule.h"
#include "ir/OpTable.h"

namespace vouch::capsules {

/// The ops that get capsules: every row of the op table but the structural
/// ones, in ODS order.
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

} // namespace vouch::capsules

#endif // VOUCH_CAPSULES_CATALOG_H
