//===- Report.h - audit reports of accepted plans and rejections -*- C++ -*-===//
//
// Text (for people, the seed's format extended with kernel symbols and
// library calls) and JSON (for tools; schema `vouch.report/1`, documented
// in docs/report.md). Reports are rendered from an AcceptedGraphPlan or a
// GateRejection only, so a report never describes an unchecked plan.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CAPSULES_REPORT_H
#define VOUCH_CAPSULES_REPORT_H

#include <string>

#include "capsules/AcceptedPlan.h"

namespace vouch::capsules {

/// Header, one entry per capsule at first use (renderCapsuleEntry), one line
/// per planned op (node, direction, op, kernel symbol, capsule, library call,
/// location), and the coalesced lowering.
std::string renderText(const AcceptedGraphPlan &plan);

/// The `vouch.report/1` JSON document of an accepted plan.
std::string renderJson(const AcceptedGraphPlan &plan);

/// The `vouch.report/1` JSON document of a rejection: `accepted` false,
/// empty capsules / ops / lowering, every failure under `rejections`.
std::string renderRejectionJson(const GateRejection &rejection);

/// One line per failure, `location: error: [obligation] message`, then a
/// summary line: for callers that do not print through MLIR diagnostics.
std::string renderRejectionText(const GateRejection &rejection);

/// A capsule's entry as `--show-backend` prints it at first use:
///   op: name provider=… trust=… vjp=… numeric=[…] [products=fp32|tf32|bf16]
///     shape: claim (summary; evidence: kind reference)
///     layout: …
///     value: …
///     vjp: …
///     provenance: …
/// `products` is what the capsule's f32 products compute in under a profile
/// asking for `products` (productPrecisionOf); printed only for capsules that
/// may round them.
std::string renderCapsuleEntry(const KernelCapsule &capsule,
                               ProductPrecision products);

} // namespace vouch::capsules

#endif // VOUCH_CAPSULES_REPORT_H
