//===- Clauses.cpp - initialisers, the train clause, the data clause ------===//
//
// The parts of a description that are not computation: how parameters start,
// how the model is trained, where its data comes from. Each is a call-like
// clause bound with the same argument rules as a builtin, against the
// callee's signature in the clause table (ir/ClauseTable.h: the cases of the
// ODS enums InitKind, OptimizerKind, DataKind, with their parameters and
// defaults). The results become typed attributes (`init`/`init_args` of
// vouch.param, `train` and `data` of vouch.model) with every default written
// out, so later stages never guess.
//
//===----------------------------------------------------------------------===//
#include "frontend/Lowering.h"
#include "ir/ClauseTable.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace vouch;
using namespace vouch::frontend;
using llvm::SMLoc;
using llvm::StringRef;

namespace {

/// A clause callee: an initialiser, an optimizer or a data source, as its
/// row of the clause table gives it.
struct ClauseSpec {
  StringRef name;
  std::vector<ParamSpec> params;
  int value; ///< the enumerator of its ODS enum
};

const ClauseSpec *findClause(llvm::ArrayRef<ClauseSpec> specs, StringRef name) {
  const auto *it = llvm::find_if(
      specs, [&](const ClauseSpec &spec) { return spec.name == name; });
  return it == specs.end() ? nullptr : it;
}

std::vector<StringRef> clauseNames(llvm::ArrayRef<ClauseSpec> specs) {
  std::vector<StringRef> names;
  for (const ClauseSpec &spec : specs)
    names.push_back(spec.name);
  return names;
}

std::vector<ClauseSpec> specsOf(ClauseKind kind) {
  std::vector<ClauseSpec> specs;
  for (const ClauseFacts *facts : clauseCallees(kind)) {
    std::vector<ParamSpec> params;
    for (const SignatureParam &p : parseSignature(facts->params))
      params.push_back({p.name, p.defaultText});
    specs.push_back({facts->name, std::move(params), facts->value});
  }
  return specs;
}

llvm::ArrayRef<ClauseSpec> initializers() {
  static const std::vector<ClauseSpec> specs = specsOf(ClauseKind::Initializer);
  return specs;
}

llvm::ArrayRef<ClauseSpec> optimizers() {
  static const std::vector<ClauseSpec> specs = specsOf(ClauseKind::Optimizer);
  return specs;
}

llvm::ArrayRef<ClauseSpec> schedules() {
  static const std::vector<ClauseSpec> specs = specsOf(ClauseKind::Schedule);
  return specs;
}

llvm::ArrayRef<ClauseSpec> dataSources() {
  static const std::vector<ClauseSpec> specs = specsOf(ClauseKind::DataSource);
  return specs;
}

/// A parameter's default as the signature writes it ("0.9", "5").
Number defaultNumber(const ParamSpec &param) {
  int64_t integer;
  if (!param.defaultText.getAsInteger(10, integer))
    return Number::integer(integer);
  double real = 0;
  (void)param.defaultText.getAsDouble(real);
  return Number::real(real);
}

} // namespace

std::vector<StringRef> Lowering::getInitializerNames() {
  return clauseNames(initializers());
}

std::optional<llvm::SmallVector<ExprValue>>
Lowering::evaluateClauseArgs(const Signature &signature,
                             const ast::CallExpr &call, Scope &scope) {
  llvm::SmallVector<ExprValue> values;
  for (const ast::Argument &arg : call.args)
    values.push_back(lowerExpr(*arg.value, scope));
  std::optional<llvm::SmallVector<int>> bound = bindArguments(
      signature, call.args, call.getLoc(),
      [this](SMLoc loc) { return error(loc); }, diagnostics);
  if (!bound)
    return std::nullopt;
  llvm::SmallVector<ExprValue> args;
  for (int index : *bound)
    args.push_back(index < 0 ? ExprValue::absent() : values[index]);
  if (llvm::any_of(args, [](const ExprValue &v) { return v.isInvalid(); }))
    return std::nullopt;
  return args;
}

bool Lowering::clauseNumber(const Signature &signature, unsigned index,
                            const ExprValue &value, Number &out) {
  if (value.is(ExprValue::Kind::Absent))
    return true;
  if (value.is(ExprValue::Kind::Number)) {
    out = value.getNumber();
    return true;
  }
  error(value.getLoc()) << "'" << signature.name << "': "
                        << signature.params[index].name
                        << " must be a number, got " << value.describe();
  return false;
}

