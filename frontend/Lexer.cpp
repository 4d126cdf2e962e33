//===- Lexer.cpp - tokens of the model description language --------------===//
#include "frontend/Lexer.h"

#include <cmath>

#include "frontend/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"

using namespace vouch::frontend;
using llvm::SMLoc;
using llvm::StringRef;

bool vouch::frontend::isReservedWord(StringRef word) {
  return llvm::StringSwitch<bool>(word)
      .Cases("model", "config", "block", "input", "target", "param", true)
      .Cases("output", "return", "repeat", "train", "data", true)
      .Case("eval", true)
      .Default(false);
}

namespace {

bool isIdentifierStart(char c) { return llvm::isAlpha(c) || c == '_'; }
bool isIdentifierChar(char c) { return llvm::isAlnum(c) || c == '_'; }

class Lexer {
public:
  explicit Lexer(SourceDiagnostics &diagnostics)
      : diagnostics(diagnostics), cur(diagnostics.getBuffer().begin()),
        end(diagnostics.getBuffer().end()) {}

  std::vector<Token> lexAll() {
    std::vector<Token> tokens;
    do
      tokens.push_back(lexToken());
    while (!tokens.back().is(TokenKind::EndOfFile));
    return tokens;
  }

private:
  Token lexToken();
  void skipSpaceAndComments();
  void lexNumber(Token &token, const char *start);
  void lexString(Token &token, const char *start);
  void lexUnexpected(Token &token, const char *start);

  Token make(TokenKind kind, const char *start) {
    Token token;
    token.kind = kind;
    token.spelling = StringRef(start, cur - start);
    token.atLineStart = newlineBefore;
    newlineBefore = false;
    return token;
  }
  void fail(Token &token, SMLoc loc, const llvm::Twine &message) {
    diagnostics.emitError(loc) << message.str();
    token.kind = TokenKind::Error;
  }

  SourceDiagnostics &diagnostics;
  const char *cur;
  const char *end;
  bool newlineBefore = true;
};

} // namespace

void Lexer::skipSpaceAndComments() {
  while (cur != end) {
    char c = *cur;
    if (c == '\n') {
      newlineBefore = true;
      ++cur;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++cur;
    } else if (c == '/' && cur + 1 != end && cur[1] == '/') {
      while (cur != end && *cur != '\n')
        ++cur;
    } else {
      return;
    }
  }
}

Token Lexer::lexToken() {
  skipSpaceAndComments();
  const char *start = cur;
  if (cur == end)
    return make(TokenKind::EndOfFile, start);
  char c = *cur++;
  switch (c) {
  case '(': return make(TokenKind::LParen, start);
  case ')': return make(TokenKind::RParen, start);
  case '[': return make(TokenKind::LBracket, start);
  case ']': return make(TokenKind::RBracket, start);
  case '{': return make(TokenKind::LBrace, start);
  case '}': return make(TokenKind::RBrace, start);
  case ',': return make(TokenKind::Comma, start);
  case ':': return make(TokenKind::Colon, start);
  case ';': return make(TokenKind::Semicolon, start);
  case '=': return make(TokenKind::Equal, start);
  case '+': return make(TokenKind::Plus, start);
  case '-': return make(TokenKind::Minus, start);
  case '*': return make(TokenKind::Star, start);
  case '/': return make(TokenKind::Slash, start);
  default: break;
  }
  Token token;
  if (isIdentifierStart(c)) {
    while (cur != end && isIdentifierChar(*cur))
      ++cur;
    return make(TokenKind::Identifier, start);
  }
  if (llvm::isDigit(c)) {
    cur = start;
    lexNumber(token, start);
  } else if (c == '"') {
    lexString(token, start);
  } else {
    lexUnexpected(token, start);
  }
  Token made = make(token.kind, start);
  made.number = token.number;
  made.exactInteger = token.exactInteger;
  made.text = std::move(token.text);
  return made;
}

