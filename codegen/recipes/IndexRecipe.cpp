//===- IndexRecipe.cpp - broadcast and permute ------------------*- C++ -*-===//
//
// Each result element reads one input element. cuda: one gather kernel
// (runtime/cuda/kernels/index.cuh) whose index map (result extents, the
// input stride of each result axis, 0 for a repeated axis) is an argument,
// so every broadcast and permute shares it; a map that reads the input's
// last axis in order, in runs of four from offsets that are multiples of
// four (a permute keeping the last axis: a transformer's heads), takes its
// quad-at-a-time twin, gather_quads_kernel. cpu: runtime/cpu_kernels.h's
// broadcast_in_dim and permute.
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include "codegen/EmitSupport.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

const char *kCpuBroadcast = R"cpp(template <class T>
void @NAME@(const vouch::rt::ArgValue* args) {
  const vouch::rt::DimsRef& in = args[2].dims;
  const vouch::rt::DimsRef& out = args[3].dims;
  const vouch::rt::DimsRef& dims = args[4].dims;
  vouch::rt::broadcast_in_dim<T>(static_cast<const T*>(args[0].ptr),
                                 std::vector<int64_t>(in.extent, in.extent + in.rank),
                                 static_cast<T*>(args[1].ptr),
                                 std::vector<int64_t>(out.extent, out.extent + out.rank),
                                 std::vector<int64_t>(dims.extent, dims.extent + dims.rank));
}
)cpp";

const char *kCpuPermute = R"cpp(template <class T>
void @NAME@(const vouch::rt::ArgValue* args) {
  const vouch::rt::DimsRef& in = args[2].dims;
  const vouch::rt::DimsRef& perm = args[3].dims;
  vouch::rt::permute<T>(static_cast<const T*>(args[0].ptr),
                        std::vector<int64_t>(in.extent, in.extent + in.rank),
                        std::vector<int64_t>(perm.extent, perm.extent + perm.rank),
                        static_cast<T*>(args[1].ptr));
}
)cpp";

/// gather_kernel's and gather_quads_kernel's entry points (n: elements or
/// quads).
const char *kCudaGather = R"cu(#include "index.cuh"
extern "C" __global__ void @NAME@_f32(const float* in, float* out, vouch::Dims map, long long n) {
  vouch::@KERNEL@<float>(in, out, map, n);
}
extern "C" __global__ void @NAME@_f64(const double* in, double* out, vouch::Dims map, long long n) {
  vouch::@KERNEL@<double>(in, out, map, n);
}
)cu";

/// A list as Dims extents (strides unused by the cpu kernels).
KernelArg list(ArrayRef<int64_t> values) {
  std::vector<int64_t> zeros(values.size(), 0);
  return KernelArg::dims(values, zeros);
}

class IndexRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "index"; }
  bool handles(Operation *op) const override {
    return familyOf(op) == OpFamily::Index;
  }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    Operation *op = group.ops.front();
    Value input = op->getOperand(0), result = op->getResult(0);
    ArrayRef<int64_t> in = shapeOf(input), res = shapeOf(result);
    if (builder.target() == Target::Cpu) {
      if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
        int32_t kernel = builder.kernel("broadcast", kCpuBroadcast);
        builder.addKernelStep(kernel,
                              {KernelArg::buffer(input), KernelArg::buffer(result),
                               list(in), list(res), list(broadcast.getDims())},
                              0, 0, 0);
        return success();
      }
      int32_t kernel = builder.kernel("permute", kCpuPermute);
      builder.addKernelStep(kernel,
                            {KernelArg::buffer(input), KernelArg::buffer(result),
                             list(in), list(cast<PermuteOp>(op).getPerm())},
                            0, 0, 0);
      return success();
    }
    SmallVector<int64_t> inStrides = computeStrides(in);
    std::vector<int64_t> source(res.size(), 0);
    if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      ArrayRef<int64_t> dims = broadcast.getDims();
      for (size_t k = 0; k < dims.size(); ++k)
        source[dims[k]] = in[k] == 1 ? 0 : inStrides[k];
    } else {
      ArrayRef<int64_t> perm = cast<PermuteOp>(op).getPerm();
      for (size_t k = 0; k < perm.size(); ++k)
        source[k] = inStrides[perm[k]];
    }
    // The last axis read in order, in runs of four from offsets that are
    // multiples of four: a quad at a time (index.cuh), the map in quads.
    constexpr int64_t kQuad = kQuadElements;
    if (!res.empty() && source.back() == 1 && res.back() % kQuad == 0 &&
        llvm::all_of(ArrayRef<int64_t>(source).drop_back(),
                     [](int64_t s) { return s % kQuad == 0; })) {
      std::vector<int64_t> extents(res.begin(), res.end()), strides = source;
      extents.back() /= kQuad;
      for (size_t k = 0; k + 1 < strides.size(); ++k)
        strides[k] /= kQuad;
      const int64_t quads = numel(result) / kQuad;
      int32_t kernel = builder.kernel(
          "gather_quads", withKernel(kCudaGather, "gather_quads_kernel"));
      addGridStrideStep(builder, kernel,
                        {KernelArg::buffer(input), KernelArg::buffer(result),
                         KernelArg::dims(extents, strides),
                         KernelArg::integer(quads)},
                        quads);
      return success();
    }
    int32_t kernel =
        builder.kernel("gather", withKernel(kCudaGather, "gather_kernel"));
    addGridStrideStep(builder, kernel,
                      {KernelArg::buffer(input), KernelArg::buffer(result),
                       KernelArg::dims(res, source),
                       KernelArg::integer(numel(result))},
                      numel(result));
    return success();
  }
};

const IndexRecipe recipe;
const RecipeRegistration registration(&recipe);

} // namespace

} // namespace vouch::codegen
