//===- Gate.h - the assurance gate ------------------------------*- C++ -*-===//
//
// The only way to an AcceptedGraphPlan. The gate checks every obligation of
// every planned op (the list is in Passes.td, vouch-gate) and either
// returns the accepted plan or reports every failure: one MLIR error per
// failed obligation at the op's location, `assurance gate [<obligation>]:
// <message>`, then a summary error on the model. It never stops at the
// first failure. Accepted or not, the model is left as it was.
//
//   mlir::FailureOr<AcceptedGraphPlan> plan =
//       vouch::planAndGate(model, *capsules::parseProfileSpec("checked_cuda"));
//   if (succeeded(plan)) std::cout << capsules::renderText(*plan);
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_PASSES_GATE_H
#define VOUCH_PASSES_GATE_H

#include "capsules/AcceptedPlan.h"
#include "capsules/Profile.h"
#include "ir/VouchOps.h"
#include "mlir/Support/LogicalResult.h"

namespace vouch {

using capsules::AcceptedGraphPlan;
using capsules::GateOptions;
using capsules::GateRejection;

/// Plans `model` for `profile` (planModel: records vouch.capsule,
/// vouch.kernel, vouch.profile), then gates it (gateModel).
mlir::FailureOr<AcceptedGraphPlan>
planAndGate(ModelOp model, const capsules::BackendProfile &profile,
            const GateOptions &options = {},
            GateRejection *rejection = nullptr);

/// Gates a model already planned (its vouch.capsule / vouch.kernel
/// attributes, as vouch-plan or later passes left them). On rejection the
/// failures go through MLIR diagnostics and, when `rejection` is given, into
/// it as data (for renderRejectionJson).
mlir::FailureOr<AcceptedGraphPlan>
gateModel(ModelOp model, const capsules::BackendProfile &profile,
          const GateOptions &options = {}, GateRejection *rejection = nullptr);

/// The plan entry of `op`, found through the kernel symbol (vouch.kernel)
/// the gate accepted; null when the op carries none or the plan has no such
/// symbol (the model was changed after gating). Codegen binds each op it
/// emits to its entry this way and must treat null as an error.
const capsules::PlannedOp *plannedOpOf(const AcceptedGraphPlan &plan,
                                       mlir::Operation *op);

} // namespace vouch

#endif // VOUCH_PASSES_GATE_H
