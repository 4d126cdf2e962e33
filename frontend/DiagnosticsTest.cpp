//===- DiagnosticsTest.cpp - what the frontend says about broken input ----===//
//
// Each test imports a broken description and checks every error, word for
// word, at its line:column, and the notes where they matter. Importing must
// fail (no module) whenever there is an error.
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include "frontend/Parser.h"
#include "frontend/TestSupport.h"
#include "gtest/gtest.h"

using namespace vouch::frontend;
using namespace vouch::frontend::testing;

namespace {

using Errors = std::vector<std::string>;

class DiagnosticsTest : public ::testing::Test {
protected:
  /// Imports `source`, expects it to fail, and returns its errors.
  Errors errorsOf(const std::string &source, const ImportOptions &options = {}) {
    result = importSource(context, source, "test.vouch", options);
    EXPECT_FALSE(result.module) << "imported despite errors";
    EXPECT_FALSE(result.errors().empty()) << "failed without an error";
    return result.errors();
  }

  /// The notes of the index-th diagnostic, as "line:col: note: message".
  std::vector<std::string> notesOf(size_t index) {
    std::vector<std::string> notes;
    if (index < result.diagnostics.size())
      for (const CapturedDiagnostic &note : result.diagnostics[index].notes)
        notes.push_back(note.str());
    return notes;
  }

  mlir::MLIRContext context;
  ImportResult result;
};

//===----------------------------------------------------------------------===//
// Syntax
//===----------------------------------------------------------------------===//

TEST_F(DiagnosticsTest, SyntaxErrorsSayWhatWasExpectedAndRecover) {
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[batch, 2]
  param w : f32[8, 2] = xavier_uniform
  h = relu(linear(x, w)
  g = x +
  k = 3 4
  output h, g, k
  loss = reduce_sum(relu(x)
  train adam(lr = 0.1)
})"),
            (Errors{
                "4:24: error: expected ',' or ')' after an argument of "
                "'relu', found end of line",
                "5:10: error: expected an expression, found end of line",
                "6:9: error: expected a new line or ';' after the statement, "
                "found number 4",
                "8:28: error: expected ',' or ')' after an argument of "
                "'reduce_sum', found end of line",
            }));
  // The broken statements still define h, g, k and the loss: no "unknown
  // name" or "no loss" follows from them.
}

TEST_F(DiagnosticsTest, StatementsNeedTheirParts) {
  EXPECT_EQ(errorsOf(R"(model m {
  input : f32[2]
  input x f32[2]
  param w : f32[2]
  param v : f32 = zeros
  data = 3
  relu(x)
  h relu(x)
  3 = x
  repeat { }
})"),
            (Errors{
                "2:9: error: expected a name after 'input', found ':'",
                "3:11: error: expected ':' and a type after input 'x', found "
                "'f32'",
                "4:19: error: expected '=' and an initialiser after the type "
                "of param 'w', found end of line",
                "5:17: error: expected '[' and the dimensions after 'f32', "
                "found '='",
                "6:3: error: 'data' is a reserved word and cannot name a value",
                "7:3: error: the result of 'relu(…)' must be given a name: "
                "NAME = relu(…)",
                "8:5: error: expected '=' after 'h', found 'relu'",
                "9:3: error: expected a statement, found number 3",
                "10:10: error: expected an expression, found '{'",
            }));
}

TEST_F(DiagnosticsTest, UnclosedBodyPointsAtItsBrace) {
  EXPECT_EQ(errorsOf("model m {\n  input x : f32[2]\n"),
            (Errors{"2:19: error: expected '}' to close the body of model "
                    "'m', found end of file"}));
  EXPECT_EQ(notesOf(0), (std::vector<std::string>{"1:9: note: '{' opened here"}));
}

TEST_F(DiagnosticsTest, LexicalErrors) {
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[2]
  a = x @ x
  b = "unterminated
  c = 2x
  d = x * 1e999
  e = 1.
})"),
            (Errors{
                "3:9: error: unexpected character '@'",
                "4:7: error: unterminated string (strings end on the line "
                "they start)",
                "5:7: error: malformed number '2x'",
                "6:11: error: number '1e999' is out of range for f64",
                "7:9: error: expected digits after '.' in a number",
            }));
}

TEST_F(DiagnosticsTest, ControlAndNonAsciiBytes) {
  EXPECT_EQ(errorsOf(std::string("model m {\n  x\x01 = 1\n  y = \xc3\xa9\n}\n")),
            (Errors{
                "2:4: error: unexpected character byte 0x01",
                "3:7: error: unexpected non-ASCII character; names and "
                "operators are ASCII",
            }));
}

