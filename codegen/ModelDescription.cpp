//===- ModelDescription.cpp - a model's declarations for the runtime ------===//
#include "codegen/ModelDescription.h"

#include <sstream>

#include "codegen/EmitSupport.h"
#include "llvm/ADT/StringMap.h"
#include "runtime/init.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

double number(DictionaryAttr dict, StringRef key, double fallback) {
  Attribute a = dict ? dict.get(key) : Attribute();
  if (auto f = dyn_cast_or_null<FloatAttr>(a))
    return f.getValueAsDouble();
  if (auto i = dyn_cast_or_null<IntegerAttr>(a))
    return static_cast<double>(i.getInt());
  return fallback;
}

std::string string(DictionaryAttr dict, StringRef key) {
  auto s = dict ? dyn_cast_or_null<StringAttr>(dict.get(key)) : StringAttr();
  return s ? s.str() : "";
}

const char *initKindName(rt::InitKind kind) {
  switch (kind) {
  case rt::InitKind::Zeros: return "Zeros";
  case rt::InitKind::Ones: return "Ones";
  case rt::InitKind::Uniform: return "Uniform";
  case rt::InitKind::Normal: return "Normal";
  case rt::InitKind::XavierUniform: return "XavierUniform";
  case rt::InitKind::KaimingUniform: return "KaimingUniform";
  }
  return "Zeros";
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
      rt::Result<rt::InitSpec> init = rt::parse_init(
          p.getInit().str(), std::vector<double>(args.begin(), args.end()));
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

  DictionaryAttr data = model.getDataAttr(), train = model.getTrainAttr();
  std::string kind = string(data, "kind");
  if (kind == "csv") {
    d.data.kind = rt::DataSpec::Csv;
    d.data.path = string(data, "path");
  } else if (kind == "npy") {
    d.data.kind = rt::DataSpec::Npy;
    d.data.path = string(data, "x") + "," + string(data, "y");
  } else {
    d.data.kind = rt::DataSpec::RegressionGrid;
    d.data.lo = number(data, "lo", d.data.lo);
    d.data.hi = number(data, "hi", d.data.hi);
    d.data.n = static_cast<int64_t>(number(data, "n", double(d.data.n)));
  }
  std::string optimizer = string(train, "optimizer");
  rt::OptimizerConfig &o = d.optimizer;
  o.kind = optimizer == "sgd"     ? rt::OptimizerConfig::Sgd
           : optimizer == "adamw" ? rt::OptimizerConfig::AdamW
                                  : rt::OptimizerConfig::Adam;
  o.lr = number(train, "lr", o.lr);
  o.beta1 = number(train, "beta1", o.beta1);
  o.beta2 = number(train, "beta2", o.beta2);
  o.eps = number(train, "eps", o.eps);
  o.weight_decay = number(train, "weight_decay", o.weight_decay);
  o.momentum = number(train, "momentum", o.momentum);
  d.steps = static_cast<int64_t>(number(train, "steps", double(d.steps)));
  d.log_every =
      static_cast<int64_t>(number(train, "log_every", double(d.log_every)));
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
        << initKindName(p.init.kind) << ", " << exact(p.init.a) << ", "
        << exact(p.init.b) << "}});\n";
  out << "  d.batch = " << d.batch << ";\n"
      << "  d.in_features = " << d.in_features << ";\n"
      << "  d.out_features = " << d.out_features << ";\n";
  const char *dataKind = d.data.kind == rt::DataSpec::Csv   ? "Csv"
                         : d.data.kind == rt::DataSpec::Npy ? "Npy"
                                                            : "RegressionGrid";
  out << "  d.data.kind = DataSpec::" << dataKind << ";\n"
      << "  d.data.lo = " << exact(d.data.lo) << ";\n"
      << "  d.data.hi = " << exact(d.data.hi) << ";\n"
      << "  d.data.n = " << d.data.n << ";\n"
      << "  d.data.path = " << cppStringLiteral(d.data.path) << ";\n";
  const rt::OptimizerConfig &o = d.optimizer;
  const char *optimizer = o.kind == rt::OptimizerConfig::Sgd     ? "Sgd"
                          : o.kind == rt::OptimizerConfig::AdamW ? "AdamW"
                                                                 : "Adam";
  out << "  d.optimizer.kind = OptimizerConfig::" << optimizer << ";\n"
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
