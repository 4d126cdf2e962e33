//===- LossRecipe.cpp - mse_loss --------------------------------*- C++ -*-===//
//
// cuda: runtime/cuda/kernels/loss.cuh, one block with a fixed-order tree.
// cpu: runtime/cpu_kernels.h's mse_loss (a left fold).
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include "codegen/EmitSupport.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

const char *kCpuSource = R"cpp(template <class T>
void @NAME@(const vouch::rt::ArgValue* args) {
  static_cast<T*>(args[2].ptr)[0] = vouch::rt::mse_loss<T>(
      args[3].i, static_cast<const T*>(args[0].ptr), static_cast<const T*>(args[1].ptr));
}
)cpp";

const char *kCudaSource = R"cu(#include "loss.cuh"
extern "C" __global__ void @NAME@_f32(const float* pred, const float* target, float* out, long long n) {
  vouch::mse_loss_kernel<float>(pred, target, out, n);
}
extern "C" __global__ void @NAME@_f64(const double* pred, const double* target, double* out, long long n) {
  vouch::mse_loss_kernel<double>(pred, target, out, n);
}
)cu";

class LossRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "loss"; }
  bool handles(Operation *op) const override { return familyOf(op) == OpFamily::Loss; }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    auto op = cast<MseLossOp>(group.ops.front());
    bool cuda = builder.target() == Target::Cuda;
    int32_t kernel = builder.kernel("mse_loss", cuda ? kCudaSource : kCpuSource);
    builder.addKernelStep(kernel,
                          {KernelArg::buffer(op.getPrediction()),
                           KernelArg::buffer(op.getTarget()),
                           KernelArg::buffer(op.getResult()),
                           KernelArg::integer(numel(op.getPrediction()))},
                          cuda ? 1 : 0, cuda ? 256 : 0, cuda ? 1 : 0);
    return success();
  }
};

const LossRecipe recipe;
const RecipeRegistration registration(&recipe);

} // namespace

} // namespace vouch::codegen
