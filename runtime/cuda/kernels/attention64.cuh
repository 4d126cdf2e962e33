// attention64.cuh: tensor-core attention for heads of at most 64 features (GPT-2's),
// with FlashAttention-2's split of the work. The semantics, arguments and results are
// attention.cuh's (read its header: hard masks, causal top-left, fully blocked rows
// exact zeros and lse -inf, Tq != Tk, any strides through Dims), and so are the
// products' policies (AttnTf32: operands rounded to TF32 by cvt.rna; AttnBf16: to bf16
// by cvt.rn; FP32 accumulation; statistics, masking in FP32), but for the exponentials:
// the softmax's e^x is the hardware's 2^x (ex2.approx.ftz.f32, about 2 ulp) of x · log2 e
// (a64_exp2), where attention.cuh calls expf. What differs is
// where the work and the data live, which is what makes these kernels 3-5x faster than
// attention.cuh's tensor-core ones at GPT-2's shape (docs/performance.md):
//  - a block of 4 warps takes a 64-row tile; each warp owns 16 of its rows and ALL 64
//    columns of every 16 × 64 product, so a row's softmax statistics never leave the
//    warp (the 4 lanes of a row, xor shuffles 1 and 2), and P (or dS) stays in the
//    registers it was computed in: the accumulator layout of an m16n8 product is used
//    directly as the A operand of the next product, by numbering the reduction slots of
//    each mma to match it (an mma sums over all its k slots, so any numbering A and B
//    share gives the same sum; see A64Tf32::cr);
//  - tiles arrive in shared memory as [64][64] floats, XOR-swizzled (row r's 16-byte
//    chunk c stored at chunk c ^ (r % 8)). TF32 products read them as they are, both
//    ways free of bank conflicts with no padding: 16-byte rows by ldmatrix (rr: the
//    operand's rows are the product's rows or columns) and single floats down a column
//    (cr: the operand's rows are the reduction). bf16 products read bf16 tiles (8 KiB,
//    128-byte rows swizzled alike, in the first half of the same buffer): rr by
//    ldmatrix, cr by ldmatrix.trans, half the bytes a float tile costs them;
//  - the other operand's tiles are double-buffered: the next tile's rows are copied by
//    cp.async (16-byte copies, no register staging) while the warps compute on this one,
//    two __syncthreads a tile. A float tile is finished once, as it arrives
//    (a64_finish_tiles): TF32 rounds it in place; bf16 converts it to bf16 (cvt.rn
//    packs two in one instruction), which costs one more __syncthreads for each tile
//    converted (the bf16 land on other threads' floats); a value rounds to the same
//    bits whichever warp reads it. Under bf16 products q, k and v may instead come as
//    bf16 bits (In = unsigned short: codegen's bf16 qkv buffer): their rows are copied
//    straight into the bf16 layout, 8 values a 16-byte copy, nothing to finish (no
//    conversion, no extra __syncthreads), half the bytes of q, k and v read. Those bits
//    are the f32 values rounded to nearest even (round_to_bf16), as cvt.rn rounds, so
//    the tiles, and every result, are bitwise those of the f32 q, k, v (the lab checks).
// Every product folds its reduction index in ascending k-steps, every row sum and max
// has a fixed shuffle order, each result is written once, no atomics: the same bits
// every run, whatever the grid.
//
// Kernels (Tc = A64Tf32 or A64Bf16; In, the element of q, k and v: float, or unsigned
// short (bf16 bits) with A64Bf16 only; dout, lse, delta and every result float), entry
// names as attention.cuh's with attention64_ for attention_:
//  - attention64_forward_kernel<Tc, In>: a block per query tile; per key tile S = Q Kᵀ,
//    the online softmax (a whole tile inside the causal triangle without a mask skips
//    the per-entry tests: a64_softmax_path), O += P V. Then O / l and lse.
//  - attention64_dq_kernel<Tc, In>: a block per query tile; per key tile S, dP = dO Vᵀ,
//    dS = P ∘ (dP - delta), dQ += dS K. delta comes from attention_delta_kernel.
//  - attention64_dkdv_kernel<Tc, In>: a block per key tile; per query tile Sᵀ = K Qᵀ,
//    dPᵀ = V dOᵀ, Pᵀ and dSᵀ, dV += Pᵀ dO, dK += dSᵀ Q.
// The entries attention64_{forward,dq,dkdv}_{tf32,bf16}_kernel take float q, k, v; the
// bf16 ones are overloaded for const unsigned short* q, k, v (the same parameters
// otherwise), so a call with a bf16 qkv buffer picks In = unsigned short.
// Causal: key tiles past a query tile's last row, and query tiles before a key tile's
// first key, are skipped whole; blocks take the tiles with the most work first.
// Launch: block kAttention64Threads (128), grid attention_tile_grid(batch_count, Tq)
// (forward, dq) or (batch_count, Tk) (dkdv), any grid correct (tiles grid-stride);
// dynamic shared memory attention64_forward_shared_bytes(bf16_inputs) (81,920; bf16 q, k,
// v: 40,960), _dq_ (98,304; 57,344), _dkdv_ (99,328; 66,560): q, k and v tiles of floats,
// or of bf16 alone (attention64_tile_floats), dO's float. Above 48 KiB, so the host sets
// cudaFuncAttributeMaxDynamicSharedMemorySize; a launch given less, or with D or Dv above
// 64, traps (codegen takes attention.cuh's kernels for wider heads). sm_80 or newer.
// Entry points take __launch_bounds__(128, 2): two blocks per SM, all that float tiles'
// shared memory allows; codegen's bf16-input forward and dq take (128, 3), which their
// smaller tiles allow (its a64BlocksPerSm says what that measured).
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_ATTENTION64_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_ATTENTION64_CUH_

#include "attention.cuh"

