// train_main.cc: the executable driver (train_main.h): flags, initialisation,
// checkpoints, data, the training loop and the printed report.
#include "runtime/train_main.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "runtime/atomic_file.h"
#include "runtime/cuda/kernels/shuffle.h"
#include "runtime/dataset.h"
#include "runtime/init.h"
#include "runtime/model_data.h"
#include "runtime/optim.h"
#include "runtime/rng.h"
#include "runtime/safetensors.h"
#include "runtime/sample.h"
#include "runtime/step_times.h"
#include "runtime/tokens.h"
#include "runtime/train_flags.h"

namespace vouch::rt {

namespace {

// mean_loss(before/after) of a token stream: its first sequential batches, at most this
// many (a stream may hold billions of tokens).
constexpr int64_t kTokenMeanLossBatches = 16;

// The host path's losses held for --trace between flushes (then it flushes).
constexpr int64_t kHostLossCapacity = 4096;

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::fflush(stderr);
  return code;
}

Status check_description(const ModelDescription& m) {
  if (m.batch <= 0 || m.in_features <= 0 || m.out_features <= 0)
    return Status::Error("model `" + m.name + "`: batch, in_features and out_features must be "
                         "positive");
  for (const ParamInfo& p : m.params) {
    int64_t n = 1;
    for (int64_t d : p.shape) n *= d;
    if (n != p.numel)
      return Status::Error("model `" + m.name + "`: parameter '" + p.name + "' has numel " +
                           std::to_string(p.numel) + " but its shape holds " + std::to_string(n));
  }
  for (const StateInfo& s : m.states) {
    int64_t n = 1;
    for (int64_t d : s.shape) n *= d;
    if (n != s.numel)
      return Status::Error("model `" + m.name + "`: state '" + s.name + "' has numel " +
                           std::to_string(s.numel) + " but its shape holds " + std::to_string(n));
  }
  return check_optimizer_config(m.optimizer);
}

// "a, b, c" with %f, row 0 of the model's prediction.
template <class T>
std::string format_row(const T* values, int64_t n) {
  std::string s;
  char buf[64];
  for (int64_t i = 0; i < n; i++) {
    std::snprintf(buf, sizeof buf, "%f", double(values[i]));
    s += (i ? ", " : "") + std::string(buf);
  }
  return s;
}

// The progress line of a long run (--progress, or stderr a terminal): step, loss, lr,
// steps/s and ETA, redrawn in place on stderr at most every 0.2 s; erased before the
// log lines go to stdout and after the last step.
class Progress {
 public:
  Progress(bool on, int64_t steps) : on_(on), steps_(steps) {}
  bool on() const { return on_; }
  void show(int64_t done, double loss, double lr) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    const double since = std::chrono::duration<double>(now - start_).count();
    if (done < steps_ && shown_ && std::chrono::duration<double>(now - last_).count() < 0.2)
      return;
    last_ = now;
    const double rate = since > 0 ? double(done) / since : 0;
    const long long eta = rate > 0 ? (long long)(double(steps_ - done) / rate + 0.5) : 0;
    std::fprintf(stderr,
                 "\r\x1b[Kstep %lld/%lld (%.0f%%)  loss %.6f  lr %.3g  %.1f steps/s  ETA "
                 "%lld:%02lld",
                 (long long)done, (long long)steps_, 100.0 * double(done) / double(steps_),
                 loss, lr, rate, eta / 60, eta % 60);
    std::fflush(stderr);
    shown_ = true;
  }
  void erase() {
    if (!on_ || !shown_) return;
    std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
    shown_ = false;
  }
  // Steps between loss reads that keep the line about 4 updates a second on a device
  // that enqueues steps ahead (at least 1), from the `done` steps so far.
  int64_t interval(int64_t done) const {
    const double since =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (!on_ || since <= 0 || done <= 0) return 1;
    return std::max<int64_t>(1, int64_t(double(done) / since / 4));
  }

 private:
  bool on_;
  int64_t steps_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_;
};

