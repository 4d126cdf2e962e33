// param_slot.h: one parameter as the optimizer kernel sees it, shared by host and device.
//
// The executor uploads one ParamSlot per parameter; one optimizer launch then updates
// every parameter (blockIdx.y selects the slot). Plain C++ so the host executor and the
// NVRTC-compiled optimizer agree on one definition.
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_PARAM_SLOT_H_
#define VOUCH_RUNTIME_CUDA_KERNELS_PARAM_SLOT_H_

namespace vouch {

template <class T>
struct ParamSlot {
  T* p;         // the parameter
  const T* g;   // its gradient
  T* m;         // first moment (Adam, AdamW) or momentum buffer (SGD)
  T* v;         // second moment (Adam, AdamW)
  long long n;  // elements
};

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_PARAM_SLOT_H_