TEST_F(DiagnosticsTest, NestingIsBounded) {
  std::string deep = "model m {\n  x = " + std::string(5000, '(') + "1" +
                     std::string(5000, ')') + "\n}\n";
  EXPECT_EQ(errorsOf(deep),
            (Errors{"2:106: error: nesting is too deep (more than 100 levels "
                    "of brackets, unary minus and bodies)"}));
  std::string minus = "model m {\n  x = " + std::string(5000, '-') + "1\n}\n";
  EXPECT_EQ(errorsOf(minus).size(), 1u);
  std::string chain = "model m {\n  input x : f32[2]\n  y = x";
  for (int i = 0; i < 5000; ++i)
    chain += " + x";
  EXPECT_EQ(errorsOf(chain + "\n}\n"),
            (Errors{"3:805: error: expression is too deeply nested (more than "
                    "200 levels)"}));
  std::string bodies = "model m {\n";
  for (int i = 0; i < 300; ++i)
    bodies += "repeat 1 {\n";
  EXPECT_EQ(errorsOf(bodies),
            (Errors{"101:8: error: nesting is too deep (more than 100 levels "
                    "of brackets, unary minus and bodies)",
                    "301:11: error: expected '}' to close the body of "
                    "'repeat', found end of file"}));
}

TEST_F(DiagnosticsTest, FileStructure) {
  EXPECT_EQ(errorsOf(""),
            (Errors{"1:1: error: expected a model: a description holds one "
                    "'model NAME { … }'"}));
  EXPECT_EQ(errorsOf(R"(input x : f32[2]
h = 3
model a { }
model b { }
}
return h
param p : f32[2] = zeros
model c { model d { } })"),
            (Errors{
                "5:1: error: unmatched '}'",
                "1:1: error: 'input' belongs in the model body, not at file "
                "level",
                "2:1: error: definitions belong in the model body or a block; "
                "a constant at file level is a 'config'",
                "4:7: error: a description holds one model; 'b' is a second "
                "one",
                "6:1: error: 'return' is only allowed as the last statement "
                "of a block body",
                "7:1: error: 'param' belongs in the model body or a block, not "
                "at file level",
                "8:7: error: a description holds one model; 'c' is a second "
                "one",
            }));
  EXPECT_EQ(errorsOf("model a {\n  model b { }\n}\n"),
            (Errors{"2:3: error: models cannot be nested"}));
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

TEST_F(DiagnosticsTest, UnknownNamesSuggestCloseOnes) {
  // The builtins, in the op table's order (BuiltinsTest checks the list
  // against the table); a few pinned here so the message is not only
  // compared with the list it is made from.
  std::string builtins;
  for (llvm::StringRef name : builtinFunctionNames())
    builtins += (builtins.empty() ? "" : ", ") + name.str();
  EXPECT_EQ(builtins.rfind("linear, matmul, relu, ", 0), 0u) << builtins;
  EXPECT_NE(builtins.find(", mse_loss"), std::string::npos) << builtins;
  EXPECT_EQ(errorsOf(R"(config HIDDEN = 8
model m {
  input x : f32[batch, 2]
  param w1 : f32[HIDDN, 2] = xavier_uniform
  param w2 : f32[8, 2] = xavier_uniform
  h = relu(linear(x, w3))
  g = rlu(x)
  k = zz(x)
  q = residual
  v = relu
  output hh
})"),
            (Errors{
                "4:18: error: unknown name 'HIDDN'; did you mean 'HIDDEN'?",
                "6:22: error: unknown name 'w3'; did you mean 'w1'?",
                "7:7: error: unknown function 'rlu'; did you mean 'relu'?",
                "8:7: error: unknown function 'zz' (builtins: " + builtins +
                    ")",
                "9:7: error: unknown name 'residual'",
                "10:7: error: 'relu' is a builtin function; call it with "
                "arguments: relu(…)",
                "11:10: error: unknown name 'hh'; did you mean 'h'?",
            }));
}

TEST_F(DiagnosticsTest, NamesOfTheWrongKind) {
  EXPECT_EQ(errorsOf(R"(config H = 2
block b(x : f32[H]) { return x }
model m {
  input x : f32[H]
  y = b
  z = H(x)
  w = x(1)
  u = zeros(x)
  v = xavier_uniform
  output H
})"),
            (Errors{
                "5:7: error: 'b' is a block; call it with arguments: b(…)",
                "6:7: error: 'H' is a config, not a function",
                "7:7: error: 'x' is a tensor, not a function",
                "8:7: error: 'zeros' is an initialiser; it is used as 'param "
                "NAME : TYPE = zeros'",
                "9:7: error: unknown name 'xavier_uniform'",
                "10:10: error: only tensors can be outputs; 'H' is a config",
            }));
}

