// softmax.cuh: softmax / log_softmax along one axis, and their VJPs.
//
// Layout: the axis has extent n; outer is the product of the extents before it, inner
// of those after it. Row (o, i), numbered o * inner + i, is the n elements
// (o * n + k) * inner + i, k = 0..n-1: stride inner (1 for the last axis, the common
// case, where a warp reads contiguous memory).
//
// Four paths, every order fixed (the same bits every run, no atomics), accumulation
// in T (f32 runs in f32, f64 runs in f64):
//  - rows along the last axis of up to 4096 (a model's 768 or 3072): held in registers
//    by a warp (up to 1024) or the block (rows.cuh): the max over the row, then the
//    sum of exp(x - max), each a fold per thread in slot order and the group's fixed
//    combination; the row is read once and written once, 16-byte vectors where the
//    length and the pointers allow. Codegen instantiates each kernel for its rows'
//    group G and slots per thread P (template arguments; P = 0: no register path).
//  - longer rows along the last axis (a vocabulary of 50257), given the dynamic shared
//    memory for their part (codegen: clusters of two blocks of 512, half a row each,
//    f32 rows up to about 116,000): the row staged in shared memory by cp.async and
//    read from memory once; the max, then the sum of exp(x - max) from the staged copy,
//    the halves' exchanged through distributed shared memory; each block stages its
//    next row while it writes this one (long_rows_staged).
//  - longer rows without that shared memory: one block per row, its statistics
//    gathered in one pass (each thread folds its elements, 16-byte vectors between the
//    row's 16-byte boundaries, into a running (max, sum of exp(x - max)) pair,
//    rescaling the sum when the max grows: online softmax; then each warp's butterfly
//    and the warps in order), a second pass writing the row from its end (the part
//    likeliest to be still in L2 first).
//  - rows along another axis (stride inner): the same one-pass statistics with scalar
//    loads k = t, t + blockDim.x, ..., then the write.
// Rows grid-stride over the groups. classifier.cuh uses the long rows' statistics.
//
// A mask (masked_softmax) enters through softmax_rows' `keep` predicate on the element
// index: blocked elements are left out of the max and the sum and written as exact
// zeros, so a fully blocked row comes out all zeros (TorchLean's hard mask: no -inf or
// finite sentinel is added to x). softmax / log_softmax pass KeepAll; masked_softmax
// passes MaskKeep, which reads an int32 0 / 1 mask (an i1 value) broadcast to the input
// through a Dims (the input's extents, the mask's strides, 0 where it broadcasts). Its
// VJP is softmax_grad_kernel on its result (0 wherever the mask blocks).
//
// Launch: block 256, grid max(1, min(rows, 4096)); long contiguous rows (P = 0, inner
// 1) as codegen/recipes/Recipe.cpp's longRowLaunch: the entry point instantiated with
// Parts = 2 and carrying __cluster_dims__(2, 1, 1) __launch_bounds__(512, 2), blocks of
// 512, long_row_part_bytes(n, 4, 2) of dynamic shared memory, grid 2 * rows capped at
// four blocks per SM. The general paths take any block of whole warps up to 1024, the
// VJP's a block of 256 (partial[256]).
// Generated entry points (G, P: rows.cuh's row_group_for / row_slots_for of the row
// length, 0, 0 for rows along another axis):
//   extern "C" __global__ void k_f32(const float* in, float* out, long long outer,
//       long long n, long long inner) { vouch::softmax_kernel<float, 32, 24>(in, out,
//       outer, n, inner, false); }      // true: log_softmax
//   extern "C" __global__ void k_f32(const float* in, const int* mask, vouch::Dims mask_dims,
//       float* out, long long outer, long long n, long long inner) {
//     vouch::masked_softmax_kernel<float, G, P>(in, mask, mask_dims, out, outer, n, inner); }
//   extern "C" __global__ void k_f32(const float* grad, const float* output, float* out,
//       long long outer, long long n, long long inner) {
//     vouch::softmax_grad_kernel<float, G, P>(grad, output, out, outer, n, inner, false); }
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_SOFTMAX_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_SOFTMAX_CUH_