namespace vouch {

constexpr int kAttention64Threads = 128;  // 4 warps of 16 rows
constexpr int kAttention64Floats = 64 * 64;  // one swizzled tile

// The floats of a q, k or v tile's buffer: a float tile (bf16 products convert it in place
// into its first half), or, for bf16 q, k, v, a bf16 tile's 8 KiB alone. dO's buffers stay
// float tiles.
__host__ __device__ constexpr int attention64_tile_floats(bool bf16_inputs) {
  return bf16_inputs ? kAttention64Floats / 2 : kAttention64Floats;
}
__host__ __device__ constexpr long long attention64_forward_shared_bytes(bool bf16_inputs = false) {
  return 5LL * attention64_tile_floats(bf16_inputs) * 4;  // Q, K × 2, V × 2
}
__host__ __device__ constexpr long long attention64_dq_shared_bytes(bool bf16_inputs = false) {
  return (5LL * attention64_tile_floats(bf16_inputs) + kAttention64Floats) * 4;  // Q, K × 2, V × 2; dO
}
__host__ __device__ constexpr long long attention64_dkdv_shared_bytes(bool bf16_inputs = false) {
  // K, V, Q × 2; dO × 2; lse, delta × 2
  return (4LL * attention64_tile_floats(bf16_inputs) + 2LL * kAttention64Floats) * 4 + 4LL * 64 * 4;
}

// Element (r, c) of a swizzled tile: 16-byte chunk c / 4 of row r at chunk (c / 4) ^ (r % 8).
__device__ inline int a64_at(int r, int c) { return r * 64 + (c ^ ((r & 7) << 2)); }

__device__ inline void a64_cp_async16(void* shared, const void* global) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(global));
#else
  __trap();
#endif
}
// 4 bytes, or a zero where !valid (no read).
__device__ inline void a64_cp_async4(float* shared, const float* global, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(to), "l"(global),
               "r"(valid ? 4 : 0));
#else
  __trap();
#endif
}
__device__ inline void a64_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;");
#endif
}
// Wait until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ inline void a64_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(N));
#endif
}

// Four 8 × 8 matrices of 16-byte rows: lane L gives the address of row L % 8 of matrix
// L / 8, and receives word L % 4 of row L / 4 of matrix i in f[i]; Trans: each matrix
// transposed (b16 elements), lane (g, t) receiving its elements (2t, g) and (2t + 1, g).
template <bool Trans = false>
__device__ inline void a64_ldsm4(unsigned (&f)[4], const void* row) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(row));
  if constexpr (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(f[0]), "=r"(f[1]), "=r"(f[2]), "=r"(f[3])
                 : "r"(a));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(f[0]), "=r"(f[1]), "=r"(f[2]), "=r"(f[3])
                 : "r"(a));
#else
  __trap();
#endif
}

// q, k and v's element types: float, or bf16 bits (unsigned short; bf16 products only).
template <class In>
struct A64In;
template <>
struct A64In<float> {
  static constexpr bool kBf16 = false;
};
template <>
struct A64In<unsigned short> {
  static constexpr bool kBf16 = true;
};

// bf16 tiles: [64][64] bf16 in the first 8 KiB of a tile's buffer, 128-byte rows whose
// 16-byte chunks (8 values) are XOR-swizzled as a64_at's (row r's chunk c at c ^ (r % 8)),
// so ldmatrix reads 8 rows of one chunk from 8 bank groups, plain or transposed.
__device__ inline int a64_at16(int r, int c) { return r * 64 + (((c >> 3) ^ (r & 7)) << 3) + (c & 7); }

// Whether v's rows go by cp.async: each row whole 16-byte vectors (feature stride 1, row
// stride and feats multiples of 16 / sizeof(In): 4 floats, 8 bf16), base 16-byte aligned.
// The same for every thread of the block, so a64_finish_tiles' __syncthreads may depend
// on it.
template <class In>
__device__ inline bool a64_async(const AttnView<In>& v, long long feats) {
  constexpr long long w = 16 / sizeof(In);
  return v.fs == 1 && v.rs % w == 0 && feats % w == 0 && aligned16(v.p);
}

// Rows row0.. row0 + 63 of v (features 0..feats), zeros outside [rows) × [feats), into a
// swizzled tile: cp.async where a64_async (complete after the caller's a64_commit +
// a64_wait), else plain loads and stores. Float rows arrive as floats (a64_at), to be
// finished by a64_finish_tiles where copied (plain stores finish them on the way,
// Tc::store); bf16 rows arrive in the bf16 layout (a64_at16), finished as they are.
template <class Tc>
__device__ inline void a64_load_tile(float* tile, const AttnView<float>& v, long long row0,
                                     long long rows, long long feats) {
  const int rn = int(rows - row0 < 64 ? rows - row0 : 64);
  if (a64_async(v, feats)) {
    for (int i = threadIdx.x; i < 64 * 16; i += kAttention64Threads) {
      const int r = i >> 4, c4 = i & 15;
      float* const dst = tile + r * 64 + 4 * (c4 ^ (r & 7));
      if (r < rn && 4 * c4 < feats)
        a64_cp_async16(dst, v.p + (row0 + r) * v.rs + 4 * c4);
      else
        *reinterpret_cast<float4*>(dst) = make_float4(0.f, 0.f, 0.f, 0.f);
    }
    return;
  }
  for (int i = threadIdx.x; i < 64 * 64; i += kAttention64Threads) {
    const int r = i >> 6, c = i & 63;
    const float x = (r < rn && c < feats) ? v.p[(row0 + r) * v.rs + c * v.fs] : 0.f;
    Tc::store(tile, r, c, x);
  }
}
template <class Tc>
__device__ inline void a64_load_tile(float* tile, const AttnView<unsigned short>& v,
                                     long long row0, long long rows, long long feats) {
  static_assert(Tc::kBf16Tiles, "attention64: bf16 q, k, v need bf16 products");
  unsigned short* const t16 = reinterpret_cast<unsigned short*>(tile);
  const int rn = int(rows - row0 < 64 ? rows - row0 : 64);
  if (a64_async(v, feats)) {
    for (int i = threadIdx.x; i < 64 * 8; i += kAttention64Threads) {
      const int r = i >> 3, c8 = i & 7;
      unsigned short* const dst = t16 + r * 64 + 8 * (c8 ^ (r & 7));
      if (r < rn && 8 * c8 < feats)
        a64_cp_async16(dst, v.p + (row0 + r) * v.rs + 8 * c8);
      else
        *reinterpret_cast<uint4*>(dst) = make_uint4(0u, 0u, 0u, 0u);
    }
    return;
  }
  // Two neighbouring features a thread (one 4-byte store; c even, so both in one chunk).
  for (int i = threadIdx.x; i < 64 * 32; i += kAttention64Threads) {
    const int r = i >> 5, c = 2 * (i & 31);
    const long long at = (row0 + r) * v.rs + c * v.fs;
    const unsigned lo = (r < rn && c < feats) ? v.p[at] : 0u;
    const unsigned hi = (r < rn && c + 1 < feats) ? v.p[at + v.fs] : 0u;
    *reinterpret_cast<unsigned*>(t16 + a64_at16(r, c)) = lo | hi << 16;
  }
}

