// shuffle.h: the row order of a shuffled epoch, shared by host and device code.
//
// A model whose train clause says `shuffle = true` visits its n rows in a new order
// every epoch: step k trains on batch b = k % (n / B) of epoch e = k / (n / B), whose
// row j is shuffled_row(b * B + j, n, seed, e). The order is a pure function of
// (position, n, seed, epoch), so the cpu loop and the CUDA batch-selection kernel
// (executor.cuh, run from the device step counter inside the per-step graph) visit the
// same rows with no table to upload, and a run can be replayed from its seed.
//
// The permutation: h = ceil(log2(n) / 2); f is a four-round Feistel network on 2h-bit
// numbers (halves L, R of h bits; round r: L, R = R, L ^ (mix(k_r ^ R) mod 2^h), with
// k_r = mix(key + r), key = mix(mix(seed) ^ epoch), mix = splitmix64's finaliser),
// a bijection of [0, 4^h); positions f(p) >= n are walked on (p -> f(p) -> f(f(p))
// ...) until they land in [0, n), which makes a bijection of [0, n) (cycle walking;
// fewer than four steps on average since 4^h < 4n).
// tools/data/shuffle_reference.py implements the same order independently for the tests.
//
// Plain C++ on purpose: it compiles as host C++ and, under NVRTC / nvcc, as device code.
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_SHUFFLE_H_
#define VOUCH_RUNTIME_CUDA_KERNELS_SHUFFLE_H_

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define VOUCH_SHUFFLE_FN __host__ __device__ inline
#else
#define VOUCH_SHUFFLE_FN inline
#endif

namespace vouch {

// splitmix64's output function of x + 0x9e3779b97f4a7c15 (runtime/rng.h's generator).
VOUCH_SHUFFLE_FN unsigned long long shuffle_mix(unsigned long long x) {
  unsigned long long z = x + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Row visited at `position` (in [0, rows)) of epoch `epoch`; rows >= 1.
VOUCH_SHUFFLE_FN long long shuffled_row(long long position, long long rows,
                                        unsigned long long seed, long long epoch) {
  int bits = 0;
  while ((1LL << bits) < rows) bits++;
  const int half = (bits + 1) / 2;  // rows < 2^62: half <= 31
  const unsigned long long mask = (1ULL << half) - 1;
  const unsigned long long key =
      shuffle_mix(shuffle_mix(seed) ^ (unsigned long long)epoch);
  unsigned long long x = (unsigned long long)position;
  do {
    unsigned long long left = x >> half, right = x & mask;
    for (unsigned long long r = 0; r < 4; r++) {
      const unsigned long long next = left ^ (shuffle_mix(shuffle_mix(key + r) ^ right) & mask);
      left = right;
      right = next;
    }
    x = (left << half) | right;
  } while (x >= (unsigned long long)rows);
  return (long long)x;
}

// How the batch-selection kernel finds a row's words (executor.cuh): each data field's
// block of `batch` rows at word_offset[f] of a batch block, row_words[f] words per row.
// rows == 0: no shuffling (batch k % num_batches is copied as it lies).
constexpr int kMaxShuffledFields = 16;
struct RowOrder {
  unsigned long long seed;
  long long rows, batch;
  int num_fields;
  long long word_offset[kMaxShuffledFields];
  long long row_words[kMaxShuffledFields];
};

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_SHUFFLE_H_