TEST_F(DiagnosticsTest, DefinitionsAreMadeOnce) {
  EXPECT_EQ(errorsOf(R"(config H = 2
model m {
  input x : f32[H]
  param w : f32[H] = zeros
  h = x * w
  h = h + 1
  w = h
  x = h
  H = h
  param h : f32[2] = zeros
  batch = x
  output h, h
})"),
            (Errors{
                "6:3: error: redefinition of 'h'",
                "7:3: error: cannot assign to param 'w': params, inputs and "
                "targets are never re-assigned",
                "8:3: error: cannot assign to input 'x': params, inputs and "
                "targets are never re-assigned",
                "9:3: error: cannot assign to config 'H': configs are "
                "constants",
                "10:9: error: redefinition of 'h'",
                "11:3: error: 'batch' is reserved: it names the batch size",
                "12:13: error: 'h' is already an output",
            }));
  EXPECT_EQ(notesOf(0),
            (std::vector<std::string>{"5:3: note: previous definition is here"}));
  EXPECT_EQ(notesOf(1), (std::vector<std::string>{"4:9: note: declared here"}));
  EXPECT_EQ(notesOf(3), (std::vector<std::string>{"1:8: note: defined here"}));
  EXPECT_EQ(notesOf(6), (std::vector<std::string>{"12:10: note: first marked here"}));
}

TEST_F(DiagnosticsTest, BlockParametersCannotHideConstants) {
  EXPECT_EQ(errorsOf(R"(block f(H : f32[2], batch : f32[2]) { return H }
model m {
  input x : f32[2]
  y = f(x, x)
}
config H = 2
)"),
            (Errors{
                "1:9: error: cannot redeclare config 'H': configs are "
                "constants",
                "1:21: error: 'batch' is reserved: it names the batch size",
            }));
}

TEST_F(DiagnosticsTest, RedefinedConfigsAndBlocks) {
  EXPECT_EQ(errorsOf(R"(config H = 2
block f(x : f32[2]) { return x }
model m {
  config H = 3
  block f(y : f32[2]) { return y }
  block relu(x : f32[2]) { return x }
  block g(x : f32[2], x : f32[2]) { return x }
})"),
            (Errors{
                "4:10: error: redefinition of config 'H'",
                "5:9: error: redefinition of block 'f'",
                "6:9: error: block 'relu' has the name of a builtin function",
                "7:23: error: block 'g' has two parameters named 'x'",
            }));
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

TEST_F(DiagnosticsTest, ArityAndKeywords) {
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[2, 2]
  a = relu(x, x)
  b = mse_loss(x)
  c = matmul(x, x, transpose_b = true)
  d = linear(x, weight = x, weight = x)
  e = linear(input = x, x)
  f = matmul(lhs = x)
  g = linear(x, x, x, x)
  h = matmul(x, x, transpose_lhs = 1)
})"),
            (Errors{
                "3:15: error: 'relu' takes 1 argument, got 2: relu(x)",
                "4:7: error: 'mse_loss' takes 2 arguments, got 1: "
                "mse_loss(prediction, target)",
                "5:20: error: 'matmul' has no argument 'transpose_b'; did you "
                "mean 'transpose_lhs'? (known: lhs, rhs, transpose_lhs, "
                "transpose_rhs)",
                "6:29: error: argument 'weight' of 'linear' is given twice",
                "7:25: error: positional arguments must come before keyword "
                "arguments",
                "8:7: error: 'matmul' is missing argument 'rhs': matmul(lhs, "
                "rhs, transpose_lhs = false, transpose_rhs = false)",
                "9:23: error: 'linear' takes 2 to 3 arguments, got 4: "
                "linear(input, weight, bias = none)",
                "10:36: error: 'matmul' expects true or false for "
                "'transpose_lhs', got the number 1",
            }));
  EXPECT_EQ(notesOf(3), (std::vector<std::string>{"6:17: note: first given here"}));
}

// A pointwise builtin's numbers out of range: every one is reported at its
// call, under the builtin's name (the op's verifier says what is wrong).
TEST_F(DiagnosticsTest, NumberParametersOutOfRange) {
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[2, 3]
  a = clamp(x, 1, -1)
  b = softplus(x, beta = 0)
  c = safe_log(x, eps = -1)
  d = clamp(x, -1, 1) + softplus(x) + safe_log(x) + pow(x, 2)
})"),
            (Errors{
                "3:7: error: 'clamp': min (1) must not exceed max (-1)",
                "4:7: error: 'softplus': beta must be a finite non-zero number, got 0",
                "5:7: error: 'safe_log': eps must be a finite positive number, got -1",
            }));
}

TEST_F(DiagnosticsTest, ArgumentKinds) {
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[2, 3]
  input i : i32[2, 3]
  input d : f64[2, 3]
  a = relu(2)
  b = relu(i)
  c = x + d
  e = scale(x, x)
  f = reshape(x, 6)
  g = reshape(x, [2.5, 2])
  h = x + [1, 2]
  k = x / d
  l = 2 / i
  n = x / 0
  o = [1, x]
  p = -"s"
})"),
            (Errors{
                "5:12: error: 'relu' expects a tensor for 'x', got the number 2",
                "6:12: error: 'relu' needs an f32 or f64 tensor for 'x', got "
                "'tensor<2x3xi32>'",
                "7:9: error: '+': element types differ: 'tensor<2x3xf32>' and "
                "'tensor<2x3xf64>'",
                "8:16: error: 'scale' expects a number for 'factor', got "
                "'tensor<2x3xf32>'",
                "9:18: error: 'reshape' expects a list such as [1, 2] for "
                "'shape', got the number 6",
                "10:19: error: an entry of 'shape' of 'reshape' must be an "
                "integer, got 2.5",
                "11:11: error: '+' needs numbers or tensors, got a list",
                "12:9: error: '/': element types differ: 'tensor<2x3xf32>' and "
                "'tensor<2x3xf64>'",
                "13:11: error: '/' needs an f32 or f64 tensor for its right "
                "operand, got 'tensor<2x3xi32>'",
                "14:11: error: cannot divide by 0",
                "15:11: error: list elements must be numbers, got "
                "'tensor<2x3xf32>'",
                "16:8: error: unary '-' needs a number or a tensor, got a string",
            }));
}

