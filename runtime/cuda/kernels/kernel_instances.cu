// kernel_instances.cu: every template of the kernel library instantiated for float and
// double exactly as codegen emits them: a generated functor per pointwise chain and
// small `extern "C"` entry points, after one include of each header.
//
// Why a file of its own: it is the contract test of the headers. nvcc_compile_test
// compiles it with nvcc (as an object and as PTX, checking every entry point),
// nvrtc_compile_test with NVRTC under codegen's options (the headers given by name),
// and kernel_lab.cu includes it, so the lab runs these very entry points.
// Symbols are `lab_<what>_f32` / `_f64`, plus executor.cuh's static `vouch_*` ones.
#include "attention.cuh"
#include "attention64.cuh"
#include "batchnorm.cuh"
#include "cast.cuh"
#include "classifier.cuh"
#include "concat.cuh"
#include "conv.cuh"
#include "embedding.cuh"
#include "executor.cuh"
#include "gather.cuh"
#include "index.cuh"
#include "layernorm.cuh"
#include "loss.cuh"
#include "mask.cuh"
#include "matmul.cuh"
#include "pointwise.cuh"
#include "pool.cuh"
#include "random.cuh"
#include "reduce.cuh"
#include "slice.cuh"
#include "softmax.cuh"

// ------------------------------------------------------------ pointwise (generated)

// NIn = 0, NOut = 1: a constant fill.
struct lab_fill_op {
  template <class T>
  __device__ void operator()(const T* a, T* r) const {
    r[0] = T(0.5);
  }
};
// NIn = 1, NOut = 1: relu.
struct lab_relu_op {
  template <class T>
  __device__ void operator()(const T* a, T* r) const {
    r[0] = (a[0] > T(0) ? a[0] : T(0));
  }
};
// NIn = 2, NOut = 1: add then relu (the brief's example).
struct lab_add_relu_op {
  template <class T>
  __device__ void operator()(const T* a, T* r) const {
    const T t0 = (a[0] + a[1]);
    r[0] = (t0 > T(0) ? t0 : T(0));
  }
};
// NIn = 2, NOut = 2: two results of one chain.
struct lab_mul_sub_op {
  template <class T>
  __device__ void operator()(const T* a, T* r) const {
    r[0] = (a[0] * a[1]);
    r[1] = (a[0] - a[1]);
  }
};
// NIn = 3, NOut = 1: the mse gradient's chain, sub, scale, mul by a rank-0 seed
// (a[2], a scalar input: bit 2 of scalar_mask).
struct lab_sub_scale_mul_op {
  template <class T>
  __device__ void operator()(const T* a, T* r) const {
    const T t0 = (a[0] - a[1]);
    const T t1 = (t0 * T(0.125));
    r[0] = (t1 * a[2]);
  }
};
// NIn = 1, NOut = 1: a math library call on T (the float / double overloads).
struct lab_tanh_op {
  template <class T>
  __device__ void operator()(const T* a, T* r) const {
    r[0] = tanh(a[0]);
  }
};

extern "C" __global__ void lab_fill_f32(float* o0, long long n, unsigned long long scalar_mask) {
  float* out[] = {o0};
  vouch::pointwise_kernel<1, 0>(lab_fill_op{}, out, nullptr, n, scalar_mask);
}
extern "C" __global__ void lab_fill_f64(double* o0, long long n, unsigned long long scalar_mask) {
  double* out[] = {o0};
  vouch::pointwise_kernel<1, 0>(lab_fill_op{}, out, nullptr, n, scalar_mask);
}
extern "C" __global__ void lab_relu_f32(float* o0, const float* i0, long long n,
                                        unsigned long long scalar_mask) {
  float* out[] = {o0};
  const float* in[] = {i0};
  vouch::pointwise_kernel<1, 1>(lab_relu_op{}, out, in, n, scalar_mask);
}
extern "C" __global__ void lab_relu_f64(double* o0, const double* i0, long long n,
                                        unsigned long long scalar_mask) {
  double* out[] = {o0};
  const double* in[] = {i0};
  vouch::pointwise_kernel<1, 1>(lab_relu_op{}, out, in, n, scalar_mask);
}
extern "C" __global__ void lab_add_relu_f32(float* o0, const float* i0, const float* i1,
                                            long long n, unsigned long long scalar_mask) {
  float* out[] = {o0};
  const float* in[] = {i0, i1};
  vouch::pointwise_kernel<1, 2>(lab_add_relu_op{}, out, in, n, scalar_mask);
}
extern "C" __global__ void lab_add_relu_f64(double* o0, const double* i0, const double* i1,
                                            long long n, unsigned long long scalar_mask) {
  double* out[] = {o0};
  const double* in[] = {i0, i1};
  vouch::pointwise_kernel<1, 2>(lab_add_relu_op{}, out, in, n, scalar_mask);
}
extern "C" __global__ void lab_mul_sub_f32(float* o0, float* o1, const float* i0,
                                           const float* i1, long long n,
                                           unsigned long long scalar_mask) {
  float* out[] = {o0, o1};
  const float* in[] = {i0, i1};
  vouch::pointwise_kernel<2, 2>(lab_mul_sub_op{}, out, in, n, scalar_mask);
}
extern "C" __global__ void lab_mul_sub_f64(double* o0, double* o1, const double* i0,
                                           const double* i1, long long n,
                                           unsigned long long scalar_mask) {
  double* out[] = {o0, o1};
  const double* in[] = {i0, i1};
  vouch::pointwise_kernel<2, 2>(lab_mul_sub_op{}, out, in, n, scalar_mask);
}
extern "C" __global__ void lab_sub_scale_mul_f32(float* o0, const float* i0, const float* i1,
                                                 const float* i2, long long n,
                                                 unsigned long long scalar_mask) {
  float* out[] = {o0};
  const float* in[] = {i0, i1, i2};
  vouch::pointwise_kernel<1, 3>(lab_sub_scale_mul_op{}, out, in, n, scalar_mask);
}
extern "C" __global__ void lab_sub_scale_mul_f64(double* o0, const double* i0,
                                                 const double* i1, const double* i2,
                                                 long long n, unsigned long long scalar_mask) {
  double* out[] = {o0};
  const double* in[] = {i0, i1, i2};
  vouch::pointwise_kernel<1, 3>(lab_sub_scale_mul_op{}, out, in, n, scalar_mask);
}
extern "C" __global__ void lab_tanh_f32(float* o0, const float* i0, long long n,
                                        unsigned long long scalar_mask) {
  float* out[] = {o0};
  const float* in[] = {i0};
  vouch::pointwise_kernel<1, 1>(lab_tanh_op{}, out, in, n, scalar_mask);
}
extern "C" __global__ void lab_tanh_f64(double* o0, const double* i0, long long n,
                                        unsigned long long scalar_mask) {
  double* out[] = {o0};
  const double* in[] = {i0};
  vouch::pointwise_kernel<1, 1>(lab_tanh_op{}, out, in, n, scalar_mask);
}

// ------------------------------------------------------------------------ reductions

