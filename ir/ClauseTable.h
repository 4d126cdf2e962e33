//===- ClauseTable.h - the callees of a description's clauses -*- C++ -*-===//
//
// The initialisers, optimizers and data sources a model description may
// call, one row per case of their ODS enums (VouchAttrs.td): the name the
// language and the IR spell, the C++ enumerator (the same in ir/ and in the
// runtime's InitKind, OptimizerConfig::Kind and DataSpec::Kind; a test
// checks), and the parameters with their defaults. Generated with the op
// table (ir/gen_op_table.py); plain C++, no MLIR (target //ir:op_table).
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_IR_CLAUSETABLE_H
#define VOUCH_IR_CLAUSETABLE_H

#include <string_view>
#include <vector>

#include "ir/OpTable.h"

namespace vouch {

enum class ClauseKind {
  Initializer, ///< `param w : f32[8, 2] = xavier_uniform` (vouch::InitKind)
  Optimizer,   ///< `train adam(lr = 0.03)` (vouch::OptimizerKind)
  DataSource,  ///< `data csv("train.csv")` (vouch::DataKind)
  Schedule,    ///< `train ... schedule step(10)` (vouch::ScheduleKind)
};

/// "initialiser", "optimizer", "data source": how messages name the kind.
std::string_view toString(ClauseKind kind);

struct ClauseFacts {
  ClauseKind clause;
  std::string_view name;   ///< "xavier_uniform", as written
  std::string_view symbol; ///< "XavierUniform", the C++ enumerator
  int value;               ///< the enumerator's value
  /// "lo, hi"; "lr, beta1 = 0.9, ..." (ir/OpTable.h's parseSignature reads it)
  std::string_view params;
};

/// Every clause callee, in ODS order.
const std::vector<ClauseFacts> &clauseTable();

/// The callees of one clause kind, in ODS order.
std::vector<const ClauseFacts *> clauseCallees(ClauseKind kind);

/// The row of `name` among the callees of `kind`, or nullptr.
const ClauseFacts *findClauseFacts(ClauseKind kind, std::string_view name);

/// The parameters of callee `name` of `kind` (parseSignature of its row);
/// empty for an unknown callee.
std::vector<SignatureParam> clauseSignature(ClauseKind kind,
                                            std::string_view name);

} // namespace vouch

#endif // VOUCH_IR_CLAUSETABLE_H
