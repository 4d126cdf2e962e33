// col2im_matmul.cuh: col2im of a product, col2im(lhsᵀ·rhs), in one kernel that never
// stores the product (an implicit GEMM). It is a convolution's input gradient
// (dx = col2im(Wᵀ·dy)) and conv_transpose's forward (y = col2im(Wᵀ·x)) (conv.cuh's
// table). Two launches did it before: a cuBLAS product writing columns K times the
// image's size, then conv.cuh's col2im reading them back; the columns' round trip
// through memory made a CIFAR ResNet's dx ~5x slower than cuDNN's.
//
//   image[n, gi·Cg + c, p] = Σ_{k = 0..K-1} Σ_{r = 0..R-1} lhs[gi, r, c·K + k] ·
//                                                          rhs[gi, r, n·L + w(p, k)]
//
// lhs [G, R, Cg·K], rhs [G, R, N·L] (row-major), image [N, C, s0, s1, s2], every element
// written; conv_geometry.h's K offsets, L windows (row-major over the grid), S image
// positions, Cg = C/G. w(p, k) is the window whose offset k reads p (conv_window_of); a
// term without one is skipped, an element without terms is +0. R, the contraction per
// offset, is a conv's O/G.
//
// As a GEMM: rows the Cg channels, columns the N·S image positions, reduction over
// (k, r), k outer. A block takes 64 channels × 128 columns (implicit_tiles.h) and runs
// k ascending, each k's r in chunks of RC rows ascending:
//  - A chunk [RC][64] = lhs[gi, r, c·K + k]; B chunk [RC][128] = rhs[gi, r, n·L + w]: the
//    thread that loads a B column finds its window once per k (not per element), and
//    consecutive threads take consecutive columns, so for stride 1 a warp's B loads are
//    a shifted contiguous run. Zeros where there is no term (no window, row past R,
//    channel past Cg, column past N·S): an exact no-op in the sums (a·0 + acc = acc for
//    finite a; an lhs holding Inf or NaN would give NaN where the definition skips).
//  - Columns are image positions in order (n·S + p), or, where a stride exceeds 1 and
//    divides its extent, grouped by stride phase (implicit_locate below), so that a
//    tile skips the offsets none of its positions has a window for: a stride-2 3 × 3
//    dx does 1/4 of the products (0.59 -> 0.32 ms at ResNet's stride-2 layer).
//  - Shared memory holds two chunks (double buffer); a chunk's global loads go to
//    registers while the block computes the one before, so one barrier per chunk.
//    Rows are padded to 72 / 136 (≡ 8 mod 32 words): the tf32 fragment reads [t][g]
//    (t < 4, g < 8) fall on banks 8t + g, all 32 distinct.
//  - col2im_matmul_tf32_kernel (f32 storage): each value rounded to TF32 (cvt.rna, as
//    tensor_cores.cuh's tf32_round) as it is stored into shared memory, products by
//    mma.sync m16n8k8 .tf32, f32 accumulators: 8 warps as 2 (channels) × 4 (columns),
//    warp tile 32 × 32 = 2 × 4 m16n8 tiles, fragments as attention.cuh's AttnTf32
//    (a0 row g col t, a1 row g + 8, a2 col t + 4, a3; b0 k t n g, b1 k t + 4; c0, c1 row
//    g cols 2t, 2t + 1, c2, c3 row g + 8; g = lane / 4, t = lane % 4).
//    col2im_matmul_kernel<T> (float, double): CUDA cores, each thread a 4 × 8 tile
//    (channels 4ty.., columns 4tx.. and 64 + 4tx..: 16-byte shared reads), every term
//    one fma (__fmaf_rn / __fma_rn, never reassociated).
// Order (the same bits every run, whatever the grid; no atomics, one writer per
// element): k ascending outer, r ascending inside. The SIMT kernels are exactly
// acc = fma(lhs, rhs, acc) over the terms in that order from +0 (the lab checks it bit
// for bit); tf32 sums each mma's 8 r in the hardware's order, mmas ascending.
// Indices: the gate keeps every tensor below 2^32 elements (ir/ConvGeometry.h), so
// in-tensor offsets are 32-bit; groups' base offsets 64-bit. Every division is 32-bit
// (a 64-bit one anywhere in the kernel cost ~40 registers), so stride, padding,
// dilation and grid must fit 32 bits too; a launch past either traps.
// Launch: conv_implicit_tiles(g) blocks of kImplicitThreads (256), no dynamic shared
// memory (static 29,184 bytes, double too: half the rows per chunk); any grid is
// correct (tiles grid-stride). tf32: sm_80 or newer (traps below). Entry points: tf32
// __launch_bounds__(256, 3) (80 registers, no spills: three blocks per SM, ~10% faster
// than its 94 unbounded); f32 and f64 none (f32 111, f64 162 registers; f32 with
// (256, 2) was no faster). Measured (H100, kernel_lab --bench, batch 256, ResNet-18
// CIFAR dx): 64×32×32 3 × 3 R 64: tf32 0.32 ms (~60 TFLOP/s), f32 0.59 ms; the
// two-launch path's col2im alone took 1.05 ms. What bounds tf32 is the L1/shared data
// path, not the tensor cores: per chunk, A's loads read one float of each K-strided
// 128-byte line, ~K/3 lines per warp load (a third of the traffic), beside the
// fragments' shared reads.
// Generated entry points (the geometry as conv.cuh's 21 integers, then rows):
//   extern "C" __global__ void __launch_bounds__(256, 3) k_f32(const float* lhs,
//       const float* rhs, float* image, long long n, ..., long long d2, long long rows) {
//     vouch::col2im_matmul_tf32_kernel(lhs, rhs, image, vouch::ConvGeometry{n, ...}, rows); }
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_COL2IM_MATMUL_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_COL2IM_MATMUL_CUH_

