//===- reference.cpp - the float64 interpreter's view of one training step -===//
//
// The oracle side of the differential test (difftest.py): for a model, its
// data and a set of parameters (an executable's --save-params), one batch is
// run through the reference interpreter (passes/Interpreter.h), which shares
// no code with codegen or the runtime's kernels:
//   - the forward pass of the model as imported: the loss and the outputs;
//   - the model differentiated by vouch-decompose + vouch-autodiff, run by the
//     same interpreter: every parameter's gradient;
//   - with --fd N, central finite differences of the forward loss for up to N
//     elements of every parameter (spread evenly over its elements), with the
//     two one-sided differences beside them, so the caller can tell a kink
//     (relu at 0, max at a tie) from a wrong gradient.
// Prints one JSON object (numbers with 17 significant digits, NaN and
// Infinity as Python's json reads them).
//
// usage: reference MODEL.vouch --params P.safetensors --data SPEC --batch-index K
//                  [--fd N] [--seed S] [--plain-step T]
// (--data as the executable's. The random ops draw as in training step K of a
// run with seed S, dropout applied; with --plain-step T as in a forward that
// is not a training step after T steps, as --predict's: docs/language.md,
// "Random ops".)
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "codegen/ModelDescription.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Interpreter.h"
#include "passes/Passes.h"
#include "runtime/model_data.h"
#include "runtime/safetensors.h"
#include "tools/Diagnostics.h"
#include "tools/ModelData.h"
#include "tools/Pipeline.h"

using namespace vouch;

namespace {

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "reference: %s\n", message.c_str());
  std::exit(1);
}

std::string number(double v) {
  if (std::isnan(v))
    return "NaN";
  if (std::isinf(v))
    return v > 0 ? "Infinity" : "-Infinity";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string array(const std::vector<double> &values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? "," : "") + number(values[i]);
  return s + "]";
}

std::string quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s)
    out += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

struct Args {
  std::string model, params, data;
  int64_t batchIndex = 0, fd = 0, plainStep = -1;
  uint64_t seed = 0;
};

Args parseArgs(int argc, char **argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        die(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--params")
      a.params = value();
    else if (arg == "--data")
      a.data = value();
    else if (arg == "--batch-index")
      a.batchIndex = std::stoll(value());
    else if (arg == "--fd")
      a.fd = std::stoll(value());
    else if (arg == "--seed")
      a.seed = std::stoull(value());
    else if (arg == "--plain-step")
      a.plainStep = std::stoll(value());
    else if (!arg.empty() && arg[0] != '-' && a.model.empty())
      a.model = arg;
    else
      die("unexpected argument '" + arg + "'");
  }
  if (a.model.empty() || a.params.empty())
    die("usage: reference MODEL --params P.safetensors [--data SPEC] "
        "[--batch-index K] [--fd N] [--seed S]");
  return a;
}

} // namespace

int main(int argc, char **argv) {
  Args args = parseArgs(argc, argv);
  mlir::MLIRContext context;
  driver::DriverDiagnostics diagnostics(context);
  mlir::OwningOpRef<mlir::ModuleOp> forward =
      driver::loadModel(args.model, diagnostics, driver::LoadOptions{});
  mlir::OwningOpRef<mlir::ModuleOp> differentiated =
      driver::loadModel(args.model, diagnostics, [] {
        driver::LoadOptions o;
        o.autodiff = true;
        return o;
      }());
  if (!forward || !differentiated)
    die("the model does not load");
  ModelOp model = driver::getModel(*forward);
  ModelOp trained = driver::getModel(*differentiated);

  mlir::FailureOr<rt::ModelDescription> description = codegen::describeModel(model);
  if (mlir::failed(description))
    die("the model cannot be described");
  rt::Result<rt::Dataset> data = rt::load_model_data(*description, args.data);
  if (!data.ok())
    die(data.status().message());
  std::map<std::string, HostTensor> feeds;
  std::string error;
  if (!driver::feedBatch(model, data.value(), args.batchIndex, feeds, error))
    die(error);
  rt::Result<std::vector<rt::NamedTensor>> params = rt::load_safetensors(args.params);
  if (!params.ok())
    die(params.status().message());
  for (const rt::NamedTensor &p : params.value())
    feeds[p.name] = HostTensor{p.shape, p.data};

  // Training step K of a run with this seed (dropout applies, as in the
  // executable's step), or a plain forward after T steps.
  RandomContext random =
      args.plainStep >= 0
          ? RandomContext{args.seed, static_cast<uint64_t>(args.plainStep), false}
          : RandomContext{args.seed, static_cast<uint64_t>(args.batchIndex), true};
  auto run = [&](ModelOp m, const std::map<std::string, HostTensor> &f) {
    auto result = interpret(m, f, Precision::F64, random);
    if (mlir::failed(result))
      die("the interpreter failed");
    return std::move(*result);
  };
  InterpreterResult plain = run(model, feeds);
  InterpreterResult grads = run(trained, feeds);

  std::string out = "{\"loss\":" + number(plain.loss) + ",\"outputs\":{";
  bool first = true;
  for (const auto &[name, t] : plain.outputs) {
    out += (first ? "" : ",") + quote(name) + ":" + array(t.data);
    first = false;
  }
  out += "},\"grads\":{";
  first = true;
  for (const auto &[name, t] : grads.paramGrads) {
    out += (first ? "" : ",") + quote(name) + ":" + array(t.data);
    first = false;
  }
  out += "},\"fd\":{";
  first = true;
  if (args.fd > 0) {
    for (const rt::NamedTensor &p : params.value()) {
      const size_t n = p.data.size();
      const size_t count = std::min<size_t>(n, static_cast<size_t>(args.fd));
      std::vector<double> index, central, plus, minus;
      for (size_t k = 0; k < count; ++k) {
        const size_t i = count == n ? k : k * n / count;
        const double x = p.data[i];
        const double h = 1e-6 * std::max(1.0, std::fabs(x));
        auto lossAt = [&](double v) {
          std::map<std::string, HostTensor> f = feeds;
          f[p.name].data[i] = v;
          return run(model, f).loss;
        };
        const double up = lossAt(x + h), down = lossAt(x - h);
        index.push_back(static_cast<double>(i));
        central.push_back((up - down) / (2 * h));
        plus.push_back((up - plain.loss) / h);
        minus.push_back((plain.loss - down) / h);
      }
      out += (first ? "" : ",") + quote(p.name) + ":{\"index\":" + array(index) +
             ",\"central\":" + array(central) + ",\"plus\":" + array(plus) +
             ",\"minus\":" + array(minus) + "}";
      first = false;
    }
  }
  out += "}}\n";
  std::fputs(out.c_str(), stdout);
  return 0;
}
