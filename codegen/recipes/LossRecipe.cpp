//===- LossRecipe.cpp - mse_loss, cross_entropy(_grad) ----------*- C++ -*-===//
//
// cuda: runtime/cuda/kernels/loss.cuh (mse_loss) and classifier.cuh
// (cross_entropy, cross_entropy_grad), fixed-order trees, no float atomics.
// cpu: runtime/cpu_kernels.h's mse_loss, cross_entropy, cross_entropy_grad.
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include "codegen/EmitSupport.h"

#include <algorithm>

using namespace mlir;

namespace vouch::codegen {
namespace {

/// mse_loss's grid: loss.cuh's mse_loss_grid (a block per 2,048 elements, at
/// most 1,024, at least one), which the kernel lab checks the kernel with.
uint32_t mseLossGrid(int64_t n) {
  return uint32_t(std::clamp<int64_t>((n + 2047) / 2048, 1, 1024));
}

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

const char *kCrossEntropyCpu = R"cpp(template <class T>
void @NAME@(const vouch::rt::ArgValue* args) {
  static_cast<T*>(args[2].ptr)[0] = vouch::rt::cross_entropy<T>(
      args[3].i, args[4].i, static_cast<const T*>(args[0].ptr),
      static_cast<const int32_t*>(args[1].ptr), args[5].i, args[6].i);
}
)cpp";

const char *kCrossEntropyCuda = R"cu(#include "classifier.cuh"
extern "C" __global__ void @NAME@_f32(const float* logits, const int* labels, float* out, long long rows, long long classes, long long ignore_index, long long pitch) {
  vouch::cross_entropy_kernel<float>(logits, labels, out, rows, classes, ignore_index, pitch);
}
extern "C" __global__ void @NAME@_f64(const double* logits, const int* labels, double* out, long long rows, long long classes, long long ignore_index, long long pitch) {
  vouch::cross_entropy_kernel<double>(logits, labels, out, rows, classes, ignore_index, pitch);
}
)cu";

const char *kCrossEntropyGradCpu = R"cpp(template <class T>
void @NAME@(const vouch::rt::ArgValue* args) {
  vouch::rt::cross_entropy_grad<T>(
      args[4].i, args[5].i, static_cast<const T*>(args[0].ptr),
      static_cast<const int32_t*>(args[1].ptr), static_cast<const T*>(args[2].ptr)[0],
      args[6].i, static_cast<T*>(args[3].ptr), args[7].i);
}
)cpp";

// One entry point of cross_entropy_grad's cuda kernel: @T@ its element type, @O@
// the dlogits' (T, or unsigned short: bf16 bits, each value rounded as it is stored:
// the op's bf16Result, f32 runs of builds with bf16 products), @SUFFIX@ T's. Rows
// longer than 4096 (longRowLaunch: @ENTRY@ kLongRowEntry, @PARTS@ kLongRowParts), or
// shorter ones (none, 1).
const char *kCrossEntropyGradCudaEntry = R"cu(extern "C" __global__ void @ENTRY@@NAME@_@SUFFIX@(const @T@* logits, const int* labels, const @T@* dloss, @O@* dlogits, long long rows, long long classes, long long ignore_index, long long pitch) {
  vouch::cross_entropy_grad_kernel<@T@, @PARTS@>(logits, labels, dloss, dlogits, rows, classes, ignore_index, pitch);
}
)cu";

/// cross_entropy_grad's cuda source: f32 and f64 entry points, or (`bf16`:
/// dlogits stored as bf16) the f32 one alone.
std::string crossEntropyGradCuda(bool bf16, bool staged) {
  using Types = std::tuple<const char *, const char *, const char *>;
  std::string source = "#include \"classifier.cuh\"\n";
  for (auto [type, out, suffix] : {Types{"float", bf16 ? "unsigned short" : "float", "f32"},
                                   Types{"double", "double", "f64"}}) {
    if (bf16 && std::string(suffix) == "f64")
      continue;
    std::string entry = kCrossEntropyGradCudaEntry;
    for (auto [from, to] :
         {std::pair<std::string, std::string>{"@ENTRY@", staged ? kLongRowEntry : ""},
          {"@PARTS@", std::to_string(staged ? kLongRowParts : 1)},
          {"@SUFFIX@", suffix},
          {"@T@", type},
          {"@O@", out}})
      for (size_t at; (at = entry.find(from)) != std::string::npos;)
        entry.replace(at, from.size(), to);
    source += entry;
  }
  return source;
}

class LossRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "loss"; }
  bool handles(Operation *op) const override { return familyOf(op) == OpFamily::Loss; }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    bool cuda = builder.target() == Target::Cuda;
    Operation *first = group.ops.front();
    if (auto ce = dyn_cast<CrossEntropyOp>(first)) {
      int64_t pitch = cast<ShapedType>(ce.getLogits().getType()).getShape().back();
      int32_t kernel = builder.kernel(
          "cross_entropy", cuda ? kCrossEntropyCuda : kCrossEntropyCpu);
      builder.addKernelStep(kernel,
                            {KernelArg::buffer(ce.getLogits()),
                             KernelArg::buffer(ce.getLabels()),
                             KernelArg::buffer(ce.getResult()),
                             KernelArg::integer(numel(ce.getLabels())),
                             KernelArg::integer(ce.classCount()),
                             KernelArg::integer(static_cast<int64_t>(ce.getIgnoreIndex())),
                             KernelArg::integer(pitch)},
                            // One block per row up to the kernel's 1024 slots
                            // (classifier.cuh: the last block sums them in order).
                            cuda ? uint32_t(std::clamp<int64_t>(numel(ce.getLabels()), 1, 1024))
                                 : 0,
                            cuda ? 256 : 0, cuda ? 1 : 0);
      return success();
    }
    if (auto grad = dyn_cast<CrossEntropyGradOp>(first)) {
      int64_t rows = numel(grad.getLabels());
      int64_t classes = grad.classCount();
      int64_t pitch = cast<ShapedType>(grad.getLogits().getType()).getShape().back();
      // Rows longer than softmax's register path holds (a vocabulary) staged
      // in shared memory by clusters of two blocks (classifier.cuh); shorter
      // ones a block of 256 per row.
      bool staged = classes > 4096;
      LongRowLaunch launch =
          !cuda ? LongRowLaunch{0, 0, 0, 0}
          : staged
              ? longRowLaunch(rows, classes)
              : LongRowLaunch{uint32_t(std::clamp<int64_t>(rows, 1, 65535)), 256, 0, 0};
      FailureOr<bool> bf16 = storesBf16Result(grad, cuda);
      if (failed(bf16))
        return failure();
      std::string source = cuda ? crossEntropyGradCuda(*bf16, staged) : kCrossEntropyGradCpu;
      int32_t kernel =
          builder.kernel(*bf16 ? "cross_entropy_grad_bf16" : "cross_entropy_grad", source);
      builder.addKernelStep(kernel,
                            {KernelArg::buffer(grad.getLogits()),
                             KernelArg::buffer(grad.getLabels()),
                             KernelArg::buffer(grad.getDloss()),
                             KernelArg::buffer(grad.getResult()),
                             KernelArg::integer(rows), KernelArg::integer(classes),
                             KernelArg::integer(static_cast<int64_t>(grad.getIgnoreIndex())),
                             KernelArg::integer(pitch)},
                            launch.grid, launch.threads, cuda ? 1 : 0, launch.sharedBytes,
                            launch.blocksPerSM);
      return success();
    }
    auto op = cast<MseLossOp>(first);
    int32_t kernel = builder.kernel("mse_loss", cuda ? kCudaSource : kCpuSource);
    builder.addKernelStep(kernel,
                          {KernelArg::buffer(op.getPrediction()),
                           KernelArg::buffer(op.getTarget()),
                           KernelArg::buffer(op.getResult()),
                           KernelArg::integer(numel(op.getPrediction()))},
                          cuda ? mseLossGrid(numel(op.getPrediction())) : 0,
                          cuda ? 256 : 0, cuda ? 1 : 0);
    return success();
  }
};

const LossRecipe recipe;
const RecipeRegistration registration(&recipe);

} // namespace

} // namespace vouch::codegen