extern "C" __global__ void lab_reduce_f32(const float* in, float* out, vouch::Dims kept,
                                          vouch::Dims reduced, long long outputs,
                                          long long count, long long divisor) {
  vouch::reduce_sum_kernel<float>(in, out, kept, reduced, outputs, count, divisor);
}
extern "C" __global__ void lab_reduce_f64(const double* in, double* out, vouch::Dims kept,
                                          vouch::Dims reduced, long long outputs,
                                          long long count, long long divisor) {
  vouch::reduce_sum_kernel<double>(in, out, kept, reduced, outputs, count, divisor);
}
extern "C" __global__ void lab_reduce_extreme_f32(const float* in, float* out,
                                                  vouch::Dims kept, vouch::Dims reduced,
                                                  long long outputs, long long count,
                                                  long long max) {
  vouch::reduce_extreme_kernel<float>(in, out, kept, reduced, outputs, count, max != 0);
}
extern "C" __global__ void lab_reduce_extreme_f64(const double* in, double* out,
                                                  vouch::Dims kept, vouch::Dims reduced,
                                                  long long outputs, long long count,
                                                  long long max) {
  vouch::reduce_extreme_kernel<double>(in, out, kept, reduced, outputs, count, max != 0);
}
extern "C" __global__ void lab_cross_entropy_f32(const float* logits, const int* labels,
                                                 float* out, long long rows, long long classes,
                                                 long long ignore_index, long long pitch) {
  vouch::cross_entropy_kernel<float>(logits, labels, out, rows, classes, ignore_index, pitch);
}
extern "C" __global__ void lab_cross_entropy_f64(const double* logits, const int* labels,
                                                 double* out, long long rows, long long classes,
                                                 long long ignore_index, long long pitch) {
  vouch::cross_entropy_kernel<double>(logits, labels, out, rows, classes, ignore_index, pitch);
}
extern "C" __global__ void lab_cross_entropy_grad_f32(const float* logits, const int* labels,
                                                      const float* dloss, float* dlogits,
                                                      long long rows, long long classes,
                                                      long long ignore_index, long long pitch) {
  vouch::cross_entropy_grad_kernel<float>(logits, labels, dloss, dlogits, rows, classes,
                                          ignore_index, pitch);
}
extern "C" __global__ void lab_cross_entropy_grad_f64(const double* logits, const int* labels,
                                                      const double* dloss, double* dlogits,
                                                      long long rows, long long classes,
                                                      long long ignore_index, long long pitch) {
  vouch::cross_entropy_grad_kernel<double>(logits, labels, dloss, dlogits, rows, classes,
                                           ignore_index, pitch);
}
// dlogits stored as bf16 bits (cross_entropy_grad's bf16 result; f32 only): a block per
// row, and (below) codegen's clusters.
extern "C" __global__ void lab_cross_entropy_grad_bf16_f32(const float* logits, const int* labels,
                                                           const float* dloss,
                                                           unsigned short* dlogits, long long rows,
                                                           long long classes,
                                                           long long ignore_index,
                                                           long long pitch) {
  vouch::cross_entropy_grad_kernel<float>(logits, labels, dloss, dlogits, rows, classes,
                                          ignore_index, pitch);
}
// The long rows through shared memory (softmax.cuh's long_rows_staged), launched by
// one block of 1024 holding the row's chunks in dynamic shared memory (Parts = 1;
// codegen launches the cluster entry points below).
extern "C" __global__ void __launch_bounds__(1024, 1)
    lab_softmax_long_f32(const float* in, float* out, long long outer, long long n,
                         long long take_log) {
  vouch::softmax_kernel<float>(in, out, outer, n, 1, take_log != 0);
}
extern "C" __global__ void __launch_bounds__(1024, 1)
    lab_softmax_long_f64(const double* in, double* out, long long outer, long long n,
                         long long take_log) {
  vouch::softmax_kernel<double>(in, out, outer, n, 1, take_log != 0);
}
extern "C" __global__ void __launch_bounds__(1024, 1)
    lab_cross_entropy_grad_long_f32(const float* logits, const int* labels, const float* dloss,
                                    float* dlogits, long long rows, long long classes,
                                    long long ignore_index, long long pitch) {
  vouch::cross_entropy_grad_kernel<float>(logits, labels, dloss, dlogits, rows, classes,
                                          ignore_index, pitch);
}
extern "C" __global__ void __launch_bounds__(1024, 1)
    lab_cross_entropy_grad_long_f64(const double* logits, const int* labels,
                                    const double* dloss, double* dlogits, long long rows,
                                    long long classes, long long ignore_index, long long pitch) {
  vouch::cross_entropy_grad_kernel<double>(logits, labels, dloss, dlogits, rows, classes,
                                           ignore_index, pitch);
}
// The same staged by a cluster of two blocks of 512, half a row each (Parts = 2).
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(512, 2)
    lab_softmax_cluster_f32(const float* in, float* out, long long outer, long long n,
                            long long take_log) {
  vouch::softmax_kernel<float, 0, 0, 2>(in, out, outer, n, 1, take_log != 0);
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(512, 2)
    lab_softmax_cluster_f64(const double* in, double* out, long long outer, long long n,
                            long long take_log) {
  vouch::softmax_kernel<double, 0, 0, 2>(in, out, outer, n, 1, take_log != 0);
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(512, 2)
    lab_masked_softmax_cluster_f32(const float* in, const int* mask, vouch::Dims mask_dims,
                                   float* out, long long outer, long long n) {
  vouch::masked_softmax_kernel<float, 0, 0, 2>(in, mask, mask_dims, out, outer, n, 1);
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(512, 2)
    lab_masked_softmax_cluster_f64(const double* in, const int* mask, vouch::Dims mask_dims,
                                   double* out, long long outer, long long n) {
  vouch::masked_softmax_kernel<double, 0, 0, 2>(in, mask, mask_dims, out, outer, n, 1);
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(512, 2)
    lab_cross_entropy_grad_cluster_f32(const float* logits, const int* labels,
                                       const float* dloss, float* dlogits, long long rows,
                                       long long classes, long long ignore_index, long long pitch) {
  vouch::cross_entropy_grad_kernel<float, 2>(logits, labels, dloss, dlogits, rows, classes,
                                             ignore_index, pitch);
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(512, 2)
    lab_cross_entropy_grad_cluster_bf16_f32(const float* logits, const int* labels,
                                            const float* dloss, unsigned short* dlogits,
                                            long long rows, long long classes,
                                            long long ignore_index, long long pitch) {
  vouch::cross_entropy_grad_kernel<float, 2>(logits, labels, dloss, dlogits, rows, classes,
                                             ignore_index, pitch);
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(512, 2)
    lab_cross_entropy_grad_cluster_f64(const double* logits, const int* labels,
                                       const double* dloss, double* dlogits, long long rows,
                                       long long classes, long long ignore_index, long long pitch) {
  vouch::cross_entropy_grad_kernel<double, 2>(logits, labels, dloss, dlogits, rows, classes,
                                              ignore_index, pitch);
}
extern "C" __global__ void lab_column_sum_f32(const float* in, float* out, long long rows,
                                              long long cols, long long divisor,
                                              float* partials, unsigned* arrivals) {
  vouch::column_sum_kernel<float>(in, out, rows, cols, divisor, partials, arrivals);
}
extern "C" __global__ void lab_column_sum_f64(const double* in, double* out, long long rows,
                                              long long cols, long long divisor,
                                              double* partials, unsigned* arrivals) {
  vouch::column_sum_kernel<double>(in, out, rows, cols, divisor, partials, arrivals);
}

// ---------------------------------------------------------------------- normalizations

// The normalizations' entry points take the row length at run time, so the lab's
// instantiate the register path for a few (G, P) and run the smallest that holds the
// row (codegen instantiates exactly row_group_for / row_slots_for; a larger P is
// correct, row_fits, only slower): every path the generated code can take is checked,
// the warp's and the block's, vectors and not, while the lab still compiles in
// minutes (each instantiation is a few more).
template <int G, int P>
struct RowShape {
  static constexpr int kG = G, kP = P;
};
template <class F>
__device__ void with_row_shape(long long n, long long inner, F f) {
  if (inner == 1 && blockDim.x == 256) {
    const int g = vouch::row_group_for(n), p = vouch::row_slots_for(n);
    if (g == 32) {
      if (p <= 8) return f(RowShape<32, 8>());
      return f(RowShape<32, 32>());
    }
    if (g == 256) return f(RowShape<256, 16>());
  }
  f(RowShape<0, 0>());
}
#define LAB_ROWS(n, inner, CALL) \
  with_row_shape(n, inner, [&](auto shape) { constexpr int G = decltype(shape)::kG, P = decltype(shape)::kP; CALL; })

extern "C" __global__ void lab_softmax_f32(const float* in, float* out, long long outer,
                                           long long n, long long inner, long long take_log) {
  LAB_ROWS(n, inner, (vouch::softmax_kernel<float, G, P>(in, out, outer, n, inner, take_log != 0)));
}
extern "C" __global__ void lab_softmax_f64(const double* in, double* out, long long outer,
                                           long long n, long long inner, long long take_log) {
  LAB_ROWS(n, inner, (vouch::softmax_kernel<double, G, P>(in, out, outer, n, inner, take_log != 0)));
}
extern "C" __global__ void lab_masked_softmax_f32(const float* in, const int* mask,
                                                  vouch::Dims mask_dims, float* out,
                                                  long long outer, long long n,
                                                  long long inner) {
  LAB_ROWS(n, inner,
           (vouch::masked_softmax_kernel<float, G, P>(in, mask, mask_dims, out, outer, n, inner)));
}
extern "C" __global__ void lab_masked_softmax_f64(const double* in, const int* mask,
                                                  vouch::Dims mask_dims, double* out,
                                                  long long outer, long long n,
                                                  long long inner) {
  LAB_ROWS(n, inner,
           (vouch::masked_softmax_kernel<double, G, P>(in, mask, mask_dims, out, outer, n, inner)));
}
extern "C" __global__ void lab_softmax_grad_f32(const float* grad, const float* output,
                                                float* out, long long outer, long long n,
                                                long long inner, long long take_log) {
  LAB_ROWS(n, inner, (vouch::softmax_grad_kernel<float, G, P>(grad, output, out, outer, n, inner,
                                                             take_log != 0)));
}
extern "C" __global__ void lab_softmax_grad_f64(const double* grad, const double* output,
                                                double* out, long long outer, long long n,
                                                long long inner, long long take_log) {
  LAB_ROWS(n, inner, (vouch::softmax_grad_kernel<double, G, P>(grad, output, out, outer, n, inner,
                                                              take_log != 0)));
}
extern "C" __global__ void lab_layer_norm_f32(const float* x, const float* weight,
                                              const float* bias, const float* addend, float* y,
                                              float* sum, long long rows, long long d,
                                              double eps) {
  LAB_ROWS(d, 1, (vouch::layer_norm_kernel<float, G, P>(x, weight, bias, addend, y, sum, rows, d,
                                                     eps)));
}
// y stored as bf16 bits (layer_norm's bf16 result; f32 only).
extern "C" __global__ void lab_layer_norm_bf16_f32(const float* x, const float* weight,
                                                   const float* bias, const float* addend,
                                                   unsigned short* y, float* sum, long long rows,
                                                   long long d, double eps) {
  LAB_ROWS(d, 1, (vouch::layer_norm_kernel<float, G, P, unsigned short>(x, weight, bias, addend,
                                                                       y, sum, rows, d, eps)));
}
extern "C" __global__ void lab_layer_norm_f64(const double* x, const double* weight,
                                              const double* bias, const double* addend, double* y,
                                              double* sum, long long rows, long long d,
                                              double eps) {
  LAB_ROWS(d, 1, (vouch::layer_norm_kernel<double, G, P>(x, weight, bias, addend, y, sum, rows, d,
                                                     eps)));
}
extern "C" __global__ void lab_layer_norm_grad_f32(const float* grad, const float* x,
                                                   const float* weight, const float* addend, float* dx,
                                                   float* dweight, float* dbias,
                                                   long long rows, long long d, double eps,
                                                   float* partials, unsigned* arrivals) {
  LAB_ROWS(d, 1, (vouch::layer_norm_grad_kernel<float, G, P>(grad, x, weight, addend, dx, dweight, dbias,
                                                            rows, d, eps, partials, arrivals)));
}
extern "C" __global__ void lab_layer_norm_grad_f64(const double* grad, const double* x,
                                                   const double* weight, const double* addend, double* dx,
                                                   double* dweight, double* dbias,
                                                   long long rows, long long d, double eps,
                                                   double* partials, unsigned* arrivals) {
  LAB_ROWS(d, 1, (vouch::layer_norm_grad_kernel<double, G, P>(grad, x, weight, addend, dx, dweight, dbias,
                                                             rows, d, eps, partials, arrivals)));
}
// The same with the column sums in dynamic shared memory (SharedSums).
extern "C" __global__ void lab_layer_norm_grad_shared_f32(const float* grad, const float* x,
                                                   const float* weight, const float* addend, float* dx,
                                                   float* dweight, float* dbias,
                                                   long long rows, long long d, double eps,
                                                   float* partials, unsigned* arrivals) {
  LAB_ROWS(d, 1, (vouch::layer_norm_grad_kernel<float, G, P, true>(grad, x, weight, addend, dx, dweight, dbias,
                                                            rows, d, eps, partials, arrivals)));
}
// dx's bf16 twin stored beside it (layer_norm_grad's bf16Twin, f32 only), on the
// general / register path and on codegen's SharedSums launch.
extern "C" __global__ void lab_layer_norm_grad_twin_f32(const float* grad, const float* x,
                                                 const float* weight, const float* addend,
                                                 float* dx, float* dweight, float* dbias,
                                                 long long rows, long long d, double eps,
                                                 float* partials, unsigned* arrivals,
                                                 unsigned short* dx_bf16) {
  LAB_ROWS(d, 1, (vouch::layer_norm_grad_kernel<float, G, P>(grad, x, weight, addend, dx, dweight,
                                                      dbias, rows, d, eps, partials, arrivals,
                                                      dx_bf16)));
}
extern "C" __global__ void lab_layer_norm_grad_shared_twin_f32(
    const float* grad, const float* x, const float* weight, const float* addend, float* dx,
    float* dweight, float* dbias, long long rows, long long d, double eps, float* partials,
    unsigned* arrivals, unsigned short* dx_bf16) {
  LAB_ROWS(d, 1, (vouch::layer_norm_grad_kernel<float, G, P, true>(grad, x, weight, addend, dx,
                                                            dweight, dbias, rows, d, eps,
                                                            partials, arrivals, dx_bf16)));
}
extern "C" __global__ void lab_layer_norm_grad_shared_f64(const double* grad, const double* x,
                                                   const double* weight, const double* addend, double* dx,
                                                   double* dweight, double* dbias,
                                                   long long rows, long long d, double eps,
                                                   double* partials, unsigned* arrivals) {
  LAB_ROWS(d, 1, (vouch::layer_norm_grad_kernel<double, G, P, true>(grad, x, weight, addend, dx, dweight, dbias,
                                                             rows, d, eps, partials, arrivals)));
}

// ------------------------------------------------------------------------ batch norm

// A channel per block (Parts = 1) and per cluster of 8 blocks (as codegen launches
// channels of many elements), blocks of kBatchNormThreads.
extern "C" __global__ void __launch_bounds__(512) lab_batch_norm_f32(
    const float* x, const float* weight, const float* bias, float* running_mean, float* running_var,
    float* y, float* mean, float* rstd, long long n, long long channels, long long spatial,
    double eps, double momentum, const long long* ctx) {
  vouch::batch_norm_kernel<float, 1>(x, weight, bias, running_mean, running_var, y, mean,
                                       rstd, n, channels, spatial, eps, momentum, ctx);
}
extern "C" __global__ void __launch_bounds__(512) lab_batch_norm_grad_f32(
    const float* grad, const float* x, const float* mean, const float* rstd, const float* weight,
    float* dx, float* dweight, float* dbias, long long n, long long channels, long long spatial) {
  vouch::batch_norm_grad_kernel<float, 1>(grad, x, mean, rstd, weight, dx, dweight, dbias,
                                            n, channels, spatial);
}
extern "C" __global__ void __launch_bounds__(512) lab_batch_norm_f64(
    const double* x, const double* weight, const double* bias, double* running_mean, double* running_var,
    double* y, double* mean, double* rstd, long long n, long long channels, long long spatial,
    double eps, double momentum, const long long* ctx) {
  vouch::batch_norm_kernel<double, 1>(x, weight, bias, running_mean, running_var, y, mean,
                                       rstd, n, channels, spatial, eps, momentum, ctx);
}
extern "C" __global__ void __launch_bounds__(512) lab_batch_norm_grad_f64(
    const double* grad, const double* x, const double* mean, const double* rstd, const double* weight,
    double* dx, double* dweight, double* dbias, long long n, long long channels, long long spatial) {
  vouch::batch_norm_grad_kernel<double, 1>(grad, x, mean, rstd, weight, dx, dweight, dbias,
                                            n, channels, spatial);
}
extern "C" __global__ void __cluster_dims__(8, 1, 1) __launch_bounds__(512) lab_batch_norm_cluster_f32(
    const float* x, const float* weight, const float* bias, float* running_mean, float* running_var,
    float* y, float* mean, float* rstd, long long n, long long channels, long long spatial,
    double eps, double momentum, const long long* ctx) {
  vouch::batch_norm_kernel<float, 8>(x, weight, bias, running_mean, running_var, y, mean,
                                       rstd, n, channels, spatial, eps, momentum, ctx);
}
extern "C" __global__ void __cluster_dims__(8, 1, 1) __launch_bounds__(512) lab_batch_norm_grad_cluster_f32(
    const float* grad, const float* x, const float* mean, const float* rstd, const float* weight,
    float* dx, float* dweight, float* dbias, long long n, long long channels, long long spatial) {
  vouch::batch_norm_grad_kernel<float, 8>(grad, x, mean, rstd, weight, dx, dweight, dbias,
                                            n, channels, spatial);
}
extern "C" __global__ void __cluster_dims__(8, 1, 1) __launch_bounds__(512) lab_batch_norm_cluster_f64(
    const double* x, const double* weight, const double* bias, double* running_mean, double* running_var,
    double* y, double* mean, double* rstd, long long n, long long channels, long long spatial,
    double eps, double momentum, const long long* ctx) {
  vouch::batch_norm_kernel<double, 8>(x, weight, bias, running_mean, running_var, y, mean,
                                       rstd, n, channels, spatial, eps, momentum, ctx);
}
extern "C" __global__ void __cluster_dims__(8, 1, 1) __launch_bounds__(512) lab_batch_norm_grad_cluster_f64(
    const double* grad, const double* x, const double* mean, const double* rstd, const double* weight,
    double* dx, double* dweight, double* dbias, long long n, long long channels, long long spatial) {
  vouch::batch_norm_grad_kernel<double, 8>(grad, x, mean, rstd, weight, dx, dweight, dbias,
                                            n, channels, spatial);
}

// ------------------------------------------------------------------------------ loss

extern "C" __global__ void lab_mse_loss_f32(const float* pred, const float* target, float* out,
                                            long long n) {
  vouch::mse_loss_kernel<float>(pred, target, out, n);
}
extern "C" __global__ void lab_mse_loss_f64(const double* pred, const double* target,
                                            double* out, long long n) {
  vouch::mse_loss_kernel<double>(pred, target, out, n);
}

// ---------------------------------------------------------------------- small products

extern "C" __global__ void lab_small_product_f32(const float* a, const float* b, float* c,
                                                 long long batch, long long m, long long n,
                                                 long long k, long long stride_a,
                                                 long long stride_b, long long trans_a,
                                                 long long trans_b) {
  vouch::small_product_kernel<float>(a, b, c, batch, m, n, k, stride_a, stride_b, trans_a,
                                     trans_b);
}
extern "C" __global__ void lab_small_product_f64(const double* a, const double* b, double* c,
                                                 long long batch, long long m, long long n,
                                                 long long k, long long stride_a,
                                                 long long stride_b, long long trans_a,
                                                 long long trans_b) {
  vouch::small_product_kernel<double>(a, b, c, batch, m, n, k, stride_a, stride_b, trans_a,
                                      trans_b);
}
extern "C" __global__ void lab_small_linear_f32(const float* x, const float* w,
                                                const float* bias, float* y, long long m,
                                                long long n, long long k) {
  vouch::small_linear_kernel<float>(x, w, bias, y, m, n, k);
}
extern "C" __global__ void lab_small_linear_f64(const double* x, const double* w,
                                                const double* bias, double* y, long long m,
                                                long long n, long long k) {
  vouch::small_linear_kernel<double>(x, w, bias, y, m, n, k);
}

// ------------------------------------------------------------ broadcast and permute

extern "C" __global__ void lab_gather_f32(const float* in, float* out, vouch::Dims map,
                                          long long n) {
  vouch::gather_kernel<float>(in, out, map, n);
}
extern "C" __global__ void lab_gather_f64(const double* in, double* out, vouch::Dims map,
                                          long long n) {
  vouch::gather_kernel<double>(in, out, map, n);
}
extern "C" __global__ void lab_gather_quads_f32(const float* in, float* out, vouch::Dims map,
                                                long long quads) {
  vouch::gather_quads_kernel<float>(in, out, map, quads);
}
extern "C" __global__ void lab_gather_quads_f64(const double* in, double* out,
                                                vouch::Dims map, long long quads) {
  vouch::gather_quads_kernel<double>(in, out, map, quads);
}

// ------------------------------------------------------------ gelu (gelu.cuh)

// A chain ending in vouch.round_bf16, as codegen emits it: relu's result stored as f32
// (o0) and as bf16 (o1, Bf16Out bit 1).
struct lab_relu_round_bf16_op {
  template <class T> __device__ void operator()(const T* a, T* r) const {
    const T t0 = (a[0] > T(0) ? a[0] : T(0));
    r[0] = t0;
    r[1] = t0;
  }
};
extern "C" __global__ void lab_relu_round_bf16_f32(float* o0, unsigned short* o1,
                                                   const float* i0, long long n,
                                                   unsigned long long scalar_mask) {
  float* out[] = {o0, reinterpret_cast<float*>(o1)};
  const float* in[] = {i0};
  vouch::pointwise_kernel<2, 1, 0x2ull>(lab_relu_round_bf16_op{}, out, in, n, scalar_mask);
}

// NIn = 1, NOut = 4: gelu's helpers as the pointwise functors call them.
struct lab_gelu_op {
  template <class T>
  __device__ void operator()(const T* a, T* r) const {
    r[0] = vouch::gelu_tanh(a[0]);
    r[1] = vouch::gelu_erf(a[0]);
    r[2] = vouch::gelu_tanh_grad(a[0]);
    r[3] = vouch::gelu_erf_grad(a[0]);
  }
};
extern "C" __global__ void lab_gelu_f32(float* o0, float* o1, float* o2, float* o3,
                                        const float* i0, long long n,
                                        unsigned long long scalar_mask) {
  float* out[] = {o0, o1, o2, o3};
  const float* in[] = {i0};
  vouch::pointwise_kernel<4, 1>(lab_gelu_op{}, out, in, n, scalar_mask);
}
extern "C" __global__ void lab_gelu_f64(double* o0, double* o1, double* o2, double* o3,
                                        const double* i0, long long n,
                                        unsigned long long scalar_mask) {
  double* out[] = {o0, o1, o2, o3};
  const double* in[] = {i0};
  vouch::pointwise_kernel<4, 1>(lab_gelu_op{}, out, in, n, scalar_mask);
}
// gelu's arithmetic without tanh / erf (whose insides are CUDA's): u = gelu_tanh_inner(x)
// and gelu_outer(x, t). The kernel lab compares them bit for bit with a cpu loop that
// rounds every step; an FMA anywhere would change some of the bits.
extern "C" __global__ void lab_gelu_arith_f32(const float* x, const float* t, float* inner,
                                              float* outer, long long n) {
  for (long long i = vouch::grid_stride_begin(); i < n; i += vouch::grid_stride_step()) {
    inner[i] = vouch::gelu_tanh_inner(x[i]);
    outer[i] = vouch::gelu_outer(x[i], t[i]);
  }
}
extern "C" __global__ void lab_gelu_arith_f64(const double* x, const double* t,
                                              double* inner, double* outer, long long n) {
  for (long long i = vouch::grid_stride_begin(); i < n; i += vouch::grid_stride_step()) {
    inner[i] = vouch::gelu_tanh_inner(x[i]);
    outer[i] = vouch::gelu_outer(x[i], t[i]);
  }
}

// ------------------------------------------------------------ slice, slice_scatter, concat

extern "C" __global__ void lab_slice_f32(const float* in, float* out, long long outer,
                                         long long n, long long inner, long long start,
                                         long long step, long long m) {
  vouch::slice_kernel<float>(in, out, outer, n, inner, start, step, m);
}
extern "C" __global__ void lab_slice_f64(const double* in, double* out, long long outer,
                                         long long n, long long inner, long long start,
                                         long long step, long long m) {
  vouch::slice_kernel<double>(in, out, outer, n, inner, start, step, m);
}
extern "C" __global__ void lab_slice_scatter_f32(const float* in, float* out, long long outer,
                                                 long long n, long long inner,
                                                 long long start, long long step,
                                                 long long m) {
  vouch::slice_scatter_kernel<float>(in, out, outer, n, inner, start, step, m);
}
extern "C" __global__ void lab_slice_scatter_f64(const double* in, double* out,
                                                 long long outer, long long n,
                                                 long long inner, long long start,
                                                 long long step, long long m) {
  vouch::slice_scatter_kernel<double>(in, out, outer, n, inner, start, step, m);
}
extern "C" __global__ void lab_slice_quads_f32(const float* in, float* out, long long outer,
                                               long long n, long long inner, long long start,
                                               long long step, long long m) {
  vouch::slice_quads_kernel<float>(in, out, outer, n, inner, start, step, m);
}
extern "C" __global__ void lab_slice_quads_f64(const double* in, double* out, long long outer,
                                               long long n, long long inner, long long start,
                                               long long step, long long m) {
  vouch::slice_quads_kernel<double>(in, out, outer, n, inner, start, step, m);
}
// Three inputs, as codegen emits concat([a, b, c], axis).
extern "C" __global__ void lab_concat3_f32(float* out, const float* i0, const float* i1,
                                           const float* i2, long long e0, long long e1,
                                           long long e2, long long outer, long long n,
                                           long long inner) {
  const float* in[] = {i0, i1, i2};
  const long long extent[] = {e0, e1, e2};
  vouch::concat_kernel<3>(out, in, extent, outer, n, inner);
}
extern "C" __global__ void lab_concat3_f64(double* out, const double* i0, const double* i1,
                                           const double* i2, long long e0, long long e1,
                                           long long e2, long long outer, long long n,
                                           long long inner) {
  const double* in[] = {i0, i1, i2};
  const long long extent[] = {e0, e1, e2};
  vouch::concat_kernel<3>(out, in, extent, outer, n, inner);
}
extern "C" __global__ void lab_concat3_quads_f32(float* out, const float* i0, const float* i1,
                                                 const float* i2, long long e0, long long e1,
                                                 long long e2, long long outer, long long n,
                                                 long long inner) {
  const float* in[] = {i0, i1, i2};
  const long long extent[] = {e0, e1, e2};
  vouch::concat_quads_kernel<3>(out, in, extent, outer, n, inner);
}
extern "C" __global__ void lab_concat3_quads_f64(double* out, const double* i0,
                                                 const double* i1, const double* i2,
                                                 long long e0, long long e1, long long e2,
                                                 long long outer, long long n,
                                                 long long inner) {
  const double* in[] = {i0, i1, i2};
  const long long extent[] = {e0, e1, e2};
  vouch::concat_quads_kernel<3>(out, in, extent, outer, n, inner);
}

// ------------------------------------------------------------ im2col, col2im (conv)

// The geometry as codegen passes it (codegen/recipes/ConvRecipe.cpp): 21 integers in
// conv_geometry.h's field order.
#define LAB_CONV_PARAMS                                                                    \
  long long n, long long c, long long g, long long s0, long long s1, long long s2,         \
      long long g0, long long g1, long long g2, long long k0, long long k1, long long k2,  \
      long long t0, long long t1, long long t2, long long p0, long long p1, long long p2,  \
      long long d0, long long d1, long long d2
#define LAB_CONV_GEOMETRY                                                                  \
  vouch::ConvGeometry {                                                                   \
    n, c, g, {s0, s1, s2}, {g0, g1, g2}, {k0, k1, k2}, {t0, t1, t2}, {p0, p1, p2}, {d0, d1, d2} \
  }
extern "C" __global__ void lab_im2col_f32(const float* image, float* columns, LAB_CONV_PARAMS) {
  vouch::im2col_kernel<float>(image, columns, LAB_CONV_GEOMETRY);
}
extern "C" __global__ void lab_col2im_f32(const float* columns, float* image, LAB_CONV_PARAMS) {
  vouch::col2im_kernel<float>(columns, image, LAB_CONV_GEOMETRY);
}
extern "C" __global__ void lab_im2col_f64(const double* image, double* columns, LAB_CONV_PARAMS) {
  vouch::im2col_kernel<double>(image, columns, LAB_CONV_GEOMETRY);
}
extern "C" __global__ void lab_col2im_f64(const double* columns, double* image, LAB_CONV_PARAMS) {
  vouch::col2im_kernel<double>(columns, image, LAB_CONV_GEOMETRY);
}

// ------------------------------------------------------------ embedding, gather, scatter_add

extern "C" __global__ void lab_embedding_f32(const int* ids, const float* table, float* out,
                                           long long positions, long long V, long long D) {
  vouch::embedding_kernel<float>(ids, table, out, positions, V, D);
}
extern "C" __global__ void lab_embedding_grad_f32(const int* ids, const float* dy, float* out,
                                                long long positions, long long V,
                                                long long D) {
  vouch::embedding_grad_kernel<float>(ids, dy, out, positions, V, D);
}
extern "C" __global__ void lab_gather_axis_f32(const float* in, const int* index, float* out,
                                             long long outer, long long n, long long m,
                                             long long inner) {
  vouch::gather_axis_kernel<float>(in, index, out, outer, n, m, inner);
}
extern "C" __global__ void lab_scatter_add_axis_f32(const float* in, const int* index,
                                                  const float* src, float* out, long long outer,
                                                  long long n, long long m,
                                                  long long inner) {
  vouch::scatter_add_axis_kernel<float>(in, index, src, out, outer, n, m, inner);
}

extern "C" __global__ void lab_embedding_f64(const int* ids, const double* table, double* out,
                                           long long positions, long long V, long long D) {
  vouch::embedding_kernel<double>(ids, table, out, positions, V, D);
}
extern "C" __global__ void lab_embedding_grad_f64(const int* ids, const double* dy, double* out,
                                                long long positions, long long V,
                                                long long D) {
  vouch::embedding_grad_kernel<double>(ids, dy, out, positions, V, D);
}
extern "C" __global__ void lab_gather_axis_f64(const double* in, const int* index, double* out,
                                             long long outer, long long n, long long m,
                                             long long inner) {
  vouch::gather_axis_kernel<double>(in, index, out, outer, n, m, inner);
}
extern "C" __global__ void lab_scatter_add_axis_f64(const double* in, const int* index,
                                                  const double* src, double* out, long long outer,
                                                  long long n, long long m,
                                                  long long inner) {
  vouch::scatter_add_axis_kernel<double>(in, index, src, out, outer, n, m, inner);
}

// ------------------------------------------------------------ random ops (counter_rng.h)

extern "C" __global__ void lab_dropout_f32(const float* x, float* y, long long n, double p,
                                           const long long* ctx, long long ordinal) {
  vouch::dropout_kernel<float>(x, y, n, p, ctx, ordinal);
}
extern "C" __global__ void lab_dropout_f64(const double* x, double* y, long long n, double p,
                                           const long long* ctx, long long ordinal) {
  vouch::dropout_kernel<double>(x, y, n, p, ctx, ordinal);
}
extern "C" __global__ void lab_rand_uniform_f32(float* y, long long n, const long long* ctx,
                                                long long ordinal) {
  vouch::rand_uniform_kernel<float>(y, n, ctx, ordinal);
}
extern "C" __global__ void lab_rand_uniform_f64(double* y, long long n, const long long* ctx,
                                                long long ordinal) {
  vouch::rand_uniform_kernel<double>(y, n, ctx, ordinal);
}
extern "C" __global__ void lab_bernoulli_mask_f32(float* y, long long n, double p,
                                                  const long long* ctx, long long ordinal) {
  vouch::bernoulli_mask_kernel<float>(y, n, p, ctx, ordinal);
}
extern "C" __global__ void lab_bernoulli_mask_f64(double* y, long long n, double p,
                                                  const long long* ctx, long long ordinal) {
  vouch::bernoulli_mask_kernel<double>(y, n, p, ctx, ordinal);
}

// ---------------------------------------------------------------------- masks

extern "C" __global__ void lab_causal_mask(int* out, long long rows, long long columns) {
  vouch::causal_mask_kernel(out, rows, columns);
}

// ---------------------------------------------------------------------- conversions

extern "C" __global__ void lab_cast_to_int_f32(const float* in, int* out, long long n) {
  vouch::cast_kernel<float>(in, nullptr, nullptr, out, n);
}
extern "C" __global__ void lab_cast_to_int_f64(const double* in, int* out, long long n) {
  vouch::cast_kernel<double>(in, nullptr, nullptr, out, n);
}
extern "C" __global__ void lab_cast_from_int_f32(const int* in, float* out, long long n) {
  vouch::cast_kernel<float>(nullptr, in, out, nullptr, n);
}
extern "C" __global__ void lab_cast_from_int_f64(const int* in, double* out, long long n) {
  vouch::cast_kernel<double>(nullptr, in, out, nullptr, n);
}

// ---------------------------------------------------------------------- attention

// attention.cuh: the generic instantiations (DV = DK = 4: any D, Dv up to 256) and
// the ones codegen picks for heads of at most 64 features (attention_chunks = 1; f32
// with __launch_bounds__(256, 2): 128 registers, two blocks per SM, no spills).
extern "C" __global__ void lab_attention_forward_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, float* out, vouch::Dims od, float* lse, long long causal,
    double scale) {
  vouch::attention_forward_kernel<float>(q, qd, k, kd, v, vd, mask, md, out, od, lse, causal,
                                        scale);
}
extern "C" __global__ void __launch_bounds__(256, 2) lab_attention_forward_d64_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, float* out, vouch::Dims od, float* lse, long long causal,
    double scale) {
  vouch::attention_forward_kernel<float, 1>(q, qd, k, kd, v, vd, mask, md, out, od, lse, causal,
                                           scale);
}
extern "C" __global__ void lab_attention_delta_f32(const float* dout, vouch::Dims dod,
                                                  const float* out, vouch::Dims od, float* delta) {
  vouch::attention_delta_kernel<float>(dout, dod, out, od, delta);
}
extern "C" __global__ void lab_attention_dkdv_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dk, vouch::Dims dkd, float* dv, vouch::Dims dvd, long long causal,
    double scale) {
  vouch::attention_dkdv_kernel<float>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, dk,
                                     dkd, dv, dvd, causal, scale);
}
extern "C" __global__ void __launch_bounds__(256, 2) lab_attention_dkdv_d64_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dk, vouch::Dims dkd, float* dv, vouch::Dims dvd, long long causal,
    double scale) {
  vouch::attention_dkdv_kernel<float, 1, 1>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta,
                                           dk, dkd, dv, dvd, causal, scale);
}
extern "C" __global__ void lab_attention_dq_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dq, vouch::Dims dqd, long long causal, double scale) {
  vouch::attention_dq_kernel<float>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, dq, dqd,
                                   causal, scale);
}
extern "C" __global__ void __launch_bounds__(256, 2) lab_attention_dq_d64_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dq, vouch::Dims dqd, long long causal, double scale) {
  vouch::attention_dq_kernel<float, 1>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, dq,
                                      dqd, causal, scale);
}
extern "C" __global__ void lab_attention_forward_f64(
    const double* q, vouch::Dims qd, const double* k, vouch::Dims kd, const double* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, double* out, vouch::Dims od, double* lse, long long causal,
    double scale) {
  vouch::attention_forward_kernel<double>(q, qd, k, kd, v, vd, mask, md, out, od, lse, causal,
                                        scale);
}
extern "C" __global__ void lab_attention_forward_d64_f64(
    const double* q, vouch::Dims qd, const double* k, vouch::Dims kd, const double* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, double* out, vouch::Dims od, double* lse, long long causal,
    double scale) {
  vouch::attention_forward_kernel<double, 1>(q, qd, k, kd, v, vd, mask, md, out, od, lse, causal,
                                           scale);
}
extern "C" __global__ void lab_attention_delta_f64(const double* dout, vouch::Dims dod,
                                                  const double* out, vouch::Dims od, double* delta) {
  vouch::attention_delta_kernel<double>(dout, dod, out, od, delta);
}
extern "C" __global__ void lab_attention_dkdv_f64(
    const double* q, vouch::Dims qd, const double* k, vouch::Dims kd, const double* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const double* dout, vouch::Dims dod, const double* lse,
    const double* delta, double* dk, vouch::Dims dkd, double* dv, vouch::Dims dvd, long long causal,
    double scale) {
  vouch::attention_dkdv_kernel<double>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, dk,
                                     dkd, dv, dvd, causal, scale);
}
extern "C" __global__ void lab_attention_dkdv_d64_f64(
    const double* q, vouch::Dims qd, const double* k, vouch::Dims kd, const double* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const double* dout, vouch::Dims dod, const double* lse,
    const double* delta, double* dk, vouch::Dims dkd, double* dv, vouch::Dims dvd, long long causal,
    double scale) {
  vouch::attention_dkdv_kernel<double, 1, 1>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta,
                                           dk, dkd, dv, dvd, causal, scale);
}
extern "C" __global__ void lab_attention_dq_f64(
    const double* q, vouch::Dims qd, const double* k, vouch::Dims kd, const double* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const double* dout, vouch::Dims dod, const double* lse,
    const double* delta, double* dq, vouch::Dims dqd, long long causal, double scale) {
  vouch::attention_dq_kernel<double>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, dq, dqd,
                                   causal, scale);
}
extern "C" __global__ void lab_attention_dq_d64_f64(
    const double* q, vouch::Dims qd, const double* k, vouch::Dims kd, const double* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const double* dout, vouch::Dims dod, const double* lse,
    const double* delta, double* dq, vouch::Dims dqd, long long causal, double scale) {
  vouch::attention_dq_kernel<double, 1>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, dq,
                                      dqd, causal, scale);
}