// gelu's mode, slice's bounds and step, concat's list and shapes: each error
// names the builtin, at the argument at fault where there is one.
TEST_F(DiagnosticsTest, GeluSliceAndConcatArguments) {
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[2, 8]
  input y : f32[3, 4]
  a = gelu(x, approximate = "fast")
  b = gelu(x, approximate = 1)
  c = slice(x, 1, 0, 8, step = 0)
  d = slice(x, 2, 0, 1)
  e = slice(x, 1, 5, 2)
  f = slice(x, 1, 0.5, 2)
  g = concat([x, y], axis = 1)
  h = concat(x, 0)
  i = concat([x, 1], 0)
  j = concat([x, x], 2)
  k = concat([], 0)
  o = [x]
})"),
            (Errors{
                "4:29: error: 'gelu': 'approximate' must be \"tanh\" or "
                "\"none\", got \"fast\"",
                "5:29: error: 'gelu' expects \"tanh\" or \"none\" for "
                "'approximate', got the number 1",
                "6:32: error: 'slice': step must be at least 1, got 0",
                "7:16: error: 'slice': axis 2 is out of range for "
                "'tensor<2x8xf32>' (rank 2)",
                "8:7: error: 'slice': 5:2 selects no element of axis 1 (extent "
                "8) of 'tensor<2x8xf32>' (start 5, end 2 after Python's rules)",
                "9:19: error: 'start' of 'slice' must be an integer, got 0.5",
                "10:7: error: 'concat': shapes must agree except on axis 1, got "
                "'tensor<2x8xf32>', 'tensor<3x4xf32>'",
                "11:14: error: 'concat' expects a list of tensors such as [a, b] "
                "for 'tensors', got 'tensor<2x8xf32>'",
                "12:18: error: list elements must all be tensors (as in "
                "concat([a, b], axis)), got the number 1",
                "13:22: error: 'concat': axis 2 is out of range for "
                "'tensor<2x8xf32>' (rank 2)",
                "14:14: error: 'concat' needs at least one tensor",
                "15:7: error: 'o' must be a tensor, got a list of tensors; "
                "tensors are joined with concat([…], axis)",
            }));
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

TEST_F(DiagnosticsTest, ShapeErrorsNameTheOpAndTheShapes) {
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[batch, 3]
  param w : f32[8, 2] = xavier_uniform
  param b : f32[4] = zeros
  a = linear(x, w)
  c = linear(x, b)
  d = x + b
  e = matmul(x, w)
  f = matmul(x, b)
  g = mse_loss(x, b)
  h = reshape(x, [4, 2])
  i = reshape(x, [-1, 2])
  j = permute(x, [0, 0])
  k = broadcast(x, [3])
  l = broadcast(x, [2, 4])
  n = reduce_sum(x, axes = [0, -2])
  o = reduce_mean(x, 2)
})"),
            (Errors{
                "5:7: error: 'linear': input 'tensor<1x3xf32>' does not match "
                "weight 'tensor<8x2xf32>': the input's last axis must have "
                "extent 2 (the weight is [out, in])",
                "6:7: error: 'linear': the weight must be rank 2 [out, in], "
                "got 'tensor<4xf32>'",
                "7:9: error: '+': incompatible shapes 'tensor<1x3xf32>' and "
                "'tensor<4xf32>' (extents 3 and 4 at axis -1 are neither equal "
                "nor 1)",
                "8:7: error: 'matmul': cannot multiply 'tensor<1x3xf32>' by "
                "'tensor<8x2xf32>': contraction extents 3 and 8 differ",
                "9:7: error: 'matmul' multiplies matrices or batches of "
                "matrices (rank 2 or more), got 'tensor<1x3xf32>' and "
                "'tensor<4xf32>'",
                "10:7: error: 'mse_loss': prediction 'tensor<1x3xf32>' and "
                "target 'tensor<4xf32>' must have the same shape",
                "11:7: error: 'reshape': cannot reshape 'tensor<1x3xf32>' (3 "
                "elements) to [4, 2] (8 elements)",
                "12:7: error: 'reshape': cannot reshape 'tensor<1x3xf32>' (3 "
                "elements) to [-1, 2]: 3 is not a multiple of 2",
                "13:18: error: 'permute': [0, 0] is not a permutation of the "
                "axes of 'tensor<1x3xf32>'",
                "14:7: error: 'broadcast': cannot broadcast 'tensor<1x3xf32>' "
                "to [3]: the target has fewer axes",
                "15:7: error: 'broadcast': cannot broadcast 'tensor<1x3xf32>' "
                "to [2, 4]: input axis 1 has extent 3 but target axis 1 has 4",
                "16:28: error: 'reduce_sum': axis -2 is listed twice in [0, -2]",
                "17:22: error: 'reduce_mean': axis 2 is out of range for "
                "'tensor<1x3xf32>' (rank 2)",
            }));
}

