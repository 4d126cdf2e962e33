//===- AST.h - syntax tree of a model description ---------------*- C++ -*-===//
//
// What the parser produces and the lowering walks. Nodes keep the source
// locations their diagnostics and ops need; names are StringRefs into the
// source buffer, which outlives the tree (both live inside one importModel
// call). LLVM-style RTTI (`kind` + `classof`) lets the lowering dyn_cast.
//
// A statement whose syntax was broken is still kept when its name could be
// read (`broken` set): the lowering binds that name to an invalid value, so a
// syntax error does not cascade into "unknown name" errors further down.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_FRONTEND_AST_H
#define VOUCH_FRONTEND_AST_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

namespace vouch::frontend::ast {

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind { Number, String, Name, Call, Unary, Binary, List };

  Expr(Kind kind, llvm::SMLoc loc, unsigned height)
      : kind(kind), loc(loc), height(height) {}
  virtual ~Expr() = default;

  Kind getKind() const { return kind; }
  llvm::SMLoc getLoc() const { return loc; }
  /// Longest path to a leaf (a leaf has height 1). The parser bounds it, which
  /// bounds every recursion over the tree (lowering, destruction).
  unsigned getHeight() const { return height; }

private:
  Kind kind;
  llvm::SMLoc loc;
  unsigned height;
};

using ExprPtr = std::unique_ptr<Expr>;

/// `3`, `0.03`, `1e-8`.
struct NumberExpr : Expr {
  NumberExpr(llvm::SMLoc loc, double value, std::optional<int64_t> exact,
             llvm::StringRef spelling = {})
      : Expr(Kind::Number, loc, 1), value(value), exactInteger(exact),
        spelling(spelling) {}
  static bool classof(const Expr *e) { return e->getKind() == Kind::Number; }

  double value;
  /// Set for an integer literal that fits int64.
  std::optional<int64_t> exactInteger;
  /// The literal as written (in the source buffer).
  llvm::StringRef spelling;
};

/// `"data/train.csv"`.
struct StringExpr : Expr {
  StringExpr(llvm::SMLoc loc, std::string value)
      : Expr(Kind::String, loc, 1), value(std::move(value)) {}
  static bool classof(const Expr *e) { return e->getKind() == Kind::String; }

  std::string value;
};

/// A use of a name: a value, a config, `batch`, `true` or `false`.
struct NameExpr : Expr {
  NameExpr(llvm::SMLoc loc, llvm::StringRef name)
      : Expr(Kind::Name, loc, 1), name(name) {}
  static bool classof(const Expr *e) { return e->getKind() == Kind::Name; }

  llvm::StringRef name;
};

/// One argument of a call: positional (`keyword` empty) or `keyword = value`.
struct Argument {
  llvm::StringRef keyword;
  llvm::SMLoc keywordLoc;
  ExprPtr value;

  llvm::SMLoc getLoc() const {
    return keyword.empty() ? value->getLoc() : keywordLoc;
  }
};

/// `name(args)`; also a bare `name` where a call is expected (an
/// initialiser, optimizer or data source), with `hasParens` false.
struct CallExpr : Expr {
  CallExpr(llvm::SMLoc loc, llvm::StringRef callee, unsigned height)
      : Expr(Kind::Call, loc, height), callee(callee) {}
  static bool classof(const Expr *e) { return e->getKind() == Kind::Call; }

  llvm::StringRef callee;
  std::vector<Argument> args;
  bool hasParens = false;
};

/// `-operand`; the location is the operator's.
struct UnaryExpr : Expr {
  UnaryExpr(llvm::SMLoc loc, char op, ExprPtr operand)
      : Expr(Kind::Unary, loc, operand->getHeight() + 1), op(op),
        operand(std::move(operand)) {}
  static bool classof(const Expr *e) { return e->getKind() == Kind::Unary; }

  char op;
  ExprPtr operand;
};

/// `lhs op rhs` with op one of + - * /; the location is the operator's.
struct BinaryExpr : Expr {
  BinaryExpr(llvm::SMLoc loc, char op, ExprPtr lhs, ExprPtr rhs)
      : Expr(Kind::Binary, loc,
             std::max(lhs->getHeight(), rhs->getHeight()) + 1),
        op(op), lhs(std::move(lhs)), rhs(std::move(rhs)) {}
  static bool classof(const Expr *e) { return e->getKind() == Kind::Binary; }

  char op;
  ExprPtr lhs, rhs;
};

/// `[a, b, c]`: shapes, permutations and axes.
struct ListExpr : Expr {
  ListExpr(llvm::SMLoc loc, std::vector<ExprPtr> elements, unsigned height)
      : Expr(Kind::List, loc, height), elements(std::move(elements)) {}
  static bool classof(const Expr *e) { return e->getKind() == Kind::List; }

  std::vector<ExprPtr> elements;
};

