// test_kernels.cu: tiny kernels for the module / graph tests (test-only; compiled by
// nvcc in a genrule, never part of the runtime).
extern "C" __global__ void vouch_test_add_one(float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

extern "C" __global__ void vouch_test_axpy(float* y, const float* x, float a, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
