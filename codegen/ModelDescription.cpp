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
      {"weight_decay", &o.weight_decay}, {"momentum", &o.momentum},
      {"alpha", &o.alpha}, {"lr_decay", &o.lr_decay},
      {"decay_min_rank", &o.decay_min_rank}};
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
  d.shuffle = train.getShuffle();
  d.eval_every = train.getEvalEvery().value_or(0);
  // The schedule: absent is constant; ScheduleAttr::verify guarantees the
  // arguments of its kind.
  if (ScheduleAttr schedule = train.getSchedule()) {
    o.schedule = static_cast<rt::OptimizerConfig::Schedule>(schedule.getKind());
    if (schedule.getStepSize())
      o.step_size = *schedule.getStepSize();
    if (schedule.getGamma())
      o.gamma = schedule.getGamma()->convertToDouble();
    if (schedule.getWarmup())
      o.warmup = *schedule.getWarmup();
    if (schedule.getTotal())
      o.total = *schedule.getTotal();
    if (schedule.getMinLr())
      o.min_lr = schedule.getMinLr()->convertToDouble();
  }
  if (train.getClipGradNorm())
    o.clip_grad_norm = train.getClipGradNorm()->convertToDouble();
  return success();
}

/// "2, 3": the extents of `shape`, comma-separated.
std::string extents(const std::vector<int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s;
}

std::string shapeList(const std::vector<int64_t> &shape) {
  return "{" + extents(shape) + "}";
}

/// The name and value of a data field (an input or a target).
StringRef fieldName(Operation *op) {
  if (auto i = dyn_cast<InputOp>(op))
    return i.getName();
  return cast<TargetOp>(op).getName();
}

/// The model's inputs, then its targets, in declaration order, each with the
/// batch as its first axis and an element type the runtime stores (f32, f64:
/// the run's real type; i32), or a diagnostic.
FailureOr<SmallVector<Operation *>> dataFields(ModelOp model) {
  SmallVector<Operation *> inputs, targets;
  for (Operation &op : model.getBlock()) {
    if (isa<InputOp>(op))
      inputs.push_back(&op);
    else if (isa<TargetOp>(op))
      targets.push_back(&op);
  }
  if (inputs.empty() || targets.empty())
    return model.emitOpError("an executable feeds at least one input and one "
                             "target, this model has ")
               << inputs.size() << " and " << targets.size(),
           failure();
  SmallVector<Operation *> fields(inputs);
  fields.append(targets);
  for (Operation *f : fields) {
    Value v = f->getResult(0);
    Type element = cast<ShapedType>(v.getType()).getElementType();
    if (!element.isF32() && !element.isF64() && !element.isInteger(32) &&
        !element.isInteger(1))
      return f->emitOpError("'")
                 << fieldName(f) << "' is " << v.getType()
                 << ": an executable feeds f32, f64, i32 or i1 data",
             failure();
    if (shapeOf(v).empty() || shapeOf(v)[0] != model.getBatch())
      return f->emitOpError("'")
                 << fieldName(f) << "' must have the batch ("
                 << model.getBatch() << ") as its first axis, got "
                 << v.getType(),
             failure();
  }
  return fields;
}

/// The runtime's description of a data source (the data or eval clause's).
LogicalResult describeSource(ModelOp model, DataAttr data, rt::DataSpec &spec) {
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
  case DataKind::Tokens:
    // The frontend checked the fields (one i32[batch, T] input and target);
    // the runtime checks them again (runtime/tokens.h token_context).
    if (data.getPath().getValue().contains(','))
      return model.emitOpError("token file '")
                 << data.getPath().getValue()
                 << "': a comma in a data file's path is not supported",
             failure();
    spec.path = data.getPath().str();
    spec.random = data.getOrder() && data.getOrder().getValue() == "random";
    return success();
  case DataKind::Npy: {
    // One file per field, in field order (the runtime's comma-separated form).
    FailureOr<SmallVector<Operation *>> fields = dataFields(model);
    if (failed(fields))
      return failure();
    for (Operation *f : *fields) {
      auto file = data.getFiles().getAs<StringAttr>(fieldName(f));
      if (!file)
        return model.emitOpError("the npy data clause names no file for '")
                   << fieldName(f) << "'",
               failure();
      if (file.getValue().contains(','))
        return model.emitOpError("npy file '")
                   << file.getValue()
                   << "': a comma in a data file's path is not supported",
               failure();
      spec.path += (spec.path.empty() ? "" : ",") + file.str();
    }
    return success();
  }
  }
  return model.emitOpError("has a data clause of unknown kind");
}

