//===- Parser.cpp - model description language → AST ---------------------===//
#include "frontend/Parser.h"

#include <algorithm>

#include "frontend/Diagnostics.h"
#include "frontend/Lexer.h"
#include "llvm/ADT/Twine.h"

using namespace vouch::frontend;
using llvm::SMLoc;
using llvm::StringRef;
using llvm::Twine;

namespace {

class Parser {
public:
  Parser(std::vector<Token> tokens, SourceDiagnostics &diagnostics)
      : tokens(std::move(tokens)), diagnostics(diagnostics) {}

  ast::File parseFile();

private:
  /// Counts one level of nesting for as long as it lives.
  struct Nested {
    explicit Nested(Parser &parser) : parser(parser) { ++parser.nesting; }
    ~Nested() { --parser.nesting; }
    /// Reports and returns true past the limit.
    bool tooDeep(SMLoc loc);
    Parser &parser;
  };

  //===--- Tokens ---------------------------------------------------------===//
  const Token &cur() const { return tokens[pos]; }
  const Token &peek() const {
    return tokens[std::min(pos + 1, tokens.size() - 1)];
  }
  void advance() {
    if (pos + 1 < tokens.size())
      ++pos;
  }
  bool consumeIf(TokenKind kind) {
    if (!cur().is(kind))
      return false;
    advance();
    return true;
  }
  /// Whether the current token still belongs to the expression being parsed:
  /// it is on the same line, or inside brackets.
  bool continuesLine() const { return !cur().atLineStart || groupDepth > 0; }
  /// `name =` or a reserved word at the start of a line: surely the next
  /// statement, whatever bracket was left open before it.
  bool startsStatement() const {
    const Token &t = cur();
    return t.atLineStart && t.is(TokenKind::Identifier) &&
           (isReservedWord(t.spelling) || peek().is(TokenKind::Equal));
  }

  //===--- Errors ---------------------------------------------------------===//
  mlir::InFlightDiagnostic error(SMLoc loc) {
    syntaxError = true;
    return diagnostics.emitError(loc);
  }
  /// "expected WHAT, found TOKEN" at the current token, or at the end of the
  /// previous one when the line (or file) ended first.
  void errorExpected(const Twine &what);
  bool expect(TokenKind kind, const Twine &what) {
    if (consumeIf(kind))
      return true;
    errorExpected(what);
    return false;
  }
  ast::ExprPtr checkHeight(ast::ExprPtr expr);

  //===--- Statements -----------------------------------------------------===//
  void parseStatementInto(ast::StmtList &list);
  void synchronize(size_t start);
  ast::StmtPtr parseStatement();
  bool parseBody(ast::StmtList &body, const Twine &owner);
  bool parseName(StringRef &name, SMLoc &loc, const Twine &what);
  bool parseTensorType(ast::TensorTypeExpr &type, const Twine &owner);
  ast::StmtPtr parseModel();
  ast::StmtPtr parseConfig();
  ast::StmtPtr parseBlock();
  ast::StmtPtr parseTensorDecl(ast::Stmt::Kind kind);
  ast::StmtPtr parseParam();
  ast::StmtPtr parseAssign();
  ast::StmtPtr parseOutput();
  ast::StmtPtr parseReturn();
  ast::StmtPtr parseRepeat();
  ast::StmtPtr parseTrain();
  ast::StmtPtr parseData();
  ast::StmtPtr parseEval();

  //===--- Expressions ----------------------------------------------------===//
  ast::ExprPtr parseExpr();
  ast::ExprPtr parseAdditive();
  ast::ExprPtr parseMultiplicative();
  ast::ExprPtr parseUnary();
  ast::ExprPtr parsePrimary();
  ast::ExprPtr parseList();
  /// The arguments of a call; the current token is its '('.
  std::unique_ptr<ast::CallExpr> parseCallArgs(const Token &callee);
  /// `name` or `name(args)`: an initialiser, optimizer or data source.
  std::unique_ptr<ast::CallExpr> parseCallLike(const Twine &what);

