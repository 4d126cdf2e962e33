// kernels.cu: the kernel speed lab (issue 10's "Speed"; llm.c's dev/cuda habit). Times
// each cuda kernel of runtime/cuda/kernels at GPT-2-sized shapes through the very
// entry points codegen instantiates (kernel_instances.cu) with codegen's launch shapes,
// and prints one machine-readable line per kernel for kernels.py, which times
// PyTorch's same op on the same inputs and checks the outputs against it.
//
// Why these numbers: a memory-bound kernel is judged by the bytes it must move at
// least (each input read once, each output written once) over its time, as a fraction
// of the copy bandwidth measured in the same run (cudaMemcpy device to device and a
// float4 copy kernel over 1 GiB; the faster of the two). Time: CUDA events around each
// launch after an L2 flush, 3 warm-up launches, the median of --reps (default 20).
//
// Inputs are generated on the device from a counter hash (bench_hash below, repeated
// bit for bit by kernels.py), so torch sees the same data without files. Each output
// is summarised by its sum, the sum of its absolute values (in double) and 16 sampled
// elements at hashed positions: kernels.py compares them with torch's, so a fast but
// wrong kernel fails.
//
// Output: "COPY {json}" once, then "KERNEL {json}" per kernel (name, shape, us,
// bytes, gbs, pct_copy, inputs, outputs), then "kernels: N timed". Exit 0, 1 on a CUDA
// error, 3 (printing "SKIPPED (no CUDA device)") without a device.
//
// Build: nvcc -std=c++17 -O2 -arch=sm_90 -I runtime/cuda/kernels \
//          -o bench_kernels tools/bench/kernels/kernels.cu
// Run:   ./bench_kernels [--reps N] [--only NAME] [--variants]
//
// Adding a kernel: one add(...) in cases() below (inputs, outputs, bytes, launch) and
// one entry in kernels.py's TORCH table.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "kernel_instances.cu"

namespace {

#define BENCH_CHECK(call)                                                             \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "bench_kernels: %s failed: %s (%s:%d)\n", #call,           \
                   cudaGetErrorString(e_), __FILE__, __LINE__);                       \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

// ------------------------------------------------------------------ inputs, checksums

// A 32-bit hash of (i, seed); kernels.py's bench_hash is the same arithmetic. Every
// product stays below 2^63 so torch's int64 tensors compute it without overflow.
__host__ __device__ inline uint64_t bench_hash(uint64_t i, uint64_t seed) {
  uint64_t h = ((i + seed * 7919ull) & 0xffffffffull) * 0x5bd1e995ull & 0xffffffffull;
  h ^= h >> 13;
  h = h * 0x5bd1e995ull & 0xffffffffull;
  h ^= h >> 15;
  return h;
}

// x[i] = lo + (hi - lo) * hash / 2^32, rounded once to float (no fma: kernels.py
// evaluates the same two double operations).
__global__ void fill_float(float* x, long long n, uint64_t seed, double lo, double hi) {
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += gridDim.x * 256LL) {
    const double u = double(bench_hash(i, seed)) * 0x1p-32;
    x[i] = float(__dadd_rn(lo, __dmul_rn(hi - lo, u)));
  }
}
// ids[i] = hash % mod.
__global__ void fill_int(int* x, long long n, uint64_t seed, long long mod) {
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += gridDim.x * 256LL)
    x[i] = int(bench_hash(i, seed) % uint64_t(mod));
}

__global__ void checksum(const float* x, long long n, double* out) {
  __shared__ double s[256], a[256];
  double sum = 0, abs_sum = 0;
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += gridDim.x * 256LL) {
    sum += x[i];
    abs_sum += fabs(double(x[i]));
  }
  s[threadIdx.x] = sum;
  a[threadIdx.x] = abs_sum;
  __syncthreads();
  for (int h = 128; h > 0; h >>= 1) {
    if (threadIdx.x < h) {
      s[threadIdx.x] += s[threadIdx.x + h];
      a[threadIdx.x] += a[threadIdx.x + h];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {  // a summary for a loose check: atomics are fine here
    atomicAdd(out, s[0]);
    atomicAdd(out + 1, a[0]);
  }
}

__global__ void copy_kernel(const float4* in, float4* out, long long n) {
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += gridDim.x * 256LL)
    out[i] = in[i];
}

constexpr int kSamples = 16;
constexpr uint64_t kSampleSeed = 777;

// --------------------------------------------------------------------------- cases

