// executor.cuh: the training executor's own kernels and their `extern "C"` entry points:
// batch selection, and the optimizer, whose last block ends the step (the loss ring and
// the step counter).
//
// Why static entry points here: these kernels are the same for every model, so they are
// defined once in this header and every generated program includes it exactly once
// (NVRTC compiles one program per model; the include guard keeps a second include
// harmless). All of them read the step count from device memory, so one captured CUDA
// graph per training step replays with no host update.
//
// Entry points and launch shapes (block 256 unless said):
//   vouch_select_batch_f32/_f64  grid max(1, min(ceil(words / 256), 1024))
//   vouch_select_windows_f32/_f64  grid max(1, min(ceil(batch * context / 256), 1024))
//   vouch_grad_norm_f32/_f64     grid 1 (a fixed-order reduction, optimizer.cuh)
//   vouch_optimizer_f32/_f64     grid (min(ceil(largest param / 256), 1024), max(params, 1))
//   vouch_round_bf16_f32         any grid and block (grid-stride); the executor's: block
//                                256, grid min(batches * out_rows * ceil(pitch / 1024), 4096)
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_EXECUTOR_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_EXECUTOR_CUH_

#include "common.cuh"
#include "optimizer.cuh"
#include "param_slot.h"
#include "shuffle.h"
#include "token_windows.h"

