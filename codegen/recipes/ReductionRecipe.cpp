//===- ReductionRecipe.cpp - reduce_sum, _mean, _max, _min -----*- C++ -*-===//
//
// cuda: runtime/cuda/kernels/reduce.cuh, one block per output with a
// fixed-order tree (no atomics: every run gives the same bits), or coalesced
// column sums when the leading axes of a sum are reduced (bias gradients);
// max / min through reduce_extreme_kernel. Extents and strides are
// arguments, so one kernel serves every reduction of a kind. cpu: the
// runtime/cpu_kernels.h function the op table names (reduce_sum, a left fold
// in row-major order, then the division of a mean; reduce_max; reduce_min).
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include "codegen/EmitSupport.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

ArrayRef<int64_t> axesOf(Operation *op) {
  return op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
}

/// reduce_max / reduce_min: the extreme of each slice (no division, no column
/// kernel); the others sum (reduce_mean then divides).
bool isExtreme(Operation *op) { return isa<ReduceMaxOp, ReduceMinOp>(op); }

const char *kCudaExtreme = R"cu(#include "reduce.cuh"
extern "C" __global__ void @NAME@_f32(const float* in, float* out, vouch::Dims kept, vouch::Dims reduced, long long outputs, long long count, long long max) {
  vouch::reduce_extreme_kernel<float>(in, out, kept, reduced, outputs, count, max != 0);
}
extern "C" __global__ void @NAME@_f64(const double* in, double* out, vouch::Dims kept, vouch::Dims reduced, long long outputs, long long count, long long max) {
  vouch::reduce_extreme_kernel<double>(in, out, kept, reduced, outputs, count, max != 0);
}
)cu";

/// The cpu kernel: the op's row of the op table names the function it calls
/// (`cpuKernel`, as its reference capsule reports it: reduce_sum<T>,
/// reduce_max<T>, ...); a mean then divides.
const char *kCpuSource = R"cpp(template <class T>
void @NAME@(const vouch::rt::ArgValue* args) {
  const vouch::rt::DimsRef& shape = args[2].dims;
  const vouch::rt::DimsRef& axes = args[3].dims;
  T* out = static_cast<T*>(args[1].ptr);
  @KERNEL@(static_cast<const T*>(args[0].ptr),
           std::vector<int64_t>(shape.extent, shape.extent + shape.rank),
           std::vector<int64_t>(axes.extent, axes.extent + axes.rank), out);
  const int64_t outputs = args[4].i, divisor = args[5].i;
  if (divisor > 1)
    for (int64_t i = 0; i < outputs; ++i) out[i] /= T(divisor);
}
)cpp";

const char *kCudaTree = R"cu(#include "reduce.cuh"
extern "C" __global__ void @NAME@_f32(const float* in, float* out, vouch::Dims kept, vouch::Dims reduced, long long outputs, long long count, long long divisor) {
  vouch::reduce_sum_kernel<float>(in, out, kept, reduced, outputs, count, divisor);
}
extern "C" __global__ void @NAME@_f64(const double* in, double* out, vouch::Dims kept, vouch::Dims reduced, long long outputs, long long count, long long divisor) {
  vouch::reduce_sum_kernel<double>(in, out, kept, reduced, outputs, count, divisor);
}
)cu";

const char *kCudaColumns = R"cu(#include "reduce.cuh"
extern "C" __global__ void @NAME@_f32(const float* in, float* out, long long rows, long long cols, long long divisor, float* partials, unsigned* arrivals) {
  vouch::column_sum_kernel<float>(in, out, rows, cols, divisor, partials, arrivals);
}
extern "C" __global__ void @NAME@_f64(const double* in, double* out, long long rows, long long cols, long long divisor, double* partials, unsigned* arrivals) {
  vouch::column_sum_kernel<double>(in, out, rows, cols, divisor, partials, arrivals);
}
)cu";

class ReductionRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "reduction"; }
  bool handles(Operation *op) const override {
    return familyOf(op) == OpFamily::Reduction;
  }

  /// A reduction over axes of extent 1 (a sum adding each element to zero,
  /// the max of one element) gives the same values in another shape (a bias
  /// gradient at batch 1), so no kernel runs.
  Value aliasOf(Operation *op) const override {
    Value input = op->getOperand(0);
    ArrayRef<int64_t> in = shapeOf(input);
    ArrayRef<int64_t> axes = axesOf(op);
    bool unit = llvm::all_of(axes, [&](int64_t axis) { return in[axis] == 1; });
    return unit ? input : Value();
  }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    Operation *op = group.ops.front();
    if (aliasOf(op))
      return success();
    Value input = op->getOperand(0), result = op->getResult(0);
    ArrayRef<int64_t> in = shapeOf(input), axes = axesOf(op);
    int64_t outputs = numel(result);
    int64_t count = numel(input) / std::max<int64_t>(outputs, 1);
    int64_t divisor = isa<ReduceMeanOp>(op) ? count : 1;
    bool extreme = isExtreme(op);
    int64_t max = isa<ReduceMaxOp>(op) ? 1 : 0;
    if (builder.target() == Target::Cpu) {
      std::vector<int64_t> none(std::max(in.size(), axes.size()), 0);
      // vouch::rt::reduce_sum<T> -> the call, and "reduce_sum" for the name
      // (reduce_mean shares reduce_sum's kernel).
      std::string call(findOpFacts(op->getName().stripDialect())->cpuKernel);
      std::string base = call.substr(call.rfind("::") + 2);
      base = base.substr(0, base.find('<'));
      int32_t kernel = builder.kernel(base, withKernel(kCpuSource, call));
      builder.addKernelStep(
          kernel,
          {KernelArg::buffer(input), KernelArg::buffer(result),
           KernelArg::dims(in, ArrayRef(none).take_front(in.size())),
           KernelArg::dims(axes, ArrayRef(none).take_front(axes.size())),
           KernelArg::integer(outputs), KernelArg::integer(divisor)},
          0, 0, 0);
      return success();
    }
    bool leading = !axes.empty();
    for (size_t i = 0; i < axes.size(); ++i)
      leading = leading && axes[i] == static_cast<int64_t>(i);
    if (leading && outputs >= 32 && !extreme) {
      // in is [count, outputs] row-major: coalesced column sums, the rows in
      // slabs (reduce.cuh's column_sum_slabs, mirrored) whose sums the last
      // block of each column block adds, through this op's own scratch.
      int32_t kernel = builder.kernel("column_sum", kCudaColumns);
      int64_t columnBlocks = (outputs + 31) / 32;
      int64_t slabs = std::max<int64_t>(
          1, std::min<int64_t>(264 / columnBlocks, count / 256));
      std::string at = builder.bufferName(result);
      auto partials = builder.addScratch(at + ".partials", slabs > 1 ? slabs * outputs : 1,
                                         rt::DType::Real, false);
      auto arrivals = builder.addScratch(at + ".arrivals", slabs > 1 ? columnBlocks : 1,
                                         rt::DType::I32, true);
      builder.addKernelStep(kernel,
                            {KernelArg::buffer(input), KernelArg::buffer(result),
                             KernelArg::integer(count),
                             KernelArg::integer(outputs),
                             KernelArg::integer(divisor),
                             KernelArg::scratch(partials),
                             KernelArg::scratch(arrivals)},
                            static_cast<uint32_t>(columnBlocks * slabs), 32, 32);
      return success();
    }
    SmallVector<int64_t> strides = computeStrides(in);
    std::vector<int64_t> keptExt, keptStr, redExt, redStr;
    for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i) {
      bool reduced = llvm::is_contained(axes, i);
      (reduced ? redExt : keptExt).push_back(in[i]);
      (reduced ? redStr : keptStr).push_back(strides[i]);
    }
    int32_t kernel = extreme ? builder.kernel("reduce_extreme", kCudaExtreme)
                             : builder.kernel("reduce_sum", kCudaTree);
    builder.addKernelStep(
        kernel,
        {KernelArg::buffer(input), KernelArg::buffer(result),
         KernelArg::dims(keptExt, keptStr), KernelArg::dims(redExt, redStr),
         KernelArg::integer(outputs), KernelArg::integer(count),
         KernelArg::integer(extreme ? max : divisor)},
        static_cast<uint32_t>(std::max<int64_t>(1, std::min<int64_t>(outputs, 4096))),
        256, 1);
    return success();
  }
};

const ReductionRecipe recipe;
const RecipeRegistration registration(&recipe);

} // namespace

} // namespace vouch::codegen
