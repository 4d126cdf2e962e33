// RUN: %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-autodiff,vouch-plan{profile=checked_cuda},vouch-gate))' | FileCheck %s --check-prefix=CUDA
// RUN: %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-autodiff,vouch-plan{profile=checked_cpu},vouch-gate))' | FileCheck %s --check-prefix=CPU
// RUN: not %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-plan{profile=checked_rocm}))' 2>&1 | FileCheck %s --check-prefix=BAD

// The quickstart MLP, planned and gated for each maintained profile: every
// compute op, forward and backward, gets a capsule of the profile's device
// and the kernel symbol codegen emits; its products are small enough for
// checked_cuda's small-product rule, so vouch's own product kernels compute
// them on cuda (a larger product plans cuBLAS(Lt): tools/report.test), the
// reference kernels on cpu; no capsule of the other device ever appears.

// CUDA-LABEL: vouch.model "mlp" attributes {batch = 1 : i64, vouch.profile = "checked_cuda"}
// CUDA: vouch.linear {{.*}} {vouch.capsule = "native_cuda.linear", vouch.kernel = "mlp_n0_linear", vouch.node = 0 : i64}
// CUDA: vouch.relu {{.*}} {vouch.capsule = "native_cuda.relu", vouch.kernel = "mlp_n1_relu", vouch.node = 1 : i64}
// CUDA: vouch.linear {{.*}} {vouch.capsule = "native_cuda.linear", vouch.kernel = "mlp_n2_linear", vouch.node = 2 : i64}
// CUDA: vouch.mse_loss {{.*}} {vouch.capsule = "native_cuda.mse_loss", vouch.kernel = "mlp_n3_mse_loss", vouch.node = 3 : i64}
// CUDA: vouch.fill {{.*}} {vouch.capsule = "native_cuda.fill", vouch.kernel = "mlp_b3_0_fill", vouch.vjp_of = 3 : i64}
// CUDA: vouch.matmul {{.*}} {vouch.capsule = "native_cuda.matmul", vouch.kernel = "mlp_b2_0_matmul", vouch.vjp_of = 2 : i64}
// CUDA: vouch.matmul {{.*}} {transpose_lhs, vouch.capsule = "native_cuda.matmul", vouch.kernel = "mlp_b2_1_matmul", vouch.vjp_of = 2 : i64}
// CUDA: vouch.reduce_sum {{.*}} {vouch.capsule = "native_cuda.reduce_sum", vouch.kernel = "mlp_b2_2_reduce_sum", vouch.vjp_of = 2 : i64}
// CUDA: vouch.step {{.*}} {vouch.capsule = "native_cuda.step", vouch.kernel = "mlp_b1_0_step", vouch.vjp_of = 1 : i64}
// CUDA: vouch.matmul {{.*}} {transpose_lhs, vouch.capsule = "native_cuda.matmul", vouch.kernel = "mlp_b0_0_matmul", vouch.vjp_of = 0 : i64}
// CUDA-NOT: reference.
// CUDA-NOT: cublas

// CPU-LABEL: vouch.model "mlp" attributes {batch = 1 : i64, vouch.profile = "checked_cpu"}
// CPU: vouch.linear {{.*}} {vouch.capsule = "reference.linear", vouch.kernel = "mlp_n0_linear", vouch.node = 0 : i64}
// CPU: vouch.relu {{.*}} {vouch.capsule = "reference.relu", vouch.kernel = "mlp_n1_relu", vouch.node = 1 : i64}
// CPU: vouch.matmul {{.*}} {vouch.capsule = "reference.matmul", vouch.kernel = "mlp_b2_0_matmul", vouch.vjp_of = 2 : i64}
// CPU-NOT: native_cuda.
// CPU-NOT: cublas

// BAD: error: unknown profile `checked_rocm` (known profiles: checked_cpu, checked_cuda, libtorch_forward_cuda)
vouch.model "mlp" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x2xf32>
  %y = vouch.target "y" : tensor<1x1xf32>
  %w1 = vouch.param "w1" = "xavier_uniform" : tensor<8x2xf32>
  %b1 = vouch.param "b1" = "zeros" : tensor<8xf32>
  %w2 = vouch.param "w2" = "xavier_uniform" : tensor<1x8xf32>
  %b2 = vouch.param "b2" = "zeros" : tensor<1xf32>
  %h = vouch.linear %x, %w1, %b1 : (tensor<1x2xf32>, tensor<8x2xf32>, tensor<8xf32>) -> tensor<1x8xf32>
  %r = vouch.relu %h : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %p = vouch.linear %r, %w2, %b2 : (tensor<1x8xf32>, tensor<1x8xf32>, tensor<1xf32>) -> tensor<1x1xf32>
  %l = vouch.mse_loss %p, %y : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<f32>
  vouch.output "pred" %p : tensor<1x1xf32>
  vouch.loss %l : tensor<f32>
}
