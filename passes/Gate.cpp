//===- Gate.cpp - the assurance gate ----------------------------*- C++ -*-===//
//
// One banner section per group of obligations. Each check appends failures
// and returns; nothing stops at the first failure, so a rejection lists
// everything wrong with the model at once.
//
//===----------------------------------------------------------------------===//
#include "passes/Gate.h"

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <set>

#include "capsules/Catalog.h"
#include "capsules/GemmCall.h"
#include "capsules/Registry.h"
#include "ir/GemmDims.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/Pass.h"
#include "passes/Plan.h"
#include "runtime/cuda/gemm_call.h"

namespace vouch {
#define GEN_PASS_DECL_GATEPASS
#define GEN_PASS_DEF_GATEPASS
#include "passes/Passes.h.inc"
} // namespace vouch

using namespace mlir;
using vouch::capsules::Device;
using vouch::capsules::Direction;
using vouch::capsules::KernelCapsule;
using vouch::capsules::Obligation;
using vouch::capsules::Provider;

namespace vouch {

namespace {

constexpr uint64_t kUInt32Max = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kInt32Max = std::numeric_limits<int32_t>::max();

std::string str(std::string_view s) { return std::string(s); }

std::string quoted(StringRef s) { return "`" + s.str() + "`"; }

/// The operand and result types of an op, labelled for messages.
std::vector<std::pair<std::string, Type>> valueTypes(Operation *op) {
  std::vector<std::pair<std::string, Type>> out;
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    out.push_back({"operand " + std::to_string(i), v.getType()});
  for (auto [i, v] : llvm::enumerate(op->getResults()))
    out.push_back({op->getNumResults() == 1 ? "the result"
                                            : "result " + std::to_string(i),
                   v.getType()});
  return out;
}

/// Appends `c` to the capsules a plan uses unless it is there already (each
/// capsule once, in order of first use).
void keepOnce(std::vector<KernelCapsule> &used, const KernelCapsule &c) {
  if (llvm::none_of(used, [&](const KernelCapsule &u) { return u.name == c.name; }))
    used.push_back(c);
}

std::string typeString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return os.str();
}

} // namespace

/// The only maker of AcceptedGraphPlan (its constructor's one friend).
class AssuranceGate {
public:
  AssuranceGate(ModelOp model, const capsules::BackendProfile &profile,
                const GateOptions &options)
      : model(model), profile(profile), options(options),
        registry(options.registry ? *options.registry
                                  : capsules::defaultRegistry()) {}

  FailureOr<AcceptedGraphPlan> run(GateRejection *rejection);

private:
  void fail(Operation *op, Obligation obligation, std::string message) {
    failures.push_back({op, obligation, std::move(message)});
  }

  void checkProfile();
  void checkShapes(Operation *op);
  void checkIdentity(Operation *op, StringRef name, StringRef prefix,
                     const KernelCapsule &c);
  std::vector<capsules::StepWork>
  checkStepWork(std::vector<KernelCapsule> &used);
  void checkCapsuleShape(Operation *op, const KernelCapsule &c);
  void checkPolicy(Operation *op, const KernelCapsule &c);
  void checkVjp(Operation *op, const PlanPosition &position,
                const KernelCapsule &c);
  void checkEvidence(Operation *op, const KernelCapsule &c);
  const KernelCapsule *checkCapsule(Operation *op);
  void checkSymbol(Operation *op);
  capsules::PlannedOp describe(Operation *op, const PlanPosition &position,
                               const KernelCapsule &c);
  void report(GateRejection *rejection);

  struct Failure {
    Operation *op; ///< the model for model-wide failures
    Obligation obligation;
    std::string message;
  };

  ModelOp model;
  const capsules::BackendProfile &profile;
  const GateOptions &options;
  const capsules::CapsuleRegistry &registry;
  std::vector<Failure> failures;
  std::set<int64_t> nodesWithBackward;
  std::map<std::string, Operation *> symbols;
};

