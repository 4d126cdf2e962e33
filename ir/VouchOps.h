//===- VouchOps.h - the vouch ops and their interfaces ---------*- C++ -*-===//
#ifndef VOUCH_IR_VOUCHOPS_H
#define VOUCH_IR_VOUCHOPS_H

#include <string>

#include "ir/VouchDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ir/VouchInterfaces.h.inc"

#define GET_OP_CLASSES
#include "ir/VouchOps.h.inc"

namespace vouch {

/// Registers the vouch dialect (and nothing else) in a context.
void registerVouchDialect(mlir::MLIRContext &context);

/// Number of elements of a static-shape tensor type.
int64_t getNumElements(mlir::Type type);

/// The ops that declare or mark values rather than compute them (family
/// Structural in the op table: model, input, target, param, loss, output,
/// param_grad). Every other op computes.
bool isStructuralOp(mlir::OperationName name);
inline bool isStructuralOp(mlir::Operation *op) {
  return isStructuralOp(op->getName());
}

/// A double as a C++/CUDA literal that reads back to the same value (the
/// scalar formulas of pointwise ops and every emitter use it).
std::string exactLiteral(double value);

} // namespace vouch

#endif // VOUCH_IR_VOUCHOPS_H