bool Lowering::clauseString(const Signature &signature, unsigned index,
                            const ExprValue &value, std::string &out) {
  if (value.is(ExprValue::Kind::String) && !value.getString().empty()) {
    out = value.getString();
    return true;
  }
  error(value.getLoc()) << "'" << signature.name << "': "
                        << signature.params[index].name
                        << " must be a non-empty string such as \"data.csv\", "
                           "got "
                        << value.describe();
  return false;
}

/// "unknown optimizer 'adan'; did you mean 'adam'? (known: sgd, adam, adamw)".
static void reportUnknownClause(mlir::InFlightDiagnostic diag, StringRef what,
                                StringRef name,
                                llvm::ArrayRef<ClauseSpec> specs) {
  std::vector<StringRef> names = clauseNames(specs);
  diag << "unknown " << what << " '" << name << "'";
  if (std::optional<StringRef> close = findClosestName(name, names))
    diag << "; did you mean '" << *close << "'?";
  diag << " (known: " << joinNames(names) << ")";
}

//===----------------------------------------------------------------------===//
// Initialisers
//===----------------------------------------------------------------------===//

std::optional<Lowering::Initializer>
Lowering::lowerInitializer(const ast::CallExpr &init,
                           mlir::RankedTensorType type, Scope &scope) {
  const ClauseSpec *spec = findClause(initializers(), init.callee);
  if (!spec) {
    reportUnknownClause(error(init.getLoc()), "initialiser", init.callee,
                        initializers());
    return std::nullopt;
  }
  Signature signature{spec->name, spec->params};
  std::optional<llvm::SmallVector<ExprValue>> args =
      evaluateClauseArgs(signature, init, scope);
  if (!args)
    return std::nullopt;
  Initializer result{static_cast<InitKind>(spec->value), {}};
  for (unsigned i = 0; i < args->size(); ++i) {
    Number number;
    if (!clauseNumber(signature, i, (*args)[i], number))
      return std::nullopt;
    result.args.push_back(number.value);
  }
  if (result.kind == InitKind::Uniform && !(result.args[0] < result.args[1])) {
    error(init.getLoc()) << "'uniform' needs lo < hi, got lo = "
                         << (*args)[0].getNumber().str()
                         << ", hi = " << (*args)[1].getNumber().str();
    return std::nullopt;
  }
  if (result.kind == InitKind::Normal && !(result.args[1] >= 0)) {
    error((*args)[1].getLoc()) << "'normal' needs std >= 0, got "
                               << (*args)[1].getNumber().str();
    return std::nullopt;
  }
  // Both read fan-in and fan-out off the last two axes, as PyTorch does.
  if ((result.kind == InitKind::XavierUniform ||
       result.kind == InitKind::KaimingUniform) &&
      type.getRank() < 2) {
    error(init.getLoc()) << "'" << spec->name
                         << "' needs a parameter of rank 2 or more (it reads "
                            "fan-in and fan-out from its shape), got "
                         << type;
    return std::nullopt;
  }
  return result;
}

//===----------------------------------------------------------------------===//
// The train clause
//===----------------------------------------------------------------------===//