//===----------------------------------------------------------------------===//
// Model-wide: the profile is usable here, and is the one planned for
//===----------------------------------------------------------------------===//

void AssuranceGate::checkProfile() {
  for (Provider p : profile.requiredProviders)
    if (!capsules::providerLinked(p))
      fail(model, Obligation::Profile,
           "profile " + quoted(profile.name) + " needs provider " +
               quoted(str(toString(p))) + ", but " +
               capsules::providerUnavailableReason(p));
  if (auto planned = model->getAttrOfType<StringAttr>(kProfileAttr))
    if (planned.getValue() != profile.spec())
      fail(model, Obligation::Profile,
           "the model was planned for profile " + quoted(planned.getValue()) +
               ", not " + quoted(profile.spec()));
}

//===----------------------------------------------------------------------===//
// Shapes and the UInt32 CUDA ABI (independent of the capsule)
//===----------------------------------------------------------------------===//

void AssuranceGate::checkShapes(Operation *op) {
  for (auto &[what, type] : valueTypes(op)) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape()) {
      fail(op, Obligation::Shape,
           what + " has type " + typeString(type) + ", not a static shape");
      continue;
    }
    if (profile.device != Device::Cuda)
      continue; // host kernels index with int64
    // `count` is the element count; `nonEmpty` the product of the non-zero
    // extents, checked on its own: a kernel's index arithmetic multiplies
    // extents (a row's spatial product, a stride) before any empty axis
    // makes the tensor empty, so an empty batch or channel axis must not
    // hide spatial axes whose product does not fit.
    unsigned __int128 count = 1, nonEmpty = 1;
    for (auto [axis, extent] : llvm::enumerate(tensor.getShape())) {
      count *= static_cast<uint64_t>(extent);
      if (extent != 0 && nonEmpty <= kUInt32Max)
        nonEmpty *= static_cast<uint64_t>(extent);
      if (static_cast<uint64_t>(extent) > kUInt32Max)
        fail(op, Obligation::Abi,
             "axis " + std::to_string(axis) + " of " + what + " has extent " +
                 std::to_string(extent) +
                 ", more than the UInt32 CUDA ABI allows (4294967295)");
    }
    if (count > kUInt32Max)
      fail(op, Obligation::Abi,
           what + " (" + typeString(type) + ") has " +
               (count > std::numeric_limits<uint64_t>::max()
                    ? std::string("more than 2^64")
                    : std::to_string(static_cast<uint64_t>(count))) +
               " elements, more than the UInt32 CUDA ABI allows "
               "(4294967295): its last index does not fit");
    else if (nonEmpty > kUInt32Max)
      fail(op, Obligation::Abi,
           what + " (" + typeString(type) +
               ") is empty, but its non-zero extents multiply to more than the "
               "UInt32 CUDA ABI allows (4294967295): an index over them does "
               "not fit");
  }
  // The counts an op's kernels form beyond its tensors' (pooling's spatial
  // products, window volumes, padded extents; a convolution's window
  // geometry), each checked on its own.
  if (auto indexed = dyn_cast<IndexCountsOpInterface>(op);
      indexed && profile.device == Device::Cuda) {
    SmallVector<std::pair<std::string, uint64_t>> counts;
    indexed.getIndexCounts(counts);
    for (auto &[what, count] : counts)
      if (count > kUInt32Max)
        fail(op, Obligation::Abi,
             what + " of vouch." + op->getName().stripDialect().str() + " is " +
                 (count == std::numeric_limits<uint64_t>::max()
                      ? std::string("at least 2^64")
                      : std::to_string(count)) +
                 ", more than the UInt32 CUDA ABI allows (4294967295): its "
                 "kernels index with it");
  }
}