// The tile a64_finish_tiles must finish: one of float rows copied by cp.async, else
// null (none, stored finished by plain stores, or bf16 rows, finished as they arrive).
// Null for bf16 by type, so the bf16 view's tile costs no code and no __syncthreads.
__device__ inline float* a64_unfinished(float* tile, const AttnView<float>& v,
                                        long long feats) {
  return tile != nullptr && a64_async(v, feats) ? tile : nullptr;
}
__device__ inline float* a64_unfinished(float*, const AttnView<unsigned short>&, long long) {
  return nullptr;
}

// A float tile copied by cp.async arrives in a64_at's layout and is finished in place
// before the __syncthreads that publishes it (a64_unfinished: which need it). Each thread
// finishes its own 16-byte chunks (a64_load_tile's mapping), after its own a64_wait.
// TF32 rounds them in place. bf16 converts the tile to bf16, into the first 8 KiB of
// the same buffer (a64_at16's layout): a chunk's bf16 lands on other threads' floats,
// so every thread reads its floats of both tiles (a and b, either may be null) first,
// then a __syncthreads, then the bf16 are written. The buffers' readers must be done
// (as after the loop's trailing __syncthreads). The block calls alike, and which tiles
// need finishing is the same in every thread (a64_async), so every thread reaches the
// same __syncthreads.
template <class Tc, class A, class B>
__device__ inline void a64_finish_tiles(float* a, const AttnView<A>& va, long long fa,
                                        float* b, const AttnView<B>& vb, long long fb) {
  constexpr int kChunks = 64 * 16 / kAttention64Threads;  // per thread and tile
  float* const tiles[2] = {a64_unfinished(a, va, fa), a64_unfinished(b, vb, fb)};
  auto chunk = [](int m, int& r, int& c4) {
    const int i = int(threadIdx.x) + m * kAttention64Threads;
    r = i >> 4;
    c4 = i & 15;
  };
  if constexpr (!Tc::kBf16Tiles) {  // in place, a chunk at a time
#pragma unroll
    for (int w = 0; w < 2; ++w) {
      if (tiles[w] == nullptr) continue;
#pragma unroll
      for (int m = 0; m < kChunks; ++m) {
        int r, c4;
        chunk(m, r, c4);
        Tc::store4(tiles[w], r, 4 * c4,
                   *reinterpret_cast<const float4*>(tiles[w] + r * 64 + 4 * (c4 ^ (r & 7))));
      }
    }
  } else {
    auto convert = [&](float* tile) {
      if (tile == nullptr) return;  // uniform: the block skips alike
      float4 x[kChunks];
#pragma unroll
      for (int m = 0; m < kChunks; ++m) {
        int r, c4;
        chunk(m, r, c4);
        x[m] = *reinterpret_cast<const float4*>(tile + r * 64 + 4 * (c4 ^ (r & 7)));
      }
      __syncthreads();  // every thread's floats read before the bf16 overwrite them
#pragma unroll
      for (int m = 0; m < kChunks; ++m) {
        int r, c4;
        chunk(m, r, c4);
        Tc::store4(tile, r, 4 * c4, x[m]);
      }
    };
    convert(tiles[0]);
    convert(tiles[1]);
  }
}

// 64 entries of a contiguous per-row array (lse or delta) from row0, zeros past rows.
__device__ inline void a64_load_rows(float* to, const float* from, long long row0,
                                     long long rows, int lane) {
  const long long row = row0 + lane;
  a64_cp_async4(to + lane, from + (row < rows ? row : 0), row < rows);
}

__device__ inline unsigned a64_tf32(float x) { return __float_as_uint(attention_tf32(x)); }
// Two floats rounded to bf16 (nearest even) in one register, lo in the lower half.
__device__ inline unsigned a64_bf16x2(float lo, float hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
#else
  __trap();
  return 0;
#endif
}
__device__ inline unsigned a64_bf16x2(unsigned lo, unsigned hi) {
  return a64_bf16x2(__uint_as_float(lo), __uint_as_float(hi));
}