TEST_F(DiagnosticsTest, DimensionsMustBeSensible) {
  EXPECT_EQ(errorsOf(R"(config BIG = 4294967296
model m {
  input a : f32[0]
  input b : f32[99999999999999999999]
  input c : f32[2.5]
  input d : f32[BIG, BIG]
  input e : f16[2]
  param f : i32[2] = zeros
  input g : f32[9223372036854775807 + 1]
  input h : f32[-3]
})"),
            (Errors{
                "3:17: error: a dimension of input 'a' must be at least 1, "
                "got 0",
                "4:17: error: a dimension of input 'b' does not fit in int64, "
                "got 1e+20 (the literal 99999999999999999999 rounds to 1e+20 "
                "in f64)",
                "5:17: error: a dimension of input 'c' must be an integer, got "
                "2.5",
                "6:13: error: input 'd' has more elements than int64 can "
                "count: [4294967296, 4294967296]",
                "7:13: error: unknown element type 'f16' for input 'e' "
                "(known: f32, f64, i32, i1)",
                "8:13: error: param 'f' must have element type f32 or f64, got "
                "i32",
                "9:37: error: a dimension of input 'g' does not fit in int64, "
                "got 9223372036854775808",
                "10:17: error: a dimension of input 'h' must be at least 1, "
                "got -3",
            }));
}

TEST_F(DiagnosticsTest, BroadcastResultsThatOverflowAreRefused) {
  EXPECT_EQ(errorsOf(R"(model m {
  input a : f32[4294967296, 1]
  input b : f32[1, 4294967296]
  c = a * b
})"),
            (Errors{"4:9: error: '*': the result [4294967296, 4294967296] "
                    "would have more elements than int64 can count"}));
}

//===----------------------------------------------------------------------===//
// Loss, clauses, initialisers
//===----------------------------------------------------------------------===//

TEST_F(DiagnosticsTest, LossMustExistAndBeAScalar) {
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[batch, 2]
  train adam(lr = 0.1)
})"),
            (Errors{"3:3: error: the model has a train clause but no loss; "
                    "define one with 'loss = …'"}));
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[batch, 2]
  loss = relu(x)
  loss = reduce_sum(x)
})"),
            (Errors{
                "3:10: error: the loss must be a scalar (a rank-0 f32 or f64 "
                "tensor), got 'tensor<1x2xf32>'; reduce it first, e.g. with "
                "reduce_mean(…) or mse_loss(…)",
                "4:3: error: redefinition of 'loss'",
            }));
}

TEST_F(DiagnosticsTest, Initialisers) {
  EXPECT_EQ(errorsOf(R"(model m {
  param a : f32[2, 2] = xavier
  param b : f32[2] = xavier_uniform
  param c : f32[2] = uniform(1, -1)
  param d : f32[2] = uniform(lo = 0)
  param e : f32[2] = normal(0, -1)
  param f : f32[2] = zeros(1)
  param g : f32[2] = uniform
})"),
            (Errors{
                "2:25: error: unknown initialiser 'xavier' (known: zeros, ones, "
                "uniform, normal, xavier_uniform, kaiming_uniform)",
                "3:22: error: 'xavier_uniform' needs a parameter of rank 2 or "
                "more (it reads fan-in and fan-out from its shape), got "
                "'tensor<2xf32>'",
                "4:22: error: 'uniform' needs lo < hi, got lo = 1, hi = -1",
                "5:22: error: 'uniform' is missing argument 'hi': uniform(lo, "
                "hi)",
                "6:32: error: 'normal' needs std >= 0, got -1",
                "7:28: error: 'zeros' takes no arguments, got 1: zeros()",
                "8:22: error: 'uniform' takes 2 arguments, got 0: uniform(lo, "
                "hi)",
            }));
}

