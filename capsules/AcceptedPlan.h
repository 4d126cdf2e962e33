//===- AcceptedPlan.h - what the assurance gate hands to codegen -*- C++ -*-===//
//
// An AcceptedGraphPlan exists only if the assurance gate accepted every
// obligation of every planned op (seed 5.3.4: BackendProfile.acceptGraph).
// That is a property of the type, not a convention: its constructor is
// private and its one friend is the gate (passes/Gate.cpp), so codegen and
// reports, which take an AcceptedGraphPlan, can only ever see accepted
// plans. A rejection is plain data (GateRejection) listing every failure.
//
// This header depends on no MLIR: the plan carries what codegen and reports
// need about each op (shapes, flags, location as text).
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CAPSULES_ACCEPTEDPLAN_H
#define VOUCH_CAPSULES_ACCEPTEDPLAN_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "capsules/Capsule.h"
#include "capsules/Profile.h"

namespace vouch {
class AssuranceGate; // passes/Gate.cpp: the only maker of accepted plans
} // namespace vouch

namespace vouch::capsules {

class CapsuleRegistry;

/// What the gate is asked to enforce beyond the profile.
struct GateOptions {
  /// Reject capsules whose reduction order may change from run to run
  /// (reduce=implementation-defined); none, left-fold, fixed-order-tree and
  /// library-fixed are the same every run.
  bool deterministic = false;
  /// Reject contracts whose evidence is `not-provided`.
  bool requireEvidence = false;
  /// The capsules to plan from; null means defaultRegistry().
  const CapsuleRegistry *registry = nullptr;
};

/// The gate's obligations; every failure names one.
enum class Obligation {
  Profile,      ///< the profile is usable in this build
  Capsule,      ///< a capsule exists for the op and computes forward values
  Shape,        ///< static shapes, ranks the capsule supports
  Abi,          ///< UInt32 CUDA ABI (and cuBLAS's int) for every extent
  Layout,       ///< operand layout the capsule reads (transpose flags)
  Value,        ///< the capsule states a value contract
  Identity,     ///< op ↔ capsule, provider ↔ device ↔ profile
  Availability, ///< the provider is linked into this build
  Trust,        ///< trust level allowed by the assurance policy
  Numerics,     ///< numerical policy allowed by the profile
  Vjp,          ///< a VJP contract for ops with a backward
  Determinism,  ///< fixed reduction order, when requested
  Evidence,     ///< evidence for every contract, when requested
  Symbol,       ///< a unique kernel symbol
};
std::string_view toString(Obligation);

enum class Direction { Forward, Backward };
std::string_view toString(Direction);

/// One planned op, in the model's op order.
struct PlannedOp {
  /// Forward: the op's node id (vouch.node). Backward: the forward node it
  /// differentiates (vouch.vjp_of).
  int64_t node = 0;
  Direction direction = Direction::Forward;
  /// Backward: position among the backward ops of `node`; forward: 0.
  int64_t step = 0;
  std::string op;      ///< dialect name without `vouch.`
  std::string capsule; ///< the capsule's name; see AcceptedGraphPlan::capsule
  std::string kernel;  ///< the symbol codegen emits for this op
  /// The fused kernel this op runs in (vouch-fuse-pointwise), or empty when
  /// the op has a kernel (or library call) of its own.
  std::string fusion;
  std::string location; ///< `file:line:col`, or `unknown`
  /// The composite op (scaled_dot_product_attention) whose composed form
  /// this op is part of, or empty when the model wrote the op itself.
  std::string composedFrom;
  /// Which of its forms: "composed" (batched GEMMs and a masked softmax) or
  /// "fused" (flash_attention); empty with composedFrom.
  std::string form;
  std::vector<std::vector<int64_t>> operandShapes;
  /// One shape per result, in order (layer_norm_grad has three).
  std::vector<std::vector<int64_t>> resultShapes;
  std::string elementType; ///< "f32", "f64"
  bool transposeLhs = false, transposeRhs = false;
  /// The library call for cublas / cublaslt capsules (formatGemmCall);
  /// empty for kernels vouch emits itself.
  std::string call;
  /// The model's state the op reads and, in training steps, updates in place
  /// (batch_norm's running statistics), by name; empty for other ops.
  std::vector<std::string> state;
  /// cross_entropy(_grad)'s `classes` where it counts fewer entries than the
  /// class axis holds (vouch-pad-classes' padding); 0 otherwise.
  int64_t classes = 0;
};

/// The training step's own work besides the model's ops, in the order a
/// step runs it: batch selection first, the optimizer's update last.
struct StepWork {
  std::string role;    ///< "batch selection", "optimizer adam"
  std::string capsule; ///< the capsule's name; its entry is in capsules()
};

/// Adjacent planned ops with one capsule: what one lowering step covers.
struct CoalescedGroup {
  std::string capsule;
  size_t first = 0; ///< index into ops()
  size_t count = 0;
};

class AcceptedGraphPlan {
public:
  const std::string &model() const { return model_; }
  const BackendProfile &profile() const { return profile_; }
  bool deterministic() const { return deterministic_; }
  bool requireEvidence() const { return requireEvidence_; }
  const std::vector<PlannedOp> &ops() const { return ops_; }
  /// Batch selection and the optimizer (empty for a model without a train
  /// clause).
  const std::vector<StepWork> &stepWork() const { return stepWork_; }
  /// The capsule of a step's own work.
  const KernelCapsule &capsule(const StepWork &work) const;
  /// Every capsule the plan uses, once, in order of first use.
  const std::vector<KernelCapsule> &capsules() const { return capsules_; }
  /// The capsule a planned op uses.
  const KernelCapsule &capsule(const PlannedOp &op) const;
  /// Runs of adjacent ops() with the same capsule.
  std::vector<CoalescedGroup> coalesced() const;

private:
  friend class ::vouch::AssuranceGate;
  AcceptedGraphPlan(std::string model, BackendProfile profile,
                    const GateOptions &options, std::vector<PlannedOp> ops,
                    std::vector<StepWork> stepWork,
                    std::vector<KernelCapsule> capsules);

  std::string model_;
  BackendProfile profile_;
  bool deterministic_ = false, requireEvidence_ = false;
  std::vector<PlannedOp> ops_;
  std::vector<StepWork> stepWork_;
  std::vector<KernelCapsule> capsules_;
};

/// One failed obligation.
struct GateFailure {
  Obligation obligation = Obligation::Capsule;
  std::string op;       ///< dialect name without `vouch.`; empty: the model
  std::string location; ///< `file:line:col`, or `unknown`
  std::string message;  ///< one sentence, without the obligation's name
};

/// Why the gate refused a model: every failed obligation, in op order
/// (model-wide failures first).
struct GateRejection {
  std::string model;
  std::string profile; ///< the profile's spec()
  Device device = Device::Cpu;
  std::vector<GateFailure> failures;
};

} // namespace vouch::capsules

#endif // VOUCH_CAPSULES_ACCEPTEDPLAN_H
