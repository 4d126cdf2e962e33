//===- Parser.h - model description language → AST -------------*- C++ -*-===//
//
// A recursive-descent parser over the token vector.
//
// Statements end at a newline or ';'. Inside parentheses and brackets
// newlines are ignored, so a long call can span lines; at the top of an
// expression a newline ends it (`x = a` / `-b` on the next line is not
// `a - b`).
//
// Recovery is per statement: after a syntax error the parser reports it, then
// skips to the next statement (a token at the start of a line, a ';' or the
// '}' closing the enclosing body, with brackets balanced), so one file yields
// all of its syntax errors. Nesting (parentheses, unary minus, bodies) and
// expression height are bounded, so no input can exhaust the stack.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_FRONTEND_PARSER_H
#define VOUCH_FRONTEND_PARSER_H

#include "frontend/AST.h"

namespace vouch::frontend {

class SourceDiagnostics;

/// Parses the diagnostics' buffer. Syntax errors are reported through
/// `diagnostics`; the tree holds every statement that could be read.
ast::File parseFile(SourceDiagnostics &diagnostics);

/// The deepest nesting of brackets, unary minus and bodies, and the highest
/// expression tree, that the parser accepts.
constexpr unsigned kMaxNesting = 100;
constexpr unsigned kMaxExprHeight = 200;

} // namespace vouch::frontend

#endif // VOUCH_FRONTEND_PARSER_H
