//===- VouchDialect.cpp - the vouch dialect ---------------------*- C++ -*-===//
#include "ir/VouchDialect.h"

#include "ir/VouchOps.h"

using namespace mlir;

#include "ir/VouchDialect.cpp.inc"

void vouch::VouchDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "ir/VouchOps.cpp.inc"
      >();
}

void vouch::registerVouchDialect(MLIRContext &context) {
  context.getOrLoadDialect<VouchDialect>();
}