#include "cluster.cuh"  // cluster_position, combine_parts, cluster_sync
#include "common.cuh"
#include "reduce.cuh"  // positive_infinity
#include "rows.cuh"

namespace vouch {

// The larger of a and b; NaN if either is (a NaN row comes out NaN, as in PyTorch).
template <class T>
struct NanMax {
  __device__ T operator()(T a, T b) const { return (a != a || b <= a) ? a : b; }
};

// Every element takes part (no mask).
struct KeepAll {
  __device__ bool operator()(long long) const { return true; }
};

// The offset of row `row`'s first element.
__device__ inline long long row_base(long long row, long long n, long long inner) {
  const long long o = index_div(row, inner);
  return o * n * inner + (row - o * inner);
}

// One element into a thread's running (max, sum of exp(x - max)), from (-inf, 0). A
// NaN never raises the max but makes the sum NaN, so a NaN element makes its row NaN.
// -inf adds exp(-inf) = 0, skipped: before any finite element exp(-inf - -inf) would
// be NaN (a row masked with -inf logits must not turn NaN).
template <class T>
__device__ inline void online_add(T x, T& max, T& sum) {
  if (x > max) {
    sum = sum * exp(max - x) + T(1);
    max = x;
  } else if (x != -positive_infinity<T>()) {
    sum += exp(x - max);
  }
}

// Two (max, sum) pairs as one; a side with nothing (sum 0) contributes 0.
template <class T>
__device__ inline void online_combine(T& max, T& sum, T other_max, T other_sum) {
  const T m = NanMax<T>()(max, other_max);
  const T a = sum == T(0) ? T(0) : sum * exp(max - m);
  const T b = other_sum == T(0) ? T(0) : other_sum * exp(other_max - m);
  max = m;
  sum = a + b;
}

// The block's (max, sum) pairs, one per thread (m, s), combined: each warp's
// butterfly of xor shuffles (online_combine is commutative: every lane ends with the
// same bits), then the warps' pairs in warp order, by every thread (rows.cuh's
// combine_warps order). Any block of whole warps up to 1024 threads. `pm`, `ps` hold
// 32 values each (shared).
template <class T>
__device__ void block_online_combine(T m, T s, T* pm, T* ps, T& max, T& sum) {
#pragma unroll
  for (int h = 16; h > 0; h >>= 1) {
    const T other_m = __shfl_xor_sync(0xffffffffu, m, h);
    const T other_s = __shfl_xor_sync(0xffffffffu, s, h);
    online_combine(m, s, other_m, other_s);
  }
  __syncthreads();  // the previous row's reads of pm, ps are done
  if ((threadIdx.x & 31) == 0) {
    pm[threadIdx.x >> 5] = m;
    ps[threadIdx.x >> 5] = s;
  }
  __syncthreads();
  max = pm[0];
  sum = ps[0];
  for (int w = 1; w < int(blockDim.x >> 5); ++w) online_combine(max, sum, pm[w], ps[w]);
}

// The max and sum of exp(x - max) over the kept elements base + k * inner of a row of
// n, for every thread of the block: per thread ascending k = t, t + blockDim.x, ...
// (eight loads in flight), then block_online_combine. No kept element: max -inf, sum 0.
template <class T, class Keep>
__device__ void row_online_stats(const T* in, long long base, long long n, long long inner,
                                 Keep keep, T* pm, T* ps, T& max, T& sum) {
  T m = -positive_infinity<T>(), s = T(0);
  const long long step = blockDim.x;
  long long k = threadIdx.x;
  for (; k + 7 * step < n; k += 8 * step) {
    T v[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = in[base + (k + j * step) * inner];
#pragma unroll
    for (int j = 0; j < 8; ++j)
      if (keep(base + (k + j * step) * inner)) online_add(v[j], m, s);
  }
  for (; k < n; k += step)
    if (keep(base + k * inner)) online_add(in[base + k * inner], m, s);
  block_online_combine(m, s, pm, ps, max, sum);
}

// ---- Long contiguous rows (inner == 1, longer than the register path holds).
//
// A row is split at its first and last 16-byte boundary: the head (fewer than W
// elements before the first) and the tail (after the last) go one element per thread,
// the body as 16-byte vectors, chunk c = t, t + blockDim.x, ... per thread.
// Statistics: thread t folds its head element, its chunks (ascending, each vector's
// elements in order; eight vectors in flight) and its tail element, then
// block_online_combine. The write
// pass reads the row again, its chunks from the row's end down, so what the statistics
// pass read last is read first (the likeliest to be still in L2). (Capping the blocks
// at work so that every row in flight stays in L2 for the second read was measured
// slower at 50257: too few loads in flight; docs/performance.md.)

// The split of a row starting at `row`: [0, head) single, [head, head + W * chunks)
// vectors, [head + W * chunks, n) single.
template <class T>
struct RowSplit {
  long long head, chunks, tail_begin;
  __device__ RowSplit(const T* row, long long n) {
    constexpr int W = Vec16<T>::kWidth;
    const long long misalign = (long long)(reinterpret_cast<unsigned long long>(row) & 15ull);
    head = misalign == 0 ? 0 : (16 - misalign) / (long long)sizeof(T);
    if (head > n) head = n;
    chunks = (n - head) / W;
    tail_begin = head + chunks * W;
  }
};

template <class T, class Keep>
__device__ void long_row_stats(const T* in, long long base, long long n, Keep keep, T* pm,
                               T* ps, T& max, T& sum) {
  constexpr int W = Vec16<T>::kWidth;
  const T* row = in + base;
  const RowSplit<T> split(row, n);
  T m = -positive_infinity<T>(), s = T(0);
  if (threadIdx.x < split.head && keep(base + threadIdx.x)) online_add(row[threadIdx.x], m, s);
  const Vec16<T>* body = reinterpret_cast<const Vec16<T>*>(row + split.head);
  const long long step = blockDim.x;
  long long c = threadIdx.x;
  for (; c + 7 * step < split.chunks; c += 8 * step) {
    Vec16<T> v[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = body[c + j * step];
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < W; ++e)
        if (keep(base + split.head + (c + j * step) * W + e)) online_add(v[j].v[e], m, s);
  }
  for (; c < split.chunks; c += step) {
    const Vec16<T> v = body[c];
#pragma unroll
    for (int e = 0; e < W; ++e)
      if (keep(base + split.head + c * W + e)) online_add(v.v[e], m, s);
  }
  const long long k = split.tail_begin + threadIdx.x;
  if (k < n && keep(base + k)) online_add(row[k], m, s);
  block_online_combine(m, s, pm, ps, max, sum);
}

// out[base + k] = f(k, in[base + k]) for the row's k, the body's chunks from the end
// down; vectors when out's row is split at the same places as in's (its element at the
// body's start vector-aligned). O: T, or bf16 bits (row_store).
template <class T, class F, class O>
__device__ void long_row_write(const T* in, O* out, long long base, long long n, F f) {
  constexpr int W = Vec16<T>::kWidth;
  const T* row = in + base;
  O* dst = out + base;
  const RowSplit<T> split(row, n);
  if (!row_vec_aligned<W>(dst + split.head)) {  // split differently: single elements, from the end too
    for (long long k = n - 1 - threadIdx.x; k >= 0; k -= blockDim.x) row_store(dst + k, f(k, row[k]));
    return;
  }
  if (split.tail_begin + threadIdx.x < n) {
    const long long k = split.tail_begin + threadIdx.x;
    row_store(dst + k, f(k, row[k]));
  }
  const Vec16<T>* body = reinterpret_cast<const Vec16<T>*>(row + split.head);
  for (long long c = split.chunks - 1 - threadIdx.x; c >= 0; c -= blockDim.x) {
    Vec16<T> v = body[c];
#pragma unroll
    for (int e = 0; e < W; ++e) v.v[e] = f(split.head + c * W + e, v.v[e]);
    row_store_vec(dst + split.head + c * W, v);
  }
  if (threadIdx.x < split.head) row_store(dst + threadIdx.x, f(threadIdx.x, row[threadIdx.x]));
}

// ---- Long contiguous rows staged in shared memory (a vocabulary of 50257 in f32).
//
// The row's body (RowSplit's 16-byte chunks) is copied into dynamic shared memory by
// cp.async, so the row is read from memory once: the max, the sum of exp(x - max)
// and the written row all come from the staged copy. A row is staged by Parts blocks:
// one, or (Parts = 2) the two blocks of a thread-block cluster, each holding half of
// the chunks (rank 0 the first half and the head, rank 1 the second half and the
// tail), so two half-rows fit an SM and one block's statistics overlap the other's
// memory traffic; the halves' max and sum are exchanged through distributed shared
// memory and combined in rank order (both blocks get the same bits). Within a block,
// chunk c of its part goes to thread c % blockDim.x; each thread folds its elements in
// order (head element, chunks ascending, tail element), then block_reduce. Each
// thread touches only its own chunks, so no barrier guards them: as thread t writes
// chunk c of row r it stages chunk c of its next row in the same place, and the
// block's loads of the next row overlap its writes of this one. Launch (codegen,
// Recipe.cpp's longRowLaunch): Parts = 2, __cluster_dims__(2, 1, 1), blocks of 512,
// long_row_part_bytes(n, 4, 2) of dynamic shared memory, two blocks per SM (rows
// grid-stride over the clusters); a launch given less shared memory takes the
// unstaged long-row path, each block a row of its own.

// The shared memory a block staging its 1 / parts of a long row of n elements of
// `size` bytes needs: its share of the chunks at the worst alignment.
__host__ __device__ constexpr long long long_row_part_bytes(long long n, int size, int parts) {
  return (n / (16 / size) + parts - 1) / parts * 16;
}
// (One block: the whole row.)
__host__ __device__ constexpr long long long_row_shared_bytes(long long n, int size) {
  return long_row_part_bytes(n, size, 1);
}

// This block's part of a row split into `chunks`: [begin, end).
template <int Parts>
struct RowPart {
  long long begin, end;
  __device__ RowPart(long long chunks, unsigned rank) {
    const long long half = (chunks + Parts - 1) / Parts;
    begin = rank * half < chunks ? rank * half : chunks;
    end = begin + half < chunks ? begin + half : chunks;
  }
};

// Thread t's chunks of this block's part of the row starting at `row` into `staged`.
template <int Parts, class T>
__device__ inline void stage_row_part(const T* row, long long n, unsigned rank,
                                      Vec16<T>* staged) {
  const RowSplit<T> split(row, n);
  const RowPart<Parts> part(split.chunks, rank);
  const Vec16<T>* body = reinterpret_cast<const Vec16<T>*>(row + split.head);
  for (long long c = part.begin + threadIdx.x; c < part.end; c += blockDim.x)
    cp_async16(&staged[c - part.begin], &body[c]);
}

// Rows of `in` through shared memory into `out`, each staged by Parts blocks. `op`
// says per row: fill(row, value) (true: the row is written as that value, its logits
// unread: cross_entropy's ignored rows), keep(at) (the elements taking part; the
// others are written by the writer too, which tests keep itself), stash() (whether
// the writer takes exp(x - max) instead of x for the staged elements, computed once
// by the sum's pass), and writer(row, base, max, sum), a functor giving out[base + k]
// from in[base + k] = x: f(k, x), or f.of_exp(k, exp(x - max)) where stashed (0 for an
// element not kept). Rows lie `pitch` elements apart (0: n, dense); the pitch - n
// after each row's n are never read and written 0 (cross_entropy's padded classes).
// O: T, or bf16 bits (row_store: cross_entropy_grad's dlogits under bf16 products).
template <int Parts, class T, class Op, class O>
__device__ void long_rows_staged(const T* in, O* out, long long rows, long long n,
                                 const Op& op, long long pitch = 0) {
  if (pitch == 0) pitch = n;
  constexpr int W = Vec16<T>::kWidth;
  __shared__ T scratch[32];
  __shared__ T part_max, part_sum;  // this block's, for the cluster's other blocks
  Vec16<T>* staged = dynamic_shared<Vec16<T>>();
  unsigned rank;
  long long row, step;
  cluster_position<Parts>(rank, row, step);
  const bool first_part = rank == 0, last_part = rank == Parts - 1;
  T fill;
  if (row < rows && !op.fill(row, fill)) stage_row_part<Parts>(in + row * pitch, n, rank, staged);
  for (; row < rows; row += step) {
    const long long base = row * pitch, next = row + step;
    const T* src = in + base;
    O* dst = out + base;
    if (last_part)  // the padding after the row
      for (long long k = n + threadIdx.x; k < pitch; k += blockDim.x) row_store(dst + k, T(0));
    const bool next_staged = next < rows && !op.fill(next, fill);
    const RowSplit<T> next_split(in + next * pitch, n);
    const RowPart<Parts> next_part(next_split.chunks, rank);
    const Vec16<T>* next_body =
        reinterpret_cast<const Vec16<T>*>(in + next * pitch + next_split.head);
    if (op.fill(row, fill)) {  // this block's share of the row's elements
      const long long from = n * rank / Parts, to = n * (rank + 1) / Parts;
      for (long long k = from + threadIdx.x; k < to; k += blockDim.x) row_store(dst + k, fill);
      if (next_staged) stage_row_part<Parts>(in + next * pitch, n, rank, staged);
      continue;
    }
    const RowSplit<T> split(src, n);
    const RowPart<Parts> part(split.chunks, rank);
    const long long tail = split.tail_begin + threadIdx.x;
    const bool has_head = first_part && threadIdx.x < split.head;
    const bool has_tail = last_part && tail < n;
    cp_async_wait_all();
    T m = -positive_infinity<T>();
    if (has_head && op.keep(base + threadIdx.x)) m = NanMax<T>()(m, src[threadIdx.x]);
    for (long long c = part.begin + threadIdx.x; c < part.end; c += blockDim.x) {
      const Vec16<T> v = staged[c - part.begin];
#pragma unroll
      for (int e = 0; e < W; ++e)
        if (op.keep(base + split.head + c * W + e)) m = NanMax<T>()(m, v.v[e]);
    }
    if (has_tail && op.keep(base + tail)) m = NanMax<T>()(m, src[tail]);
    m = combine_parts<Parts>(block_reduce(m, NanMax<T>(), scratch), NanMax<T>(), &part_max,
                             rank);
    auto exp_of = [&](long long at, T x) {
      return op.keep(at) && x != -positive_infinity<T>() ? exp(x - m) : T(0);
    };
    // exp(x - max) replaces x in the staged chunks where the writer wants it
    // (stash(): softmax and dlogits; log_softmax needs x).
    const bool stash = op.stash();
    T sum = T(0);
    if (has_head) sum += exp_of(base + threadIdx.x, src[threadIdx.x]);
    for (long long c = part.begin + threadIdx.x; c < part.end; c += blockDim.x) {
      Vec16<T> v = staged[c - part.begin];
#pragma unroll
      for (int e = 0; e < W; ++e) {
        v.v[e] = exp_of(base + split.head + c * W + e, v.v[e]);
        sum += v.v[e];
      }
      if (stash) staged[c - part.begin] = v;
    }
    if (has_tail) sum += exp_of(base + tail, src[tail]);
    sum = combine_parts<Parts>(block_reduce(sum, SumCombine(), scratch), SumCombine(),
                               &part_sum, rank);
    const auto f = op.writer(row, base, m, sum);
    // out's row split at the same places as in's: vector stores; else single ones.
    const bool vec_out = row_vec_aligned<W>(dst + split.head);
    // This block's chunks of this row and of its next row, from either's begin.
    const long long count = part.end - part.begin;
    const long long next_count = next_staged ? next_part.end - next_part.begin : 0;
    const long long last = next_count > count ? next_count : count;
    for (long long i = threadIdx.x; i < last; i += blockDim.x) {
      if (i < count) {
        Vec16<T> v = staged[i];
        const long long k = split.head + (part.begin + i) * W;
        if (stash) {
#pragma unroll
          for (int e = 0; e < W; ++e) v.v[e] = f.of_exp(k + e, v.v[e]);
        } else {
#pragma unroll
          for (int e = 0; e < W; ++e) v.v[e] = f(k + e, v.v[e]);
        }
        if (vec_out) {
          if constexpr (sizeof(O) == sizeof(T))  // (indexed from the body's start: nvcc
            reinterpret_cast<Vec16<T>*>(dst + split.head)[part.begin + i] = v;  // stores 16 bytes)
          else
            row_store_vec(dst + k, v);
        } else {
#pragma unroll
          for (int e = 0; e < W; ++e) row_store(dst + k + e, v.v[e]);
        }
      }
      if (i < next_count) cp_async16(&staged[i], &next_body[next_part.begin + i]);
    }
    if (has_head) row_store(dst + threadIdx.x, f(threadIdx.x, src[threadIdx.x]));
    if (has_tail) row_store(dst + tail, f(tail, src[tail]));
  }
  cp_async_wait_all();
  if constexpr (Parts > 1) cluster_sync();  // the others may still read part_sum
}

// ---- Rows in registers (rows.cuh): the last axis (inner == 1), n <= G * P.

// Which slots of a row take part: every slot inside the row (no mask) ...
struct RowKeepAll {
  template <class T, int G, int P>
  __device__ unsigned bits(long long, long long n, int t, bool vec) const {
    return in_row_bits<T, G, P>(n, t, vec);
  }
};

// ... or those whose mask entry (broadcast by `dims`, the input's extents with the
// mask's strides) is nonzero. Element k of row r is flat position r * n + k, so its
// mask entry is at dims_offset(r * n) + k * (the last axis's mask stride, 0 or 1).
struct RowKeepMask {
  const int* mask;
  const Dims& dims;
  template <class T, int G, int P>
  __device__ unsigned bits(long long row, long long n, int t, bool vec) const {
    const long long base = dims_offset(row * n, dims);
    const long long stride = dims_last_stride(dims);
    using Slots = RowSlots<T, G, P>;
    constexpr int W = Slots::W;
    unsigned bits = 0;
    if (vec && stride == 1 && (reinterpret_cast<unsigned long long>(mask + base) &
                               (W * sizeof(int) - 1)) == 0) {
#pragma unroll
      for (int j = 0; j < P / W; ++j) {
        const long long k = ((long long)j * G + t) * W;
        if (k < n) {
          const IntVec<W> m = *reinterpret_cast<const IntVec<W>*>(mask + base + k);
#pragma unroll
          for (int e = 0; e < W; ++e)
            if (m.v[e] != 0) bits |= 1u << (j * W + e);
        }
      }
      return bits;
    }
#pragma unroll
    for (int s = 0; s < P; ++s) {
      const long long k = Slots::index(s, t, vec);
      if (k < n && mask[base + k * stride] != 0) bits |= 1u << s;
    }
    return bits;
  }
};

// softmax / log_softmax of rows of n <= G * P held in registers: the max over the kept
// slots, then the sum of exp(x - max) over them (-inf skipped, as online_add does),
// each a per-thread fold in slot order and the group's fixed combination; blocked and
// out-of-row slots are not part of either. One read of the row, one write.
template <class T, int G, int P, class Keep>
__device__ void softmax_rows_in_registers(const T* in, T* out, long long rows, long long n,
                                          bool take_log, Keep keep) {
  __shared__ T scratch[8];
  using Group = RowGroup<G>;
  const int t = Group::rank();
  const bool vec = n % RowSlots<T, G, P>::W == 0 && aligned16(in) && aligned16(out);
  for (long long row = Group::first(); row < rows; row += Group::step()) {
    RowSlots<T, G, P> x;
    x.load(in + row * n, n, t, vec, T(0));
    const unsigned kept = keep.template bits<T, G, P>(row, n, t, vec);
    T m = -positive_infinity<T>();
#pragma unroll
    for (int s = 0; s < P; ++s)
      if (kept >> s & 1u) m = NanMax<T>()(m, x.v[s]);
    m = Group::reduce(m, NanMax<T>(), scratch);
    // exp(x - m) of the kept slots (0 elsewhere), computed once: softmax keeps it in
    // place of x (log_softmax still needs x).
    T sum = T(0);
#pragma unroll
    for (int s = 0; s < P; ++s) {
      const T e =
          (kept >> s & 1u) && x.v[s] != -positive_infinity<T>() ? exp(x.v[s] - m) : T(0);
      sum += e;
      if (!take_log) x.v[s] = e;
    }
    sum = Group::sum(sum, scratch);
    const T log_sum = log(sum), inv_sum = T(1) / sum;
#pragma unroll
    for (int s = 0; s < P; ++s)
      x.v[s] = !(kept >> s & 1u) ? T(0) : take_log ? x.v[s] - m - log_sum : x.v[s] * inv_sum;
    x.store(out + row * n, n, t, vec);
  }
}

// The softmax functor of one row: blocked elements 0.
template <class T, class Keep>
// (softmax scales by the sum's reciprocal, computed once: a multiply per element
// instead of a division, within an ulp of exp(x - m) / sum.)
struct SoftmaxOf {
  Keep keep;
  long long base;
  T m, inv_sum, log_sum;
  bool take_log;
  __device__ T operator()(long long k, T x) const {
    return !keep(base + k) ? T(0) : take_log ? x - m - log_sum : exp(x - m) * inv_sum;
  }
  // softmax from e = exp(x - m) (0 where not kept).
  __device__ T of_exp(long long k, T e) const { return !keep(base + k) ? T(0) : e * inv_sum; }
};

// softmax / log_softmax / masked_softmax as a long_rows_staged op.
template <class T, class Keep>
struct SoftmaxRowOp {
  Keep keep;
  bool take_log;
  __device__ bool fill(long long, T&) const { return false; }
  __device__ bool stash() const { return !take_log; }
  __device__ SoftmaxOf<T, Keep> writer(long long, long long base, T m, T sum) const {
    return SoftmaxOf<T, Keep>{keep, base, m, T(1) / sum, log(sum), take_log};
  }
};

// Long: whether contiguous rows take the long-row path (instantiations with a register
// path leave it out: its eight vectors in flight per thread would cost every launch of
// the kernel registers; their rows never need it, and a launch that does not fit the
// register path still gets the strided one, correct for any row).
template <bool Long, int Parts, class T, class Keep>
__device__ void softmax_rows(const T* in, T* out, long long outer, long long n,
                             long long inner, bool take_log, Keep keep) {
  __shared__ T pm[32], ps[32];
  const long long rows = outer * inner;
  // (Rows of fewer than one 16-byte vector per part stage nothing: the other path.)
  const long long staged_bytes = long_row_part_bytes(n, sizeof(T), Parts);
  if (Long && inner == 1 && staged_bytes > 0 && dynamic_shared_bytes() >= staged_bytes)
    return long_rows_staged<Parts>(in, out, rows, n, SoftmaxRowOp<T, Keep>{keep, take_log});
  if (Long && inner == 1) {  // contiguous rows: 16-byte vectors
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
      const long long base = row * n;
      T m, sum;
      long_row_stats(in, base, n, keep, pm, ps, m, sum);
      long_row_write(in, out, base, n,
                     SoftmaxOf<T, Keep>{keep, base, m, T(1) / sum, log(sum), take_log});
    }
    return;
  }
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const long long base = row_base(row, n, inner);
    T m, sum;
    row_online_stats(in, base, n, inner, keep, pm, ps, m, sum);
    const T log_sum = log(sum);
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
      const long long at = base + k * inner;
      out[at] = !keep(at) ? T(0) : take_log ? in[at] - m - log_sum : exp(in[at] - m) / sum;
    }
  }
}