// The softmax's exponentials: 2^x by the hardware's ex2.approx.ftz.f32 (about 2 ulp;
// 2^-inf = +0, results below 2^-126 flushed to +0), e^(y - z) as 2^(y·log2 e - z·log2 e)
// with the first product fused (one FFMA and one MUFU an entry, where expf costs
// about eight instructions). Under the tensor-core policies P is rounded to TF32 / bf16
// for its product anyway; the lab and the GPU suite check against float64 references.
constexpr float kA64Log2e = 1.4426950408889634f;
__device__ inline float a64_exp2(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return 0.f;
#endif
}
// P (or Pᵀ) of a tile entry from its raw score s: e^(s · scale - lse) where kept and the
// row's lse is finite, else 0. scale2 = scale · log2 e, lse2 = lse · log2 e.
__device__ inline float a64_prob(float s, float scale2, float lse2, unsigned kept) {
  return (kept != 0u && lse2 != -positive_infinity<float>()) ? a64_exp2(fmaf(s, scale2, -lse2))
                                                              : 0.f;
}

// The warp's products. Lane (g = lane / 4, t = lane % 4) holds, of a 16 × 64 result
// acc[8][4], rows g (e = 0, 1) and g + 8 (e = 2, 3) and columns 8j + 2t + e % 2 of
// n-tile j (the m16n8 accumulator layout).
//
// rr: acc[j] += Σ_{x < 64} ta[r0 + row][x] · tb[8j + col][x], both operands' rows read
// as 16-byte rows by ldmatrix. TF32: k-steps of 8, slots t and t + 4 = columns x + t
// and x + t + 4 (PTX's layout). bf16: A64Bf16 (below).
// cr: acc[f] += Σ_{k < 64} c[row][k] · tb[k][8f + col], c an accumulator of this warp
// (P or dS) used as the A operand where it lies: TF32 k-step j (8 columns) numbers its
// slots t, t + 4 as columns 8j + 2t, 8j + 2t + 1 (the lane's own c[j][0], c[j][1], and
// rows g + 8 c[j][2], c[j][3]), and B is read a float at a time down tb's columns, rows
// k in the same numbering; bf16 k-step m (16 columns) is PTX's natural numbering, which
// the accumulators of n-tiles 2m and 2m + 1 already have.
struct A64Tf32 {
  static constexpr bool kBf16Tiles = false;  // tiles hold floats rounded to TF32
  static constexpr bool kAllKeptPath = true;  // the forward's a64_softmax_path: see there
  __device__ static void store(float* tile, int r, int c, float x) {
    tile[a64_at(r, c)] = attention_tf32(x);
  }
  __device__ static void store4(float* tile, int r, int c, float4 x) {  // c % 4 == 0
    *reinterpret_cast<float4*>(tile + a64_at(r, c)) =
        make_float4(attention_tf32(x.x), attention_tf32(x.y), attention_tf32(x.z),
                    attention_tf32(x.w));
  }
  __device__ static void rr(float (&acc)[8][4], const float* ta, int r0, const float* tb) {
    const int lane = threadIdx.x & 31, i = lane >> 3, row = lane & 7;
#pragma unroll
    for (int x = 0; x < 64; x += 16) {
      AttnTf32::A a[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        unsigned f[4];
        // matrices: rows r0.. / r0 + 8.. at column x + 8h, then at x + 8h + 4.
        a64_ldsm4(f, ta + a64_at(r0 + row + 8 * (i & 1), x + 8 * h + 4 * (i >> 1)));
#pragma unroll
        for (int u = 0; u < 4; ++u) a[h].r[u] = f[u];
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        unsigned f[4];
        a64_ldsm4(f, tb + a64_at(8 * j + row, x + 4 * i));  // columns x, x + 4, x + 8, x + 12
        const AttnTf32::B b0 = {{f[0], f[1]}};
        const AttnTf32::B b1 = {{f[2], f[3]}};
        AttnTf32::mma(acc[j], a[0], b0);
        AttnTf32::mma(acc[j], a[1], b1);
      }
    }
  }
  __device__ static void cr(float (&acc)[8][4], const float (&c)[8][4], const float* tb) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const AttnTf32::A a = {{a64_tf32(c[j][0]), a64_tf32(c[j][2]), a64_tf32(c[j][1]),
                              a64_tf32(c[j][3])}};
      const int k = 8 * j + 2 * t;
#pragma unroll
      for (int f = 0; f < 8; ++f) {
        const AttnTf32::B b = {{__float_as_uint(tb[a64_at(k, 8 * f + g)]),
                                __float_as_uint(tb[a64_at(k + 1, 8 * f + g)])}};
        AttnTf32::mma(acc[f], a, b);
      }
    }
  }
};

