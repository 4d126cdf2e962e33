//===- Plan.cpp - a capsule and a kernel symbol for every op ----*- C++ -*-===//
//
// The vouch-plan pass and the planning API behind it. Planning asks the op
// only for its name (the capsule's `op`) and its tape position; which
// provider computes it is the profile's choice among the registry's
// capsules.
//
//===----------------------------------------------------------------------===//
#include "passes/Plan.h"

#include <cctype>
#include <map>

#include "mlir/IR/Builders.h"
#include "mlir/IR/Location.h"
#include "mlir/Pass/Pass.h"
#include "ir/GemmDims.h"
#include "passes/TapeLayout.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"

namespace vouch {
#define GEN_PASS_DECL_PLANPASS
#define GEN_PASS_DEF_PLANPASS
#include "passes/Passes.h.inc"
} // namespace vouch

using namespace mlir;

namespace vouch {

bool isPlannedOp(OperationName name) {
  return name.getDialectNamespace() == VouchDialect::getDialectNamespace() &&
         name.isRegistered() && !isStructuralOp(name);
}

std::vector<std::pair<Operation *, PlanPosition>> planPositions(ModelOp model) {
  TapeLayout layout = computeTapeLayout(model);
  llvm::DenseMap<Operation *, PlanPosition> positions;
  int64_t lastNode = -1;
  for (const TapeLayout::Node &node : layout.nodes) {
    lastNode = std::max(lastNode, node.id);
    positions[node.op] = {node.id, capsules::Direction::Forward, 0};
    for (auto [step, op] : llvm::enumerate(node.vjp))
      positions[op] = {node.id, capsules::Direction::Backward,
                       static_cast<int64_t>(step)};
  }
  for (Operation *op : layout.prologue)
    positions[op] = {++lastNode, capsules::Direction::Forward, 0};
  std::vector<std::pair<Operation *, PlanPosition>> out;
  for (Operation &op : model.getBlock())
    if (isPlannedOp(&op))
      out.push_back({&op, positions.lookup(&op)});
  return out;
}

std::string kernelSymbol(StringRef model, const PlanPosition &position,
                         StringRef op) {
  std::string name;
  for (char c : model)
    name += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) ||
                        name[0] == '_'))
    name = "model_" + name;
  if (position.direction == capsules::Direction::Forward)
    return name + "_n" + std::to_string(position.node) + "_" + op.str();
  return name + "_b" + std::to_string(position.node) + "_" +
         std::to_string(position.step) + "_" + op.str();
}

std::optional<capsules::ProductExtents> productExtents(Operation *op) {
  std::optional<GemmDims> d = getGemmDims(op);
  if (!d)
    return std::nullopt;
  return capsules::ProductExtents{d->batch, d->m, d->n, d->k};
}

std::optional<rt::cuda::ProductPlan> planProduct(Operation *op,
                                                 rt::cuda::ProductMath math) {
  std::optional<GemmDims> d = getGemmDims(op);
  if (!d)
    return std::nullopt;
  if (auto linear = dyn_cast<LinearOp>(op))
    return rt::cuda::plan_linear(math, d->m, d->k, d->n, bool(linear.getBias()));
  return rt::cuda::plan_gemm(math, d->transA, d->transB, d->batch, d->m, d->n,
                             d->k, d->strideA, d->strideB);
}

const capsules::KernelCapsule *
selectCapsule(StringRef op, const capsules::BackendProfile &profile,
              const capsules::CapsuleRegistry &registry,
              std::optional<capsules::ProductExtents> product) {
  std::vector<const capsules::KernelCapsule *> candidates =
      registry.forOp(op.str(), profile.device);
  for (capsules::Provider preferred : profile.preferenceFor(op.str(), product))
    for (const capsules::KernelCapsule *c : candidates)
      if (c->provider == preferred)
        return c;
  return candidates.empty() ? nullptr : candidates.front();
}

void planModel(ModelOp model, const capsules::BackendProfile &profile,
               const capsules::CapsuleRegistry &registry) {
  Builder b(model.getContext());
  model->setAttr(kProfileAttr, b.getStringAttr(profile.spec()));
  for (auto &[op, position] : planPositions(model)) {
    StringRef name = op->getName().stripDialect();
    op->setAttr(kKernelAttr, b.getStringAttr(kernelSymbol(
                                 model.getSymName(), position, name)));
    if (const capsules::KernelCapsule *c =
            selectCapsule(name, profile, registry, productExtents(op)))
      op->setAttr(kCapsuleAttr, b.getStringAttr(c->name));
    else
      op->removeAttr(kCapsuleAttr);
  }
}

std::string locationString(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return file.getFilename().str() + ":" + std::to_string(file.getLine()) +
           ":" + std::to_string(file.getColumn());
  if (auto name = dyn_cast<NameLoc>(loc))
    return locationString(name.getChildLoc());
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return locationString(call.getCallee());
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    // An op that does the work of several (a fold's): each of their places.
    SmallVector<std::string> places;
    for (Location inner : fused.getLocations()) {
      std::string s = locationString(inner);
      if (s != "unknown" && !llvm::is_contained(places, s))
        places.push_back(s);
    }
    return places.empty() ? "unknown" : llvm::join(places, " + ");
  }
  return "unknown";
}

std::string composedFrom(Location loc) {
  auto name = dyn_cast<NameLoc>(loc);
  if (!name)
    return "";
  StringRef op = name.getName().getValue();
  if (!op.consume_front(VouchDialect::getDialectNamespace().str() + "."))
    return "";
  return op.str();
}

//===----------------------------------------------------------------------===//
// vouch-plan
//===----------------------------------------------------------------------===//

namespace {

struct PlanPass : public impl::PlanPassBase<PlanPass> {
  using PlanPassBase::PlanPassBase;

  void runOnOperation() override {
    ModelOp model = getOperation();
    capsules::Expected<capsules::BackendProfile> chosen =
        capsules::parseProfileSpec(profile);
    if (!chosen) {
      model.emitError() << chosen.error();
      return signalPassFailure();
    }
    planModel(model, *chosen, capsules::defaultRegistry());
  }
};

} // namespace

mlir::Value viewedValue(mlir::Value value) {
  while (auto reshape = value.getDefiningOp<ReshapeOp>())
    value = reshape.getInput();
  return value;
}

mlir::Operation *bf16TwinProducer(Operation *op) {
  auto round = dyn_cast<RoundBf16Op>(op);
  auto group = op->getAttrOfType<StringAttr>(kFusionGroupAttr);
  if (!round || !group)
    return nullptr;
  auto result = dyn_cast<OpResult>(round.getInput());
  if (!result)
    return nullptr;
  Operation *producer = result.getOwner();
  return producer->getAttr(kFusionGroupAttr) == group &&
                 bf16TwinOf(producer) ==
                     static_cast<int32_t>(result.getResultNumber())
             ? producer
             : nullptr;
}

} // namespace vouch