  std::vector<Token> tokens;
  size_t pos = 0;
  SourceDiagnostics &diagnostics;
  unsigned nesting = 0;
  /// Where the current statement began.
  size_t statementStart = 0;
  /// Open parentheses and brackets in the current statement.
  unsigned groupDepth = 0;
  /// An error was reported in the current statement.
  bool syntaxError = false;
  /// A missing '}' at the end of the file is reported once, not per body.
  bool reportedUnclosedBody = false;
};

std::string describe(const Token &token) {
  switch (token.kind) {
  case TokenKind::EndOfFile:
    return "end of file";
  case TokenKind::Identifier:
    return (isReservedWord(token.spelling) ? "keyword '" : "'") +
           token.spelling.str() + "'";
  case TokenKind::Number:
    return "number " + token.spelling.str();
  case TokenKind::String:
    return "a string";
  default:
    return "'" + token.spelling.str() + "'";
  }
}

} // namespace

bool Parser::Nested::tooDeep(SMLoc loc) {
  if (parser.nesting <= kMaxNesting)
    return false;
  parser.error(loc) << "nesting is too deep (more than " << kMaxNesting
                    << " levels of brackets, unary minus and bodies)";
  return true;
}

void Parser::errorExpected(const Twine &what) {
  const Token &t = cur();
  if (t.is(TokenKind::Error)) {
    // The lexer has said what is wrong here.
    syntaxError = true;
    return;
  }
  // A token on the next line is not what the statement was missing; unless
  // the statement has not started yet.
  bool lineEnded = t.is(TokenKind::EndOfFile) ||
                   (pos != statementStart && t.atLineStart &&
                    (groupDepth == 0 || startsStatement()));
  if (lineEnded && pos > 0) {
    error(tokens[pos - 1].getEndLoc())
        << "expected " << what.str() << ", found "
        << (t.is(TokenKind::EndOfFile) ? "end of file" : "end of line");
    return;
  }
  error(t.getLoc()) << "expected " << what.str() << ", found " << describe(t);
}

