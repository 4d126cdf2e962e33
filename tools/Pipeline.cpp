//===- Pipeline.cpp - loading a model file for the driver -------*- C++ -*-===//
#include "tools/Pipeline.h"

#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "frontend/Frontend.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "runtime/atomic_file.h"
#include "runtime/cuda/gemm_call.h"

using namespace mlir;

namespace vouch::driver {

OwningOpRef<ModuleOp> loadModel(const std::string &path,
                                DriverDiagnostics &diagnostics,
                                const LoadOptions &options) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    llvm::errs() << "error: cannot read '" << path
                 << "': " << buffer.getError().message() << "\n";
    return nullptr;
  }
  diagnostics.addSource((*buffer)->getBuffer(), path);
  MLIRContext &context = diagnostics.context();

  frontend::ImportOptions importOptions;
  importOptions.batch = options.batch;
  importOptions.configs = options.configs;
  // A file that is not a model at all gives an error per token: past the
  // limit they are counted, not printed (the gate's rejections, later, are
  // always listed whole).
  diagnostics.limitErrors(options.errorLimit, path);
  OwningOpRef<ModuleOp> module =
      frontend::importModel(diagnostics.sourceMgr(), context, importOptions);
  diagnostics.unlimitErrors();
  if (!module || failed(verify(*module)))
    return nullptr;
  if (options.autodiff) {
    PassManager pm(&context);
    addAutodiffPasses(pm, options.attention, options.recomputeMinElements,
                      options.padClasses, options.recomputeLayerNorm);
    if (failed(pm.run(*module)))
      return nullptr;
  }
  return module;
}

void declareImportOptions(CommandLine &cl) {
  cl.option("batch", "N", "override the train clause's batch size");
  cl.option("error-limit", "N",
            "print at most N errors of the model file, then one line saying "
            "the rest were not (0: every one)",
            "20");
  cl.option("config", "NAME=VALUE,...",
            "replace the values of the description's configs of these names "
            "(e.g. --config L=6,D=384)");
  cl.option("attention", "composed|fused",
            "scaled_dot_product_attention's form: composed (batched GEMMs "
            "and a masked softmax) or fused (flash_attention: one forward "
            "and three backward kernels, no Tq x Tk matrix; tensor cores "
            "under --precision tf32 or bf16); default fused for cuda (where heads fit its "
            "kernels: at most 256 features), composed for cpu");
  cl.option("recompute-min-elements", "N",
            "the backward pass computes a one-operand pointwise result (a "
            "gelu) of at least N elements again from its operand instead of "
            "keeping it from the forward pass: less memory, one more launch "
            "each (0: never)",
            "1048576");
  cl.flag("recompute-layer-norm",
          "also compute each layer_norm output of at least "
          "--recompute-min-elements elements again in the backward pass, "
          "from the x its gradient reads anyway, instead of keeping it (GPT-2: "
          "302 MB less under bf16, 604 MB under fp32 / tf32, for 24 more "
          "launches a step)");
  cl.option("pad-classes", "N",
            "pad the classes of a cross_entropy whose logits a linear "
            "computes (an LM head) with zero rows of its weight up to a "
            "multiple of N: its tensor-core products then need no padded "
            "copies of the logits or their gradient; the loss, gradients "
            "and output are the same (0: off; default 4 under --precision "
            "tf32, 8 under bf16, else 0)");
}

void declarePrecisionOption(CommandLine &cl) {
  cl.option("precision", "fp32|tf32|bf16",
            "cuda: what f32 products (cuBLAS GEMMs, the fused attention's "
            "tensor-core kernels) round their operands to; sums and storage "
            "stay f32 (profile checked_cuda[+tf32|+bf16]; the report states "
            "each capsule's)",
            "fp32");
  cl.flag("tf32", "the same as --precision tf32");
  cl.flag("bias-grad-epilogue",
          "cuda: compute each large linear's weight and bias gradients as one "
          "cuBLASLt call whose BGRADB epilogue sums the bias's, instead of a "
          "product and a column-sum kernel (which the CUDA graph runs beside "
          "the input gradient's product; measured no faster on GPT-2, "
          "docs/performance.md)");
}

std::optional<capsules::ProductPrecision>
readPrecisionOption(const CommandLine &cl) {
  auto chosen = cl.choice("precision", {"fp32", "tf32", "bf16"});
  if (!chosen)
    return std::nullopt;
  if (cl.has("tf32") && cl.has("precision") && *chosen != "tf32") {
    std::fprintf(stderr, "error: --tf32 and --precision %s contradict each "
                         "other (--tf32 means --precision tf32)\n",
                 chosen->c_str());
    return std::nullopt;
  }
  if (cl.has("tf32"))
    return capsules::ProductPrecision::Tf32;
  return *capsules::parseProductPrecision(*chosen);
}

/// scaled_dot_product_attention's default form: fused (where the heads fit
/// its kernels) when the command builds or plans for cuda (--target, --device
/// or --profile say so), composed on cpu. GPT-2 124M on an H200: fp32 177 ms a
/// step fused (24.0 GiB) vs 172 composed (42.6 GiB); tf32 67.5 fused (tensor-
/// core kernels) vs 66.0 composed (42.6 GiB) (docs/performance.md).
static std::string defaultAttention(const CommandLine &cl) {
  auto given = [&](const char *name, llvm::StringRef prefix) {
    return cl.has(name) && llvm::StringRef(cl.get(name)).starts_with(prefix);
  };
  bool cuda = given("target", "cuda") || given("device", "cuda") ||
              given("profile", "checked_cuda");
  return cuda ? "auto" : "composed";
}