// bf16 products from bf16 tiles, PTX's m16n8k16 numbering throughout (slots 2t, 2t + 1,
// 2t + 8, 2t + 9 are columns x + 2t, ... of A and rows of B): half the shared-memory
// bytes of a product that reads floats, and no conversion as fragments are read.
// rr: A's four 8 × 8 matrices (rows r0.. / r0 + 8.., columns x.. / x + 8..) by one
// ldmatrix; B's fragments for n-tiles j, j + 1 (rows 8j.., columns x.. / x + 8..) by
// another. cr: B = tb[k][n] read transposed (ldmatrix.trans: lane (g, t) receives
// tb[2t][g], tb[2t + 1][g] of each matrix), matrices (k 16m.. / 16m + 8.., n 8f.. /
// 8f + 8..); A from the accumulator c as before.
struct A64Bf16 {
  static constexpr bool kBf16Tiles = true;
  static constexpr bool kAllKeptPath = true;
  __device__ static void store(float* tile, int r, int c, float x) {
    const unsigned h = a64_bf16x2(x, 0.f);
    reinterpret_cast<unsigned short*>(tile)[a64_at16(r, c)] = static_cast<unsigned short>(h);
  }
  __device__ static void store4(float* tile, int r, int c, float4 x) {  // c % 4 == 0
    *reinterpret_cast<uint2*>(reinterpret_cast<unsigned short*>(tile) + a64_at16(r, c)) =
        make_uint2(a64_bf16x2(x.x, x.y), a64_bf16x2(x.z, x.w));
  }
  __device__ static void rr(float (&acc)[8][4], const float* ta, int r0, const float* tb) {
    const unsigned short* const a16 = reinterpret_cast<const unsigned short*>(ta);
    const unsigned short* const b16 = reinterpret_cast<const unsigned short*>(tb);
    const int lane = threadIdx.x & 31, i = lane >> 3, row = lane & 7;
#pragma unroll
    for (int x = 0; x < 64; x += 16) {
      AttnBf16::A a;
      a64_ldsm4(a.r, a16 + a64_at16(r0 + row + 8 * (i & 1), x + 8 * (i >> 1)));
#pragma unroll
      for (int j = 0; j < 8; j += 2) {
        unsigned f[4];
        a64_ldsm4(f, b16 + a64_at16(8 * (j + (i >> 1)) + row, x + 8 * (i & 1)));
        const AttnBf16::B b0 = {{f[0], f[1]}};
        const AttnBf16::B b1 = {{f[2], f[3]}};
        AttnBf16::mma(acc[j], a, b0);
        AttnBf16::mma(acc[j + 1], a, b1);
      }
    }
  }
  __device__ static void cr(float (&acc)[8][4], const float (&c)[8][4], const float* tb) {
    const unsigned short* const b16 = reinterpret_cast<const unsigned short*>(tb);
    const int lane = threadIdx.x & 31, i = lane >> 3, row = lane & 7;
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      const AttnBf16::A a = {{a64_bf16x2(c[2 * m][0], c[2 * m][1]),
                              a64_bf16x2(c[2 * m][2], c[2 * m][3]),
                              a64_bf16x2(c[2 * m + 1][0], c[2 * m + 1][1]),
                              a64_bf16x2(c[2 * m + 1][2], c[2 * m + 1][3])}};
#pragma unroll
      for (int f = 0; f < 8; f += 2) {
        unsigned q[4];
        a64_ldsm4<true>(q, b16 + a64_at16(16 * m + 8 * (i & 1) + row, 8 * (f + (i >> 1))));
        const AttnBf16::B b0 = {{q[0], q[1]}};
        const AttnBf16::B b1 = {{q[2], q[3]}};
        AttnBf16::mma(acc[f], a, b0);
        AttnBf16::mma(acc[f + 1], a, b1);
      }
    }
  }
};

template <bool B>
struct A64Bool {
  static constexpr bool value = B;
};
// The forward's online softmax: runs body(A64Bool<All>) with All = true where every entry
// of the warp's tile part is kept (kept all ones: the tile lies inside the causal triangle
// and no mask drops anything; most tiles of a long causal sequence), so the per-entry
// tests drop out of its loops; otherwise All = false. The same arithmetic either way, so
// the same bits (the kernel lab checks both paths bitwise). At GPT-2's shape (bf16) the
// forward took 0.23 ms instead of 0.29; the backward kernels, given the same two paths,
// were slower (0.80 against 0.73 ms: twice their large unrolled loop body), so they test
// each entry. kAllKeptPath = false (the lab's policy) always tests each entry.
template <class Tc, class Body>
__device__ inline void a64_softmax_path(unsigned kept, Body&& body) {
  if (Tc::kAllKeptPath && kept == 0xffffffffu)
    body(A64Bool<true>{});
  else
    body(A64Bool<false>{});
}

// The kept entries of the warp's 16 × 64 part of a tile (rows r0.., the layout above),
// bit 4j + e: rows are queries and columns keys, or (transposed) rows keys and columns
// queries.
__device__ inline unsigned a64_kept(const AttnKeep& K, long long q0, long long k0, int r0,
                                    bool transposed) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  return attention_kept_bits<8>(
      K, q0, k0, transposed, [&](int e) { return r0 + g + 8 * (e >> 1); },
      [&](int j, int e) { return 8 * j + 2 * t + (e & 1); });
}

// The key loop's pipeline step (forward, dq): tile kt + 1's K and V copies issued into
// the other buffers (whose readers finished at the last iteration's end), then tile kt
// waited for and finished (a64_finish_tiles); the caller's __syncthreads publishes it.
template <class Tc, class In>
__device__ inline void a64_next_kv(float* sk, float* sv, const AttnView<In>& K,
                                   const AttnView<In>& V, int kt, int nk, long long tk,
                                   long long d, long long dv) {
  constexpr int kT = attention64_tile_floats(A64In<In>::kBf16);
  if (kt + 1 < nk) {
    a64_load_tile<Tc>(sk + ((kt + 1) & 1) * kT, K, (kt + 1) * 64LL, tk, d);
    a64_load_tile<Tc>(sv + ((kt + 1) & 1) * kT, V, (kt + 1) * 64LL, tk, dv);
    a64_commit();
    a64_wait<1>();
  } else {
    a64_wait<0>();
  }
  a64_finish_tiles<Tc>(sk + (kt & 1) * kT, K, d,
                       sv + (kt & 1) * kT, V, dv);
}

__device__ inline void a64_zero(float (&acc)[8][4]) {
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[j][e] = 0.f;
}

// Rows [row0, rows) of the warp's 16 × 64 accumulator, columns below cols, times
// factor[h] (h: the thread's row g or g + 8), to out (batch base ob, strides rs, fs).
__device__ inline void a64_store(const float (&acc)[8][4], const float (&factor)[2], float* out,
                                 long long ob, long long rs, long long fs, long long row0,
                                 long long rows, long long cols) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const long long row = row0 + g + 8 * h;
    if (row >= rows) continue;
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int x = 0; x < 2; ++x) {
        const long long col = 8 * j + 2 * t + x;
        if (col < cols) out[ob + row * rs + col * fs] = acc[j][2 * h + x] * factor[h];
      }
  }
}

