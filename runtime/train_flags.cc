// train_flags.cc: flag parsing and --help for generated executables (train_flags.h).
#include "runtime/train_flags.h"

#include "runtime/train_main.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string_view>

namespace vouch::rt {

namespace {

template <class Int>
bool parse_int(const std::string& text, Int* out) {
  const char* b = text.data();
  const char* e = b + text.size();
  auto [ptr, ec] = std::from_chars(b, e, *out);
  return !text.empty() && ec == std::errc() && ptr == e;
}

bool takes_value(std::string_view name) {
  return name == "device" || name == "steps" || name == "seed" || name == "dtype" ||
         name == "log-every" || name == "data" || name == "save-params" ||
         name == "load-params" || name == "trace" || name == "eval" ||
         name == "eval-every" || name == "predict" || name == "predict-out" ||
         name == "sample" || name == "temperature" || name == "prompt" || name == "vocab" ||
         name == "profile-launches";
}

bool is_switch(std::string_view name) {
  return name == "init-only" || name == "show-tape" || name == "help" ||
         name == "show-backend" || name == "mem-stats" || name == "no-cuda-graph" ||
         name == "deterministic" || name == "time" || name == "audit-launches" ||
         name == "no-shuffle" || name == "no-eval" || name == "progress" ||
         name == "no-progress" || name == "profile" || name == "allow-nonfinite";
}

Status apply(TrainOptions* o, const std::string& name, const std::string& value) {
  const std::string flag = "--" + name;
  if (name == "device") {
    Result<Device> d = parse_device(value);
    if (!d.ok()) return Status::Error(flag + ": " + d.status().message());
    o->device = d.value();
  } else if (name == "steps") {
    if (!parse_int(value, &o->steps) || o->steps < 0)
      return Status::Error(flag + " expects a non-negative integer, got '" + value + "'");
  } else if (name == "seed") {
    if (!parse_int(value, &o->seed))
      return Status::Error(flag + " expects an unsigned 64-bit integer, got '" + value + "'");
    o->run.seed = o->seed;
  } else if (name == "dtype") {
    if (value != "f64" && value != "f32")
      return Status::Error(flag + " expects f64 or f32, got '" + value + "'");
    o->f32 = value == "f32";
    o->dtype_given = true;
  } else if (name == "log-every") {
    if (!parse_int(value, &o->log_every) || o->log_every <= 0)
      return Status::Error(flag + " expects a positive integer, got '" + value + "'");
  } else if (name == "data") {
    o->data = value;
  } else if (name == "eval") {
    o->eval = value;
  } else if (name == "predict") {
    o->predict = value;
  } else if (name == "predict-out") {
    o->predict_out = value;
  } else if (name == "sample") {
    if (!parse_int(value, &o->sample) || o->sample <= 0)
      return Status::Error(flag + " expects a positive integer, got '" + value + "'");
  } else if (name == "temperature") {
    char* end = nullptr;
    o->temperature = std::strtod(value.c_str(), &end);
    if (end != value.c_str() + value.size() || !std::isfinite(o->temperature) ||
        o->temperature < 0)
      return Status::Error(flag + " expects a finite number >= 0, got '" + value + "'");
  } else if (name == "prompt") {
    o->prompt = value;
  } else if (name == "vocab") {
    o->vocab = value;
  } else if (name == "eval-every") {
    if (!parse_int(value, &o->eval_every) || o->eval_every <= 0)
      return Status::Error(flag + " expects a positive integer, got '" + value + "'");
  } else if (name == "trace") {
    o->trace = value;
  } else if (name == "profile-launches") {
    o->profile_launches = value;
    o->run.profile = true;
  } else if (name == "save-params") {
    o->save_params = value;
  } else if (name == "load-params") {
    o->load_params = value;
  }
  return Status::Ok();
}

}  // namespace

Result<TrainOptions> parse_train_flags(int argc, char** argv, const ModelDescription& model) {
  TrainOptions o;
  o.steps = model.steps;
  o.log_every = model.log_every;
  o.shuffle = model.shuffle;
  bool eval_given = false, no_eval = false, eval_every_given = false;
  bool shapes_sample = false;  // --temperature, --prompt or --vocab, which only --sample reads
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0)
      return Status::Error("unexpected argument '" + arg + "'");
    size_t eq = arg.find('=');
    std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (is_switch(name)) {
      if (eq != std::string::npos) return Status::Error("--" + name + " takes no value");
      if (name == "init-only") o.init_only = true;
      if (name == "show-tape") o.show_tape = true;
      if (name == "help") o.help = true;
      if (name == "show-backend") o.show_backend = true;
      if (name == "mem-stats") o.mem_stats = true;
      if (name == "no-cuda-graph") o.run.cuda_graph = false;
      if (name == "deterministic") o.run.deterministic = true;
      if (name == "time") o.time = true;
      if (name == "audit-launches") o.run.audit_launches = true;
      if (name == "profile") o.run.profile = true;
      if (name == "no-shuffle") o.shuffle = false;
      if (name == "no-eval") no_eval = true;
      if (name == "progress") o.progress = TrainOptions::Progress::On;
      if (name == "no-progress") o.progress = TrainOptions::Progress::Off;
      if (name == "allow-nonfinite") o.allow_nonfinite = true;
      continue;
    }
    if (!takes_value(name)) return Status::Error("unknown flag '--" + name + "'");
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < argc && std::string_view(argv[i + 1]).substr(0, 2) != "--") {
      value = argv[++i];
    } else {
      return Status::Error("--" + name + " needs a value");
    }
    if (value.empty()) return Status::Error("--" + name + " needs a value");
    eval_given |= name == "eval";
    eval_every_given |= name == "eval-every";
    shapes_sample |= name == "temperature" || name == "prompt" || name == "vocab";
    Status st = apply(&o, name, value);
    if (!st.ok()) return st;
  }
  if (!o.predict.empty() && o.init_only)
    return Status::Error("--predict runs the forward pass; --init-only stops before it");
  if (o.sample > 0 && o.init_only)
    return Status::Error("--sample runs the forward pass; --init-only stops before it");
  if (o.sample == 0 && shapes_sample)
    return Status::Error("--temperature, --prompt and --vocab shape --sample's text: give "
                         "--sample N too");
  if (!o.prompt.empty() && o.vocab.empty())
    return Status::Error("--prompt is text: give --vocab to turn it into tokens");
  if (no_eval && eval_given) return Status::Error("--eval and --no-eval contradict each other");
  // The eval clause's held-out data unless --eval or --no-eval says otherwise.
  if (!eval_given && !no_eval) {
    o.eval = model.eval_data.path;
    o.eval_from_clause = !o.eval.empty();
    o.eval_fraction = model.eval_fraction;
    if (!eval_every_given) o.eval_every = model.eval_every;
  }
  if (o.eval_every > 0 && o.eval.empty() && o.eval_fraction == 0)
    return Status::Error(no_eval ? "--eval-every and --no-eval contradict each other"
                                 : "--eval-every needs held-out data (--eval, or the model's "
                                   "eval clause)");
  return o;
}