/// --pad-classes' default: the product quantum (runtime/cuda/gemm_call.h's
/// product_quantum: 16 bytes of operand) of the precision the command asks
/// for, by --precision, --tf32 or a profile's +tf32 / +bf16; 0 (off) for fp32
/// products, which are never padded.
static int64_t defaultPadClasses(const CommandLine &cl) {
  llvm::StringRef precision;
  std::string given = cl.has("precision") ? cl.get("precision") : "";
  std::string profile = cl.has("profile") ? cl.get("profile") : "";
  if (cl.has("tf32") || given == "tf32" || llvm::StringRef(profile).ends_with("+tf32"))
    precision = "tf32";
  else if (given == "bf16" || llvm::StringRef(profile).ends_with("+bf16"))
    precision = "bf16";
  using rt::cuda::ProductMath;
  return precision.empty() ? 0
         : rt::cuda::product_quantum(precision == "tf32" ? ProductMath::Tf32
                                                         : ProductMath::Bf16);
}

bool readImportOptions(const CommandLine &cl, LoadOptions &options) {
  if (cl.has("attention")) {
    auto form = cl.choice("attention", {"composed", "fused"});
    if (!form)
      return false;
    options.attention = *form;
  } else {
    options.attention = defaultAttention(cl);
  }
  options.padClasses = defaultPadClasses(cl);
  // Counts: an integer of at least 0 (and at most `max`) where given, else
  // the default stays.
  struct Count {
    const char *name;
    int64_t *value;
    long long max = LLONG_MAX;
    const char *why = "";
  };
  for (const Count &count :
       {Count{"error-limit", &options.errorLimit},
        Count{"recompute-min-elements", &options.recomputeMinElements},
        Count{"pad-classes", &options.padClasses, kMaxPadClassesQuantum,
              "a tensor-core product's quantum is 4 or 8"}}) {
    if (!cl.has(count.name))
      continue;
    long long n;
    std::string error;
    if (!cl.getCount(count.name, 0, count.max, n, error, count.why)) {
      llvm::errs() << "error: " << error << "\n";
      return false;
    }
    *count.value = n;
  }
  options.recomputeLayerNorm = cl.has("recompute-layer-norm");
  if (cl.has("config")) {
    std::string given = cl.get("config");
    llvm::SmallVector<llvm::StringRef> items;
    llvm::StringRef(given).split(items, ',');
    for (llvm::StringRef item : items) {
      auto [name, text] = item.trim().split('=');
      double value;
      bool ok = !name.trim().empty() && item.contains('=') &&
                !text.trim().getAsDouble(value) && std::isfinite(value);
      if (!ok) {
        llvm::errs() << "error: --config expects NAME=NUMBER entries separated "
                        "by commas, got '"
                     << item << "'\n";
        return false;
      }
      options.configs[name.trim().str()] = value;
    }
  }
  if (!cl.has("batch"))
    return true;
  long long batch;
  std::string error;
  if (!cl.getCount("batch", 1, LLONG_MAX, batch, error)) {
    llvm::errs() << "error: " << error << "\n";
    return false;
  }
  options.batch = batch;
  return true;
}

OwningOpRef<ModuleOp> loadFromCommandLine(const CommandLine &cl,
                                          bool autodiff,
                                          DriverDiagnostics &diagnostics,
                                          int &exitCode) {
  LoadOptions options;
  options.autodiff = autodiff;
  exitCode = 2;
  if (!readImportOptions(cl, options))
    return nullptr;
  exitCode = 1;
  return loadModel(cl.positional()[0], diagnostics, options);
}

std::string outputPathProblem(const std::string &output,
                              const std::string &input) {
  namespace fs = std::filesystem;
  if (output.empty())
    return "-o needs a file name";
  std::error_code ec;
  const fs::file_status status = fs::status(output, ec);
  if (fs::is_directory(status))
    return "-o '" + output + "' is a directory; name the file to write";
  if (fs::exists(status) && !fs::is_regular_file(status))
    return "-o '" + output +
           "' exists and is not a regular file (a device, FIFO or socket); "
           "vouch replaces its output by a rename and will not replace that";
  if (fs::exists(status) && fs::equivalent(output, input, ec) && !ec)
    return "-o '" + output + "' is the model file '" + input +
           "' itself; writing there would destroy the source. Name another "
           "output";
  return "";
}

std::string outputDirectoryProblem(const std::string &output) {
  // The probe is the temporary file the output is written through.
  rt::Result<std::string> probe = rt::temp_file_beside(output);
  if (!probe.ok())
    return probe.status().message();
  std::remove(probe.value().c_str());
  return "";
}

ModelOp getModel(ModuleOp module) {
  for (Operation &op : module.getBody()->getOperations())
    if (auto model = dyn_cast<ModelOp>(op))
      return model;
  return nullptr;
}

FailureOr<AcceptedGraphPlan>
planForProfile(ModelOp model, const capsules::BackendProfile &profile,
               const capsules::GateOptions &options,
               capsules::GateRejection *rejection, bool biasGradEpilogue) {
  if (profile.device == capsules::Device::Cuda) {
    PassManager pm(model.getContext(), ModelOp::getOperationName());
    addCudaPasses(pm, profile.smallProducts, profile.products,
                  biasGradEpilogue);
    if (failed(pm.run(model)))
      return failure();
  }
  return planAndGate(model, profile, options, rejection);
}

} // namespace vouch::driver