template <class Tc, class In = float>
__device__ void attention64_forward_kernel(const In* q, Dims qd, const In* k, Dims kd,
                                           const In* v, Dims vd, const int* mask, Dims md,
                                           float* out, Dims od, float* lse, long long causal,
                                           double scale) {
  static_assert(!A64In<In>::kBf16 || Tc::kBf16Tiles,
                "attention64: bf16 q, k, v need bf16 products");
  const int r = qd.rank;
  const long long tq = attention_extent(qd, r - 2), d = attention_extent(qd, r - 1);
  const long long tk = attention_extent(kd, r - 2), dv = attention_extent(vd, r - 1);
  const long long batches = attention_batch_count(qd);
  attention_require(blockDim.x == kAttention64Threads && d <= 64 && dv <= 64 &&
                    dynamic_shared_bytes() >= attention64_forward_shared_bytes(A64In<In>::kBf16));
  constexpr int kT = attention64_tile_floats(A64In<In>::kBf16);  // a q, k or v tile
  float* const sq = dynamic_shared<float>();
  float* const sk = sq + kT;      // [2]
  float* const sv = sk + 2 * kT;  // [2]
  const int lane = threadIdx.x & 31, r0 = 16 * (threadIdx.x >> 5), g = lane >> 2, t = lane & 3;
  const float sc = float(scale), ninf = -positive_infinity<float>();
  const long long q_tiles = attention_tiles(tq);
  for (long long tile = blockIdx.x; tile < batches * q_tiles; tile += gridDim.x) {
    const long long b = tile % batches;
    const long long q0 = (q_tiles - 1 - tile / batches) * 64;  // the longest rows first
    const AttnView<In> Q(q, qd, b), K(k, kd, b), V(v, vd, b);
    const AttnKeep keep(mask, md, b, tq, tk, causal);
    const long long k_end = causal ? (tk < q0 + 64 ? tk : q0 + 64) : tk;
    const int nk = int(attention_tiles(k_end));
    __syncthreads();  // the previous tile's reads are done
    a64_load_tile<Tc>(sq, Q, q0, tq, d);
    if (nk > 0) {
      a64_load_tile<Tc>(sk, K, 0, tk, d);
      a64_load_tile<Tc>(sv, V, 0, tk, dv);
    }
    a64_commit();
    float o[8][4], m[2] = {ninf, ninf}, l[2] = {0.f, 0.f};
    a64_zero(o);
    for (int kt = 0; kt < nk; ++kt) {
      const float* const ck = sk + (kt & 1) * kT;
      const float* const cv = sv + (kt & 1) * kT;
      a64_next_kv<Tc>(sk, sv, K, V, kt, nk, tk, d, dv);
      if (kt == 0) a64_finish_tiles<Tc>(sq, Q, d, nullptr, Q, 0);
      __syncthreads();  // tile kt (and Q) in shared memory
      float s[8][4];
      a64_zero(s);
      Tc::rr(s, sq, r0, ck);
      const unsigned kept = a64_kept(keep, q0, kt * 64LL, r0, false);
      // The online softmax of rows g (h = 0) and g + 8 (h = 1).
      float alpha[2];
      a64_softmax_path<Tc>(kept, [&](auto all) {
        constexpr bool All = decltype(all)::value;
        float mx[2] = {ninf, ninf};
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            s[j][e] *= sc;
            if ((All || (kept >> (4 * j + e) & 1u)) && !(s[j][e] <= mx[e >> 1]))
              mx[e >> 1] = s[j][e];
          }
#pragma unroll
        for (int h = 0; h < 2; ++h) {
#pragma unroll
          for (int x = 1; x < 4; x <<= 1) {
            const float other = __shfl_xor_sync(0xffffffffu, mx[h], x);
            mx[h] = other > mx[h] ? other : mx[h];
          }
          const float m_new = mx[h] > m[h] ? mx[h] : m[h];
          const float m2 = m_new * kA64Log2e;  // -inf only where every entry is blocked
          alpha[h] = m_new == ninf ? 1.f : a64_exp2(fmaf(m[h], kA64Log2e, -m2));  // 0 while m is -inf
          float sum = 0.f;
#pragma unroll
          for (int j = 0; j < 8; ++j)
#pragma unroll
            for (int e = 2 * h; e < 2 * h + 2; ++e) {
              s[j][e] = (All || (kept >> (4 * j + e) & 1u))
                            ? a64_exp2(fmaf(s[j][e], kA64Log2e, -m2))
                            : 0.f;
              sum += s[j][e];
            }
#pragma unroll
          for (int x = 1; x < 4; x <<= 1) sum += __shfl_xor_sync(0xffffffffu, sum, x);
          m[h] = m_new;
          l[h] = l[h] * alpha[h] + sum;
        }
      });
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) o[j][e] *= alpha[e >> 1];
      Tc::cr(o, s, cv);  // O += P V
      __syncthreads();  // this tile's buffers are free for the load two tiles on
    }
    // O = acc / l (exact zeros where nothing was kept), lse = m + log(l).
    float inv[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      inv[h] = l[h] > 0.f ? 1.f / l[h] : 0.f;
      const long long row = q0 + r0 + g + 8 * h;
      if (t == 0 && row < tq) lse[b * tq + row] = l[h] > 0.f ? m[h] + log(l[h]) : ninf;
    }
    // (o / l as o · (1 / l): one rounding more than a division, within the policy's tolerance.)
    a64_store(o, inv, out, attention_batch_offset(b, od), attention_stride(od, r - 2),
              attention_stride(od, r - 1), q0 + r0, tq, dv);
  }
}

