//===- Lowering.h - AST → vouch dialect -------------------------*- C++ -*-===//
//
// Walks the AST once, in program order, evaluating constants and building
// the ops of one `vouch.model`. Its methods are split by concept:
//   Lowering.cpp    declarations, scopes, statements, blocks and repeat
//   Expressions.cpp names, constants, operators and NumPy broadcasting
//   Builtins.cpp    the builtin functions, registered from the op table
//   Clauses.cpp     initialisers and the train and data clauses
//
// Errors never stop the walk: a failed expression yields an Invalid value
// that later uses pass through silently, a failed block is not instantiated
// again, and a failed repeat iteration ends its repeat. Every error leaves
// through error(), which appends the "in block … called here" and "in
// iteration k" notes of the instantiation being lowered.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_FRONTEND_LOWERING_H
#define VOUCH_FRONTEND_LOWERING_H

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "frontend/AST.h"
#include "frontend/Arguments.h"
#include "frontend/Diagnostics.h"
#include "frontend/Frontend.h"
#include "frontend/Values.h"
#include "ir/OpTable.h"
#include "ir/VouchOps.h"
#include "llvm/ADT/StringMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace vouch::frontend {

/// Limits that keep any description, however hostile, cheap to reject. The
/// unrolling budget counts statements lowered, repeat iterations and block
/// instantiations, so loops that build nothing cannot spin forever either.
constexpr int64_t kMaxOps = 100000;
constexpr int64_t kMaxUnrolling = 1000000;
constexpr int64_t kMaxRepeatCount = 100000;
constexpr unsigned kMaxBlockDepth = 32;

class Lowering {
public:
  Lowering(SourceDiagnostics &diagnostics, const ImportOptions &options);

  /// Builds the module; it is only meaningful if no error was reported.
  mlir::OwningOpRef<mlir::ModuleOp> lowerFile(const ast::File &file);

private:
  /// What a name in a scope stands for.
  struct Binding {
    enum class Kind { Input, Target, Param, Argument, Definition, Config };
    Kind kind;
    ExprValue value;
    /// Where it was defined (or last updated by a repeat).
    llvm::SMLoc loc;
  };

  /// The names of the model body, a block instantiation, or one iteration of
  /// a repeat body. Model and block scopes have no parent: a block sees its
  /// arguments, its own definitions and the configs, nothing else.
  struct Scope {
    enum class Kind { Model, Block, Repeat };
    explicit Scope(Kind kind, Scope *parent = nullptr)
        : kind(kind), parent(parent) {}
    Kind kind;
    Scope *parent;
    llvm::StringMap<Binding> bindings;
    /// Outer names this repeat iteration has updated, and where.
    llvm::StringMap<llvm::SMLoc> updates;
  };

  struct BlockInfo {
    const ast::BlockStmt *decl;
    std::vector<ParamSpec> params;
    /// Argument types, evaluated at the first call.
    std::optional<std::vector<mlir::RankedTensorType>> paramTypes;
    bool paramTypesFailed = false;
    /// An instantiation reported errors: later calls return Invalid quietly,
    /// since every instantiation of a block lowers the same way.
    bool failed = false;
    /// Lowered at least once (in the model or by the unused-block check).
    bool lowered = false;
  };

  struct BuiltinCall;
  using BuiltinLowering = ExprValue (Lowering::*)(const BuiltinCall &call);
  /// A builtin function: a row of the op table with a builtin name (its
  /// name and parameters come from there) and the method that lowers it.
  struct BuiltinSpec {
    llvm::StringRef name;
    std::vector<ParamSpec> params;
    const OpFacts *op;
    BuiltinLowering lower;
  };
  /// One call of a builtin, its arguments bound in parameter order (Absent
  /// where an optional one was left out, never Invalid).
  struct BuiltinCall {
    const BuiltinSpec &spec;
    const ast::CallExpr &expr;
    llvm::ArrayRef<ExprValue> args;