// attention.cuh's TF32 tensor-core variants (f32 only): the generic instantiations
// (DV = DK = 4) and codegen's d64 ones (attention_chunks = 1, __launch_bounds__(256, 2)).
extern "C" __global__ void lab_attention_forward_tf32_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, float* out, vouch::Dims od, float* lse, long long causal,
    double scale) {
  vouch::attention_forward_tf32_kernel<4>(q, qd, k, kd, v, vd, mask, md, out, od, lse, causal,
                                          scale);
}
extern "C" __global__ void __launch_bounds__(256, 2) lab_attention_forward_tf32_d64_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, float* out, vouch::Dims od, float* lse, long long causal,
    double scale) {
  vouch::attention_forward_tf32_kernel<1>(q, qd, k, kd, v, vd, mask, md, out, od, lse, causal,
                                          scale);
}
extern "C" __global__ void lab_attention_dkdv_tf32_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dk, vouch::Dims dkd, float* dv, vouch::Dims dvd, long long causal,
    double scale) {
  vouch::attention_dkdv_tf32_kernel<4, 4>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta,
                                          dk, dkd, dv, dvd, causal, scale);
}
extern "C" __global__ void __launch_bounds__(256, 2) lab_attention_dkdv_tf32_d64_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dk, vouch::Dims dkd, float* dv, vouch::Dims dvd, long long causal,
    double scale) {
  vouch::attention_dkdv_tf32_kernel<1, 1>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta,
                                          dk, dkd, dv, dvd, causal, scale);
}
extern "C" __global__ void lab_attention_dq_tf32_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dq, vouch::Dims dqd, long long causal, double scale) {
  vouch::attention_dq_tf32_kernel<4>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, dq,
                                     dqd, causal, scale);
}
extern "C" __global__ void __launch_bounds__(256, 2) lab_attention_dq_tf32_d64_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dq, vouch::Dims dqd, long long causal, double scale) {
  vouch::attention_dq_tf32_kernel<1>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, dq,
                                     dqd, causal, scale);
}
// attention.cuh's bf16-product twins (f32 storage, operands rounded to bf16): the generic
// instantiations (DV = DK = 4) and codegen-style d64 ones (__launch_bounds__(256, 2)).
extern "C" __global__ void lab_attention_forward_bf16_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, float* out, vouch::Dims od, float* lse, long long causal,
    double scale) {
  vouch::attention_forward_bf16_kernel<4>(q, qd, k, kd, v, vd, mask, md, out, od, lse, causal,
                                          scale);
}
extern "C" __global__ void __launch_bounds__(256, 2) lab_attention_forward_bf16_d64_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, float* out, vouch::Dims od, float* lse, long long causal,
    double scale) {
  vouch::attention_forward_bf16_kernel<1>(q, qd, k, kd, v, vd, mask, md, out, od, lse, causal,
                                          scale);
}
extern "C" __global__ void lab_attention_dkdv_bf16_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dk, vouch::Dims dkd, float* dv, vouch::Dims dvd, long long causal,
    double scale) {
  vouch::attention_dkdv_bf16_kernel<4, 4>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta,
                                          dk, dkd, dv, dvd, causal, scale);
}
extern "C" __global__ void __launch_bounds__(256, 2) lab_attention_dkdv_bf16_d64_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dk, vouch::Dims dkd, float* dv, vouch::Dims dvd, long long causal,
    double scale) {
  vouch::attention_dkdv_bf16_kernel<1, 1>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta,
                                          dk, dkd, dv, dvd, causal, scale);
}
extern "C" __global__ void lab_attention_dq_bf16_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dq, vouch::Dims dqd, long long causal, double scale) {
  vouch::attention_dq_bf16_kernel<4>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, dq,
                                     dqd, causal, scale);
}
extern "C" __global__ void __launch_bounds__(256, 2) lab_attention_dq_bf16_d64_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dq, vouch::Dims dqd, long long causal, double scale) {
  vouch::attention_dq_bf16_kernel<1>(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, dq,
                                     dqd, causal, scale);
}
// attention64.cuh: the tensor-core kernels for heads of at most 64 features (FlashAttention-2's
// split: a warp per 16 rows, P in registers), TF32 and bf16 products, as codegen emits them.
extern "C" __global__ void __launch_bounds__(128, 2) lab_attention64_forward_tf32_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, float* out, vouch::Dims od, float* lse, long long causal,
    double scale) {
  vouch::attention64_forward_tf32_kernel(q, qd, k, kd, v, vd, mask, md, out, od, lse, causal,
                                         scale);
}
extern "C" __global__ void __launch_bounds__(128, 2) lab_attention64_dkdv_tf32_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dk, vouch::Dims dkd, float* dv, vouch::Dims dvd, long long causal,
    double scale) {
  vouch::attention64_dkdv_tf32_kernel(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, dk,
                                      dkd, dv, dvd, causal, scale);
}
extern "C" __global__ void __launch_bounds__(128, 2) lab_attention64_dq_tf32_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dq, vouch::Dims dqd, long long causal, double scale) {
  vouch::attention64_dq_tf32_kernel(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, dq,
                                    dqd, causal, scale);
}
extern "C" __global__ void __launch_bounds__(128, 2) lab_attention64_forward_bf16_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, float* out, vouch::Dims od, float* lse, long long causal,
    double scale) {
  vouch::attention64_forward_bf16_kernel(q, qd, k, kd, v, vd, mask, md, out, od, lse, causal,
                                         scale);
}
extern "C" __global__ void __launch_bounds__(128, 2) lab_attention64_dkdv_bf16_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dk, vouch::Dims dkd, float* dv, vouch::Dims dvd, long long causal,
    double scale) {
  vouch::attention64_dkdv_bf16_kernel(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, dk,
                                      dkd, dv, dvd, causal, scale);
}
extern "C" __global__ void __launch_bounds__(128, 2) lab_attention64_dq_bf16_f32(
    const float* q, vouch::Dims qd, const float* k, vouch::Dims kd, const float* v, vouch::Dims vd,
    const int* mask, vouch::Dims md, const float* dout, vouch::Dims dod, const float* lse,
    const float* delta, float* dq, vouch::Dims dqd, long long causal, double scale) {
  vouch::attention64_dq_bf16_kernel(q, qd, k, kd, v, vd, mask, md, dout, dod, lse, delta, dq,
                                    dqd, causal, scale);
}

