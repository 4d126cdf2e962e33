//===- GemmRecipe.cpp - matmul and linear -----------------------*- C++ -*-===//
//
// Two recipes compute products, whichever the plan chose (passes/Plan.cpp):
//  - library: executor steps, not kernels; the runtime calls cuBLAS (matmul)
//    or cuBLASLt with the bias epilogue (linear) on cuda, and
//    runtime/cpu_kernels.h's matmul / linear on cpu;
//  - native (cuda): runtime/cuda/kernels/matmul.cuh, one thread per output,
//    for the products the profile's small-product rule covers.
// Both read operands through transpose flags (never a transposed copy) with
// the extents of ir/GemmDims.h.
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include "ir/GemmDims.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

class LibraryGemmRecipe final : public KernelRecipe {
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

const char *kProductSource = R"cu(#include "matmul.cuh"
extern "C" __global__ void @NAME@_f32(const float* a, const float* b, float* c, long long batch, long long m, long long n, long long k, long long stride_a, long long stride_b, long long trans_a, long long trans_b) {
  vouch::small_product_kernel<float>(a, b, c, batch, m, n, k, stride_a, stride_b, trans_a, trans_b);
}
extern "C" __global__ void @NAME@_f64(const double* a, const double* b, double* c, long long batch, long long m, long long n, long long k, long long stride_a, long long stride_b, long long trans_a, long long trans_b) {
  vouch::small_product_kernel<double>(a, b, c, batch, m, n, k, stride_a, stride_b, trans_a, trans_b);
}
)cu";

const char *kLinearSource = R"cu(#include "matmul.cuh"
extern "C" __global__ void @NAME@_f32(const float* x, const float* w, const float* bias, float* y, long long m, long long n, long long k) {
  vouch::small_linear_kernel<float>(x, w, bias, y, m, n, k);
}
extern "C" __global__ void @NAME@_f64(const double* x, const double* w, const double* bias, double* y, long long m, long long n, long long k) {
  vouch::small_linear_kernel<double>(x, w, bias, y, m, n, k);
}
)cu";

class NativeGemmRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "small-gemm"; }
  capsules::Provider provider(Operation *, Target) const override {
    return capsules::Provider::NativeCuda;
  }
  bool handles(Operation *op) const override {
    return familyOf(op) == OpFamily::Gemm;
  }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    Operation *op = group.ops.front();
    if (builder.target() != Target::Cuda)
      return op->emitOpError("vouch's product kernel runs on cuda only");
    auto lin = dyn_cast<LinearOp>(op);
    if (lin && lin.getBias()) {
      GemmDims d = getGemmDims(lin);
      int32_t kernel = builder.kernel("small_linear", kLinearSource);
      builder.addKernelStep(
          kernel,
          {KernelArg::buffer(lin.getInput()), KernelArg::buffer(lin.getWeight()),
           KernelArg::buffer(lin.getBias()), KernelArg::buffer(lin.getResult()),
           KernelArg::integer(d.m), KernelArg::integer(d.n),
           KernelArg::integer(d.k)},
          gridStrideBlocks(d.m * d.n), 256, 1);
      return success();
    }
    // A matmul, or a linear without bias: x·Wᵀ.
    GemmDims d = *getGemmDims(op);
    Value a = lin ? lin.getInput() : cast<MatmulOp>(op).getLhs();
    Value b = lin ? lin.getWeight() : cast<MatmulOp>(op).getRhs();
    int32_t kernel = builder.kernel("small_product", kProductSource);
    builder.addKernelStep(
        kernel,
        {KernelArg::buffer(a), KernelArg::buffer(b),
         KernelArg::buffer(op->getResult(0)), KernelArg::integer(d.batch),
         KernelArg::integer(d.m), KernelArg::integer(d.n),
         KernelArg::integer(d.k), KernelArg::integer(d.strideA),
         KernelArg::integer(d.strideB), KernelArg::integer(d.transA),
         KernelArg::integer(d.transB)},
        gridStrideBlocks(d.batch * d.m * d.n), 256, 1);
    return success();
  }
};

const LibraryGemmRecipe library;
const RecipeRegistration libraryRegistration(&library);
const NativeGemmRecipe native;
const RecipeRegistration nativeRegistration(&native);

} // namespace

} // namespace vouch::codegen
