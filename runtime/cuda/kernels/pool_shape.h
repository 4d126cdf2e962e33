// pool_shape.h: the geometry of a pooling op (max_pool, avg_pool, smooth_max_pool and
// their gradients), one definition for the cpu kernels (runtime/cpu_pool.h) and the
// CUDA kernels (pool.cuh). Plain C++ that also compiles as CUDA, like dims.h.
//
// Every pooling op is seen as 3-D: x [planes, in[0], in[1], in[2]] (planes = N·C) and
// its windows [planes, out[0], out[1], out[2]]; 1-D and 2-D ops have leading unit axes
// (extent 1, kernel 1, stride 1, padding 0), which change no index. Window o of axis a
// covers input positions o·stride[a] - pad[a] ... + kernel[a] - 1 of that axis, of
// which only those in [0, in[a]) take part (padding is never a value). codegen
// (codegen/recipes/PoolRecipe.cpp) passes the 16 numbers in this order as integer
// arguments: planes, in[0..3), out[0..3), kernel[0..3), stride[0..3), pad[0..3); the
// assurance gate keeps each count the kernels form from them within the UInt32 ABI.
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_POOL_SHAPE_H_
#define VOUCH_RUNTIME_CUDA_KERNELS_POOL_SHAPE_H_

namespace vouch {

struct PoolShape {
  long long planes;
  long long in[3], out[3], kernel[3], stride[3], pad[3];
};

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_POOL_SHAPE_H_