TrainAttr Lowering::lowerTrainClause(const ast::TrainStmt &train) {
  if (!train.optimizer)
    return nullptr;
  const ast::CallExpr &call = *train.optimizer;
  bool ok = true;
  // Every hyper-parameter of the optimizer is written out, defaults from
  // its signature included.
  llvm::StringMap<double> hyperParameters;
  const ClauseSpec *spec = findClause(optimizers(), call.callee);
  if (!spec) {
    reportUnknownClause(error(call.getLoc()), "optimizer", call.callee,
                        optimizers());
    ok = false;
  } else {
    Signature signature{spec->name, spec->params, "hyper-parameter"};
    std::optional<llvm::SmallVector<ExprValue>> args =
        evaluateClauseArgs(signature, call, globals);
    ok = args.has_value();
    for (unsigned i = 0; args && i < args->size(); ++i) {
      StringRef name = spec->params[i].name;
      const ExprValue &value = (*args)[i];
      Number number = defaultNumber(spec->params[i]);
      if (!clauseNumber(signature, i, value, number)) {
        ok = false;
        continue;
      }
      hyperParameters[name] = number.value;
      if (value.is(ExprValue::Kind::Absent))
        continue;
      double v = number.value;
      if (name == "decay_min_rank") {
        // The rank from which params are decayed: 0 (every param) to 8.
        if (!(v >= 0 && v <= 8 && v == std::floor(v))) {
          error(value.getLoc()) << "'" << spec->name << "': decay_min_rank must "
                                << "be an integer in [0, 8] (a param's rank), got "
                                << number.str();
          ok = false;
        }
        continue;
      }
      bool positive = name == "lr" || name == "eps";
      bool nonNegative = name == "weight_decay" || name == "lr_decay";
      bool inRange = positive      ? v > 0
                     : nonNegative ? v >= 0
                                   : v >= 0 && v < 1;
      if (!inRange) {
        error(value.getLoc())
            << "'" << spec->name << "': " << name << " must be "
            << (positive      ? "greater than 0"
                : nonNegative ? "at least 0"
                              : "in [0, 1)")
            << ", got " << number.str();
        ok = false;
      }
    }
  }

  int64_t steps = kDefaultTrainSteps, logEvery = kDefaultTrainLogEvery;
  int64_t evalEveryValue = 0;
  llvm::StringMap<SMLoc> seen;
  const ast::Expr *scheduleExpr = nullptr;
  std::optional<double> clipGradNorm;
  std::optional<int64_t> evalEvery;
  bool shuffle = false;
  static const StringRef known[] = {"batch",          "steps",   "log_every",
                                    "schedule",       "clip_grad_norm",
                                    "shuffle",        "eval_every"};
  for (const ast::TrainStmt::Option &option : train.options) {
    bool isSchedule = option.name == "schedule";
    bool isClip = option.name == "clip_grad_norm";
    bool isShuffle = option.name == "shuffle";
    int64_t *slot = option.name == "batch"        ? &trainBatch
                    : option.name == "steps"      ? &steps
                    : option.name == "log_every"  ? &logEvery
                    : option.name == "eval_every" ? &evalEveryValue
                                                  : nullptr;
    if (!slot && !isSchedule && !isClip && !isShuffle) {
      mlir::InFlightDiagnostic diag = error(option.loc);
      diag << "unknown train option '" << option.name << "'";
      if (std::optional<StringRef> close = findClosestName(option.name, known))
        diag << "; did you mean '" << *close << "'?";
      diag << " (known: " << llvm::join(llvm::ArrayRef<StringRef>(known), ", ") << ")";
      ok = false;
      continue;
    }
    auto [it, inserted] = seen.try_emplace(option.name, option.loc);
    if (!inserted) {
      mlir::InFlightDiagnostic diag = error(option.loc);
      diag << "train option '" << option.name << "' is given twice";
      diag.attachNote(getLoc(it->second)) << "first given here";
      ok = false;
      continue;
    }
    if (isSchedule) {
      // Bound once steps is known: warmup_cosine's total defaults to it.
      scheduleExpr = option.value.get();
      continue;
    }
    if (isShuffle) {
      ExprValue value = lowerExpr(*option.value, globals);
      if (value.isInvalid()) {
        ok = false;
        continue;
      }
      if (!value.is(ExprValue::Kind::Bool)) {
        error(value.getLoc()) << "the train option 'shuffle' is true or false, got "
                              << value.describe();
        ok = false;
        continue;
      }
      shuffle = value.getBool();
      continue;
    }
    if (isClip) {
      std::optional<Number> value = evaluateNumber(
          *option.value, globals, "the train option 'clip_grad_norm'");
      if (!value) {
        ok = false;
        continue;
      }
      if (!(value->value > 0) || !std::isfinite(value->value)) {
        error(option.value->getLoc())
            << "clip_grad_norm must be a finite number greater than 0, got "
            << value->str();
        ok = false;
        continue;
      }
      clipGradNorm = value->value;
      continue;
    }
    std::optional<int64_t> value = evaluateInteger(
        *option.value, globals, "the train option '" + option.name.str() + "'",
        1);
    if (!value) {
      ok = false;
      continue;
    }
    *slot = *value;
    if (slot == &evalEveryValue)
      evalEvery = *value;
  }
  ScheduleAttr schedule;
  if (scheduleExpr && !lowerSchedule(*scheduleExpr, steps, schedule))
    ok = false;
  if (!ok)
    return nullptr;

  return buildTrainAttr(&context, static_cast<OptimizerKind>(spec->value),
                        hyperParameters, steps, logEvery, schedule,
                        clipGradNorm, shuffle, evalEvery,
                        [&] { return error(call.getLoc()); });
}

