// dims.h: the index map a kernel receives by value, shared by host and device code.
//
// An index map walks a row-major shape (`extent`) and turns a flat position into an
// offset with its own strides (`stride`): the input strides of the kept or reduced axes
// of a reduction, the input stride per result axis of a broadcast (0 for a repeated
// axis) or a permute. The host executor (runtime/cuda/executor.cc) fills it from a
// Program's Dims argument; NVRTC-compiled kernels read it. Plain C++ on purpose: it
// compiles as host C++ and as CUDA.
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_DIMS_H_
#define VOUCH_RUNTIME_CUDA_KERNELS_DIMS_H_

namespace vouch {

struct Dims {
  int rank;                // axes in use, at most 8 (rt::kMaxDims)
  long long extent[8];     // row-major extents walked
  long long stride[8];     // offset contributed by one step along each axis
};

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_DIMS_H_
