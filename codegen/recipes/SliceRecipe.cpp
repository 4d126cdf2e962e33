//===- SliceRecipe.cpp - slice, slice_scatter and concat --------*- C++ -*-===//
//
// Ops of the index family that move whole runs of one axis: slice (and its
// VJP, slice_scatter) and concat. Each sees its tensors as [outer, n, inner]
// around the axis. cuda: runtime/cuda/kernels/slice.cuh and concat.cuh, one
// thread per output element, or per quad of four where the layout is whole
// quads (toQuads: a transformer's qkv split and its gradient's concat);
// concat's entry point is emitted per input count
// (its pointers and extents are arguments). cpu: runtime/cpu_kernels.h's
// slice, slice_scatter and concat. Asked before the index recipe, which
// covers the family's other ops (broadcast, permute).
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include <sstream>

#include "codegen/EmitSupport.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

// args: in, out, the input's (slice) or result's (slice_scatter) shape, axis,
// start, end, step.
const char *kCpuSlice = R"cpp(template <class T>
void @NAME@(const vouch::rt::ArgValue* args) {
  const vouch::rt::DimsRef& shape = args[2].dims;
  vouch::rt::@KERNEL@<T>(static_cast<const T*>(args[0].ptr),
                         std::vector<int64_t>(shape.extent, shape.extent + shape.rank),
                         args[3].i, args[4].i, args[5].i, args[6].i,
                         static_cast<T*>(args[1].ptr));
}
)cpp";

// args: out, the input count k, k inputs, their k extents on the axis, the
// result's shape, axis.
const char *kCpuConcat = R"cpp(template <class T>
void @NAME@(const vouch::rt::ArgValue* args) {
  const int64_t count = args[1].i;
  std::vector<const T*> ins;
  std::vector<int64_t> extents;
  for (int64_t k = 0; k < count; k++) {
    ins.push_back(static_cast<const T*>(args[2 + k].ptr));
    extents.push_back(args[2 + count + k].i);
  }
  const vouch::rt::DimsRef& shape = args[2 + 2 * count].dims;
  vouch::rt::concat<T>(ins, extents, std::vector<int64_t>(shape.extent, shape.extent + shape.rank),
                       args[3 + 2 * count].i, static_cast<T*>(args[0].ptr));
}
)cpp";

const char *kCudaSlice = R"cu(#include "slice.cuh"
extern "C" __global__ void @NAME@_f32(const float* in, float* out, long long outer, long long n, long long inner, long long start, long long step, long long m) {
  vouch::@KERNEL@<float>(in, out, outer, n, inner, start, step, m);
}
extern "C" __global__ void @NAME@_f64(const double* in, double* out, long long outer, long long n, long long inner, long long start, long long step, long long m) {
  vouch::@KERNEL@<double>(in, out, outer, n, inner, start, step, m);
}
)cu";

/// Whether tensors seen as [outer, n, inner] around an axis can be moved a
/// quad of four elements at a time (common.cuh's Quad, from offsets that are
/// multiples of four): inner a multiple of four, or inner 1 with every count
/// on the axis (`onAxis`: n, a slice's start and length, concat's extents) a
/// multiple of four and a step of 1. Divides the counts by four if so.
bool toQuads(int64_t &inner, ArrayRef<int64_t *> onAxis, bool unitStep) {
  constexpr int64_t kQuad = kQuadElements;
  if (inner % kQuad == 0) {
    inner /= kQuad;
    return true;
  }
  if (inner != 1 || !unitStep ||
      llvm::any_of(onAxis, [](int64_t *c) { return *c % kQuad != 0; }))
    return false;
  for (int64_t *c : onAxis)
    *c /= kQuad;
  return true;
}

/// concat's entry points for `count` inputs (concat.cuh's example), its
/// quad twin's with `quads`.
std::string cudaConcat(size_t count, bool quads) {
  std::ostringstream out;
  out << "#include \"concat.cuh\"\n";
  for (const char *t : {"float", "double"}) {
    out << "extern \"C\" __global__ void @NAME@_" << (t[0] == 'f' ? "f32" : "f64")
        << "(" << t << "* out";
    for (size_t k = 0; k < count; ++k)
      out << ", const " << t << "* i" << k;
    for (size_t k = 0; k < count; ++k)
      out << ", long long e" << k;
    out << ", long long outer, long long n, long long inner) {\n  const " << t
        << "* in[] = {";
    for (size_t k = 0; k < count; ++k)
      out << (k ? ", " : "") << "i" << k;
    out << "};\n  const long long extent[] = {";
    for (size_t k = 0; k < count; ++k)
      out << (k ? ", " : "") << "e" << k;
    out << "};\n  vouch::" << (quads ? "concat_quads_kernel<" : "concat_kernel<") << count
        << ">(out, in, extent, outer, n, inner);\n}\n";
  }
  return out.str();
}