    llvm::SMLoc getLoc() const { return expr.getLoc(); }
    /// Where argument `index` was written, or the call where it was left out
    /// (a default): where a message about its value points.
    llvm::SMLoc argLoc(unsigned index) const {
      return args[index].is(ExprValue::Kind::Absent) ? getLoc()
                                                     : args[index].getLoc();
    }
    /// "'linear'": how messages name the op.
    std::string opName() const { return "'" + spec.name.str() + "'"; }
    std::string paramName(unsigned index) const {
      return "'" + spec.params[index].name.str() + "'";
    }
  };

  /// Counts the ops the lowering creates, for the kMaxOps budget.
  struct OpCounter : mlir::OpBuilder::Listener {
    void notifyOperationInserted(mlir::Operation *,
                                 mlir::OpBuilder::InsertPoint) override {
      ++count;
    }
    int64_t count = 0;
  };

  //===--- Lowering.cpp ---------------------------------------------------===//
  mlir::InFlightDiagnostic error(llvm::SMLoc loc);
  mlir::Location getLoc(llvm::SMLoc loc) const {
    return diagnostics.getLocation(loc);
  }
  void collectDeclarations(const ast::File &file);
  void declareConfig(const ast::ConfigStmt &stmt);
  void declareBlock(const ast::BlockStmt &stmt);
  mlir::OwningOpRef<mlir::ModuleOp> buildModel(TrainAttr train,
                                                DataAttr data, EvalAttr eval);
  /// Counts one unit of unrolling; reports and stops the walk once a budget
  /// is spent.
  bool withinBudget(llvm::SMLoc loc);
  void lowerStatements(const ast::StmtList &stmts, Scope &scope);
  void lowerStatement(const ast::Stmt &stmt, Scope &scope);
  bool checkPlacement(const ast::Stmt &stmt, const Scope &scope);
  void lowerTensorDecl(const ast::TensorDeclStmt &stmt, Scope &scope);
  void lowerParam(const ast::ParamStmt &stmt, Scope &scope);
  void lowerAssign(const ast::AssignStmt &stmt, Scope &scope);
  void lowerOutput(const ast::OutputStmt &stmt, Scope &scope);
  void lowerRepeat(const ast::RepeatStmt &stmt, Scope &scope);
  /// Declares a new name in `scope`; reports a clash and returns null.
  Binding *declare(Scope &scope, llvm::StringRef name, llvm::SMLoc loc,
               Binding::Kind kind, const ExprValue &value);
  /// `name = value`: defines the name, or updates a loop-carried one.
  bool assign(Scope &scope, llvm::StringRef name, llvm::SMLoc loc,
              const ExprValue &value);
  /// Binds a name whose statement was broken, quietly, so later uses of it
  /// report nothing.
  void bindBroken(Scope &scope, llvm::StringRef name, llvm::SMLoc loc);
  void reportRedefinition(const Binding &previous, llvm::StringRef name,
                          llvm::SMLoc loc, bool isAssignment);
  bool isReservedName(llvm::StringRef name, llvm::SMLoc loc);
  Binding *lookupBinding(Scope &scope, llvm::StringRef name);
  ExprValue callBlock(BlockInfo &block, const ast::CallExpr &call,
                      llvm::ArrayRef<ExprValue> args);
  ExprValue instantiateBlock(BlockInfo &block,
                             llvm::ArrayRef<mlir::Value> args,
                             std::optional<llvm::SMLoc> callLoc);
  const std::vector<mlir::RankedTensorType> *getBlockParamTypes(BlockInfo &block);
  void checkUnusedBlocks();

