//===- BuildCommand.cpp - vouch build ---------------------------*- C++ -*-===//
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "capsules/Profile.h"
#include "codegen/CpuEmitter.h"
#include "codegen/CudaEmitter.h"
#include "codegen/CudaSchedule.h"
#include "codegen/Nvrtc.h"
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
  cl.option("target", "cpu|cuda",
            "cpu: reference kernels only; cuda: also NVRTC kernels and "
            "cuBLAS (the executable then runs on either, --device picks)",
            "cpu");
  cl.flag("tf32", "cuda: let cuBLAS GEMMs compute in TF32 (profile "
                  "checked_cuda+tf32; the report says so)");
  cl.option("emit", "exe|cpp", "write an executable, or only its C++ source",
            "exe");
  cl.option("emit-dir", "DIR", "keep the generated sources in DIR");
  cl.option("batch", "N", "override the train clause's batch size");
  cl.option("cxx", "COMPILER", "the host C++ compiler", "g++");
  cl.flag("verbose", "print the compiler commands");
  if (int code = cl.parseOrExit(args, 1); code >= 0)
    return code;
  if (!cl.has("output")) {
    std::fprintf(stderr, "error: -o OUT is required\n\n%s", cl.help().c_str());
    return 2;
  }
  auto chosenTarget = cl.choice("target", {"cpu", "cuda"});
  auto chosenEmit = cl.choice("emit", {"exe", "cpp"});
  if (!chosenTarget || !chosenEmit)
    return 2;
  std::string target = *chosenTarget, emit = *chosenEmit, error;
  MLIRContext context;
  int exitCode;
  auto module = loadFromCommandLine(cl, /*autodiff=*/true, context, exitCode);
  if (!module)
    return exitCode;
  // The cpu backend is planned on a copy: planning records its choices on
  // the ops, and the cuda backend (if any) is planned on the original.
  OwningOpRef<ModuleOp> cpuModule = module->clone();
  auto cpuProfile = capsules::parseProfileSpec("checked_cpu");
  auto cpuPlan = planForProfile(getModel(*cpuModule), *cpuProfile, {});
  if (failed(cpuPlan))
    return 1; // the gate printed every failed obligation
  codegen::CpuEmitOptions emitOptions;
  emitOptions.sourceName = cl.positional()[0];
  emitOptions.emitMain = target == "cpu";
  FailureOr<std::string> source =
      codegen::emitCpuModel(getModel(*cpuModule), *cpuPlan, emitOptions);
  if (failed(source))
    return 1;
  std::string kernels;
  if (target == "cuda") {
    auto cudaProfile = capsules::parseProfileSpec(
        cl.has("tf32") ? "checked_cuda+tf32" : "checked_cuda");
    ModelOp model = getModel(*module);
    auto cudaPlan = planForProfile(model, *cudaProfile, {});
    if (failed(cudaPlan))
      return 1;
    auto schedule = codegen::scheduleForCuda(model);
    if (failed(schedule))
      return 1;
    kernels = codegen::emitCudaKernels(model, *schedule);
    codegen::CudaBinary binary;
    std::fprintf(stderr, "vouch: compiling %zu CUDA kernels with NVRTC %s "
                         "for sm_90\n",
                 codegen::kernelSymbols(*schedule).size() + 2,
                 codegen::nvrtcVersionString().c_str());
    if (!codegen::compileCuda(kernels, model.getSymName().str() + ".cu",
                              "sm_90", binary, error)) {
      std::fprintf(stderr, "error: %s", error.c_str());
      return 1;
    }
    FailureOr<std::string> cudaSource =
        codegen::emitCudaBackend(model, *cudaPlan, *schedule, binary);
    if (failed(cudaSource))
      return 1;
    *source += *cudaSource;
  }
  if (cl.has("emit-dir") && !kernels.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(cl.get("emit-dir"), ec);
    std::ofstream(std::filesystem::path(cl.get("emit-dir")) / "kernels.cu")
        << kernels;
  }

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
  buildOptions.cuda = target == "cuda";
  if (!codegen::buildExecutable(*source, buildOptions, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  return 0;
}

} // namespace vouch::driver
