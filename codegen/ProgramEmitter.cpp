//===- ProgramEmitter.cpp - an accepted plan as a runtime Program -*- C++ -*-===//
#include "codegen/ProgramEmitter.h"

#include <map>
#include <set>

#include "capsules/Binding.h"
#include "codegen/ModelDescription.h"
#include "codegen/recipes/Recipe.h"
#include "ir/OpTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "passes/Passes.h"
#include "passes/TapeLayout.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

/// Consecutive ops of one fusion group form one step; every other op is a
/// step of its own.
std::vector<StepGroup> groupSteps(ArrayRef<Operation *> ops) {
  std::vector<StepGroup> groups;
  StringAttr open;
  for (Operation *op : ops) {
    auto fused = op->getAttrOfType<StringAttr>(kFusionGroupAttr);
    if (!fused || fused != open || groups.empty())
      groups.emplace_back();
    groups.back().ops.push_back(op);
    open = fused;
  }
  return groups;
}

class Emitter {
public:
  Emitter(ModelOp model, const AcceptedGraphPlan &plan, Target target)
      : model(model), plan(plan), target(target),
        builder(std::make_unique<ProgramBuilder>(model, target)) {
    for (const capsules::PlannedOp &p : plan.ops())
      planned[p.kernel] = &p;
    builder->setProducts(plan.profile().products);
  }

  FailureOr<std::unique_ptr<ProgramBuilder>> run();

private:
  struct NodeRecord {
    std::string capsule, kernel;
    int32_t afterStep = -1;
  };
  LogicalResult emitSteps(ArrayRef<Operation *> ops, const std::string &phase,
                          std::string &schedule);
  LogicalResult emitGroup(StepGroup &group, const std::string &phase,
                          std::string &schedule);
  std::vector<std::string> savedNames(ArrayRef<Operation *> vjp) const;
  /// `op`'s entry in the plan, by its kernel symbol; null when it has none.
  const capsules::PlannedOp *plannedEntry(Operation *op) const;

  ModelOp model;
  const AcceptedGraphPlan &plan;
  Target target;
  std::unique_ptr<ProgramBuilder> builder;
  llvm::StringMap<const capsules::PlannedOp *> planned;
  /// The recipe of each planned op, looked up once through its capsule's
  /// provider: aliasing and emission use the same one.
  llvm::DenseMap<Operation *, const KernelRecipe *> recipes;
  std::map<Operation *, NodeRecord> nodes;
};

const capsules::PlannedOp *Emitter::plannedEntry(Operation *op) const {
  auto symbol = op->getAttrOfType<StringAttr>(kKernelAttr);
  return symbol ? planned.lookup(symbol.getValue()) : nullptr;
}

