// init.h: parameter initialisers of the reference semantics (BRIEF.md).
//
// Element idx of a tensor (its row-major flat index, from 0) is a pure function of the
// tensor's seed and idx, so initial weights agree across devices and with the
// references. Parameter i of a model (declaration order, biases and zero-initialised
// parameters included) gets the seed param_seed(run_seed, i).
#ifndef VOUCH_RUNTIME_INIT_H_
#define VOUCH_RUNTIME_INIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/status.h"

namespace vouch::rt {

enum class InitKind { Zeros, Ones, Uniform, Normal, XavierUniform, KaimingUniform };

// uniform: [a, b); normal: mean a, standard deviation b; the others ignore a and b.
struct InitSpec {
  InitKind kind = InitKind::Zeros;
  double a = 0, b = 0;
};

// Names as written in model descriptions: zeros, ones, uniform(a, b) (default 0, 1),
// normal(mean, std) (default 0, 1), xavier_uniform, kaiming_uniform.
Result<InitSpec> parse_init(const std::string& name, const std::vector<double>& args);

// The seed of the parameter at position param_index: next_seed(run_seed, param_index).
uint64_t param_seed(uint64_t run_seed, int param_index);

// Fan-in / fan-out of a weight of shape [out, in, k...]: in*receptive and
// out*receptive, receptive = product of the dims after the second. Rank 1: both
// shape[0]; rank 0: both 1.
struct Fans {
  double fan_in, fan_out;
};
Fans compute_fans(const std::vector<int64_t>& shape);

// Fills out[0 .. numel(shape)) with the initial values of a tensor of that shape.
//   uniform(a,b):     a + rand01(seed,idx)*(b-a)
//   normal(a,b):      a + b*z, z = sqrt(-2 ln max(u1, 2^-32)) cos(2 pi u2),
//                     u1 = rand01(seed, 2 idx), u2 = rand01(seed, 2 idx + 1)
//   xavier_uniform:   limit = sqrt(6/(fan_in+fan_out)), -limit + rand01*2*limit
//   kaiming_uniform:  bound = sqrt(6/fan_in),           -bound + rand01*2*bound
void init_tensor(const InitSpec& spec, uint64_t seed, const std::vector<int64_t>& shape,
                 double* out);

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_INIT_H_