TEST_F(DiagnosticsTest, TrainClause) {
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[2]
  loss = reduce_sum(x)
  train adan(lr = 0.1) epochs 3
})"),
            (Errors{
                "4:9: error: unknown optimizer 'adan'; did you mean 'adam'? "
                "(known: sgd, adam, adamw, rmsprop, adagrad)",
                "4:24: error: unknown train option 'epochs' (known: batch, "
                "steps, log_every, schedule, clip_grad_norm, shuffle, eval_every)",
            }));
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[2]
  loss = reduce_sum(x)
  train adam(lr = 0, momentum = 0.9, beta1 = 1) steps 0 steps 2 batch 2.5
  train sgd
})"),
            (Errors{
                "5:3: error: a model has one train clause",
                "4:22: error: 'adam' has no hyper-parameter 'momentum' (known: "
                "lr, beta1, beta2, eps, weight_decay)",
                "4:55: error: the train option 'steps' must be at least 1, got "
                "0",
                "4:57: error: train option 'steps' is given twice",
                "4:71: error: the train option 'batch' must be an integer, got "
                "2.5",
            }));
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[2]
  loss = reduce_sum(x)
  train sgd(lr = -1, momentum = 1)
})"),
            (Errors{
                "4:18: error: 'sgd': lr must be greater than 0, got -1",
                "4:33: error: 'sgd': momentum must be in [0, 1), got 1",
            }));
  // Issue 14: a literal with more digits than f64 holds said "got 1"; it says it
  // rounded. A value just above 1 is shown whole (%g printed it as 1).
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[2]
  loss = reduce_sum(x)
  train adam(lr = 0.1, beta1 = 1.0000001, beta2 = 0.99999999999999999)
})"),
            (Errors{
                "4:32: error: 'adam': beta1 must be in [0, 1), got 1.0000001",
                "4:51: error: 'adam': beta2 must be in [0, 1), got 1 (the literal "
                "0.99999999999999999 rounds to 1 in f64)",
            }));
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[2]
  loss = reduce_sum(x)
  train sgd(momentum = 0.5) steps batch
})"),
            (Errors{
                "4:9: error: 'sgd' is missing hyper-parameter 'lr': sgd(lr, "
                "momentum = 0, weight_decay = 0)",
                "4:35: error: 'batch' cannot be used here: configs and the "
                "train clause are evaluated before the batch size is known",
            }));
}

TEST_F(DiagnosticsTest, BatchFromOptionsMustBePositive) {
  ImportOptions options;
  options.batch = 0;
  EXPECT_EQ(errorsOf("model m {\n  input x : f32[batch]\n}\n", options),
            (Errors{"1:7: error: the batch size must be at least 1, got 0 "
                    "(from the import options)"}));
}

TEST_F(DiagnosticsTest, DataClause) {
  EXPECT_EQ(errorsOf(R"(model m {
  data parquet("x.parquet")
  data csv(3)
})"),
            (Errors{
                "3:3: error: a model has one data clause",
                "2:8: error: unknown data source 'parquet' (known: "
                "regression_grid, csv, npy, tokens)",
            }));
  EXPECT_EQ(errorsOf("model m {\n  data csv(path = 3)\n}\n"),
            (Errors{"2:19: error: 'csv': path must be a non-empty string such "
                    "as \"data.csv\", got the number 3"}));
  EXPECT_EQ(errorsOf("model m {\n  data regression_grid(lo = 1, hi = 0, n = 0)\n}\n"),
            (Errors{"2:44: error: 'regression_grid': n must be at least 1, got 0"}));
}

// npy names one file per input and target; each mistake is reported where it is.
TEST_F(DiagnosticsTest, NpyDataClause) {
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[batch, 2]
  target labels : i32[batch]
  data npy(x = "x.npy", lables = "y.npy", x = "z.npy")
})"),
            (Errors{
                "4:25: error: 'npy': 'lables' is not an input or target of "
                "the model (its inputs and targets: x, labels)",
                "4:43: error: 'npy': 'x' is given twice",
            }));
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[batch, 2]
  target labels : i32[batch]
  data npy(x = 3)
})"),
            (Errors{"4:16: error: 'npy': the file of 'x' must be a non-empty "
                    "string such as \"x.npy\", got the number 3"}));
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[batch, 2]
  target labels : i32[batch]
  data npy(x = "x.npy")
})"),
            (Errors{"4:8: error: 'npy' needs a file for every input and "
                    "target; none for 'labels'"}));
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[batch, 2]
  data npy("x.npy", "y.npy")
})"),
            (Errors{"3:21: error: 'npy': 2 files for the model's 1 inputs and "
                    "targets (x)"}));
}

//===----------------------------------------------------------------------===//
// Blocks and repeat
//===----------------------------------------------------------------------===//

TEST_F(DiagnosticsTest, BlockArgumentsAreShapeChecked) {
  EXPECT_EQ(errorsOf(R"(config H = 4
block residual(x : f32[batch, H]) {
  return x + relu(x)
}
model m {
  input x : f32[batch, 3]
  y = residual(x)
  z = residual(3)
})"),
            (Errors{
                "7:16: error: argument 'x' of block 'residual' must be "
                "'tensor<1x4xf32>', got 'tensor<1x3xf32>'",
                "8:16: error: argument 'x' of block 'residual' must be "
                "'tensor<1x4xf32>', got the number 3",
            }));
  EXPECT_EQ(notesOf(0),
            (std::vector<std::string>{
                "2:16: note: parameter 'x' is declared here"}));
}

