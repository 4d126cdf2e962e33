//===- CpuEmitter.cpp - host C++ for the cpu target -------------*- C++ -*-===//
//
// The generated code is plain and static: every extent is a literal, every
// value has its own fixed-size buffer (shapes are static, so a training step
// allocates nothing), each op is one small loop or one call into
// runtime/cpu_kernels.h.
//
//===----------------------------------------------------------------------===//
#include "codegen/CpuEmitter.h"

#include "codegen/EmitSupport.h"
#include "codegen/ModelDescription.h"

#include <sstream>

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "capsules/Report.h"
#include "passes/Passes.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

} // namespace

std::string cppStringLiteral(StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

namespace {

std::string cString(StringRef text) { return cppStringLiteral(text); }


std::string shapeList(ArrayRef<int64_t> shape) {
  std::string s = "{";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "}";
}


class Emitter {
public:
  Emitter(ModelOp model, const AcceptedGraphPlan &plan,
          const CpuEmitOptions &options)
      : model(model), plan(plan), options(options) {}
  FailureOr<std::string> run();

private:
  LogicalResult nameValues();
  LogicalResult emitOp(Operation *op, std::ostream &out);
  std::string ref(Value v) { return names.lookup(v); }
  const capsules::PlannedOp *planned(Operation *op) {
    return plannedOpOf(plan, op);
  }

  ModelOp model;
  const AcceptedGraphPlan &plan;
  const CpuEmitOptions &options;
  llvm::DenseMap<Value, std::string> names;
  TrainingSignature signature;
  SmallVector<Value> buffers; ///< values with a buffer of their own
  int staticCounter = 0;
};

LogicalResult Emitter::nameValues() {
  FailureOr<TrainingSignature> sig = trainingSignature(model);
  if (failed(sig))
    return failure();
  signature = *sig;
  for (auto [i, p] : llvm::enumerate(signature.params))
    names[p.getResult()] = "p" + std::to_string(i);
  names[signature.input.getResult()] = "in_x";
  names[signature.target.getResult()] = "in_y";
  for (Operation &op : model.getBlock())
    if (!isStructuralOp(&op))
      for (Value result : op.getResults()) {
        names[result] = "v" + std::to_string(buffers.size());
        buffers.push_back(result);
      }
  return success();
}

/// One op as C++ statements reading and writing the buffers of `names`.
LogicalResult Emitter::emitOp(Operation *op, std::ostream &out) {
  auto staticShape = [&](ArrayRef<int64_t> values) {
    std::string name = "k" + std::to_string(staticCounter++);
    out << "    static const std::vector<int64_t> " << name << " = "
        << shapeList(values) << ";\n";
    return name;
  };
  std::string dst = op->getNumResults() ? ref(op->getResult(0)) : "";
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](FillOp o) {
        out << "    std::fill_n(" << dst << ", " << numel(o.getResult())
            << ", T(" << exact(o.getValue().convertToDouble()) << "));\n";
        return success();
      })
      .Case([&](MatmulOp o) {
        auto lt = shapeOf(o.getLhs()), rt = shapeOf(o.getRhs());
        size_t r = lt.size();
        int64_t batch = r == 3 ? lt[0] : 1;
        bool ta = o.getTransposeLhs(), tb = o.getTransposeRhs();
        int64_t m = ta ? lt[r - 1] : lt[r - 2], k = ta ? lt[r - 2] : lt[r - 1];
        int64_t n = tb ? rt[r - 2] : rt[r - 1];
        out << "    matmul<T>(" << (ta ? "true" : "false") << ", "
            << (tb ? "true" : "false") << ", " << batch << ", " << m << ", "
            << n << ", " << k << ", " << ref(o.getLhs()) << ", " << m * k
            << ", " << ref(o.getRhs()) << ", " << k * n << ", " << dst
            << ");\n";
        return success();
      })
      .Case([&](LinearOp o) {
        auto wt = shapeOf(o.getWeight());
        int64_t rows = numel(o.getInput()) / wt[1];
        out << "    linear<T>(" << rows << ", " << wt[1] << ", " << wt[0]
            << ", " << ref(o.getInput()) << ", " << ref(o.getWeight()) << ", "
            << (o.getBias() ? ref(o.getBias()) : "nullptr") << ", " << dst
            << ");\n";
        return success();
      })
      .Case([&](BroadcastOp o) {
        std::string in = staticShape(shapeOf(o.getInput()));
        std::string to = staticShape(shapeOf(o.getResult()));
        std::string dims = staticShape(o.getDims());
        out << "    broadcast_in_dim<T>(" << ref(o.getInput()) << ", " << in
            << ", " << dst << ", " << to << ", " << dims << ");\n";
        return success();
      })
      .Case([&](ReshapeOp o) {
        out << "    std::copy_n(" << ref(o.getInput()) << ", "
            << numel(o.getResult()) << ", " << dst << ");\n";
        return success();
      })
      .Case([&](PermuteOp o) {
        std::string in = staticShape(shapeOf(o.getInput()));
        std::string perm = staticShape(o.getPerm());
        out << "    permute<T>(" << ref(o.getInput()) << ", " << in << ", "
            << perm << ", " << dst << ");\n";
        return success();
      })
      .Case<ReduceSumOp, ReduceMeanOp>([&](auto o) {
        std::string in = staticShape(shapeOf(o.getInput()));
        std::string axes = staticShape(o.getAxes());
        out << "    reduce_sum<T>(" << ref(o.getInput()) << ", " << in << ", "
            << axes << ", " << dst << ");\n";
        if (isa<ReduceMeanOp>(o.getOperation())) {
          int64_t count = numel(o.getInput()) / numel(o.getResult());
          out << "    for (int64_t i = 0; i < " << numel(o.getResult())
              << "; ++i) " << dst << "[i] /= T(" << count << ");\n";
        }
        return success();
      })
      .Case([&](MseLossOp o) {
        out << "    " << dst << "[0] = mse_loss<T>(" << numel(o.getPrediction())
            << ", " << ref(o.getPrediction()) << ", " << ref(o.getTarget())
            << ");\n";
        return success();
      })
      .Default([&](Operation *other) -> LogicalResult {
        auto pointwise = dyn_cast<PointwiseOpInterface>(other);
        if (!pointwise)
          return other->emitOpError("has no cpu kernel emitter");
        SmallVector<std::string> operands;
        for (Value v : other->getOperands())
          operands.push_back(ref(v) + "[i]");
        out << "    for (int64_t i = 0; i < " << numel(other->getResult(0))
            << "; ++i) " << dst << "[i] = " << pointwise.emitScalarExpr(operands)
            << ";\n";
        return success();
      });
}