bool run_in_f32(const TrainOptions& o, Device device) {
  return o.dtype_given ? o.f32 : device == Device::Cuda;
}

std::string describe_data_spec(const DataSpec& data) {
  if (data.kind == DataSpec::Tokens)
    return "tokens(" + data.path + ", order " + (data.random ? "random" : "sequential") + ")";
  if (data.kind != DataSpec::RegressionGrid) return data.path;
  std::ostringstream s;
  s << "regression_grid(" << data.lo << ", " << data.hi << ", " << data.n << ")";
  return s.str();
}

std::string describe_eval(const ModelDescription& model) {
  if (!model.eval_data.path.empty()) return model.eval_data.path;
  if (model.eval_fraction > 0) {
    std::ostringstream s;
    s << "the last " << model.eval_fraction << " of the data's rows";
    return s.str();
  }
  return "none";
}

std::string train_usage(const std::string& program, const ModelDescription& model) {
  std::ostringstream s;
  s << "usage: " << program << " [flags]\n"
    << "Trains the compiled model `" << model.name << "` and prints its losses.\n\n"
    << "  --device NAME       auto, cpu, cuda, rocm, metal, wasm, tpu, trainium, custom,\n"
    << "                      external (default: auto: cuda when this executable has a\n"
    << "                      cuda backend and a usable device, else cpu)\n"
    << "  --steps N           training steps (default: " << model.steps << ")\n"
    << "  --seed S            run seed, an unsigned 64-bit integer (default: 0)\n"
    << "  --dtype f64|f32     element type of the run (default: f32 on cuda, f64 on\n"
    << "                      cpu); f64 on cuda needs an executable built with\n"
    << "                      --f64-kernels (and fp32 products)\n"
    << "  --log-every K       print the loss every K steps (default: " << model.log_every << ");\n"
    << "                      on cuda the host reads losses only then (and at the last\n"
    << "                      step), so the steps between run back to back\n";
  if (model.data.kind == DataSpec::Tokens)
    s << "  --data FILE         a token stream (llm.c .bin shard or 1-D .npy of ids) in\n"
      << "                      the place of the data clause's file, read in the\n"
      << "                      clause's order (default: " << describe_data_spec(model.data)
      << ")\n"
      << "  --eval PATH         held-out data: a token file (sequential windows), or one\n"
      << "                      .npy per input and target: its mean loss (whole batches)\n"
      << "                      after training (default: " << describe_eval(model) << ")\n";
  else
    s << "  --data PATH         file.csv, or one .npy per input and target in declaration\n"
      << "                      order (x.npy,y.npy), instead of the model's data\n"
      << "                      (default: " << describe_data_spec(model.data) << ")\n"
      << "  --eval PATH         held-out data, as --data: its mean loss (whole batches)\n"
      << "                      and, for a classifier, its accuracy (every row) after\n"
      << "                      training (default: " << describe_eval(model) << ")\n";
  s
    << "  --no-eval           no held-out evaluation, whatever the eval clause says\n"
    << "  --eval-every N      also evaluate every N steps (default: "
    << (model.eval_every ? std::to_string(model.eval_every) : std::string("at the end only"))
    << ")\n"
    << "  --no-shuffle        train on the batches in file order (default: "
    << (model.shuffle ? "shuffled every epoch, seeded by --seed" : "file order") << ")\n"
    << "  --progress, --no-progress\n"
    << "                      a progress line (step, loss, lr, steps/s, ETA) on stderr\n"
    << "                      (default: when stderr is a terminal)\n"
    << "  --predict FILES     after training (--steps 0: with the initial or loaded\n"
    << "                      params), run the forward pass on these inputs (one .npy\n"
    << "                      per input, comma-separated, any number of rows) and write\n"
    << "                      the output's rows as .npy in the run's dtype\n"
    << "  --predict-out PATH  where --predict writes (default: predictions.npy)\n"
    << "  --sample N          after training, generate N tokens (a model whose input is\n"
    << "                      a window of token ids and whose output is every\n"
    << "                      position's logits): each from the logits at the last\n"
    << "                      position of the last window, drawn with --seed\n"
    << "  --temperature X     of --sample's draws; 0 takes the most likely token\n"
    << "                      (default: 1)\n"
    << "  --prompt TEXT       the text --sample continues (default: token 0)\n"
    << "  --vocab PATH        the tokens' strings, a JSON array (tools/data/fortunes.py\n"
    << "                      writes one): --sample prints text (default: token ids)\n"
    << "  --save-params PATH  write the parameters, then the model's state (batch_norm's\n"
    << "                      running statistics), as safetensors after training\n"
    << "                      (after initialisation with --init-only; default: none)\n"
    << "  --load-params PATH  start from these safetensors parameters and state (one of\n"
    << "                      params only: the state starts fresh, with a warning;\n"
    << "                      default: none); NaN or infinity in them is refused\n"
    << "                      (exit 4), and so is a value an f32 run cannot hold\n"
    << "  --allow-nonfinite   load parameters holding NaN or infinity, and train on when\n"
    << "                      the training loss is not finite, each with a warning\n"
    << "                      (default: refused, exit 4; the run stops, exit 7)\n"
    << "  --trace PATH        write every step's loss and the mean losses before and\n"
    << "                      after training with 17 significant digits (default: none)\n"
    << "  --init-only         initialise (and load/save if asked), then exit\n"
    << "  --show-tape         print the tape recorded by the first training step\n"
    << "  --show-backend      print the capsule of every op that ran, at first use\n"
    << "  --mem-stats         print device allocator statistics after the run (cuda)\n"
    << "  --no-cuda-graph     launch each step's kernels one by one (cuda; same results)\n"
    << "  --deterministic     require fixed-order reductions (cuda; also\n"
    << "                      TORCHLEAN_CUDA_DETERMINISTIC_REDUCTIONS set, not 0)\n"
    << "  --audit-launches    cuda: list every node of the first step's CUDA graph with\n"
    << "                      the named launch that made it; exit 1 if a node is\n"
    << "                      unnamed or not the kernel its launch names\n"
    << "  --profile           cuda: run training step 2 without a CUDA graph, a CUDA\n"
    << "                      event before every launch, and print its device time by\n"
    << "                      capsule and its slowest launches after training\n"
    << "  --profile-launches PATH\n"
    << "                      cuda: --profile, and write every launch of that step in\n"
    << "                      order to PATH, one tab-separated line each: launch, ms,\n"
    << "                      program step (-1: batch selection, gradient norm,\n"
    << "                      optimizer), capsule, what ran\n"
    << "  --time              print the median and minimum wall time per training step,\n"
    << "                      each measured over the steps between two loss reads (one\n"
    << "                      step with --log-every 1), after warm-up\n"
    << "  --help              print this help and exit\n\n"
    << "Flags take their value as `--flag V` or `--flag=V`.\n\n"
    << "Exit status:\n";
  for (const ExitStatusInfo& e : kTrainExitStatuses)
    s << "  " << e.code << "  " << e.meaning << "\n";
  return s.str();
}

}  // namespace vouch::rt