// ------------------------------------------------------------ pooling (pool.cuh)
// As PoolRecipe emits them: the buffers, then pool_shape.h's 16 integers, then
// count_include_pad (avg_pool) or beta (smooth_max_pool).

#define LAB_POOL_SHAPE_PARAMS                                                           \
  long long planes, long long in0, long long in1, long long in2, long long out0,        \
      long long out1, long long out2, long long k0, long long k1, long long k2,         \
      long long s0, long long s1, long long s2, long long p0, long long p1, long long p2
#define LAB_POOL_SHAPE \
  vouch::pool_shape(planes, in0, in1, in2, out0, out1, out2, k0, k1, k2, s0, s1, s2, p0, p1, p2)
#define LAB_POOL_ENTRY_POINTS(T, SUFFIX)                                                    \
  extern "C" __global__ void lab_max_pool##SUFFIX(const T* x, const T* values, T* y,         \
                                                  LAB_POOL_SHAPE_PARAMS) {                   \
    vouch::max_pool_kernel<T>(x, values, y, LAB_POOL_SHAPE);                                 \
  }                                                                                          \
  extern "C" __global__ void lab_max_pool_grad##SUFFIX(const T* dy, const T* x, T* dx,       \
                                                       LAB_POOL_SHAPE_PARAMS) {              \
    vouch::max_pool_grad_kernel<T>(dy, x, dx, LAB_POOL_SHAPE);                               \
  }                                                                                          \
  extern "C" __global__ void lab_avg_pool##SUFFIX(const T* x, T* y, LAB_POOL_SHAPE_PARAMS,   \
                                                  long long count_include_pad) {             \
    vouch::avg_pool_kernel<T>(x, y, LAB_POOL_SHAPE, count_include_pad);                      \
  }                                                                                          \
  extern "C" __global__ void lab_avg_pool_grad##SUFFIX(const T* dy, T* dx,                   \
                                                       LAB_POOL_SHAPE_PARAMS,                \
                                                       long long count_include_pad) {        \
    vouch::avg_pool_grad_kernel<T>(dy, dx, LAB_POOL_SHAPE, count_include_pad);               \
  }                                                                                          \
  extern "C" __global__ void lab_smooth_max_pool##SUFFIX(const T* x, T* y,                   \
                                                         LAB_POOL_SHAPE_PARAMS, double beta) { \
    vouch::smooth_max_pool_kernel<T>(x, y, LAB_POOL_SHAPE, beta);                            \
  }                                                                                          \
  extern "C" __global__ void lab_smooth_max_pool_grad##SUFFIX(                               \
      const T* dy, const T* x, const T* y, T* dx, LAB_POOL_SHAPE_PARAMS, double beta) {      \
    vouch::smooth_max_pool_grad_kernel<T>(dy, x, y, dx, LAB_POOL_SHAPE, beta);               \
  }
LAB_POOL_ENTRY_POINTS(float, _f32)
LAB_POOL_ENTRY_POINTS(double, _f64)
#undef LAB_POOL_ENTRY_POINTS
#undef LAB_POOL_SHAPE
#undef LAB_POOL_SHAPE_PARAMS