bool Lowering::lowerSchedule(const ast::Expr &expr, int64_t steps,
                             ScheduleAttr &out) {
  // `schedule constant` is a bare name; the others are calls.
  std::optional<ast::CallExpr> bare;
  const ast::CallExpr *call = llvm::dyn_cast<ast::CallExpr>(&expr);
  if (const auto *name = llvm::dyn_cast<ast::NameExpr>(&expr)) {
    bare.emplace(name->getLoc(), name->name, 1);
    call = &*bare;
  }
  if (!call) {
    error(expr.getLoc()) << "expected a schedule after 'schedule' (known: "
                         << joinNames(clauseNames(schedules())) << ")";
    return false;
  }
  const ClauseSpec *spec = findClause(schedules(), call->callee);
  if (!spec) {
    reportUnknownClause(error(call->getLoc()), "schedule", call->callee,
                        schedules());
    return false;
  }
  Signature signature{spec->name, spec->params, "argument"};
  std::optional<llvm::SmallVector<ExprValue>> args =
      evaluateClauseArgs(signature, *call, globals);
  if (!args)
    return false;
  auto kind = static_cast<ScheduleKind>(spec->value);
  if (kind == ScheduleKind::Constant) {
    out = nullptr; // a constant schedule is no attribute
    return true;
  }
  std::optional<int64_t> stepSize, warmup, total;
  std::optional<llvm::APFloat> gamma, minLr;
  SMLoc warmupLoc = call->getLoc();
  for (unsigned i = 0; i < args->size(); ++i) {
    StringRef name = spec->params[i].name;
    const ExprValue &value = (*args)[i];
    Number number = defaultNumber(spec->params[i]);
    if (!clauseNumber(signature, i, value, number))
      return false;
    SMLoc loc = value.is(ExprValue::Kind::Absent) ? call->getLoc()
                                                  : value.getLoc();
    std::string what = "'" + spec->name.str() + "': " + name.str();
    if (name == "step_size" || name == "warmup" || name == "total") {
      if (name == "total" && value.is(ExprValue::Kind::Absent)) {
        total = steps;
        continue;
      }
      std::optional<int64_t> integer =
          requireInteger(number, loc, what, name == "warmup" ? 0 : 1);
      if (!integer)
        return false;
      (name == "step_size" ? stepSize : name == "warmup" ? warmup : total) =
          *integer;
      if (name == "warmup")
        warmupLoc = loc;
      continue;
    }
    double v = number.value;
    bool inRange = name == "gamma" ? v > 0 && std::isfinite(v)
                                   : v >= 0 && std::isfinite(v);
    if (!inRange) {
      error(loc) << what << " must be "
                 << (name == "gamma" ? "greater than 0" : "at least 0")
                 << ", got " << number.str();
      return false;
    }
    (name == "gamma" ? gamma : minLr) = llvm::APFloat(v);
  }
  if (warmup && total && *warmup >= *total) {
    error(warmupLoc) << "'warmup_cosine': warmup (" << *warmup
                     << ") must be less than total (" << *total
                     << "; it defaults to the train clause's steps)";
    return false;
  }
  out = ScheduleAttr::getChecked([&] { return error(call->getLoc()); },
                                 &context, kind, stepSize, gamma, warmup,
                                 total, minLr);
  return static_cast<bool>(out);
}

//===----------------------------------------------------------------------===//
// The data clause
//===----------------------------------------------------------------------===//

std::string Lowering::resolveDataPath(StringRef path) const {
  // Paths are relative to the description, not to wherever the compiler runs.
  if (llvm::sys::path::is_absolute(path))
    return path.str();
  StringRef dir = llvm::sys::path::parent_path(diagnostics.getBufferIdentifier());
  if (dir.empty())
    return path.str();
  llvm::SmallString<256> joined(dir);
  llvm::sys::path::append(joined, path);
  return joined.str().str();
}

DataAttr Lowering::lowerDataClause(const ast::DataStmt &data) {
  if (!data.source)
    return nullptr;
  return lowerDataSource(*data.source);
}

