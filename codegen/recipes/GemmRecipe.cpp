//===- GemmRecipe.cpp - matmul and linear -----------------------*- C++ -*-===//
//
// Two recipes compute products, whichever the plan chose (passes/Plan.cpp):
//  - library: executor steps, not kernels; the runtime calls cuBLAS (matmul)
//    or cuBLASLt with the bias epilogue (linear) or the bias-gradient one
//    (linear_weight_grad) on cuda, and runtime/cpu_kernels.h's matmul /
//    linear / linear_weight_grad on cpu;
//  - native (cuda): runtime/cuda/kernels/matmul.cuh, one thread per output,
//    for the products the profile's small-product rule covers.
// Both read operands through transpose flags (never a transposed copy) with
// the extents of ir/GemmDims.h. A linear's result may be bf16 (the op table's
// bf16Result) on cuda through the library alone.
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include "ir/GemmDims.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

/// The two operands a product reads: a matmul's lhs and rhs, a linear's
/// input and weight, a linear_weight_grad's grad and input.
std::pair<Value, Value> productOperands(Operation *op) {
  if (auto lin = dyn_cast<LinearOp>(op))
    return {lin.getInput(), lin.getWeight()};
  if (auto wg = dyn_cast<LinearWeightGradOp>(op))
    return {wg.getGrad(), wg.getInput()};
  auto mm = cast<MatmulOp>(op);
  return {mm.getLhs(), mm.getRhs()};
}

/// Both recipes compute the Gemm family (matmul, linear, linear_weight_grad).
class GemmFamilyRecipe : public KernelRecipe {
public:
  bool handles(Operation *op) const override {
    return familyOf(op) == OpFamily::Gemm;
  }
};

class LibraryGemmRecipe final : public GemmFamilyRecipe {
public:
  StringRef name() const override { return "gemm"; }
  capsules::Provider provider(Operation *op, Target target) const override {
    if (target == Target::Cpu)
      return capsules::Provider::Reference;
    return isa<LinearOp, LinearWeightGradOp>(op) ? capsules::Provider::Cublaslt
                                                 : capsules::Provider::Cublas;
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
    // A bf16 result (a linear's, vouch-round-bf16-operands'): the executor
    // has cuBLASLt store it as bf16, where the buffer's type says so.
    if (failed(storesBf16Result(op, cuda)))
      return failure();
    GemmDims d = *getGemmDims(op);
    auto [a, b] = productOperands(op);
    if (auto lin = dyn_cast<LinearOp>(op)) {
      builder.addLinearStep(d, a, b, lin.getBias(), lin.getResult(),
                            cuda ? entry->call : "vouch::rt::linear<T>");
      return success();
    }
    if (auto wg = dyn_cast<LinearWeightGradOp>(op)) {
      builder.addLinearWeightGradStep(
          d, a, b, wg.getWeightGrad(), wg.getBiasGrad(),
          cuda ? entry->call : "vouch::rt::linear_weight_grad<T>");
      return success();
    }
    builder.addGemmStep(d, a, b, op->getResult(0),
                        cuda ? entry->call : "vouch::rt::matmul<T>");
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

class NativeGemmRecipe final : public GemmFamilyRecipe {
public:
  StringRef name() const override { return "small-gemm"; }
  capsules::Provider provider(Operation *, Target) const override {
    return capsules::Provider::NativeCuda;
  }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    Operation *op = group.ops.front();
    // On cpu, binding refuses this recipe first: its handler runs on the
    // target's device, and the gate plans native_cuda capsules on cuda only.
    assert(builder.target() == Target::Cuda && "bound to a cpu plan");
    GemmDims d = *getGemmDims(op);
    auto [a, b] = productOperands(op);
    if (isa<LinearWeightGradOp>(op)) // its capsules: cublaslt and reference only
      return op->emitOpError("has no native cuda kernel"), failure();
    // vouch-round-bf16-operands stores a bf16 result only for cuBLASLt's calls.
    FailureOr<bool> bf16 = storesBf16Result(op, true);
    if (failed(bf16) || *bf16)
      return op->emitOpError("stores its result as bf16, which the small-product "
                             "kernel does not (only cuBLASLt's linear does)"),
             failure();
    auto lin = dyn_cast<LinearOp>(op);
    if (lin && lin.getBias()) {
      int32_t kernel = builder.kernel("small_linear", kLinearSource);
      addGridStrideStep(
          builder, kernel,
          {KernelArg::buffer(a), KernelArg::buffer(b),
           KernelArg::buffer(lin.getBias()), KernelArg::buffer(lin.getResult()),
           KernelArg::integer(d.m), KernelArg::integer(d.n),
           KernelArg::integer(d.k)},
          d.m * d.n);
      return success();
    }
    // A matmul, or a linear without bias: x·Wᵀ.
    int32_t kernel = builder.kernel("small_product", kProductSource);
    addGridStrideStep(
        builder, kernel,
        {KernelArg::buffer(a), KernelArg::buffer(b),
         KernelArg::buffer(op->getResult(0)), KernelArg::integer(d.batch),
         KernelArg::integer(d.m), KernelArg::integer(d.n),
         KernelArg::integer(d.k), KernelArg::integer(d.strideA),
         KernelArg::integer(d.strideB), KernelArg::integer(d.transA),
         KernelArg::integer(d.transB)},
        d.batch * d.m * d.n);
    return success();
  }
};

const LibraryGemmRecipe library;
const RecipeRegistration libraryRegistration(&library);
const NativeGemmRecipe native;
const RecipeRegistration nativeRegistration(&native);

} // namespace

} // namespace vouch::codegen