LogicalResult Emitter::emitGroup(StepGroup &group, const std::string &phase,
                                 std::string &schedule) {
  const KernelRecipe *recipe = nullptr;
  std::set<std::string> capsuleNames;
  for (Operation *op : group.ops) {
    const capsules::PlannedOp *entry = plannedEntry(op);
    if (!entry)
      return op->emitOpError("has no entry in the accepted plan");
    group.planned.push_back(entry);
    const capsules::KernelCapsule &capsule = plan.capsule(*entry);
    capsuleNames.insert(capsule.name);
    const KernelRecipe *mine = recipes.lookup(op);
    if (!mine)
      return op->emitOpError("capsule `")
             << capsule.name << "` (provider " << toString(capsule.provider)
             << ") has no kernel recipe in codegen for the "
             << (target == Target::Cuda ? "cuda" : "cpu") << " target";
    capsules::KernelHandler handler{
        mine->name().str(), op->getName().stripDialect().str(),
        mine->provider(op, target),
        target == Target::Cuda ? capsules::Device::Cuda : capsules::Device::Cpu};
    capsules::Expected<capsules::ExecutableKernel> bound =
        capsules::ExecutableKernel::bind(capsule, handler);
    if (!bound)
      return op->emitOpError(bound.error());
    if (recipe && recipe != mine)
      return op->emitOpError("is fused with ops of another recipe");
    recipe = mine;
  }
  int32_t before = builder->stepCount();
  if (failed(recipe->emit(group, *builder)))
    return failure();
  int32_t after = builder->stepCount();
  builder->setCapsule(before, llvm::join(capsuleNames, ", "));
  // A bf16 twin's group runs under both capsules: only one launch, the one
  // storing the twin, may (an op of several launches would name the
  // rounding's capsule on launches that do not round).
  if (bf16TwinStoreOf(group) && after != before + 1)
    return group.ops.front()->emitOpError("codegen: stores a bf16 twin in ")
           << (after - before) << " launches; a twin's op must store it in one";
  llvm::SmallVector<Value> results;
  for (Operation *op : group.ops)
    results.append(op->result_begin(), op->result_end());
  for (int32_t s : builder->markWritten(before, results))
    return group.ops.front()->emitOpError("codegen: step ")
               << s << " (" << builder->stepWhat(s)
               << ") writes none of the group's results",
           failure();
  // An op whose kernels may write its result over an operand (the op
  // table's inPlaceOperand) and that runs as one step of its own: the
  // storage plan may let it (codegen/StoragePlan.h).
  if (group.ops.size() == 1 && after == before + 1) {
    Operation *op = group.ops.front();
    const OpFacts *facts = findOpFacts(op->getName().stripDialect().str());
    if (facts && facts->inPlaceOperand >= 0 &&
        facts->inPlaceOperand < static_cast<int32_t>(op->getNumOperands()) &&
        op->getNumResults() == 1 &&
        op->getOperand(facts->inPlaceOperand).getType() == op->getResult(0).getType())
      builder->allowInPlace(before, op->getOperand(facts->inPlaceOperand), op->getResult(0));
  }
  // Every launch of the group, in order (flash_attention_grad has three), so
  // the schedule and the tape name each kernel that runs.
  std::string what;
  for (int32_t s = before; s < after; ++s)
    what += (s > before ? " + " : "") + builder->stepWhat(s);
  if (after == before)
    what = "alias of " + builder->bufferName(group.ops.front()->getOperand(0)) +
           " (the same values: no kernel)";
  if (after > before) {
    schedule += "  " + phase + " " + what;
    if (group.ops.size() > 1) {
      schedule += " = fused";
      for (Operation *op : group.ops)
        schedule += " " + op->getName().stripDialect().str();
    } else {
      schedule += " (" + group.ops.front()->getName().stripDialect().str() + ")";
    }
    // The binding ExecutableKernel::bind checked above: the recipe that emitted
    // the launch computes the capsule's op, as its provider, on its device.
    schedule += " [" + llvm::join(capsuleNames, ", ") + "] bound to recipe " +
                recipe->name().str() + "\n";
  } else {
    schedule += "  " + phase + " no launch: " +
                group.ops.front()->getName().stripDialect().str() + " aliases " +
                builder->bufferName(group.ops.front()->getOperand(0)) +
                " (the same values) [" + llvm::join(capsuleNames, ", ") + "]\n";
  }
  for (auto [op, entry] : llvm::zip(group.ops, group.planned))
    nodes[op] = {entry->capsule, what, builder->stepCount() - 1};
  return success();
}

LogicalResult Emitter::emitSteps(ArrayRef<Operation *> ops,
                                 const std::string &phase,
                                 std::string &schedule) {
  for (StepGroup &group : groupSteps(ops))
    if (failed(emitGroup(group, phase, schedule)))
      return failure();
  return success();
}

/// The buffers a node's VJP reads that the forward pass wrote: its saved
/// values, by the model's names where it has them.
std::vector<std::string> Emitter::savedNames(ArrayRef<Operation *> vjp) const {
  std::vector<std::string> saved;
  for (Operation *b : vjp)
    for (Value v : b->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && def->hasAttr(kVjpOfAttr))
        continue;
      std::string name = builder->bufferName(v);
      if (std::find(saved.begin(), saved.end(), name) == saved.end())
        saved.push_back(name);
    }
  return saved;
}