void AssuranceGate::checkCapsuleShape(Operation *op, const KernelCapsule &c) {
  const bool blas =
      c.provider == Provider::Cublas || c.provider == Provider::Cublaslt;
  for (auto &[what, type] : valueTypes(op)) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      continue; // reported by checkShapes
    if (c.maxRank > 0 && tensor.getRank() > c.maxRank)
      fail(op, Obligation::Shape,
           what + " has rank " + std::to_string(tensor.getRank()) +
               "; capsule " + quoted(c.name) + " handles rank ≤ " +
               std::to_string(c.maxRank));
    if (blas && tensor.hasStaticShape())
      for (auto [axis, extent] : llvm::enumerate(tensor.getShape()))
        if (static_cast<uint64_t>(extent) > kInt32Max)
          fail(op, Obligation::Abi,
               "axis " + std::to_string(axis) + " of " + what +
                   " has extent " + std::to_string(extent) + "; " +
                   str(toString(c.provider)) +
                   " takes int extents (≤ 2147483647)");
  }
  // The fused attention kernels hold a head's features in registers in
  // chunks of 64, at most kMaxAttentionHeadDim of them.
  if (findOpFacts(op->getName().stripDialect())->family == OpFamily::Attention &&
      c.provider == Provider::NativeCuda) {
    for (auto [name, features] :
         llvm::zip(std::array{"q", "v"}, attentionHeadFeatures(op))) {
      if (features > kMaxAttentionHeadDim)
        fail(op, Obligation::Shape,
             std::string(name) + "'s heads have " + std::to_string(features) +
                 " features; capsule " + quoted(c.name) + " handles at most " +
                 std::to_string(kMaxAttentionHeadDim) +
                 " (build with --attention composed)");
    }
  }
  // A bf16 value (vouch.round_bf16's) is read only where it is a library
  // product's CUDA_R_16BF operand under bf16 products, a native cuda
  // kernel's bf16 operand (the op table's bf16Operand, whose shape
  // attention64.cuh's kernels take) under bf16 products, or viewed by a
  // reshape; every other kernel reads the run's real type.
  bool bf16Products =
      capsules::productPrecisionOf(c.numeric, profile.products) ==
      capsules::ProductPrecision::Bf16;
  auto readsBf16 = [&](size_t i) {
    return bf16Products &&
           (blas || (c.provider == Provider::NativeCuda &&
                     bf16OperandOf(op) == static_cast<int32_t>(i)));
  };
  if (!isa<ReshapeOp>(op))
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      auto tensor = dyn_cast<RankedTensorType>(operand.getType());
      if (!tensor || !tensor.getElementType().isBF16() || readsBf16(i))
        continue;
      fail(op, Obligation::Layout,
           "operand " + std::to_string(i) + " is bf16, which capsule " +
               quoted(c.name) + " does not read (under products=bf16 cuBLAS "
               "and cuBLASLt products read bf16 operands, and qkv_attention's "
               "kernels their qkv where its heads have at most " +
               std::to_string(kAttention64MaxHeadDim) + " features)");
    }
  bool flagged = op->hasAttr("transpose_lhs") || op->hasAttr("transpose_rhs");
  if (flagged && !c.acceptsTransposeFlags)
    fail(op, Obligation::Layout,
         "the op reads an operand through a transpose flag, which capsule " +
             quoted(c.name) + " does not accept");
}

//===----------------------------------------------------------------------===//
// The capsule: exists, computes forward, is who it says it is
//===----------------------------------------------------------------------===//