  //===--- Expressions.cpp ------------------------------------------------===//
  ExprValue lowerExpr(const ast::Expr &expr, Scope &scope);
  ExprValue lowerName(const ast::NameExpr &expr, Scope &scope);
  ExprValue lowerList(const ast::ListExpr &expr, Scope &scope);
  ExprValue lowerCall(const ast::CallExpr &call, Scope &scope);
  void reportUnknownName(llvm::StringRef name, llvm::SMLoc loc, Scope &scope);
  void reportUnknownFunction(const ast::CallExpr &call, Scope &scope);
  /// `lhs op rhs` for op in + - * /; `opName` is how messages name it.
  bool numbersOrTensors(const ExprValue &lhs, const ExprValue &rhs,
                        llvm::StringRef opName);
  ExprValue lowerArithmetic(char op, const ExprValue &lhs,
                            const ExprValue &rhs, llvm::SMLoc loc,
                            llvm::StringRef opName);
  /// The infix operator that names `mnemonic` ('+' for add), if any.
  static std::optional<char> infixOperatorOf(std::string_view mnemonic);
  /// A binary pointwise op on numbers or tensors: tensors broadcast
  /// NumPy-style, a number becomes a vouch.fill of the other side's type.
  ExprValue lowerBinaryOp(const OpFacts &op, const ExprValue &lhs,
                          const ExprValue &rhs, llvm::SMLoc loc,
                          llvm::StringRef opName);
  ExprValue lowerNegation(const ExprValue &operand, llvm::SMLoc loc);
  std::optional<Number> foldArithmetic(char op, const Number &lhs,
                                       const Number &rhs, llvm::SMLoc loc);
  /// Checks the operand of an elementwise op; null after reporting.
  mlir::Value requireFloatTensor(const ExprValue &value, llvm::StringRef opName,
                                 llvm::StringRef what);
  mlir::Value broadcastTo(mlir::Value value, mlir::RankedTensorType type,
                          llvm::SMLoc loc);
  /// A tensor type of this shape, unless its element count overflows int64.
  std::optional<mlir::RankedTensorType>
  makeTensorType(llvm::ArrayRef<int64_t> shape, mlir::Type elementType,
                 llvm::SMLoc loc, llvm::StringRef what);
  std::optional<mlir::RankedTensorType>
  lowerTensorType(const ast::TensorTypeExpr &type, Scope &scope,
                  bool floatOnly, const std::string &owner);
  std::optional<Number> evaluateNumber(const ast::Expr &expr, Scope &scope,
                                       const std::string &what);
  std::optional<int64_t> evaluateInteger(const ast::Expr &expr, Scope &scope,
                                         const std::string &what, int64_t min,
                                         int64_t max = INT64_MAX);
  /// `value` as an integer in [min, max]; reports and returns nothing if not.
  std::optional<int64_t> requireInteger(const Number &value, llvm::SMLoc loc,
                                        const std::string &what, int64_t min,
                                        int64_t max = INT64_MAX);

