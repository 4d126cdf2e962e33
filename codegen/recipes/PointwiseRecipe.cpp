//===- PointwiseRecipe.cpp - elementwise ops and fused chains ---*- C++ -*-===//
//
// One kernel per chain of pointwise ops (vouch-fuse-pointwise's groups; on
// cpu one op each): the ops' scalar formulas (PointwiseOpInterface) written
// into a functor, instantiated over runtime/cuda/kernels/pointwise.cuh on
// cuda, or as a plain loop on cpu. The element count is an argument, so
// every chain with the same formulas shares one kernel. A vouch.round_bf16
// in a chain (or alone) is the identity in the functor and a bf16 store in
// the kernel (pointwise.cuh's Bf16Out): cuda's f32 runs only.
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include <sstream>

#include "codegen/EmitSupport.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "passes/Passes.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

struct GroupIO {
  SmallVector<Value> loads;  ///< operands defined outside the group
  SmallVector<Value> stores; ///< results read outside it (or by nothing)
  int64_t elements = 0;
};

GroupIO groupIO(ArrayRef<Operation *> ops) {
  GroupIO io;
  io.elements = numel(ops.front()->getResult(0));
  llvm::DenseSet<Operation *> inside(ops.begin(), ops.end());
  for (Operation *op : ops) {
    for (Value v : op->getOperands())
      if (!inside.contains(v.getDefiningOp()) && !llvm::is_contained(io.loads, v))
        io.loads.push_back(v);
    for (Value r : op->getResults())
      if (r.use_empty() ||
          llvm::any_of(r.getUsers(),
                       [&](Operation *user) { return !inside.contains(user); }))
        io.stores.push_back(r);
  }
  return io;
}

/// The body statements: `const T tN = <formula>;` per op over the lane
/// values `a[k]`, then `r[k] = ...` per store.
std::string bodyStatements(ArrayRef<Operation *> ops, const GroupIO &io,
                           llvm::function_ref<std::string(unsigned)> load,
                           llvm::function_ref<std::string(unsigned)> store,
                           StringRef indent) {
  std::ostringstream out;
  llvm::DenseMap<Value, std::string> local;
  for (auto [k, v] : llvm::enumerate(io.loads))
    local[v] = load(k);
  int temp = 0;
  for (Operation *op : ops) {
    std::string expr;
    if (auto fill = dyn_cast<FillOp>(op))
      expr = "T(" + exact(fill.getValue().convertToDouble()) + ")";
    else if (auto broadcast = dyn_cast<BroadcastOp>(op))
      expr = local.lookup(broadcast.getInput()); // a rank-0 value
    else if (auto round = dyn_cast<RoundBf16Op>(op))
      expr = local.lookup(round.getInput()); // rounded as it is stored
    else {
      SmallVector<std::string> operands;
      for (Value v : op->getOperands())
        operands.push_back(local.lookup(v));
      expr = cast<PointwiseOpInterface>(op).emitScalarExpr(operands);
    }
    std::string name = "t" + std::to_string(temp++);
    out << indent.str() << "const T " << name << " = " << expr << ";  // "
        << op->getName().stripDialect().str() << "\n";
    local[op->getResult(0)] = name;
  }
  for (auto [k, v] : llvm::enumerate(io.stores))
    out << indent.str() << store(k) << " = " << local.lookup(v) << ";\n";
  return out.str();
}

std::string baseName(ArrayRef<Operation *> ops) {
  std::string base = "pointwise";
  for (Operation *op : ops)
    base += "_" + op->getName().stripDialect().str();
  return base.size() > 48 ? "pointwise" : base;
}

class PointwiseRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "pointwise"; }
  bool handles(Operation *op) const override { return isFusible(op); }
  bool computesFusedGroups() const override { return true; }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    GroupIO io = groupIO(group.ops);
    // The scalar mask has one bit per value read.
    if (io.loads.size() > 64)
      return group.ops.front()->emitOpError("fused group reads more than 64 values"),
             failure();
    // A single-element value read by a larger kernel: element 0 (the
    // operand of a rank-0 broadcast).
    uint64_t scalarMask = 0;
    for (auto [k, v] : llvm::enumerate(io.loads))
      if (numel(v) == 1 && io.elements != 1)
        scalarMask |= uint64_t(1) << k;
    std::vector<KernelArg> args;
    for (Value v : io.stores)
      args.push_back(KernelArg::buffer(v));
    for (Value v : io.loads)
      args.push_back(KernelArg::buffer(v));
    args.push_back(KernelArg::integer(io.elements));
    if (builder.target() == Target::Cpu && bf16Stores(io) != 0)
      return group.ops.front()->emitOpError(
          "stores a bf16 product operand, which only cuda builds with bf16 "
          "products have");
    if (builder.target() == Target::Cpu) {
      int32_t kernel = builder.kernel(baseName(group.ops), cpuSource(group, io, scalarMask));
      builder.addKernelStep(kernel, args, 0, 0, 0);
      return success();
    }
    args.push_back(KernelArg::integer(static_cast<int64_t>(scalarMask)));
    int32_t kernel = builder.kernel(baseName(group.ops), cudaSource(group, io));
    // 128-bit lanes when the count allows; the kernel re-checks alignment.
    int64_t lanes = io.elements % 4 == 0 ? io.elements / 4 : io.elements;
    addGridStrideStep(builder, kernel, args, lanes);
    return success();
  }

