//===- BuildCommand.cpp - vouch build ---------------------------*- C++ -*-===//
#include <cstdio>
#include <fstream>

#include "codegen/CpuEmitter.h"
#include "codegen/NativeBuild.h"
#include "mlir/IR/MLIRContext.h"
#include "tools/CommandLine.h"
#include "tools/Commands.h"
#include "tools/Pipeline.h"

using namespace mlir;

namespace vouch::driver {

int runBuild(const std::vector<std::string> &args) {
  CommandLine cl("build",
                 "compile a model description to a native executable that "
                 "trains it (run it with --help for its options)",
                 "[options] FILE -o OUT");
  cl.option("output", "OUT", "the executable (or source, with --emit=cpp) "
                             "to write; also -o");
  cl.option("target", "cpu", "what the executable runs on", "cpu");
  cl.option("emit", "exe|cpp", "write an executable, or only its C++ source",
            "exe");
  cl.option("emit-dir", "DIR", "keep the generated sources in DIR");
  cl.option("batch", "N", "override the train clause's batch size");
  cl.option("cxx", "COMPILER", "the host C++ compiler", "g++");
  cl.flag("verbose", "print the compiler commands");
  std::string error;
  if (!cl.parse(args, error)) {
    std::fprintf(stderr, "error: %s\n(see 'vouch build --help')\n",
                 error.c_str());
    return 2;
  }
  if (cl.wantsHelp()) {
    std::fputs(cl.help().c_str(), stdout);
    return 0;
  }
  if (cl.positional().size() != 1 || !cl.has("output")) {
    std::fprintf(stderr, "error: expected one model file and -o OUT\n\n%s",
                 cl.help().c_str());
    return 2;
  }
  std::string target = cl.get("target"), emit = cl.get("emit");
  if (target == "cuda") {
    std::fprintf(stderr, "error: the cuda target is not implemented yet; "
                         "build with --target cpu\n");
    return 2;
  }
  if (target != "cpu") {
    std::fprintf(stderr, "error: unknown target '%s' (known: cpu, cuda)\n",
                 target.c_str());
    return 2;
  }
  if (emit != "exe" && emit != "cpp") {
    std::fprintf(stderr, "error: --emit must be exe or cpp, got '%s'\n",
                 emit.c_str());
    return 2;
  }
  LoadOptions options;
  options.autodiff = true;
  if (cl.has("batch")) {
    long long batch;
    if (!cl.getInt("batch", batch, error) || batch < 1) {
      std::fprintf(stderr, "error: --batch expects an integer ≥ 1\n");
      return 2;
    }
    options.batch = batch;
  }
  MLIRContext context;
  auto module = loadModel(cl.positional()[0], context, options);
  if (!module)
    return 1;
  auto cpuProfile = capsules::parseProfileSpec("checked_cpu");
  auto plan = planForProfile(getModel(*module), *cpuProfile, {});
  if (failed(plan))
    return 1; // the gate printed every failed obligation
  codegen::CpuEmitOptions emitOptions;
  emitOptions.sourceName = cl.positional()[0];
  FailureOr<std::string> source =
      codegen::emitCpuModel(getModel(*module), *plan, emitOptions);
  if (failed(source))
    return 1;

  if (emit == "cpp") {
    std::ofstream out(cl.get("output"), std::ios::binary);
    out << *source;
    out.close();
    if (!out) {
      std::fprintf(stderr, "error: cannot write '%s'\n",
                   cl.get("output").c_str());
      return 1;
    }
    return 0;
  }
  codegen::NativeBuildOptions buildOptions;
  buildOptions.output = cl.get("output");
  buildOptions.emitDir = cl.get("emit-dir");
  buildOptions.cxx = cl.get("cxx");
  buildOptions.verbose = cl.has("verbose");
  if (!codegen::buildExecutable(*source, buildOptions, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  return 0;
}

} // namespace vouch::driver