  //===--- Builtins.cpp ---------------------------------------------------===//
public:
  /// The builtins' names, in the op table's order.
  static std::vector<llvm::StringRef> getBuiltinNames();

private:
  /// The builtins, in the op table's order: every row with a builtin name
  /// that a lowering covers (see frontend/README.md).
  static const std::vector<BuiltinSpec> &getBuiltins();
  static BuiltinLowering findLowering(const OpFacts &op, size_t arity);
  static const BuiltinSpec *findBuiltin(llvm::StringRef name);
  ExprValue lowerBuiltin(const BuiltinSpec &spec, const ast::CallExpr &call,
                         llvm::ArrayRef<ExprValue> args);
  // Generic, by family: a new op of these families needs no code here.
  ExprValue lowerPointwise(const BuiltinCall &call);
  ExprValue lowerReduction(const BuiltinCall &call);
  // Ops whose builtins take attributes or follow the language's own rules.
  ExprValue lowerLinear(const BuiltinCall &call);
  ExprValue lowerMatmul(const BuiltinCall &call);
  ExprValue lowerReshape(const BuiltinCall &call);
  ExprValue lowerPermute(const BuiltinCall &call);
  ExprValue lowerBroadcast(const BuiltinCall &call);
  ExprValue lowerMseLoss(const BuiltinCall &call);
  ExprValue lowerCrossEntropy(const BuiltinCall &call);
  ExprValue lowerGelu(const BuiltinCall &call);
  ExprValue lowerSlice(const BuiltinCall &call);
  ExprValue lowerConcat(const BuiltinCall &call);
  ExprValue lowerEmbedding(const BuiltinCall &call);
  ExprValue lowerGatherOrScatter(const BuiltinCall &call);
  ExprValue lowerSoftmax(const BuiltinCall &call);
  ExprValue lowerCast(const BuiltinCall &call);
  ExprValue lowerLayerNorm(const BuiltinCall &call);
  ExprValue lowerBatchNorm(const BuiltinCall &call);
  ExprValue lowerRandom(const BuiltinCall &call);
  ExprValue lowerCausalMask(const BuiltinCall &call);
  ExprValue lowerScaledDotProductAttention(const BuiltinCall &call);
  ExprValue lowerConv(const BuiltinCall &call);
  /// A window argument (kernel, stride, padding, ...): one integer for each
  /// of the `axes` spatial axes; `whenAbsent` (else the signature's default)
  /// where it was left out. Nothing after reporting.
  std::optional<llvm::SmallVector<int64_t>>
  perSpatialAxisArg(const BuiltinCall &call, unsigned index, int64_t axes,
                    llvm::ArrayRef<int64_t> whenAbsent = {});
  // Pooling and flatten.
  ExprValue lowerPool(const BuiltinCall &call);
  ExprValue lowerFlatten(const BuiltinCall &call);
  /// Builds the op of a table row by its registered name ("vouch.relu").
  mlir::Value buildOp(const OpFacts &op, llvm::SMLoc loc,
                      mlir::ValueRange operands, mlir::Type resultType,
                      llvm::ArrayRef<mlir::NamedAttribute> attributes = {});
  /// The type an op's shape rule (ir/VouchOps.h) inferred; null after
  /// reporting its failure after `opName`, at `loc` or at the argument the
  /// rule names (`args`, in the rule's order).
  mlir::RankedTensorType checkShapeRule(const InferredType &inferred,
                                        llvm::StringRef opName,
                                        llvm::SMLoc loc,
                                        llvm::ArrayRef<ExprValue> args = {});
  mlir::RankedTensorType checkShapeRule(const BuiltinCall &call,
                                        const InferredType &inferred) {
    return checkShapeRule(inferred, call.opName(), call.getLoc(), call.args);
  }
  mlir::Value tensorArg(const BuiltinCall &call, unsigned index);
  /// An i32 tensor argument (ids, indices).
  mlir::Value intTensorArg(const BuiltinCall &call, unsigned index);
  /// A tensor argument of any element type; null after reporting.
  mlir::Value anyTensorArg(const BuiltinCall &call, unsigned index);
  /// An i1 tensor argument (a mask); null after reporting.
  mlir::Value maskArg(const BuiltinCall &call, unsigned index);
  std::optional<Number> numberArg(const BuiltinCall &call, unsigned index);
  /// A normalization's eps: a finite number ≥ 0, else reported.
  std::optional<Number> epsArg(const BuiltinCall &call, unsigned index);
  std::optional<bool> boolArg(const BuiltinCall &call, unsigned index);
  /// A number argument that is an integer (or its default).
  std::optional<int64_t> integerArg(const BuiltinCall &call, unsigned index);
  /// A list (or a single number) of integers.
  std::optional<llvm::SmallVector<int64_t>>
  integerListArg(const BuiltinCall &call, unsigned index, bool allowScalar);

