//===- GatherRecipe.cpp - embedding, gather and scatter_add -----*- C++ -*-===//
//
// Ops of the index family that look up by an i32 tensor: embedding (and its
// VJP, embedding_grad), gather and scatter_add. embedding sees ids as
// [positions] and its table as [V, D]; gather and scatter_add see their
// tensors as [outer, extent, inner] around the axis. cuda:
// runtime/cuda/kernels/embedding.cuh and gather.cuh, one thread per output
// element, sums in a fixed order without atomics. cpu: runtime/cpu_kernels.h's
// embedding, embedding_grad, gather and scatter_add. Asked before the index
// recipe, which covers the family's other ops (broadcast, permute).
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include "codegen/EmitSupport.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

// args: ids, table or dy, out, positions, V, D.
const char *kCpuEmbedding = R"cpp(template <class T>
void @NAME@(const vouch::rt::ArgValue* args) {
  vouch::rt::@KERNEL@<T>(static_cast<const int32_t*>(args[0].ptr),
                         static_cast<const T*>(args[1].ptr), args[3].i, args[4].i,
                         args[5].i, static_cast<T*>(args[2].ptr));
}
)cpp";

const char *kCudaEmbedding = R"cu(#include "embedding.cuh"
extern "C" __global__ void @NAME@_f32(const int* ids, const float* x, float* out, long long positions, long long V, long long D) {
  vouch::@KERNEL@<float>(ids, x, out, positions, V, D);
}
extern "C" __global__ void @NAME@_f64(const int* ids, const double* x, double* out, long long positions, long long V, long long D) {
  vouch::@KERNEL@<double>(ids, x, out, positions, V, D);
}
)cu";

// args: in, index, out, outer, n, m, inner.
const char *kCpuGather = R"cpp(template <class T>
void @NAME@(const vouch::rt::ArgValue* args) {
  vouch::rt::gather<T>(static_cast<const T*>(args[0].ptr),
                       static_cast<const int32_t*>(args[1].ptr), args[3].i, args[4].i,
                       args[5].i, args[6].i, static_cast<T*>(args[2].ptr));
}
)cpp";

const char *kCudaGather = R"cu(#include "gather.cuh"
extern "C" __global__ void @NAME@_f32(const float* in, const int* index, float* out, long long outer, long long n, long long m, long long inner) {
  vouch::gather_axis_kernel<float>(in, index, out, outer, n, m, inner);
}
extern "C" __global__ void @NAME@_f64(const double* in, const int* index, double* out, long long outer, long long n, long long m, long long inner) {
  vouch::gather_axis_kernel<double>(in, index, out, outer, n, m, inner);
}
)cu";

// args: in, index, src, out, outer, n, m, inner.
const char *kCpuScatterAdd = R"cpp(template <class T>
void @NAME@(const vouch::rt::ArgValue* args) {
  vouch::rt::scatter_add<T>(static_cast<const T*>(args[0].ptr),
                            static_cast<const int32_t*>(args[1].ptr),
                            static_cast<const T*>(args[2].ptr), args[4].i, args[5].i,
                            args[6].i, args[7].i, static_cast<T*>(args[3].ptr));
}
)cpp";

const char *kCudaScatterAdd = R"cu(#include "gather.cuh"
extern "C" __global__ void @NAME@_f32(const float* in, const int* index, const float* src, float* out, long long outer, long long n, long long m, long long inner) {
  vouch::scatter_add_axis_kernel<float>(in, index, src, out, outer, n, m, inner);
}
extern "C" __global__ void @NAME@_f64(const double* in, const int* index, const double* src, double* out, long long outer, long long n, long long m, long long inner) {
  vouch::scatter_add_axis_kernel<double>(in, index, src, out, outer, n, m, inner);
}
)cu";

class GatherRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "gather"; }
  bool handles(Operation *op) const override {
    return isa<EmbeddingOp, EmbeddingGradOp, GatherOp, ScatterAddOp>(op);
  }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    Operation *op = group.ops.front();
    bool cpu = builder.target() == Target::Cpu;
    Value result = op->getResult(0);
    if (isa<EmbeddingOp, EmbeddingGradOp>(op)) {
      // The table is embedding's operand and embedding_grad's result.
      bool grad = isa<EmbeddingGradOp>(op);
      Value ids = op->getOperand(0), x = op->getOperand(1);
      ArrayRef<int64_t> table = shapeOf(grad ? result : x);
      StringRef kernelName = grad ? "embedding_grad" : "embedding";
      std::string kernel =
          cpu ? kernelName.str() : kernelName.str() + "_kernel";
      int32_t index = builder.kernel(
          kernelName, withKernel(cpu ? kCpuEmbedding : kCudaEmbedding, kernel));
      addGridStrideStep(
          builder, index,
          {KernelArg::buffer(ids), KernelArg::buffer(x),
           KernelArg::buffer(result), KernelArg::integer(numel(ids)),
           KernelArg::integer(table[0]), KernelArg::integer(table[1])},
          numel(result));
      return success();
    }
    // gather: [outer, n, inner] -> [outer, m, inner]; scatter_add the other
    // way round, x and the result [outer, n, inner].
    bool scatter = isa<ScatterAddOp>(op);
    Value x = op->getOperand(0), indexValue = op->getOperand(1);
    int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
    int64_t outer, inner;
    splitAt(shapeOf(x), axis, outer, inner);
    int64_t n = shapeOf(x)[axis], m = shapeOf(indexValue)[axis];
    std::vector<KernelArg> args = {KernelArg::buffer(x),
                                   KernelArg::buffer(indexValue)};
    if (scatter)
      args.push_back(KernelArg::buffer(op->getOperand(2)));
    args.push_back(KernelArg::buffer(result));
    for (int64_t v : {outer, n, m, inner})
      args.push_back(KernelArg::integer(v));
    StringRef kernelName = scatter ? "scatter_add" : "gather_axis";
    const char *text = scatter ? (cpu ? kCpuScatterAdd : kCudaScatterAdd)
                               : (cpu ? kCpuGather : kCudaGather);
    addGridStrideStep(builder, builder.kernel(kernelName, text), args,
                      numel(result));
    return success();
  }
};

const GatherRecipe recipe;
// Before the index recipe, which claims the whole index family.
const RecipeRegistration registration(&recipe, 5);

} // namespace

} // namespace vouch::codegen
