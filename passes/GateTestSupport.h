//===- GateTestSupport.h - models and diagnostics for gate tests -*- C++ -*-===//
//
// Shared by plan_test, gate_test and gate_report_test: a context with the
// vouch dialect, models parsed from text (locations `<name>:line:col`),
// vouch-autodiff where a backward is needed, and every diagnostic captured
// as `location: message`.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_PASSES_GATETESTSUPPORT_H
#define VOUCH_PASSES_GATETESTSUPPORT_H

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/VouchOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "passes/Plan.h"

namespace vouch::testing {

/// The quickstart MLP of BRIEF.md in the dialect, batch 1: Linear(2→8),
/// ReLU, Linear(8→1), MSE, trained with Adam.
inline const char *kQuickstartMlp = R"mlir(vouch.model "quickstart_mlp" attributes {batch = 1 : i64, train = #vouch.train<optimizer = adam, lr = 3.000000e-02, beta1 = 9.000000e-01, beta2 = 0.99899999999999999, eps = 1.000000e-08, weight_decay = 0.000000e+00, steps = 200, log_every = 25>} {
  %x = vouch.input "x" : tensor<1x2xf32>
  %y = vouch.target "y" : tensor<1x1xf32>
  %w1 = vouch.param "w1" = "xavier_uniform" : tensor<8x2xf32>
  %b1 = vouch.param "b1" = "zeros" : tensor<8xf32>
  %w2 = vouch.param "w2" = "xavier_uniform" : tensor<1x8xf32>
  %b2 = vouch.param "b2" = "zeros" : tensor<1xf32>
  %h = vouch.linear %x, %w1, %b1 : (tensor<1x2xf32>, tensor<8x2xf32>, tensor<8xf32>) -> tensor<1x8xf32>
  %r = vouch.relu %h : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %p = vouch.linear %r, %w2, %b2 : (tensor<1x8xf32>, tensor<1x8xf32>, tensor<1xf32>) -> tensor<1x1xf32>
  %l = vouch.mse_loss %p, %y : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<f32>
  vouch.output "pred" %p : tensor<1x1xf32>
  vouch.loss %l : tensor<f32>
}
)mlir";

/// One linear layer too large for checked_cuda's small-product rule
/// (512·256 multiply-adds, k = 512): it runs in cuBLASLt.
inline const char *kWideLinear = R"mlir(vouch.model "wide" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x512xf32>
  %w = vouch.param "w" = "xavier_uniform" : tensor<256x512xf32>
  %b = vouch.param "b" = "zeros" : tensor<256xf32>
  %h = vouch.linear %x, %w, %b : (tensor<1x512xf32>, tensor<256x512xf32>, tensor<256xf32>) -> tensor<1x256xf32>
  vouch.output "h" %h : tensor<1x256xf32>
}
)mlir";

/// checked_cuda without its small-product rule: every product in cuBLAS(Lt).
inline capsules::BackendProfile libraryProductsCuda() {
  capsules::BackendProfile p = *capsules::lookupProfile("checked_cuda");
  p.smallProducts = {};
  return p;
}

class GateFixture : public ::testing::Test {
protected:
  GateFixture()
      : handler(&context, [this](mlir::Diagnostic &d) {
          diagnostics.push_back(locationString(d.getLocation()) + ": " +
                                d.str());
          return mlir::success();
        }) {
    registerVouchDialect(context);
    static bool registered = (registerVouchPasses(), true);
    (void)registered;
  }

  /// Parses `text` (located as `name`) and returns its one model; with
  /// `differentiate`, runs vouch-autodiff first.
  ModelOp parse(const std::string &text, bool differentiate = false,
                const std::string &name = "gate.mlir") {
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context, name);
    EXPECT_TRUE(module) << "parse failed: " << joined();
    if (!module)
      return nullptr;
    if (differentiate) {
      mlir::PassManager pm(&context);
      addAutodiffPasses(pm);
      EXPECT_TRUE(mlir::succeeded(pm.run(*module))) << joined();
    }
    for (mlir::Operation &op : module->getBody()->getOperations())
      if (auto model = mlir::dyn_cast<ModelOp>(op))
        return model;
    return nullptr;
  }

  /// Runs a textual pass pipeline, `builtin.module(...)`, on the module.
  mlir::LogicalResult runPipeline(const std::string &pipeline) {
    mlir::FailureOr<mlir::OpPassManager> parsed =
        mlir::parsePassPipeline(pipeline);
    if (mlir::failed(parsed))
      return mlir::failure();
    mlir::PassManager pm(&context);
    static_cast<mlir::OpPassManager &>(pm) = *parsed;
    return pm.run(*module);
  }

  /// The op of `model` with this result name's position: the n-th op whose
  /// name is `vouch.<op>`.
  mlir::Operation *nth(ModelOp model, llvm::StringRef op, int n = 0) {
    for (mlir::Operation &o : model.getBlock())
      if (o.getName().stripDialect() == op && n-- == 0)
        return &o;
    return nullptr;
  }

  std::string joined() const {
    std::string out;
    for (const std::string &d : diagnostics)
      out += d + "\n";
    return out;
  }

  bool hasDiagnostic(const std::string &text) const {
    for (const std::string &d : diagnostics)
      if (d == text)
        return true;
    return false;
  }

  mlir::MLIRContext context;
  mlir::ScopedDiagnosticHandler handler;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<std::string> diagnostics;
};

} // namespace vouch::testing

#endif // VOUCH_PASSES_GATETESTSUPPORT_H
