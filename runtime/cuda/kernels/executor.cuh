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
//   vouch_grad_norm_f32/_f64     grid kGradNormBlocks (a fixed-order reduction, optimizer.cuh)
//   vouch_optimizer_f32/_f64     any grid (the executor's: min(ceil(quads / 256), 2048), one row)
//   vouch_round_bf16_f32,        any grid and block (grid-stride); the executor's: block
//   vouch_repitch_f32            256, grid min(batches * out_rows * ceil(pitch / 1024), 4096)
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

// Four adjacent values stored at once: 16 bytes of f32, 8 of bf16 bits.
template <class Out>
struct Vec4;
template <>
struct Vec4<float> {
  using type = float4;
  static constexpr unsigned long long align = 16;
};
template <>
struct Vec4<unsigned short> {
  using type = ushort4;
  static constexpr unsigned long long align = 8;
};

// A product's operand or output moved between its dense layout and its padded one
// (gemm_call.h's ProductPlan), each value converted by `convert`: `batches` matrices of
// `rows` rows of `cols` values, read at `in_rows` rows of `in_pitch` elements a matrix
// and written at `out_rows` rows of `out_pitch`, every element past rows / cols (the
// pad) zero:
//   out[(b * out_rows + r) * out_pitch + c] = convert(in[(b * in_rows + r) * in_pitch + c]).
// The executor pads a tensor-core product's extents to 16 bytes of operand with zeros:
// an odd extent (GPT-2's 50257 logits) otherwise costs several times the product. Work
// items are (output row, 1024 columns), one per block at a time; a thread moves 4
// adjacent columns: one vector store where the output's pitch and base allow it, its
// loads one 16-byte load where the input's do and the 4 lie inside the row (else 4).
template <class Out, class Convert>
__device__ inline void repitch_rows(const float* in, Out* out, long long batches,
                                    long long rows, long long cols, long long in_rows,
                                    long long in_pitch, long long out_rows,
                                    long long out_pitch, Convert convert) {
  const long long chunks = (out_pitch + 1023) / 1024, items = batches * out_rows * chunks;
  const bool in4 = in_pitch % 4 == 0 && (reinterpret_cast<unsigned long long>(in) & 15) == 0;
  const bool out4 = out_pitch % 4 == 0 &&
                    (reinterpret_cast<unsigned long long>(out) & (Vec4<Out>::align - 1)) == 0;
  for (long long item = blockIdx.x; item < items; item += gridDim.x) {
    const long long row = index_div(item, chunks);  // b * out_rows + r
    const long long c0 = (item - row * chunks) * 1024;
    const long long b = index_div(row, out_rows), r = row - b * out_rows;
    const float* from = r < rows ? in + (b * in_rows + r) * in_pitch : nullptr;  // null: pad
    Out* to = out + row * out_pitch;
    const long long end = out_pitch < c0 + 1024 ? out_pitch : c0 + 1024;
    for (long long c = c0 + 4 * (long long)threadIdx.x; c < end; c += 4 * (long long)blockDim.x) {
      float v[4] = {0.f, 0.f, 0.f, 0.f};
      if (from != nullptr && in4 && c + 4 <= cols) {
        const float4 x = *reinterpret_cast<const float4*>(from + c);
        v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
      } else if (from != nullptr) {
#pragma unroll
        for (int e = 0; e < 4; ++e)
          if (c + e < cols) v[e] = from[c + e];
      }
      Out o[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) o[e] = convert(v[e]);  // convert(0) is 0
      if (out4) {
        typename Vec4<Out>::type q;
        q.x = o[0], q.y = o[1], q.z = o[2], q.w = o[3];
        *reinterpret_cast<typename Vec4<Out>::type*>(to + c) = q;
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e)
          if (c + e < end) to[c + e] = o[e];
      }
    }
  }
}

struct RoundToBf16 {
  __device__ unsigned short operator()(float x) const { return round_to_bf16(x); }
};
struct SameFloat {
  __device__ float operator()(float x) const { return x; }
};

// A bf16 product's operand rounded (round_to_bf16) into the executor's scratch, from
// its dense f32 matrices (ProductPlan's a / b): repitch_rows with in_rows = rows and
// in_pitch = cols, out_rows and pitch the padded ones.
__device__ inline void round_bf16_kernel(const float* in, unsigned short* out, long long batches,
                                         long long rows, long long cols, long long out_rows,
                                         long long pitch) {
  repitch_rows(in, out, batches, rows, cols, rows, cols, out_rows, pitch, RoundToBf16());
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

// A tf32 product's operand copied into the executor's scratch at its padded layout, or
// a padded output copied out of it (ProductPlan's a / b / bias and c).
extern "C" __global__ void vouch_repitch_f32(const float* in, float* out, long long batches,
                                             long long rows, long long cols, long long in_rows,
                                             long long in_pitch, long long out_rows,
                                             long long out_pitch) {
  vouch::repitch_rows(in, out, batches, rows, cols, in_rows, in_pitch, out_rows, out_pitch,
                      vouch::SameFloat());
}

extern "C" __global__ void vouch_grad_norm_f32(const vouch::ParamSlot<float>* slots,
                                               int num_params, double max_norm, double* out,
                                               double* partials, unsigned* ticket) {
  vouch::grad_norm_kernel<float>(slots, num_params, max_norm, out, partials, ticket);
}
extern "C" __global__ void vouch_grad_norm_f64(const vouch::ParamSlot<double>* slots,
                                               int num_params, double max_norm, double* out,
                                               double* partials, unsigned* ticket) {
  vouch::grad_norm_kernel<double>(slots, num_params, max_norm, out, partials, ticket);
}

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_EXECUTOR_CUH_