KernelArg shapeArg(ArrayRef<int64_t> shape) {
  std::vector<int64_t> zeros(shape.size(), 0);
  return KernelArg::dims(shape, zeros);
}

class SliceRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "slice"; }
  bool handles(Operation *op) const override {
    return isa<SliceOp, SliceScatterOp, ConcatOp>(op);
  }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    Operation *op = group.ops.front();
    if (auto concat = dyn_cast<ConcatOp>(op))
      return emitConcat(concat, builder);
    bool scatter = isa<SliceScatterOp>(op);
    Value input = op->getOperand(0), result = op->getResult(0);
    int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
    int64_t start = op->getAttrOfType<IntegerAttr>("start").getInt();
    int64_t end = op->getAttrOfType<IntegerAttr>("end").getInt();
    int64_t step = op->getAttrOfType<IntegerAttr>("step").getInt();
    // The larger tensor: slice's input, slice_scatter's result.
    ArrayRef<int64_t> whole = shapeOf(scatter ? result : input);
    StringRef kernelName = scatter ? "slice_scatter" : "slice";
    if (builder.target() == Target::Cpu) {
      int32_t kernel = builder.kernel(kernelName, withKernel(kCpuSlice, kernelName));
      builder.addKernelStep(kernel,
                            {KernelArg::buffer(input), KernelArg::buffer(result),
                             shapeArg(whole), KernelArg::integer(axis),
                             KernelArg::integer(start), KernelArg::integer(end),
                             KernelArg::integer(step)},
                            0, 0, 0);
      return success();
    }
    int64_t outer, inner, n = whole[axis];
    splitAt(whole, axis, outer, inner);
    int64_t m = (end - start + step - 1) / step, elements = numel(result);
    // A slice of whole quads moves them (slice_quads_kernel); its scatter,
    // which also writes zeros, stays element-wise.
    const bool quads = !scatter && toQuads(inner, {&n, &start, &m}, step == 1);
    if (quads)
      elements /= kQuadElements;
    int32_t kernel =
        quads ? builder.kernel("slice_quads", withKernel(kCudaSlice, "slice_quads_kernel"))
              : builder.kernel(kernelName,
                               withKernel(kCudaSlice, scatter ? "slice_scatter_kernel"
                                                          : "slice_kernel"));
    addGridStrideStep(builder, kernel,
                      {KernelArg::buffer(input), KernelArg::buffer(result),
                       KernelArg::integer(outer), KernelArg::integer(n),
                       KernelArg::integer(inner), KernelArg::integer(start),
                       KernelArg::integer(step), KernelArg::integer(m)},
                      elements);
    return success();
  }

private:
  static LogicalResult emitConcat(ConcatOp op, ProgramBuilder &builder) {
    Value result = op.getResult();
    int64_t axis = op.getAxis();
    ArrayRef<int64_t> shape = shapeOf(result);
    size_t count = op.getInputs().size();
    if (builder.target() == Target::Cpu) {
      std::vector<KernelArg> args = {KernelArg::buffer(result),
                                     KernelArg::integer(count)};
      for (Value v : op.getInputs())
        args.push_back(KernelArg::buffer(v));
      for (Value v : op.getInputs())
        args.push_back(KernelArg::integer(shapeOf(v)[axis]));
      args.push_back(shapeArg(shape));
      args.push_back(KernelArg::integer(axis));
      builder.addKernelStep(builder.kernel("concat", kCpuConcat), args, 0, 0, 0);
      return success();
    }
    int64_t outer, inner, n = shape[axis];
    splitAt(shape, axis, outer, inner);
    std::vector<int64_t> extents;
    for (Value v : op.getInputs())
      extents.push_back(shapeOf(v)[axis]);
    SmallVector<int64_t *> onAxis = {&n};
    for (int64_t &e : extents)
      onAxis.push_back(&e);
    const bool quads = toQuads(inner, onAxis, /*unitStep=*/true);
    std::vector<KernelArg> args = {KernelArg::buffer(result)};
    for (Value v : op.getInputs())
      args.push_back(KernelArg::buffer(v));
    for (int64_t e : extents)
      args.push_back(KernelArg::integer(e));
    args.push_back(KernelArg::integer(outer));
    args.push_back(KernelArg::integer(n));
    args.push_back(KernelArg::integer(inner));
    addGridStrideStep(builder,
                      builder.kernel(quads ? "concat_quads" : "concat",
                                     cudaConcat(count, quads)),
                      args, quads ? numel(result) / kQuadElements : numel(result));
    return success();
  }
};

const SliceRecipe recipe;
// Before the index recipe, which claims the whole index family.
const RecipeRegistration registration(&recipe, 5);

} // namespace

} // namespace vouch::codegen