EvalAttr Lowering::lowerEvalClause(const ast::EvalStmt &eval) {
  if (!eval.source)
    return nullptr;
  auto emitError = [&] { return error(eval.source->getLoc()); };
  if (auto *call = llvm::dyn_cast<ast::CallExpr>(eval.source.get())) {
    if (call->callee == "regression_grid" ||
        !findClause(dataSources(), call->callee)) {
      error(call->getLoc())
          << "'eval' takes a fraction of the data, such as 0.2, or held-out "
             "files, npy(...), csv(...) or tokens(...); got '"
          << call->callee << "(…)'";
      return nullptr;
    }
    DataAttr data = lowerDataSource(*call);
    return data ? EvalAttr::getChecked(emitError, &context,
                                         std::optional<llvm::APFloat>(), data)
                : nullptr;
  }
  std::optional<Number> fraction =
      evaluateNumber(*eval.source, globals, "the eval clause's fraction");
  if (!fraction)
    return nullptr;
  if (!(fraction->value > 0 && fraction->value < 1)) {
    error(eval.source->getLoc())
        << "the held-out fraction must be greater than 0 and less than 1, got "
        << fraction->str();
    return nullptr;
  }
  return EvalAttr::getChecked(emitError, &context,
                              std::optional(llvm::APFloat(fraction->value)),
                              DataAttr());
}

DataAttr Lowering::lowerDataSource(const ast::CallExpr &call) {
  const ClauseSpec *spec = findClause(dataSources(), call.callee);
  if (!spec) {
    reportUnknownClause(error(call.getLoc()), "data source", call.callee,
                        dataSources());
    return nullptr;
  }
  auto kind = static_cast<DataKind>(spec->value);
  auto emitError = [&] { return error(call.getLoc()); };
  if (kind == DataKind::Npy)
    return lowerNpyClause(call);
  if (kind == DataKind::Tokens)
    return lowerTokensClause(call, Signature{spec->name, spec->params});
  Signature signature{spec->name, spec->params};
  std::optional<llvm::SmallVector<ExprValue>> args =
      evaluateClauseArgs(signature, call, globals);
  if (!args)
    return nullptr;

  if (kind == DataKind::RegressionGrid) {
    Number lo = defaultNumber(spec->params[0]),
           hi = defaultNumber(spec->params[1]),
           n = defaultNumber(spec->params[2]);
    if (!clauseNumber(signature, 0, (*args)[0], lo) ||
        !clauseNumber(signature, 1, (*args)[1], hi) ||
        !clauseNumber(signature, 2, (*args)[2], n))
      return nullptr;
    SMLoc nLoc = (*args)[2].is(ExprValue::Kind::Absent) ? call.getLoc()
                                                        : (*args)[2].getLoc();
    std::optional<int64_t> count =
        requireInteger(n, nLoc, "'regression_grid': n", 1);
    if (!count)
      return nullptr;
    // The grid has n × n rows.
    if (!llvm::checkedMul(*count, *count)) {
      error(nLoc) << "'regression_grid': n * n rows do not fit in int64, got n "
                     "= "
                  << *count;
      return nullptr;
    }
    if (!(lo.value < hi.value)) {
      error(call.getLoc()) << "'regression_grid' needs lo < hi, got lo = "
                           << lo.str() << ", hi = " << hi.str();
      return nullptr;
    }
    return DataAttr::getChecked(
        emitError, &context, kind, std::optional(llvm::APFloat(lo.value)),
        std::optional(llvm::APFloat(hi.value)), std::optional(*count),
        mlir::StringAttr(), mlir::DictionaryAttr(), mlir::StringAttr());
  }

  // csv(path): the file.
  std::string path;
  if (!clauseString(signature, 0, (*args)[0], path))
    return nullptr;
  std::optional<llvm::APFloat> noBound;
  return DataAttr::getChecked(emitError, &context, kind, noBound, noBound,
                              std::optional<int64_t>(),
                              builder.getStringAttr(resolveDataPath(path)),
                              mlir::DictionaryAttr(), mlir::StringAttr());
}

