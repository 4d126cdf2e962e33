// train_flags_fuzzer.cc: the executables' flag parser (runtime/train_flags.h)
// against arbitrary command lines.
//
// The input is the arguments, one per line (argv[0] is "model"); a NUL byte ends an
// argument too, as it ends a C string of argv. Two models are
// parsed against: one with an eval clause and a data clause, one without. Properties,
// besides "no crash, no sanitizer report": an accepted command line gives options the
// training loop can run (steps >= 0, log_every > 0, eval_every >= 0, --predict and
// --sample never with --init-only, --prompt only with --vocab and --sample, a finite
// temperature >= 0); a refusal says why; and `--flag=V` means exactly `--flag V`
// (each argument written the other way, the options, or the refusal, are the same).
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/model_api.h"
#include "runtime/train_flags.h"
#include "tests/fuzz/fuzz_file.h"

using namespace vouch::rt;
using vouch::fuzz::fail;

namespace {

const std::vector<ModelDescription>& models() {
  static const std::vector<ModelDescription> all = [] {
    ModelDescription plain;
    plain.name = "plain";
    plain.steps = 200;
    plain.log_every = 25;
    ModelDescription held_out = plain;
    held_out.name = "held_out";
    held_out.data = DataSpec{DataSpec::Npy};
    held_out.data.path = "x.npy,y.npy";
    held_out.eval_data.path = "test_x.npy,test_y.npy";
    held_out.eval_every = 50;
    held_out.shuffle = true;
    return std::vector<ModelDescription>{plain, held_out};
  }();
  return all;
}

// Everything parse_train_flags sets, as text: two parses agree when these do.
std::string describe(const TrainOptions& o) {
  std::ostringstream s;
  s.precision(17);
  s << int(o.device) << '|' << o.steps << '|' << o.seed << '|' << o.f32 << o.dtype_given << '|'
    << o.log_every << '|' << o.data << '|' << o.eval << '|' << o.eval_from_clause << '|'
    << o.eval_fraction << '|' << o.eval_every << '|' << o.shuffle << '|' << int(o.progress)
    << '|' << o.predict << '|' << o.predict_out << '|' << o.sample << '|' << o.temperature
    << '|' << o.prompt << '|' << o.vocab << '|' << o.save_params << '|' << o.load_params
    << '|' << o.trace << '|' << o.profile_launches << '|' << o.init_only << o.show_tape
    << o.help << o.show_backend << o.mem_stats << o.time << o.allow_nonfinite << '|'
    << o.run.cuda_graph << o.run.deterministic << o.run.audit_launches << o.run.profile << o.run.seed;
  return s.str();
}

std::string parse(std::vector<std::string> args, const ModelDescription& model, bool* ok) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  Result<TrainOptions> r = parse_train_flags(int(argv.size()), argv.data(), model);
  *ok = r.ok();
  if (!r.ok()) {
    if (r.status().message().empty()) fail("a refusal without a reason");
    return r.status().message();
  }
  const TrainOptions& o = r.value();
  if (o.steps < 0 || o.log_every <= 0 || o.eval_every < 0 || o.sample < 0)
    fail("accepted counts a run cannot use: " + describe(o));
  if ((!o.predict.empty() || o.sample > 0) && o.init_only)
    fail("accepted --predict or --sample with --init-only");
  if ((!o.prompt.empty() && (o.vocab.empty() || o.sample == 0)))
    fail("accepted --prompt without --vocab and --sample");
  if (!std::isfinite(o.temperature) || o.temperature < 0) fail("accepted a bad temperature");
  if (o.eval_every > 0 && o.eval.empty() && o.eval_fraction == 0)
    fail("accepted --eval-every without held-out data");
  return describe(o);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args = {"model"};
  std::string arg;
  for (size_t i = 0; i <= size; i++) {
    if (i == size || data[i] == '\n' || data[i] == '\0') {
      args.push_back(arg);
      arg.clear();
    } else {
      arg += char(data[i]);
    }
  }
  if (args.size() > 64) return 0;  // a command line, not a file

  for (const ModelDescription& model : models()) {
    bool ok;
    const std::string first = parse(args, model, &ok);
    // The same command line with every "--flag=V" written as "--flag V", where that
    // spelling means the same: V not empty and not itself starting with "--".
    std::vector<std::string> split = {args[0]};
    bool rewritten = false;
    for (size_t i = 1; i < args.size(); i++) {
      const std::string& a = args[i];
      const size_t eq = a.find('=');
      if (a.rfind("--", 0) == 0 && eq != std::string::npos && eq > 2 && eq + 1 < a.size() &&
          a.compare(eq + 1, 2, "--") != 0) {
        split.push_back(a.substr(0, eq));
        split.push_back(a.substr(eq + 1));
        rewritten = true;
      } else {
        split.push_back(a);
      }
    }
    if (!rewritten) continue;
    bool split_ok;
    const std::string second = parse(split, model, &split_ok);
    if (ok != split_ok || (ok && first != second))
      fail("'--flag=V' and '--flag V' differ: " + first + " versus " + second);
  }
  return 0;
}