#include "conv.cuh"
#include "tensor_cores.cuh"

namespace vouch {

constexpr int kImplicitPitchA = int(kImplicitTileChannels) + 8;  // 72
constexpr int kImplicitPitchB = int(kImplicitTileColumns) + 8;   // 136

// Rows of the reduction per chunk: two chunks of A and B in 26,624 bytes either way.
template <class T>
__host__ __device__ constexpr int implicit_chunk_rows() {
  return sizeof(T) == 8 ? 8 : 16;
}

__device__ inline float implicit_fma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ inline double implicit_fma(double a, double b, double c) { return __fma_rn(a, b, c); }

// The tiles' columns: column j of the N·S image positions is (n, p). In order
// (j = n·S + p), or, where a stride exceeds 1 and divides its image extent on every
// axis ("phased"), by stride phase: the Π stride_a classes of positions with the same
// p_a mod stride_a, each class's positions n-major, then row-major over the class's own
// grid (extents s_a / stride_a). A kernel offset reads windows at all positions of a
// class or at none (the stride's lattice), so a tile inside one class skips whole
// offsets; in order, a stride-2 dx spends 3/4 of its products on terms without a window.
// (32-bit %: extents and strides fit; see col2im_matmul_tiles.)
__device__ inline bool implicit_phased(const ConvGeometry& g) {
  bool divides = true;
#pragma unroll
  for (int a = 0; a < 3; ++a) divides = divides && unsigned(g.image[a]) % unsigned(g.stride[a]) == 0;
  return divides && g.stride[0] * g.stride[1] * g.stride[2] > 1;
}

// Column j < N·S: its sample n and position p. Plain 32-bit divisions: each divisor
// serves one column per tile, where a FastDivide would cost a 64-bit division to make.
__device__ inline void implicit_locate(const ConvGeometry& g, bool phased, unsigned j,
                                       unsigned& n, unsigned (&p)[3]) {
  const unsigned s0 = unsigned(g.image[0]), s1 = unsigned(g.image[1]), s2 = unsigned(g.image[2]);
  if (!phased) {
    const unsigned positions = s0 * s1 * s2;
    n = j / positions;
    const unsigned i = j - n * positions, i01 = i / s2;
    p[2] = i - i01 * s2;
    p[0] = i01 / s1;
    p[1] = i01 - p[0] * s1;
    return;
  }
  const unsigned t0 = unsigned(g.stride[0]), t1 = unsigned(g.stride[1]), t2 = unsigned(g.stride[2]);
  const unsigned e0 = s0 / t0, e1 = s1 / t1, e2 = s2 / t2;  // a class's grid
  const unsigned class_positions = e0 * e1 * e2, class_columns = unsigned(g.batch) * class_positions;
  const unsigned phase = j / class_columns, in_class = j - phase * class_columns;
  n = in_class / class_positions;
  const unsigned i = in_class - n * class_positions, i01 = i / e2, f01 = phase / t2;
  const unsigned q0 = i01 / e1, f0 = f01 / t1;
  p[0] = f0 + t0 * q0;
  p[1] = (f01 - f0 * t1) + t1 * (i01 - q0 * e1);
  p[2] = (phase - f01 * t2) + t2 * (i - i01 * e2);
}

// One B column's loader: its position, and per kernel offset its window's column
// n·L + w in rhs (found once per offset), or none.
struct ImplicitColumn {
  long long p[3];
  unsigned first;  // n·L
  bool inside;     // col < N·S
  unsigned source;
  bool any;  // a window exists for the current offset
  __device__ void find(const ConvGeometry& g, const FastDivide (&by_stride)[3],
                       const long long (&k)[3]) {
    long long w = 0;
    bool ok = inside;
#pragma unroll
    for (int a = 0; a < 3; ++a) {
      const long long o = conv_window_from(p[a] + g.padding[a] - k[a] * g.dilation[a],
                                           by_stride[a], g.stride[a], g.grid[a]);
      ok = ok && o >= 0;
      w = w * g.grid[a] + o;
    }
    any = ok;
    source = first + unsigned(w);
  }
};

template <class T, bool kTf32>
__device__ void col2im_matmul_tiles(const T* lhs, const T* rhs, T* image, ConvGeometry g,
                                    long long rows) {
  constexpr int RC = implicit_chunk_rows<T>();
  constexpr int TM = int(kImplicitTileChannels), TN = int(kImplicitTileColumns);
  constexpr int PA = kImplicitPitchA, PB = kImplicitPitchB;
  constexpr int AL = RC * TM / kImplicitThreads, BL = RC * TN / kImplicitThreads;  // loads
  static_assert(kImplicitThreads == 256 && TM == 64 && TN == 128, "the thread layouts below");
  static_assert(!kTf32 || RC % 8 == 0, "whole m16n8k8 steps");
  __shared__ __align__(16) T sa[2][RC * PA];
  __shared__ __align__(16) T sb[2][RC * PB];
  __shared__ unsigned s_at[TN];      // the tile's columns: n·C·S + p, or ~0u past N·S
  __shared__ unsigned s_pos[4][TN];  // and their p0, p1, p2, n

  const long long positions = conv_image_positions(g), windows = conv_windows(g);
  const long long offsets = conv_offsets(g), columns = g.batch * positions;
  if (columns == 0 || g.channels == 0) return;  // an empty image
  // 32-bit indices and divisions (a 64-bit division anywhere took tf32 from 94 to 126
  // registers): the tensors (the gate's obligation) and window parameters must fit.
  conv_require_32bit(columns * g.channels);                 // image
  conv_require_32bit(g.channels * offsets * rows);          // lhs: G·R·Cg·K
  conv_require_32bit(g.groups * rows * g.batch * windows);  // rhs
#pragma unroll
  for (int a = 0; a < 3; ++a)
    conv_require_32bit(g.stride[a] | g.padding[a] | g.dilation[a] | g.grid[a]);
  const long long cg = unsigned(g.channels) / unsigned(g.groups);
  const unsigned R = unsigned(rows), K = unsigned(offsets), CgK = unsigned(cg * offsets);
  const unsigned NL = unsigned(g.batch * windows), Cg = unsigned(cg), S = unsigned(positions);
  const unsigned NS = unsigned(columns), CS = unsigned(g.channels * positions);
  const unsigned col_tiles = (NS + TN - 1) / TN, ch_tiles = unsigned((cg + TM - 1) / TM);
  const unsigned tiles = unsigned(g.groups) * ch_tiles * col_tiles;
  const bool phased = implicit_phased(g);
  const FastDivide by_stride[3] = {FastDivide{unsigned(g.stride[0])},
                                   FastDivide{unsigned(g.stride[1])},
                                   FastDivide{unsigned(g.stride[2])}};
  // Per axis, the phase of positions the first offset reads ((−padding) mod stride)
  // and its change per offset (dilation mod stride).
  unsigned lattice_base[3], lattice_step[3];
#pragma unroll
  for (int a = 0; a < 3; ++a) {
    const unsigned t = unsigned(g.stride[a]);
    lattice_base[a] = (t - unsigned(g.padding[a]) % t) % t;
    lattice_step[a] = unsigned(g.dilation[a]) % t;
  }
  const int tid = threadIdx.x;
  // Loaders: A channel tid % 64, rows tid / 64 + 4i; B column tid % 128, rows tid / 128 + 2i.
  const int a_col = tid & (TM - 1), a_row = tid / TM, b_col = tid & (TN - 1), b_row = tid / TN;

  for (unsigned tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const unsigned col_tile = tile % col_tiles, rest = tile / col_tiles;
    const unsigned c0 = (rest % ch_tiles) * TM, gi = rest / ch_tiles;
    const unsigned col0 = col_tile * TN;

    const unsigned ac = c0 + a_col;
    const bool a_inside = ac < Cg;
    const T* a_src = lhs + (long long)gi * R * CgK + (long long)ac * K;  // + r·CgK + k
    const T* b_src = rhs + (long long)gi * R * NL;                       // + r·NL + n·L + w
    // The tile's columns located once, by the first 128 threads, through shared memory
    // (which also keeps the locating's divisors out of the products' registers).
    if (tid < TN) {
      const unsigned col = col0 + tid;
      unsigned n = 0, p[3];
      implicit_locate(g, phased, col < NS ? col : 0, n, p);
      s_pos[0][tid] = p[0];
      s_pos[1][tid] = p[1];
      s_pos[2][tid] = p[2];
      s_pos[3][tid] = n;
      s_at[tid] = col < NS ? n * CS + (p[0] * unsigned(g.image[1]) + p[1]) * unsigned(g.image[2]) + p[2]
                           : ~0u;
    }
    __syncthreads();
    ImplicitColumn bc;
    bc.inside = col0 + b_col < NS;
    bc.p[0] = s_pos[0][b_col];
    bc.p[1] = s_pos[1][b_col];
    bc.p[2] = s_pos[2][b_col];
    bc.first = s_pos[3][b_col] * unsigned(windows);  // n·L < N·L < 2^32

    // The loaders' kernel offset (flat k, per axis kk) and chunk (first row r0). Phased,
    // an offset whose stride lattice misses every class of the tile's columns
    // (phase_lo..phase_hi) is skipped: all its products would be 0 (the same decision in
    // every thread: no vote). Its lattice: per axis the phase (kk·dilation − padding)
    // mod stride, kept incrementally (no division per offset).
    long long kk[3] = {0, 0, 0};
    unsigned k = 0, r0 = 0, phase_lo = 0, phase_hi = 0;
    unsigned lattice[3] = {lattice_base[0], lattice_base[1], lattice_base[2]};
    if (phased) {
      const unsigned class_columns = NS / unsigned(g.stride[0] * g.stride[1] * g.stride[2]);
      phase_lo = col0 / class_columns;
      phase_hi = (NS - col0 > unsigned(TN) ? col0 + TN - 1 : NS - 1) / class_columns;
    }
    auto usable = [&]() {
      if (!phased) return true;
      for (unsigned f = phase_lo; f <= phase_hi; ++f) {
        const unsigned f01 = f / unsigned(g.stride[2]), f0 = f01 / unsigned(g.stride[1]);
        if (f0 == lattice[0] && f01 - f0 * unsigned(g.stride[1]) == lattice[1] &&
            f - f01 * unsigned(g.stride[2]) == lattice[2])
          return true;
      }
      return false;
    };
    auto step = [&](int a) {  // kk[a] + 1, or false and 0 at the axis's end
      if (++kk[a] == g.kernel[a]) {
        kk[a] = 0;
        lattice[a] = lattice_base[a];
        return false;
      }
      lattice[a] += lattice_step[a];
      if (lattice[a] >= unsigned(g.stride[a])) lattice[a] -= unsigned(g.stride[a]);
      return true;
    };
    auto next_offset = [&]() {  // false past the last offset
      for (;;) {
        if (++k >= K) return false;
        if (!step(2) && !step(1)) step(0);
        if (usable()) return true;
      }
    };
    T ra[AL], rb[BL];
    auto load = [&]() {
#pragma unroll
      for (int i = 0; i < AL; ++i) {
        const unsigned r = r0 + a_row + 4 * i;
        ra[i] = a_inside && r < R ? a_src[r * CgK + k] : T(0);
      }
#pragma unroll
      for (int i = 0; i < BL; ++i) {
        const unsigned r = r0 + b_row + 2 * i;
        rb[i] = bc.any && r < R ? b_src[r * NL + bc.source] : T(0);
      }
    };
    bool have = R > 0 && K > 0 && (usable() || next_offset());
    if (have) {
      bc.find(g, by_stride, kk);
      load();
    }

    // Accumulators (one set is used): tf32 [m16 tile][n8 tile][c0..c3], SIMT
    // [channel][column].
    float tacc[2][4][4];
    T sacc[4][8];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) tacc[i][j][e] = 0.f;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) sacc[i][j] = T(0);