struct Input {
  char kind;  // 'f': float in [lo, hi); 'i': int32 hash % mod
  long long n;
  uint64_t seed;
  double lo, hi;
  long long mod;
};
Input floats(long long n, uint64_t seed, double lo, double hi) { return {'f', n, seed, lo, hi, 0}; }
Input ints(long long n, uint64_t seed, long long mod) { return {'i', n, seed, 0, 0, mod}; }

struct Case {
  std::string name, shape;
  std::vector<Input> inputs;
  std::vector<long long> outputs;  // float outputs, element counts
  double bytes;                    // the minimum: inputs read once, outputs written once
  // Launches once with codegen's grid and block: in[k] are the inputs (float* or int*),
  // out[k] the outputs.
  std::function<void(void* const* in, float* const* out)> launch;
};

// Codegen's grids (codegen/recipes): Recipe.cpp's gridStrideBlocks, the row rule of
// softmax / layer_norm / reduce_sum, the pointwise lanes rule.
unsigned grid_stride_blocks(long long lanes) {
  return unsigned(std::max(1LL, std::min((lanes + 255) / 256, 1056LL)));
}
unsigned row_blocks(long long rows) { return unsigned(std::max(1LL, std::min(rows, 4096LL))); }
unsigned pointwise_blocks(long long n) { return grid_stride_blocks(n % 4 == 0 ? n / 4 : n); }

// Codegen's launch bounds of the register paths (f32; NormalizationRecipe.cpp's
// rowBounds): at least 4 blocks of 256 per SM, layer_norm_grad 2.
#define VOUCH_ROWS_BOUNDS __launch_bounds__(256, 4)

// The normalizations as codegen instantiates them: each kernel for its rows' (G, P)
// (rows.cuh's row_group_for / row_slots_for; kernel_instances.cu's lab entry points
// pick at run time among more shapes, which costs registers). Only the shapes the
// cases below use are instantiated.
template <int G, int P>
__global__ void VOUCH_ROWS_BOUNDS bench_softmax(const float* in, float* out, long long outer,
                                                long long n, long long take_log) {
  vouch::softmax_kernel<float, G, P>(in, out, outer, n, 1, take_log != 0);
}
template <int G, int P>
__global__ void VOUCH_ROWS_BOUNDS bench_softmax_grad(const float* grad, const float* output,
                                                     float* out, long long outer, long long n,
                                                     long long take_log) {
  vouch::softmax_grad_kernel<float, G, P>(grad, output, out, outer, n, 1, take_log != 0);
}
template <int G, int P>
__global__ void VOUCH_ROWS_BOUNDS bench_masked_softmax(const float* in, const int* mask,
                                                       vouch::Dims mask_dims, float* out,
                                                       long long outer, long long n) {
  vouch::masked_softmax_kernel<float, G, P>(in, mask, mask_dims, out, outer, n, 1);
}
template <int G, int P>
__global__ void VOUCH_ROWS_BOUNDS bench_layer_norm(const float* x, const float* weight,
                                                   const float* bias, float* y, long long rows,
                                                   long long d, double eps) {
  vouch::layer_norm_kernel<float, G, P>(x, weight, bias, nullptr, y, nullptr, rows, d, eps);
}
// With an addend (vouch-fold-layer-norm-add): the rows normalised are x + r, the sum
// written too.
template <int G, int P>
__global__ void VOUCH_ROWS_BOUNDS bench_layer_norm_add(const float* x, const float* r,
                                                       const float* weight, const float* bias,
                                                       float* y, float* sum, long long rows,
                                                       long long d, double eps) {
  vouch::layer_norm_kernel<float, G, P>(x, weight, bias, r, y, sum, rows, d, eps);
}
// The backward (layer_norm_grad: 2 blocks per SM), its column sums in dynamic shared
// memory (Shared) or registers, the next row's loads issued before this row's
// reductions (Prefetch) or not.
template <int G, int P, bool Shared, bool Prefetch>
__global__ void __launch_bounds__(256, 2)
    bench_layer_norm_grad_v(const float* grad, const float* x, const float* weight, float* dx,
                            float* dweight, float* dbias, long long rows, long long d,
                            double eps, float* partials, unsigned* arrivals) {
  vouch::layer_norm_grad_kernel<float, G, P, Shared, Prefetch>(
      grad, x, weight, nullptr, dx, dweight, dbias, rows, d, eps, partials, arrivals);
}
// embedding_grad's other shapes (embedding.cuh's template arguments): table rows per
// block, ids per thread, vectors per lane; at least MinBlocks blocks of 256 per SM.
template <int Rows, int Ids, int Slots, int MinBlocks>
__global__ void __launch_bounds__(256, MinBlocks)
    bench_embedding_grad(const int* ids, const float* dy, float* out, long long positions,
                         long long V, long long D) {
  vouch::embedding_grad_kernel<float, Rows, Ids, Slots>(ids, dy, out, positions, V, D);
}
// Long rows staged by a cluster of two blocks of 512, half a row each (Parts = 2).
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(512, 2)
    bench_softmax_cluster(const float* in, float* out, long long outer, long long n,
                          long long take_log) {
  vouch::softmax_kernel<float, 0, 0, 2>(in, out, outer, n, 1, take_log != 0);
}
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(512, 2)
    bench_cross_entropy_grad_cluster(const float* logits, const int* labels, const float* dloss,
                                     float* dlogits, long long rows, long long classes,
                                     long long ignore_index, long long pitch) {
  vouch::cross_entropy_grad_kernel<float, 2>(logits, labels, dloss, dlogits, rows, classes,
                                             ignore_index, pitch);
}
// Long rows staged in shared memory by one block of 1024 (softmax.cuh's long_rows_staged).
__global__ void __launch_bounds__(1024, 1)
    bench_softmax_long(const float* in, float* out, long long outer, long long n,
                       long long take_log) {
  vouch::softmax_kernel<float>(in, out, outer, n, 1, take_log != 0);
}
__global__ void __launch_bounds__(1024, 1)
    bench_cross_entropy_grad_long(const float* logits, const int* labels, const float* dloss,
                                  float* dlogits, long long rows, long long classes,
                                  long long ignore_index, long long pitch) {
  vouch::cross_entropy_grad_kernel<float>(logits, labels, dloss, dlogits, rows, classes,
                                          ignore_index, pitch);
}
// The SMs of device 0 (the persistent grids).
int g_sms = 132;
// Dynamic shared memory of `bytes` for kernel f (beyond 48 KB needs the attribute).
template <class K>
void allow_shared(K f, long long bytes) {
  BENCH_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(f),
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}
// f(RowShape<G, P>()) with codegen's (G, P) for rows of n (of those instantiated here).
template <class F>
void codegen_rows(long long n, F f) {
  const int g = vouch::row_group_for(n), p = vouch::row_slots_for(n);
  if (g == 32 && p == 24) return f(RowShape<32, 24>());
  if (g == 256 && p == 12) return f(RowShape<256, 12>());
  if (g == 0) return f(RowShape<0, 0>());
  std::fprintf(stderr, "bench_kernels: no instance for rows of %lld (G %d, P %d)\n", n, g, p);
  std::exit(1);
}
#define BENCH_ROWS(n, CALL) \
  codegen_rows(n, [&](auto shape) { constexpr int G = decltype(shape)::kG, P = decltype(shape)::kP; CALL; })

