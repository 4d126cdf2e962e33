//===- Lowering.cpp - declarations, scopes, statements, blocks ------------===//
//
// The statement half of the lowering: what may appear where, how names are
// bound (once per scope; a repeat body may update an outer name, which is
// how values are carried from one iteration to the next), and how blocks are
// instantiated with fresh, systematically named parameters.
//
//===----------------------------------------------------------------------===//
#include "frontend/Lowering.h"

#include <utility>

#include "ir/VouchOps.h"
#include "llvm/ADT/STLExtras.h"

using namespace vouch;
using namespace vouch::frontend;
using llvm::SMLoc;
using llvm::StringRef;

Lowering::Lowering(SourceDiagnostics &diagnostics, const ImportOptions &options)
    : diagnostics(diagnostics), options(options),
      context(diagnostics.getContext()), builder(&context) {
  builder.setListener(&opCounter);
  hadSyntaxErrors = diagnostics.getErrorCount() > 0;
}

mlir::InFlightDiagnostic Lowering::error(SMLoc loc) {
  mlir::InFlightDiagnostic diag = diagnostics.emitError(loc);
  for (const ContextNote &note : llvm::reverse(contextNotes))
    diag.attachNote(getLoc(note.loc)) << note.message;
  return diag;
}

/// How messages name the statement a keyword starts.
static StringRef describeStatement(const ast::Stmt &stmt) {
  switch (stmt.getKind()) {
  case ast::Stmt::Kind::Model: return "'model'";
  case ast::Stmt::Kind::Config: return "'config'";
  case ast::Stmt::Kind::Block: return "'block'";
  case ast::Stmt::Kind::Input: return "'input'";
  case ast::Stmt::Kind::Target: return "'target'";
  case ast::Stmt::Kind::Param: return "'param'";
  case ast::Stmt::Kind::Assign: return "a definition";
  case ast::Stmt::Kind::Output: return "'output'";
  case ast::Stmt::Kind::Return: return "'return'";
  case ast::Stmt::Kind::Repeat: return "'repeat'";
  case ast::Stmt::Kind::Train: return "'train'";
  case ast::Stmt::Kind::Data: return "'data'";
  case ast::Stmt::Kind::Eval: return "'eval'";
  }
  return "a statement";
}

//===----------------------------------------------------------------------===//
// The file and the model
//===----------------------------------------------------------------------===//

mlir::OwningOpRef<mlir::ModuleOp> Lowering::lowerFile(const ast::File &file) {
  // Configs and the train clause are evaluated before the model op exists;
  // anything they build (only a misuse such as a block call in a config
  // can) lands in this scratch block and is dropped with it.
  mlir::Block scratch;
  builder.setInsertionPointToEnd(&scratch);

  collectDeclarations(file);
  for (const auto &[name, value] : options.configs)
    if (!overriddenConfigs.count(name))
      error(SMLoc::getFromPointer(diagnostics.getBuffer().begin()))
          << "no config '" << name << "' in this description to set "
          << "(--config " << name << "=…): configs are declared as 'config "
          << name << " = …'";
  if (!model) {
    SMLoc start = SMLoc::getFromPointer(diagnostics.getBuffer().begin());
    error(start) << "expected a model: a description holds one "
                    "'model NAME { … }'";
    return nullptr;
  }

  TrainAttr train = trainStmt ? lowerTrainClause(*trainStmt) : TrainAttr();
  batch = trainBatch;
  if (options.batch) {
    if (*options.batch < 1)
      error(model->nameLoc) << "the batch size must be at least 1, got "
                            << *options.batch << " (from the import options)";
    else
      batch = *options.batch;
  }
  DataAttr data = dataStmt ? lowerDataClause(*dataStmt) : DataAttr();
  EvalAttr eval = evalStmt ? lowerEvalClause(*evalStmt) : EvalAttr();
  return buildModel(train, data, eval);
}