const KernelCapsule *AssuranceGate::checkCapsule(Operation *op) {
  StringRef name = op->getName().stripDialect();
  auto attr = op->getAttrOfType<StringAttr>(kCapsuleAttr);
  if (!attr && isa<CompositeOpInterface>(op)) {
    fail(op, Obligation::Capsule,
         "vouch." + name.str() + " is a composite op: vouch-decompose "
         "replaces it by its composed form's ops before planning (run it "
         "before vouch-autodiff), and they have the capsules");
    return nullptr;
  }
  if (!attr) {
    std::string tried;
    for (Provider p : profile.preferenceFor(name.str(), productExtents(op)))
      tried += (tried.empty() ? "" : ", ") + str(toString(p));
    fail(op, Obligation::Capsule,
         "no capsule for vouch." + name.str() + " on device " +
             str(toString(profile.device)) + " under profile " +
             quoted(profile.name) + " (providers tried: " + tried + ")");
    return nullptr;
  }
  const KernelCapsule *c = registry.find(attr.getValue().str());
  if (!c) {
    fail(op, Obligation::Capsule,
         "capsule " + quoted(attr.getValue()) + " is not in the registry");
    return nullptr;
  }
  if (!c->supportsForward)
    fail(op, Obligation::Capsule,
         "capsule " + quoted(c->name) + " does not compute forward values");
  return c;
}

/// `name`: what the capsule must implement, the op's dialect name or the
/// step's own work (e.g. "adam_step"); `prefix` is how messages spell it
/// ("vouch." for ops).
void AssuranceGate::checkIdentity(Operation *op, StringRef name,
                                  StringRef prefix, const KernelCapsule &c) {
  std::string provider(toString(c.provider));
  if (c.op != name)
    fail(op, Obligation::Identity,
         "capsule " + quoted(c.name) + " implements " + prefix.str() + c.op +
             ", not " + prefix.str() + name.str());
  if (c.device != profile.device)
    fail(op, Obligation::Identity,
         "capsule " + quoted(c.name) + " runs on device " +
             str(toString(c.device)) + ", but profile " +
             quoted(profile.name) + " targets " +
             str(toString(profile.device)));
  if (!capsules::providerRunsOn(c.provider, c.device))
    fail(op, Obligation::Identity,
         "capsule " + quoted(c.name) + " claims provider " + provider +
             " on device " + str(toString(c.device)) + ", where " + provider +
             " does not run");
  if (!profile.allowsProvider(c.provider)) {
    std::string allowed;
    for (Provider p : profile.providers)
      allowed += (allowed.empty() ? "" : ", ") + str(toString(p));
    fail(op, Obligation::Identity,
         "profile " + quoted(profile.name) + " does not use provider " +
             provider + " (capsule " + quoted(c.name) + "); it uses " +
             allowed);
  }
  if (!capsules::providerLinked(c.provider))
    fail(op, Obligation::Availability,
         "capsule " + quoted(c.name) + " needs provider " + provider + ", but " +
             capsules::providerUnavailableReason(c.provider));
}

//===----------------------------------------------------------------------===//
// Policies: trust, numerics, determinism
//===----------------------------------------------------------------------===//

