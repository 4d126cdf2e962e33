//===- MaskRecipe.cpp - causal_mask ----------------------------*- C++ -*-===//
//
// causal_mask: the lower-triangular i1 mask (an int32 buffer of 0 / 1),
// runtime/cpu_kernels.h's causal_mask on cpu, runtime/cuda/kernels/mask.cuh's
// causal_mask_kernel on cuda (grid-stride, block 256). Extents are
// arguments: one kernel for every mask of a model.
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include "codegen/EmitSupport.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

// args: out, rows, columns.
const char *kCpuCausalMask = R"cpp(template <class T>
void @NAME@(const vouch::rt::ArgValue* args) {
  vouch::rt::causal_mask<int32_t>(static_cast<int32_t*>(args[0].ptr), args[1].i, args[2].i);
}
)cpp";

const char *kCudaCausalMask = R"cu(#include "mask.cuh"
extern "C" __global__ void @NAME@_f32(int* out, long long rows, long long columns) {
  vouch::causal_mask_kernel(out, rows, columns);
}
extern "C" __global__ void @NAME@_f64(int* out, long long rows, long long columns) {
  vouch::causal_mask_kernel(out, rows, columns);
}
)cu";

class MaskRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "mask"; }
  bool handles(Operation *op) const override { return isa<CausalMaskOp>(op); }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    auto op = cast<CausalMaskOp>(group.ops.front());
    bool cpu = builder.target() == Target::Cpu;
    ArrayRef<int64_t> shape = shapeOf(op.getResult());
    int32_t kernel =
        builder.kernel("causal_mask", cpu ? kCpuCausalMask : kCudaCausalMask);
    addGridStrideStep(builder, kernel,
                      {KernelArg::buffer(op.getResult()),
                       KernelArg::integer(shape[0]), KernelArg::integer(shape[1])},
                      shape[0] * shape[1]);
    return success();
  }
};

const MaskRecipe recipe;
// Before the pointwise recipe, which takes the generator family's fill.
const RecipeRegistration registration(&recipe, 4);

} // namespace

} // namespace vouch::codegen