template <class T>
class Run {
 public:
  Run(const TrainOptions& o, const ModelDescription& m, const Backend& backend,
      std::unique_ptr<CompiledModel<T>> model)
      : o_(o), m_(m), backend_(backend), model_(std::move(model)) {}
  ~Run() {
    if (trace_) std::fclose(trace_);
  }
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  int run() {
    if (o_.run.audit_launches && (!model_->device_resident() || !o_.run.cuda_graph))
      return fail(kExitUsage, "--audit-launches audits a step's CUDA graph: it needs "
                              "--device cuda and no --no-cuda-graph");
    if (o_.run.profile && !model_->device_resident())
      return fail(kExitUsage, std::string(o_.profile_launches.empty() ? "--profile"
                                                                      : "--profile-launches") +
                                  " times a step's CUDA launches: it needs --device cuda");
    RunConfig run_config = o_.run;
    // A token stream has an order of its own (order = random), not shuffled epochs.
    run_config.shuffle = o_.shuffle && !streaming_;  // run.seed: set with --seed (train_flags.cc)
    run_config.batch = m_.batch;
    Status configured = model_->configure(run_config);
    if (!configured.ok()) return fail(kExitDevice, configured.message());
    for (size_t i = 0; i < m_.states.size(); i++)
      if (model_->state(int(i)) == nullptr)
        return fail(kExitInternal, "the compiled model keeps no storage for state '" +
                                       m_.states[i].name + "' (state " + std::to_string(i) +
                                       " of the description)");
    initialise();
    if (!o_.load_params.empty()) {
      Status st = load_params();
      if (!st.ok()) return fail(kExitParams, "--load-params: " + st.message());
    }
    if (o_.init_only) return save_params();

    Dataset held_back;  // the eval clause's fraction of the data
    if (streaming_) {
      int code = open_tokens();
      if (code != kExitOk) return code;
    } else {
      Result<Dataset> data = load_model_data(m_, o_.data, &held_back);
      if (!data.ok()) return fail(kExitData, data.status().message());
      const Dataset& d = data.value();
      Status fits = fits_run(d, o_.data.empty() ? m_.data.path : o_.data);
      if (fits.ok()) fits = fits_run(held_back, o_.data.empty() ? m_.data.path : o_.data);
      if (!fits.ok()) return fail(kExitData, fits.message());
      fields_ = store_fields(d);
      num_batches_ = d.rows / m_.batch;
    }
    if (!o_.eval.empty() && eval_is_tokens()) {
      Result<std::shared_ptr<TokenFile>> file = open_checked_tokens(o_.eval);
      if (!file.ok())
        return fail(kExitData, (o_.eval_from_clause ? "the eval clause's data: " : "--eval: ") +
                                   file.status().message());
      eval_tokens_ = file.value();
      eval_rows_ = token_window_count(eval_tokens_->count(), context_);
      evaluating_ = true;
    } else if (!o_.eval.empty()) {
      Result<Dataset> held_out = load_eval_data(m_, o_.eval);
      Status fits = held_out.ok() ? fits_run(held_out.value(), o_.eval) : held_out.status();
      if (!fits.ok())
        return fail(kExitData, (o_.eval_from_clause ? "the eval clause's data: " : "--eval: ") +
                                   fits.message());
      eval_rows_ = held_out.value().rows;
      eval_fields_ = store_fields(held_out.value());
      evaluating_ = true;
    } else if (o_.eval_fraction > 0) {
      eval_rows_ = held_back.rows;
      eval_fields_ = store_fields(held_back);
      evaluating_ = true;
    }
    if (evaluating_)
      std::printf("eval data: %lld held-out rows (%s)\n", (long long)eval_rows_,
                  o_.eval.empty() ? "the eval clause's fraction" : o_.eval.c_str());
    if (model_->device_resident()) {
      Status up = model_->upload_params();
      if (up.ok())
        up = streaming_ ? model_->upload_tokens(token_stream(tokens_, context_, m_.data.random))
                        : model_->upload_fields(batch_fields(0).data(), num_batches_);
      if (!up.ok()) return fail(kExitDevice, up.message());
    }
    const bool grid = o_.data.empty() && m_.data.kind == DataSpec::RegressionGrid;

    if (!o_.trace.empty()) {
      trace_ = std::fopen(o_.trace.c_str(), "w");
      if (!trace_)
        return fail(kExitUsage, "--trace: cannot write '" + o_.trace + "' (" +
                                    std::strerror(errno) + ")");
    }
    double loss0 = mean_loss();
    if (!model_->status().ok()) return fail(kExitDevice, model_->status().message());
    std::printf("mean_loss(before) = %f\n", loss0);
    if (trace_) std::fprintf(trace_, "mean_loss_before %.17g\n", loss0);
    int code = train();
    if (code != kExitOk) return code;
    double loss1 = mean_loss();
    if (trace_) {
      std::fprintf(trace_, "mean_loss_after %.17g\n", loss1);
      std::fclose(trace_);
      trace_ = nullptr;
    }
    std::printf("mean_loss(after) = %f\n", loss1);
    if (!std::isfinite(loss1)) {
      code = nonfinite_loss("mean_loss(after)", loss1);
      if (code != kExitOk) return code;
    }
    if (evaluating_) evaluate("after training");
    std::string heldout;
    if (grid) {
      std::printf("  center: x=(%f,%f)  target=%f  pred=[%s]\n", 0.0, 0.0, 0.2,
                  probe(0.0, 0.0, 0.2).c_str());
      heldout = probe(0.25, -0.75, 0.2);
      std::printf("  heldout: x=(%f,%f)  target=%f  pred=[%s]\n", 0.25, -0.75, 0.2,
                  heldout.c_str());
    }
    std::printf("steps=%lld loss0=%f loss1=%f\n", (long long)o_.steps, loss0, loss1);
    if (grid) std::printf("predict(heldout) = [%s]\n", heldout.c_str());
    if (!model_->status().ok()) return fail(kExitDevice, model_->status().message());
    if (!o_.predict.empty()) {
      int code = predict();
      if (code != kExitOk) return code;
    }
    if (o_.sample > 0) {
      int code = sample();
      if (code != kExitOk) return code;
    }
    if (o_.mem_stats) std::printf("%s", model_->memory_report().c_str());
    if (o_.run.profile) {
      const std::string report = model_->profile_report();
      std::printf("%s", report.empty() ? "profile: no step profiled (it times step 2: "
                                         "train 3 steps or more)\n"
                                       : report.c_str());
      const std::string launches = model_->profile_launches();
      if (!o_.profile_launches.empty() && !launches.empty()) {
        Status written = replace_file(o_.profile_launches, launches);
        if (!written.ok())
          return fail(kExitUsage, "--profile-launches: " + written.message());
      }
    }
    std::fflush(stdout);
    if (model_->device_resident()) {
      Status down = model_->download_params();
      if (!down.ok()) return fail(kExitDevice, down.message());
    }
    return save_params();
  }

 private:
  struct FieldData {
    std::vector<unsigned char> bytes;  // every row, in the field's storage
    size_t row_bytes = 0;
  };

  // A token stream (`data tokens`): the file (--data or the clause's), mapped and
  // checked; num_batches_ is the batches mean_loss averages (sequential windows).
  int open_tokens() {
    if (o_.eval_fraction > 0)
      return fail(kExitData, "the eval clause's fraction holds out rows of a table; a token "
                             "stream's held-out data is a file of its own (eval tokens(file = "
                             "\"...\")) or --eval FILE");
    const std::string path = o_.data.empty() ? m_.data.path : o_.data;
    if (path.find(',') != std::string::npos)
      return fail(kExitData, "--data: a token stream is one file (llm.c .bin or a 1-D .npy), "
                             "got '" + path + "'");
    Result<std::shared_ptr<TokenFile>> file = open_checked_tokens(path);
    if (!file.ok()) return fail(kExitData, file.status().message());
    tokens_ = file.value();
    const int64_t windows = token_window_count(tokens_->count(), context_);
    num_batches_ = std::clamp<int64_t>(windows / m_.batch, 1, kTokenMeanLossBatches);
    std::printf("token data: %s, %lld tokens (%s), %lld windows of %lld + 1, order %s\n",
                path.c_str(), (long long)tokens_->count(), tokens_->format().c_str(),
                (long long)windows, (long long)context_,
                m_.data.random ? "random" : "sequential");
    return kExitOk;
  }