// layer_norm_grad's scratch for rows of d (layernorm.cuh's sizes; the counters zeroed,
// as the executor's zero_init does).
struct LayerNormGradScratch {
  float* partials;
  unsigned* arrivals;
};
LayerNormGradScratch layer_norm_grad_scratch(long long rows, long long d) {
  const long long grid = vouch::layer_norm_grad_grid(rows);
  const long long groups = vouch::layer_norm_grad_groups(grid);
  LayerNormGradScratch s{nullptr, nullptr};
  BENCH_CHECK(cudaMalloc(&s.partials, sizeof(float) * 2 * d * (grid + groups)));
  BENCH_CHECK(cudaMalloc(&s.arrivals, sizeof(unsigned) * (groups + 1)));
  BENCH_CHECK(cudaMemset(s.arrivals, 0, sizeof(unsigned) * (groups + 1)));
  return s;
}

float* F(void* p) { return static_cast<float*>(p); }
int* I(void* p) { return static_cast<int*>(p); }

std::string shape2(long long a, long long b) { return std::to_string(a) + "x" + std::to_string(b); }

std::vector<Case> cases(bool variants) {
  std::vector<Case> all;
  auto add = [&](Case c) { all.push_back(std::move(c)); };
  const long long R = 8192;  // rows: GPT-2 small's batch 8 x 1024 tokens
  const long long V = 50257, E = 768;

  // --variants: the case just added again with another launch, named "kernel~shape"
  // (timed and checked like the rest, not counted against the target).
  auto variant = [&](const char* shape, std::function<void(void* const*, float* const*)> launch) {
    if (!variants) return;
    size_t base = all.size() - 1;  // the last case that is not itself a variant
    while (all[base].name.find('~') != std::string::npos) --base;
    Case v = all[base];
    v.name += std::string("~") + shape;
    v.launch = std::move(launch);
    add(std::move(v));
  };

  for (long long D : {768LL, 3072LL, 50257LL})
    for (int take_log : {0, 1}) {
      const long long n = R * D;
      // Codegen's launch: rows a warp or the block holds (rows.cuh), else long rows
      // staged in shared memory by clusters of two blocks of 512, at most four blocks
      // per SM (Recipe.cpp's longRowLaunch).
      const bool staged = vouch::row_group_for(D) == 0;
      const long long half = vouch::long_row_part_bytes(D, 4, 2);
      const unsigned pairs = unsigned(std::min(2 * R, 4LL * g_sms));
      if (staged) allow_shared(bench_softmax_cluster, half);
      add({take_log ? "log_softmax" : "softmax", shape2(R, D), {floats(n, 1, -4, 4)}, {n},
           8.0 * n, [=](void* const* in, float* const* out) {
             if (staged) {
               bench_softmax_cluster<<<pairs, 512, half>>>(F(in[0]), out[0], R, D, take_log);
               return;
             }
             BENCH_ROWS(D, (bench_softmax<G, P><<<row_blocks(R), 256>>>(F(in[0]), out[0], R, D,
                                                                      take_log)));
           }});
      if (D == 768 && !take_log)  // the block per row instead of a warp
        variant("block", [=](void* const* in, float* const* out) {
          bench_softmax<256, 4><<<row_blocks(R), 256>>>(F(in[0]), out[0], R, D, 0);
        });
      if (staged) {
        // Without shared memory: a block of 256 per row, each row read twice.
        variant("unstaged", [=](void* const* in, float* const* out) {
          bench_softmax<0, 0><<<row_blocks(R), 256>>>(F(in[0]), out[0], R, D, take_log);
        });
        // One block of 1024 staging the whole row (201 KB), one per SM.
        const long long whole = vouch::long_row_shared_bytes(D, 4);
        allow_shared(bench_softmax_long, whole);
        variant("one_block", [=](void* const* in, float* const* out) {
          bench_softmax_long<<<unsigned(g_sms), 1024, whole>>>(F(in[0]), out[0], R, D, take_log);
        });
      }
    }
  for (long long D : {768LL, 3072LL})
    for (int take_log : {0, 1}) {
      const long long n = R * D;
      // grad, then the forward's output (probabilities, or log-probabilities).
      add({take_log ? "log_softmax_grad" : "softmax_grad", shape2(R, D),
           {floats(n, 2, -1, 1), take_log ? floats(n, 3, -12, 0) : floats(n, 3, 0, 2.0 / D)},
           {n}, 12.0 * n, [=](void* const* in, float* const* out) {
             BENCH_ROWS(D, (bench_softmax_grad<G, P><<<row_blocks(R), 256>>>(
                               F(in[0]), F(in[1]), out[0], R, D, take_log)));
           }});
    }
  {
    const long long n = R * V;
    add({"cross_entropy", shape2(R, V), {floats(n, 4, -4, 4), ints(R, 5, V)}, {1},
         4.0 * n + 4.0 * R + 4, [=](void* const* in, float* const* out) {
           lab_cross_entropy_f32<<<unsigned(std::min(R, 1024LL)), 256>>>(
               F(in[0]), I(in[1]), out[0], R, V, -100, V);
         }});
    // Codegen's launch (more than 4096 classes): rows staged in shared memory by
    // clusters of two blocks of 512, at most four blocks per SM.
    const long long half = vouch::long_row_part_bytes(V, 4, 2);
    const unsigned pairs = unsigned(std::min(2 * R, 4LL * g_sms));
    allow_shared(bench_cross_entropy_grad_cluster, half);
    add({"cross_entropy_grad", shape2(R, V),
         {floats(n, 4, -4, 4), ints(R, 5, V), floats(1, 6, 1, 1)}, {n},
         8.0 * n + 4.0 * R + 4, [=](void* const* in, float* const* out) {
           bench_cross_entropy_grad_cluster<<<pairs, 512, half>>>(F(in[0]), I(in[1]), F(in[2]),
                                                                  out[0], R, V, -100, V);
         }});
    variant("unstaged", [=](void* const* in, float* const* out) {  // a block of 256 per row
      lab_cross_entropy_grad_f32<<<unsigned(std::min(R, 65535LL)), 256>>>(
          F(in[0]), I(in[1]), F(in[2]), out[0], R, V, -100, V);
    });
    const long long whole = vouch::long_row_shared_bytes(V, 4);
    allow_shared(bench_cross_entropy_grad_long, whole);
    variant("one_block", [=](void* const* in, float* const* out) {  // 1024 staging a row
      bench_cross_entropy_grad_long<<<unsigned(g_sms), 1024, whole>>>(F(in[0]), I(in[1]),
                                                                     F(in[2]), out[0], R, V, -100, V);
    });
  }
  for (long long D : {768LL, 3072LL}) {
    const long long n = R * D;
    add({"layer_norm", shape2(R, D),
         {floats(n, 7, -2, 2), floats(D, 8, 0.5, 1.5), floats(D, 9, -0.5, 0.5)}, {n},
         8.0 * n + 8.0 * D, [=](void* const* in, float* const* out) {
           BENCH_ROWS(D, (bench_layer_norm<G, P><<<row_blocks(R), 256>>>(
                             F(in[0]), F(in[1]), F(in[2]), out[0], R, D, 1e-5)));
         }});
    if (D == 768)
      variant("block", [=](void* const* in, float* const* out) {
        bench_layer_norm<256, 4><<<row_blocks(R), 256>>>(F(in[0]), F(in[1]), F(in[2]), out[0], R,
                                                         D, 1e-5);
      });
  }
  for (long long D : {768LL, 3072LL}) {
    // A residual add and the layer_norm of its sum in one launch: x and r read, y and
    // the sum written (torch: x + r, then F.layer_norm).
    const long long n = R * D;
    add({"layer_norm_add", shape2(R, D),
         {floats(n, 7, -2, 2), floats(n, 10, -1, 1), floats(D, 8, 0.5, 1.5),
          floats(D, 9, -0.5, 0.5)},
         {n, n}, 16.0 * n + 8.0 * D, [=](void* const* in, float* const* out) {
           BENCH_ROWS(D, (bench_layer_norm_add<G, P><<<row_blocks(R), 256>>>(
                             F(in[0]), F(in[1]), F(in[2]), F(in[3]), out[0], out[1], R, D,
                             1e-5)));
         }});
  }
  for (long long D : {768LL, 3072LL}) {
    // dx, dweight, dbias in one launch (layernorm.cuh): one block per 32 rows, at most
    // 512 (layer_norm_grad_grid), its partials and tickets in scratch.
    const long long n = R * D;
    const unsigned grid = unsigned(vouch::layer_norm_grad_grid(R));
    const LayerNormGradScratch scratch = layer_norm_grad_scratch(R, D);
    float* partials = scratch.partials;
    unsigned* arrivals = scratch.arrivals;
    // Codegen's instantiation (NormalizationRecipe.cpp): rows of a warp keep their
    // column sums in shared memory (sized for f64, as codegen asks), the block's rows
    // prefetch the next row.
    const long long shared_bytes = vouch::row_group_for(D) == 32
                                       ? vouch::layer_norm_grad_shared_bytes(D, 32, 8)
                                       : 0;
    BENCH_ROWS(D, allow_shared(bench_layer_norm_grad_v<G, P, G == 32, G == 256>,
                               std::max(shared_bytes, 1LL)));
    add({"layer_norm_grad", shape2(R, D),
         {floats(n, 20, -1, 1), floats(n, 7, -2, 2), floats(D, 8, 0.5, 1.5)}, {n, D, D},
         12.0 * n + 12.0 * D, [=](void* const* in, float* const* out) {
           BENCH_ROWS(D, (bench_layer_norm_grad_v<G, P, G == 32, G == 256>
                          <<<grid, 256, shared_bytes>>>(F(in[0]), F(in[1]), F(in[2]), out[0],
                                                        out[1], out[2], R, D, 1e-5, partials,
                                                        arrivals)));
         }});
    // Rows of a warp issuing the next row's loads before this row's reductions too.
    if (vouch::row_group_for(D) == 32) {
      BENCH_ROWS(D, allow_shared(bench_layer_norm_grad_v<G, P, true, true>,
                                 std::max(shared_bytes, 1LL)));
      variant("prefetch", [=](void* const* in, float* const* out) {
        BENCH_ROWS(D, (bench_layer_norm_grad_v<G, P, true, true><<<grid, 256, shared_bytes>>>(
                          F(in[0]), F(in[1]), F(in[2]), out[0], out[1], out[2], R, D, 1e-5,
                          partials, arrivals)));
      });
    }
    // The column sums in registers, no prefetch (the fifth session's kernel).
    variant("regs", [=](void* const* in, float* const* out) {
      BENCH_ROWS(D, (bench_layer_norm_grad_v<G, P, false, false><<<grid, 256>>>(
                        F(in[0]), F(in[1]), F(in[2]), out[0], out[1], out[2], R, D, 1e-5,
                        partials, arrivals)));
    });
  }
  for (long long D : {768LL, 3072LL}) {
    // A 0/1 int32 mask of the input's shape (about half kept), read through its Dims.
    const long long n = R * D;
    vouch::Dims mask_dims{};
    mask_dims.rank = 2, mask_dims.extent[0] = R, mask_dims.extent[1] = D;
    mask_dims.stride[0] = D, mask_dims.stride[1] = 1;
    add({"masked_softmax", shape2(R, D), {floats(n, 21, -4, 4), ints(n, 22, 2)}, {n},
         12.0 * n, [=](void* const* in, float* const* out) {
           BENCH_ROWS(D, (bench_masked_softmax<G, P><<<row_blocks(R), 256>>>(
                             F(in[0]), I(in[1]), mask_dims, out[0], R, D)));
         }});
  }
  add({"embedding", "8192 of " + shape2(V, E), {ints(R, 10, V), floats(V * E, 11, -1, 1)},
       {R * E}, 4.0 * R + 8.0 * R * E, [=](void* const* in, float* const* out) {
         lab_embedding_f32<<<grid_stride_blocks(R * E), 256>>>(I(in[0]), F(in[1]), out[0], R,
                                                               V, E);
       }});
  add({"embedding_grad", "8192 into " + shape2(V, E), {ints(R, 10, V), floats(R * E, 12, -1, 1)},
       {V * E}, 4.0 * R + 4.0 * R * E + 4.0 * V * E, [=](void* const* in, float* const* out) {
         lab_embedding_grad_f32<<<grid_stride_blocks(V * E), 256>>>(I(in[0]), F(in[1]), out[0],
                                                                    R, V, E);
       }});
#define EMBEDDING_GRAD_VARIANT(NAME, ROWS, IDS, SLOTS, MIN_BLOCKS)                         \
  variant(NAME, [=](void* const* in, float* const* out) {                                  \
    bench_embedding_grad<ROWS, IDS, SLOTS, MIN_BLOCKS>                                     \
        <<<grid_stride_blocks(V * E), 256>>>(I(in[0]), F(in[1]), out[0], R, V, E);         \
  })
  EMBEDDING_GRAD_VARIANT("ids8_slots8", 64, 8, 8, 4);
  EMBEDDING_GRAD_VARIANT("rows128", 128, 4, 6, 4);
  EMBEDDING_GRAD_VARIANT("rows32", 32, 4, 6, 4);
#undef EMBEDDING_GRAD_VARIANT
  {
    const long long n = R * 3072;  // the MLP's hidden activations
    const std::string s = shape2(R, 3072);
    add({"add_relu", s, {floats(n, 13, -1, 1), floats(n, 14, -1, 1)}, {n}, 12.0 * n,
         [=](void* const* in, float* const* out) {
           lab_add_relu_f32<<<pointwise_blocks(n), 256>>>(out[0], F(in[0]), F(in[1]), n, 0);
         }});
    add({"mul_sub", s, {floats(n, 13, -1, 1), floats(n, 14, -1, 1)}, {n, n}, 16.0 * n,
         [=](void* const* in, float* const* out) {
           lab_mul_sub_f32<<<pointwise_blocks(n), 256>>>(out[0], out[1], F(in[0]), F(in[1]), n,
                                                         0);
         }});
    add({"sub_scale_mul", s, {floats(n, 13, -1, 1), floats(n, 14, -1, 1), floats(1, 15, 2, 2)},
         {n}, 12.0 * n + 4, [=](void* const* in, float* const* out) {
           lab_sub_scale_mul_f32<<<pointwise_blocks(n), 256>>>(out[0], F(in[0]), F(in[1]),
                                                               F(in[2]), n, 4);
         }});
    add({"tanh", s, {floats(n, 13, -3, 3)}, {n}, 8.0 * n,
         [=](void* const* in, float* const* out) {
           lab_tanh_f32<<<pointwise_blocks(n), 256>>>(out[0], F(in[0]), n, 0);
         }});
  }
  {
    const long long n = R * E;
    // ceil(E / 32) column blocks times reduce.cuh's row slabs, their scratch.
    const long long col_blocks = (E + 31) / 32, slabs = vouch::column_sum_slabs(R, E);
    float* col_partials = nullptr;
    unsigned* col_arrivals = nullptr;
    BENCH_CHECK(cudaMalloc(&col_partials, sizeof(float) * slabs * E));
    BENCH_CHECK(cudaMalloc(&col_arrivals, sizeof(unsigned) * col_blocks));
    BENCH_CHECK(cudaMemset(col_arrivals, 0, sizeof(unsigned) * col_blocks));
    add({"column_sum", shape2(R, E), {floats(n, 16, -1, 1)}, {E}, 4.0 * n + 4.0 * E,
         [=](void* const* in, float* const* out) {
           lab_column_sum_f32<<<unsigned(col_blocks * slabs), dim3(32, 32)>>>(
               F(in[0]), out[0], R, E, 1, col_partials, col_arrivals);
         }});
    const long long D = 3072, m = R * D;
    vouch::Dims kept{}, reduced{};
    kept.rank = 1, kept.extent[0] = R, kept.stride[0] = D;
    reduced.rank = 1, reduced.extent[0] = D, reduced.stride[0] = 1;
    add({"row_sum", shape2(R, D), {floats(m, 17, -1, 1)}, {R}, 4.0 * m + 4.0 * R,
         [=](void* const* in, float* const* out) {
           lab_reduce_f32<<<row_blocks(R), 256>>>(F(in[0]), out[0], kept, reduced, R, D, 1);
         }});
    add({"mse_loss", shape2(R, E), {floats(n, 18, -1, 1), floats(n, 19, -1, 1)}, {1},
         8.0 * n + 4, [=](void* const* in, float* const* out) {
           lab_mse_loss_f32<<<unsigned(vouch::mse_loss_grid(n)), 256>>>(F(in[0]), F(in[1]), out[0], n);
         }});
  }
  return all;
}

