//===- RandomRecipe.cpp - dropout, rand_uniform, bernoulli_mask -*- C++ -*-===//
//
// The random ops: one thread (cuda) or iteration (cpu) per element drawing
// from runtime/cuda/kernels/counter_rng.h. Each step passes the executor's
// step context (KernelArg::context: step, training flag, run seed) and the
// op's ordinal, so the kernel is emitted once per op kind whatever the
// shapes and ordinals. cuda: runtime/cuda/kernels/random.cuh; cpu:
// runtime/cpu_kernels.h's dropout, rand_uniform and bernoulli_mask. Asked
// before the index recipe (dropout is of the index family) and the
// pointwise one.
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include "codegen/EmitSupport.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

// args: x, y, n, p, ctx, ordinal.
const char *kCpuDropout = R"cpp(template <class T>
void @NAME@(const vouch::rt::ArgValue* args) {
  vouch::rt::dropout<T>(static_cast<const T*>(args[0].ptr), static_cast<T*>(args[1].ptr),
                        args[2].i, args[3].real, static_cast<const long long*>(args[4].ptr),
                        args[5].i);
}
)cpp";

// args: y, n, ctx, ordinal.
const char *kCpuUniform = R"cpp(template <class T>
void @NAME@(const vouch::rt::ArgValue* args) {
  vouch::rt::rand_uniform<T>(static_cast<T*>(args[0].ptr), args[1].i,
                             static_cast<const long long*>(args[2].ptr), args[3].i);
}
)cpp";

// args: y, n, p, ctx, ordinal.
const char *kCpuBernoulli = R"cpp(template <class T>
void @NAME@(const vouch::rt::ArgValue* args) {
  vouch::rt::bernoulli_mask<T>(static_cast<T*>(args[0].ptr), args[1].i, args[2].real,
                               static_cast<const long long*>(args[3].ptr), args[4].i);
}
)cpp";

const char *kCudaDropout = R"cu(#include "random.cuh"
extern "C" __global__ void @NAME@_f32(const float* x, float* y, long long n, double p, const long long* ctx, long long ordinal) {
  vouch::dropout_kernel<float>(x, y, n, p, ctx, ordinal);
}
extern "C" __global__ void @NAME@_f64(const double* x, double* y, long long n, double p, const long long* ctx, long long ordinal) {
  vouch::dropout_kernel<double>(x, y, n, p, ctx, ordinal);
}
)cu";

const char *kCudaUniform = R"cu(#include "random.cuh"
extern "C" __global__ void @NAME@_f32(float* y, long long n, const long long* ctx, long long ordinal) {
  vouch::rand_uniform_kernel<float>(y, n, ctx, ordinal);
}
extern "C" __global__ void @NAME@_f64(double* y, long long n, const long long* ctx, long long ordinal) {
  vouch::rand_uniform_kernel<double>(y, n, ctx, ordinal);
}
)cu";

const char *kCudaBernoulli = R"cu(#include "random.cuh"
extern "C" __global__ void @NAME@_f32(float* y, long long n, double p, const long long* ctx, long long ordinal) {
  vouch::bernoulli_mask_kernel<float>(y, n, p, ctx, ordinal);
}
extern "C" __global__ void @NAME@_f64(double* y, long long n, double p, const long long* ctx, long long ordinal) {
  vouch::bernoulli_mask_kernel<double>(y, n, p, ctx, ordinal);
}
)cu";

class RandomRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "random"; }
  bool handles(Operation *op) const override {
    return isa<DropoutOp, RandUniformOp, BernoulliMaskOp>(op);
  }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    Operation *op = group.ops.front();
    bool cpu = builder.target() == Target::Cpu;
    Value result = op->getResult(0);
    int64_t n = numel(result);
    int64_t ordinal = op->getAttrOfType<IntegerAttr>("ordinal").getInt();
    std::vector<KernelArg> args;
    int32_t kernel;
    if (auto dropout = dyn_cast<DropoutOp>(op)) {
      kernel = builder.kernel("dropout", cpu ? kCpuDropout : kCudaDropout);
      args = {KernelArg::buffer(dropout.getInput()), KernelArg::buffer(result),
              KernelArg::integer(n), KernelArg::real(dropout.getP().convertToDouble()),
              KernelArg::context(), KernelArg::integer(ordinal)};
    } else if (isa<RandUniformOp>(op)) {
      kernel = builder.kernel("rand_uniform", cpu ? kCpuUniform : kCudaUniform);
      args = {KernelArg::buffer(result), KernelArg::integer(n),
              KernelArg::context(), KernelArg::integer(ordinal)};
    } else {
      auto mask = cast<BernoulliMaskOp>(op);
      kernel = builder.kernel("bernoulli_mask", cpu ? kCpuBernoulli : kCudaBernoulli);
      args = {KernelArg::buffer(result), KernelArg::integer(n),
              KernelArg::real(mask.getP().convertToDouble()), KernelArg::context(),
              KernelArg::integer(ordinal)};
    }
    addGridStrideStep(builder, kernel, args, n);
    return success();
  }
};

const RandomRecipe recipe;
// Before the index and pointwise recipes.
const RecipeRegistration registration(&recipe, 4);

} // namespace

} // namespace vouch::codegen
