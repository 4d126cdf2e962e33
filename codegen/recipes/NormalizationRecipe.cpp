//===- NormalizationRecipe.cpp - softmaxes and layer_norm --------*- C++ -*-===//
//
// softmax, log_softmax, masked_softmax (its i1 mask an int32 buffer read
// through a Dims of broadcast strides), layer_norm and their VJPs.
// cuda: runtime/cuda/kernels/softmax.cuh and layernorm.cuh, rows along the
// last axis of up to 4096 held in registers by a warp or a block (each kernel
// instantiated for its rows' group and slots, rowShape); longer contiguous
// rows of softmax and masked_softmax staged in shared memory by clusters of
// two blocks (longRowLaunch), others a block each; fixed orders throughout (no
// atomics: every run gives the same bits); layer_norm_grad's dx, dweight and
// dbias in one launch over chunks of rows, its column sums in shared memory
// where a warp holds a row, the blocks' partial sums in scratch buffers
// (ProgramBuilder::addScratch) added in two levels by the last blocks to
// arrive. cpu: the
// runtime/cpu_kernels.h function the op table names (cpuKernel), left folds.
// Extents are arguments, so one kernel serves every op of a kind; a layer
// norm's weight and bias are parameters of its entry point only where the op
// has them (the template is given nullptr otherwise).
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include <algorithm>

#include "codegen/EmitSupport.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

/// The cpu kernel the op table names ("vouch::rt::softmax<T>").
std::string cpuKernelOf(Operation *op) {
  return std::string(findOpFacts(op->getName().stripDialect())->cpuKernel);
}

/// softmax and its VJPs: row (o, i) of the axis (extent n) is
/// (o·n + k)·inner + i.
struct Rows {
  int64_t outer = 1, n = 1, inner = 1;
};

Rows rowsAlong(Value v, int64_t axis) {
  ArrayRef<int64_t> shape = shapeOf(v);
  Rows r;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i)
    (i < axis ? r.outer : i == axis ? r.n : r.inner) *= shape[i];
  return r;
}

/// The register path's shape for rows of n along the last axis (rows.cuh's
/// row_group_for / row_slots_for, mirrored): groups of G threads (a warp up to
/// 1024 elements, the 256-thread block up to 4096) holding P elements each,
/// ceil(n / G) rounded up to whole vectors (4); G = P = 0 beyond, or for rows
/// along another axis (the kernels' general path). The template arguments of
/// the instantiation, so registers hold only what the row needs.
std::string rowShape(int64_t n, int64_t inner) {
  int64_t group = inner != 1 ? 0 : n <= 32 * 32 ? 32 : n <= 256 * 16 ? 256 : 0;
  int64_t slots = group == 0 ? 0 : ((n + group - 1) / group + 3) / 4 * 4;
  return ", " + std::to_string(group) + ", " + std::to_string(slots);
}

/// The template arguments of an entry point for long rows staged by a
/// cluster (longRowLaunch): no register path, Parts = kLongRowParts.
const std::string kLongRows = ", 0, 0, " + std::to_string(kLongRowParts);

/// The launch bounds of a register-path entry point (rows.cuh): at least 4
/// blocks of 256 resident per SM for f32 (at most 64 registers: measured
/// 1.2-1.4x faster at [8192, 3072] than the 90-100 the compiler takes
/// otherwise, without spills), 2 for f64; layer_norm_grad (`columnSums`: its
/// rows' two arrays and, at 3072, its column sums in registers) 2 for f32 (up
/// to 128 registers; at 768 the column sums are in shared memory, no spills)
/// and none for f64. None for the general path; long rows kLongRowEntry.
std::string rowBounds(const std::string &shape, const char *type,
                      bool columnSums = false) {
  bool f32 = std::string(type) == "float";
  if (shape == kLongRows)
    return kLongRowEntry;
  if (shape == ", 0, 0" || (columnSums && !f32))
    return "";
  return std::string("__launch_bounds__(256, ") + (f32 && !columnSums ? "4" : "2") +
         ") ";
}

uint32_t rowGrid(int64_t rows) {
  return static_cast<uint32_t>(std::max<int64_t>(1, std::min<int64_t>(rows, 4096)));
}

