//===- Pipeline.h - loading a model file for the driver ---------*- C++ -*-===//
#ifndef VOUCH_TOOLS_PIPELINE_H
#define VOUCH_TOOLS_PIPELINE_H

#include <map>
#include <optional>
#include <string>

#include "ir/VouchOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "passes/Gate.h"
#include "tools/CommandLine.h"
#include "tools/Diagnostics.h"

namespace vouch::driver {

struct LoadOptions {
  std::optional<int64_t> batch;
  std::map<std::string, double> configs; ///< --config NAME=VALUE,...
  bool autodiff = false; ///< run vouch-decompose and vouch-autodiff after import
  /// scaled_dot_product_attention's form (vouch-decompose's option):
  /// composed, fused or auto.
  std::string attention = "composed";
  /// vouch-autodiff's recompute-min-elements (-1: its default).
  int64_t recomputeMinElements = -1;
  /// vouch-autodiff's recompute-layer-norm (--recompute-layer-norm).
  bool recomputeLayerNorm = false;
  /// vouch-pad-classes' quantum (--pad-classes; 0: off).
  int64_t padClasses = 0;
  /// The model file's errors printed before the import stops printing them
  /// (--error-limit, as clang's -ferror-limit; 0: every one).
  int64_t errorLimit = 20;
};

/// Reads, imports and verifies a model description, its text kept by
/// `diagnostics` (which prints every diagnostic as `file:line:col: error: …`
/// with the source line, in the context `diagnostics` holds). Null on any
/// error.
mlir::OwningOpRef<mlir::ModuleOp> loadModel(const std::string &path,
                                            DriverDiagnostics &diagnostics,
                                            const LoadOptions &options);

/// Declares the options every command that loads a model takes: `--batch N`
/// and `--config NAME=VALUE[,NAME=VALUE...]`.
void declareImportOptions(CommandLine &cl);

/// Reads `--batch N` (N ≥ 1) and `--config` into `options` when given;
/// prints the error and returns false when malformed.
bool readImportOptions(const CommandLine &cl, LoadOptions &options);

/// Loads the one model file of `cl`'s command line with its `--batch`. On
/// failure returns null after printing why, with `exitCode` set: 2 for a
/// usage error, 1 for a rejected model.
mlir::OwningOpRef<mlir::ModuleOp>
loadFromCommandLine(const CommandLine &cl, bool autodiff,
                    DriverDiagnostics &diagnostics, int &exitCode);

/// Declares `--precision fp32|tf32|bf16` (and `--tf32`, its older spelling
/// of `--precision tf32`): what a cuda profile's f32 products may round
/// their operands to; and `--bias-grad-epilogue` (planForProfile's).
void declarePrecisionOption(CommandLine &cl);

/// The product precision `cl` asks for (fp32 when it asks for none); prints
/// the error and returns nullopt for an unknown value or `--tf32` with
/// another `--precision`.
std::optional<capsules::ProductPrecision>
readPrecisionOption(const CommandLine &cl);

/// The single vouch.model of a loaded module.
ModelOp getModel(mlir::ModuleOp module);

/// What is wrong with writing a command's output to `output` when it reads the
/// model file `input`, or "" when nothing is: an empty name, a directory, an
/// existing file that is not a regular one (a device, FIFO or socket: the
/// atomic rename would replace it with a regular file), or `input` itself
/// (under any name: a link, another path). Checked before anything is written.
std::string outputPathProblem(const std::string &output,
                              const std::string &input);

/// What stops a command from writing `output` in its directory, or "" when
/// nothing does: the directory missing, not a directory, or not writable
/// ("cannot write OUT: ..."). Checked before the work, by creating and
/// removing the temporary file the output is written through.
std::string outputDirectoryProblem(const std::string &output);

/// Lowers a differentiated model for `profile` (cuda profiles run
/// addCudaPasses first: `biasGradEpilogue` folds linears' bias gradients
/// into their weight products, vouch-fold-linear-bias-grad), plans a capsule
/// per op and runs the assurance gate. A rejection has been printed through
/// the diagnostic engine (every failed obligation with its location) when
/// this fails.
mlir::FailureOr<AcceptedGraphPlan>
planForProfile(ModelOp model, const capsules::BackendProfile &profile,
               const capsules::GateOptions &options,
               capsules::GateRejection *rejection = nullptr,
               bool biasGradEpilogue = false);

} // namespace vouch::driver

#endif // VOUCH_TOOLS_PIPELINE_H
