//===- CudaSchedule.cpp - kernels of the cuda target ------------*- C++ -*-===//
//
// Kernels are small, one job each (llm.c's habit): a grid-stride loop per
// pointwise group; reductions as one block per output with a fixed-shape
// shared-memory tree, so results do not depend on scheduling (no atomics
// anywhere: every run is bitwise reproducible); index-mapping kernels for
// broadcast and permute with every extent baked in as a literal.
//
//===----------------------------------------------------------------------===//
#include "codegen/CudaSchedule.h"

#include <sstream>

#include "codegen/EmitSupport.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "passes/Passes.h"

using namespace mlir;

namespace vouch::codegen {
namespace {



std::vector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

FailureOr<Step> singleStep(Operation *op) {
  Step step;
  step.ops.push_back(op);
  step.elements = op->getNumResults() ? numel(op->getResult(0)) : 0;
  if (isa<MatmulOp>(op))
    step.kind = Step::Matmul;
  else if (isa<LinearOp>(op))
    step.kind = Step::Linear;
  else if (isa<ReshapeOp>(op))
    step.kind = Step::Alias;
  else if (isa<ReduceSumOp, ReduceMeanOp>(op)) {
    step.kind = Step::Reduce;
    ArrayRef<int64_t> axes = isa<ReduceSumOp>(op)
                                 ? cast<ReduceSumOp>(op).getAxes()
                                 : cast<ReduceMeanOp>(op).getAxes();
    bool leading = true;
    for (size_t i = 0; i < axes.size(); ++i)
      leading = leading && axes[i] == static_cast<int64_t>(i);
    step.columnReduce = leading && !axes.empty() &&
                        numel(op->getResult(0)) >= 32;
  }
  else if (isa<MseLossOp>(op))
    step.kind = Step::MseLoss;
  else if (isa<PermuteOp>(op))
    step.kind = Step::Permute;
  else if (isa<BroadcastOp>(op) && !isFusible(op))
    step.kind = Step::Broadcast;
  else
    step.kind = Step::Pointwise;
  // Native kernels take the symbol the plan gave the op (vouch.kernel);
  // library calls and aliases have no kernel of their own.
  if (step.kind != Step::Matmul && step.kind != Step::Linear &&
      step.kind != Step::Alias) {
    auto planned = op->getAttrOfType<StringAttr>(kKernelAttr);
    if (!planned)
      return op->emitOpError("has no kernel symbol: plan the model "
                             "(vouch-plan) before scheduling it"),
             failure();
    step.symbol = planned.str();
  }
  return step;
}

/// Loads and stores of a pointwise group: operands defined outside it, and
/// results read outside it.
void resolveGroupIO(Step &step) {
  llvm::DenseSet<Operation *> inside(step.ops.begin(), step.ops.end());
  for (Operation *op : step.ops) {
    for (Value v : op->getOperands())
      if (!inside.contains(v.getDefiningOp()) &&
          !llvm::is_contained(step.loads, v))
        step.loads.push_back(v);
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(),
                       [&](Operation *user) { return !inside.contains(user); }))
        step.stores.push_back(r);
  }
}

FailureOr<std::vector<Step>> scheduleOps(ArrayRef<Operation *> ops) {
  std::vector<Step> steps;
  for (size_t i = 0; i < ops.size();) {
    Operation *op = ops[i];
    auto group = op->getAttrOfType<StringAttr>(kFusionGroupAttr);
    if (!group) {
      FailureOr<Step> single = singleStep(op);
      if (failed(single))
        return failure();
      steps.push_back(*single);
      if (steps.back().kind == Step::Pointwise)
        resolveGroupIO(steps.back());
      ++i;
      continue;
    }
    Step step;
    step.kind = Step::Pointwise;
    step.elements = numel(op->getResult(0));
    step.symbol = group.str();
    while (i < ops.size() &&
           ops[i]->getAttrOfType<StringAttr>(kFusionGroupAttr) == group)
      step.ops.push_back(ops[i++]);
    resolveGroupIO(step);
    steps.push_back(step);
  }
  return steps;
}

//===----------------------------------------------------------------------===//
// Kernel text
//===----------------------------------------------------------------------===//

