//===- VouchDialect.h - the vouch dialect ----------------------*- C++ -*-===//
#ifndef VOUCH_IR_VOUCHDIALECT_H
#define VOUCH_IR_VOUCHDIALECT_H

#include "mlir/IR/Dialect.h"

#include "ir/VouchDialect.h.inc"

#endif // VOUCH_IR_VOUCHDIALECT_H