void Lowering::collectDeclarations(const ast::File &file) {
  for (const ast::StmtPtr &item : file.items) {
    if (auto *config = llvm::dyn_cast<ast::ConfigStmt>(item.get())) {
      declareConfig(*config);
    } else if (auto *block = llvm::dyn_cast<ast::BlockStmt>(item.get())) {
      declareBlock(*block);
    } else if (auto *m = llvm::dyn_cast<ast::ModelStmt>(item.get())) {
      if (!model) {
        model = m;
        continue;
      }
      mlir::InFlightDiagnostic diag = error(m->nameLoc);
      diag << "a description holds one model; '" << m->name
           << "' is a second one";
      diag.attachNote(getLoc(model->nameLoc)) << "the first model is here";
    } else if (llvm::isa<ast::AssignStmt>(item.get())) {
      error(item->getLoc()) << "definitions belong in the model body or a "
                               "block; a constant at file level is a 'config'";
    } else if (llvm::isa<ast::ReturnStmt>(item.get())) {
      error(item->getLoc()) << "'return' is only allowed as the last "
                               "statement of a block body";
    } else if (llvm::isa<ast::ParamStmt, ast::RepeatStmt>(item.get())) {
      error(item->getLoc()) << describeStatement(*item)
                            << " belongs in the model body or a block, not at "
                               "file level";
    } else {
      error(item->getLoc()) << describeStatement(*item)
                            << " belongs in the model body, not at file level";
    }
  }
  if (!model)
    return;
  // The model body's configs, blocks and clauses are declarations too: they
  // hold wherever they are written.
  for (const ast::StmtPtr &item : model->body) {
    if (auto *config = llvm::dyn_cast<ast::ConfigStmt>(item.get())) {
      declareConfig(*config);
    } else if (auto *block = llvm::dyn_cast<ast::BlockStmt>(item.get())) {
      declareBlock(*block);
    } else if (auto *train = llvm::dyn_cast<ast::TrainStmt>(item.get())) {
      claimOnce(trainStmt, train, "train");
    } else if (auto *data = llvm::dyn_cast<ast::DataStmt>(item.get())) {
      claimOnce(dataStmt, data, "data");
    } else if (auto *eval = llvm::dyn_cast<ast::EvalStmt>(item.get())) {
      claimOnce(evalStmt, eval, "eval");
    }
  }
}

/// A clause a model has at most once: the first is kept in `slot`, a second
/// is an error pointing at the first.
template <class Stmt>
void Lowering::claimOnce(const Stmt *&slot, const Stmt *stmt, llvm::StringRef clause) {
  if (!slot) {
    slot = stmt;
    return;
  }
  mlir::InFlightDiagnostic diag = error(stmt->getLoc());
  diag << "a model has one " << clause << " clause";
  diag.attachNote(getLoc(slot->getLoc())) << "the first one is here";
}

void Lowering::declareConfig(const ast::ConfigStmt &stmt) {
  if (stmt.broken && !stmt.value) {
    globals.bindings.try_emplace(
        stmt.name, Binding{Binding::Kind::Config, ExprValue::invalid(),
                           stmt.nameLoc});
    return;
  }
  if (isReservedName(stmt.name, stmt.nameLoc))
    return;
  if (auto it = globals.bindings.find(stmt.name); it != globals.bindings.end()) {
    mlir::InFlightDiagnostic diag = error(stmt.nameLoc);
    diag << "redefinition of config '" << stmt.name << "'";
    diag.attachNote(getLoc(it->second.loc)) << "previous definition is here";
    return;
  }
  ExprValue value = ExprValue::invalid();
  if (auto given = options.configs.find(stmt.name.str());
      given != options.configs.end()) {
    // --config NAME=VALUE: the value replaces the expression, which is not
    // evaluated (later configs see the new value).
    double v = given->second;
    Number number = v == std::trunc(v) && std::abs(v) < 9.0e15
                        ? Number::integer(static_cast<int64_t>(v))
                        : Number::real(v);
    value = ExprValue::number(number, stmt.nameLoc);
    overriddenConfigs.insert(stmt.name.str());
  } else if (stmt.value) {
    std::optional<Number> number = evaluateNumber(
        *stmt.value, globals, "config '" + stmt.name.str() + "'");
    if (number)
      value = ExprValue::number(*number, stmt.nameLoc);
  }
  globals.bindings.try_emplace(
      stmt.name, Binding{Binding::Kind::Config, value, stmt.nameLoc});
}