// out = softmax (take_log = false) or log_softmax of each row of in.
// G, P: the register path's groups (rows.cuh, row_fits); P = 0: the general path only.
// Parts: the blocks that stage a long row (long_rows_staged; 2: a cluster's).
template <class T, int G = 0, int P = 0, int Parts = 1>
__device__ void softmax_kernel(const T* in, T* out, long long outer, long long n,
                               long long inner, bool take_log) {
  if constexpr (P > 0) {
    if (row_fits<G, P>(n, inner))
      return softmax_rows_in_registers<T, G, P>(in, out, outer, n, take_log, RowKeepAll());
  }
  softmax_rows<P == 0, Parts>(in, out, outer, n, inner, take_log, KeepAll());
}

// Keeps element `at` of the input where the mask, broadcast by `dims`, is nonzero.
struct MaskKeep {
  const int* mask;
  const Dims& dims;
  __device__ bool operator()(long long at) const { return mask[dims_offset(at, dims)] != 0; }
};

// out = softmax of each row of in over the elements the mask keeps; 0 elsewhere.
template <class T, int G = 0, int P = 0, int Parts = 1>
__device__ void masked_softmax_kernel(const T* in, const int* mask, const Dims& mask_dims,
                                      T* out, long long outer, long long n, long long inner) {
  if constexpr (P > 0) {
    if (row_fits<G, P>(n, inner))
      return softmax_rows_in_registers<T, G, P>(in, out, outer, n, false,
                                                RowKeepMask{mask, mask_dims});
  }
  softmax_rows<P == 0, Parts>(in, out, outer, n, inner, false, MaskKeep{mask, mask_dims});
}