/// `extern "C"` entry points for float and double around a templated body.
void emitEntryPoints(std::ostringstream &out, const std::string &symbol,
                     const std::vector<std::pair<std::string, std::string>> &params) {
  for (const char *t : {"float", "double"}) {
    std::string suffix = std::string(t) == "float" ? "_f32" : "_f64";
    out << "extern \"C\" __global__ void " << symbol << suffix << "(";
    for (size_t i = 0; i < params.size(); ++i) {
      std::string type = params[i].first;
      size_t at = type.find('T');
      if (at != std::string::npos && (type == "T*" || type == "const T*"))
        type.replace(at, 1, t);
      out << (i ? ", " : "") << type << " " << params[i].second;
    }
    out << ") {\n  " << symbol << "_body<" << t << ">(";
    for (size_t i = 0; i < params.size(); ++i)
      out << (i ? ", " : "") << params[i].second;
    out << ");\n}\n";
  }
  out << "\n";
}

void emitBodyHeader(std::ostringstream &out, const std::string &symbol,
                    const std::vector<std::pair<std::string, std::string>> &params) {
  out << "template <class T>\n__device__ __forceinline__ void " << symbol
      << "_body(";
  for (size_t i = 0; i < params.size(); ++i)
    out << (i ? ", " : "") << params[i].first << " " << params[i].second;
  out << ") {\n";
}

void emitPointwise(std::ostringstream &out, const Step &step) {
  std::vector<std::pair<std::string, std::string>> params;
  for (size_t k = 0; k < step.stores.size(); ++k)
    params.push_back({"T*", "out" + std::to_string(k)});
  for (size_t k = 0; k < step.loads.size(); ++k)
    params.push_back({"const T*", "in" + std::to_string(k)});
  bool vec = step.vectorized();
  out << "// " << step.ops.size() << " op(s):";
  for (Operation *op : step.ops)
    out << " " << op->getName().stripDialect().str();
  out << (vec ? "; 128-bit loads and stores" : "") << "\n";
  emitBodyHeader(out, step.symbol, params);
  // W lanes per thread: one 16-byte vector (4 floats or 2 doubles), or 1.
  out << "  constexpr int W = " << (vec ? "16 / sizeof(T)" : "1") << ";\n"
      << "  struct alignas(" << (vec ? "16" : "sizeof(T)") << ") V { T v[W]; };\n"
      << "  const long long n = " << step.elements << "LL / W;\n"
      << "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;"
         " i < n; i += (long long)gridDim.x * blockDim.x) {\n";
  std::vector<bool> scalar(step.loads.size());
  for (size_t k = 0; k < step.loads.size(); ++k) {
    // A single-element value read by a scalar broadcast: element 0.
    scalar[k] = numel(step.loads[k]) == 1 && step.elements != 1;
    if (scalar[k])
      out << "    const T s" << k << " = in" << k << "[0];\n";
    else
      out << "    const V l" << k << " = reinterpret_cast<const V*>(in" << k
          << ")[i];\n";
  }
  for (size_t k = 0; k < step.stores.size(); ++k)
    out << "    V o" << k << ";\n";
  out << "#pragma unroll\n    for (int j = 0; j < W; ++j) {\n";
  llvm::DenseMap<Value, std::string> local;
  for (size_t k = 0; k < step.loads.size(); ++k) {
    std::string name = "a" + std::to_string(k);
    out << "      const T " << name << " = "
        << (scalar[k] ? "s" + std::to_string(k) : "l" + std::to_string(k) + ".v[j]")
        << ";\n";
    local[step.loads[k]] = name;
  }
  int temp = 0;
  for (Operation *op : step.ops) {
    std::string expr;
    if (auto fill = dyn_cast<FillOp>(op))
      expr = "T(" + exact(fill.getValue().convertToDouble()) + ")";
    else if (auto broadcast = dyn_cast<BroadcastOp>(op))
      expr = local.lookup(broadcast.getInput());
    else {
      SmallVector<std::string> operands;
      for (Value v : op->getOperands())
        operands.push_back(local.lookup(v));
      expr = cast<PointwiseOpInterface>(op).emitScalarExpr(operands);
    }
    std::string name = "t" + std::to_string(temp++);
    out << "      const T " << name << " = " << expr << ";  // "
        << op->getName().stripDialect().str() << "\n";
    local[op->getResult(0)] = name;
  }
  for (size_t k = 0; k < step.stores.size(); ++k)
    out << "      o" << k << ".v[j] = " << local.lookup(step.stores[k]) << ";\n";
  out << "    }\n";
  for (size_t k = 0; k < step.stores.size(); ++k)
    out << "    reinterpret_cast<V*>(out" << k << ")[i] = o" << k << ";\n";
  out << "  }\n}\n";
  emitEntryPoints(out, step.symbol, params);
}

