//===- ModelDescription.cpp - a model's declarations for the runtime ------===//
//
// Reads the typed attributes of the clauses (ir/VouchAttrs.h). Nothing has a
// default here: a model without a train or data clause is a diagnostic, and
// a clause holds exactly its callee's arguments (TrainAttr::verify and
// DataAttr::verify check them when it is built). The runtime's enums
// (InitKind, OptimizerConfig::Kind, DataSpec::Kind) are ir's with the same
// names and values, which //ir:clause_names_test checks.
//
//===----------------------------------------------------------------------===//
#include "codegen/ModelDescription.h"

#include <sstream>

#include "codegen/EmitSupport.h"
#include "ir/ClauseTable.h"
#include "ir/OpTable.h"
#include "llvm/ADT/StringMap.h"
#include "runtime/init.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

/// The C++ enumerator of a clause callee (`Adam`, `XavierUniform`): one
/// spelling in ir/ and in the runtime (//ir:clause_names_test checks).
std::string enumerator(ClauseKind kind, int value) {
  for (const ClauseFacts &facts : clauseTable())
    if (facts.clause == kind && facts.value == value)
      return std::string(facts.symbol);
  return "";
}

/// The runtime's description of the train clause, or a diagnostic.
LogicalResult describeTraining(ModelOp model, rt::ModelDescription &d) {
  TrainAttr train = model.getTrainAttr();
  if (!train)
    return model.emitOpError(
        "has no train clause: an executable trains with the optimizer it "
        "names (`train adam(lr = 0.01)`)");
  rt::OptimizerConfig &o = d.optimizer;
  o.kind = static_cast<rt::OptimizerConfig::Kind>(train.getOptimizer());
  // The optimizer's hyper-parameters, by the names of its signature; the
  // runtime ignores the fields of the others.
  const llvm::StringMap<double *> fields = {
      {"lr", &o.lr},       {"beta1", &o.beta1},
      {"beta2", &o.beta2}, {"eps", &o.eps},
      {"weight_decay", &o.weight_decay}, {"momentum", &o.momentum}};
  StringRef optimizer = stringifyOptimizerKind(train.getOptimizer());
  const ClauseFacts *facts = findClauseFacts(ClauseKind::Optimizer, optimizer);
  for (const SignatureParam &p : parseSignature(facts ? facts->params : "")) {
    std::optional<double> value = train.getHyperParameter(p.name);
    double *field = fields.lookup(p.name);
    assert(value && field && "TrainAttr::verify: the signature's values");
    *field = *value;
  }
  d.steps = train.getSteps();
  d.log_every = train.getLogEvery();
  return success();
}

/// The runtime's description of the data clause, or a diagnostic.
LogicalResult describeData(ModelOp model, rt::DataSpec &spec) {
  DataAttr data = model.getDataAttr();
  if (!data)
    return model.emitOpError(
        "has no data clause: an executable reads the data it names (e.g. "
        "`data regression_grid()`, `data csv(\"train.csv\")`)");
  spec.kind = static_cast<rt::DataSpec::Kind>(data.getKind());
  // DataAttr::verify: the source's arguments are set.
  switch (data.getKind()) {
  case DataKind::RegressionGrid:
    spec.lo = data.getLo()->convertToDouble();
    spec.hi = data.getHi()->convertToDouble();
    spec.n = *data.getN();
    return success();
  case DataKind::Csv:
    spec.path = data.getPath().str();
    return success();
  case DataKind::Npy:
    spec.path = data.getX().str() + "," + data.getY().str();
    return success();
  }
  return model.emitOpError("has a data clause of unknown kind");
}

std::string shapeList(const std::vector<int64_t> &shape) {
  std::string s = "{";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "}";
}

/// The model's one input and one target, or a diagnostic.
LogicalResult singleInputAndTarget(ModelOp model, InputOp &input,
                                   TargetOp &target) {
  int inputs = 0, targets = 0;
  for (Operation &op : model.getBlock()) {
    if (auto i = dyn_cast<InputOp>(op)) {
      input = i;
      ++inputs;
    } else if (auto t = dyn_cast<TargetOp>(op)) {
      target = t;
      ++targets;
    }
  }
  if (inputs == 1 && targets == 1)
    return success();
  return model.emitOpError("an executable feeds exactly one input and one "
                           "target, this model has ")
         << inputs << " and " << targets;
}

} // namespace