  // The token file at `path`, its ids checked against the model's fields.
  Result<std::shared_ptr<TokenFile>> open_checked_tokens(const std::string& path) {
    Result<int64_t> context = token_context(m_);
    if (!context.ok()) return context.status();
    context_ = context.value();
    Result<std::shared_ptr<TokenFile>> file = TokenFile::open(path);
    if (!file.ok()) return file.status();
    Status ids = check_token_ids(*file.value(), m_, context_);
    if (!ids.ok()) return ids;
    return file;
  }

  // Held-out data read as a token stream: the eval clause's `tokens(...)`, or --eval's
  // one file for a model whose data is a token stream.
  bool eval_is_tokens() const {
    if (o_.eval_from_clause) return m_.eval_data.kind == DataSpec::Tokens;
    return streaming_ && o_.eval.find(',') == std::string::npos;
  }

  // Rows [0, rows) of step `step`'s token batch (padded to the batch with row 0).
  std::vector<FieldData> token_batch(const TokenFile& file, int64_t step, int64_t rows,
                                     bool random) const {
    std::vector<FieldData> batch(2);
    for (FieldData& f : batch) {
      f.row_bytes = size_t(context_) * 4;
      f.bytes.resize(size_t(m_.batch) * f.row_bytes);
    }
    auto* in = reinterpret_cast<int32_t*>(batch[0].bytes.data());
    auto* out = reinterpret_cast<int32_t*>(batch[1].bytes.data());
    fill_token_batch(file, context_, step, m_.batch, rows, random, o_.seed, in, out);
    for (int64_t r = rows; r < m_.batch; r++)
      for (FieldData& f : batch)
        std::memcpy(f.bytes.data() + size_t(r) * f.row_bytes, f.bytes.data(), f.row_bytes);
    return batch;
  }

  void initialise() {
    std::vector<NamedTensor> values = initial_params(m_, o_.seed);
    for (size_t i = 0; i < values.size(); i++) {
      T* dst = model_->param(int(i));
      for (size_t j = 0; j < values[i].data.size(); j++) dst[j] = T(values[i].data[j]);
    }
    // The state starts fresh: running means 0, running variances 1.
    for (size_t i = 0; i < m_.states.size(); i++) {
      T* dst = model_->state(int(i));
      std::fill(dst, dst + m_.states[i].numel, T(m_.states[i].init));
    }
  }

  // A checkpoint holds the params and, after them, the model's state (batch_norm's
  // running statistics) by name. One of params only (written before the model had
  // state) loads its params, and the state starts fresh, with a warning; a checkpoint
  // with some of the state, state of another shape, or a variance that is negative or
  // a statistic that is not finite is refused with every reason.
  Status load_params() {
    Result<std::vector<NamedTensor>> loaded = load_safetensors(o_.load_params);
    if (!loaded.ok()) return loaded.status();
    std::vector<NamedTensor> params, states;
    for (NamedTensor& t : loaded.value()) {
      const bool state = std::any_of(m_.states.begin(), m_.states.end(),
                                     [&](const StateInfo& s) { return s.name == t.name; });
      (state ? states : params).push_back(std::move(t));
    }
    std::vector<std::pair<std::string, std::vector<int64_t>>> expected;
    for (const ParamInfo& p : m_.params) expected.push_back({p.name, p.shape});
    Status st = check_params(params, expected);
    if (!st.ok()) return Status::Error(o_.load_params + ": " + st.message());
    st = check_finite_params(o_.load_params, params);
    if (!st.ok()) {
      if (!o_.allow_nonfinite) return Status::Error(st.message() + " (--allow-nonfinite loads it)");
      std::fprintf(stderr, "warning: %s; loaded anyway (--allow-nonfinite)\n", st.message().c_str());
    }
    if (sizeof(T) == 4) {
      st = check_params_fit_f32(o_.load_params, params);
      if (st.ok()) st = check_params_fit_f32(o_.load_params, states);
      if (!st.ok()) return st;
    }
    if (!m_.states.empty()) {
      st = states.empty() ? Status::Ok() : check_states(states);
      if (!st.ok()) return Status::Error(o_.load_params + ": " + st.message());
    }
    for (size_t i = 0; i < m_.params.size(); i++) {
      for (const NamedTensor& t : params) {
        if (t.name != m_.params[i].name) continue;
        T* dst = model_->param(int(i));
        for (size_t j = 0; j < t.data.size(); j++) dst[j] = T(t.data[j]);
      }
    }
    for (size_t i = 0; i < m_.states.size(); i++)
      for (const NamedTensor& t : states) {
        if (t.name != m_.states[i].name) continue;
        T* dst = model_->state(int(i));
        for (size_t j = 0; j < t.data.size(); j++) dst[j] = T(t.data[j]);
      }
    if (!m_.states.empty() && states.empty()) {
      std::string names;
      for (const StateInfo& s : m_.states) names += (names.empty() ? "" : ", ") + s.name;
      std::fprintf(stderr,
                   "warning: --load-params: %s holds the params but none of the model's "
                   "state (a checkpoint written before the model had state): its %zu "
                   "running statistics (%s) start fresh, running means 0 and variances 1, "
                   "until training steps update them; evaluation and predictions use them "
                   "as they are\n",
                   o_.load_params.c_str(), m_.states.size(), names.c_str());
    }
    return Status::Ok();
  }

  // Ok when `loaded` (the checkpoint's state tensors) holds every state of the model,
  // of its shape, finite, a variance not negative; otherwise every problem.
  Status check_states(const std::vector<NamedTensor>& loaded) const {
    std::vector<std::string> problems;
    for (const StateInfo& s : m_.states) {
      auto it = std::find_if(loaded.begin(), loaded.end(),
                             [&](const NamedTensor& t) { return t.name == s.name; });
      if (it == loaded.end()) {
        problems.push_back("missing state '" + s.name + "' (the checkpoint holds some of the "
                           "model's running statistics, not all)");
        continue;
      }
      if (it->shape != s.shape) {
        std::string want, got;
        for (int64_t d : s.shape) want += (want.empty() ? "" : ", ") + std::to_string(d);
        for (int64_t d : it->shape) got += (got.empty() ? "" : ", ") + std::to_string(d);
        problems.push_back("state '" + s.name + "' has shape [" + got + "], the model expects [" +
                           want + "]");
        continue;
      }
      for (size_t j = 0; j < it->data.size(); j++) {
        const double v = it->data[j];
        if (std::isfinite(v) && !(s.nonnegative && v < 0)) continue;
        char value[64];
        std::snprintf(value, sizeof value, "%g", v);
        problems.push_back("state '" + s.name + "' element " + std::to_string(j) + " is " +
                           value + (s.nonnegative ? " (a variance: finite and >= 0)"
                                                  : " (not finite)"));
        break;
      }
    }
    if (problems.empty()) return Status::Ok();
    std::string msg = "the model's state does not match (" + std::to_string(problems.size()) +
                      (problems.size() == 1 ? " problem):" : " problems):");
    for (const std::string& p : problems) msg += "\n  " + p;
    return Status::Error(msg);
  }