// npy(NAME = "file.npy", ...): one file per input and target, named by the
// field (`npy(x = "x.npy", labels = "y.npy")`), or positional in declaration
// order (inputs first, then targets).
DataAttr Lowering::lowerNpyClause(const ast::CallExpr &call) {
  llvm::SmallVector<StringRef> fields;
  for (bool targets : {false, true})
    for (const ast::StmtPtr &item : model->body)
      if (auto *decl = llvm::dyn_cast<ast::TensorDeclStmt>(item.get()))
        if ((decl->getKind() == ast::Stmt::Kind::Target) == targets)
          fields.push_back(decl->name);
  auto known = [&] {
    std::string names;
    for (StringRef f : fields)
      names += (names.empty() ? "" : ", ") + f.str();
    return names.empty() ? std::string("none") : names;
  };
  llvm::StringMap<mlir::Attribute> files;
  bool ok = true;
  for (auto [index, arg] : llvm::enumerate(call.args)) {
    StringRef field;
    if (!arg.keyword.empty()) {
      field = arg.keyword;
      if (!llvm::is_contained(fields, field)) {
        error(arg.keywordLoc) << "'npy': '" << field
                              << "' is not an input or target of the model "
                                 "(its inputs and targets: "
                              << known() << ")";
        ok = false;
        continue;
      }
    } else if (index < fields.size()) {
      field = fields[index];
    } else {
      error(arg.getLoc()) << "'npy': " << call.args.size()
                          << " files for the model's " << fields.size()
                          << " inputs and targets (" << known() << ")";
      ok = false;
      continue;
    }
    ExprValue value = lowerExpr(*arg.value, globals);
    if (value.isInvalid()) {
      ok = false;
      continue;
    }
    if (!value.is(ExprValue::Kind::String) || value.getString().empty()) {
      error(value.getLoc()) << "'npy': the file of '" << field
                            << "' must be a non-empty string such as "
                               "\"x.npy\", got "
                            << value.describe();
      ok = false;
      continue;
    }
    if (files.count(field)) {
      error(arg.getLoc()) << "'npy': '" << field << "' is given twice";
      ok = false;
      continue;
    }
    files[field] = builder.getStringAttr(resolveDataPath(value.getString()));
  }
  if (!ok)
    return nullptr;
  std::string missing;
  for (StringRef f : fields)
    if (!files.count(f))
      missing += (missing.empty() ? "'" : ", '") + f.str() + "'";
  if (!missing.empty()) {
    error(call.getLoc()) << "'npy' needs a file for every input and target; "
                            "none for "
                         << missing;
    return nullptr;
  }
  llvm::SmallVector<mlir::NamedAttribute> entries;
  for (StringRef f : fields)
    entries.push_back(builder.getNamedAttr(f, files[f]));
  std::optional<llvm::APFloat> noBound;
  return DataAttr::getChecked([&] { return error(call.getLoc()); }, &context,
                              DataKind::Npy, noBound, noBound,
                              std::optional<int64_t>(), mlir::StringAttr(),
                              builder.getDictionaryAttr(entries), mlir::StringAttr());
}

// tokens(file = "train.bin", order = random | sequential): a stream of token ids
// cut into windows of the model's context + 1 (docs/language.md). The order is a
// bare name; the model's fields are checked once they are lowered
// (checkTokenFields).
DataAttr Lowering::lowerTokensClause(const ast::CallExpr &call,
                                     const Signature &signature) {
  std::optional<llvm::SmallVector<int>> bound = bindArguments(
      signature, call.args, call.getLoc(),
      [this](SMLoc loc) { return error(loc); }, diagnostics);
  if (!bound)
    return nullptr;
  bool ok = true;
  std::string path;
  const ast::Expr &file = *call.args[(*bound)[0]].value;
  ExprValue value = lowerExpr(file, globals);
  if (value.isInvalid())
    ok = false;
  else if (!clauseString(signature, 0, value, path))
    ok = false;
  StringRef order = "sequential";
  if ((*bound)[1] >= 0) {
    const ast::Expr &given = *call.args[(*bound)[1]].value;
    const auto *name = llvm::dyn_cast<ast::NameExpr>(&given);
    if (!name || (name->name != "random" && name->name != "sequential")) {
      error(given.getLoc()) << "'tokens': order is random or sequential (a bare "
                               "name, as `order = random`)";
      ok = false;
    } else {
      order = name->name;
    }
  }
  if (!ok)
    return nullptr;
  std::optional<llvm::APFloat> noBound;
  return DataAttr::getChecked([&] { return error(call.getLoc()); }, &context,
                              DataKind::Tokens, noBound, noBound,
                              std::optional<int64_t>(),
                              builder.getStringAttr(resolveDataPath(path)),
                              mlir::DictionaryAttr(), builder.getStringAttr(order));
}
