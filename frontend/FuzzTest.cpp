//===- FuzzTest.cpp - the frontend never crashes, whatever it is fed ------===//
//
// Thousands of seeded mutations of every example and test description: byte
// deletions, insertions and swaps, and token-level edits (deleting,
// duplicating, swapping tokens, or splicing in keywords, builtins, odd
// numbers and punctuation). Every import must end in either a module that
// verifies and no error, or no module and at least one error. A crash, an
// assertion or a hang fails the test by itself. Seeds are fixed, so a
// failure names the case that reproduces it.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "frontend/TestSupport.h"
#include "gtest/gtest.h"
#include "mlir/IR/Verifier.h"

using namespace vouch::frontend::testing;

namespace {

/// 10,000 per file; VOUCH_FUZZ_MUTANTS_PER_FILE sets another count (tools/test.sh
/// asks for 1,000 under --config=asan, where an import is ten times slower;
/// tests/fuzz's libFuzzer target searches further).
int mutantsPerFile() {
  const char *env = std::getenv("VOUCH_FUZZ_MUTANTS_PER_FILE");
  return env && std::atoi(env) > 0 ? std::atoi(env) : 10000;
}

/// Words and symbols worth splicing in: every keyword and builtin, numbers
/// at the edges of what the language accepts, and all the punctuation.
const std::vector<std::string> &dictionary() {
  static const std::vector<std::string> words = {
      "model", "config", "block", "input", "target", "param", "output",
      "return", "repeat", "train", "data", "batch", "steps", "log_every",
      "loss", "true", "false", "linear", "matmul", "relu", "add", "sub",
      "mul", "scale", "reshape", "permute", "broadcast", "reduce_sum",
      "reduce_mean", "mse_loss", "zeros", "ones", "uniform", "normal",
      "xavier_uniform", "kaiming_uniform", "sgd", "adam", "adamw",
      "regression_grid", "csv", "npy", "f32", "f64", "i32", "i1", "x", "h",
      "w1", "residual", "0", "1", "-1", "2.5", "1e999", "1e-320",
      "99999999999999999999", "9223372036854775807", "4294967296", "100000",
      "(", ")", "[", "]", "{", "}", ",", ":", "=", "+", "-", "*", "/", ";",
      "\n", "//", "\"", "\"x.csv\"", " ", "transpose_rhs", "axes", "lr"};
  return words;
}

/// Splits text into words ([A-Za-z0-9_.]+), whitespace runs and single
/// other characters: tokens enough for mutation, independent of the lexer.
std::vector<std::string> tokenize(const std::string &text) {
  auto isWord = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  };
  auto isSpace = [](char c) { return c == ' ' || c == '\n' || c == '\t'; };
  std::vector<std::string> tokens;
  for (size_t i = 0; i < text.size();) {
    size_t j = i + 1;
    if (isWord(text[i]))
      while (j < text.size() && isWord(text[j]))
        ++j;
    else if (isSpace(text[i]))
      while (j < text.size() && isSpace(text[j]))
        ++j;
    tokens.push_back(text.substr(i, j - i));
    i = j;
  }
  return tokens;
}

std::string join(const std::vector<std::string> &tokens) {
  std::string text;
  for (const std::string &token : tokens)
    text += token;
  return text;
}

class Mutator {
public:
  explicit Mutator(uint64_t seed) : rng(seed) {}

  std::string mutate(std::string text) {
    int edits = 1 + pick(4);
    for (int i = 0; i < edits; ++i)
      text = pick(2) ? mutateBytes(text) : mutateTokens(text);
    return text;
  }

private:
  size_t pick(size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng);
  }

  std::string mutateBytes(std::string text) {
    static const std::string alphabet =
        "()[]{},:=+-*/;\"\n 0123456789.e_abxyzHw";
    size_t at = pick(text.size() + 1);
    switch (pick(3)) {
    case 0: // delete a few bytes
      if (!text.empty())
        text.erase(std::min(at, text.size() - 1), 1 + pick(3));
      break;
    case 1: // insert a byte: mostly meaningful ones, sometimes any byte
      text.insert(at, 1,
                  pick(4) ? alphabet[pick(alphabet.size())]
                          : static_cast<char>(pick(256)));
      break;
    default: // swap two bytes
      if (text.size() > 1)
        std::swap(text[pick(text.size())], text[pick(text.size())]);
      break;
    }
    return text;
  }

  std::string mutateTokens(const std::string &text) {
    std::vector<std::string> tokens = tokenize(text);
    const std::vector<std::string> &words = dictionary();
    if (tokens.empty())
      return words[pick(words.size())];
    size_t at = pick(tokens.size());
    switch (pick(5)) {
    case 0:
      tokens.erase(tokens.begin() + at);
      break;
    case 1:
      tokens.insert(tokens.begin() + at, tokens[pick(tokens.size())]);
      break;
    case 2:
      std::swap(tokens[at], tokens[pick(tokens.size())]);
      break;
    case 3:
      tokens[at] = words[pick(words.size())];
      break;
    default:
      tokens.insert(tokens.begin() + at, words[pick(words.size())]);
      break;
    }
    return join(tokens);
  }

  std::mt19937_64 rng;
};

std::vector<std::string> seedFiles() {
  std::vector<std::string> files;
  for (const char *dir : {"examples", "frontend/testdata"}) {
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator(dir, ec))
      if (entry.path().extension() == ".vouch")
        files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(FuzzTest, SeedsImportCleanly) {
  std::vector<std::string> files = seedFiles();
  ASSERT_GE(files.size(), 3u) << "examples or testdata missing from runfiles";
  for (const std::string &file : files) {
    mlir::MLIRContext context;
    ImportResult result = importSource(context, readRunfile(file), file);
    EXPECT_TRUE(result.module) << file << "\n" << result.dump();
  }
}

TEST(FuzzTest, MutantsEndInAModuleOrAnError) {
  std::vector<std::string> files = seedFiles();
  ASSERT_FALSE(files.empty());
  int modules = 0, rejected = 0;
  for (size_t f = 0; f < files.size(); ++f) {
    std::string original = readRunfile(files[f]);
    // One context per seed file: attributes and types accumulate, but
    // context creation would otherwise dominate the run time.
    mlir::MLIRContext context;
    const int mutants = mutantsPerFile();
    for (int i = 0; i < mutants; ++i) {
      uint64_t seed = f * 1000003u + i;
      std::string mutant = Mutator(seed).mutate(original);
      ImportResult result = importSource(context, mutant, "fuzz.vouch");
      bool ok;
      if (result.module) {
        ok = result.errors().empty() && mlir::succeeded(mlir::verify(*result.module));
        ++modules;
      } else {
        ok = !result.errors().empty();
        ++rejected;
      }
      if (!ok) {
        ADD_FAILURE() << files[f] << ", seed " << seed << ": "
                      << (result.module ? "a module with errors or failing "
                                          "verification"
                                        : "no module and no error")
                      << "\n--- mutant ---\n"
                      << mutant << "\n--- diagnostics ---\n"
                      << result.dump();
        return;
      }
    }
  }
  // Both outcomes must be exercised, or the mutations are too weak or too
  // strong to test anything.
  EXPECT_GT(modules, 100);
  EXPECT_GT(rejected, 1000);
  std::printf("%d mutants imported, %d rejected with errors\n", modules,
              rejected);
}

} // namespace
