//===- GemmRecipe.cpp - matmul and linear -----------------------*- C++ -*-===//
//
// Products are executor steps, not kernels: the runtime calls cuBLAS
// (matmul) or cuBLASLt with the bias epilogue (linear) on cuda, and
// runtime/cpu_kernels.h's matmul / linear on cpu, always with transpose
// flags (never a transposed copy). The extents come from ir/GemmDims.h.
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include "ir/GemmDims.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

class GemmRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "gemm"; }
  capsules::Provider provider(Operation *op, Target target) const override {
    if (target == Target::Cpu)
      return capsules::Provider::Reference;
    return isa<LinearOp>(op) ? capsules::Provider::Cublaslt
                             : capsules::Provider::Cublas;
  }
  bool handles(Operation *op) const override {
    return familyOf(op) == OpFamily::Gemm;
  }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    Operation *op = group.ops.front();
    const capsules::PlannedOp *entry = group.planned.front();
    bool cuda = builder.target() == Target::Cuda;
    if (cuda && entry->call.empty())
      return op->emitOpError("the plan names no library call for capsule `")
                 << entry->capsule << "`",
             failure();
    if (auto mm = dyn_cast<MatmulOp>(op)) {
      GemmDims d = getGemmDims(mm);
      builder.addGemmStep(d.transA, d.transB, d.batch, d.m, d.n, d.k,
                          mm.getLhs(), d.strideA, mm.getRhs(), d.strideB,
                          mm.getResult(),
                          cuda ? entry->call : "vouch::rt::matmul<T>");
      return success();
    }
    auto lin = cast<LinearOp>(op);
    GemmDims d = getGemmDims(lin);
    builder.addLinearStep(d.m, d.k, d.n, lin.getInput(), lin.getWeight(),
                          lin.getBias(), lin.getResult(),
                          cuda ? entry->call : "vouch::rt::linear<T>");
    return success();
  }
};

const GemmRecipe recipe;
const RecipeRegistration registration(&recipe);

} // namespace

} // namespace vouch::codegen
