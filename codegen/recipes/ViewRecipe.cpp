//===- ViewRecipe.cpp - reshape ---------------------------------*- C++ -*-===//
//
// A view shares its source's storage (ProgramBuilder aliases the buffer), so
// it adds no step on either target.
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

class ViewRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "view"; }
  bool handles(Operation *op) const override { return familyOf(op) == OpFamily::View; }
  Value aliasOf(Operation *op) const override { return op->getOperand(0); }
  LogicalResult emit(const StepGroup &, ProgramBuilder &) const override {
    return success();
  }
};

const ViewRecipe recipe;
const RecipeRegistration registration(&recipe);

} // namespace

} // namespace vouch::codegen
