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
//   vouch_select_batch_f32/_f64  grid max(1, min(ceil(max(x_elems, y_elems) / 256), 1024))
//   vouch_optimizer_f32/_f64     grid (min(ceil(largest param / 256), 1024), max(params, 1))
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_EXECUTOR_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_EXECUTOR_CUH_

#include "common.cuh"
#include "optimizer.cuh"
#include "param_slot.h"

namespace vouch {

// Batch b = *step % num_batches of the uploaded data set: x <- data_x + b * x_elems,
// y <- data_y + b * y_elems; one grid-stride loop copies both.
template <class T>
__device__ void select_batch_kernel(const T* data_x, const T* data_y, T* x, T* y,
                                    const long long* step, long long num_batches,
                                    long long x_elems, long long y_elems) {
  const long long s = *step;
  const long long b = s - index_div(s, num_batches) * num_batches;
  const T* from_x = data_x + b * x_elems;
  const T* from_y = data_y + b * y_elems;
  const long long n = x_elems > y_elems ? x_elems : y_elems;
  for (long long i = grid_stride_begin(); i < n; i += grid_stride_step()) {
    if (i < x_elems) x[i] = from_x[i];
    if (i < y_elems) y[i] = from_y[i];
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

}  // namespace vouch

extern "C" __global__ void vouch_select_batch_f32(const float* data_x, const float* data_y,
                                                  float* x, float* y, const long long* step,
                                                  long long num_batches, long long x_elems,
                                                  long long y_elems) {
  vouch::select_batch_kernel<float>(data_x, data_y, x, y, step, num_batches, x_elems, y_elems);
}
extern "C" __global__ void vouch_select_batch_f64(const double* data_x, const double* data_y,
                                                  double* x, double* y, const long long* step,
                                                  long long num_batches, long long x_elems,
                                                  long long y_elems) {
  vouch::select_batch_kernel<double>(data_x, data_y, x, y, step, num_batches, x_elems, y_elems);
}

extern "C" __global__ void vouch_optimizer_f32(const vouch::ParamSlot<float>* slots,
                                               int num_params, long long* step, int kind,
                                               double lr, double beta1, double beta2,
                                               double eps, double weight_decay,
                                               double momentum, const float* loss, float* ring,
                                               long long capacity, unsigned* done) {
  vouch::optimizer_kernel<float>(slots, num_params, step, kind, lr, beta1, beta2, eps,
                                 weight_decay, momentum);
  vouch::end_step_after_last_block<float>(loss, ring, step, capacity, done);
}
extern "C" __global__ void vouch_optimizer_f64(const vouch::ParamSlot<double>* slots,
                                               int num_params, long long* step, int kind,
                                               double lr, double beta1, double beta2,
                                               double eps, double weight_decay,
                                               double momentum, const double* loss,
                                               double* ring, long long capacity,
                                               unsigned* done) {
  vouch::optimizer_kernel<double>(slots, num_params, step, kind, lr, beta1, beta2, eps,
                                  weight_decay, momentum);
  vouch::end_step_after_last_block<double>(loss, ring, step, capacity, done);
}

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_EXECUTOR_CUH_