namespace vouch {

// Batch b = *step % num_batches of the uploaded data set: the executor keeps the
// data fields' buffers (every input and target, whatever its dtype) in one block of
// `words` 32-bit words and the dataset as num_batches such blocks, packed alike, so
// one grid-stride copy of words fills every field. With a shuffled order
// (order.rows > 0), row j of field f comes from row shuffled_row(b * batch + j, rows,
// seed, epoch) of the data set, epoch = *step / num_batches (shuffle.h).
__device__ inline void select_batch_kernel(const unsigned* data, unsigned* batch,
                                           const long long* step, long long num_batches,
                                           long long words, const RowOrder& order) {
  const long long s = *step;
  const long long epoch = index_div(s, num_batches);
  const long long b = s - epoch * num_batches;
  const unsigned* from = data + b * words;
  if (order.rows == 0) {
    for (long long i = grid_stride_begin(); i < words; i += grid_stride_step()) batch[i] = from[i];
    return;
  }
  for (long long i = grid_stride_begin(); i < words; i += grid_stride_step()) {
    int f = 0;
    while (f + 1 < order.num_fields && i >= order.word_offset[f + 1]) f++;
    const long long local = i - order.word_offset[f], row_words = order.row_words[f];
    const long long j = index_div(local, row_words);
    if (local < 0 || j >= order.batch) {  // alignment padding between fields
      batch[i] = from[i];
      continue;
    }
    const long long r = shuffled_row(b * order.batch + j, order.rows, order.seed, epoch);
    const long long rb = index_div(r, order.batch);
    batch[i] = data[rb * words + order.word_offset[f] + (r - rb * order.batch) * row_words +
                    (local - j * row_words)];
  }
}

// A token stream's batch (token_windows.h): row r of step *step is the window of
// context + 1 tokens at token_window_start(*step, r, ...) of `tokens` (host memory mapped
// into the device's address space: the stream is read where it lies, never uploaded
// whole); its first context tokens, widened to int32, fill input row r, its last
// context target row r. One thread per (row, position), grid-stride.
__device__ inline void select_windows_kernel(const void* tokens, unsigned* batch,
                                             const long long* step, const TokenWindows& w) {
  const long long s = *step, total = w.batch * w.context;
  const unsigned short* u16 = static_cast<const unsigned short*>(tokens);
  const unsigned* u32 = static_cast<const unsigned*>(tokens);
  for (long long i = grid_stride_begin(); i < total; i += grid_stride_step()) {
    const long long r = index_div(i, w.context), t = i - r * w.context;
    const long long at =
        token_window_start(s, r, w.batch, w.count, w.context, w.random != 0, w.seed) + t;
    batch[w.input_word + i] = w.token_bytes == 2 ? unsigned(u16[at]) : u32[at];
    batch[w.target_word + i] = w.token_bytes == 2 ? unsigned(u16[at + 1]) : u32[at + 1];
  }
}

// The end of a step, run by the step's last kernel (the optimizer) once all of its
// blocks are done: ring[*step % capacity] = loss[0] (the step's loss kept for the host,
// which reads it once per logging interval instead of once per step), then
// *step += 1. Each block, after its own work (which read *step), takes a ticket; the
// block that takes the last one does both, in that order, so the loss lands in the
// slot of the step that computed it and no block reads the advanced count. The
// ticket only picks which block writes: the values are the same whichever it is.
// One node fewer in every step's graph than a kernel of its own.
//
// No fence is needed: the only cross-block fact is "every block has read *step", and
// each thread's read was consumed (by the bias corrections) before the barrier that
// precedes its block's ticket; the loss was written by an earlier launch.
template <class T>
__device__ void end_step_after_last_block(const T* loss, T* ring, long long* step,
                                          long long capacity, unsigned* done) {
  __syncthreads();
  if (threadIdx.x != 0) return;
  const unsigned blocks = gridDim.x * gridDim.y * gridDim.z;
  if (atomicAdd(done, 1u) != blocks - 1) return;
  ring[*step % capacity] = loss[0];
  *step += 1;
  *done = 0;
}

// An f32's bf16 (its upper 16 bits after rounding to nearest, ties to even): what
// cvt.rn.bf16.f32 gives, written out (blas_test's host reference rounds alike).
// Infinities stay infinite, finite values past bf16's largest become infinite, NaN
// stays NaN (quietened).
__device__ inline unsigned short round_to_bf16(float x) {
  const unsigned u = __float_as_uint(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);  // NaN
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// A bf16 profile's GEMM operand rounded (round_to_bf16) into the executor's scratch:
// `batches` dense matrices of `rows` rows of `cols` f32 values each, written as
// matrices of `out_rows` >= rows rows at a row pitch of `pitch` >= cols elements,
// every element past the input's (the pad) zero:
//   out[(b * out_rows + r) * pitch + c] = round_to_bf16(in[(b * rows + r) * cols + c]).
// The executor pads a row to a multiple of 8 elements (16 bytes), the stride alignment
// cuBLAS's fastest (TMA) kernels need, and a product's K to a multiple of 8 with zero
// rows or columns in both operands (adding products 0 · 0): an odd extent (GPT-2's
// 50257 logits) otherwise costs several times the product. Work items are (matrix row,
// 1024 columns), one per block at a time; a thread rounds 4 adjacent columns at once
// (one 16-byte load, one 8-byte store) where cols, pitch and both pointers allow it.
__device__ inline void round_bf16_kernel(const float* in, unsigned short* out, long long batches,
                                         long long rows, long long cols, long long out_rows,
                                         long long pitch) {
  const long long chunks = (pitch + 1023) / 1024, items = batches * out_rows * chunks;
  const bool vector = cols % 4 == 0 && pitch % 4 == 0 &&
                      (reinterpret_cast<unsigned long long>(in) & 15) == 0 &&
                      (reinterpret_cast<unsigned long long>(out) & 7) == 0;
  for (long long item = blockIdx.x; item < items; item += gridDim.x) {
    const long long row = index_div(item, chunks);  // b * out_rows + r
    const long long c0 = (item - row * chunks) * 1024;
    const long long b = index_div(row, out_rows), r = row - b * out_rows;
    const float* from = r < rows ? in + (b * rows + r) * cols : nullptr;  // null: a pad row
    unsigned short* to = out + row * pitch;
    if (vector) {
      for (long long c = c0 + 4 * (long long)threadIdx.x; c < pitch && c < c0 + 1024;
           c += 4 * (long long)blockDim.x) {
        ushort4 q;
        q.x = q.y = q.z = q.w = 0;
        if (from != nullptr && c < cols) {
          const float4 v = *reinterpret_cast<const float4*>(from + c);
          q.x = round_to_bf16(v.x);
          q.y = round_to_bf16(v.y);
          q.z = round_to_bf16(v.z);
          q.w = round_to_bf16(v.w);
        }
        *reinterpret_cast<ushort4*>(to + c) = q;
      }
    } else {
      for (long long c = c0 + threadIdx.x; c < pitch && c < c0 + 1024; c += blockDim.x)
        to[c] = from != nullptr && c < cols ? round_to_bf16(from[c]) : (unsigned short)0;
    }
  }
}

}  // namespace vouch

// One word copy serves both element types; the two names keep the executor's
// "<base>_<t>" convention (the capsules name them per run).
extern "C" __global__ void vouch_select_batch_f32(const unsigned* data, unsigned* batch,
                                                  const long long* step,
                                                  long long num_batches, long long words,
                                                  vouch::RowOrder order) {
  vouch::select_batch_kernel(data, batch, step, num_batches, words, order);
}
extern "C" __global__ void vouch_select_batch_f64(const unsigned* data, unsigned* batch,
                                                  const long long* step,
                                                  long long num_batches, long long words,
                                                  vouch::RowOrder order) {
  vouch::select_batch_kernel(data, batch, step, num_batches, words, order);
}

// The token stream's windows (select_windows_kernel); one body for both element types.
extern "C" __global__ void vouch_select_windows_f32(const void* tokens, unsigned* batch,
                                                    const long long* step,
                                                    vouch::TokenWindows windows) {
  vouch::select_windows_kernel(tokens, batch, step, windows);
}
extern "C" __global__ void vouch_select_windows_f64(const void* tokens, unsigned* batch,
                                                    const long long* step,
                                                    vouch::TokenWindows windows) {
  vouch::select_windows_kernel(tokens, batch, step, windows);
}

// `clip` is null without gradient clipping, else vouch_grad_norm_<t>'s output.
extern "C" __global__ void vouch_optimizer_f32(const vouch::ParamSlot<float>* slots,
                                               int num_params, long long* step,
                                               vouch::OptimizerHyper hyper, const double* clip,
                                               const float* loss, float* ring,
                                               long long capacity, unsigned* done) {
  vouch::optimizer_kernel<float>(slots, num_params, step, hyper, clip);
  vouch::end_step_after_last_block<float>(loss, ring, step, capacity, done);
}
extern "C" __global__ void vouch_optimizer_f64(const vouch::ParamSlot<double>* slots,
                                               int num_params, long long* step,
                                               vouch::OptimizerHyper hyper, const double* clip,
                                               const double* loss, double* ring,
                                               long long capacity, unsigned* done) {
  vouch::optimizer_kernel<double>(slots, num_params, step, hyper, clip);
  vouch::end_step_after_last_block<double>(loss, ring, step, capacity, done);
}

// f32 only: f64 products are never rounded.
extern "C" __global__ void vouch_round_bf16_f32(const float* in, unsigned short* out,
                                                long long batches, long long rows,
                                                long long cols, long long out_rows,
                                                long long pitch) {
  vouch::round_bf16_kernel(in, out, batches, rows, cols, out_rows, pitch);
}

extern "C" __global__ void vouch_grad_norm_f32(const vouch::ParamSlot<float>* slots,
                                               int num_params, double max_norm, double* out) {
  vouch::grad_norm_kernel<float>(slots, num_params, max_norm, out);
}
extern "C" __global__ void vouch_grad_norm_f64(const vouch::ParamSlot<double>* slots,
                                               int num_params, double max_norm, double* out) {
  vouch::grad_norm_kernel<double>(slots, num_params, max_norm, out);
}

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_EXECUTOR_CUH_