// ------------------------------------------------------------------------- timing

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Twice the L2 (set in main), zeroed before each timed launch.
void* g_flush = nullptr;
size_t g_flush_bytes = 0;

// The median time in microseconds of `reps` launches of f, after 3 warm-up ones. Each
// timed launch follows an L2 flush (llm.c's dev/cuda method): its inputs come from
// memory, not from the last launch's L2, and the GPU is busy with the flush while the
// launch is enqueued, so the events time the GPU's work, not the host's launch.
template <class Fn>
double time_us(Fn f, int reps) {
  cudaEvent_t a, b;
  BENCH_CHECK(cudaEventCreate(&a));
  BENCH_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) f();
  BENCH_CHECK(cudaGetLastError());
  BENCH_CHECK(cudaDeviceSynchronize());
  std::vector<float> ms(reps);
  for (int i = 0; i < reps; ++i) {
    if (g_flush) BENCH_CHECK(cudaMemsetAsync(g_flush, 0, g_flush_bytes));
    BENCH_CHECK(cudaEventRecord(a));
    f();
    BENCH_CHECK(cudaEventRecord(b));
    BENCH_CHECK(cudaEventSynchronize(b));
    BENCH_CHECK(cudaEventElapsedTime(&ms[i], a, b));
  }
  BENCH_CHECK(cudaGetLastError());
  BENCH_CHECK(cudaEventDestroy(a));
  BENCH_CHECK(cudaEventDestroy(b));
  return 1000.0 * median(ms);
}