TEST_F(DiagnosticsTest, BlockBodyErrorsAreReportedOnceWithTheCall) {
  EXPECT_EQ(errorsOf(R"(block layer(x : f32[2]) {
  param w : f32[2, 2] = xavier_uniform
  return linear(x, w3)
}
model m {
  input x : f32[2]
  repeat 4 { x2 = layer(x) }
  y = layer(layer(x))
})"),
            (Errors{"3:20: error: unknown name 'w3'; did you mean 'w'?"}));
  EXPECT_EQ(notesOf(0),
            (std::vector<std::string>{"7:19: note: in block 'layer' called here"}));
}

TEST_F(DiagnosticsTest, BlocksSeeOnlyTheirOwnNames) {
  EXPECT_EQ(errorsOf(R"(block b(x : f32[2]) {
  return x * w
}
model m {
  input x : f32[2]
  param w : f32[2] = ones
  y = b(x)
})"),
            (Errors{"2:14: error: unknown name 'w'; a block sees only its "
                    "arguments, its own definitions and the configs"}));
}

TEST_F(DiagnosticsTest, BlockStructure) {
  EXPECT_EQ(errorsOf(R"(block noreturn(x : f32[2]) {
  y = x
}
block early(x : f32[2]) {
  return x
  y = x
}
block scalar(x : f32[2]) {
  return 3
}
block misplaced(x : f32[2]) {
  input z : f32[2]
  loss = reduce_sum(x)
  config C = 2
  return x
}
model m {
  input x : f32[2]
  return x
})"),
            (Errors{
                "19:3: error: 'return' is only allowed as the last statement "
                "of a block body",
                "1:7: error: block 'noreturn' must end with 'return EXPR'",
                "5:3: error: 'return' must be the last statement of block "
                "'early'",
                "4:7: error: block 'early' must end with 'return EXPR'",
                "9:10: error: block 'scalar' must return a tensor, got the "
                "number 3",
                "12:3: error: 'input' belongs directly in the model body, not "
                "in a block body",
                "13:3: error: the loss is defined directly in the model body, "
                "not in a block or repeat body",
                "14:3: error: 'config' belongs at file level or directly in "
                "the model body",
            }));
}

TEST_F(DiagnosticsTest, RecursiveBlocks) {
  EXPECT_EQ(errorsOf(R"(block a(x : f32[2]) { return b(x) }
block b(x : f32[2]) { return a(x) }
model m {
  input x : f32[2]
  y = a(x)
})"),
            (Errors{"2:30: error: block 'a' instantiates itself (a -> b -> "
                    "a); blocks cannot be recursive"}));
  EXPECT_EQ(notesOf(0),
            (std::vector<std::string>{"1:30: note: in block 'b' called here",
                                      "5:7: note: in block 'a' called here"}));
}

TEST_F(DiagnosticsTest, DeepBlockChainsAreBounded) {
  // 40 distinct blocks, each calling the next: no recursion, but deeper
  // than the instantiation limit.
  std::string source;
  for (int i = 0; i < 40; ++i)
    source += "block b" + std::to_string(i) + "(x : f32[2]) { return b" +
              std::to_string(i + 1) + "(x) }\n";
  source += "block b40(x : f32[2]) { return x }\n";
  source += "model m {\n  input x : f32[2]\n  y = b0(x)\n}\n";
  Errors errors = errorsOf(source);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "32:32: error: blocks are nested too deeply (more than "
                       "32 instantiations inside each other)");
}

TEST_F(DiagnosticsTest, RepeatRules) {
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[2]
  param w : f32[2] = ones
  h = x
  repeat 2 { param p : f32[2] = zeros }
  repeat 2 { h = h * 2 ; h = h + 1 }
  repeat 2 { local = relu(h) }
  repeat 0 { h = h }
  repeat 2.5 { h = h }
  repeat 2 { w = h }
  output local
})"),
            (Errors{
                "5:14: error: 'param' in a repeat body would declare the same "
                "parameter on every iteration; declare it in a block and call "
                "the block in the repeat",
                "6:26: error: 'h' is already updated in this repeat body",
                "8:10: error: the repeat count must be at least 1, got 0",
                "9:10: error: the repeat count must be an integer, got 2.5",
                "10:14: error: cannot assign to param 'w': params, inputs and "
                "targets are never re-assigned",
                "11:10: error: unknown name 'local'; names first defined in a "
                "repeat body are local to one iteration",
            }));
  EXPECT_EQ(notesOf(5),
            (std::vector<std::string>{"7:14: note: 'local' is defined here"}));
}