void AssuranceGate::checkPolicy(Operation *op, const KernelCapsule &c) {
  if (!capsules::allowsTrust(profile.assurance, c.trust)) {
    std::string accepted;
    for (auto t : {capsules::TrustLevel::Verified, capsules::TrustLevel::Checked,
                   capsules::TrustLevel::Fuzzed,
                   capsules::TrustLevel::TrustedExternal})
      if (capsules::allowsTrust(profile.assurance, t))
        accepted += (accepted.empty() ? "" : ", ") + str(toString(t));
    fail(op, Obligation::Trust,
         "capsule " + quoted(c.name) + " has trust level " +
             str(toString(c.trust)) + "; profile " + quoted(profile.name) +
             " (assurance policy " + str(toString(profile.assurance)) +
             ") accepts " + accepted);
  }

  const capsules::NumericalPolicy &n = c.numeric;
  const capsules::NumericsAllowance &allow = profile.numerics;
  auto numerics = [&](const char *field, std::string_view value,
                      const char *required) {
    fail(op, Obligation::Numerics,
         "capsule " + quoted(c.name) + " declares " + field + "=" + str(value) +
             "; profile " + quoted(profile.name) + " requires " + required);
  };
  if (n.round == capsules::Rounding::ImplementationDefined &&
      !allow.implementationDefinedRounding)
    numerics("round", toString(n.round), "round=nearest-even");
  if (n.subnormal != capsules::Subnormals::Preserved &&
      !allow.subnormalFlushOrImplementationDefined)
    numerics("subnormal", toString(n.subnormal), "subnormal=preserved");
  if (n.contract != capsules::Contraction::None && !allow.contraction)
    numerics("contract", toString(n.contract), "contract=none");
  if (n.reduce != capsules::ReductionOrder::None &&
      n.reduce != capsules::ReductionOrder::LeftFold &&
      !allow.implementationDefinedReduction)
    numerics("reduce", toString(n.reduce), "reduce=left-fold or none");

  // A fixed tree or a library's fixed order gives the same bits every run
  // (on one GPU model and toolkit); only an order that may change does not.
  if (options.deterministic &&
      n.reduce == capsules::ReductionOrder::ImplementationDefined)
    fail(op, Obligation::Determinism,
         "determinism was requested, but capsule " + quoted(c.name) +
             " declares reduce=implementation-defined: its summation order "
             "may change from run to run (determinism accepts none, "
             "left-fold, fixed-order-tree, library-fixed)");
}

//===----------------------------------------------------------------------===//
// VJP and evidence
//===----------------------------------------------------------------------===//

void AssuranceGate::checkVjp(Operation *op, const PlanPosition &position,
                             const KernelCapsule &c) {
  if (position.direction != Direction::Forward ||
      !nodesWithBackward.count(position.node))
    return;
  if (c.vjpMode == capsules::VjpMode::None)
    fail(op, Obligation::Vjp,
         "node " + std::to_string(position.node) +
             " lies on the gradient path, but capsule " + quoted(c.name) +
             " is forward-only (vjp=none)");
  else if (c.vjp.claim.empty())
    fail(op, Obligation::Vjp,
         "capsule " + quoted(c.name) + " states no VJP contract");
}

void AssuranceGate::checkEvidence(Operation *op, const KernelCapsule &c) {
  if (c.value.claim.empty())
    fail(op, Obligation::Value,
         "capsule " + quoted(c.name) + " states no value contract");
  if (!options.requireEvidence)
    return;
  std::vector<std::pair<const char *, const capsules::ContractDescriptor *>>
      contracts = {{"shape", &c.shape}, {"layout", &c.layout},
                   {"value", &c.value}};
  if (c.vjpMode != capsules::VjpMode::None)
    contracts.push_back({"vjp", &c.vjp});
  for (auto &[name, d] : contracts)
    if (d->evidence.kind == capsules::EvidenceKind::NotProvided)
      fail(op, Obligation::Evidence,
           "capsule " + quoted(c.name) + " provides no evidence for its " +
               name + " contract");
}

void AssuranceGate::checkSymbol(Operation *op) {
  auto symbol = op->getAttrOfType<StringAttr>(kKernelAttr);
  if (!symbol || symbol.getValue().empty()) {
    fail(op, Obligation::Symbol, "the op has no kernel symbol (vouch.kernel)");
    return;
  }
  auto [it, fresh] = symbols.insert({symbol.getValue().str(), op});
  if (!fresh)
    fail(op, Obligation::Symbol,
         "kernel symbol " + quoted(symbol.getValue()) +
             " is also planned for the op at " +
             locationString(it->second->getLoc()));
}

//===----------------------------------------------------------------------===//
// The step's own work: batch selection and the optimizer
//===----------------------------------------------------------------------===//

