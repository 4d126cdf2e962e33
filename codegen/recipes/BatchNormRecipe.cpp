//===- BatchNormRecipe.cpp - batch_norm and batch_norm_grad -----*- C++ -*-===//
//
// batch_norm (statistics over every axis but 1, the running statistics
// updated in place in training steps) and its VJP, batch_norm_grad: one step
// each. The input [N, C, *spatial] is passed as (n, channels, spatial); a
// weight and bias (dweight and dbias) are parameters of the entry point only
// where the op has them (the template is given nullptr otherwise). The
// forward's running statistics are operands it also writes
// (KernelArg::updated), so the cuda executor orders the launches that touch
// them, and it reads the executor's step context (KernelArg::context) for the
// training flag, so one captured graph serves training steps and every other
// forward reads the same kernel with the flag off.
// cuda: runtime/cuda/kernels/batchnorm.cuh, a channel per block of 512, or per
// cluster of 8 blocks (batchNormParts) where a channel has many elements;
// cpu: runtime/cpu_kernels.h's batch_norm / batch_norm_grad. Asked before the
// normalization recipe, which has the rest of the family.
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include <algorithm>

#include "codegen/EmitSupport.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

/// batchnorm.cuh's block width and cluster size.
constexpr uint32_t kThreads = 512;
constexpr int kClusterParts = 8;
/// batchnorm.cuh's kBatchNormMaxChannelsInFlight: more channels grid-stride.
constexpr int64_t kMaxChannelsInFlight = 16384;

/// The blocks per channel: a cluster of 8 where a channel has at least 8
/// blocks' worth of elements (4096 each) and there are few channels (at most
/// 256: fewer blocks than two waves of an H200's 132 SMs at 1 per channel),
/// else 1. A function of the shape alone, so a shape sums in one order on
/// every device.
int batchNormParts(int64_t perChannel, int64_t channels) {
  return perChannel >= int64_t(kClusterParts) * 4096 && channels <= 256 ? kClusterParts
                                                                         : 1;
}

/// The extents batchnorm.cuh takes: x [N, C, *spatial] as (n, channels, spatial).
struct ChannelShape {
  int64_t n, channels, spatial = 1;
};
ChannelShape channelShape(Value x) {
  ArrayRef<int64_t> shape = shapeOf(x);
  ChannelShape s{shape[0], shape[1]};
  for (int64_t d : shape.drop_front(2))
    s.spatial *= d;
  return s;
}

/// An operand or result the op may leave out: its name and whether it has it.
using Slot = std::pair<std::string, bool>;

/// The cpu entry point calling `call` with `ins` (const T*), `outs` (T*; the
/// absent ones nullptr), then `tail` (the rest, as written).
std::string cpuSource(const std::string &call, const std::vector<Slot> &ins,
                      const std::vector<Slot> &outs, const std::string &tail) {
  std::string args;
  int k = 0;
  for (const auto &[name, present] : ins)
    args += present ? "static_cast<const T*>(args[" + std::to_string(k++) + "].ptr), "
                    : std::string("nullptr, ");
  for (const auto &[name, present] : outs)
    args += present ? "static_cast<T*>(args[" + std::to_string(k++) + "].ptr), "
                    : std::string("nullptr, ");
  std::string rest = tail;
  for (size_t at; (at = rest.find("@K")) != std::string::npos;) {
    int i = rest[at + 2] - '0';
    rest.replace(at, 3, "args[" + std::to_string(k + i) + "]");
  }
  return "template <class T>\nvoid @NAME@(const vouch::rt::ArgValue* args) {\n  " + call +
         "(" + args + rest + ");\n}\n";
}

/// The cuda entry points (f32, f64) of `kernel` with `ins`, `outs` (the
/// present ones parameters, the absent ones nullptr) and `tail` (parameters,
/// then the names passed).
std::string cudaSource(const std::string &kernel, int parts, const std::vector<Slot> &ins,
                       const std::vector<Slot> &outs, const std::string &tailParams,
                       const std::string &tailNames) {
  std::string source = "#include \"batchnorm.cuh\"\n";
  std::string attributes =
      (parts > 1 ? "__cluster_dims__(" + std::to_string(parts) + ", 1, 1) " : std::string()) +
      "__launch_bounds__(" + std::to_string(kThreads) + ") ";
  for (auto [type, suffix] : kCudaRealTypes) {
    std::string params, names;
    for (const auto &[name, present] : ins) {
      if (present)
        params += "const " + std::string(type) + "* " + name + ", ";
      names += (present ? name : std::string("nullptr")) + ", ";
    }
    for (const auto &[name, present] : outs) {
      if (present)
        params += std::string(type) + "* " + name + ", ";
      names += (present ? name : std::string("nullptr")) + ", ";
    }
    source += "extern \"C\" __global__ void " + attributes + "@NAME@_" + suffix + "(" +
              params + tailParams + ") {\n  vouch::" + kernel + "<" + type + ", " +
              std::to_string(parts) + ">(" + names + tailNames + ");\n}\n";
  }
  return source;
}

class BatchNormRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "batch_norm"; }
  bool handles(Operation *op) const override {
    return isa<BatchNormOp, BatchNormGradOp>(op);
  }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    Operation *op = group.ops.front();
    bool cuda = builder.target() == Target::Cuda;
    std::string call(findOpFacts(op->getName().stripDialect())->cpuKernel);
    SmallVector<KernelArg> args;
    std::string source, variant;
    ChannelShape s;
    if (auto bn = dyn_cast<BatchNormOp>(op)) {
      s = channelShape(bn.getInput());
      bool w = bool(bn.getWeight()), b = bool(bn.getBias());
      int parts = cuda ? batchNormParts(s.n * s.spatial, s.channels) : 1;
      std::vector<Slot> ins{{"x", true}, {"weight", w}, {"bias", b}};
      // The running statistics: read, and written in training steps.
      std::vector<Slot> outs{{"running_mean", true}, {"running_var", true},
                             {"y", true},            {"mean", true},
                             {"rstd", true}};
      args.push_back(KernelArg::buffer(bn.getInput()));
      if (w)
        args.push_back(KernelArg::buffer(bn.getWeight()));
      if (b)
        args.push_back(KernelArg::buffer(bn.getBias()));
      args.append({KernelArg::updated(bn.getRunningMean()),
                   KernelArg::updated(bn.getRunningVar()),
                   KernelArg::buffer(bn.getResult()), KernelArg::buffer(bn.getMean()),
                   KernelArg::buffer(bn.getRstd())});
      args.append({KernelArg::integer(s.n), KernelArg::integer(s.channels),
                   KernelArg::integer(s.spatial),
                   KernelArg::real(bn.getEps().convertToDouble()),
                   KernelArg::real(bn.getMomentum().convertToDouble()),
                   KernelArg::context()});
      source = cuda ? cudaSource("batch_norm_kernel", parts, ins, outs,
                                 "long long n, long long channels, long long spatial, "
                                 "double eps, double momentum, const long long* ctx",
                                 "n, channels, spatial, eps, momentum, ctx")
                    : cpuSource(call, ins, outs,
                                "@K0.i, @K1.i, @K2.i, @K3.real, @K4.real, "
                                "static_cast<const long long*>(@K5.ptr)");
      variant = std::string("batch_norm") + (w ? "_w" : "") + (b ? "_b" : "") +
                (parts > 1 ? "_cluster" : "");
      builder.addKernelStep(builder.kernel(variant, source), args,
                            cuda ? launchGrid(s.channels, parts) : 0, cuda ? kThreads : 0,
                            cuda ? 1 : 0);
      return success();
    }
    auto grad = cast<BatchNormGradOp>(op);
    s = channelShape(grad.getInput());
    bool w = bool(grad.getWeight());
    bool dw = bool(grad.getWeightGrad()), db = bool(grad.getBiasGrad());
    int parts = cuda ? batchNormParts(s.n * s.spatial, s.channels) : 1;
    std::vector<Slot> ins{{"grad", true}, {"x", true}, {"mean", true},
                          {"rstd", true}, {"weight", w}};
    std::vector<Slot> outs{{"dx", true}, {"dweight", dw}, {"dbias", db}};
    args.append({KernelArg::buffer(grad.getGrad()), KernelArg::buffer(grad.getInput()),
                 KernelArg::buffer(grad.getMean()), KernelArg::buffer(grad.getRstd())});
    if (w)
      args.push_back(KernelArg::buffer(grad.getWeight()));
    // The results: dx, then dweight / dbias where the op has them.
    for (Value r : op->getResults())
      args.push_back(KernelArg::buffer(r));
    args.append({KernelArg::integer(s.n), KernelArg::integer(s.channels),
                 KernelArg::integer(s.spatial)});
    source = cuda ? cudaSource("batch_norm_grad_kernel", parts, ins, outs,
                               "long long n, long long channels, long long spatial",
                               "n, channels, spatial")
                  : cpuSource(call, ins, outs, "@K0.i, @K1.i, @K2.i");
    variant = std::string("batch_norm_grad") + (w ? "_w" : "") + (dw ? "_dw" : "") +
              (db ? "_db" : "") + (parts > 1 ? "_cluster" : "");
    builder.addKernelStep(builder.kernel(variant, source), args,
                          cuda ? launchGrid(s.channels, parts) : 0, cuda ? kThreads : 0,
                          cuda ? 1 : 0);
    return success();
  }

private:
  /// Parts blocks per channel, at most kMaxChannelsInFlight channels at once.
  static uint32_t launchGrid(int64_t channels, int parts) {
    return static_cast<uint32_t>(parts * std::min(channels, kMaxChannelsInFlight));
  }
};

const BatchNormRecipe recipe;
// Before the normalization recipe, which claims the rest of the family.
const RecipeRegistration registration(&recipe, 5);

} // namespace

} // namespace vouch::codegen