  int save_params() {
    if (o_.save_params.empty()) return kExitOk;
    std::vector<NamedTensor> tensors;
    for (size_t i = 0; i < m_.params.size(); i++) {
      const ParamInfo& p = m_.params[i];
      const T* src = model_->param(int(i));
      tensors.push_back({p.name, p.shape, std::vector<double>(src, src + p.numel)});
    }
    // The state after the params (batch_norm's running statistics).
    for (size_t i = 0; i < m_.states.size(); i++) {
      const StateInfo& s = m_.states[i];
      const T* src = model_->state(int(i));
      tensors.push_back({s.name, s.shape, std::vector<double>(src, src + s.numel)});
    }
    Status st = save_safetensors(o_.save_params, tensors, /*as_f64=*/!o_.f32);
    if (!st.ok()) return fail(kExitParams, "--save-params: " + st.message());
    return kExitOk;
  }

  // Ok when the run's element type holds every value of `d` (read from `spec`): an f32
  // run refuses a value that would round to infinity.
  Status fits_run(const Dataset& d, const std::string& spec) const {
    return sizeof(T) == 4 ? check_fits_f32(m_, d, spec) : Status::Ok();
  }

  // Each field's columns of the dataset in the field's storage: T for real fields,
  // int32_t for integer ones (load_model_data checked those are int32 values).
  std::vector<FieldData> store_fields(const Dataset& d) const {
    std::vector<FieldData> fields;
    int64_t x_col = 0, y_col = 0;
    for (const FieldInfo& f : model_fields(m_)) {
      const std::vector<double>& table = f.target ? d.y : d.x;
      const int64_t cols = f.target ? d.out_features : d.in_features;
      int64_t& col = f.target ? y_col : x_col;
      FieldData out;
      out.row_bytes = size_t(f.row_elems * element_bytes(f.dtype, sizeof(T)));
      out.bytes.resize(out.row_bytes * size_t(d.rows));
      for (int64_t r = 0; r < d.rows; r++) {
        const double* row = table.data() + r * cols + col;
        unsigned char* to = out.bytes.data() + size_t(r) * out.row_bytes;
        for (int64_t j = 0; j < f.row_elems; j++) {
          if (f.dtype == DType::I32) {
            const int32_t v = int32_t(row[j]);
            std::memcpy(to + 4 * j, &v, 4);
          } else {
            const T v = T(row[j]);
            std::memcpy(to + sizeof(T) * j, &v, sizeof(T));
          }
        }
      }
      col += f.row_elems;
      fields.push_back(std::move(out));
    }
    return fields;
  }

  // Field i's rows of batch b (and every batch after it).
  std::vector<const void*> batch_fields(int64_t b) const { return batch_of(fields_, b); }
  std::vector<const void*> batch_of(const std::vector<FieldData>& fields, int64_t b) const {
    std::vector<const void*> out;
    for (const FieldData& f : fields)
      out.push_back(f.bytes.data() + size_t(b * m_.batch) * f.row_bytes);
    return out;
  }

  // The fields of step k's batch (cpu): batch k % num_batches in file order, or with
  // shuffling the rows shuffled_row names for epoch k / num_batches, gathered as the
  // cuda batch selection gathers them (runtime/cuda/kernels/shuffle.h).
  std::vector<const void*> training_batch(int64_t k) {
    if (streaming_) {  // the windows token_window_start names for step k
      shuffled_ = token_batch(*tokens_, k, m_.batch, m_.data.random);
      return batch_of(shuffled_, 0);
    }
    const int64_t b = k % num_batches_;
    if (!o_.shuffle) return batch_fields(b);
    const int64_t epoch = k / num_batches_, rows = num_batches_ * m_.batch;
    shuffled_.resize(fields_.size());
    for (size_t f = 0; f < fields_.size(); f++) {
      shuffled_[f].row_bytes = fields_[f].row_bytes;
      shuffled_[f].bytes.resize(size_t(m_.batch) * fields_[f].row_bytes);
    }
    for (int64_t j = 0; j < m_.batch; j++) {  // each row's source once, for every field
      const int64_t r = vouch::shuffled_row(b * m_.batch + j, rows, o_.seed, epoch);
      for (size_t f = 0; f < fields_.size(); f++) {
        const size_t row_bytes = fields_[f].row_bytes;
        std::memcpy(shuffled_[f].bytes.data() + size_t(j) * row_bytes,
                    fields_[f].bytes.data() + size_t(r) * row_bytes, row_bytes);
      }
    }
    return batch_of(shuffled_, 0);
  }

  // One batch of `fields`: rows [first, first + rows) (rows <= batch), padded to the
  // batch with copies of row `first`.
  std::vector<FieldData> padded_batch(const std::vector<FieldData>& fields, int64_t first,
                                      int64_t rows) const {
    std::vector<FieldData> batch;
    for (const FieldData& f : fields) {
      FieldData b;
      b.row_bytes = f.row_bytes;
      b.bytes.resize(size_t(m_.batch) * f.row_bytes);
      const unsigned char* from = f.bytes.data() + size_t(first) * f.row_bytes;
      std::memcpy(b.bytes.data(), from, size_t(rows) * f.row_bytes);
      for (int64_t r = rows; r < m_.batch; r++)
        std::memcpy(b.bytes.data() + size_t(r) * f.row_bytes, from, f.row_bytes);
      batch.push_back(std::move(b));
    }
    return batch;
  }

