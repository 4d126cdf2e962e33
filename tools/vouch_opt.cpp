//===- vouch_opt.cpp - mlir-opt for the vouch dialect -----------*- C++ -*-===//
//
// Runs vouch passes over .mlir files: the tool behind the pass lit tests.
//
//===----------------------------------------------------------------------===//
#include "ir/VouchOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "passes/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<vouch::VouchDialect>();
  vouch::registerVouchPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "vouch pass runner\n", registry));
}
