// sample.cc: token draws and vocabularies for --sample (sample.h).
#include "runtime/sample.h"

#include <algorithm>
#include <cmath>

#include "runtime/input_file.h"
#include "runtime/json.h"
#include "runtime/rng.h"

namespace vouch::rt {

// The stream of the sampling draws, apart from the initialisers' (next_seed(S, i) for
// param i) and the random ops' (counter_rng.h): "sample" in ASCII.
uint64_t sample_seed(uint64_t run_seed) { return next_seed(run_seed, 0x73616d706c65ull); }

template <class T>
int64_t draw_token(const T* logits, int64_t V, double temperature, double u) {
  int64_t best = 0;
  for (int64_t v = 1; v < V; v++)
    if (logits[v] > logits[best]) best = v;
  if (temperature <= 0) return best;
  const double top = double(logits[best]);
  std::vector<double> weights(static_cast<size_t>(V));
  double total = 0;
  for (int64_t v = 0; v < V; v++) {
    weights[size_t(v)] = std::exp((double(logits[v]) - top) / temperature);
    total += weights[size_t(v)];
  }
  double cumulative = 0;
  for (int64_t v = 0; v < V; v++) {
    cumulative += weights[size_t(v)] / total;
    if (u < cumulative) return v;
  }
  // Rounding left the sum just below 1 and u above it: the last token with mass.
  for (int64_t v = V - 1; v >= 0; v--)
    if (weights[size_t(v)] > 0) return v;
  return best;
}

template int64_t draw_token<float>(const float*, int64_t, double, double);
template int64_t draw_token<double>(const double*, int64_t, double, double);

std::string Vocab::decode(const std::vector<int64_t>& tokens) const {
  std::string text;
  for (int64_t t : tokens) text += strings[size_t(t)];
  return text;
}

Result<std::vector<int64_t>> Vocab::encode(const std::string& text) const {
  std::vector<int64_t> tokens;
  for (size_t at = 0; at < text.size();) {
    int64_t match = -1;
    size_t length = 0;
    for (size_t i = 0; i < strings.size(); i++)
      if (strings[i].size() > length && text.compare(at, strings[i].size(), strings[i]) == 0) {
        match = int64_t(i);
        length = strings[i].size();
      }
    if (match < 0)
      return Status::Error("no token of the vocabulary matches byte " + std::to_string(at) +
                           " ('" + text.substr(at, 1) + "')");
    tokens.push_back(match);
    at += length;
  }
  return tokens;
}

Result<Vocab> load_vocab(const std::string& path) {
  // GPT-2's 50257 tokens are under 1 MiB of JSON.
  Result<std::string> text = read_small_file(path, uint64_t(1) << 28, "a vocabulary");
  if (!text.ok()) return text.status();
  Result<JsonValue> json = parse_json(text.value());
  if (!json.ok()) return Status::Error(path + ": " + json.status().message());
  const JsonValue& v = json.value();
  if (v.kind != JsonValue::Array || v.items.empty())
    return Status::Error(path + ": expected a non-empty JSON array of token strings");
  Vocab vocab;
  for (size_t i = 0; i < v.items.size(); i++) {
    if (v.items[i].kind != JsonValue::String)
      return Status::Error(path + ": token " + std::to_string(i) + " is not a string");
    vocab.strings.push_back(v.items[i].text);
  }
  return vocab;
}

}  // namespace vouch::rt