/// softmax / log_softmax (one tensor in) or their grads (grad, output in):
/// the cpu source calling `call`, or the cuda instantiation.
std::string softmaxSource(bool cuda, bool grad, bool log, const std::string &call,
                          const std::string &shape) {
  if (!cuda) {
    std::string ins = grad ? "static_cast<const T*>(args[0].ptr), "
                             "static_cast<const T*>(args[1].ptr), "
                           : "static_cast<const T*>(args[0].ptr), ";
    int k = grad ? 2 : 1;
    auto at = [&](int i) { return "args[" + std::to_string(k + i) + "]"; };
    return "template <class T>\nvoid @NAME@(const vouch::rt::ArgValue* args) {\n  " +
           call + "(" + ins + "static_cast<T*>(" + at(0) + ".ptr), " + at(1) +
           ".i, " + at(2) + ".i, " + at(3) + ".i);\n}\n";
  }
  std::string source = "#include \"softmax.cuh\"\n";
  for (auto [type, suffix] : kCudaRealTypes) {
    std::string in = "const " + std::string(type) + "* ";
    std::string params = grad ? in + "grad, " + in + "output" : in + "in";
    source += std::string("extern \"C\" __global__ void ") + rowBounds(shape, type) +
              "@NAME@_" + suffix + "(" + params + ", " + type +
              "* out, long long outer, long long n, long long inner) {\n  vouch::" +
              (grad ? "softmax_grad_kernel<" : "softmax_kernel<") + type + shape + ">(" +
              (grad ? "grad, output" : "in") + ", out, outer, n, inner, " +
              (log ? "true" : "false") + ");\n}\n";
  }
  return source;
}

/// masked_softmax (x, mask, the mask's Dims over x): the cpu source calling
/// `call`, or the cuda instantiation. The mask is an int32 0 / 1 buffer.
std::string maskedSoftmaxSource(bool cuda, const std::string &call,
                                const std::string &shape) {
  if (!cuda)
    return "template <class T>\nvoid @NAME@(const vouch::rt::ArgValue* args) {\n"
           "  const vouch::rt::DimsRef& d = args[2].dims;\n  " +
           call +
           "(static_cast<const T*>(args[0].ptr), "
           "static_cast<const int32_t*>(args[1].ptr), d.rank, d.extent, d.stride, "
           "static_cast<T*>(args[3].ptr), args[4].i, args[5].i, args[6].i);\n}\n";
  std::string source = "#include \"softmax.cuh\"\n";
  for (auto [type, suffix] : kCudaRealTypes)
    source += std::string("extern \"C\" __global__ void ") + rowBounds(shape, type) +
              "@NAME@_" + suffix + "(const " + type +
              "* in, const int* mask, vouch::Dims mask_dims, " +
              type +
              "* out, long long outer, long long n, long long inner) {\n"
              "  vouch::masked_softmax_kernel<" +
              type + shape + ">(in, mask, mask_dims, out, outer, n, inner);\n}\n";
  return source;
}

/// layer_norm (x, [weight], [bias], [addend]) -> y, [sum], or layer_norm_grad
/// (grad, x, [weight], [addend]) -> dx, [dweight], [dbias]: the operands and
/// results the op has are parameters, the others nullptr. On cuda the backward with
/// dweight or dbias also takes its scratch (partials, arrival counter). `yBf16`
/// (cuda, forward: the op's bf16Result): y is bf16 bits, the f32 entry alone.
/// `dxTwin` (cuda, backward: the op's bf16Twin): dx's bf16 twin `dx_bf16` after
/// the results, the f32 entry alone.
std::string layerNormSource(bool cuda, bool grad, bool weight, bool bias, bool addend,
                            const std::string &call, const std::string &shape,
                            bool sharedSums, bool yBf16, bool dxTwin) {
  using Operand = std::pair<std::string, bool>;
  std::vector<Operand> ins =
      grad ? std::vector<Operand>{{"grad", true},
                                  {"x", true},
                                  {"weight", weight},
                                  {"addend", addend}}
           : std::vector<Operand>{
                 {"x", true}, {"weight", weight}, {"bias", bias}, {"addend", addend}};
  std::vector<Operand> outs =
      grad ? std::vector<Operand>{{"dx", true}, {"dweight", weight}, {"dbias", bias}}
           : std::vector<Operand>{{"y", true}, {"sum", addend}};
  bool scratch = grad && (weight || bias);
  if (!cuda) {
    std::string args;
    int k = 0;
    for (auto &[name, present] : ins)
      args += present ? "static_cast<const T*>(args[" + std::to_string(k++) + "].ptr), "
                      : std::string("nullptr, ");
    for (auto &[name, present] : outs)
      args += present ? "static_cast<T*>(args[" + std::to_string(k++) + "].ptr), "
                      : std::string("nullptr, ");
    auto at = [&](int i) { return "args[" + std::to_string(k + i) + "]"; };
    return "template <class T>\nvoid @NAME@(const vouch::rt::ArgValue* args) {\n  " +
           call + "(" + args + at(0) + ".i, " + at(1) + ".i, static_cast<T>(" + at(2) +
           ".real));\n}\n";
  }
  std::string source = "#include \"layernorm.cuh\"\n";
  for (auto [type, suffix] : kCudaRealTypes) {
    if ((yBf16 || dxTwin) && std::string(type) != "float")
      continue;
    std::string params, names;
    for (auto &[name, present] : ins) {
      if (present)
        params += "const " + std::string(type) + "* " + name + ", ";
      names += (present ? name : std::string("nullptr")) + ", ";
    }
    for (auto &[name, present] : outs) {
      if (present)
        params += std::string(yBf16 && name == "y" ? "unsigned short" : type) + "* " +
                  name + ", ";
      names += (present ? name : std::string("nullptr")) + ", ";
    }
    if (dxTwin)
      params += "unsigned short* dx_bf16, ";
    std::string tail = grad ? (scratch ? ", " + std::string(type) +
                                             "* partials, unsigned* arrivals"
                                       : std::string())
                            : std::string();
    source += std::string("extern \"C\" __global__ void ") +
              rowBounds(shape, type, grad) + "@NAME@_" + suffix + "(" +
              params + "long long rows, long long d, double eps" + tail +
              ") {\n  vouch::" +
              (grad ? "layer_norm_grad_kernel<" : "layer_norm_kernel<") + type + shape +
              (sharedSums ? ", true" : "") + (yBf16 ? ", unsigned short" : "") + ">(" +
              names + "rows, d, eps" +
              (grad ? (scratch ? ", partials, arrivals" : ", nullptr, nullptr") : "") +
              (dxTwin ? ", dx_bf16" : "") + ");\n}\n";
  }
  return source;
}