FailureOr<std::string> Emitter::run() {
  // Checks the one input / one target the runtime feeds, before naming.
  FailureOr<rt::ModelDescription> description = describeModel(model);
  if (failed(description) || failed(nameValues()))
    return failure();
  std::ostringstream out;
  out << "// Generated by vouch from " << options.sourceName
      << " (cpu target). Do not edit.\n"
      << "#include <algorithm>\n#include <cstdint>\n#include <memory>\n"
      << "#include <vector>\n\n"
      << "#include \"runtime/cpu_kernels.h\"\n"
      << "#include \"runtime/model_api.h\"\n"
      << "#include \"runtime/train_main.h\"\n\n"
      << "namespace {\nusing namespace vouch::rt;\n\n";

  // Forward nodes and the backward ops of each node, in block order.
  std::map<int64_t, Operation *> forward;
  std::map<int64_t, SmallVector<Operation *>> backward;
  SmallVector<Operation *> prologue; // backward ops of no node (zero grads)
  for (Operation &op : model.getBlock()) {
    if (auto node = op.getAttrOfType<IntegerAttr>(kNodeAttr))
      forward[node.getInt()] = &op;
    else if (auto of = op.getAttrOfType<IntegerAttr>(kVjpOfAttr))
      backward[of.getInt()].push_back(&op);
    else if (isa<FillOp>(op) && !names.lookup(op.getResult(0)).empty())
      prologue.push_back(&op);
  }

  out << "template <class T>\nstruct Model final : CompiledModel<T> {\n";
  for (ParamOp p : signature.params)
    out << "  T " << ref(p.getResult()) << "[" << numel(p.getResult())
        << "] = {};  // param " << p.getName().str() << " "
        << shapeList(shapeOf(p.getResult())) << "\n";
  for (Value v : buffers)
    out << "  T " << ref(v) << "[" << std::max<int64_t>(numel(v), 1)
        << "] = {};\n";
  out << "  const T* in_x = nullptr;\n  const T* in_y = nullptr;\n\n";

  out << "  T* param(int i) override {\n    switch (i) {\n";
  for (size_t i = 0; i < signature.params.size(); ++i)
    out << "      case " << i << ": return " << ref(signature.params[i].getResult())
        << ";\n";
  out << "    }\n    return nullptr;\n  }\n";
  out << "  T* grad(int i) override {\n    switch (i) {\n";
  for (size_t i = 0; i < signature.grads.size(); ++i)
    out << "      case " << i << ": return " << ref(signature.grads[i])
        << ";\n";
  out << "    }\n    return nullptr;\n  }\n";
  out << "  const T* prediction() const override { return "
      << ref(signature.output) << "; }\n\n";

  for (auto &[id, op] : forward) {
    out << "  // " << op->getName().getStringRef().str() << " at "
        << ([&] {
             std::string s;
             llvm::raw_string_ostream os(s);
             op->getLoc().print(os);
             return s;
           })()
        << "\n  void node" << id << "() {\n";
    if (failed(emitOp(op, out)))
      return failure();
    out << "  }\n";
    out << "  static void vjp" << id << "(void* self) {\n";
    if (backward.count(id))
      out << "    static_cast<Model*>(self)->vjp" << id << "_body();\n";
    out << "  }\n  void vjp" << id << "_body() {\n";
    for (Operation *b : backward[id])
      if (failed(emitOp(b, out)))
        return failure();
    out << "  }\n";
  }

  out << "\n  T forward(const T* x, const T* y, Tape* tape) override {\n"
      << "    in_x = x;\n    in_y = y;\n";
  for (auto &[id, op] : forward) {
    out << "    node" << id << "();\n";
    // The VJP of this node reads these forward buffers: its saved values.
    std::vector<std::string> saved;
    for (Operation *b : backward[id])
      for (Value v : b->getOperands()) {
        Operation *def = v.getDefiningOp();
        if (def && def->hasAttr(kVjpOfAttr))
          continue;
        std::string name = ref(v);
        if (auto p = dyn_cast_or_null<ParamOp>(def))
          name = p.getName().str();
        else if (auto i = dyn_cast_or_null<InputOp>(def))
          name = i.getName().str();
        else if (auto t = dyn_cast_or_null<TargetOp>(def))
          name = t.getName().str();
        if (std::find(saved.begin(), saved.end(), name) == saved.end())
          saved.push_back(name);
      }
    const capsules::PlannedOp *entry = planned(op);
    if (!entry)
      return op->emitOpError("has no entry in the accepted plan"), failure();
    out << "    if (tape) tape->record({"
        << cString(op->getName().stripDialect()) << ", "
        << cString(entry->capsule) << ", " << id << ", {";
    for (size_t i = 0; i < saved.size(); ++i)
      out << (i ? ", " : "") << cString(saved[i]);
    out << "}, " << (backward.count(id) ? "&vjp" + std::to_string(id) : "nullptr")
        << ", " << cString(entry->kernel) << "});\n";
  }
  out << "    return " << ref(signature.loss) << "[0];\n  }\n\n";

  // Every backward buffer is written before it is read in each step, so
  // gradients are fresh per step by construction; the prologue writes the
  // constant zero gradients of params off the gradient path.
  out << "  void backward(Tape& tape) override {\n";
  for (Operation *op : prologue)
    if (failed(emitOp(op, out)))
      return failure();
  out << "    tape.backward(this);\n  }\n};\n\n";

  out << emitDescribeFunction(*description);
  out << "template <class T>\nstd::unique_ptr<CompiledModel<T>> make() {\n"
      << "  return std::make_unique<Model<T>>();\n}\n\n";
  // --show-backend: the accepted plan's capsule entries, by capsule name.
  out << "Backend cpu_backend() {\n  Backend b;\n  b.device = Device::Cpu;\n"
      << "  b.make_f32 = &make<float>;\n  b.make_f64 = &make<double>;\n"
      << "  b.header = " << cString("backend: cpu, profile " +
                                   plan.profile().spec() +
                                   " (reference kernels compiled from C++)")
      << ";\n";
  for (const capsules::KernelCapsule &c : plan.capsules())
    out << "  b.capsule_reports[" << cString(c.name) << "] = "
        << cString(capsules::renderCapsuleEntry(c, plan.profile().tf32))
        << ";\n";
  out << "  return b;\n}\n\n}  // namespace\n\n";
  if (options.emitMain)
    out << "int main(int argc, char** argv) {\n"
        << "  static const ModelDescription model = describe();\n"
        << "  return train_main(argc, argv, model, {cpu_backend()});\n}\n";
  return out.str();
}

} // namespace

FailureOr<std::string> emitCpuModel(ModelOp model,
                                    const AcceptedGraphPlan &plan,
                                    const CpuEmitOptions &options) {
  return Emitter(model, plan, options).run();
}

} // namespace vouch::codegen