/// Decomposes flat index `index` over `extents` into an offset with
/// `strides` (all literals), as C++ statements accumulating into `offset`.
void emitIndexMap(std::ostringstream &out, const std::string &indent,
                  const std::string &index, const std::string &offset,
                  ArrayRef<int64_t> extents, ArrayRef<int64_t> strides) {
  out << indent << "long long " << offset << " = 0;\n"
      << indent << "{\n" << indent << "  long long rest = " << index << ";\n";
  for (int64_t k = static_cast<int64_t>(extents.size()) - 1; k >= 0; --k) {
    out << indent << "  " << offset << " += (rest % " << extents[k] << "LL) * "
        << strides[k] << "LL;";
    if (k > 0)
      out << " rest /= " << extents[k] << "LL;";
    out << "\n";
  }
  out << indent << "}\n";
}

void emitReduce(std::ostringstream &out, const Step &step) {
  Operation *op = step.ops[0];
  Value input = op->getOperand(0);
  ArrayRef<int64_t> in = shapeOf(input);
  std::vector<int64_t> strides = stridesOf(in);
  ArrayRef<int64_t> axes = isa<ReduceSumOp>(op) ? cast<ReduceSumOp>(op).getAxes()
                                                : cast<ReduceMeanOp>(op).getAxes();
  SmallVector<int64_t> keptExt, keptStr, redExt, redStr;
  for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i) {
    bool reduced = llvm::is_contained(axes, i);
    (reduced ? redExt : keptExt).push_back(in[i]);
    (reduced ? redStr : keptStr).push_back(strides[i]);
  }
  int64_t outputs = numel(op->getResult(0));
  int64_t count = numel(input) / std::max<int64_t>(outputs, 1);
  std::string scale = isa<ReduceMeanOp>(op)
                          ? " / T(" + std::to_string(count) + ")"
                          : "";
  std::vector<std::pair<std::string, std::string>> params = {
      {"const T*", "in"}, {"T*", "out"}};
  if (step.columnReduce) {
    // in is [count, outputs] row-major. Block (32, 32): threadIdx.x picks
    // one of 32 consecutive outputs (a warp reads 128 contiguous bytes),
    // threadIdx.y one of 32 row phases; the 32 phase sums are then added in
    // a fixed tree. Same order every run: no atomics.
    out << "// " << op->getName().stripDialect().str() << " over the "
        << count << " rows of a [" << count << ", " << outputs
        << "] matrix: coalesced column sums, a fixed-order tree (no atomics)\n";
    emitBodyHeader(out, step.symbol, params);
    out << "  __shared__ T partial[32][33];\n"
        << "  const long long c = (long long)blockIdx.x * 32 + threadIdx.x;\n"
        << "  T sum = T(0);\n"
        << "  if (c < " << outputs << "LL)\n"
        << "    for (long long r = threadIdx.y; r < " << count
        << "LL; r += 32) sum += in[r * " << outputs << "LL + c];\n"
        << "  partial[threadIdx.y][threadIdx.x] = sum;\n  __syncthreads();\n"
        << "  for (int s = 16; s > 0; s >>= 1) {\n"
        << "    if (threadIdx.y < s) partial[threadIdx.y][threadIdx.x] += "
           "partial[threadIdx.y + s][threadIdx.x];\n"
        << "    __syncthreads();\n  }\n"
        << "  if (threadIdx.y == 0 && c < " << outputs
        << "LL) out[c] = partial[0][threadIdx.x]" << scale << ";\n}\n";
    emitEntryPoints(out, step.symbol, params);
    return;
  }
  out << "// " << op->getName().stripDialect().str() << " over "
      << count << " elements into " << outputs
      << " outputs: one block per output, a fixed-order tree (no atomics)\n";
  emitBodyHeader(out, step.symbol, params);
  out << "  __shared__ T partial[256];\n"
      << "  for (long long o = blockIdx.x; o < " << outputs
      << "LL; o += gridDim.x) {\n";
  emitIndexMap(out, "    ", "o", "base", keptExt, keptStr);
  out << "    T sum = T(0);\n"
      << "    for (long long r = threadIdx.x; r < " << count
      << "LL; r += blockDim.x) {\n";
  emitIndexMap(out, "      ", "r", "offset", redExt, redStr);
  out << "      sum += in[base + offset];\n    }\n"
      << "    partial[threadIdx.x] = sum;\n    __syncthreads();\n"
      << "    for (int s = blockDim.x / 2; s > 0; s >>= 1) {\n"
      << "      if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];\n"
      << "      __syncthreads();\n    }\n"
      << "    if (threadIdx.x == 0) out[o] = partial[0]" << scale << ";\n"
      << "    __syncthreads();\n  }\n}\n";
  emitEntryPoints(out, step.symbol, params);
}