FailureOr<rt::ModelDescription> describeModel(ModelOp model) {
  rt::ModelDescription d;
  d.name = model.getSymName().str();
  d.batch = model.getBatch();
  InputOp input;
  TargetOp target;
  if (failed(singleInputAndTarget(model, input, target)))
    return failure();
  for (Operation &op : model.getBlock()) {
    if (auto p = dyn_cast<ParamOp>(op)) {
      ArrayRef<double> args = p.getInitArgs();
      // The runtime reads initialisers by the names of ir's InitKind.
      rt::Result<rt::InitSpec> init = rt::parse_init(
          stringifyInitKind(p.getInit()).str(),
          std::vector<double>(args.begin(), args.end()));
      if (!init.ok())
        return p.emitOpError(init.status().message()), failure();
      ArrayRef<int64_t> shape = shapeOf(p.getResult());
      d.params.push_back({p.getName().str(), {shape.begin(), shape.end()},
                          numel(p.getResult()), init.value()});
    }
  }
  for (Value v : {input.getResult(), target.getResult()})
    if (shapeOf(v).empty() || shapeOf(v)[0] != d.batch)
      return model.emitOpError("input and target must have the batch (")
                 << d.batch << ") as their first axis, got " << v.getType(),
             failure();
  d.in_features = numel(input.getResult()) / d.batch;
  d.out_features = numel(target.getResult()) / d.batch;

  if (failed(describeData(model, d.data)) || failed(describeTraining(model, d)))
    return failure();
  return d;
}

FailureOr<TrainingSignature> trainingSignature(ModelOp model) {
  TrainingSignature s;
  if (failed(singleInputAndTarget(model, s.input, s.target)))
    return failure();
  int outputs = 0, losses = 0;
  llvm::StringMap<Value> grads;
  for (Operation &op : model.getBlock()) {
    if (auto p = dyn_cast<ParamOp>(op)) {
      s.params.push_back(p);
    } else if (auto l = dyn_cast<LossOp>(op)) {
      s.loss = l.getValue();
      ++losses;
    } else if (auto o = dyn_cast<OutputOp>(op)) {
      s.output = o.getValue();
      ++outputs;
    } else if (auto g = dyn_cast<ParamGradOp>(op)) {
      grads[g.getName()] = g.getValue();
    }
  }
  if (outputs != 1)
    return model.emitOpError("needs exactly one `output` (the prediction "
                             "the executable reports), has ")
               << outputs,
           failure();
  if (losses != 1)
    return model.emitOpError("has no loss to train"), failure();
  for (ParamOp p : s.params) {
    Value g = grads.lookup(p.getName());
    if (!g)
      return p.emitOpError("has no gradient: run vouch-autodiff first"),
             failure();
    s.grads.push_back(g);
  }
  return s;
}

std::string emitDescribeFunction(const rt::ModelDescription &d) {
  std::ostringstream out;
  out << "ModelDescription describe() {\n  ModelDescription d;\n"
      << "  d.name = " << cppStringLiteral(d.name) << ";\n";
  for (const rt::ParamInfo &p : d.params)
    out << "  d.params.push_back({" << cppStringLiteral(p.name) << ", "
        << shapeList(p.shape) << ", " << p.numel << ", InitSpec{InitKind::"
        << enumerator(ClauseKind::Initializer, static_cast<int>(p.init.kind))
        << ", " << exact(p.init.a) << ", "
        << exact(p.init.b) << "}});\n";
  out << "  d.batch = " << d.batch << ";\n"
      << "  d.in_features = " << d.in_features << ";\n"
      << "  d.out_features = " << d.out_features << ";\n";
  out << "  d.data.kind = DataSpec::"
      << enumerator(ClauseKind::DataSource, d.data.kind) << ";\n"
      << "  d.data.lo = " << exact(d.data.lo) << ";\n"
      << "  d.data.hi = " << exact(d.data.hi) << ";\n"
      << "  d.data.n = " << d.data.n << ";\n"
      << "  d.data.path = " << cppStringLiteral(d.data.path) << ";\n";
  const rt::OptimizerConfig &o = d.optimizer;
  out << "  d.optimizer.kind = OptimizerConfig::"
      << enumerator(ClauseKind::Optimizer, o.kind) << ";\n"
      << "  d.optimizer.lr = " << exact(o.lr) << ";\n"
      << "  d.optimizer.beta1 = " << exact(o.beta1) << ";\n"
      << "  d.optimizer.beta2 = " << exact(o.beta2) << ";\n"
      << "  d.optimizer.eps = " << exact(o.eps) << ";\n"
      << "  d.optimizer.weight_decay = " << exact(o.weight_decay) << ";\n"
      << "  d.optimizer.momentum = " << exact(o.momentum) << ";\n"
      << "  d.steps = " << d.steps << ";\n"
      << "  d.log_every = " << d.log_every << ";\n  return d;\n}\n\n";
  return out.str();
}

} // namespace vouch::codegen