    for (unsigned q = 0; have; ++q) {
      T* const a_s = sa[q & 1];
      T* const b_s = sb[q & 1];
      // Buffer q & 1 was last read by chunk q - 2's products, which every thread
      // finished before chunk q - 1's barrier.
#pragma unroll
      for (int i = 0; i < AL; ++i) {
        T v = ra[i];
        if constexpr (kTf32) v = tf32_round(v);
        a_s[(a_row + 4 * i) * PA + a_col] = v;
      }
#pragma unroll
      for (int i = 0; i < BL; ++i) {
        T v = rb[i];
        if constexpr (kTf32) v = tf32_round(v);
        b_s[(b_row + 2 * i) * PB + b_col] = v;
      }
      __syncthreads();
      // The next chunk's loads fly during this chunk's products.
      r0 += RC;
      if (r0 >= R) {
        r0 = 0;
        have = next_offset();
        if (have) bc.find(g, by_stride, kk);
      }
      if (have) load();
      if constexpr (kTf32) {
        const int lane = tid & 31, warp = tid >> 5;
        const int gq = lane >> 2, tq = lane & 3;
        const int wm = 32 * (warp & 1), wn = 32 * (warp >> 1);
#pragma unroll
        for (int x = 0; x < RC; x += 8) {
          const float* ap = a_s + (x + tq) * PA + wm + gq;
          const float* bp = b_s + (x + tq) * PB + wn + gq;
          unsigned af[2][4], bf[4][2];
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            af[i][0] = __float_as_uint(ap[16 * i]);
            af[i][1] = __float_as_uint(ap[16 * i + 8]);
            af[i][2] = __float_as_uint(ap[4 * PA + 16 * i]);
            af[i][3] = __float_as_uint(ap[4 * PA + 16 * i + 8]);
          }
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            bf[j][0] = __float_as_uint(bp[8 * j]);
            bf[j][1] = __float_as_uint(bp[4 * PB + 8 * j]);
          }
#pragma unroll
          for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) mma_tf32_m16n8k8(tacc[i][j], af[i][0], af[i][1], af[i][2], af[i][3],
                                            bf[j][0], bf[j][1]);
        }
      } else {
        const int tx = tid & 15, ty = tid >> 4;
        const T* ap = a_s + 4 * ty;
        const T* bp = b_s + 4 * tx;
#pragma unroll
        for (int x = 0; x < RC; ++x) {
          const Vec16<T>* av = reinterpret_cast<const Vec16<T>*>(ap + x * PA);
          const Vec16<T>* bv = reinterpret_cast<const Vec16<T>*>(bp + x * PB);
          const Vec16<T>* bw = reinterpret_cast<const Vec16<T>*>(bp + x * PB + TN / 2);
          constexpr int W = Vec16<T>::kWidth;  // 4 floats, 2 doubles
          T a[4], b[8];
#pragma unroll
          for (int v = 0; v < 4 / W; ++v) {
            const Vec16<T> a4 = av[v], b4 = bv[v], c4 = bw[v];
#pragma unroll
            for (int e = 0; e < W; ++e) {
              a[v * W + e] = a4.v[e];
              b[v * W + e] = b4.v[e];
              b[4 + v * W + e] = c4.v[e];
            }
          }
#pragma unroll
          for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) sacc[i][j] = implicit_fma(a[i], b[j], sacc[i][j]);
        }
      }
    }

    // The epilogue: image[(n·C + gi·Cg + c)·S + p], channels past Cg and columns past
    // N·S not written; a thread's consecutive columns (two for tf32, 16 bytes for SIMT)
    // in one store where they are consecutive positions of one sample and aligned.
    T* const image_g = image + (long long)gi * Cg * S;  // + c·S + (n·C·S + p)
    if constexpr (kTf32) {
      const int lane = tid & 31, warp = tid >> 5;
      const int gq = lane >> 2, tq = lane & 3;
      const int wm = 32 * (warp & 1), wn = 32 * (warp >> 1);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int x = wn + 8 * j + 2 * tq;
        const unsigned at0 = s_at[x], at1 = s_at[x + 1];
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const unsigned c = c0 + wm + 16 * i + gq + 8 * h;
            if (c >= Cg) continue;
            float* const row = image_g + c * S;
            const float v0 = tacc[i][j][2 * h], v1 = tacc[i][j][2 * h + 1];
            if (at0 != ~0u && at1 != ~0u && at1 == at0 + 1 &&
                (reinterpret_cast<unsigned long long>(row + at0) & 7) == 0) {
              *reinterpret_cast<float2*>(row + at0) = make_float2(v0, v1);
            } else {
              if (at0 != ~0u) row[at0] = v0;
              if (at1 != ~0u) row[at1] = v1;
            }
          }
      }
    } else {
      const int tx = tid & 15, ty = tid >> 4;
      constexpr int W = Vec16<T>::kWidth;
#pragma unroll
      for (int half = 0; half < 2; ++half)
#pragma unroll
        for (int v = 0; v < 4 / W; ++v) {
          const int x = TN / 2 * half + 4 * tx + W * v;
          unsigned at[W];
          bool run = true;  // W consecutive positions
#pragma unroll
          for (int e = 0; e < W; ++e) {
            at[e] = s_at[x + e];
            run = run && at[e] != ~0u && at[e] == at[0] + e;
          }
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const unsigned c = c0 + 4 * ty + i;
            if (c >= Cg) continue;
            T* const row = image_g + c * S;
            const T* const value = &sacc[i][4 * half + W * v];
            if (run && aligned16(row + at[0])) {
              Vec16<T> out;
#pragma unroll
              for (int e = 0; e < W; ++e) out.v[e] = value[e];
              *reinterpret_cast<Vec16<T>*>(row + at[0]) = out;
            } else {
#pragma unroll
              for (int e = 0; e < W; ++e)
                if (at[e] != ~0u) row[at[e]] = value[e];
            }
          }
        }
    }
    __syncthreads();  // the next tile rewrites s_at and buffer 0
  }
}

// f32 or f64 on CUDA cores.
template <class T>
__device__ void col2im_matmul_kernel(const T* lhs, const T* rhs, T* image, ConvGeometry g,
                                     long long rows) {
  col2im_matmul_tiles<T, false>(lhs, rhs, image, g, rows);
}

// f32 storage, TF32 products on tensor cores, f32 accumulation.
__device__ inline void col2im_matmul_tf32_kernel(const float* lhs, const float* rhs, float* image,
                                                 ConvGeometry g, long long rows) {
  col2im_matmul_tiles<float, true>(lhs, rhs, image, g, rows);
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_COL2IM_MATMUL_CUH_
