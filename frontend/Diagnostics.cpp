//===- Diagnostics.cpp - source locations and error reporting -------------===//
#include "frontend/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/SourceMgr.h"

using namespace vouch::frontend;

SourceDiagnostics::SourceDiagnostics(llvm::SourceMgr &sourceMgr,
                                     mlir::MLIRContext &context)
    : sourceMgr(sourceMgr), context(context),
      bufferId(sourceMgr.getMainFileID()) {
  const llvm::MemoryBuffer *memory = sourceMgr.getMemoryBuffer(bufferId);
  buffer = memory->getBuffer();
  fileName = mlir::StringAttr::get(&context, memory->getBufferIdentifier());
}

mlir::Location SourceDiagnostics::getLocation(llvm::SMLoc loc) const {
  // A location outside the buffer would be a frontend bug; fall back to the
  // start of the file rather than let SourceMgr assert.
  const char *pointer = loc.getPointer();
  if (!pointer || pointer < buffer.begin() || pointer > buffer.end())
    pointer = buffer.begin();
  auto [line, column] = sourceMgr.getLineAndColumn(
      llvm::SMLoc::getFromPointer(pointer), bufferId);
  return mlir::FileLineColLoc::get(fileName, line, column);
}

mlir::InFlightDiagnostic SourceDiagnostics::emitError(llvm::SMLoc loc) {
  ++errorCount;
  return mlir::emitError(getLocation(loc));
}

std::optional<llvm::StringRef>
vouch::frontend::findClosestName(llvm::StringRef name,
                                 llvm::ArrayRef<llvm::StringRef> candidates) {
  unsigned limit = std::max<unsigned>(1, name.size() / 3);
  std::optional<llvm::StringRef> best;
  unsigned bestDistance = limit + 1;
  for (llvm::StringRef candidate : candidates) {
    if (candidate == name)
      continue;
    unsigned distance = name.edit_distance(candidate, /*AllowReplacements=*/true,
                                           /*MaxEditDistance=*/limit + 1);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = candidate;
    }
  }
  return best;
}

std::string vouch::frontend::joinNames(llvm::ArrayRef<llvm::StringRef> names) {
  std::string text;
  llvm::interleave(
      names, [&](llvm::StringRef name) { text += name.str(); },
      [&] { text += ", "; });
  return text;
}