void emitMseLoss(std::ostringstream &out, const Step &step) {
  auto op = cast<MseLossOp>(step.ops[0]);
  int64_t n = numel(op.getPrediction());
  std::vector<std::pair<std::string, std::string>> params = {
      {"const T*", "pred"}, {"const T*", "target"}, {"T*", "out"}};
  out << "// mse_loss over " << n
      << " elements: one block, a fixed-order tree (no atomics)\n";
  emitBodyHeader(out, step.symbol, params);
  out << "  __shared__ T partial[256];\n  T sum = T(0);\n"
      << "  for (long long i = threadIdx.x; i < " << n
      << "LL; i += blockDim.x) {\n"
      << "    const T d = pred[i] - target[i];\n    sum += d * d;\n  }\n"
      << "  partial[threadIdx.x] = sum;\n  __syncthreads();\n"
      << "  for (int s = blockDim.x / 2; s > 0; s >>= 1) {\n"
      << "    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];\n"
      << "    __syncthreads();\n  }\n"
      << "  if (threadIdx.x == 0) out[0] = partial[0] / T(" << n << ");\n}\n";
  emitEntryPoints(out, step.symbol, params);
}

void emitIndexKernel(std::ostringstream &out, const Step &step) {
  Operation *op = step.ops[0];
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  ArrayRef<int64_t> res = shapeOf(op->getResult(0));
  std::vector<int64_t> inStrides = stridesOf(in);
  // Stride of the input for each result axis (0 for a repeated axis).
  SmallVector<int64_t> source(res.size(), 0);
  if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
    ArrayRef<int64_t> dims = broadcast.getDims();
    for (size_t k = 0; k < dims.size(); ++k)
      source[dims[k]] = in[k] == 1 ? 0 : inStrides[k];
  } else {
    ArrayRef<int64_t> perm = cast<PermuteOp>(op).getPerm();
    for (size_t k = 0; k < perm.size(); ++k)
      source[k] = inStrides[perm[k]];
  }
  std::vector<std::pair<std::string, std::string>> params = {
      {"const T*", "in"}, {"T*", "out"}};
  out << "// " << op->getName().stripDialect().str()
      << ": each result element reads one input element\n";
  emitBodyHeader(out, step.symbol, params);
  out << "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;"
         " i < " << numel(op->getResult(0))
      << "LL; i += (long long)gridDim.x * blockDim.x) {\n";
  emitIndexMap(out, "    ", "i", "from", res, source);
  out << "    out[i] = in[from];\n  }\n}\n";
  emitEntryPoints(out, step.symbol, params);
}