TEST_F(DiagnosticsTest, LaterIterationsSayWhichIteration) {
  EXPECT_EQ(errorsOf(R"(model m {
  input x : f32[4]
  param w : f32[2, 4] = zeros
  repeat 3 { x2 = linear(x, w) }
  h = x
  repeat 3 { h = linear(h, w) }
})"),
            (Errors{"6:18: error: 'linear': input 'tensor<2xf32>' does not "
                    "match weight 'tensor<2x4xf32>': the input's last axis "
                    "must have extent 4 (the weight is [out, in])"}));
  EXPECT_EQ(notesOf(0),
            (std::vector<std::string>{"6:3: note: in iteration 2 of this repeat"}));
}

TEST_F(DiagnosticsTest, UnusedBlocksAreCheckedToo) {
  EXPECT_EQ(errorsOf(R"(block unused(x : f32[2]) {
  return x + zz
}
model m {
  input x : f32[2]
})"),
            (Errors{"2:14: error: unknown name 'zz'"}));
}

TEST_F(DiagnosticsTest, UnrollingIsBounded) {
  Errors errors = errorsOf(R"(block twice(x : f32[2]) {
  return relu(relu(x))
}
model m {
  input x : f32[2]
  repeat 100000 { x2 = twice(x) }
})");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "6:3: error: the model unrolls to more than 100000 "
                       "ops; reduce the repeat counts or the block calls");
}

// Issue 14: "reduce the repeat counts" was said of a file with no repeat. The
// advice names what multiplied the model, or says it is the language's limit.
TEST_F(DiagnosticsTest, UnrollingAdviceNamesWhatTheModelUses) {
  Errors repeats = errorsOf(R"(model m {
  input x : f32[2]
  h = x
  repeat 100000 { h = relu(relu(h)) }
})");
  ASSERT_EQ(repeats.size(), 1u);
  EXPECT_EQ(repeats[0], "4:3: error: the model unrolls to more than 100000 "
                        "ops; reduce the repeat counts");
  // Blocks calling blocks, ten times each: 10^5 relus per call of e.
  Errors blocks = errorsOf(R"(block a(x : f32[2]) { return relu(x) }
block b(x : f32[2]) { return a(a(a(a(a(a(a(a(a(a(x)))))))))) }
block c(x : f32[2]) { return b(b(b(b(b(b(b(b(b(b(x)))))))))) }
block d(x : f32[2]) { return c(c(c(c(c(c(c(c(c(c(x)))))))))) }
block e(x : f32[2]) { return d(d(d(d(d(d(d(d(d(d(x)))))))))) }
block f(x : f32[2]) { return e(e(e(e(e(e(e(e(e(e(x)))))))))) }
model m {
  input x : f32[2]
  y = f(x)
  output y
})");
  ASSERT_FALSE(blocks.empty());
  EXPECT_NE(blocks[0].find("error: the model unrolls to more than 100000 ops; "
                           "reduce the block calls (each builds the block's "
                           "ops again)"),
            std::string::npos)
      << blocks[0];
  // Neither: a file of 100001 statements.
  std::string plain = "model m {\n  input x : f32[2]\n  h0 = x\n";
  for (int i = 1; i <= 100001; ++i)
    plain += "  h" + std::to_string(i) + " = relu(h" + std::to_string(i - 1) + ")\n";
  Errors statements = errorsOf(plain + "}");
  ASSERT_EQ(statements.size(), 1u);
  EXPECT_NE(statements[0].find("error: the model has more than 100000 ops (the "
                               "language's limit)"),
            std::string::npos)
      << statements[0];
}

TEST_F(DiagnosticsTest, LoopsThatBuildNothingAreBoundedToo) {
  Errors errors = errorsOf(R"(block same(x : f32[2]) { return x }
model m {
  input x : f32[2]
  h = x
  repeat 100000 { repeat 100000 { h = same(h) } }
  repeat 100000 { repeat 100000 { } }
})");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "5:39: error: the model unrolls to more than 1000000 "
                       "statements; reduce the repeat counts or the block "
                       "calls");
}

//===----------------------------------------------------------------------===//
// All errors of a file
//===----------------------------------------------------------------------===//

TEST_F(DiagnosticsTest, EveryErrorOfAFileIsReported) {
  Errors errors = errorsOf(R"(model m {
  input x : f32[batch, 2]
  param w1 : f32[8, 2] = xavier_uniform
  param w2 : f32[1, 8] = xavier_uniform
  h = relu(linear(x, w3))
  h2 = relu(linear(x, w1)
  pred = linear(h2, w2)
  pred = pred
  output pred, nope
  loss = pred
  train adam(lr = 0.1, beta3 = 0.5)
})");
  EXPECT_EQ(errors,
            (Errors{
                "6:26: error: expected ',' or ')' after an argument of 'relu', "
                "found end of line",
                "11:24: error: 'adam' has no hyper-parameter 'beta3'; did you "
                "mean 'beta1'? (known: lr, beta1, beta2, eps, weight_decay)",
                "5:22: error: unknown name 'w3'; did you mean 'w1'?",
                "8:3: error: redefinition of 'pred'",
                "9:16: error: unknown name 'nope'",
            }));
}

} // namespace
