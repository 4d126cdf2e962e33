//===- PoolRecipe.cpp - max_pool, avg_pool, smooth_max_pool -----*- C++ -*-===//
//
// The pooling family: max_pool (and its `values` form), avg_pool,
// smooth_max_pool and their gradients, each one step of its own kernel. Every
// op is seen as 3-D (runtime/cuda/kernels/pool_shape.h: 1-D and 2-D ops get
// leading unit axes), and its geometry travels as 16 integer arguments
// (planes, in, out, kernel, stride, padding), so one kernel serves every op of
// a kind whatever its shape. cuda: runtime/cuda/kernels/pool.cuh, one thread
// per window forward and one per input element for the gradients, which
// gather the windows covering it in ascending order (no atomics). cpu:
// runtime/cpu_pool.h's kernels (the op table's cpuKernel), the same order.
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include "codegen/EmitSupport.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

/// The geometry's 16 integers, pool_shape.h's order: `input` is the pooled
/// tensor [N, C, *spatial], `pooled` its windows.
std::vector<KernelArg> poolShapeArgs(Operation *op, Value input, Value pooled) {
  auto attr = [&](StringRef name) {
    return cast<DenseI64ArrayAttr>(op->getAttr(name)).asArrayRef();
  };
  ArrayRef<int64_t> in = shapeOf(input), out = shapeOf(pooled);
  size_t lead = 3 - (in.size() - 2); // unit axes before the spatial ones
  std::vector<KernelArg> args = {KernelArg::integer(in[0] * in[1])};
  auto axes = [&](ArrayRef<int64_t> values, int64_t unit) {
    for (size_t a = 0; a < 3; ++a)
      args.push_back(KernelArg::integer(a < lead ? unit : values[a - lead]));
  };
  axes(in.drop_front(2), 1);
  axes(out.drop_front(2), 1);
  axes(attr("kernel"), 1);
  axes(attr("stride"), 1);
  axes(attr("padding"), 0);
  return args;
}

/// What one op's step passes: its buffers (pointers, in the kernel's order)
/// and its number after the geometry (none, count_include_pad or beta).
struct PoolCall {
  std::string kernel;                       ///< pool.cuh's / cpu_pool.h's name
  std::vector<Value> buffers;               ///< inputs, then the result
  Value input, pooled;                      ///< the geometry's two tensors
  enum { None, Flag, Beta } extra = None;
};

PoolCall callOf(Operation *op) {
  PoolCall c;
  Value result = op->getResult(0);
  if (auto o = dyn_cast<MaxPoolOp>(op)) {
    // The forward reads x twice: as the maxima and as the values picked.
    Value values = o.getValues() ? o.getValues() : o.getInput();
    c = {"max_pool", {o.getInput(), values, result}, o.getInput(), result};
  } else if (auto o = dyn_cast<MaxPoolGradOp>(op)) {
    c = {"max_pool_grad", {o.getGrad(), o.getInput(), result}, result, o.getGrad()};
  } else if (auto o = dyn_cast<AvgPoolOp>(op)) {
    c = {"avg_pool", {o.getInput(), result}, o.getInput(), result, PoolCall::Flag};
  } else if (auto o = dyn_cast<AvgPoolGradOp>(op)) {
    c = {"avg_pool_grad", {o.getGrad(), result}, result, o.getGrad(), PoolCall::Flag};
  } else if (auto o = dyn_cast<SmoothMaxPoolOp>(op)) {
    c = {"smooth_max_pool", {o.getInput(), result}, o.getInput(), result, PoolCall::Beta};
  } else if (auto o = dyn_cast<SmoothMaxPoolGradOp>(op)) {
    c = {"smooth_max_pool_grad", {o.getGrad(), o.getInput(), o.getOutput(), result},
         result, o.getGrad(), PoolCall::Beta};
  }
  return c;
}