  // --predict: the output's rows for the inputs in o_.predict (targets zero), written
  // as .npy [rows, ...]; the last partial batch is padded with its first row.
  int predict() {
    const std::vector<FieldInfo> fields = model_fields(m_);
    const std::vector<std::string> paths = split_paths(o_.predict);
    std::vector<int64_t> row_elems;
    std::vector<std::string> names;
    for (const FieldInfo& f : fields)
      if (!f.target) {
        row_elems.push_back(f.row_elems);
        names.push_back(f.name);
      }
    Result<Dataset> inputs = load_npy_fields(paths, row_elems, row_elems.size(), names);
    Status fits = inputs.ok() ? fits_run(inputs.value(), o_.predict) : inputs.status();
    if (!fits.ok()) return fail(kExitData, "--predict: " + fits.message());
    const std::vector<int64_t>& out_shape = m_.output_shape;
    if (out_shape.empty() || out_shape[0] != m_.batch)
      return fail(kExitUsage, "--predict: the model's output has no batch axis to predict row "
                              "by row");
    int64_t out_row = 1;
    for (size_t i = 1; i < out_shape.size(); i++) out_row *= out_shape[i];
    // The targets of every row: zeros (the forward pass computes the loss too).
    Dataset d = std::move(inputs.value());
    d.out_features = m_.out_features;
    d.y.assign(size_t(d.rows * d.out_features), 0.0);
    const std::vector<FieldData> data = store_fields(d);
    const int64_t B = m_.batch;
    std::vector<double> out;
    for (int64_t first = 0; first < d.rows; first += B) {
      const int64_t rows = std::min(B, d.rows - first);
      const std::vector<FieldData> batch = padded_batch(data, first, rows);
      model_->forward_fields(batch_of(batch, 0).data(), nullptr);
      if (!model_->status().ok()) return fail(kExitDevice, model_->status().message());
      const T* pred = model_->prediction();
      out.insert(out.end(), pred, pred + rows * out_row);
    }
    std::vector<int64_t> shape = {d.rows};
    shape.insert(shape.end(), out_shape.begin() + 1, out_shape.end());
    Status st = save_npy(o_.predict_out, shape, out, /*as_f64=*/sizeof(T) == 8);
    if (!st.ok()) return fail(kExitUsage, "--predict-out: " + st.message());
    std::printf("predict: %lld rows -> %s\n", (long long)d.rows, o_.predict_out.c_str());
    return kExitOk;
  }

  // --sample: continues the prompt (token 0 without one) by o_.sample tokens. Each
  // draw runs the forward pass on a batch whose every row is the last T tokens (fewer
  // at first: the rest of the row is token 0, which causal attention at the last real
  // position never reads) with zero targets, and draws from the logits at the last
  // real position (runtime/sample.h).
  int sample() {
    const std::vector<FieldInfo> fields = model_fields(m_);
    const std::vector<int64_t>& out = m_.output_shape;
    int inputs = 0;
    const FieldInfo* ids = nullptr;
    for (const FieldInfo& f : fields)
      if (!f.target) {
        inputs++;
        ids = &f;
      }
    if (inputs != 1 || ids->dtype != DType::I32 || out.size() != 3 || out[0] != m_.batch ||
        out[1] != ids->row_elems)
      return fail(kExitUsage, "--sample needs a language model: one i32 input of token ids "
                              "[batch, T] and an output of logits [batch, T, vocab]");
    const int64_t T_ = out[1], V = out[2];
    Vocab vocab;
    if (!o_.vocab.empty()) {
      Result<Vocab> loaded = load_vocab(o_.vocab);
      if (!loaded.ok()) return fail(kExitData, "--vocab: " + loaded.status().message());
      vocab = std::move(loaded.value());
      if (int64_t(vocab.strings.size()) != V)
        return fail(kExitData, "--vocab: " + std::to_string(vocab.strings.size()) +
                                   " tokens, but the model's logits have " +
                                   std::to_string(V));
    }
    std::vector<int64_t> context = {0};
    if (!o_.prompt.empty()) {
      Result<std::vector<int64_t>> encoded = vocab.encode(o_.prompt);
      if (!encoded.ok()) return fail(kExitUsage, "--prompt: " + encoded.status().message());
      context = std::move(encoded.value());
    }
    const size_t prompt = context.size();
    std::vector<FieldData> batch;
    for (const FieldInfo& f : fields) {
      FieldData b;
      b.row_bytes = size_t(f.row_elems * element_bytes(f.dtype, sizeof(T)));
      b.bytes.assign(size_t(m_.batch) * b.row_bytes, 0);
      batch.push_back(std::move(b));
    }
    const size_t input = size_t(ids - fields.data());
    const uint64_t seed = sample_seed(o_.seed);
    for (int64_t i = 0; i < o_.sample; i++) {
      const int64_t n = std::min<int64_t>(int64_t(context.size()), T_);
      std::vector<int32_t> row(size_t(T_), 0);
      for (int64_t t = 0; t < n; t++) row[size_t(t)] = int32_t(context[context.size() - n + t]);
      for (int64_t r = 0; r < m_.batch; r++)
        std::memcpy(batch[input].bytes.data() + size_t(r) * batch[input].row_bytes, row.data(),
                    batch[input].row_bytes);
      model_->forward_fields(batch_of(batch, 0).data(), nullptr);
      if (!model_->status().ok()) return fail(kExitDevice, model_->status().message());
      const T* logits = model_->prediction() + (n - 1) * V;
      context.push_back(draw_token(logits, V, o_.temperature, rand01(seed, uint64_t(i))));
    }
    std::printf("sample: %lld tokens, temperature %g, seed %llu:\n", (long long)o_.sample,
                o_.temperature, (unsigned long long)o_.seed);
    if (vocab.strings.empty()) {
      for (size_t t = 0; t < context.size(); t++)
        std::printf("%s%lld", t ? " " : "", (long long)context[t]);
      std::printf("\n");
    } else {
      std::printf("%s%s\n", o_.prompt.c_str(),
                  vocab.decode({context.begin() + long(prompt), context.end()}).c_str());
    }
    return kExitOk;
  }