/// One launch updates every parameter: blockIdx.y selects the parameter.
/// `step` lives on the device so a captured CUDA graph can be replayed.
void emitOptimizer(std::ostringstream &out, const std::string &model) {
  out << R"cuda(// The optimizer: one kernel for all parameters (blockIdx.y selects one).
// kind 0 = SGD (momentum), 1 = Adam, 2 = AdamW; same formulas as the CPU
// runtime (runtime/optim.cc), hyper-parameters in double.
template <class T> struct ParamSlot { T* p; const T* g; T* m; T* v; long long n; };

template <class T>
__device__ __forceinline__ void )cuda"
      << model << R"cuda(_optimizer_body(const ParamSlot<T>* slots, const long long* step, int kind,
    double lr, double beta1, double beta2, double eps, double weight_decay, double momentum) {
  const ParamSlot<T> s = slots[blockIdx.y];
  const long long t = *step + 1;
  const double c1 = 1.0 - pow(beta1, (double)t), c2 = 1.0 - pow(beta2, (double)t);
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < s.n;
       i += (long long)gridDim.x * blockDim.x) {
    T g = s.g[i];
    T p = s.p[i];
    if (kind == 0) {
      if (weight_decay != 0) g = g + T(weight_decay) * p;
      T buf = g;
      if (momentum != 0) { buf = t == 1 ? g : T(momentum) * s.m[i] + g; s.m[i] = buf; }
      s.p[i] = p - T(lr) * buf;
      continue;
    }
    if (kind == 2) p = p - T(lr * weight_decay) * p;
    else if (weight_decay != 0) g = g + T(weight_decay) * p;
    const T m = T(beta1) * s.m[i] + T(1.0 - beta1) * g;
    const T v = T(beta2) * s.v[i] + T(1.0 - beta2) * g * g;
    s.m[i] = m;
    s.v[i] = v;
    s.p[i] = p - T(lr) * (m / T(c1)) / (sqrt(v / T(c2)) + T(eps));
  }
}
)cuda";
  for (const char *t : {"float", "double"}) {
    std::string suffix = std::string(t) == "float" ? "_f32" : "_f64";
    out << "extern \"C\" __global__ void " << model << "_optimizer" << suffix
        << "(const ParamSlot<" << t << ">* slots, const long long* step, int kind, double lr, "
           "double beta1, double beta2, double eps, double weight_decay, double momentum) {\n  "
        << model << "_optimizer_body<" << t
        << ">(slots, step, kind, lr, beta1, beta2, eps, weight_decay, momentum);\n}\n";
  }
  out << "extern \"C\" __global__ void " << model
      << "_step_count(long long* step) { *step += 1; }\n";
}

} // namespace

FailureOr<CudaSchedule> scheduleForCuda(ModelOp model) {
  std::map<int64_t, Operation *> forwardOps;
  std::map<int64_t, SmallVector<Operation *>> backwardOps;
  SmallVector<Operation *> prologueOps;
  for (Operation &op : model.getBlock()) {
    if (auto node = op.getAttrOfType<IntegerAttr>(kNodeAttr))
      forwardOps[node.getInt()] = &op;
    else if (auto of = op.getAttrOfType<IntegerAttr>(kVjpOfAttr))
      backwardOps[of.getInt()].push_back(&op);
    else if (isa<FillOp>(op))
      prologueOps.push_back(&op);
  }
  CudaSchedule schedule;
  SmallVector<Operation *> forward;
  for (auto &[id, op] : forwardOps)
    forward.push_back(op);
  auto steps = scheduleOps(forward);
  if (failed(steps))
    return failure();
  schedule.forward = std::move(*steps);
  for (auto &[id, ops] : backwardOps) {
    if (failed(steps = scheduleOps(ops)))
      return failure();
    schedule.backward[id] = std::move(*steps);
  }
  if (failed(steps = scheduleOps(prologueOps)))
    return failure();
  schedule.prologue = std::move(*steps);
  return schedule;
}

std::string emitCudaKernels(ModelOp model, const CudaSchedule &schedule) {
  std::ostringstream out;
  out << "// Generated by vouch: the native CUDA kernels of model '"
      << model.getSymName().str()
      << "'. Compiled by NVRTC at build time. Do not edit.\n\n";
  auto emitAll = [&](const std::vector<Step> &steps) {
    for (const Step &step : steps) {
      switch (step.kind) {
      case Step::Pointwise:
        emitPointwise(out, step);
        break;
      case Step::Reduce:
        emitReduce(out, step);
        break;
      case Step::MseLoss:
        emitMseLoss(out, step);
        break;
      case Step::Broadcast:
      case Step::Permute:
        emitIndexKernel(out, step);
        break;
      case Step::Matmul:
      case Step::Linear:
      case Step::Alias:
        break;
      }
    }
  };
  emitAll(schedule.forward);
  for (auto it = schedule.backward.rbegin(); it != schedule.backward.rend(); ++it)
    emitAll(it->second);
  emitAll(schedule.prologue);
  emitOptimizer(out, model.getSymName().str());
  return out.str();
}

std::vector<std::string> kernelSymbols(const CudaSchedule &schedule) {
  std::vector<std::string> symbols;
  auto collect = [&](const std::vector<Step> &steps) {
    for (const Step &step : steps)
      if (!step.symbol.empty())
        symbols.push_back(step.symbol);
  };
  collect(schedule.forward);
  for (auto it = schedule.backward.rbegin(); it != schedule.backward.rend(); ++it)
    collect(it->second);
  collect(schedule.prologue);
  return symbols;
}

} // namespace vouch::codegen