/// layernorm.cuh's layer_norm_grad_grid: one block per chunk of 32 rows, at
/// most 512 (kernel_lab checks the kernel with the same rule); and
/// layer_norm_grad_groups: the first level of its partial sums, 16 blocks each.
uint32_t layerNormGradGrid(int64_t rows) {
  int64_t chunks = (rows + 31) / 32;
  return static_cast<uint32_t>(std::clamp<int64_t>(chunks, 1, 512));
}
int64_t layerNormGradGroups(uint32_t grid) { return (int64_t(grid) + 15) / 16; }

/// The dynamic shared memory layer_norm_grad keeps its column sums in
/// (SharedSums) where a warp holds a row (d <= 1024): its registers then hold
/// the row without spilling (57 -> 49 us at [8192, 768]). layernorm.cuh's
/// layer_norm_grad_shared_bytes(d, 32, sizeof(double)) (8 warps, 2 * d each),
/// so f64 runs fit; 0 (sums in registers) for longer rows.
uint32_t layerNormGradSharedBytes(int64_t d) {
  return rowShape(d, 1).rfind(", 32,", 0) == 0 ? static_cast<uint32_t>(8 * 2 * d * 8) : 0;
}

/// The instantiation's template arguments for rows `r` launched as `launch`.
std::string longRowShape(const Rows &r, const LongRowLaunch &launch) {
  return launch.threads == 512 ? kLongRows : rowShape(r.n, r.inner);
}

/// The launch of softmax-like rows: long contiguous rows (no register path)
/// staged through shared memory (longRowLaunch, where the kernel has that
/// path: `staged`); otherwise rowGrid's blocks of 256 (cpu: none).
LongRowLaunch launchOf(bool cuda, const Rows &r, bool staged = true) {
  if (!cuda)
    return {0, 0, 0, 0};
  if (staged && r.inner == 1 && rowShape(r.n, r.inner) == ", 0, 0")
    return longRowLaunch(r.outer, r.n);
  return {rowGrid(r.outer * r.inner), 256, 0, 0};
}

class NormalizationRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "normalization"; }
  bool handles(Operation *op) const override {
    return familyOf(op) == OpFamily::Normalization;
  }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    Operation *op = group.ops.front();
    bool cuda = builder.target() == Target::Cuda;
    uint32_t threads = cuda ? 256 : 0, height = cuda ? 1 : 0;
    std::string call = cpuKernelOf(op);
    std::string base(op->getName().stripDialect());

    if (isa<SoftmaxOp, LogSoftmaxOp, SoftmaxGradOp, LogSoftmaxGradOp>(op)) {
      bool grad = isa<SoftmaxGradOp, LogSoftmaxGradOp>(op);
      bool log = isa<LogSoftmaxOp, LogSoftmaxGradOp>(op);
      int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
      Rows r = rowsAlong(op->getResult(0), axis);
      LongRowLaunch launch = launchOf(cuda, r, !grad);
      int32_t kernel = builder.kernel(
          base, softmaxSource(cuda, grad, log, call, longRowShape(r, launch)));
      SmallVector<KernelArg> args;
      for (Value v : op->getOperands())
        args.push_back(KernelArg::buffer(v));
      args.append({KernelArg::buffer(op->getResult(0)), KernelArg::integer(r.outer),
                   KernelArg::integer(r.n), KernelArg::integer(r.inner)});
      builder.addKernelStep(kernel, args, launch.grid, launch.threads, height,
                            launch.sharedBytes, launch.blocksPerSM);
      return success();
    }

    if (auto masked = dyn_cast<MaskedSoftmaxOp>(op)) {
      Rows r = rowsAlong(masked.getResult(), masked.getAxis());
      ArrayRef<int64_t> in = shapeOf(masked.getInput());
      LongRowLaunch launch = launchOf(cuda, r);
      int32_t kernel = builder.kernel(
          base, maskedSoftmaxSource(cuda, call, longRowShape(r, launch)));
      builder.addKernelStep(
          kernel,
          {KernelArg::buffer(masked.getInput()), KernelArg::buffer(masked.getMask()),
           KernelArg::dims(in, broadcastStrides(in, shapeOf(masked.getMask()))),
           KernelArg::buffer(masked.getResult()), KernelArg::integer(r.outer),
           KernelArg::integer(r.n), KernelArg::integer(r.inner)},
          launch.grid, launch.threads, height, launch.sharedBytes, launch.blocksPerSM);
      return success();
    }

    Value result = op->getResult(0), weight, bias;
    double eps;
    SmallVector<KernelArg> args;
    LayerNormGradOp backward = dyn_cast<LayerNormGradOp>(op);
    if (auto forward = dyn_cast<LayerNormOp>(op)) {
      weight = forward.getWeight();
      bias = forward.getBias();
      eps = forward.getEps().convertToDouble();
      args.push_back(KernelArg::buffer(forward.getInput()));
    } else {
      weight = backward.getWeight();
      eps = backward.getEps().convertToDouble();
      args.append({KernelArg::buffer(backward.getGrad()),
                   KernelArg::buffer(backward.getInput())});
    }
    Value addend = backward ? backward.getAddend()
                            : cast<LayerNormOp>(op).getAddend();
    if (weight)
      args.push_back(KernelArg::buffer(weight));
    if (bias)
      args.push_back(KernelArg::buffer(bias));
    if (addend)
      args.push_back(KernelArg::buffer(addend));
    // The results: y (then the sum where there is an addend), or dx then
    // dweight / dbias where the op has them, then dx's bf16 twin where the
    // group has one (vouch-round-bf16-operands' fusion: bf16TwinStoreOf).
    for (Value r : op->getResults())
      args.push_back(KernelArg::buffer(r));
    Value twin = bf16TwinStoreOf(group);
    if (twin)
      args.push_back(KernelArg::buffer(twin));
    // A backward's dbias is a result where a forward's bias is an operand.
    bool withBias = backward ? bool(backward.getBiasGrad()) : bool(bias);
    int64_t d = shapeOf(result).back();
    int64_t rows = numel(result) / d;
    args.append({KernelArg::integer(rows), KernelArg::integer(d),
                 KernelArg::real(eps)});
    uint32_t grid = cuda ? rowGrid(rows) : 0;
    if (backward && cuda) {
      grid = layerNormGradGrid(rows);
      if (weight || withBias) {
        // Per-block and per-group partial sums of dweight and dbias, and the
        // arrival counters the last blocks reset (layernorm.cuh), this op's own.
        std::string at = builder.bufferName(result);
        int64_t groups = layerNormGradGroups(grid);
        args.push_back(KernelArg::scratch(builder.addScratch(
            at + ".partials", (int64_t(grid) + groups) * 2 * d, rt::DType::Real, false)));
        args.push_back(KernelArg::scratch(builder.addScratch(
            at + ".arrivals", groups + 1, rt::DType::I32, true)));
      }
    }
    // y stored as bf16 (the op table's bf16Result, made by vouch-round-bf16-operands).
    FailureOr<bool> stored = storesBf16Result(op, cuda);
    if (failed(stored))
      return failure();
    bool yBf16 = *stored;
    if (twin && !(cuda && backward))
      return op->emitOpError("stores a bf16 twin of dx, which only the cuda "
                             "backward kernel does");
    std::string variant = base + (weight ? "_w" : "") + (withBias ? "_b" : "") +
                          (addend ? "_plus" : "") + (yBf16 ? "_bf16" : "") +
                          (twin ? "_bf16_twin" : "");
    uint32_t shared = backward && cuda ? layerNormGradSharedBytes(d) : 0;
    int32_t kernel = builder.kernel(
        variant, layerNormSource(cuda, bool(backward), bool(weight), withBias,
                                 bool(addend), call, rowShape(d, 1), shared > 0, yBf16,
                                 bool(twin)));
    builder.addKernelStep(kernel, args, grid, threads, height, shared);
    return success();
  }
};

const NormalizationRecipe recipe;
const RecipeRegistration registration(&recipe);

} // namespace

} // namespace vouch::codegen