  // --eval: the held-out data's mean loss over its whole batches and, for a
  // classifier, the accuracy of the output's argmax over every row (the rows after the
  // last whole batch run in one more batch padded with its first row; the pads are not
  // counted). Ignored labels (ignore_index) count in neither.
  void evaluate(const std::string& when) {
    const int64_t B = m_.batch, whole = eval_rows_ / B, rest = eval_rows_ % B;
    double loss = 0;
    int64_t correct = 0, counted = 0;
    auto score = [&](const std::vector<FieldData>& fields, int64_t b, int64_t rows) {
      const T* logits = model_->prediction();
      if (m_.label_field < 0) return;
      const FieldData& labels = fields[size_t(m_.label_field)];
      for (int64_t r = 0; r < rows; r++) {
        int32_t label;
        std::memcpy(&label, labels.bytes.data() + size_t(b * B + r) * 4, 4);
        if (label == m_.ignore_index) continue;
        const T* row = logits + r * m_.classes;
        int64_t best = 0;
        for (int64_t c = 1; c < m_.classes; c++)
          if (row[c] > row[best]) best = c;
        correct += best == label;
        counted++;
      }
    };
    for (int64_t b = 0; b < whole; b++) {
      if (eval_tokens_) {  // sequential windows b * B .. b * B + B - 1
        const std::vector<FieldData> batch = token_batch(*eval_tokens_, b, B, false);
        loss += double(model_->forward_fields(batch_of(batch, 0).data(), nullptr));
        score(batch, 0, B);
        continue;
      }
      loss += double(model_->forward_fields(batch_of(eval_fields_, b).data(), nullptr));
      score(eval_fields_, b, B);
    }
    if (rest > 0) {
      const std::vector<FieldData> tail = eval_tokens_
                                              ? token_batch(*eval_tokens_, whole, rest, false)
                                              : padded_batch(eval_fields_, whole * B, rest);
      model_->forward_fields(batch_of(tail, 0).data(), nullptr);
      score(tail, 0, rest);
    }
    std::printf("eval %s:", when.c_str());
    if (whole > 0)
      std::printf(" loss=%f (%lld whole batches)", loss / double(whole), (long long)whole);
    if (m_.label_field >= 0)
      std::printf(" accuracy=%.2f%% (%lld/%lld rows)",
                  counted ? 100.0 * double(correct) / double(counted) : 0.0,
                  (long long)correct, (long long)counted);
    std::printf("\n");
    if (trace_)
      std::fprintf(trace_, "eval %s loss %.17g correct %lld of %lld\n", when.c_str(),
                   whole > 0 ? loss / double(whole) : 0.0, (long long)correct,
                   (long long)counted);
  }

  // Mean over the batches, in order, of each batch's loss.
  double mean_loss() {
    double sum = 0;
    for (int64_t b = 0; b < num_batches_; b++) {
      if (streaming_) {  // a token stream: its first sequential batches
        const std::vector<FieldData> batch = token_batch(*tokens_, b, m_.batch, false);
        sum += double(model_->forward_fields(batch_of(batch, 0).data(), nullptr));
        continue;
      }
      sum += double(model_->forward_fields(batch_fields(b).data(), nullptr));
    }
    return sum / double(num_batches_);
  }

  // The training loop. The host path (cpu) computes each step's loss at once; a
  // device-resident model only enqueues steps and keeps their losses on the device,
  // and the loop reads them at flush points: every log point (k % log_every == 0), the
  // last step, and, with --trace (which needs every step's loss), before the device's
  // loss ring would overwrite an unread step. Without --trace a flush reads only the
  // flushed step's loss. The printed lines are the same either way.
  int train() {
    const bool device = model_->device_resident();
    std::unique_ptr<Optimizer<T>> optimizer;
    // Losses held before a flush: the device's ring, or on the host this many (--trace
    // needs every step's; without it a flush reads only its own step's).
    int64_t capacity = kHostLossCapacity;
    if (device) {
      capacity = model_->loss_capacity();
      if (capacity <= 0)
        return fail(kExitInternal, "the device-resident model keeps no step losses "
                                   "(loss_capacity() = " + std::to_string(capacity) + ")");
    } else {
      std::vector<std::pair<T*, T*>> params;
      std::vector<int64_t> sizes;
      for (size_t i = 0; i < m_.params.size(); i++) {
        params.push_back({model_->param(int(i)), model_->grad(int(i))});
        sizes.push_back(m_.params[i].numel);
      }
      optimizer = std::make_unique<Optimizer<T>>(optimizer_, params, sizes);
      if (!optimizer->status().ok()) return fail(kExitInternal, optimizer->status().message());
    }
    Tape tape;
    std::vector<double> host_losses;  // host path: losses of the steps [pending, k] to flush
    std::vector<double> losses;       // device path: what a flush read
    StepTimes times;                  // --time: one sample per flush interval
    int64_t pending = 0;              // the first step not flushed yet
    auto interval_start = std::chrono::steady_clock::now();
    auto is_eval = [&](int64_t k) {
      return o_.eval_every > 0 && (k + 1) % o_.eval_every == 0 && k + 1 != o_.steps;
    };
    const bool show_progress =
        o_.progress == TrainOptions::Progress::On ||
        (o_.progress == TrainOptions::Progress::Auto && isatty(fileno(stderr)));
    Progress progress(show_progress, o_.steps);
    int64_t progress_every = 1;  // loss reads for the progress line (device path)
    auto is_flush = [&](int64_t k) {
      return k % o_.log_every == 0 || k + 1 == o_.steps || is_eval(k) ||
             (trace_ != nullptr && k + 1 - pending >= capacity) ||
             (progress.on() && (k + 1 - pending) >= progress_every);
    };
    for (int64_t k = 0; k < o_.steps; k++) {
      if (device) {
        // Every step up to the next flush point at once (the device may replay them as
        // fewer CUDA graphs); the first step (a flush point) records the tape.
        int64_t last = k;
        while (!is_flush(last)) last++;
        Tape* recorded = k == 0 ? &tape : nullptr;
        Status st = model_->enqueue_steps(optimizer_, last - k + 1, recorded);
        if (!st.ok()) return fail(kExitDevice, st.message());
        k = last;
      } else {
        tape.clear();
        if (!trace_) host_losses.clear();  // a flush reads only its own step's loss
        host_losses.push_back(double(model_->forward_fields(training_batch(k).data(), &tape)));
        model_->backward(tape);
        optimizer->step();
      }
      if (k == 0) {
        show_first_step(tape);
        if (o_.run.audit_launches) {
          std::fputs(model_->launch_audit().c_str(), stdout);
          if (int64_t problems = model_->launch_audit_problems())
            return fail(kExitInternal, "the launch audit found " + std::to_string(problems) +
                                           " graph node(s) no named launch accounts for");
        }
      }

      if (!is_flush(k)) continue;
      const int64_t first = trace_ ? pending : k;
      const double* flushed;  // the losses of the steps [first, k]
      if (device) {
        losses.assign(size_t(k + 1 - first), 0.0);
        Status st = model_->read_losses(first, k + 1 - first, losses.data());
        if (!st.ok()) return fail(kExitDevice, st.message());
        flushed = losses.data();
      } else {
        flushed = host_losses.data() + host_losses.size() - size_t(k + 1 - first);
      }
      auto read = std::chrono::steady_clock::now();
      if (o_.time)
        times.add(std::chrono::duration<double, std::milli>(read - interval_start).count() /
                  double(k + 1 - pending));
      for (int64_t j = first; j <= k; j++) {
        double loss = flushed[j - first];
        if (j % o_.log_every == 0) {
          progress.erase();  // a no-op when no line is shown
          std::printf("step %lld: loss=%f\n", (long long)j, loss);
        }
        if (trace_) std::fprintf(trace_, "step %lld %.17g\n", (long long)j, loss);
        if (!std::isfinite(loss)) {
          if (j % o_.log_every != 0) {
            progress.erase();
            std::printf("step %lld: loss=%f\n", (long long)j, loss);
          }
          const int code = nonfinite_loss("step " + std::to_string(j), loss);
          if (code != kExitOk) return code;
        }
      }
      host_losses.clear();
      pending = k + 1;
      if (is_eval(k)) {
        progress.erase();
        evaluate("after step " + std::to_string(k + 1));
      }
      if (progress.on()) {
        std::fflush(stdout);
        progress.show(k + 1, flushed[k - first], lr_at(m_.optimizer, k));
        progress_every = progress.interval(k + 1);
      }
      interval_start = std::chrono::steady_clock::now();
    }
    progress.erase();
    if (o_.time) print_timing(times, o_.steps);
    return kExitOk;
  }