// softmax_grad_kernel's rows of n <= G * P in registers (grad and output read once).
template <class T, int G, int P>
__device__ void softmax_grad_rows_in_registers(const T* grad, const T* output, T* out,
                                               long long rows, long long n, bool take_log) {
  __shared__ T scratch[8];
  using Group = RowGroup<G>;
  const int t = Group::rank();
  const bool vec = n % RowSlots<T, G, P>::W == 0 && aligned16(grad) && aligned16(output) &&
                   aligned16(out);
  for (long long row = Group::first(); row < rows; row += Group::step()) {
    RowSlots<T, G, P> g, y;
    g.load(grad + row * n, n, t, vec, T(0));
    y.load(output + row * n, n, t, vec, T(0));
    T s = T(0);
#pragma unroll
    for (int k = 0; k < P; ++k) s += take_log ? g.v[k] : g.v[k] * y.v[k];
    s = Group::sum(s, scratch);
#pragma unroll
    for (int k = 0; k < P; ++k)
      g.v[k] = take_log ? g.v[k] - exp(y.v[k]) * s : y.v[k] * (g.v[k] - s);
    g.store(out + row * n, n, t, vec);
  }
}

// The VJP from the forward result y = output, per row: softmax: out = y * (grad - s),
// s = sum of grad * y; log_softmax: out = grad - exp(y) * s, s = sum of grad.
template <class T, int G = 0, int P = 0>
__device__ void softmax_grad_kernel(const T* grad, const T* output, T* out, long long outer,
                                    long long n, long long inner, bool take_log) {
  if constexpr (P > 0) {
    if (row_fits<G, P>(n, inner))
      return softmax_grad_rows_in_registers<T, G, P>(grad, output, out, outer, n, take_log);
  }
  __shared__ T partial[256];
  const long long rows = outer * inner;
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const long long base = row_base(row, n, inner);
    T s = T(0);
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
      const long long at = base + k * inner;
      s += take_log ? grad[at] : grad[at] * output[at];
    }
    block_sum_tree(partial, s);
    s = partial[0];
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
      const long long at = base + k * inner;
      out[at] = take_log ? grad[at] - exp(output[at]) * s : output[at] * (grad[at] - s);
    }
    __syncthreads();  // partial is rewritten by the next row
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_SOFTMAX_CUH_