/// The runtime's description of the data clause, or a diagnostic.
LogicalResult describeData(ModelOp model, rt::DataSpec &spec) {
  DataAttr data = model.getDataAttr();
  if (!data)
    return model.emitOpError(
        "has no data clause: an executable reads the data it names (e.g. "
        "`data regression_grid()`, `data csv(\"train.csv\")`)");
  return describeSource(model, data, spec);
}

/// The runtime's description of the eval clause (none: fraction 0 and no
/// path), or a diagnostic.
LogicalResult describeEval(ModelOp model, rt::ModelDescription &d) {
  EvalAttr eval = model.getEvalAttr();
  if (!eval)
    return success();
  if (eval.getFraction())
    d.eval_fraction = eval.getFraction()->convertToDouble();
  if (DataAttr data = eval.getData())
    return describeSource(model, data, d.eval_data);
  return success();
}

/// The values the ops reading integer field `v` accept (cross_entropy's
/// labels: a class or its ignore_index), so the loader refuses others with
/// the reason; views (reshape) of the field count as the field.
void constrainIntegerField(Value v, rt::FieldInfo &field) {
  bool strict = false;
  // An op that looks up by the field (embedding's ids, gather's and
  // scatter_add's index): values in [lo, hi], nothing else.
  auto limit = [&](int64_t lo, int64_t hi, std::string use) {
    field.min_value = std::max(field.min_value, lo);
    field.max_value = std::min(field.max_value, hi);
    field.use = field.use.empty() ? use : field.use + "; " + use;
    strict = true;
  };
  SmallVector<Value> values{v};
  while (!values.empty()) {
    Value value = values.pop_back_val();
    for (Operation *user : value.getUsers()) {
      const OpFacts *facts = findOpFacts(user->getName().stripDialect());
      if (facts && facts->family == OpFamily::View) {
        values.append(user->result_begin(), user->result_end());
      } else if (auto ce = dyn_cast<CrossEntropyOp>(user)) {
        int64_t classes = ce.classCount();
        field.min_value = std::max<int64_t>(field.min_value, 0);
        field.max_value = std::min<int64_t>(field.max_value, classes - 1);
        field.also = static_cast<int64_t>(ce.getIgnoreIndex());
        std::string use =
            "cross_entropy's labels (" + std::to_string(classes) +
            " classes, ignore_index " +
            std::to_string(static_cast<int64_t>(ce.getIgnoreIndex())) + ")";
        field.use = field.use.empty() ? use : field.use + "; " + use;
      } else if (auto emb = dyn_cast<EmbeddingOp>(user);
                 emb && emb.getIds() == value) {
        int64_t rows =
            cast<ShapedType>(emb.getTable().getType()).getShape().front();
        limit(0, rows - 1,
              "embedding's ids (a table of " + std::to_string(rows) + " rows)");
      } else if (isa<GatherOp, ScatterAddOp>(user) &&
                 user->getOperand(1) == value) {
        int64_t axis = user->getAttrOfType<IntegerAttr>("axis").getInt();
        int64_t extent =
            cast<ShapedType>(user->getOperand(0).getType()).getShape()[axis];
        limit(0, extent - 1,
              user->getName().stripDialect().str() + "'s index (axis " +
                  std::to_string(axis) + " of extent " +
                  std::to_string(extent) + ")");
      }
    }
  }
  // An op that accepts no exception (embedding, gather, scatter_add) refuses
  // cross_entropy's ignore_index too.
  if (strict)
    field.also = INT64_MIN;
}

} // namespace

