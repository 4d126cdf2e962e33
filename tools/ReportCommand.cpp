//===- ReportCommand.cpp - vouch report -------------------------*- C++ -*-===//
//
// The audit report of a model for a profile, without building anything:
// which capsule computes every op (forward and backward), under which
// contracts, numeric policy and evidence, in which kernel or library call.
//
//===----------------------------------------------------------------------===//
#include <cstdio>

#include "capsules/Report.h"
#include "codegen/NativeBuild.h"
#include "mlir/IR/MLIRContext.h"
#include "tools/CommandLine.h"
#include "tools/Commands.h"
#include "tools/Pipeline.h"

using namespace mlir;

namespace vouch::driver {

int runReport(const std::vector<std::string> &args) {
  CommandLine cl("report",
                 "print the plan / capsule audit report of a model for a "
                 "backend profile, without building it",
                 "[options] FILE");
  std::string profiles;
  for (std::string_view name : capsules::profileNames())
    profiles += (profiles.empty() ? "" : ", ") + std::string(name);
  cl.option("profile", "NAME", "backend profile (" + profiles +
                                   "; append +tf32 or +bf16 to let f32 "
                                   "products round their operands)",
            "checked_cpu");
  cl.option("device", "NAME", "use the maintained profile of a device "
                              "instead of --profile");
  declarePrecisionOption(cl);
  cl.option("format", "text|json", "report format", "text");
  cl.option("output", "PATH", "write the report to PATH (also -o)");
  declareImportOptions(cl);
  cl.flag("deterministic", "require deterministic reductions");
  cl.flag("require-evidence", "reject contracts whose evidence is "
                              "not-provided");
  if (int code = cl.parseOrExit(args, 1); code >= 0)
    return code;
  auto chosenFormat = cl.choice("format", {"text", "json"});
  if (!chosenFormat)
    return 2;
  std::string format = *chosenFormat;
  std::optional<capsules::ProductPrecision> precision = readPrecisionOption(cl);
  if (!precision)
    return 2;
  // --precision (or --tf32) adds its option to --device's profile, or to
  // --profile's, which may also spell it (+tf32 / +bf16).
  std::string spec = cl.get("profile");
  if (*precision != capsules::ProductPrecision::Fp32)
    spec += "+" + std::string(capsules::toString(*precision));
  capsules::ProfileOptions options;
  options.products = *precision;
  auto profile = cl.has("device")
                     ? capsules::profileForDeviceName(cl.get("device"), options)
                     : capsules::parseProfileSpec(spec);
  if (!profile) {
    std::fprintf(stderr, "error: %s\n", profile.error().c_str());
    return 2;
  }

  if (cl.has("output")) {
    std::string problem = outputPathProblem(cl.get("output"), cl.positional()[0]);
    if (problem.empty())
      problem = outputDirectoryProblem(cl.get("output"));
    if (!problem.empty()) {
      std::fprintf(stderr, "error: %s\n", problem.c_str());
      return 2;
    }
  }
  MLIRContext context;
  DriverDiagnostics diagnostics(context);
  int exitCode;
  auto module = loadFromCommandLine(cl, /*autodiff=*/true, diagnostics, exitCode);
  if (!module)
    return exitCode;
  capsules::GateOptions gate;
  gate.deterministic = cl.has("deterministic");
  gate.requireEvidence = cl.has("require-evidence");
  capsules::GateRejection rejection;
  auto plan = planForProfile(getModel(*module), *profile, gate, &rejection,
                             cl.has("bias-grad-epilogue"));
  std::string text;
  if (succeeded(plan))
    text = format == "json" ? capsules::renderJson(*plan)
                            : capsules::renderText(*plan);
  else if (format == "json")
    text = capsules::renderRejectionJson(rejection);
  else
    return 1; // every failure was printed with its location

  if (!cl.has("output")) {
    std::fputs(text.c_str(), stdout);
  } else {
    // Never half written: a partial file renamed over the output.
    std::string error;
    if (!codegen::writeFileAtomically(cl.get("output"), text, error)) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
      return 2;
    }
  }
  return succeeded(plan) ? 0 : 1;
}

} // namespace vouch::driver
