//===- BuiltinsTest.cpp - the builtins are the op table's ----------------===//
//
// The frontend registers exactly the op table's builtins (ir/OpTable.h, set
// in the ODS records), with the table's parameters, and lowers each to its
// op: an op given a builtin name in its record becomes a builtin with no
// frontend edit when a generic lowering covers its family, and fails here
// when none does.
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include "frontend/TestSupport.h"
#include "gtest/gtest.h"
#include "ir/OpTable.h"
#include "ir/VouchDialect.h"
#include "mlir/IR/OperationSupport.h"

using namespace vouch;
using namespace vouch::frontend;
using namespace vouch::frontend::testing;

namespace {

TEST(Builtins, AreExactlyTheOpTablesBuiltinsInItsOrder) {
  std::vector<std::string> table, registered;
  for (const OpFacts &op : opTable())
    if (!op.builtin.empty())
      table.push_back(std::string(op.builtin));
  for (llvm::StringRef name : builtinFunctionNames())
    registered.push_back(name.str());
  EXPECT_EQ(registered, table)
      << "a row of the op table names a builtin no lowering covers (see "
         "findLowering in frontend/Builtins.cpp)";
  EXPECT_FALSE(registered.empty());
}

TEST(Builtins, SignaturesAreTheTables) {
  mlir::MLIRContext context;
  for (const OpFacts &op : opTable()) {
    if (op.builtin.empty())
      continue;
    // Too many arguments: the message ends with the table's signature.
    std::vector<SignatureParam> params = parseSignature(op.builtinParams);
    std::string args;
    for (size_t i = 0; i <= params.size(); ++i)
      args += (i ? ", " : "") + std::string("x");
    ImportResult result = importSource(
        context, "model m {\n  input x : f32[batch, 2]\n  y = " +
                     std::string(op.builtin) + "(" + args + ")\n}\n");
    ASSERT_FALSE(result.errors().empty()) << op.builtin;
    std::string expected = std::string(op.builtin) + "(" +
                           std::string(op.builtinParams) + ")";
    std::string error = result.errors().front();
    ASSERT_GE(error.size(), expected.size()) << error;
    EXPECT_EQ(error.substr(error.size() - expected.size()), expected)
        << error;
  }
}

/// The op each generic builtin lowers to, built by its registered name.
TEST(Builtins, GenericLoweringsBuildTheirRowsOp) {
  mlir::MLIRContext context;
  vouch::registerVouchDialect(context);
  int generic = 0;
  for (const OpFacts &op : opTable()) {
    if (op.builtin.empty() ||
        (op.family != OpFamily::Pointwise && op.family != OpFamily::Reduction))
      continue;
    std::vector<SignatureParam> params = parseSignature(op.builtinParams);
    std::string call = std::string(op.builtin) + "(x";
    if (op.family == OpFamily::Pointwise) {
      // A parameter named like one of the op's attributes takes a number
      // (0.5 suits every one: a factor, beta, eps, p, min = max), or its
      // default where that is a string (gelu's "tanh"); the others a tensor.
      mlir::OperationName name("vouch." + std::string(op.mnemonic), &context);
      for (size_t i = 1; i < params.size(); ++i) {
        bool number = llvm::any_of(name.getAttributeNames(), [&](mlir::StringAttr a) {
          return a.getValue() == llvm::StringRef(params[i].name);
        });
        if (number && params[i].defaultText.starts_with("\""))
          call += ", " + std::string(params[i].defaultText);
        else
          call += number ? ", 0.5" : ", x";
      }
    } else if (op.family == OpFamily::Reduction) {
      call += ", axes = 0";
    }
    call += ")";
    ImportResult result = importSource(
        context, "model m {\n  input x : f32[batch, 2]\n  y = " + call +
                     "\n  output y\n  loss = reduce_sum(y)\n}\n");
    ASSERT_TRUE(result.module) << call << "\n" << result.dump();
    int found = 0;
    result.model().walk([&](mlir::Operation *built) {
      found += std::string_view(built->getName().stripDialect()) == op.mnemonic;
    });
    EXPECT_GE(found, 1) << call << " built no vouch." << op.mnemonic;
    ++generic;
  }
  EXPECT_GE(generic, 4);
}

} // namespace