template <class Tc, class In = float>
__device__ void attention64_dq_kernel(const In* q, Dims qd, const In* k, Dims kd,
                                      const In* v, Dims vd, const int* mask, Dims md,
                                      const float* dout, Dims dod, const float* lse,
                                      const float* delta, float* dq, Dims dqd, long long causal,
                                      double scale) {
  static_assert(!A64In<In>::kBf16 || Tc::kBf16Tiles,
                "attention64: bf16 q, k, v need bf16 products");
  const int r = qd.rank;
  const long long tq = attention_extent(qd, r - 2), d = attention_extent(qd, r - 1);
  const long long tk = attention_extent(kd, r - 2), dv = attention_extent(vd, r - 1);
  const long long batches = attention_batch_count(qd);
  attention_require(blockDim.x == kAttention64Threads && d <= 64 && dv <= 64 &&
                    dynamic_shared_bytes() >= attention64_dq_shared_bytes(A64In<In>::kBf16));
  constexpr int kT = attention64_tile_floats(A64In<In>::kBf16);  // a q, k or v tile
  float* const sq = dynamic_shared<float>();
  float* const sdo = sq + kT;
  float* const sk = sdo + kAttention64Floats;     // [2]
  float* const sv = sk + 2 * kT;  // [2]
  const int lane = threadIdx.x & 31, r0 = 16 * (threadIdx.x >> 5), g = lane >> 2;
  const float sc = float(scale), sc2 = sc * kA64Log2e, ninf = -positive_infinity<float>();
  const long long q_tiles = attention_tiles(tq);
  for (long long tile = blockIdx.x; tile < batches * q_tiles; tile += gridDim.x) {
    const long long b = tile % batches;
    const long long q0 = (q_tiles - 1 - tile / batches) * 64;
    const AttnView<In> Q(q, qd, b), K(k, kd, b), V(v, vd, b);
    const AttnView<float> G(dout, dod, b);  // dO stays float: converted as it arrives
    const AttnKeep keep(mask, md, b, tq, tk, causal);
    float row_lse[2], row_lse2[2], row_delta[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const long long row = q0 + r0 + g + 8 * h;
      row_lse[h] = row < tq ? lse[b * tq + row] : ninf;
      row_lse2[h] = row_lse[h] * kA64Log2e;
      row_delta[h] = row < tq ? delta[b * tq + row] : 0.f;
    }
    const long long k_end = causal ? (tk < q0 + 64 ? tk : q0 + 64) : tk;
    const int nk = int(attention_tiles(k_end));
    __syncthreads();
    a64_load_tile<Tc>(sq, Q, q0, tq, d);
    a64_load_tile<Tc>(sdo, G, q0, tq, dv);
    if (nk > 0) {
      a64_load_tile<Tc>(sk, K, 0, tk, d);
      a64_load_tile<Tc>(sv, V, 0, tk, dv);
    }
    a64_commit();
    float acc[8][4];
    a64_zero(acc);
    for (int kt = 0; kt < nk; ++kt) {
      const float* const ck = sk + (kt & 1) * kT;
      const float* const cv = sv + (kt & 1) * kT;
      a64_next_kv<Tc>(sk, sv, K, V, kt, nk, tk, d, dv);
      if (kt == 0) a64_finish_tiles<Tc>(sq, Q, d, sdo, G, dv);
      __syncthreads();
      float s[8][4], dp[8][4];
      a64_zero(s);
      a64_zero(dp);
      Tc::rr(s, sq, r0, ck);    // S = Q Kᵀ
      Tc::rr(dp, sdo, r0, cv);  // dP = dO Vᵀ
      const unsigned kept = a64_kept(keep, q0, kt * 64LL, r0, false);
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float p = a64_prob(s[j][e], sc2, row_lse2[e >> 1], kept >> (4 * j + e) & 1u);
          s[j][e] = p * (dp[j][e] - row_delta[e >> 1]);  // dS
        }
      Tc::cr(acc, s, ck);  // dQ += dS K
      __syncthreads();
    }
    float factor[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) factor[h] = row_lse[h] != ninf ? sc : 0.f;
    a64_store(acc, factor, dq, attention_batch_offset(b, dqd), attention_stride(dqd, r - 2),
              attention_stride(dqd, r - 1), q0 + r0, tq, d);
  }
}