private:
  /// Bit k: store k is a bf16 value (vouch.round_bf16's), rounded as the
  /// kernel stores it (pointwise.cuh's Bf16Out).
  static uint64_t bf16Stores(const GroupIO &io) {
    uint64_t mask = 0;
    for (auto [k, v] : llvm::enumerate(io.stores))
      if (cast<ShapedType>(v.getType()).getElementType().isBF16())
        mask |= uint64_t(1) << k;
    return mask;
  }

  static std::string cudaSource(const StepGroup &group, const GroupIO &io) {
    std::ostringstream out;
    out << "#include \"pointwise.cuh\"\n"
        << "struct @NAME@_op {\n"
        << "  template <class T> __device__ void operator()(const T* a, T* r) const {\n"
        << bodyStatements(
               group.ops, io,
               [](unsigned k) { return "a[" + std::to_string(k) + "]"; },
               [](unsigned k) { return "r[" + std::to_string(k) + "]"; }, "    ")
        << "  }\n};\n";
    size_t nOut = io.stores.size(), nIn = io.loads.size();
    // A chain with a bf16 store runs in f32 runs only (bf16 products): its
    // f32 entry point alone.
    const uint64_t bf16 = bf16Stores(io);
    for (const char *t : {"float", "double"}) {
      if (bf16 && t[0] == 'd')
        break;
      auto isBf16 = [&](size_t k) { return (bf16 >> k) & 1; };
      out << "extern \"C\" __global__ void @NAME@_" << (t[0] == 'f' ? "f32" : "f64")
          << "(";
      for (size_t k = 0; k < nOut; ++k)
        out << (isBf16(k) ? "unsigned short" : t) << "* o" << k << ", ";
      for (size_t k = 0; k < nIn; ++k)
        out << "const " << t << "* i" << k << ", ";
      out << "long long n, unsigned long long scalar_mask) {\n  " << t
          << "* out[] = {";
      for (size_t k = 0; k < nOut; ++k)
        out << (k ? ", " : "")
            << (isBf16(k) ? "reinterpret_cast<float*>(o" + std::to_string(k) + ")"
                          : "o" + std::to_string(k));
      out << "};\n";
      std::string in = "static_cast<const " + std::string(t) + "* const*>(nullptr)";
      if (nIn) {
        out << "  const " << t << "* in[] = {";
        for (size_t k = 0; k < nIn; ++k)
          out << (k ? ", " : "") << "i" << k;
        out << "};\n";
        in = "in";
      }
      out << "  vouch::pointwise_kernel<" << nOut << ", " << nIn;
      if (bf16)
        out << ", 0x" << llvm::utohexstr(bf16) << "ull";
      out << ">(@NAME@_op{}, out, " << in << ", n, scalar_mask);\n}\n";
    }
    return out.str();
  }

  static std::string cpuSource(const StepGroup &group, const GroupIO &io,
                               uint64_t scalarMask) {
    std::ostringstream out;
    size_t nOut = io.stores.size();
    // std's overloads of the math functions formulas call (tanh(x) on a
    // float is tanhf, as in CUDA device code), in this function only.
    out << "template <class T>\nvoid @NAME@(const vouch::rt::ArgValue* args) {\n"
        << "  using namespace std;\n";
    for (size_t k = 0; k < nOut; ++k)
      out << "  T* o" << k << " = static_cast<T*>(args[" << k << "].ptr);\n";
    for (size_t k = 0; k < io.loads.size(); ++k)
      out << "  const T* i" << k << " = static_cast<const T*>(args["
          << nOut + k << "].ptr);\n";
    out << "  const int64_t n = args[" << nOut + io.loads.size() << "].i;\n"
        << "  for (int64_t i = 0; i < n; ++i) {\n"
        << bodyStatements(
               group.ops, io,
               [&](unsigned k) {
                 return "i" + std::to_string(k) +
                        ((scalarMask >> k) & 1 ? "[0]" : "[i]");
               },
               [](unsigned k) { return "o" + std::to_string(k) + "[i]"; },
               "    ")
        << "  }\n}\n";
    return out.str();
  }
};

const PointwiseRecipe recipe;
// First: a rank-0 broadcast is fusible, and then this recipe computes it
// (inside the chain) rather than the index recipe.
const RecipeRegistration registration(&recipe, 0);

} // namespace

} // namespace vouch::codegen
