// param_slot.h: one parameter as the optimizer kernel sees it, shared by host and device.
//
// The executor uploads one ParamSlot per parameter; one optimizer launch then updates
// every parameter, their elements one range of quads (first_quad: where a slot's
// begin). Plain C++ so the host executor and the NVRTC-compiled optimizer agree on one
// definition.
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_PARAM_SLOT_H_
#define VOUCH_RUNTIME_CUDA_KERNELS_PARAM_SLOT_H_

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define VOUCH_PARAM_SLOT_FN __host__ __device__ inline
#else
#define VOUCH_PARAM_SLOT_FN inline
#endif

namespace vouch {

template <class T>
struct ParamSlot {
  T* p;         // the parameter
  const T* g;   // its gradient
  T* m;         // first moment (Adam, AdamW) or momentum buffer (SGD, RMSprop)
  T* v;         // second moment (Adam, AdamW), square average (RMSprop), sum (Adagrad)
  long long n;  // elements
  // 1: the weight decay applies; 0: the param is exempt (runtime/optim.h
  // decays_param, from the AdamW option decay_min_rank).
  int decay = 1;
  // The slot's first quad (4 elements) in the launch's one range of quads: the slots'
  // quads follow one another, ceil(n / 4) each (number_quads below fills it in).
  long long first_quad = 0;
};

// Sets every slot's first_quad; returns the quads of all `count` slots (the range the
// optimizer launch walks).
template <class T>
VOUCH_PARAM_SLOT_FN long long number_quads(ParamSlot<T>* slots, int count) {
  long long quads = 0;
  for (int k = 0; k < count; ++k) {
    slots[k].first_quad = quads;
    quads += (slots[k].n + 3) / 4;
  }
  return quads;
}

// The optimizer's hyper-parameters and learning-rate schedule, passed by value to the
// one optimizer launch (runtime/optim.h OptimizerConfig, whose fields and enum values
// these are). A captured graph bakes them in; the step counter it reads from device
// memory is what changes from step to step, and the lr of a step is computed from it
// on the device (optimizer.cuh optimizer_lr_at).
// The gradient-norm launch (optimizer.cuh grad_norm_kernel): its block, a power of two
// as its fixed tree needs, and its grid, fixed so that the norm's summation order (and
// so its bits) is the same every run: two blocks for each of an H200's 132 SMs, about.
constexpr int kGradNormThreads = 256;
constexpr int kGradNormBlocks = 256;

struct OptimizerHyper {
  int kind;      // OptimizerConfig::Kind: 0 sgd, 1 adam, 2 adamw, 3 rmsprop, 4 adagrad
  int schedule;  // OptimizerConfig::Schedule: 0 constant, 1 step, 2 exponential,
                 // 3 warmup_cosine
  double lr, beta1, beta2, eps, weight_decay, momentum, alpha, lr_decay;
  long long step_size;
  double gamma;
  long long warmup, total;
  double min_lr;
};

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_PARAM_SLOT_H_
