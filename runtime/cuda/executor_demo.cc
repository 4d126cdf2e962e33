// executor_demo (tests only): the quickstart MLP of runtime/test_program.h (with the test
// kernels of testdata/executor_test_kernels.cu) as a whole executable: train_main over a
// cpu and a cuda backend, exactly as a generated main() calls it. For the GPU suite:
// `executor_demo --device cuda --time` times the one-graph step; its output without
// --time is the quickstart's golden text (f64).
#include "runtime/cuda/executor.h"
#include "runtime/cuda/testdata/executor_test_kernels.h"
#include "runtime/executor.h"
#include "runtime/test_program.h"
#include "runtime/train_main.h"

namespace {

using namespace vouch::rt;
using namespace vouch::rt::test_program;


}  // namespace

int main(int argc, char** argv) {
  static const ModelDescription model = quickstart_description("executor_demo");
  static const MlpProgram mlp(1, 2, 8, 1);
  namespace td = vouch::rt::cuda::testdata;
  static const vouch::rt::cuda::KernelImage image{
      td::kExecutorKernelsSm90Cubin, td::kExecutorKernelsSm90CubinSize,
      reinterpret_cast<const char*>(td::kExecutorKernelsPtx)};
  return train_main(
      argc, argv, model,
      {cpu_program_backend(mlp.program, kMlpCpuKernels<float>, kMlpCpuKernels<double>,
                           "backend: cpu (executor demo)", {}),
       vouch::rt::cuda::cuda_program_backend(
           mlp.program, &image, 1, vouch::rt::cuda::ProductMath::Fp32,
           /*f64_kernels=*/true, "backend: cuda (executor demo)", {})});
}