/// A training step also selects its batch and updates every parameter: the
/// capsules of that work (capsules::stepCatalog) pass the same obligations
/// as an op's, failures located at the model.
std::vector<capsules::StepWork>
AssuranceGate::checkStepWork(std::vector<KernelCapsule> &used) {
  std::vector<capsules::StepWork> work;
  TrainAttr train = model.getTrainAttr();
  if (!train)
    return work; // nothing trains: no step
  std::optional<Provider> provider = capsules::stepProvider(profile.device);
  if (!provider) {
    fail(model, Obligation::Capsule,
         "no executor runs a training step on device " +
             str(toString(profile.device)));
    return work;
  }
  std::string optimizer = stringifyOptimizerKind(train.getOptimizer()).str();
  // In launch order: batch selection, clipping (only when the clause asks),
  // the optimizer (codegen/ProgramEmitter.cpp relies on it).
  DataAttr data = model.getDataAttr();
  bool tokens = data && data.getKind() == DataKind::Tokens;
  std::vector<std::pair<std::string, std::string>> roles = {
      {"batch selection", std::string(tokens ? capsules::kSelectWindowsWork
                                             : capsules::kSelectBatchWork)}};
  if (train.getClipGradNorm())
    roles.push_back({"gradient clipping",
                     std::string(capsules::kClipGradNormWork)});
  roles.push_back({"optimizer " + optimizer, capsules::optimizerWork(optimizer)});
  for (const auto &[role, what] : roles) {
    std::string name = capsules::capsuleName(*provider, what);
    const KernelCapsule *c = registry.find(name);
    if (!c) {
      fail(model, Obligation::Capsule,
           "no capsule " + quoted(name) + " for the step's " + role +
               " in the registry");
      continue;
    }
    checkIdentity(model, what, "", *c);
    checkPolicy(model, *c);
    checkEvidence(model, *c);
    work.push_back({role, c->name});
    keepOnce(used, *c);
  }
  return work;
}

//===----------------------------------------------------------------------===//
// The plan, the report of failures, and the run
//===----------------------------------------------------------------------===//