FailureOr<rt::ModelDescription> describeModel(ModelOp model) {
  rt::ModelDescription d;
  d.name = model.getSymName().str();
  d.batch = model.getBatch();
  FailureOr<SmallVector<Operation *>> fields = dataFields(model);
  if (failed(fields))
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
    } else if (auto state = dyn_cast<StateOp>(op)) {
      // batch_norm's running statistics: zeros (a mean) or ones (a variance,
      // which a checkpoint may not make negative).
      ArrayRef<int64_t> shape = shapeOf(state.getResult());
      bool variance = llvm::any_of(state.getResult().getUsers(), [&](Operation *u) {
        return cast<BatchNormOp>(u).getRunningVar() == state.getResult();
      });
      d.states.push_back({state.getName().str(), {shape.begin(), shape.end()},
                          numel(state.getResult()),
                          state.getInit() == InitKind::Ones ? 1.0 : 0.0, variance});
    }
  }
  for (Operation *f : *fields) {
    Value v = f->getResult(0);
    bool target = isa<TargetOp>(f);
    Type element = cast<ShapedType>(v.getType()).getElementType();
    bool integer = storedAsInt32(v);
    int64_t rowElems = numel(v) / d.batch;
    d.fields.push_back({fieldName(f).str(),
                        integer ? rt::DType::I32 : rt::DType::Real, rowElems,
                        target});
    (target ? d.out_features : d.in_features) += rowElems;
    if (element.isInteger(1)) { // stored as int32 0 / 1 (runtime/program.h)
      d.fields.back().min_value = 0;
      d.fields.back().max_value = 1;
      d.fields.back().use = "an i1 mask (0 = false, 1 = true)";
    } else if (integer) {
      constrainIntegerField(v, d.fields.back());
    }
  }

  for (Operation &op : model.getBlock())
    if (auto out = dyn_cast<OutputOp>(op)) {
      SmallVector<int64_t> shape = out.outputShape();
      d.output_shape.assign(shape.begin(), shape.end());
    }
  // A classifier: the output is the logits of a cross_entropy whose labels
  // are an integer field (then --eval prints the accuracy).
  for (Operation &op : model.getBlock())
    if (auto out = dyn_cast<OutputOp>(op))
      for (Operation *user : out.getValue().getUsers())
        if (auto ce = dyn_cast<CrossEntropyOp>(user))
          for (auto [i, f] : llvm::enumerate(*fields))
            if (f->getResult(0) == ce.getLabels() && ce.getLogits() == out.getValue() &&
                cast<ShapedType>(ce.getLogits().getType()).getRank() == 2) {
              d.label_field = static_cast<int32_t>(i);
              d.classes = ce.classCount();
              d.ignore_index = static_cast<int64_t>(ce.getIgnoreIndex());
            }
  if (failed(describeData(model, d.data)) || failed(describeTraining(model, d)) ||
      failed(describeEval(model, d)))
    return failure();
  return d;
}