void Lowering::declareBlock(const ast::BlockStmt &stmt) {
  if (auto it = blocks.find(stmt.name); it != blocks.end()) {
    mlir::InFlightDiagnostic diag = error(stmt.nameLoc);
    diag << "redefinition of block '" << stmt.name << "'";
    diag.attachNote(getLoc(it->second.decl->nameLoc))
        << "previous definition is here";
    return;
  }
  BlockInfo info;
  info.decl = &stmt;
  // A block whose header is broken is still known, so its calls stay quiet.
  info.failed = stmt.broken;
  if (findBuiltin(stmt.name)) {
    error(stmt.nameLoc) << "block '" << stmt.name
                        << "' has the name of a builtin function";
    info.failed = true;
  }
  for (size_t i = 0; i < stmt.params.size(); ++i) {
    const ast::BlockParam &param = stmt.params[i];
    info.params.push_back(ParamSpec{param.name});
    for (size_t j = 0; j < i; ++j) {
      if (stmt.params[j].name != param.name)
        continue;
      mlir::InFlightDiagnostic diag = error(param.loc);
      diag << "block '" << stmt.name << "' has two parameters named '"
           << param.name << "'";
      diag.attachNote(getLoc(stmt.params[j].loc)) << "the first is here";
      info.failed = true;
      break;
    }
  }
  auto [it, inserted] = blocks.try_emplace(stmt.name, std::move(info));
  blockOrder.push_back(&it->second);
}

mlir::OwningOpRef<mlir::ModuleOp> Lowering::buildModel(TrainAttr train,
                                                       DataAttr data,
                                                       EvalAttr eval) {
  mlir::Location loc = getLoc(model->nameLoc);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  StringRef name = model->name.empty() ? StringRef("model") : model->name;
  auto modelOp = builder.create<ModelOp>(loc, name,
                                         static_cast<uint64_t>(*batch), train,
                                         data, eval);
  modelOp.getBody().push_back(new mlir::Block());
  builder.setInsertionPointToEnd(&modelOp.getBlock());

  Scope scope{Scope::Kind::Model};
  llvm::StringMap<unsigned> counters;
  modelScope = &scope;
  instanceCounters = &counters;
  lowerStatements(model->body, scope);
  if (!aborted && !hadSyntaxErrors) {
    if (data && data.getKind() == DataKind::Tokens)
      checkTokenFields(modelOp.getBlock(), dataStmt->source->getLoc(), train,
                       eval && eval.getFraction().has_value());
    else if (eval && eval.getData() && eval.getData().getKind() == DataKind::Tokens)
      checkTokenFields(modelOp.getBlock(), evalStmt->source->getLoc(), nullptr,
                       false);
  }
  if (trainStmt && !hasLoss && !aborted && !hadSyntaxErrors)
    error(trainStmt->getLoc()) << "the model has a train clause but no loss; "
                                  "define one with 'loss = …'";
  checkUnusedBlocks();
  modelScope = nullptr;
  instanceCounters = nullptr;
  return module;
}