  // A non-finite training loss (`what`: "step 25", "mean_loss(after)"): the run stops
  // with kExitNonFinite, or with --allow-nonfinite goes on after one warning.
  int nonfinite_loss(const std::string& what, double loss) {
    char value[32];
    std::snprintf(value, sizeof value, "%g", loss);
    if (!o_.allow_nonfinite) {
      std::fflush(stdout);
      return fail(kExitNonFinite, what + ": the training loss is " + value +
                                      "; training diverged or the data holds values too "
                                      "large for the loss (--allow-nonfinite trains on)");
    }
    if (!warned_nonfinite_)
      std::fprintf(stderr, "warning: %s: the training loss is %s; training goes on "
                           "(--allow-nonfinite)\n", what.c_str(), value);
    warned_nonfinite_ = true;
    return kExitOk;
  }

  // Median and minimum of the per-step times of the flush intervals after a warm-up
  // (the first intervals capture CUDA graphs and warm caches).
  static void print_timing(const StepTimes& times, int64_t steps) {
    std::optional<StepTimes::Summary> t = times.summary();
    if (!t) return;
    std::printf("timing: median %.4f ms/step, min %.4f ms/step over %llu loss-read intervals "
                "after %llu warm-up (%lld steps)%s\n",
                t->median_ms, t->min_ms, (unsigned long long)t->intervals,
                (unsigned long long)t->warmup, (long long)steps,
                t->every > 1 ? (" (the median of 1 in " + std::to_string(t->every) +
                                " intervals, evenly spread)").c_str()
                             : "");
  }

  // --show-tape and --show-backend read the tape of the first step: each
  // capsule's report block is printed at its first use, with the kernel that ran.
  void show_first_step(const Tape& tape) {
    if (o_.show_tape) {
      std::ostringstream s;
      s << "tape of step 0 (" << tape.size() << " nodes, backward runs them last to first):\n";
      tape.print(s);
      std::fputs(s.str().c_str(), stdout);
    }
    if (!o_.show_backend) return;
    std::printf("%s\n", backend_.header.c_str());
    std::map<std::string, bool> shown;
    for (const TapeNode& node : tape.nodes()) {
      if (shown[node.capsule]) continue;
      shown[node.capsule] = true;
      auto it = backend_.capsule_reports.find(node.capsule);
      if (it == backend_.capsule_reports.end())
        std::printf("%s: %s (no report recorded)\n", node.op, node.capsule);
      else
        std::printf("%s", it->second.c_str());
      std::printf("  ran: %s\n", node.kernel);
    }
    // The capsules no forward node ran under (the VJPs' ops, batch selection,
    // the optimizer): each launch of the schedule above names one of them.
    bool first = true;
    for (const auto& [name, report] : backend_.capsule_reports) {
      if (shown[name]) continue;
      if (first) std::printf("the other capsules of the step (VJPs, batch, optimizer):\n");
      first = false;
      std::printf("%s", report.c_str());
    }
  }

  // Row 0 of the prediction for a batch whose every row is (x1, x2), target t.
  std::string probe(double x1, double x2, double target) {
    std::vector<T> px(m_.batch * m_.in_features), py(m_.batch * m_.out_features, T(target));
    for (int64_t r = 0; r < m_.batch; r++) {
      px[r * 2] = T(x1);
      px[r * 2 + 1] = T(x2);
    }
    model_->forward(px.data(), py.data(), nullptr);
    return format_row(model_->prediction(), m_.out_features);
  }

  // The model's optimizer with its params' ranks (decay_min_rank reads them).
  static OptimizerConfig optimizer_for(const ModelDescription& m) {
    OptimizerConfig config = m.optimizer;
    for (const ParamInfo& p : m.params) config.param_ranks.push_back(int64_t(p.shape.size()));
    return config;
  }

