//===- diagnostics_test.cpp - the driver's diagnostic printer --------------===//
//
// Built with LeakSanitizer: loading a model, with and without errors, leaves
// nothing allocated once the context and the printer are gone (the printer
// owns the source manager; loadModel used to leak both it and its handler).
// And nothing is printed whole that could be megabytes: source lines, message
// lines, ops with bodies.
//
//===----------------------------------------------------------------------===//
#include "tools/Diagnostics.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/MLIRContext.h"
#include "tools/Pipeline.h"

namespace vouch::driver {
namespace {

std::string writeTemp(const std::string &name, const std::string &text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

const char kModel[] = "model m {\n"
                      "  input x : f32[batch, 2]\n"
                      "  target y : f32[batch, 1]\n"
                      "  param w : f32[1, 2] = zeros\n"
                      "  pred = linear(x, w)\n"
                      "  output pred\n"
                      "  loss = mse_loss(pred, y)\n"
                      "  train sgd(lr = 0.1) batch 1\n"
                      "}\n";

/// Loads `text` as a model file; what the diagnostics printed.
std::string load(const std::string &name, const std::string &text, bool &ok) {
  std::string printed;
  llvm::raw_string_ostream os(printed);
  mlir::MLIRContext context;
  DriverDiagnostics diagnostics(context, os);
  LoadOptions options;
  options.autodiff = true;
  ok = static_cast<bool>(loadModel(writeTemp(name, text), diagnostics, options));
  return printed;
}

TEST(DriverDiagnosticsTest, LoadsWithoutLeaking) {
  bool ok = false;
  EXPECT_EQ(load("ok.vouch", kModel, ok), "");
  EXPECT_TRUE(ok);
  std::string printed = load("bad.vouch", "model m {\n  y = zz\n}\n", ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(printed.find("bad.vouch:2:7: error: unknown name 'zz'"), std::string::npos)
      << printed;
}

// Issue 14: a BOM or CR-only line ends gave confusing errors. Both are read as
// an editor shows them: the same model loads, and an error's line and column
// are the ones the editor shows.
TEST(DriverDiagnosticsTest, ByteOrderMarkAndLineEndings) {
  bool ok = false;
  std::string crlf, cr;
  for (char c : std::string(kModel)) {
    crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    cr += c == '\n' ? '\r' : c;
  }
  for (const std::string &text : {"\xEF\xBB\xBF" + std::string(kModel), crlf, cr}) {
    EXPECT_EQ(load("endings.vouch", text, ok), "");
    EXPECT_TRUE(ok);
  }
  std::string printed = load("cr_error.vouch", "\xEF\xBB\xBFmodel m {\r  y = zz\r}\r", ok);
  EXPECT_NE(printed.find("cr_error.vouch:2:7: error: unknown name 'zz'\n  y = zz\n      ^"),
            std::string::npos)
      << printed;
}

// Issue 14: a diagnostic re-printed a megabyte line whole.
TEST(DriverDiagnosticsTest, LongLinesAreCutAroundTheColumn) {
  const std::string longLine = "  y = " + std::string(1000000, ' ') + "zz\n";
  bool ok = false;
  std::string printed = load("long.vouch", "model m {\n" + longLine + "}\n", ok);
  EXPECT_LT(printed.size(), 1000u) << printed.size();
  EXPECT_NE(printed.find("long.vouch:2:1000007: error: unknown name 'zz'\n..."),
            std::string::npos)
      << printed;
  // The caret stands under the name.
  size_t excerpt = printed.find("\n...") + 1;
  size_t caretLine = printed.find('\n', excerpt) + 1;
  size_t zz = printed.find("zz", excerpt) - excerpt;
  EXPECT_EQ(printed.find('^', caretLine) - caretLine, zz) << printed;
}

TEST(DriverDiagnosticsTest, ExcerptsAndMessagesAreBounded) {
  unsigned caret = 0;
  EXPECT_EQ(excerptLine("short line", 7, caret), "short line");
  EXPECT_EQ(caret, 6u);
  // A long line of two-byte characters: cut on character boundaries.
  std::string line;
  for (int i = 0; i < 300; ++i)
    line += "\xC3\xA9"; // é
  std::string cut = excerptLine(line, 301, caret);
  EXPECT_EQ(cut.substr(0, 3), "...");
  EXPECT_EQ(cut.substr(cut.size() - 3), "...");
  EXPECT_EQ(cut.size(), 3 + 200 + 3u);
  EXPECT_EQ(caret, 3 + 50u); // 100 bytes, 50 characters, before the column
  // At the line's start: nothing cut before it.
  EXPECT_EQ(excerptLine(std::string(500, 'a'), 1, caret), std::string(200, 'a') + "...");
  EXPECT_EQ(caret, 0u);

  EXPECT_EQ(shortenMessage("one\ntwo"), "one\ntwo");
  EXPECT_EQ(shortenMessage(std::string(500, 'm')), std::string(400, 'm') + "... (500 bytes)");
  std::string op = "see current operation: \n\"vouch.model\"() ({\n";
  for (int i = 0; i < 30; ++i)
    op += "  %" + std::to_string(i) + " = ...\n";
  op += "})";
  EXPECT_EQ(shortenMessage(op),
            "see current operation: \"vouch.model\"() ({ ... (31 more lines not shown)");
}

} // namespace
} // namespace vouch::driver
