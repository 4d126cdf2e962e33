// init.cc: the initialisers declared in init.h.
#include "runtime/init.h"

#include <cmath>

#include "runtime/rng.h"

namespace vouch::rt {

namespace {

constexpr double kPi = 3.14159265358979323846;

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Status arity_error(const std::string& name, const char* expected, size_t got) {
  return Status::Error("initialiser `" + name + "` takes " + expected + " arguments, got " +
                       std::to_string(got));
}

}  // namespace

Result<InitSpec> parse_init(const std::string& name, const std::vector<double>& args) {
  InitSpec spec;
  if (name == "zeros" || name == "ones" || name == "xavier_uniform" ||
      name == "kaiming_uniform") {
    if (!args.empty()) return arity_error(name, "no", args.size());
    spec.kind = name == "zeros"            ? InitKind::Zeros
                : name == "ones"           ? InitKind::Ones
                : name == "xavier_uniform" ? InitKind::XavierUniform
                                           : InitKind::KaimingUniform;
    return spec;
  }
  if (name == "uniform" || name == "normal") {
    if (!args.empty() && args.size() != 2) return arity_error(name, "0 or 2", args.size());
    bool uniform = name == "uniform";
    spec.kind = uniform ? InitKind::Uniform : InitKind::Normal;
    spec.a = args.empty() ? 0.0 : args[0];
    spec.b = args.empty() ? 1.0 : args[1];
    if (uniform && !(spec.a <= spec.b))
      return Status::Error("initialiser `uniform`: lower bound exceeds upper bound");
    if (!uniform && !(spec.b >= 0))
      return Status::Error("initialiser `normal`: standard deviation must be >= 0");
    return spec;
  }
  return Status::Error("unknown initialiser `" + name +
                       "` (known: zeros, ones, uniform, normal, xavier_uniform, "
                       "kaiming_uniform)");
}

uint64_t param_seed(uint64_t run_seed, int param_index) {
  return next_seed(run_seed, static_cast<uint64_t>(param_index));
}

Fans compute_fans(const std::vector<int64_t>& shape) {
  if (shape.empty()) return {1.0, 1.0};
  if (shape.size() == 1) return {double(shape[0]), double(shape[0])};
  double receptive = 1;
  for (size_t i = 2; i < shape.size(); i++) receptive *= double(shape[i]);
  return {double(shape[1]) * receptive, double(shape[0]) * receptive};
}

void init_tensor(const InitSpec& spec, uint64_t seed, const std::vector<int64_t>& shape,
                 double* out) {
  int64_t n = numel_of(shape);
  switch (spec.kind) {
    case InitKind::Zeros:
      for (int64_t i = 0; i < n; i++) out[i] = 0.0;
      return;
    case InitKind::Ones:
      for (int64_t i = 0; i < n; i++) out[i] = 1.0;
      return;
    case InitKind::Uniform:
      for (int64_t i = 0; i < n; i++) out[i] = spec.a + rand01(seed, i) * (spec.b - spec.a);
      return;
    case InitKind::Normal:
      for (int64_t i = 0; i < n; i++) {
        double u1 = rand01(seed, 2 * uint64_t(i));
        double u2 = rand01(seed, 2 * uint64_t(i) + 1);
        if (u1 < 0x1p-32) u1 = 0x1p-32;  // rand01 can return 0; ln(0) is -inf
        double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
        out[i] = spec.a + spec.b * z;
      }
      return;
    case InitKind::XavierUniform: {
      Fans f = compute_fans(shape);
      double limit = std::sqrt(6.0 / (f.fan_in + f.fan_out));
      for (int64_t i = 0; i < n; i++) out[i] = -limit + rand01(seed, i) * 2.0 * limit;
      return;
    }
    case InitKind::KaimingUniform: {
      Fans f = compute_fans(shape);
      double bound = std::sqrt(6.0 / f.fan_in);
      for (int64_t i = 0; i < n; i++) out[i] = -bound + rand01(seed, i) * 2.0 * bound;
      return;
    }
  }
}

}  // namespace vouch::rt