  //===--- Clauses.cpp ----------------------------------------------------===//
  struct Initializer {
    InitKind kind;
    llvm::SmallVector<double> args;
  };
  static std::vector<llvm::StringRef> getInitializerNames();
  std::optional<Initializer> lowerInitializer(const ast::CallExpr &init,
                                              mlir::RankedTensorType type,
                                              Scope &scope);
  /// The train clause's attribute; sets `trainBatch` from its batch option.
  TrainAttr lowerTrainClause(const ast::TrainStmt &train);
  /// The schedule option of the train clause (null for constant); false
  /// after reporting.
  bool lowerSchedule(const ast::Expr &expr, int64_t steps, ScheduleAttr &out);
  DataAttr lowerDataClause(const ast::DataStmt &data);
  /// A data source call (`npy(...)`, `csv(...)`, `regression_grid(...)`).
  DataAttr lowerDataSource(const ast::CallExpr &call);
  /// The eval clause: a held-out fraction or a data source of its own.
  EvalAttr lowerEvalClause(const ast::EvalStmt &eval);
  DataAttr lowerNpyClause(const ast::CallExpr &call);
  DataAttr lowerTokensClause(const ast::CallExpr &call, const Signature &signature);
  /// A tokens data or eval clause, once the body is lowered: the model has
  /// exactly one input and one target, both i32[batch, T]; errors at `loc`.
  void checkTokenFields(mlir::Block &body, llvm::SMLoc loc, TrainAttr train,
                        bool fraction);
  /// Binds and evaluates the numeric arguments of a clause call.
  std::optional<llvm::SmallVector<ExprValue>>
  evaluateClauseArgs(const Signature &signature, const ast::CallExpr &call,
                     Scope &scope);
  /// Stores a given numeric argument in `out` (an absent one leaves the
  /// default there); reports and returns false for any other value.
  bool clauseNumber(const Signature &signature, unsigned index,
                    const ExprValue &value, Number &out);
  bool clauseString(const Signature &signature, unsigned index,
                    const ExprValue &value, std::string &out);
  std::string resolveDataPath(llvm::StringRef path) const;

  //===--- State ----------------------------------------------------------===//
  SourceDiagnostics &diagnostics;
  const ImportOptions &options;
  /// The configs options.configs replaced so far.
  std::set<std::string> overriddenConfigs;
  mlir::MLIRContext &context;
  mlir::OpBuilder builder;
  OpCounter opCounter;
  /// The next random op's ordinal (its stream of counter_rng.h).
  int64_t randomOrdinal = 0;
  /// Statements, iterations and instantiations lowered so far.
  int64_t unrolled = 0;
  /// Repeat iterations and block instantiations lowered so far: a spent
  /// budget's message suggests reducing only what the model uses.
  int64_t repeatIterations = 0, blockInstantiations = 0;
  /// Set once a budget is spent: the walk stops.
  bool aborted = false;

  /// Declarations gathered before lowering (configs are evaluated then).
  const ast::ModelStmt *model = nullptr;
  const ast::TrainStmt *trainStmt = nullptr;
  const ast::DataStmt *dataStmt = nullptr;
  const ast::EvalStmt *evalStmt = nullptr;
  /// Keeps a model's first train / data / eval clause; errors on a second.
  template <class Stmt>
  void claimOnce(const Stmt *&slot, const Stmt *stmt, llvm::StringRef clause);
  Scope globals{Scope::Kind::Model};
  llvm::StringMap<BlockInfo> blocks;
  std::vector<BlockInfo *> blockOrder;

  /// The batch size, once known (configs and the train clause are evaluated
  /// before it is).
  std::optional<int64_t> batch;
  int64_t trainBatch = 1;
  Scope *modelScope = nullptr;
  llvm::StringMap<llvm::SMLoc> outputs;
  /// Names first defined in a repeat body, for the hint when they are used
  /// after it.
  llvm::StringMap<llvm::SMLoc> repeatLocals;
  bool hasLoss = false;
  /// The parser reported errors: a statement may have been lost, so the
  /// absence of a loss proves nothing.
  bool hadSyntaxErrors = false;

  /// Naming of block parameters: the prefix of the instantiation being
  /// lowered ("outer.0.") and its per-block instantiation counters.
  std::string paramPrefix;
  llvm::StringMap<unsigned> *instanceCounters = nullptr;
  std::vector<const BlockInfo *> activeBlocks;

  /// batch_norm's running statistics (vouch.state) by the name they take
  /// after ("bn1", "res.0.g"), and the block they were built in: batch_norms
  /// naming one param share them.
  struct RunningStats {
    mlir::Block *block = nullptr;
    mlir::Value mean, var;
  };
  llvm::StringMap<RunningStats> runningStats;

  /// Notes appended to every error: where the enclosing instantiations were
  /// called, which repeat iteration is being lowered.
  struct ContextNote {
    llvm::SMLoc loc;
    std::string message;
  };
  std::vector<ContextNote> contextNotes;
};

} // namespace vouch::frontend

#endif // VOUCH_FRONTEND_LOWERING_H
