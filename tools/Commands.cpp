//===- Commands.cpp - check, emit-ir, run --interpret -----------*- C++ -*-===//
#include "tools/Commands.h"

#include <cstdio>

#include "codegen/ModelDescription.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/MLIRContext.h"
#include "passes/Interpreter.h"
#include "runtime/memory.h"
#include "runtime/model_data.h"
#include "runtime/safetensors.h"
#include "tools/CommandLine.h"
#include "tools/ModelData.h"
#include "tools/Pipeline.h"

using namespace mlir;

namespace vouch::driver {
namespace {

/// 0 when the reference interpreter's run of `model` fits in the host memory
/// available; else prints why not and returns 6 (docs/language.md's exit
/// statuses). The interpreter keeps every value as float64 until the run
/// ends, and the params twice more (initialised, then fed).
int checkInterpreterMemory(ModelOp model) {
  std::vector<rt::MemoryPart> need = {{"values", 0}, {"float64 copies of the params", 0}};
  for (Operation &op : model.getBlock())
    for (Value result : op.getResults())
      if (auto type = dyn_cast<ShapedType>(result.getType());
          type && type.hasStaticShape()) {
        const uint64_t bytes =
            rt::mul_bytes(static_cast<uint64_t>(type.getNumElements()), 8);
        need[0].bytes = rt::add_bytes(need[0].bytes, bytes);
        if (isa<ParamOp>(op))
          need[1].bytes = rt::add_bytes(need[1].bytes, rt::mul_bytes(bytes, 2));
      }
  std::string source;
  rt::Result<uint64_t> available = rt::host_memory_available(&source);
  if (!available.ok())
    return 0;
  rt::Status fits = rt::check_memory_fits(
      model.getSymName().str(), "the reference interpreter (float64)", "host",
      need, available.value(), source);
  if (fits.ok())
    return 0;
  std::fprintf(stderr, "error: %s\n", fits.message().c_str());
  return 6;
}

} // namespace

int runCheck(const std::vector<std::string> &args) {
  CommandLine cl("check", "parse, lower and verify a model description",
                 "[options] FILE");
  declareImportOptions(cl);
  cl.flag("autodiff", "also build (and verify) the gradient graph");
  if (int code = cl.parseOrExit(args, 1); code >= 0)
    return code;
  MLIRContext context;
  DriverDiagnostics diagnostics(context);
  int exitCode;
  auto module = loadFromCommandLine(cl, cl.has("autodiff"), diagnostics, exitCode);
  if (!module)
    return exitCode;
  ModelOp model = getModel(*module);
  int params = 0;
  for (Operation &op : model.getBlock())
    params += isa<ParamOp>(op);
  std::printf("%s: ok (model '%s', %d params, batch %lld)\n",
              cl.positional()[0].c_str(), model.getSymName().str().c_str(),
              params, static_cast<long long>(model.getBatch()));
  return 0;
}

int runEmitIR(const std::vector<std::string> &args) {
  CommandLine cl("emit-ir", "print the model in the vouch dialect",
                 "[options] FILE");
  cl.option("stage", "import|autodiff", "after which stage to print",
            "import");
  declareImportOptions(cl);
  cl.flag("generic", "print ops in MLIR's generic form");
  if (int code = cl.parseOrExit(args, 1); code >= 0)
    return code;
  auto stage = cl.choice("stage", {"import", "autodiff"});
  if (!stage)
    return 2;
  MLIRContext context;
  DriverDiagnostics diagnostics(context);
  int exitCode;
  auto module =
      loadFromCommandLine(cl, *stage == "autodiff", diagnostics, exitCode);
  if (!module)
    return exitCode;
  OpPrintingFlags flags;
  if (cl.has("generic"))
    flags.printGenericOpForm();
  module->print(llvm::outs(), flags);
  llvm::outs() << "\n";
  return 0;
}

int runInterpret(const std::vector<std::string> &args) {
  CommandLine cl("run",
                 "run the forward pass on the data's first batch in the "
                 "float64 reference interpreter (seeded initialisation)",
                 "--interpret [options] FILE");
  cl.flag("interpret", "use the reference interpreter (required for now: "
                       "compiled runs are 'vouch build')");
  cl.option("seed", "S", "initialisation seed", "0");
  cl.option("dtype", "f64|f32", "interpreter precision", "f64");
  declareImportOptions(cl);
  cl.option("data", "PATH", "data file (x.csv, or x.npy,y.npy) instead of the "
                            "data clause");
  cl.option("save-params", "PATH", "write the initial params and state (safetensors)");
  cl.flag("precise", "print numbers with 17 significant digits");
  if (int code = cl.parseOrExit(args, 1); code >= 0)
    return code;
  if (!cl.has("interpret")) {
    std::fprintf(stderr, "error: 'vouch run' needs --interpret (to compile "
                         "and run a model natively, use 'vouch build')\n");
    return 2;
  }
  auto chosen = cl.choice("dtype", {"f64", "f32"});
  if (!chosen)
    return 2;
  std::string dtype = *chosen;
  unsigned long long seed;
  if (!parseSeed(cl.get("seed"), seed)) {
    std::fprintf(stderr, "error: --seed expects an unsigned integer, got "
                         "'%s'\n", cl.get("seed").c_str());
    return 2;
  }
  MLIRContext context;
  DriverDiagnostics diagnostics(context);
  int exitCode;
  auto module = loadFromCommandLine(cl, /*autodiff=*/false, diagnostics, exitCode);
  if (!module)
    return exitCode;
  ModelOp model = getModel(*module);

  FailureOr<rt::ModelDescription> description = codegen::describeModel(model);
  if (failed(description))
    return 1;
  if (int code = checkInterpreterMemory(model); code != 0)
    return code;
  rt::Result<rt::Dataset> data =
      rt::load_model_data(*description, cl.get("data"));
  // An f32 run refuses a value that would round to infinity, as the
  // executables do.
  rt::Status fits =
      !data.ok() ? data.status()
      : dtype == "f32"
          ? rt::check_fits_f32(*description, data.value(),
                               cl.has("data") ? cl.get("data")
                                              : description->data.path)
          : rt::Status::Ok();
  if (!fits.ok()) {
    std::fprintf(stderr, "error: %s\n", fits.message().c_str());
    return 1;
  }
  std::string error;
  std::map<std::string, HostTensor> feeds;
  if (!feedBatch(model, data.value(), /*batchIndex=*/0, feeds, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  std::vector<rt::NamedTensor> params = rt::initial_params(*description, seed);
  // The state (batch_norm's running statistics) as an executable starts it,
  // saved after the params as its checkpoints are.
  for (const rt::StateInfo &s : description->states)
    params.push_back({s.name, s.shape,
                      std::vector<double>(static_cast<size_t>(s.numel), s.init)});
  for (const rt::NamedTensor &p : params)
    feeds[p.name] = HostTensor{p.shape, p.data};
  if (cl.has("save-params")) {
    rt::Status saved =
        rt::save_safetensors(cl.get("save-params"), params, /*as_f64=*/true);
    if (!saved.ok()) {
      std::fprintf(stderr, "error: %s\n", saved.message().c_str());
      return 1;
    }
  }

  auto result = interpret(model, feeds,
                          dtype == "f64" ? Precision::F64 : Precision::F32);
  if (failed(result))
    return 1;
  const char *format = cl.has("precise") ? "%.17g" : "%f";
  std::printf("%s: forward pass in the reference interpreter (%s, seed %llu)\n",
              model.getSymName().str().c_str(), dtype.c_str(), seed);
  std::printf("  batch 0: rows 0..%lld of %s\n",
              static_cast<long long>(model.getBatch() - 1),
              data.value().description.c_str());
  for (const auto &[name, tensor] : result->outputs) {
    std::printf("  %s = [", name.c_str());
    for (size_t i = 0; i < tensor.data.size(); ++i) {
      if (i)
        std::printf(", ");
      std::printf(format, tensor.data[i]);
    }
    std::printf("]\n");
  }
  if (result->hasLoss) {
    std::printf("  loss = ");
    std::printf(format, result->loss);
    std::printf("\n");
  }
  return 0;
}

} // namespace vouch::driver