// number := digits ['.' digits] [('e'|'E') ['+'|'-'] digits]
void Lexer::lexNumber(Token &token, const char *start) {
  token.kind = TokenKind::Number;
  auto skipDigits = [&] {
    while (cur != end && llvm::isDigit(*cur))
      ++cur;
  };
  skipDigits();
  bool isInteger = true;
  if (cur != end && *cur == '.') {
    isInteger = false;
    ++cur;
    if (cur == end || !llvm::isDigit(*cur))
      return fail(token, SMLoc::getFromPointer(cur),
                  "expected digits after '.' in a number");
    skipDigits();
  }
  if (cur != end && (*cur == 'e' || *cur == 'E')) {
    isInteger = false;
    ++cur;
    if (cur != end && (*cur == '+' || *cur == '-'))
      ++cur;
    if (cur == end || !llvm::isDigit(*cur))
      return fail(token, SMLoc::getFromPointer(cur),
                  "expected digits in the exponent of a number");
    skipDigits();
  }
  // `2x` is a typo, not the number 2 followed by the name x.
  if (cur != end && isIdentifierChar(*cur)) {
    while (cur != end && isIdentifierChar(*cur))
      ++cur;
    return fail(token, SMLoc::getFromPointer(start),
                "malformed number '" + StringRef(start, cur - start) + "'");
  }
  StringRef spelling(start, cur - start);
  int64_t integer;
  if (isInteger && !spelling.getAsInteger(10, integer)) {
    token.exactInteger = integer;
    token.number = static_cast<double>(integer);
    return;
  }
  // An integer too large for int64 stays usable as a float; where an integer
  // is required (dimensions, counts) the lowering reports it.
  if (spelling.getAsDouble(token.number) || !std::isfinite(token.number))
    fail(token, SMLoc::getFromPointer(start),
         "number '" + spelling + "' is out of range for f64");
}

// string := '"' { char | '\' ('"' | '\' | 'n' | 't') } '"', on one line
void Lexer::lexString(Token &token, const char *start) {
  token.kind = TokenKind::String;
  while (true) {
    if (cur == end || *cur == '\n')
      return fail(token, SMLoc::getFromPointer(start),
                  "unterminated string (strings end on the line they start)");
    char c = *cur++;
    if (c == '"')
      return;
    if (c == '\\') {
      char escaped = cur == end ? '\0' : *cur;
      switch (escaped) {
      case '"': case '\\': token.text += escaped; break;
      case 'n': token.text += '\n'; break;
      case 't': token.text += '\t'; break;
      default:
        // Keep lexing the string so its end is found; report once.
        if (token.kind != TokenKind::Error)
          fail(token, SMLoc::getFromPointer(cur - 1),
               "unknown escape sequence in string; known: \\\" \\\\ \\n \\t");
        if (escaped == '\n' || cur == end)
          continue;
      }
      ++cur;
      continue;
    }
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') {
      if (token.kind != TokenKind::Error)
        fail(token, SMLoc::getFromPointer(cur - 1),
             "control character in string");
      continue;
    }
    token.text += c;
  }
}

void Lexer::lexUnexpected(Token &token, const char *start) {
  unsigned char c = static_cast<unsigned char>(*start);
  if (c >= 0x80) {
    // One error for a whole run of non-ASCII bytes (one UTF-8 character or
    // more), not one per byte.
    while (cur != end && static_cast<unsigned char>(*cur) >= 0x80)
      ++cur;
    return fail(token, SMLoc::getFromPointer(start),
                "unexpected non-ASCII character; names and operators are ASCII");
  }
  std::string shown;
  if (llvm::isPrint(c))
    shown = std::string("'") + static_cast<char>(c) + "'";
  else
    shown = "byte 0x" + llvm::utohexstr(c, /*LowerCase=*/true, /*Width=*/2);
  fail(token, SMLoc::getFromPointer(start), "unexpected character " + shown);
}

std::vector<Token> vouch::frontend::lexBuffer(SourceDiagnostics &diagnostics) {
  return Lexer(diagnostics).lexAll();
}
