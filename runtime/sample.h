// sample.h: generating tokens from a trained language model (--sample).
//
// A model whose one input is a window of T token ids and whose output is the logits of
// every position ([batch, T, V]) continues a context token by token: each step runs
// the forward pass on the last T tokens and draws the next from the logits at the last
// position. The draw is the inverse CDF of softmax(logits / temperature) at a uniform
// u of the reference semantics' counter-based generator (rng.h), so a run is a pure
// function of the params, the seed and the prompt; temperature 0 takes the argmax.
#ifndef VOUCH_RUNTIME_SAMPLE_H_
#define VOUCH_RUNTIME_SAMPLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/status.h"

namespace vouch::rt {

// The seed of the u of draw i: rand01(sample_seed(run seed), i).
uint64_t sample_seed(uint64_t run_seed);

// The token drawn from logits[0..V) at `temperature` (> 0) with u in [0, 1): the first
// token whose cumulative probability exceeds u (the probabilities in double, shifted by
// the maximum). Temperature 0: the first maximal logit.
template <class T>
int64_t draw_token(const T* logits, int64_t V, double temperature, double u);

// A token vocabulary: token i is the string strings[i] (a JSON array of strings on
// disk, as tools/data/fortunes.py writes it).
struct Vocab {
  std::vector<std::string> strings;
  std::string decode(const std::vector<int64_t>& tokens) const;
  // The tokens of `text` by longest match from the left; an error names the first
  // byte no token matches.
  Result<std::vector<int64_t>> encode(const std::string& text) const;
};

// Reads a vocabulary file; refuses anything but a non-empty JSON array of strings.
Result<Vocab> load_vocab(const std::string& path);

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_SAMPLE_H_