capsules::PlannedOp AssuranceGate::describe(Operation *op,
                                            const PlanPosition &position,
                                            const KernelCapsule &c) {
  capsules::PlannedOp p;
  p.node = position.node;
  p.direction = position.direction;
  p.step = position.step;
  p.op = op->getName().stripDialect().str();
  p.capsule = c.name;
  p.kernel = op->getAttrOfType<StringAttr>(kKernelAttr).getValue().str();
  if (auto group = op->getAttrOfType<StringAttr>(kFusionGroupAttr))
    p.fusion = group.str();
  p.location = locationString(op->getLoc());
  p.composedFrom = composedFrom(op->getLoc());
  // The form of the composite the op computes part of: a rounding made at
  // the location of the op computing its input (vouch-round-bf16-operands)
  // belongs to that op's form.
  Operation *formOp = op;
  if (auto round = dyn_cast<RoundBf16Op>(op))
    if (Operation *input = round.getInput().getDefiningOp();
        input && input->getLoc() == op->getLoc())
      formOp = input;
  if (!p.composedFrom.empty())
    p.form = findOpFacts(formOp->getName().stripDialect())->family ==
                     OpFamily::Attention
                 ? "fused"
                 : "composed";
  auto shapeOf = [](Type t) {
    ArrayRef<int64_t> s = cast<RankedTensorType>(t).getShape();
    return std::vector<int64_t>(s.begin(), s.end());
  };
  for (Value v : op->getOperands())
    p.operandShapes.push_back(shapeOf(v.getType()));
  for (Value v : op->getResults())
    p.resultShapes.push_back(shapeOf(v.getType()));
  // The run's element type: a result stored as bf16 (the op table's
  // bf16Result, under bf16 products) stands for the f32 value it rounds.
  Type element =
      cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
  const OpFacts *facts = findOpFacts(op->getName().stripDialect());
  bool bf16Result = element.isBF16() && facts && facts->bf16Result == 0;
  p.elementType =
      bf16Result ? std::string("f32") : typeString(element);
  p.transposeLhs = op->hasAttr("transpose_lhs");
  p.transposeRhs = op->hasAttr("transpose_rhs");
  for (Value v : op->getOperands())
    if (auto state = v.getDefiningOp<StateOp>())
      p.state.push_back(state.getName().str());
  if (auto classes = op->getAttrOfType<IntegerAttr>("classes"))
    p.classes = classes.getInt();
  // The call the runtime makes (runtime/cuda/gemm_call.cc): strided-batched
  // for a batch of more than one entry after GemmDims folds what it can.
  std::optional<GemmDims> dims = getGemmDims(op);
  bool batched = dims && dims->batch > 1;
  std::optional<capsules::GemmCall> call;
  if (c.provider == Provider::Cublas && p.op == "matmul")
    call = capsules::matmulCall(p.transposeLhs, p.transposeRhs, batched);
  else if (c.provider == Provider::Cublaslt && p.op == "linear")
    call = capsules::linearCall(op->getNumOperands() == 3);
  else if (c.provider == Provider::Cublaslt && p.op == "linear_weight_grad")
    call = capsules::linearWeightGradCall();
  if (call) {
    // f64 products are never rounded (the runtime ignores the option for them).
    const capsules::ProductPrecision products =
        p.elementType == "f32"
            ? capsules::productPrecisionOf(c.numeric, profile.products)
            : capsules::ProductPrecision::Fp32;
    call->bf16Operands = products == capsules::ProductPrecision::Bf16;
    // cuBLAS's A is the op's second operand, its B the first (GemmCall.h).
    auto isBf16 = [&](unsigned i) {
      return cast<RankedTensorType>(op->getOperand(i).getType())
          .getElementType()
          .isBF16();
    };
    call->aInPlace = call->bf16Operands && isBf16(1);
    call->bInPlace = call->bf16Operands && isBf16(0);
    // The op that stored a bf16 operand (through the reshapes that view it):
    // a rounding fused with its input's op stored by that op's kernel.
    auto storedBy = [&](unsigned i) {
      Operation *producer = viewedValue(op->getOperand(i)).getDefiningOp();
      if (!producer)
        return std::string("vouch.round_bf16");
      if (Operation *twin = bf16TwinProducer(producer))
        return "vouch.round_bf16, the bf16 twin " +
               twin->getName().getStringRef().str() + " stores";
      return producer->getName().getStringRef().str();
    };
    if (call->aInPlace)
      call->aStoredBy = storedBy(1);
    if (call->bInPlace)
      call->bStoredBy = storedBy(0);
    call->bf16Result = call->bf16Operands && bf16Result;
    // The extents the executor pads and the copies it makes for them: the
    // runtime's own rule (ProductPlan), so the report names every launch.
    using rt::cuda::ProductMath;
    const ProductMath math = products == capsules::ProductPrecision::Bf16
                                 ? ProductMath::Bf16
                             : products == capsules::ProductPrecision::Tf32
                                 ? ProductMath::Tf32
                                 : ProductMath::Fp32;
    if (std::optional<rt::cuda::ProductPlan> plan = planProduct(op, math))
      call->padding = rt::cuda::describe_padding(*plan, math, p.op == "linear",
                                                 dims->m, dims->n, dims->k);
    p.call = capsules::formatGemmCall(*call);
  }
  return p;
}

void AssuranceGate::report(GateRejection *rejection) {
  std::map<std::string, size_t> counts;
  for (const Failure &f : failures) {
    f.op->emitError() << "assurance gate [" << str(toString(f.obligation))
                      << "]: " << f.message;
    ++counts[str(toString(f.obligation))];
  }
  std::string kinds;
  for (auto &[name, count] : counts)
    kinds += (kinds.empty() ? "" : ", ") + name +
             (count > 1 ? " ×" + std::to_string(count) : "");
  model.emitError() << "assurance gate rejected model "
                    << quoted(model.getSymName()) << " under profile "
                    << quoted(profile.spec()) << ": " << failures.size()
                    << " failed obligation" << (failures.size() == 1 ? "" : "s")
                    << " (" << kinds << ")";
  if (!rejection)
    return;
  rejection->model = model.getSymName().str();
  rejection->profile = profile.spec();
  rejection->device = profile.device;
  rejection->failures.clear();
  for (const Failure &f : failures)
    rejection->failures.push_back(
        {f.obligation,
         f.op == model.getOperation() ? ""
                                      : f.op->getName().stripDialect().str(),
         locationString(f.op->getLoc()), f.message});
}