FailureOr<std::unique_ptr<ProgramBuilder>> Emitter::run() {
  FailureOr<TrainingSignature> sig = trainingSignature(model);
  if (failed(sig))
    return failure();
  for (ParamOp p : sig->params)
    builder->addParam(p.getResult(), p.getName());
  for (StateOp s : sig->states)
    builder->addState(s.getResult(), s.getName());
  for (Operation *field : sig->fields)
    builder->addField(field->getResult(0),
                      field->getAttrOfType<mlir::StringAttr>("name").getValue());
  for (Operation &op : model.getBlock()) {
    if (isStructuralOp(&op))
      continue;
    // A result its recipe computes as a view of an operand shares that
    // operand's storage. A planned op's recipe is the one that computes it
    // as its capsule's provider (emitGroup binds and emits that one); an op
    // without a plan entry, which emitGroup refuses, is read by family.
    const KernelRecipe *recipe;
    if (const capsules::PlannedOp *entry = plannedEntry(&op))
      recipe = recipes[&op] =
          recipeFor(&op, target, plan.capsule(*entry).provider);
    else
      recipe = recipeFor(&op);
    Value alias = recipe ? recipe->aliasOf(&op) : Value();
    for (Value r : op.getResults())
      builder->addValue(r, alias);
  }

  TapeLayout layout = computeTapeLayout(model);
  bool cuda = target == Target::Cuda;
  std::string forward, prologue;
  if (failed(emitSteps(layout.forwardOps(), "forward", forward)))
    return failure();
  builder->endForward();
  builder->beginPrologue();
  if (failed(emitSteps(layout.prologue, "prologue", prologue)))
    return failure();
  builder->endPrologue();
  std::vector<std::string> vjpLines(layout.nodes.size());
  std::vector<std::pair<int32_t, int32_t>> vjpRanges;
  for (auto [i, node] : llvm::enumerate(layout.nodes)) {
    int32_t begin = builder->stepCount();
    if (failed(emitSteps(node.vjp, "vjp n" + std::to_string(node.id), vjpLines[i])))
      return failure();
    vjpRanges.push_back({begin, builder->stepCount()});
  }
  for (auto [i, node] : llvm::enumerate(layout.nodes)) {
    const NodeRecord &record = nodes[node.op];
    // A view ahead of every forward step has no step of its own to follow: it
    // is recorded with the first step's nodes (the tape keeps node order).
    // The state it updates in place (batch_norm's running statistics).
    std::vector<std::string> state;
    for (Value operand : node.op->getOperands())
      if (auto s = operand.getDefiningOp<StateOp>())
        state.push_back(s.getName().str());
    builder->addNode(node.id, node.op->getName().stripDialect(),
                     record.capsule, record.kernel, std::max(record.afterStep, 0),
                     vjpRanges[i].first, vjpRanges[i].second,
                     savedNames(node.vjp), std::move(state));
  }
  builder->setSignature(sig->grads, sig->loss, sig->output, sig->outputColumns);

  // The step as it runs: its batch, the forward ops, the tape's VJPs last
  // node first, the optimizer; the step's own work under the capsules the
  // gate accepted for it.
  std::string schedule =
      cuda ? "one training step (captured in a CUDA graph, replayed for every batch):\n"
           : "one training step:\n";
  auto stepWorkLine = [&](const capsules::StepWork &work) {
    const capsules::Provenance &where = plan.capsule(work).value.provenance;
    return "  " + work.role + " " + where.nativeSymbol + " [" + work.capsule +
           "]" + (where.note.empty() ? "" : ": " + where.note) + "\n";
  };
  const std::vector<capsules::StepWork> &work = plan.stepWork();
  if (!work.empty())
    schedule += stepWorkLine(work.front());
  schedule += forward + prologue;
  for (auto it = vjpLines.rbegin(); it != vjpLines.rend(); ++it)
    schedule += *it;
  for (size_t i = 1; i < work.size(); ++i)
    schedule += stepWorkLine(work[i]);
  if (!schedule.empty() && schedule.back() == '\n')
    schedule.pop_back();
  builder->appendSchedule(schedule);
  // The gate lists batch selection, then clipping when the model clips, then
  // the optimizer (AssuranceGate::checkStepWork).
  if (work.size() == 2)
    builder->setStepWorkCapsules(work[0].capsule, work[1].capsule);
  else if (work.size() == 3)
    builder->setStepWorkCapsules(work[0].capsule, work[2].capsule,
                                 work[1].capsule);
  return std::move(builder);
}

} // namespace

FailureOr<std::unique_ptr<ProgramBuilder>>
buildProgram(ModelOp model, const AcceptedGraphPlan &plan, Target target,
             bool reuseStorage) {
  FailureOr<std::unique_ptr<ProgramBuilder>> built =
      Emitter(model, plan, target).run();
  if (succeeded(built) && reuseStorage)
    (*built)->reuseStorage();
  return built;
}

} // namespace vouch::codegen