  const TrainOptions& o_;
  const ModelDescription& m_;
  const OptimizerConfig optimizer_ = optimizer_for(m_);
  const Backend& backend_;
  std::unique_ptr<CompiledModel<T>> model_;
  std::vector<FieldData> fields_;  // ModelDescription::fields order
  std::vector<FieldData> eval_fields_;  // --eval's rows, likewise
  int64_t eval_rows_ = 0;
  bool evaluating_ = false;  // --eval or the eval clause gave held-out rows
  int64_t num_batches_ = 0;
  std::vector<FieldData> shuffled_;  // cpu: the current batch of a shuffled epoch (or tokens)
  FILE* trace_ = nullptr;
  bool warned_nonfinite_ = false;  // --allow-nonfinite: the warning is printed once
  // A token stream (data tokens): the mapped file, the context T of both fields.
  const bool streaming_ = m_.data.kind == DataSpec::Tokens;
  std::shared_ptr<TokenFile> tokens_, eval_tokens_;  // eval_tokens_: held-out windows
  int64_t context_ = 0;
};

}  // namespace

int train_main(int argc, char** argv, const ModelDescription& model,
               std::unique_ptr<CompiledModel<float>> (*make_f32)(),
               std::unique_ptr<CompiledModel<double>> (*make_f64)()) {
  Backend cpu;
  cpu.device = Device::Cpu;
  cpu.make_f32 = make_f32;
  cpu.make_f64 = make_f64;
  cpu.header = "backend: cpu";
  return train_main(argc, argv, model, std::vector<Backend>{cpu});
}

namespace {

// The backend `requested` names, or why there is none. Never another device.
Result<const Backend*> select_backend(Device requested, const std::vector<Backend>& backends) {
  auto find = [&](Device d) -> const Backend* {
    for (const Backend& b : backends)
      if (b.device == d) return &b;
    return nullptr;
  };
  auto usable = [](const Backend* b) { return b->ready ? b->ready() : Status::Ok(); };
  if (requested == Device::Auto) {
    const Backend* cuda = find(Device::Cuda);
    if (cuda && usable(cuda).ok()) return cuda;
    if (const Backend* cpu = find(Device::Cpu)) return cpu;
    return Status::Error("this executable has no backend for `auto`");
  }
  const Backend* chosen = find(requested);
  if (!chosen) {
    Status why = require_runtime(requested);
    return why.ok() ? Status::Error(std::string("this executable has no ") +
                                    device_name(requested) + " backend")
                    : why;
  }
  Status ready = usable(chosen);
  if (!ready.ok()) return ready;
  return chosen;
}

// Ok when a model of backend `b` fits in the memory available for a run of `real_bytes`
// elements; else why not (memory.h).
Status check_memory(const ModelDescription& model, const Backend& b, int64_t real_bytes) {
  if (!b.memory_need) return Status::Ok();
  const MemoryNeed need = b.memory_need(real_bytes);
  const std::string run = std::string("an ") + (real_bytes == 4 ? "f32" : "f64") + " run on " +
                          device_name(b.device);
  if (!need.host.empty()) {
    std::string source;
    Result<uint64_t> available = host_memory_available(&source);
    if (available.ok()) {
      Status st = check_memory_fits(model.name, run, "host", need.host, available.value(),
                                    source);
      if (!st.ok()) return st;
    }
  }
  if (!need.device.empty() && b.device_memory_free) {
    Result<uint64_t> free_bytes = b.device_memory_free();
    if (!free_bytes.ok()) return free_bytes.status();
    Status st = check_memory_fits(model.name, run, std::string(device_name(b.device)) + " device",
                                  need.device, free_bytes.value(), "free device memory");
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

int run_model(int argc, char** argv, const ModelDescription& model,
              const std::vector<Backend>& backends);

}  // namespace

// The checks above refuse a model too large before anything is allocated; an
// allocation that fails anyway (the data, another process taking the memory) ends the
// run here with a message and kExitMemory, never an abort.
int train_main(int argc, char** argv, const ModelDescription& model,
               const std::vector<Backend>& backends) {
  try {
    return run_model(argc, argv, model, backends);
  } catch (const std::bad_alloc&) {
    std::fflush(stdout);
    return fail(kExitMemory, "out of host memory (std::bad_alloc): model `" + model.name +
                                 "` or its data needs more memory than this machine has "
                                 "available");
  }
}

namespace {

int run_model(int argc, char** argv, const ModelDescription& model,
              const std::vector<Backend>& backends) {
  const std::string program = argc > 0 ? argv[0] : "model";
  Result<TrainOptions> parsed = parse_train_flags(argc, argv, model);
  if (!parsed.ok()) {
    fail(kExitUsage, parsed.status().message());
    std::fprintf(stderr, "run `%s --help` to see the flags\n", program.c_str());
    return kExitUsage;
  }
  const TrainOptions& o = parsed.value();
  if (o.help) {
    std::fputs(train_usage(program, model).c_str(), stdout);
    std::fflush(stdout);
    return kExitOk;
  }
  Result<const Backend*> backend = select_backend(o.device, backends);
  if (!backend.ok()) return fail(kExitDevice, backend.status().message());
  Status described = check_description(model);
  if (!described.ok()) return fail(kExitInternal, described.message());

  const Backend& b = *backend.value();
  TrainOptions run = o;
  run.f32 = run_in_f32(o, b.device);  // --dtype, else f32 on cuda, f64 on cpu
  Status fits = check_memory(model, b, run.f32 ? 4 : 8);
  if (!fits.ok()) return fail(kExitMemory, fits.message());
  int code;
  if (run.f32) {
    if (b.make_f32 == nullptr)
      return fail(kExitUsage, o.dtype_given
                                  ? "--dtype f32: this executable was built without f32 support"
                                  : std::string("f32 (the default on ") + device_name(b.device) +
                                        "): this executable was built without f32 support; "
                                        "pass --dtype f64");
    code = Run<float>(run, model, b, b.make_f32()).run();
  } else {
    if (b.make_f64 == nullptr)
      return fail(kExitUsage, "--dtype f64: " + (b.no_f64_reason.empty()
                                                     ? std::string("this executable was built "
                                                                   "without f64 support")
                                                     : b.no_f64_reason));
    code = Run<double>(run, model, b, b.make_f64()).run();
  }
  std::fflush(stdout);
  return code;
}

}  // namespace

}  // namespace vouch::rt