void Lowering::checkTokenFields(mlir::Block &body, SMLoc loc, TrainAttr train,
                                bool fraction) {
  llvm::SmallVector<mlir::Operation *> inputs, targets;
  for (mlir::Operation &op : body) {
    if (llvm::isa<InputOp>(op))
      inputs.push_back(&op);
    else if (llvm::isa<TargetOp>(op))
      targets.push_back(&op);
  }
  auto describe = [](llvm::ArrayRef<mlir::Operation *> ops) {
    std::string text;
    llvm::raw_string_ostream os(text);
    for (mlir::Operation *op : ops) {
      StringRef name = llvm::isa<InputOp>(op) ? llvm::cast<InputOp>(op).getName()
                                              : llvm::cast<TargetOp>(op).getName();
      os << (text.empty() ? "" : ", ") << "'" << name << "' "
         << op->getResult(0).getType();
    }
    return text.empty() ? std::string("none") : text;
  };
  // i32[batch, T]: rank 2, the batch first, T the same for both.
  auto isWindow = [&](mlir::Operation *op) {
    auto type = llvm::cast<mlir::RankedTensorType>(op->getResult(0).getType());
    return type.getRank() == 2 && type.getElementType().isInteger(32) &&
           type.getShape()[0] == *batch;
  };
  bool ok = inputs.size() == 1 && targets.size() == 1 && isWindow(inputs[0]) &&
            isWindow(targets[0]) &&
            llvm::cast<mlir::RankedTensorType>(inputs[0]->getResult(0).getType())
                    .getShape()[1] ==
                llvm::cast<mlir::RankedTensorType>(targets[0]->getResult(0).getType())
                    .getShape()[1];
  if (!ok) {
    error(loc) << "'tokens' feeds exactly one input and one target, both "
                  "i32[batch, T] (a window of T + 1 tokens: the input its first T, "
                  "the target its last T); the model's inputs: "
               << describe(inputs) << "; its targets: " << describe(targets);
    return;
  }
  if (fraction)
    error(loc) << "the eval clause's fraction holds out rows of a table; a "
                  "token stream's held-out data is a file of its own: eval "
                  "tokens(file = \"...\")";
  if (train && train.getShuffle())
    error(loc) << "'tokens' has an order of its own (order = random draws "
                  "every window); the train clause's shuffle = true applies "
                  "to tables";
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void Lowering::lowerStatements(const ast::StmtList &stmts, Scope &scope) {
  for (const ast::StmtPtr &stmt : stmts) {
    if (aborted)
      return;
    lowerStatement(*stmt, scope);
  }
}

bool Lowering::withinBudget(SMLoc loc) {
  if (aborted)
    return false;
  // What multiplied the model, if anything: the advice names only that.
  auto exceeds = [&](int64_t limit, const char *what) {
    mlir::InFlightDiagnostic diag = error(loc);
    if (repeatIterations == 0 && blockInstantiations == 0) {
      diag << "the model has more than " << limit << " " << what
           << " (the language's limit)";
    } else {
      diag << "the model unrolls to more than " << limit << " " << what
           << "; reduce "
           << (repeatIterations == 0 ? "the block calls (each builds the "
                                       "block's ops again)"
               : blockInstantiations == 0 ? "the repeat counts"
                                          : "the repeat counts or the block "
                                            "calls");
    }
    aborted = true;
  };
  if (opCounter.count > kMaxOps)
    exceeds(kMaxOps, "ops");
  else if (++unrolled > kMaxUnrolling)
    exceeds(kMaxUnrolling, "statements");
  return !aborted;
}

void Lowering::lowerStatement(const ast::Stmt &stmt, Scope &scope) {
  if (!withinBudget(stmt.getLoc()) || !checkPlacement(stmt, scope))
    return;
  switch (stmt.getKind()) {
  case ast::Stmt::Kind::Input:
  case ast::Stmt::Kind::Target:
    return lowerTensorDecl(llvm::cast<ast::TensorDeclStmt>(stmt), scope);
  case ast::Stmt::Kind::Param:
    return lowerParam(llvm::cast<ast::ParamStmt>(stmt), scope);
  case ast::Stmt::Kind::Assign:
    return lowerAssign(llvm::cast<ast::AssignStmt>(stmt), scope);
  case ast::Stmt::Kind::Output:
    return lowerOutput(llvm::cast<ast::OutputStmt>(stmt), scope);
  case ast::Stmt::Kind::Repeat:
    return lowerRepeat(llvm::cast<ast::RepeatStmt>(stmt), scope);
  default:
    // Configs, blocks and clauses were handled by collectDeclarations.
    return;
  }
}

bool Lowering::checkPlacement(const ast::Stmt &stmt, const Scope &scope) {
  bool inModel = scope.kind == Scope::Kind::Model;
  switch (stmt.getKind()) {
  case ast::Stmt::Kind::Model:
    error(stmt.getLoc()) << "models cannot be nested";
    return false;
  case ast::Stmt::Kind::Config:
  case ast::Stmt::Kind::Block:
    if (inModel)
      return true;
    error(stmt.getLoc()) << describeStatement(stmt)
                         << " belongs at file level or directly in the model "
                            "body";
    return false;
  case ast::Stmt::Kind::Input:
  case ast::Stmt::Kind::Target:
  case ast::Stmt::Kind::Output:
  case ast::Stmt::Kind::Train:
  case ast::Stmt::Kind::Data:
  case ast::Stmt::Kind::Eval:
    if (inModel)
      return true;
    error(stmt.getLoc()) << describeStatement(stmt)
                         << " belongs directly in the model body, not in a "
                         << (scope.kind == Scope::Kind::Block ? "block"
                                                              : "repeat")
                         << " body";
    return false;
  case ast::Stmt::Kind::Param:
    if (scope.kind != Scope::Kind::Repeat)
      return true;
    error(stmt.getLoc())
        << "'param' in a repeat body would declare the same parameter on "
           "every iteration; declare it in a block and call the block in the "
           "repeat";
    return false;
  case ast::Stmt::Kind::Return:
    error(stmt.getLoc()) << "'return' is only allowed as the last statement "
                            "of a block body";
    return false;
  case ast::Stmt::Kind::Assign:
  case ast::Stmt::Kind::Repeat:
    return true;
  }
  return true;
}

void Lowering::lowerTensorDecl(const ast::TensorDeclStmt &stmt, Scope &scope) {
  if (stmt.broken)
    return bindBroken(scope, stmt.name, stmt.nameLoc);
  bool isInput = stmt.getKind() == ast::Stmt::Kind::Input;
  std::string owner =
      (isInput ? "input '" : "target '") + stmt.name.str() + "'";
  std::optional<mlir::RankedTensorType> type =
      lowerTensorType(stmt.type, scope, /*floatOnly=*/false, owner);
  Binding *binding =
      declare(scope, stmt.name, stmt.nameLoc,
              isInput ? Binding::Kind::Input : Binding::Kind::Target,
              ExprValue::invalid());
  if (!binding || !type)
    return;
  mlir::Location loc = getLoc(stmt.nameLoc);
  mlir::Value value =
      isInput ? builder.create<InputOp>(loc, *type, stmt.name).getResult()
              : builder.create<TargetOp>(loc, *type, stmt.name).getResult();
  binding->value = ExprValue::tensor(value, stmt.nameLoc);
}

void Lowering::lowerParam(const ast::ParamStmt &stmt, Scope &scope) {
  if (stmt.broken || !stmt.init)
    return bindBroken(scope, stmt.name, stmt.nameLoc);
  std::string owner = "param '" + stmt.name.str() + "'";
  std::optional<mlir::RankedTensorType> type =
      lowerTensorType(stmt.type, scope, /*floatOnly=*/true, owner);
  std::optional<Initializer> init;
  if (type)
    init = lowerInitializer(*stmt.init, *type, scope);
  Binding *binding = declare(scope, stmt.name, stmt.nameLoc,
                             Binding::Kind::Param, ExprValue::invalid());
  if (!binding || !init)
    return;
  // Inside a block instantiation the name is qualified by the instance:
  // `residual.2.w1`.
  auto param = builder.create<ParamOp>(getLoc(stmt.nameLoc), *type,
                                       paramPrefix + stmt.name.str(),
                                       init->kind, init->args);
  binding->value = ExprValue::tensor(param, stmt.nameLoc);
}

void Lowering::lowerAssign(const ast::AssignStmt &stmt, Scope &scope) {
  bool isLoss = stmt.name == "loss";
  if (isLoss && scope.kind != Scope::Kind::Model) {
    error(stmt.getLoc()) << "the loss is defined directly in the model body, "
                            "not in a block or repeat body";
    return;
  }
  if (isLoss)
    hasLoss = true;
  if (stmt.broken || !stmt.value)
    return bindBroken(scope, stmt.name, stmt.getLoc());
  if (isReservedName(stmt.name, stmt.getLoc()))
    return;
  ExprValue value = lowerExpr(*stmt.value, scope);
  if (!value.isInvalid() && !value.isTensor()) {
    mlir::InFlightDiagnostic diag = error(stmt.value->getLoc());
    diag << "'" << stmt.name << "' must be a tensor, got " << value.describe();
    if (value.is(ExprValue::Kind::TensorList))
      diag << "; tensors are joined with concat([…], axis)";
    else
      diag << "; constants are declared with 'config " << stmt.name << " = …'";
    value = ExprValue::invalid();
  }
  if (isLoss && value.isTensor()) {
    mlir::RankedTensorType type = value.getTensorType();
    if (type.getRank() != 0 || !llvm::isa<mlir::FloatType>(type.getElementType())) {
      error(stmt.value->getLoc())
          << "the loss must be a scalar (a rank-0 f32 or f64 tensor), got "
          << type << "; reduce it first, e.g. with reduce_mean(…) or "
                     "mse_loss(…)";
      value = ExprValue::invalid();
    }
  }
  if (!assign(scope, stmt.name, stmt.getLoc(), value))
    return;
  if (isLoss && value.isTensor())
    builder.create<LossOp>(getLoc(stmt.getLoc()), value.getTensor());
}

void Lowering::lowerOutput(const ast::OutputStmt &stmt, Scope &scope) {
  for (const ast::OutputStmt::Name &name : stmt.names) {
    Binding *binding = lookupBinding(scope, name.name);
    if (!binding) {
      if (name.name == "batch" || name.name == "true" || name.name == "false")
        error(name.loc) << "only tensors can be outputs; '" << name.name
                        << "' is a constant";
      else
        reportUnknownName(name.name, name.loc, scope);
      continue;
    }
    if (binding->kind == Binding::Kind::Config) {
      error(name.loc) << "only tensors can be outputs; '" << name.name
                      << "' is a config";
      continue;
    }
    if (binding->value.isInvalid())
      continue;
    auto [it, inserted] = outputs.try_emplace(name.name, name.loc);
    if (!inserted) {
      mlir::InFlightDiagnostic diag = error(name.loc);
      diag << "'" << name.name << "' is already an output";
      diag.attachNote(getLoc(it->second)) << "first marked here";
      continue;
    }
    builder.create<OutputOp>(getLoc(name.loc), name.name,
                             binding->value.getTensor(), mlir::IntegerAttr());
  }
}

void Lowering::lowerRepeat(const ast::RepeatStmt &stmt, Scope &scope) {
  if (!stmt.count)
    return;
  std::optional<int64_t> count = evaluateInteger(
      *stmt.count, scope, "the repeat count", 1, kMaxRepeatCount);
  if (!count)
    return;
  for (int64_t i = 0; i < *count && withinBudget(stmt.getLoc()); ++i) {
    ++repeatIterations;
    Scope body(Scope::Kind::Repeat, &scope);
    unsigned errorsBefore = diagnostics.getErrorCount();
    // The first iteration's errors speak for themselves; later ones (a
    // loop-carried value whose shape changed) say which iteration it was.
    if (i > 0)
      contextNotes.push_back({stmt.getLoc(), "in iteration " +
                                                 std::to_string(i + 1) +
                                                 " of this repeat"});
    lowerStatements(stmt.body, body);
    if (i > 0)
      contextNotes.pop_back();
    // Every iteration would report the same errors again.
    if (diagnostics.getErrorCount() != errorsBefore)
      break;
  }
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

bool Lowering::isReservedName(StringRef name, SMLoc loc) {
  if (name == "batch") {
    error(loc) << "'batch' is reserved: it names the batch size";
    return true;
  }
  if (name == "true" || name == "false") {
    error(loc) << "'" << name << "' is reserved: it is a boolean constant";
    return true;
  }
  return false;
}

Lowering::Binding *Lowering::lookupBinding(Scope &scope, StringRef name) {
  for (Scope *s = &scope; s; s = s->parent)
    if (auto it = s->bindings.find(name); it != s->bindings.end())
      return &it->second;
  if (auto it = globals.bindings.find(name); it != globals.bindings.end())
    return &it->second;
  return nullptr;
}

void Lowering::reportRedefinition(const Binding &previous, StringRef name,
                                  SMLoc loc, bool isAssignment) {
  mlir::InFlightDiagnostic diag = error(loc);
  bool isDeclaration = previous.kind == Binding::Kind::Input ||
                       previous.kind == Binding::Kind::Target ||
                       previous.kind == Binding::Kind::Param;
  if (isAssignment && isDeclaration) {
    StringRef what = previous.kind == Binding::Kind::Input    ? "input"
                     : previous.kind == Binding::Kind::Target ? "target"
                                                              : "param";
    diag << "cannot assign to " << what << " '" << name
         << "': params, inputs and targets are never re-assigned";
    diag.attachNote(getLoc(previous.loc)) << "declared here";
    return;
  }
  if (previous.kind == Binding::Kind::Config) {
    diag << "cannot " << (isAssignment ? "assign to" : "redeclare")
         << " config '" << name << "': configs are constants";
    diag.attachNote(getLoc(previous.loc)) << "defined here";
    return;
  }
  diag << "redefinition of '" << name << "'";
  diag.attachNote(getLoc(previous.loc)) << "previous definition is here";
}

Lowering::Binding *Lowering::declare(Scope &scope, StringRef name, SMLoc loc,
                                     Binding::Kind kind,
                                     const ExprValue &value) {
  if (isReservedName(name, loc))
    return nullptr;
  if (auto it = globals.bindings.find(name); it != globals.bindings.end()) {
    reportRedefinition(it->second, name, loc, /*isAssignment=*/false);
    return nullptr;
  }
  if (auto it = scope.bindings.find(name); it != scope.bindings.end()) {
    reportRedefinition(it->second, name, loc, /*isAssignment=*/false);
    return nullptr;
  }
  return &scope.bindings.try_emplace(name, Binding{kind, value, loc})
              .first->second;
}

bool Lowering::assign(Scope &scope, StringRef name, SMLoc loc,
                      const ExprValue &value) {
  if (auto it = globals.bindings.find(name); it != globals.bindings.end()) {
    reportRedefinition(it->second, name, loc, /*isAssignment=*/true);
    return false;
  }
  if (auto it = scope.bindings.find(name); it != scope.bindings.end()) {
    reportRedefinition(it->second, name, loc, /*isAssignment=*/true);
    return false;
  }
  // In a repeat body, assigning a name of an enclosing scope carries the new
  // value into the next iteration and past the loop.
  if (scope.kind == Scope::Kind::Repeat) {
    for (Scope *outer = scope.parent; outer; outer = outer->parent) {
      auto it = outer->bindings.find(name);
      if (it == outer->bindings.end())
        continue;
      Binding &binding = it->second;
      if (binding.kind != Binding::Kind::Definition &&
          binding.kind != Binding::Kind::Argument) {
        reportRedefinition(binding, name, loc, /*isAssignment=*/true);
        return false;
      }
      auto [update, inserted] = scope.updates.try_emplace(name, loc);
      if (!inserted) {
        mlir::InFlightDiagnostic diag = error(loc);
        diag << "'" << name << "' is already updated in this repeat body";
        diag.attachNote(getLoc(update->second)) << "first updated here";
        return false;
      }
      binding.value = value;
      return true;
    }
  }
  if (scope.kind == Scope::Kind::Repeat)
    repeatLocals.try_emplace(name, loc);
  scope.bindings.try_emplace(name, Binding{Binding::Kind::Definition, value, loc});
  return true;
}

void Lowering::bindBroken(Scope &scope, StringRef name, SMLoc loc) {
  if (name.empty())
    return;
  if (Binding *binding = lookupBinding(scope, name)) {
    // A broken update of a loop-carried value leaves it unknown, not stale.
    if (binding->kind == Binding::Kind::Definition ||
        binding->kind == Binding::Kind::Argument)
      binding->value = ExprValue::invalid();
    return;
  }
  scope.bindings.try_emplace(
      name, Binding{Binding::Kind::Definition, ExprValue::invalid(), loc});
}

//===----------------------------------------------------------------------===//
// Blocks
//===----------------------------------------------------------------------===//

const std::vector<mlir::RankedTensorType> *
Lowering::getBlockParamTypes(BlockInfo &block) {
  if (block.paramTypes)
    return &*block.paramTypes;
  if (block.paramTypesFailed)
    return nullptr;
  // Parameter shapes see the configs and `batch`, nothing else.
  Scope empty{Scope::Kind::Block};
  std::vector<mlir::RankedTensorType> types;
  for (const ast::BlockParam &param : block.decl->params) {
    // A parameter may not hide a constant the body could mean instead.
    if (isReservedName(param.name, param.loc)) {
      block.paramTypesFailed = true;
    } else if (auto it = globals.bindings.find(param.name);
               it != globals.bindings.end()) {
      reportRedefinition(it->second, param.name, param.loc,
                         /*isAssignment=*/false);
      block.paramTypesFailed = true;
    }
    std::optional<mlir::RankedTensorType> type = lowerTensorType(
        param.type, empty, /*floatOnly=*/false,
        "parameter '" + param.name.str() + "' of block '" +
            block.decl->name.str() + "'");
    if (!type) {
      block.paramTypesFailed = true;
      continue;
    }
    types.push_back(*type);
  }
  if (block.paramTypesFailed) {
    block.failed = true;
    return nullptr;
  }
  block.paramTypes = std::move(types);
  return &*block.paramTypes;
}

ExprValue Lowering::callBlock(BlockInfo &block, const ast::CallExpr &call,
                              llvm::ArrayRef<ExprValue> args) {
  const ast::BlockStmt &decl = *block.decl;
  if (block.failed || llvm::any_of(args, [](const ExprValue &arg) {
        return arg.isInvalid();
      }))
    return ExprValue::invalid();
  if (llvm::is_contained(activeBlocks, &block)) {
    mlir::InFlightDiagnostic diag = error(call.getLoc());
    diag << "block '" << decl.name << "' instantiates itself (";
    auto first = llvm::find(activeBlocks, &block);
    for (auto it = first; it != activeBlocks.end(); ++it)
      diag << (*it)->decl->name << " -> ";
    diag << decl.name << "); blocks cannot be recursive";
    block.failed = true;
    return ExprValue::invalid();
  }
  if (activeBlocks.size() >= kMaxBlockDepth) {
    error(call.getLoc()) << "blocks are nested too deeply (more than "
                         << kMaxBlockDepth << " instantiations inside each "
                         << "other)";
    return ExprValue::invalid();
  }
  const std::vector<mlir::RankedTensorType> *types = getBlockParamTypes(block);
  if (!types || !withinBudget(call.getLoc()))
    return ExprValue::invalid();

  // Arguments are checked against the declared types at the call, so a block
  // body always lowers the same way and its errors are the block's own.
  llvm::SmallVector<mlir::Value> values;
  bool ok = true;
  for (size_t i = 0; i < args.size(); ++i) {
    const ast::BlockParam &param = decl.params[i];
    mlir::RankedTensorType expected = (*types)[i];
    if (args[i].isTensor() && args[i].getTensorType() == expected) {
      values.push_back(args[i].getTensor());
      continue;
    }
    mlir::InFlightDiagnostic diag = error(args[i].getLoc());
    diag << "argument '" << param.name << "' of block '" << decl.name
         << "' must be " << expected << ", got " << args[i].describe();
    diag.attachNote(getLoc(param.loc))
        << "parameter '" << param.name << "' is declared here";
    ok = false;
  }
  if (!ok)
    return ExprValue::invalid();
  return instantiateBlock(block, values, call.getLoc());
}

ExprValue Lowering::instantiateBlock(BlockInfo &block,
                                     llvm::ArrayRef<mlir::Value> args,
                                     std::optional<SMLoc> callLoc) {
  const ast::BlockStmt &decl = *block.decl;
  // The k-th instantiation of this block within the current instance (or
  // the model) prefixes its parameters with `<block>.<k>.`.
  unsigned index = (*instanceCounters)[decl.name]++;
  ++blockInstantiations;
  std::string savedPrefix = std::exchange(
      paramPrefix,
      paramPrefix + decl.name.str() + "." + std::to_string(index) + ".");
  llvm::StringMap<unsigned> counters;
  llvm::StringMap<unsigned> *savedCounters =
      std::exchange(instanceCounters, &counters);
  activeBlocks.push_back(&block);
  if (callLoc)
    contextNotes.push_back(
        {*callLoc, "in block '" + decl.name.str() + "' called here"});
  unsigned errorsBefore = diagnostics.getErrorCount();

  Scope scope{Scope::Kind::Block};
  for (size_t i = 0; i < args.size(); ++i) {
    const ast::BlockParam &param = decl.params[i];
    scope.bindings.try_emplace(
        param.name, Binding{Binding::Kind::Argument,
                            ExprValue::tensor(args[i], param.loc), param.loc});
  }
  ExprValue result = ExprValue::invalid();
  bool returned = false;
  for (size_t i = 0; i < decl.body.size() && !aborted; ++i) {
    const auto *ret = llvm::dyn_cast<ast::ReturnStmt>(decl.body[i].get());
    if (!ret) {
      lowerStatement(*decl.body[i], scope);
      continue;
    }
    if (i + 1 != decl.body.size()) {
      error(ret->getLoc()) << "'return' must be the last statement of block '"
                           << decl.name << "'";
      continue;
    }
    returned = true;
    if (!ret->value)
      break;
    result = lowerExpr(*ret->value, scope);
    if (!result.isInvalid() && !result.isTensor()) {
      error(ret->value->getLoc()) << "block '" << decl.name
                                  << "' must return a tensor, got "
                                  << result.describe();
      result = ExprValue::invalid();
    }
  }
  if (!returned && !aborted)
    error(decl.nameLoc) << "block '" << decl.name
                        << "' must end with 'return EXPR'";

  if (callLoc)
    contextNotes.pop_back();
  activeBlocks.pop_back();
  instanceCounters = savedCounters;
  paramPrefix = std::move(savedPrefix);
  block.lowered = true;
  if (diagnostics.getErrorCount() != errorsBefore) {
    block.failed = true;
    return ExprValue::invalid();
  }
  return result.at(callLoc.value_or(decl.nameLoc));
}

void Lowering::checkUnusedBlocks() {
  // A block that is never called would otherwise never be checked. Lower it
  // once, on placeholder arguments, into a block that is then thrown away.
  for (BlockInfo *block : blockOrder) {
    if (aborted)
      return;
    if (block->lowered || block->failed)
      continue;
    const std::vector<mlir::RankedTensorType> *types = getBlockParamTypes(*block);
    if (!types)
      continue;
    mlir::Block scratch;
    mlir::OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&scratch);
    llvm::SmallVector<mlir::Value> args;
    for (size_t i = 0; i < types->size(); ++i) {
      const ast::BlockParam &param = block->decl->params[i];
      args.push_back(builder.create<InputOp>(getLoc(param.loc), (*types)[i],
                                             param.name));
    }
    instantiateBlock(*block, args, std::nullopt);
  }
}
