//===- ClauseNamesTest.cpp - ir's clause enums are the runtime's ---------===//
//
// The runtime cannot include MLIR, so it keeps its own enums of the clause
// callees: InitKind (runtime/init.h, read by name through parse_init),
// OptimizerConfig::Kind (optim.h) and DataSpec::Kind (model_api.h).
// codegen casts ir's enums to them and emits their enumerators by the
// symbols of the clause table, so both must agree in names and values:
// this test holds the two sides together, without MLIR.
//
//===----------------------------------------------------------------------===//
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "ir/ClauseTable.h"
#include "ir/OpTable.h"
#include "runtime/init.h"
#include "runtime/model_api.h"
#include "runtime/optim.h"

namespace vouch {
namespace {

/// Every runtime enumerator of a kind, with its C++ name, against the rows
/// of the clause table: same count, and each symbol has the runtime's value.
void expectSameEnumerators(ClauseKind kind,
                           const std::vector<std::pair<int, std::string>> &runtime) {
  std::vector<const ClauseFacts *> rows = clauseCallees(kind);
  ASSERT_EQ(rows.size(), runtime.size())
      << toString(kind) << ": ir's enum and the runtime's differ in size";
  for (const auto &[value, symbol] : runtime) {
    const ClauseFacts *row = nullptr;
    for (const ClauseFacts *r : rows)
      if (r->symbol == symbol)
        row = r;
    ASSERT_NE(row, nullptr) << toString(kind) << ": the runtime's " << symbol
                            << " is no case of ir's enum";
    EXPECT_EQ(row->value, value) << symbol;
  }
}

TEST(ClauseNames, InitialisersAgree) {
  expectSameEnumerators(
      ClauseKind::Initializer,
      {{static_cast<int>(rt::InitKind::Zeros), "Zeros"},
       {static_cast<int>(rt::InitKind::Ones), "Ones"},
       {static_cast<int>(rt::InitKind::Uniform), "Uniform"},
       {static_cast<int>(rt::InitKind::Normal), "Normal"},
       {static_cast<int>(rt::InitKind::XavierUniform), "XavierUniform"},
       {static_cast<int>(rt::InitKind::KaimingUniform), "KaimingUniform"}});
  // The runtime reads initialisers by ir's names, with the table's arity.
  for (const ClauseFacts *row : clauseCallees(ClauseKind::Initializer)) {
    std::vector<double> args(parseSignature(row->params).size(), 0.0);
    if (args.size() == 2)
      args[1] = 1.0; // lo < hi, std >= 0
    rt::Result<rt::InitSpec> spec = rt::parse_init(std::string(row->name), args);
    ASSERT_TRUE(spec.ok()) << row->name << ": " << spec.status().message();
    EXPECT_EQ(static_cast<int>(spec.value().kind), row->value) << row->name;
  }
  EXPECT_FALSE(rt::parse_init("glorot", {}).ok());
}

TEST(ClauseNames, OptimizersAgree) {
  expectSameEnumerators(ClauseKind::Optimizer,
                        {{rt::OptimizerConfig::Sgd, "Sgd"},
                         {rt::OptimizerConfig::Adam, "Adam"},
                         {rt::OptimizerConfig::AdamW, "AdamW"},
                         {rt::OptimizerConfig::RmsProp, "RmsProp"},
                         {rt::OptimizerConfig::Adagrad, "Adagrad"}});
  // Every hyper-parameter a signature names is a field of OptimizerConfig
  // (codegen/ModelDescription.cpp sets them by these names).
  for (const ClauseFacts *row : clauseCallees(ClauseKind::Optimizer))
    for (const SignatureParam &p : parseSignature(row->params))
      EXPECT_TRUE(p.name == "lr" || p.name == "beta1" || p.name == "beta2" ||
                  p.name == "eps" || p.name == "weight_decay" ||
                  p.name == "momentum" || p.name == "alpha" ||
                  p.name == "lr_decay" || p.name == "decay_min_rank")
          << row->name << " takes " << p.name;
}

TEST(ClauseNames, SchedulesAgree) {
  expectSameEnumerators(
      ClauseKind::Schedule,
      {{rt::OptimizerConfig::Constant, "Constant"},
       {rt::OptimizerConfig::Step, "Step"},
       {rt::OptimizerConfig::Exponential, "Exponential"},
       {rt::OptimizerConfig::WarmupCosine, "WarmupCosine"}});
  EXPECT_EQ(toString(ClauseKind::Schedule), "schedule");
}

TEST(ClauseNames, DataSourcesAgree) {
  expectSameEnumerators(ClauseKind::DataSource,
                        {{rt::DataSpec::RegressionGrid, "RegressionGrid"},
                         {rt::DataSpec::Csv, "Csv"},
                         {rt::DataSpec::Npy, "Npy"},
                         {rt::DataSpec::Tokens, "Tokens"}});
  // The grid's defaults in the language are the runtime's.
  rt::DataSpec spec;
  const ClauseFacts *grid =
      findClauseFacts(ClauseKind::DataSource, "regression_grid");
  ASSERT_NE(grid, nullptr);
  for (const SignatureParam &p : parseSignature(grid->params)) {
    double expected = p.name == "lo"   ? spec.lo
                      : p.name == "hi" ? spec.hi
                                       : static_cast<double>(spec.n);
    EXPECT_EQ(std::stod(std::string(p.defaultText)), expected) << p.name;
  }
}

TEST(ClauseNames, TableLookups) {
  EXPECT_EQ(findClauseFacts(ClauseKind::Optimizer, "adamw")->symbol, "AdamW");
  EXPECT_EQ(findClauseFacts(ClauseKind::Initializer, "adam"), nullptr);
  EXPECT_EQ(toString(ClauseKind::DataSource), "data source");
}

} // namespace
} // namespace vouch
