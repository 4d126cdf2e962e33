//===- OpTable.cpp - the rows generated from the ODS records ----*- C++ -*-===//
#include "ir/OpTable.h"

#include "ir/ClauseTable.h"

namespace vouch {

std::string_view toString(OpFamily family) {
  switch (family) {
  case OpFamily::Structural: return "structural";
  case OpFamily::Generator: return "generator";
  case OpFamily::Pointwise: return "pointwise";
  case OpFamily::View: return "view";
  case OpFamily::Index: return "index";
  case OpFamily::Reduction: return "reduction";
  case OpFamily::Loss: return "loss";
  case OpFamily::Gemm: return "gemm";
  case OpFamily::Normalization: return "normalization";
  case OpFamily::Attention: return "attention";
  case OpFamily::Pool: return "pool";
  case OpFamily::Composite: return "composite";
  case OpFamily::BatchNormalization: return "batch_normalization";
  case OpFamily::Convolution: return "convolution";
  }
  return "";
}

const std::vector<OpFacts> &opTable() {
  static const std::vector<OpFacts> table = {
#include "ir/OpTable.inc"
  };
  return table;
}

const OpFacts *findOpFacts(std::string_view mnemonic) {
  for (const OpFacts &facts : opTable())
    if (facts.mnemonic == mnemonic)
      return &facts;
  return nullptr;
}

const OpFacts *findBuiltinOp(std::string_view name) {
  if (name.empty())
    return nullptr;
  for (const OpFacts &facts : opTable())
    if (facts.builtin == name)
      return &facts;
  return nullptr;
}

static std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ')
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> splitList(std::string_view list) {
  std::vector<std::string_view> items;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = trim(list.substr(0, comma));
    if (!item.empty())
      items.push_back(item);
    if (comma == std::string_view::npos)
      break;
    list.remove_prefix(comma + 1);
  }
  return items;
}

std::vector<SignatureParam> parseSignature(std::string_view params) {
  std::vector<SignatureParam> out;
  for (std::string_view item : splitList(params)) {
    size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      out.push_back({item, {}});
    else
      out.push_back({trim(item.substr(0, eq)), trim(item.substr(eq + 1))});
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Clause callees
//===----------------------------------------------------------------------===//

std::string_view toString(ClauseKind kind) {
  switch (kind) {
  case ClauseKind::Initializer: return "initialiser";
  case ClauseKind::Optimizer: return "optimizer";
  case ClauseKind::DataSource: return "data source";
  case ClauseKind::Schedule: return "schedule";
  }
  return "";
}

const std::vector<ClauseFacts> &clauseTable() {
  static const std::vector<ClauseFacts> table = {
#include "ir/ClauseTable.inc"
  };
  return table;
}

std::vector<const ClauseFacts *> clauseCallees(ClauseKind kind) {
  std::vector<const ClauseFacts *> out;
  for (const ClauseFacts &facts : clauseTable())
    if (facts.clause == kind)
      out.push_back(&facts);
  return out;
}

const ClauseFacts *findClauseFacts(ClauseKind kind, std::string_view name) {
  for (const ClauseFacts &facts : clauseTable())
    if (facts.clause == kind && facts.name == name)
      return &facts;
  return nullptr;
}

std::vector<SignatureParam> clauseSignature(ClauseKind kind,
                                            std::string_view name) {
  const ClauseFacts *facts = findClauseFacts(kind, name);
  return facts ? parseSignature(facts->params) : std::vector<SignatureParam>{};
}

} // namespace vouch