FailureOr<AcceptedGraphPlan> AssuranceGate::run(GateRejection *rejection) {
  checkProfile();
  std::vector<std::pair<Operation *, PlanPosition>> positions =
      planPositions(model);
  for (auto &[op, position] : positions)
    if (position.direction == Direction::Backward)
      nodesWithBackward.insert(position.node);

  std::vector<capsules::PlannedOp> planned;
  std::vector<KernelCapsule> used;
  for (auto &[op, position] : positions) {
    checkShapes(op);
    checkSymbol(op);
    const KernelCapsule *c = checkCapsule(op);
    if (!c)
      continue;
    checkIdentity(op, op->getName().stripDialect(), "vouch.", *c);
    checkCapsuleShape(op, *c);
    checkPolicy(op, *c);
    checkVjp(op, position, *c);
    checkEvidence(op, *c);
    if (!failures.empty())
      continue; // no plan will be made: only keep checking
    planned.push_back(describe(op, position, *c));
    keepOnce(used, *c);
  }

  std::vector<capsules::StepWork> stepWork = checkStepWork(used);

  if (!failures.empty()) {
    report(rejection);
    return failure();
  }
  return AcceptedGraphPlan(model.getSymName().str(), profile, options,
                           std::move(planned), std::move(stepWork),
                           std::move(used));
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

FailureOr<AcceptedGraphPlan> gateModel(ModelOp model,
                                       const capsules::BackendProfile &profile,
                                       const GateOptions &options,
                                       GateRejection *rejection) {
  return AssuranceGate(model, profile, options).run(rejection);
}

FailureOr<AcceptedGraphPlan> planAndGate(ModelOp model,
                                         const capsules::BackendProfile &profile,
                                         const GateOptions &options,
                                         GateRejection *rejection) {
  planModel(model, profile,
            options.registry ? *options.registry : capsules::defaultRegistry());
  return gateModel(model, profile, options, rejection);
}

const capsules::PlannedOp *plannedOpOf(const AcceptedGraphPlan &plan,
                                       Operation *op) {
  auto symbol = op->getAttrOfType<StringAttr>(kKernelAttr);
  if (!symbol)
    return nullptr;
  for (const capsules::PlannedOp &planned : plan.ops())
    if (planned.kernel == symbol.getValue())
      return &planned;
  return nullptr;
}

namespace {

struct GatePass : public impl::GatePassBase<GatePass> {
  using GatePassBase::GatePassBase;

  void runOnOperation() override {
    ModelOp model = getOperation();
    std::string spec = profile;
    if (spec.empty())
      if (auto planned = model->getAttrOfType<StringAttr>(kProfileAttr))
        spec = planned.getValue().str();
    if (spec.empty()) {
      model.emitError() << "vouch-gate needs a profile: run vouch-plan first "
                           "or pass profile=";
      return signalPassFailure();
    }
    capsules::Expected<capsules::BackendProfile> chosen =
        capsules::parseProfileSpec(spec);
    if (!chosen) {
      model.emitError() << chosen.error();
      return signalPassFailure();
    }
    GateOptions gateOptions;
    gateOptions.deterministic = deterministic;
    gateOptions.requireEvidence = requireEvidence;
    if (failed(gateModel(model, *chosen, gateOptions)))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
} // namespace vouch