template <class Tc, class In = float>
__device__ void attention64_dkdv_kernel(const In* q, Dims qd, const In* k, Dims kd,
                                        const In* v, Dims vd, const int* mask, Dims md,
                                        const float* dout, Dims dod, const float* lse,
                                        const float* delta, float* dk, Dims dkd, float* dv_out,
                                        Dims dvd, long long causal, double scale) {
  static_assert(!A64In<In>::kBf16 || Tc::kBf16Tiles,
                "attention64: bf16 q, k, v need bf16 products");
  const int r = qd.rank;
  const long long tq = attention_extent(qd, r - 2), d = attention_extent(qd, r - 1);
  const long long tk = attention_extent(kd, r - 2), dv = attention_extent(vd, r - 1);
  const long long batches = attention_batch_count(qd);
  attention_require(blockDim.x == kAttention64Threads && d <= 64 && dv <= 64 &&
                    dynamic_shared_bytes() >= attention64_dkdv_shared_bytes(A64In<In>::kBf16));
  constexpr int kT = attention64_tile_floats(A64In<In>::kBf16);  // a q, k or v tile
  float* const sk = dynamic_shared<float>();
  float* const sv = sk + kT;
  float* const sq = sv + kT;       // [2]
  float* const sdo = sq + 2 * kT;  // [2]
  float* const slse = sdo + 2 * kAttention64Floats;  // [2][64]
  float* const sdelta = slse + 2 * 64;               // [2][64]
  const int lane = threadIdx.x & 31, r0 = 16 * (threadIdx.x >> 5), t = lane & 3;
  const int warp = threadIdx.x >> 5;
  const float sc = float(scale), sc2 = sc * kA64Log2e;
  const long long k_tiles = attention_tiles(tk), q_tiles = attention_tiles(tq);
  for (long long tile = blockIdx.x; tile < batches * k_tiles; tile += gridDim.x) {
    const long long b = tile % batches;
    const long long k0 = (tile / batches) * 64;  // causal: the first key tiles have the most
    const AttnView<In> Q(q, qd, b), K(k, kd, b), V(v, vd, b);
    const AttnView<float> G(dout, dod, b);  // dO stays float: converted as it arrives
    const AttnKeep keep(mask, md, b, tq, tk, causal);
    const long long qt0 = causal ? k0 / 64 : 0;
    const int nq = int(q_tiles > qt0 ? q_tiles - qt0 : 0);
    // Stage query tile i (rows, dO, lse, delta) into buffer i % 2.
    auto stage = [&](int i) {
      const int buf = i & 1;
      const long long q0 = (qt0 + i) * 64;
      a64_load_tile<Tc>(sq + buf * kT, Q, q0, tq, d);
      a64_load_tile<Tc>(sdo + buf * kAttention64Floats, G, q0, tq, dv);
      if (warp == 0) a64_load_rows(slse + buf * 64, lse + b * tq, q0, tq, lane);
      if (warp == 1) a64_load_rows(slse + buf * 64 + 32, lse + b * tq, q0 + 32, tq, lane);
      if (warp == 2) a64_load_rows(sdelta + buf * 64, delta + b * tq, q0, tq, lane);
      if (warp == 3) a64_load_rows(sdelta + buf * 64 + 32, delta + b * tq, q0 + 32, tq, lane);
    };
    __syncthreads();
    a64_load_tile<Tc>(sk, K, k0, tk, d);
    a64_load_tile<Tc>(sv, V, k0, tk, dv);
    if (nq > 0) stage(0);
    a64_commit();
    float ak[8][4], av[8][4];
    a64_zero(ak);
    a64_zero(av);
    for (int i = 0; i < nq; ++i) {
      const int buf = i & 1;
      const long long q0 = (qt0 + i) * 64;
      float* const cq = sq + buf * kT;
      float* const cdo = sdo + buf * kAttention64Floats;
      if (i + 1 < nq) {
        stage(i + 1);
        a64_commit();
        a64_wait<1>();
      } else {
        a64_wait<0>();
      }
      if (i == 0) a64_finish_tiles<Tc>(sk, K, d, sv, V, dv);
      a64_finish_tiles<Tc>(cq, Q, d, cdo, G, dv);
      __syncthreads();
      float s[8][4], dp[8][4];
      a64_zero(s);
      a64_zero(dp);
      Tc::rr(s, sk, r0, cq);    // Sᵀ[key][query] = Σ_f K[key][f] Q[query][f]
      Tc::rr(dp, sv, r0, cdo);  // dPᵀ[key][query] = Σ_f V[key][f] dO[query][f]
      const unsigned kept = a64_kept(keep, q0, k0, r0, true);
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int col = 8 * j + 2 * t + (e & 1);  // the query
          const float p = a64_prob(s[j][e], sc2, slse[buf * 64 + col] * kA64Log2e,
                                   kept >> (4 * j + e) & 1u);
          dp[j][e] = p * (dp[j][e] - sdelta[buf * 64 + col]);  // dSᵀ
          s[j][e] = p;                                          // Pᵀ
        }
      Tc::cr(av, s, cdo);  // dV += Pᵀ dO
      Tc::cr(ak, dp, cq);  // dK += dSᵀ Q
      __syncthreads();
    }
    const float scaled[2] = {sc, sc}, one[2] = {1.f, 1.f};
    a64_store(ak, scaled, dk, attention_batch_offset(b, dkd), attention_stride(dkd, r - 2),
              attention_stride(dkd, r - 1), k0 + r0, tk, d);
    a64_store(av, one, dv_out, attention_batch_offset(b, dvd), attention_stride(dvd, r - 2),
              attention_stride(dvd, r - 1), k0 + r0, tk, dv);
  }
}

// The entry points: TF32 and bf16 products of float q, k, v, and bf16 products of bf16
// q, k, v (IN = unsigned short: overloads of the bf16 names, picked by the pointers).
#define VOUCH_ATTENTION64_ENTRIES(NAME, POLICY, IN)                                              \
  __device__ inline void attention64_forward_##NAME##_kernel(                                  \
      const IN* q, Dims qd, const IN* k, Dims kd, const IN* v, Dims vd, const int* mask,       \
      Dims md, float* out, Dims od, float* lse, long long causal, double scale) {              \
    attention64_forward_kernel<POLICY, IN>(q, qd, k, kd, v, vd, mask, md, out, od, lse,        \
                                           causal, scale);                                     \
  }                                                                                            \
  __device__ inline void attention64_dq_##NAME##_kernel(                                       \
      const IN* q, Dims qd, const IN* k, Dims kd, const IN* v, Dims vd, const int* mask,       \
      Dims md, const float* dout, Dims dod, const float* lse, const float* delta, float* dq,   \
      Dims dqd, long long causal, double scale) {                                              \
    attention64_dq_kernel<POLICY, IN>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta,    \
                                      dq, dqd, causal, scale);                                 \
  }                                                                                            \
  __device__ inline void attention64_dkdv_##NAME##_kernel(                                     \
      const IN* q, Dims qd, const IN* k, Dims kd, const IN* v, Dims vd, const int* mask,       \
      Dims md, const float* dout, Dims dod, const float* lse, const float* delta, float* dk,   \
      Dims dkd, float* dv, Dims dvd, long long causal, double scale) {                         \
    attention64_dkdv_kernel<POLICY, IN>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta,  \
                                        dk, dkd, dv, dvd, causal, scale);                      \
  }
VOUCH_ATTENTION64_ENTRIES(tf32, A64Tf32, float)
VOUCH_ATTENTION64_ENTRIES(bf16, A64Bf16, float)
VOUCH_ATTENTION64_ENTRIES(bf16, A64Bf16, unsigned short)
#undef VOUCH_ATTENTION64_ENTRIES

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_ATTENTION64_CUH_
