//===- Plan.h - a capsule and a kernel symbol for every op ------*- C++ -*-===//
//
// Planning is selection only: for a backend profile, each compute op of a
// model (forward and backward) gets the capsule the profile prefers and the
// kernel symbol codegen will emit for it, both recorded as attributes. It
// checks nothing: that is the assurance gate's work (passes/Gate.h), which
// reads these attributes back. The `vouch-plan` pass (Passes.td) runs
// planModel.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_PASSES_PLAN_H
#define VOUCH_PASSES_PLAN_H

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capsules/AcceptedPlan.h"
#include "capsules/Profile.h"
#include "capsules/Registry.h"
#include "ir/VouchOps.h"
#include "passes/Attributes.h"
#include "runtime/cuda/gemm_call.h"

namespace vouch {

/// Planning also records the profile's spec() on the model (kCapsuleAttr and
/// kKernelAttr on each planned op: passes/Attributes.h).
inline constexpr const char *kProfileAttr = "vouch.profile";

/// Ops that compute a value and so need a kernel: every vouch op except
/// model, input, target, param, loss, output and param_grad.
bool isPlannedOp(mlir::OperationName name);
inline bool isPlannedOp(mlir::Operation *op) {
  return isPlannedOp(op->getName());
}

/// Where a planned op sits on the tape.
struct PlanPosition {
  /// Forward: vouch.node. Backward: vouch.vjp_of. Ops with neither (a model
  /// not differentiated yet, autodiff's zero gradients of unused params)
  /// are numbered after the largest vouch.node, in op order: the numbers
  /// vouch-autodiff gives, where it gives any.
  int64_t node = 0;
  capsules::Direction direction = capsules::Direction::Forward;
  /// Backward: index among the backward ops of `node`, in op order.
  int64_t step = 0;
};

/// Every planned op of `model` with its position, in op order.
std::vector<std::pair<mlir::Operation *, PlanPosition>>
planPositions(ModelOp model);

/// `<model>_n<node>_<op>` forward, `<model>_b<node>_<step>_<op>` backward.
/// The model name is made a C identifier: characters other than letters,
/// digits and `_` become `_`, and a name not starting with a letter or `_`
/// gets the prefix `model_`.
std::string kernelSymbol(llvm::StringRef model, const PlanPosition &position,
                         llvm::StringRef op);

/// The extents of a matmul or linear (ir/GemmDims.h); nothing for any other
/// op.
std::optional<capsules::ProductExtents> productExtents(mlir::Operation *op);

/// `value` with the reshapes it was made by undone: the value they view.
mlir::Value viewedValue(mlir::Value value);

/// The op whose kernel stores `op`'s result as the bf16 twin of its own
/// (the op table's bf16Twin): for a vouch.round_bf16 that
/// vouch-round-bf16-operands put into one fusion group with the op computing
/// its input, that op; null for any other op. Codegen emits the group as
/// that op's step, its kernel storing both.
mlir::Operation *bf16TwinProducer(mlir::Operation *op);

/// How the cuda executor runs a matmul, linear or linear_weight_grad under
/// `math` (runtime/cuda/gemm_call.h's plan_gemm / plan_linear on the op's
/// GemmDims, as runtime/cuda/executor.cc asks them): the extents it pads and
/// the operand copies it makes. Nothing for any other op.
std::optional<rt::cuda::ProductPlan> planProduct(mlir::Operation *op,
                                                 rt::cuda::ProductMath math);

/// The capsule for `op` (dialect name without `vouch.`) under `profile`:
/// the first of the profile's preferred providers for it (for a product, by
/// its extents: BackendProfile::preferenceFor) with a capsule on the
/// profile's device, else the device's first capsule for the op (which the
/// gate will then judge), else null. Never a capsule of another device.
const capsules::KernelCapsule *
selectCapsule(llvm::StringRef op, const capsules::BackendProfile &profile,
              const capsules::CapsuleRegistry &registry,
              std::optional<capsules::ProductExtents> product = std::nullopt);

/// Records kCapsuleAttr (or removes it, where no capsule exists) and
/// kKernelAttr on every planned op, and kProfileAttr on the model.
void planModel(ModelOp model, const capsules::BackendProfile &profile,
               const capsules::CapsuleRegistry &registry);

/// `file:line:col` of the first file location inside `loc`, or `unknown`.
std::string locationString(mlir::Location loc);

/// The composite op whose composed form an op belongs to, from the NameLoc
/// vouch-decompose wraps its location in ("scaled_dot_product_attention"),
/// or "" for an op the model wrote itself.
std::string composedFrom(mlir::Location loc);

} // namespace vouch

#endif // VOUCH_PASSES_PLAN_H
