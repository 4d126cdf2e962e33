//===- Lexer.h - tokens of the model description language -------*- C++ -*-===//
//
// The whole buffer is split into tokens up front: descriptions are small, and
// the parser wants two tokens of lookahead (`name =` starts a keyword
// argument). Newlines are not tokens; each token records whether one precedes
// it, which is how statements end (see Parser.h).
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_FRONTEND_LEXER_H
#define VOUCH_FRONTEND_LEXER_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

namespace vouch::frontend {

class SourceDiagnostics;

enum class TokenKind {
  EndOfFile,
  Error, // already reported by the lexer; the parser stays silent about it
  Identifier,
  Number,
  String,
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Semicolon,
  Equal,
  Plus,
  Minus,
  Star,
  Slash,
};

struct Token {
  TokenKind kind = TokenKind::EndOfFile;
  /// The token's text in the buffer.
  llvm::StringRef spelling;
  /// A newline (or the start of the file) comes before this token.
  bool atLineStart = false;
  /// Number: its value; `exactInteger` is set for an integer literal (no '.'
  /// or exponent) that fits int64.
  double number = 0;
  std::optional<int64_t> exactInteger;
  /// String: the contents with escapes resolved.
  std::string text;

  bool is(TokenKind k) const { return kind == k; }
  bool isIdentifier(llvm::StringRef word) const {
    return kind == TokenKind::Identifier && spelling == word;
  }
  llvm::SMLoc getLoc() const {
    return llvm::SMLoc::getFromPointer(spelling.data());
  }
  llvm::SMLoc getEndLoc() const {
    return llvm::SMLoc::getFromPointer(spelling.data() + spelling.size());
  }
};

/// Words that start statements; they cannot name values.
bool isReservedWord(llvm::StringRef word);

/// Splits the diagnostics' buffer into tokens, always ending with EndOfFile.
/// Lexical errors are reported and leave an Error token behind.
std::vector<Token> lexBuffer(SourceDiagnostics &diagnostics);

} // namespace vouch::frontend

#endif // VOUCH_FRONTEND_LEXER_H