/// The cpu function: `vouch::rt::<kernel><T>(pointers..., shape[, extra])`.
std::string cpuSource(const PoolCall &c) {
  size_t n = c.buffers.size(), at = n;
  std::string source = "template <class T>\nvoid @NAME@(const vouch::rt::ArgValue* args) {\n"
                       "  const vouch::rt::PoolShape shape = {args[" +
                       std::to_string(at++) + "].i";
  for (int list = 0; list < 5; ++list) {
    source += ", {";
    for (int a = 0; a < 3; ++a)
      source += (a ? ", args[" : "args[") + std::to_string(at++) + "].i";
    source += "}";
  }
  source += "};\n  vouch::rt::" + c.kernel + "<T>(";
  for (size_t i = 0; i < n; ++i)
    source += std::string(i + 1 < n ? "static_cast<const T*>(" : "static_cast<T*>(") +
              "args[" + std::to_string(i) + "].ptr), ";
  source += "shape";
  if (c.extra == PoolCall::Flag)
    source += ", args[" + std::to_string(at) + "].i != 0";
  if (c.extra == PoolCall::Beta)
    source += ", args[" + std::to_string(at) + "].real";
  return source + ");\n}\n";
}

/// The cuda instantiations: `vouch::<kernel>_kernel<T>(pointers...,
/// vouch::pool_shape(...)[, extra])` for f32 and f64.
std::string cudaSource(const PoolCall &c) {
  static const char *const kShape[] = {"planes", "in0", "in1", "in2", "out0", "out1",
                                       "out2",   "k0",  "k1",  "k2",  "s0",   "s1",
                                       "s2",     "p0",  "p1",  "p2"};
  std::string source = "#include \"pool.cuh\"\n";
  for (auto [type, suffix] : kCudaRealTypes) {
    std::string params, call;
    for (size_t i = 0; i < c.buffers.size(); ++i) {
      bool out = i + 1 == c.buffers.size();
      std::string name = "b" + std::to_string(i);
      params += std::string(out ? "" : "const ") + type + "* " + name + ", ";
      call += name + ", ";
    }
    for (size_t i = 0; i < 16; ++i)
      params += std::string(i ? ", " : "") + "long long " + kShape[i];
    call += "vouch::pool_shape(";
    for (size_t i = 0; i < 16; ++i)
      call += std::string(i ? ", " : "") + kShape[i];
    call += ")";
    if (c.extra == PoolCall::Flag)
      params += ", long long count_include_pad", call += ", count_include_pad";
    if (c.extra == PoolCall::Beta)
      params += ", double beta", call += ", beta";
    source += std::string("extern \"C\" __global__ void @NAME@_") + suffix + "(" +
              params + ") {\n  vouch::" + c.kernel + "_kernel<" + type + ">(" + call +
              ");\n}\n";
  }
  return source;
}

class PoolRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "pool"; }
  bool handles(Operation *op) const override {
    return familyOf(op) == OpFamily::Pool;
  }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    Operation *op = group.ops.front();
    PoolCall c = callOf(op);
    if (c.kernel.empty())
      return op->emitOpError("has no pooling kernel (codegen/recipes/PoolRecipe.cpp)");
    bool cpu = builder.target() == Target::Cpu;
    int32_t kernel =
        builder.kernel(c.kernel, cpu ? cpuSource(c) : cudaSource(c));
    std::vector<KernelArg> args;
    for (Value v : c.buffers)
      args.push_back(KernelArg::buffer(v));
    for (const KernelArg &a : poolShapeArgs(op, c.input, c.pooled))
      args.push_back(a);
    if (c.extra == PoolCall::Flag)
      args.push_back(
          KernelArg::integer(op->hasAttr("count_include_pad") ? 1 : 0));
    if (c.extra == PoolCall::Beta)
      args.push_back(KernelArg::real(
          op->getAttrOfType<FloatAttr>("beta").getValueAsDouble()));
    // Forward: a thread per window; gradients: one per input element.
    addGridStrideStep(builder, kernel, args, numel(op->getResult(0)));
    return success();
  }
};

const PoolRecipe recipe;
const RecipeRegistration registration(&recipe);

} // namespace

} // namespace vouch::codegen
