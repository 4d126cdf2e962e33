//===- Recipe.cpp - the recipe table and launch helpers ---------*- C++ -*-===//
#include "codegen/recipes/Recipe.h"

#include <algorithm>
#include <optional>

#include "mlir/IR/TypeUtilities.h"
#include "passes/Attributes.h"
#include "passes/Passes.h"
#include "passes/Plan.h"

using namespace mlir;

namespace vouch::codegen {

OpFamily familyOf(Operation *op) {
  const OpFacts *facts = findOpFacts(op->getName().stripDialect());
  return facts ? facts->family : OpFamily::Structural;
}

FailureOr<bool> storesBf16Result(Operation *op, bool cuda) {
  const OpFacts *facts = findOpFacts(op->getName().stripDialect());
  if (!facts || facts->bf16Result < 0 ||
      !getElementTypeOrSelf(op->getResult(facts->bf16Result).getType()).isBF16())
    return false;
  if (!cuda)
    return op->emitOpError("stores result ")
           << facts->bf16Result << " as bf16, which only cuda builds with bf16 products do";
  return true;
}

Value bf16TwinStoreOf(const StepGroup &group) {
  for (Operation *op : group.ops)
    if (Operation *producer = bf16TwinProducer(op);
        producer && producer == group.ops.front())
      return op->getResult(0);
  return {};
}

namespace {

std::vector<std::pair<int, const KernelRecipe *>> &registry() {
  static std::vector<std::pair<int, const KernelRecipe *>> recipes;
  return recipes;
}

} // namespace

RecipeRegistration::RecipeRegistration(const KernelRecipe *recipe,
                                       int priority) {
  auto &recipes = registry();
  auto at = std::upper_bound(
      recipes.begin(), recipes.end(), priority,
      [](int p, const std::pair<int, const KernelRecipe *> &entry) {
        return p < entry.first;
      });
  recipes.insert(at, {priority, recipe});
}

const std::vector<const KernelRecipe *> &kernelRecipes() {
  static const std::vector<const KernelRecipe *> recipes = [] {
    std::vector<const KernelRecipe *> ordered;
    for (const auto &entry : registry())
      ordered.push_back(entry.second);
    return ordered;
  }();
  return recipes;
}

namespace {

/// The first recipe that computes `op` (handles it and, for an op of a fused
/// group, computes fused groups) as `provider` on `target`; without a
/// provider, or when none matches, the first that computes it at all.
const KernelRecipe *findRecipe(Operation *op, Target target,
                               std::optional<capsules::Provider> provider) {
  // A bf16 twin's rounding is stored by its op's kernel: that op's recipe.
  if (Operation *producer = bf16TwinProducer(op))
    return findRecipe(producer, target, provider);
  // (The op a twin's rounding is fused with is no pointwise chain's.)
  bool fused = op->hasAttr(kFusionGroupAttr) && isFusible(op);
  const KernelRecipe *first = nullptr;
  for (const KernelRecipe *r : kernelRecipes()) {
    if (!r->handles(op) || (fused && !r->computesFusedGroups()))
      continue;
    if (!provider || r->provider(op, target) == *provider)
      return r;
    if (!first)
      first = r;
  }
  return first;
}

} // namespace

const KernelRecipe *recipeFor(Operation *op) {
  return findRecipe(op, Target::Cpu, std::nullopt);
}

const KernelRecipe *recipeFor(Operation *op, Target target,
                              capsules::Provider provider) {
  return findRecipe(op, target, provider);
}

uint32_t gridStrideBlocks(int64_t lanes) {
  return static_cast<uint32_t>(
      std::max<int64_t>(1, std::min<int64_t>((lanes + 255) / 256, 1056)));
}

std::string withKernel(std::string source, llvm::StringRef kernel) {
  for (size_t at; (at = source.find("@KERNEL@")) != std::string::npos;)
    source.replace(at, 8, kernel.str());
  return source;
}

void splitAt(llvm::ArrayRef<int64_t> shape, int64_t axis, int64_t &outer,
             int64_t &inner) {
  outer = 1;
  inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d)
    inner *= shape[d];
}

void addGridStrideStep(ProgramBuilder &builder, int32_t kernel,
                       llvm::ArrayRef<KernelArg> args, int64_t lanes) {
  if (builder.target() == Target::Cpu)
    builder.addKernelStep(kernel, args, 0, 0, 0);
  else
    builder.addKernelStep(kernel, args, gridStrideBlocks(lanes), 256, 1);
}

LongRowLaunch longRowLaunch(int64_t rows, int64_t n) {
  constexpr int64_t kLargestBlockShared = 227 * 1024;
  // long_row_part_bytes(n, sizeof(float), kLongRowParts)
  int64_t bytes = (n / 4 + kLongRowParts - 1) / kLongRowParts * 16;
  return {static_cast<uint32_t>(std::clamp<int64_t>(kLongRowParts * rows, kLongRowParts, 65534)),
          512, bytes <= kLargestBlockShared ? static_cast<uint32_t>(bytes) : 0u, 4};
}

} // namespace vouch::codegen