ast::ExprPtr Parser::checkHeight(ast::ExprPtr expr) {
  if (expr->getHeight() <= kMaxExprHeight)
    return expr;
  error(expr->getLoc()) << "expression is too deeply nested (more than "
                        << kMaxExprHeight << " levels)";
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

ast::File Parser::parseFile() {
  ast::File file;
  while (!cur().is(TokenKind::EndOfFile)) {
    if (consumeIf(TokenKind::Semicolon))
      continue;
    if (cur().is(TokenKind::RBrace)) {
      diagnostics.emitError(cur().getLoc()) << "unmatched '}'";
      advance();
      continue;
    }
    parseStatementInto(file.items);
  }
  return file;
}

void Parser::parseStatementInto(ast::StmtList &list) {
  size_t start = pos;
  statementStart = pos;
  syntaxError = false;
  groupDepth = 0;
  ast::StmtPtr parsed = parseStatement();
  ast::Stmt *stmt = parsed.get();
  if (parsed)
    list.push_back(std::move(parsed));
  if (!syntaxError &&
      (consumeIf(TokenKind::Semicolon) || cur().is(TokenKind::RBrace) ||
       cur().is(TokenKind::EndOfFile) || cur().atLineStart))
    return;
  if (!syntaxError)
    errorExpected("a new line or ';' after the statement");
  // What was read of a broken statement still names things (see AST.h).
  if (stmt)
    stmt->broken = true;
  synchronize(start);
}

void Parser::synchronize(size_t start) {
  // Always make progress, or a statement that fails on its first token would
  // be retried forever. '}' and the end of file belong to the caller.
  if (pos == start && !cur().is(TokenKind::RBrace) &&
      !cur().is(TokenKind::EndOfFile))
    advance();
  // Brackets left open by the broken statement are still open; braces opened
  // while skipping hold a body that is skipped whole.
  unsigned groups = groupDepth, braces = 0;
  while (!cur().is(TokenKind::EndOfFile)) {
    const Token &t = cur();
    if (braces == 0) {
      if (t.is(TokenKind::RBrace))
        return;
      if (pos != start && t.atLineStart &&
          (groups == 0 || startsStatement()))
        return;
      if (groups == 0 && t.is(TokenKind::Semicolon)) {
        advance();
        return;
      }
    }
    switch (t.kind) {
    case TokenKind::LParen:
    case TokenKind::LBracket:
      ++groups;
      break;
    case TokenKind::RParen:
    case TokenKind::RBracket:
      if (groups > 0)
        --groups;
      break;
    case TokenKind::LBrace:
      ++braces;
      break;
    case TokenKind::RBrace:
      --braces; // braces > 0 here: a '}' at 0 returned above
      break;
    default:
      break;
    }
    advance();
  }
}

ast::StmtPtr Parser::parseStatement() {
  const Token &t = cur();
  if (!t.is(TokenKind::Identifier)) {
    errorExpected("a statement");
    return nullptr;
  }
  StringRef word = t.spelling;
  if (isReservedWord(word) && peek().is(TokenKind::Equal)) {
    error(t.getLoc()) << "'" << word
                      << "' is a reserved word and cannot name a value";
    return nullptr;
  }
  using Kind = ast::Stmt::Kind;
  if (word == "model")
    return parseModel();
  if (word == "config")
    return parseConfig();
  if (word == "block")
    return parseBlock();
  if (word == "input")
    return parseTensorDecl(Kind::Input);
  if (word == "target")
    return parseTensorDecl(Kind::Target);
  if (word == "param")
    return parseParam();
  if (word == "output")
    return parseOutput();
  if (word == "return")
    return parseReturn();
  if (word == "repeat")
    return parseRepeat();
  if (word == "train")
    return parseTrain();
  if (word == "data")
    return parseData();
  if (word == "eval")
    return parseEval();
  if (peek().is(TokenKind::Equal))
    return parseAssign();
  if (peek().is(TokenKind::LParen)) {
    error(t.getLoc()) << "the result of '" << word
                      << "(…)' must be given a name: NAME = " << word << "(…)";
    return nullptr;
  }
  advance();
  errorExpected("'=' after '" + word + "'");
  return nullptr;
}

bool Parser::parseBody(ast::StmtList &body, const Twine &owner) {
  if (!cur().is(TokenKind::LBrace)) {
    errorExpected("'{' to open " + owner);
    return false;
  }
  Nested nested(*this);
  if (nested.tooDeep(cur().getLoc()))
    return false;
  SMLoc open = cur().getLoc();
  size_t outerStart = statementStart;
  advance();
  while (!cur().is(TokenKind::RBrace) && !cur().is(TokenKind::EndOfFile)) {
    if (!consumeIf(TokenKind::Semicolon))
      parseStatementInto(body);
  }
  statementStart = outerStart;
  // Errors inside the body were recovered from; the enclosing statement
  // itself is fine.
  syntaxError = false;
  groupDepth = 0;
  if (cur().is(TokenKind::EndOfFile)) {
    syntaxError = true;
    if (!reportedUnclosedBody) {
      reportedUnclosedBody = true;
      mlir::InFlightDiagnostic diag = error(tokens[pos - 1].getEndLoc());
      diag << "expected '}' to close " << owner.str() << ", found end of file";
      diag.attachNote(diagnostics.getLocation(open)) << "'{' opened here";
    }
    return false;
  }
  advance();
  return true;
}

bool Parser::parseName(StringRef &name, SMLoc &loc, const Twine &what) {
  const Token &t = cur();
  if (t.is(TokenKind::Identifier) && !isReservedWord(t.spelling)) {
    name = t.spelling;
    loc = t.getLoc();
    advance();
    return true;
  }
  errorExpected(what);
  return false;
}

// type := IDENT '[' [expr {',' expr} [',']] ']'
bool Parser::parseTensorType(ast::TensorTypeExpr &type, const Twine &owner) {
  const Token &t = cur();
  if (!t.is(TokenKind::Identifier)) {
    errorExpected("a tensor type such as f32[batch, 2] for " + owner);
    return false;
  }
  type.elementType = t.spelling;
  type.loc = t.getLoc();
  advance();
  if (!expect(TokenKind::LBracket,
              "'[' and the dimensions after '" + type.elementType + "'"))
    return false;
  ++groupDepth;
  while (!cur().is(TokenKind::RBracket)) {
    ast::ExprPtr dim = parseExpr();
    if (!dim)
      return false;
    type.dims.push_back(std::move(dim));
    if (consumeIf(TokenKind::Comma))
      continue;
    if (!cur().is(TokenKind::RBracket)) {
      errorExpected("',' or ']' in the dimensions of " + owner);
      return false;
    }
  }
  advance();
  --groupDepth;
  return true;
}

// model := 'model' NAME body
ast::StmtPtr Parser::parseModel() {
  auto stmt = std::make_unique<ast::ModelStmt>(cur().getLoc());
  advance();
  if (!parseName(stmt->name, stmt->nameLoc, "a model name after 'model'")) {
    if (!cur().is(TokenKind::LBrace))
      return stmt;
    // Without a name the body is still worth checking.
    stmt->broken = true;
    stmt->nameLoc = stmt->getLoc();
    syntaxError = false;
  }
  parseBody(stmt->body, "the body of model '" + stmt->name + "'");
  return stmt;
}

// config := 'config' NAME '=' expr
ast::StmtPtr Parser::parseConfig() {
  auto stmt = std::make_unique<ast::ConfigStmt>(cur().getLoc());
  advance();
  if (!parseName(stmt->name, stmt->nameLoc, "a name after 'config'"))
    return nullptr;
  if (!expect(TokenKind::Equal, "'=' after config '" + stmt->name + "'"))
    return stmt;
  stmt->value = parseExpr();
  return stmt;
}

// block := 'block' NAME '(' [NAME ':' type {',' NAME ':' type}] ')' body
ast::StmtPtr Parser::parseBlock() {
  auto stmt = std::make_unique<ast::BlockStmt>(cur().getLoc());
  advance();
  if (!parseName(stmt->name, stmt->nameLoc, "a name after 'block'"))
    return nullptr;
  std::string owner = "block '" + stmt->name.str() + "'";
  if (!expect(TokenKind::LParen, "'(' to open the parameters of " + owner))
    return stmt;
  ++groupDepth;
  while (!cur().is(TokenKind::RParen)) {
    ast::BlockParam param;
    if (!parseName(param.name, param.loc, "a parameter name of " + owner))
      return stmt;
    std::string what = "parameter '" + param.name.str() + "'";
    if (!expect(TokenKind::Colon, "':' and a type after " + what) ||
        !parseTensorType(param.type, what))
      return stmt;
    stmt->params.push_back(std::move(param));
    if (consumeIf(TokenKind::Comma))
      continue;
    if (!cur().is(TokenKind::RParen)) {
      errorExpected("',' or ')' after " + what);
      return stmt;
    }
  }
  advance();
  --groupDepth;
  parseBody(stmt->body, "the body of " + owner);
  return stmt;
}

// input := 'input' NAME ':' type ;  target := 'target' NAME ':' type
ast::StmtPtr Parser::parseTensorDecl(ast::Stmt::Kind kind) {
  auto stmt = std::make_unique<ast::TensorDeclStmt>(kind, cur().getLoc());
  StringRef keyword = cur().spelling;
  advance();
  if (!parseName(stmt->name, stmt->nameLoc, "a name after '" + keyword + "'"))
    return nullptr;
  std::string what = keyword.str() + " '" + stmt->name.str() + "'";
  if (expect(TokenKind::Colon, "':' and a type after " + what))
    parseTensorType(stmt->type, what);
  return stmt;
}

// param := 'param' NAME ':' type '=' init
ast::StmtPtr Parser::parseParam() {
  auto stmt = std::make_unique<ast::ParamStmt>(cur().getLoc());
  advance();
  if (!parseName(stmt->name, stmt->nameLoc, "a name after 'param'"))
    return nullptr;
  std::string what = "param '" + stmt->name.str() + "'";
  if (!expect(TokenKind::Colon, "':' and a type after " + what) ||
      !parseTensorType(stmt->type, what))
    return stmt;
  if (!expect(TokenKind::Equal, "'=' and an initialiser after the type of " +
                                    what))
    return stmt;
  stmt->init = parseCallLike("an initialiser (such as zeros or "
                             "xavier_uniform) for " + what);
  return stmt;
}

// assign := NAME '=' expr
ast::StmtPtr Parser::parseAssign() {
  auto stmt = std::make_unique<ast::AssignStmt>(cur().getLoc());
  stmt->name = cur().spelling;
  advance();
  advance(); // '='
  stmt->value = parseExpr();
  return stmt;
}

// output := 'output' NAME {',' NAME}
ast::StmtPtr Parser::parseOutput() {
  auto stmt = std::make_unique<ast::OutputStmt>(cur().getLoc());
  advance();
  do {
    ast::OutputStmt::Name name;
    if (!parseName(name.name, name.loc, "the name of a value after 'output'"))
      return stmt->names.empty() ? nullptr : std::move(stmt);
    stmt->names.push_back(name);
  } while (consumeIf(TokenKind::Comma));
  return stmt;
}

// return := 'return' expr
ast::StmtPtr Parser::parseReturn() {
  auto stmt = std::make_unique<ast::ReturnStmt>(cur().getLoc());
  advance();
  stmt->value = parseExpr();
  return stmt;
}

// repeat := 'repeat' expr body
ast::StmtPtr Parser::parseRepeat() {
  auto stmt = std::make_unique<ast::RepeatStmt>(cur().getLoc());
  advance();
  stmt->count = parseExpr();
  if (stmt->count)
    parseBody(stmt->body, "the body of 'repeat'");
  return stmt;
}

// train := 'train' call {NAME ['='] expr}
ast::StmtPtr Parser::parseTrain() {
  auto stmt = std::make_unique<ast::TrainStmt>(cur().getLoc());
  advance();
  stmt->optimizer = parseCallLike(
      "an optimizer after 'train' (such as adam(lr = 0.01))");
  if (!stmt->optimizer)
    return stmt;
  while (cur().is(TokenKind::Identifier) && !cur().atLineStart) {
    ast::TrainStmt::Option option;
    option.name = cur().spelling;
    option.loc = cur().getLoc();
    advance();
    consumeIf(TokenKind::Equal);
    option.value = parseExpr();
    if (!option.value)
      return stmt;
    stmt->options.push_back(std::move(option));
  }
  if (!cur().atLineStart && !cur().is(TokenKind::Semicolon) &&
      !cur().is(TokenKind::RBrace) && !cur().is(TokenKind::EndOfFile))
    errorExpected("a train option (batch, steps, log_every, schedule, "
                  "clip_grad_norm, shuffle or eval_every) or the end of "
                  "the statement");
  return stmt;
}

// eval := 'eval' (number | call)
ast::StmtPtr Parser::parseEval() {
  auto stmt = std::make_unique<ast::EvalStmt>(cur().getLoc());
  advance();
  stmt->source = parseExpr();
  return stmt;
}

// data := 'data' call
ast::StmtPtr Parser::parseData() {
  auto stmt = std::make_unique<ast::DataStmt>(cur().getLoc());
  advance();
  stmt->source = parseCallLike(
      "a data source after 'data' (regression_grid, csv, npy or tokens)");
  return stmt;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

// expr := additive
ast::ExprPtr Parser::parseExpr() {
  Nested nested(*this);
  if (nested.tooDeep(cur().getLoc()))
    return nullptr;
  return parseAdditive();
}

// additive := multiplicative {('+' | '-') multiplicative}
ast::ExprPtr Parser::parseAdditive() {
  ast::ExprPtr lhs = parseMultiplicative();
  while (lhs && (cur().is(TokenKind::Plus) || cur().is(TokenKind::Minus)) &&
         continuesLine()) {
    char op = cur().spelling.front();
    SMLoc loc = cur().getLoc();
    advance();
    ast::ExprPtr rhs = parseMultiplicative();
    if (!rhs)
      return nullptr;
    lhs = checkHeight(
        std::make_unique<ast::BinaryExpr>(loc, op, std::move(lhs), std::move(rhs)));
  }
  return lhs;
}

// multiplicative := unary {('*' | '/') unary}
ast::ExprPtr Parser::parseMultiplicative() {
  ast::ExprPtr lhs = parseUnary();
  while (lhs && (cur().is(TokenKind::Star) || cur().is(TokenKind::Slash)) &&
         continuesLine()) {
    char op = cur().spelling.front();
    SMLoc loc = cur().getLoc();
    advance();
    ast::ExprPtr rhs = parseUnary();
    if (!rhs)
      return nullptr;
    lhs = checkHeight(
        std::make_unique<ast::BinaryExpr>(loc, op, std::move(lhs), std::move(rhs)));
  }
  return lhs;
}

// unary := '-' unary | primary
ast::ExprPtr Parser::parseUnary() {
  if (!cur().is(TokenKind::Minus))
    return parsePrimary();
  Nested nested(*this);
  SMLoc loc = cur().getLoc();
  if (nested.tooDeep(loc))
    return nullptr;
  advance();
  ast::ExprPtr operand = parseUnary();
  if (!operand)
    return nullptr;
  return checkHeight(std::make_unique<ast::UnaryExpr>(loc, '-', std::move(operand)));
}

// primary := NUMBER | STRING | NAME | NAME '(' args ')' | '(' expr ')' | list
ast::ExprPtr Parser::parsePrimary() {
  const Token &t = cur();
  switch (t.kind) {
  case TokenKind::Number:
    advance();
    return std::make_unique<ast::NumberExpr>(t.getLoc(), t.number,
                                             t.exactInteger, t.spelling);
  case TokenKind::String:
    advance();
    return std::make_unique<ast::StringExpr>(t.getLoc(), t.text);
  case TokenKind::Identifier:
    // Inside an unclosed bracket, `name =` on a new line is the next
    // statement, not an operand.
    if (isReservedWord(t.spelling) || startsStatement())
      break;
    advance();
    if (cur().is(TokenKind::LParen) && continuesLine())
      return parseCallArgs(t);
    return std::make_unique<ast::NameExpr>(t.getLoc(), t.spelling);
  case TokenKind::LParen: {
    advance();
    ++groupDepth;
    ast::ExprPtr inner = parseExpr();
    if (!inner)
      return nullptr;
    if (!expect(TokenKind::RParen, "')'"))
      return nullptr;
    --groupDepth;
    return inner;
  }
  case TokenKind::LBracket:
    return parseList();
  default:
    break;
  }
  errorExpected("an expression");
  return nullptr;
}

// list := '[' [expr {',' expr} [',']] ']'
ast::ExprPtr Parser::parseList() {
  SMLoc loc = cur().getLoc();
  advance();
  ++groupDepth;
  std::vector<ast::ExprPtr> elements;
  unsigned height = 1;
  while (!cur().is(TokenKind::RBracket)) {
    ast::ExprPtr element = parseExpr();
    if (!element)
      return nullptr;
    height = std::max(height, element->getHeight() + 1);
    elements.push_back(std::move(element));
    if (consumeIf(TokenKind::Comma))
      continue;
    if (!cur().is(TokenKind::RBracket)) {
      errorExpected("',' or ']' in a list");
      return nullptr;
    }
  }
  advance();
  --groupDepth;
  return checkHeight(
      std::make_unique<ast::ListExpr>(loc, std::move(elements), height));
}

// args := [arg {',' arg} [',']] ;  arg := [NAME '='] expr
std::unique_ptr<ast::CallExpr> Parser::parseCallArgs(const Token &callee) {
  advance(); // '('
  ++groupDepth;
  std::vector<ast::Argument> args;
  unsigned height = 1;
  while (!cur().is(TokenKind::RParen)) {
    ast::Argument arg;
    // `name =` names the argument; reserved words are fine here (linear's
    // first parameter is `input`).
    if (cur().is(TokenKind::Identifier) && peek().is(TokenKind::Equal)) {
      arg.keyword = cur().spelling;
      arg.keywordLoc = cur().getLoc();
      advance();
      advance();
    }
    arg.value = parseExpr();
    if (!arg.value)
      return nullptr;
    height = std::max(height, arg.value->getHeight() + 1);
    args.push_back(std::move(arg));
    if (consumeIf(TokenKind::Comma))
      continue;
    if (!cur().is(TokenKind::RParen)) {
      errorExpected("',' or ')' after an argument of '" + callee.spelling + "'");
      return nullptr;
    }
  }
  advance();
  --groupDepth;
  auto call =
      std::make_unique<ast::CallExpr>(callee.getLoc(), callee.spelling, height);
  call->args = std::move(args);
  call->hasParens = true;
  if (height > kMaxExprHeight) {
    checkHeight(std::move(call));
    return nullptr;
  }
  return call;
}

std::unique_ptr<ast::CallExpr> Parser::parseCallLike(const Twine &what) {
  const Token &t = cur();
  if (!t.is(TokenKind::Identifier) || isReservedWord(t.spelling)) {
    errorExpected(what);
    return nullptr;
  }
  advance();
  if (cur().is(TokenKind::LParen) && !cur().atLineStart)
    return parseCallArgs(t);
  return std::make_unique<ast::CallExpr>(t.getLoc(), t.spelling, 1);
}

ast::File vouch::frontend::parseFile(SourceDiagnostics &diagnostics) {
  return Parser(lexBuffer(diagnostics), diagnostics).parseFile();
}