/// `f32[batch, 2]`: an element type and one expression per dimension.
struct TensorTypeExpr {
  llvm::StringRef elementType;
  llvm::SMLoc loc;
  std::vector<ExprPtr> dims;
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt {
public:
  enum class Kind {
    Model, Config, Block, Input, Target, Param, Assign, Output, Return,
    Repeat, Train, Data, Eval,
  };

  Stmt(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
  virtual ~Stmt() = default;

  Kind getKind() const { return kind; }
  /// The statement's first token (its keyword, or the assigned name).
  llvm::SMLoc getLoc() const { return loc; }

  /// The parser reported an error inside this statement.
  bool broken = false;

private:
  Kind kind;
  llvm::SMLoc loc;
};

using StmtPtr = std::unique_ptr<Stmt>;
using StmtList = std::vector<StmtPtr>;

/// `model NAME { body }`.
struct ModelStmt : Stmt {
  explicit ModelStmt(llvm::SMLoc loc) : Stmt(Kind::Model, loc) {}
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Model; }

  llvm::StringRef name;
  llvm::SMLoc nameLoc;
  StmtList body;
};

/// `config NAME = EXPR`.
struct ConfigStmt : Stmt {
  explicit ConfigStmt(llvm::SMLoc loc) : Stmt(Kind::Config, loc) {}
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Config; }

  llvm::StringRef name;
  llvm::SMLoc nameLoc;
  ExprPtr value;
};

/// One `name : type` in a block's parameter list.
struct BlockParam {
  llvm::StringRef name;
  llvm::SMLoc loc;
  TensorTypeExpr type;
};

/// `block NAME(params) { body }`: a reusable piece of a model.
struct BlockStmt : Stmt {
  explicit BlockStmt(llvm::SMLoc loc) : Stmt(Kind::Block, loc) {}
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Block; }

  llvm::StringRef name;
  llvm::SMLoc nameLoc;
  std::vector<BlockParam> params;
  StmtList body;
};

/// `input NAME : TYPE` and `target NAME : TYPE`.
struct TensorDeclStmt : Stmt {
  TensorDeclStmt(Kind kind, llvm::SMLoc loc) : Stmt(kind, loc) {}
  static bool classof(const Stmt *s) {
    return s->getKind() == Kind::Input || s->getKind() == Kind::Target;
  }

  llvm::StringRef name;
  llvm::SMLoc nameLoc;
  TensorTypeExpr type;
};

/// `param NAME : TYPE = INIT`.
struct ParamStmt : Stmt {
  explicit ParamStmt(llvm::SMLoc loc) : Stmt(Kind::Param, loc) {}
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Param; }

  llvm::StringRef name;
  llvm::SMLoc nameLoc;
  TensorTypeExpr type;
  std::unique_ptr<CallExpr> init;
};

/// `NAME = EXPR` (and `loss = EXPR`).
struct AssignStmt : Stmt {
  explicit AssignStmt(llvm::SMLoc loc) : Stmt(Kind::Assign, loc) {}
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Assign; }

  llvm::StringRef name;
  ExprPtr value;
};

/// `output NAME {, NAME}`.
struct OutputStmt : Stmt {
  explicit OutputStmt(llvm::SMLoc loc) : Stmt(Kind::Output, loc) {}
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Output; }

  struct Name {
    llvm::StringRef name;
    llvm::SMLoc loc;
  };
  std::vector<Name> names;
};

/// `return EXPR`, the last statement of a block body.
struct ReturnStmt : Stmt {
  explicit ReturnStmt(llvm::SMLoc loc) : Stmt(Kind::Return, loc) {}
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Return; }

  ExprPtr value;
};

/// `repeat COUNT { body }`: the body unrolled COUNT times.
struct RepeatStmt : Stmt {
  explicit RepeatStmt(llvm::SMLoc loc) : Stmt(Kind::Repeat, loc) {}
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Repeat; }

  ExprPtr count;
  StmtList body;
};

/// `train OPTIMIZER(args) {OPTION VALUE}`.
struct TrainStmt : Stmt {
  explicit TrainStmt(llvm::SMLoc loc) : Stmt(Kind::Train, loc) {}
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Train; }

  struct Option {
    llvm::StringRef name;
    llvm::SMLoc loc;
    ExprPtr value;
  };
  std::unique_ptr<CallExpr> optimizer;
  std::vector<Option> options;
};

/// `data SOURCE(args)`.
struct DataStmt : Stmt {
  explicit DataStmt(llvm::SMLoc loc) : Stmt(Kind::Data, loc) {}
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Data; }

  std::unique_ptr<CallExpr> source;
};

/// `eval FRACTION` or `eval SOURCE(args)`: the held-out data.
struct EvalStmt : Stmt {
  explicit EvalStmt(llvm::SMLoc loc) : Stmt(Kind::Eval, loc) {}
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Eval; }

  ExprPtr source;
};

/// A whole description: configs, blocks and (one) model, in source order.
struct File {
  StmtList items;
};

} // namespace vouch::frontend::ast

#endif // VOUCH_FRONTEND_AST_H