std::string json_input(const Input& in) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "{\"kind\":\"%c\",\"n\":%lld,\"seed\":%llu,\"lo\":%.17g,\"hi\":%.17g,\"mod\":%lld}",
                in.kind, in.n, (unsigned long long)in.seed, in.lo, in.hi, in.mod);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 20;
  bool variants = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      only = argv[++i];
    } else if (!std::strcmp(argv[i], "--variants")) {
      variants = true;
    } else {
      std::fprintf(stderr, "usage: %s [--reps N] [--only NAME] [--variants]\n", argv[0]);
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIPPED (no CUDA device)\n");
    return 3;
  }
  cudaDeviceProp prop;
  BENCH_CHECK(cudaGetDeviceProperties(&prop, 0));
  g_sms = prop.multiProcessorCount;
  g_flush_bytes = 2 * size_t(std::max(prop.l2CacheSize, 1 << 20));
  BENCH_CHECK(cudaMalloc(&g_flush, g_flush_bytes));

  // The copy bandwidth: 1 GiB in, 1 GiB out (2 GiB moved).
  double copy_gbs;
  {
    const long long n = (1LL << 30) / 4;
    float *a, *b;
    BENCH_CHECK(cudaMalloc(&a, 4 * n));
    BENCH_CHECK(cudaMalloc(&b, 4 * n));
    fill_float<<<4096, 256>>>(a, n, 99, -1, 1);
    const double bytes = 8.0 * n;
    const double memcpy_us =
        time_us([&] { BENCH_CHECK(cudaMemcpyAsync(b, a, 4 * n, cudaMemcpyDeviceToDevice)); }, reps);
    const double kernel_us = time_us(
        [&] {
          copy_kernel<<<prop.multiProcessorCount * 8, 256>>>(
              reinterpret_cast<const float4*>(a), reinterpret_cast<float4*>(b), n / 4);
        },
        reps);
    const double memcpy_gbs = bytes / memcpy_us / 1e3, kernel_gbs = bytes / kernel_us / 1e3;
    copy_gbs = std::max(memcpy_gbs, kernel_gbs);
    std::printf("COPY {\"device\":\"%s\",\"bytes\":%.0f,\"memcpy_gbs\":%.1f,"
                "\"kernel_gbs\":%.1f,\"gbs\":%.1f}\n",
                prop.name, bytes, memcpy_gbs, kernel_gbs, copy_gbs);
    BENCH_CHECK(cudaFree(a));
    BENCH_CHECK(cudaFree(b));
  }

  int timed = 0;
  double* sums;
  BENCH_CHECK(cudaMalloc(&sums, 2 * sizeof(double)));
  for (const Case& c : cases(variants)) {
    if (!only.empty() && c.name.substr(0, c.name.find('~')) != only) continue;  // a kernel and its variants
    std::vector<void*> in;
    for (const Input& s : c.inputs) {
      void* p;
      BENCH_CHECK(cudaMalloc(&p, 4 * s.n));
      if (s.kind == 'f')
        fill_float<<<4096, 256>>>(F(p), s.n, s.seed, s.lo, s.hi);
      else
        fill_int<<<4096, 256>>>(I(p), s.n, s.seed, s.mod);
      in.push_back(p);
    }
    std::vector<float*> out;
    for (long long n : c.outputs) {
      float* p;
      BENCH_CHECK(cudaMalloc(&p, 4 * n));
      BENCH_CHECK(cudaMemset(p, 0xff, 4 * n));  // NaN: an unwritten element shows
      out.push_back(p);
    }
    BENCH_CHECK(cudaDeviceSynchronize());
    const double us = time_us([&] { c.launch(in.data(), out.data()); }, reps);
    // A copy moving the same bytes (half read, half written; the faster of the copy
    // kernel and cudaMemcpy): what this size allows.
    double copy_us = 0;
    {
      const long long n4 = std::max(1LL, (long long)(c.bytes / 32));  // float4s each way
      float4 *a, *b;
      BENCH_CHECK(cudaMalloc(&a, 16 * n4));
      BENCH_CHECK(cudaMalloc(&b, 16 * n4));
      BENCH_CHECK(cudaMemset(a, 0, 16 * n4));
      copy_us = std::min(
          time_us([&] { copy_kernel<<<unsigned(g_sms * 8), 256>>>(a, b, n4); }, reps),
          time_us([&] { BENCH_CHECK(cudaMemcpyAsync(b, a, 16 * n4, cudaMemcpyDeviceToDevice)); },
                  reps));
      BENCH_CHECK(cudaFree(a));
      BENCH_CHECK(cudaFree(b));
    }
    const double gbs = c.bytes / us / 1e3;
    std::string outs = "[";
    for (size_t k = 0; k < out.size(); ++k) {
      const long long n = c.outputs[k];
      BENCH_CHECK(cudaMemset(sums, 0, 2 * sizeof(double)));
      checksum<<<1024, 256>>>(out[k], n, sums);
      double h[2];
      BENCH_CHECK(cudaMemcpy(h, sums, sizeof h, cudaMemcpyDeviceToHost));
      char buf[128];
      std::snprintf(buf, sizeof buf, "{\"n\":%lld,\"sum\":%.17g,\"abs_sum\":%.17g,\"samples\":[",
                    n, h[0], h[1]);
      outs += (k ? "," : "") + std::string(buf);
      for (int s = 0; s < kSamples; ++s) {
        const long long at = (long long)(bench_hash(s, kSampleSeed) % uint64_t(n));
        float v;
        BENCH_CHECK(cudaMemcpy(&v, out[k] + at, 4, cudaMemcpyDeviceToHost));
        std::snprintf(buf, sizeof buf, "%s%.9g", s ? "," : "", double(v));
        outs += buf;
      }
      outs += "]}";
    }
    outs += "]";
    std::string ins = "[";
    for (size_t k = 0; k < c.inputs.size(); ++k) ins += (k ? "," : "") + json_input(c.inputs[k]);
    ins += "]";
    std::printf("KERNEL {\"name\":\"%s\",\"shape\":\"%s\",\"us\":%.2f,\"bytes\":%.0f,"
                "\"gbs\":%.1f,\"pct_copy\":%.1f,\"copy_us\":%.2f,\"inputs\":%s,"
                "\"outputs\":%s}\n",
                c.name.c_str(), c.shape.c_str(), us, c.bytes, gbs, 100.0 * gbs / copy_gbs,
                copy_us, ins.c_str(), outs.c_str());
    std::fflush(stdout);
    ++timed;
    for (void* p : in) BENCH_CHECK(cudaFree(p));
    for (float* p : out) BENCH_CHECK(cudaFree(p));
  }
  BENCH_CHECK(cudaFree(sums));
  std::printf("kernels: %d timed\n", timed);
  return 0;
}