FailureOr<TrainingSignature> trainingSignature(ModelOp model) {
  TrainingSignature s;
  FailureOr<SmallVector<Operation *>> fields = dataFields(model);
  if (failed(fields))
    return failure();
  s.fields = *fields;
  int outputs = 0, losses = 0;
  llvm::StringMap<Value> grads;
  for (Operation &op : model.getBlock()) {
    if (auto p = dyn_cast<ParamOp>(op)) {
      s.params.push_back(p);
    } else if (auto st = dyn_cast<StateOp>(op)) {
      s.states.push_back(st);
    } else if (auto l = dyn_cast<LossOp>(op)) {
      s.loss = l.getValue();
      ++losses;
    } else if (auto o = dyn_cast<OutputOp>(op)) {
      s.output = o.getValue();
      s.outputColumns = o.getColumns() ? int64_t(*o.getColumns()) : 0;
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
  // The params as a table read by a loop: g++ -O2 takes seconds over a
  // statement per param of a large model, which builds strings and vectors.
  if (!d.params.empty()) {
    out << "struct ParamRow {\n  const char* name;\n  int rank;  // extents "
           "in kParamShapes, row after row\n  int64_t numel;\n  InitSpec "
           "init;\n};\nconst ParamRow kParams[] = {";
    bool scalarsOnly = true;
    for (const rt::ParamInfo &p : d.params) {
      out << (&p == &d.params.front() ? "\n  {" : ",\n  {")
          << cppStringLiteral(p.name) << ", " << p.shape.size() << ", "
          << p.numel << ", {InitKind::"
          << enumerator(ClauseKind::Initializer, static_cast<int>(p.init.kind))
          << ", " << exact(p.init.a) << ", " << exact(p.init.b) << "}}";
      scalarsOnly &= p.shape.empty();
    }
    out << "};\nconst int64_t kParamShapes[] = {";
    if (scalarsOnly)
      out << "0"; // a placeholder: an array may not be empty
    for (const rt::ParamInfo &p : d.params)
      if (!p.shape.empty())
        out << "\n  " << extents(p.shape) << ",";
    out << "};\n\n";
  }
  out << "ModelDescription describe() {\n  ModelDescription d;\n"
      << "  d.name = " << cppStringLiteral(d.name) << ";\n";
  if (!d.params.empty())
    out << "  const int64_t* shape = kParamShapes;\n"
        << "  for (const ParamRow& p : kParams) {\n"
        << "    d.params.push_back({p.name, std::vector<int64_t>(shape, "
           "shape + p.rank), p.numel, p.init});\n"
        << "    shape += p.rank;\n  }\n";
  // The model's state (batch_norm's running statistics), only where it has
  // some, so the emitted description of another model is unchanged.
  for (const rt::StateInfo &st : d.states)
    out << "  d.states.push_back({" << cppStringLiteral(st.name) << ", {"
        << extents(st.shape) << "}, " << st.numel << ", " << exact(st.init)
        << ", " << (st.nonnegative ? "true" : "false") << "});\n";
  for (const rt::FieldInfo &f : d.fields)
    out << "  d.fields.push_back({" << cppStringLiteral(f.name) << ", DType::"
        << (f.dtype == rt::DType::I32 ? "I32" : "Real") << ", " << f.row_elems
        << ", " << (f.target ? "true" : "false") << ", " << f.min_value
        << "LL, " << f.max_value << "LL, "
        << (f.also == INT64_MIN ? std::string("INT64_MIN")
                                : std::to_string(f.also) + "LL")
        << ", " << cppStringLiteral(f.use) << "});\n";
  out << "  d.batch = " << d.batch << ";\n"
      << "  d.in_features = " << d.in_features << ";\n"
      << "  d.out_features = " << d.out_features << ";\n";
  out << "  d.data.kind = DataSpec::"
      << enumerator(ClauseKind::DataSource, d.data.kind) << ";\n"
      << "  d.data.lo = " << exact(d.data.lo) << ";\n"
      << "  d.data.hi = " << exact(d.data.hi) << ";\n"
      << "  d.data.n = " << d.data.n << ";\n"
      << "  d.data.path = " << cppStringLiteral(d.data.path) << ";\n";
  if (d.data.random)
    out << "  d.data.random = true;\n";
  const rt::OptimizerConfig &o = d.optimizer;
  out << "  d.optimizer.kind = OptimizerConfig::"
      << enumerator(ClauseKind::Optimizer, o.kind) << ";\n"
      << "  d.optimizer.lr = " << exact(o.lr) << ";\n"
      << "  d.optimizer.beta1 = " << exact(o.beta1) << ";\n"
      << "  d.optimizer.beta2 = " << exact(o.beta2) << ";\n"
      << "  d.optimizer.eps = " << exact(o.eps) << ";\n"
      << "  d.optimizer.weight_decay = " << exact(o.weight_decay) << ";\n"
      << "  d.optimizer.momentum = " << exact(o.momentum) << ";\n";
  // Fields past the first three optimizers' only where they matter, so the
  // emitted description of an existing model is unchanged.
  if (o.kind == rt::OptimizerConfig::RmsProp)
    out << "  d.optimizer.alpha = " << exact(o.alpha) << ";\n";
  if (o.kind == rt::OptimizerConfig::Adagrad)
    out << "  d.optimizer.lr_decay = " << exact(o.lr_decay) << ";\n";
  if (o.decay_min_rank != 0)
    out << "  d.optimizer.decay_min_rank = " << exact(o.decay_min_rank) << ";\n";
  if (o.schedule != rt::OptimizerConfig::Constant)
    out << "  d.optimizer.schedule = OptimizerConfig::"
        << enumerator(ClauseKind::Schedule, o.schedule) << ";\n"
        << "  d.optimizer.step_size = " << o.step_size << ";\n"
        << "  d.optimizer.gamma = " << exact(o.gamma) << ";\n"
        << "  d.optimizer.warmup = " << o.warmup << ";\n"
        << "  d.optimizer.total = " << o.total << ";\n"
        << "  d.optimizer.min_lr = " << exact(o.min_lr) << ";\n";
  if (o.clip_grad_norm != 0)
    out << "  d.optimizer.clip_grad_norm = " << exact(o.clip_grad_norm)
        << ";\n";
  out << "  d.steps = " << d.steps << ";\n"
      << "  d.log_every = " << d.log_every << ";\n"
      << "  d.label_field = " << d.label_field << ";\n"
      << "  d.output_shape = " << shapeList(d.output_shape) << ";\n"
      << "  d.classes = " << d.classes << ";\n"
      << "  d.ignore_index = " << d.ignore_index << ";\n";
  // The clauses' options past the first ones only where given, so the emitted
  // description of an existing model is unchanged.
  if (d.shuffle)
    out << "  d.shuffle = true;\n";
  if (d.eval_every != 0)
    out << "  d.eval_every = " << d.eval_every << ";\n";
  if (d.eval_fraction != 0)
    out << "  d.eval_fraction = " << exact(d.eval_fraction) << ";\n";
  if (!d.eval_data.path.empty())
    out << "  d.eval_data.kind = DataSpec::"
        << enumerator(ClauseKind::DataSource, d.eval_data.kind) << ";\n"
        << "  d.eval_data.path = " << cppStringLiteral(d.eval_data.path)
        << ";\n";
  out << "  return d;\n}\n\n";
  return out.str();
}

} // namespace vouch::codegen
