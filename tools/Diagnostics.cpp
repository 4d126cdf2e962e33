//===- Diagnostics.cpp - how the driver prints diagnostics ------*- C++ -*-===//
#include "tools/Diagnostics.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

using namespace mlir;

namespace vouch::driver {
namespace {

bool isContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

/// `text` cut to at most `bytes` bytes on a UTF-8 character boundary.
llvm::StringRef cutAt(llvm::StringRef text, size_t bytes) {
  if (text.size() <= bytes)
    return text;
  while (bytes > 0 && isContinuationByte(text[bytes]))
    --bytes;
  return text.take_front(bytes);
}

/// UTF-8 characters in `text`.
unsigned characters(llvm::StringRef text) {
  unsigned n = 0;
  for (char c : text)
    n += !isContinuationByte(c);
  return n;
}

} // namespace

std::string shortenMessage(llvm::StringRef message) {
  llvm::SmallVector<llvm::StringRef> lines;
  message.split(lines, '\n');
  std::string out;
  auto cutLine = [](llvm::StringRef line) {
    if (line.size() <= DriverDiagnostics::kMaxMessageLineBytes)
      return line.str();
    return cutAt(line, DriverDiagnostics::kMaxMessageLineBytes).str() + "... (" +
           std::to_string(line.size()) + " bytes)";
  };
  if (lines.size() > DriverDiagnostics::kMaxMessageLines) {
    // MLIR's note on an op with a body is "see current operation: " and the op
    // on the next lines: its first line (the op's name and attributes) stays.
    const bool lead = lines[0].ends_with(": ");
    return cutLine(lines[0]) + (lead ? cutLine(lines[1]) : "") + " ... (" +
           std::to_string(lines.size() - (lead ? 2 : 1)) + " more lines not shown)";
  }
  for (size_t i = 0; i < lines.size(); ++i)
    out += (i ? "\n" : "") + cutLine(lines[i]);
  return out;
}

std::string excerptLine(llvm::StringRef line, unsigned column, unsigned &caret) {
  const size_t at = std::min<size_t>(column > 0 ? column - 1 : 0, line.size());
  const size_t width = DriverDiagnostics::kMaxExcerptBytes;
  size_t begin = 0, end = line.size();
  if (line.size() > width) {
    begin = at > width / 2 ? at - width / 2 : 0;
    end = std::min(line.size(), begin + width);
    begin = end - begin < width ? end - width : begin;
    while (begin < at && isContinuationByte(line[begin]))
      ++begin;
    while (end < line.size() && end > at && isContinuationByte(line[end]))
      --end;
  }
  std::string out = begin > 0 ? "..." : "";
  caret = characters(line.slice(begin, at)) + (begin > 0 ? 3 : 0);
  for (char c : line.slice(begin, end)) // one column per character, as the caret counts
    out += c == '\t' ? ' ' : (static_cast<unsigned char>(c) < 0x20 ? '?' : c);
  if (end < line.size())
    out += "...";
  return out;
}

DriverDiagnostics::DriverDiagnostics(MLIRContext &context, llvm::raw_ostream &os)
    : context_(context), os_(os),
      printer_(std::make_unique<SourceMgrDiagnosticHandler>(sourceMgr_, &context, os)) {
  handler_ = context.getDiagEngine().registerHandler(
      [this](Diagnostic &d) { return handle(d); });
}

DriverDiagnostics::~DriverDiagnostics() {
  context_.getDiagEngine().eraseHandler(handler_);
}

void DriverDiagnostics::addSource(llvm::StringRef text, llvm::StringRef path) {
  if (text.starts_with("\xEF\xBB\xBF"))
    text = text.drop_front(3);
  std::string normalized;
  normalized.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\r') {
      normalized += text[i];
      continue;
    }
    normalized += '\n';
    if (i + 1 < text.size() && text[i + 1] == '\n')
      ++i; // CRLF
  }
  sourceMgr_.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(normalized, path), llvm::SMLoc());
}

void DriverDiagnostics::limitErrors(int64_t limit, std::string path) {
  limit_ = limit;
  errors_ = 0;
  limitedPath_ = std::move(path);
}

LogicalResult DriverDiagnostics::handle(Diagnostic &d) {
  if (d.getSeverity() == DiagnosticSeverity::Error && limit_ > 0 &&
      ++errors_ > limit_) {
    if (errors_ == limit_ + 1)
      os_ << "error: too many errors (" << limit_ << "); the rest of '"
          << limitedPath_ << "' is not reported (--error-limit N; 0 for no limit)\n";
    return success();
  }
  print(d.getLocation(), d.str(), d.getSeverity());
  for (Diagnostic &note : d.getNotes())
    print(note.getLocation(), note.str(), note.getSeverity());
  return success();
}

void DriverDiagnostics::print(Location loc, llvm::StringRef message,
                              DiagnosticSeverity severity) {
  const std::string text = shortenMessage(message);
  // The source line of the location, when it is in our buffer.
  llvm::StringRef line;
  FileLineColLoc fileLoc = loc->findInstanceOf<FileLineColLoc>();
  if (fileLoc) {
    for (unsigned id = 1; id <= sourceMgr_.getNumBuffers(); ++id) {
      const llvm::MemoryBuffer *buffer = sourceMgr_.getMemoryBuffer(id);
      if (buffer->getBufferIdentifier() != fileLoc.getFilename().getValue())
        continue;
      llvm::SMLoc start =
          sourceMgr_.FindLocForLineAndColumn(id, fileLoc.getLine(), 1);
      if (start.isValid()) {
        llvm::StringRef rest(start.getPointer(),
                             buffer->getBufferEnd() - start.getPointer());
        line = rest.take_until([](char c) { return c == '\n'; });
      }
      break;
    }
  }
  if (line.size() <= kMaxExcerptBytes) {
    printer_->emitDiagnostic(loc, text, severity, /*displaySourceLine=*/true);
    return;
  }
  printer_->emitDiagnostic(loc, text, severity, /*displaySourceLine=*/false);
  unsigned caret = 0;
  os_ << excerptLine(line, fileLoc.getColumn(), caret) << "\n"
      << std::string(caret, ' ') << "^\n";
}

} // namespace vouch::driver
