//===- VouchAttrs.h - a model's clauses as typed attributes -----*- C++ -*-===//
//
// The enums of the clause callees (vouch::InitKind, OptimizerKind,
// DataKind) and the attributes built from them (InitKindAttr, TrainAttr,
// DataAttr); VouchAttrs.td says what each holds. Their names, parameters
// and defaults are also plain C++ rows in ir/ClauseTable.h.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_IR_VOUCHATTRS_H
#define VOUCH_IR_VOUCHATTRS_H

#include <optional>

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringMap.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectImplementation.h"

#include "ir/VouchEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "ir/VouchAttrs.h.inc"

namespace vouch {

/// The train clause's options besides the optimizer, as the language
/// defaults them (`train adam(lr = 0.1)` trains 100 steps, logging every
/// 10th).
constexpr int64_t kDefaultTrainSteps = 100;
constexpr int64_t kDefaultTrainLogEvery = 10;

/// A train attribute from the optimizer's hyper-parameters by name, as its
/// signature in the clause table names them: exactly those must be given.
/// Null after reporting through `emitError`.
TrainAttr buildTrainAttr(mlir::MLIRContext *context, OptimizerKind optimizer,
                         const llvm::StringMap<double> &hyperParameters,
                         int64_t steps, int64_t logEvery,
                         ScheduleAttr schedule,
                         std::optional<double> clipGradNorm, bool shuffle,
                         std::optional<int64_t> evalEvery,
                         llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// The names of an enum's cases, "zeros, ones, ...", for messages.
std::string initKindNames();

} // namespace vouch

#endif // VOUCH_IR_VOUCHATTRS_H
