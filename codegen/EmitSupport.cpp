//===- EmitSupport.cpp - small helpers every emitter uses -------*- C++ -*-===//
#include "codegen/EmitSupport.h"

namespace vouch::codegen {

std::string cppStringLiteral(llvm::StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

} // namespace vouch::codegen
