//===- EmitSupport.cpp - small helpers every emitter uses -------*- C++ -*-===//
#include "codegen/EmitSupport.h"

#include <cstdio>

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
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) { // CR, tab, NUL...: three octal digits
      char escape[5];
      std::snprintf(escape, sizeof(escape), "\\%03o", byte);
      out += escape;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

} // namespace vouch::codegen
