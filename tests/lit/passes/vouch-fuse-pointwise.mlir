// RUN: %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-autodiff,vouch-fuse-pointwise))' | FileCheck %s

// The quickstart MLP after autodiff: the MSE VJP's chain (sub, scale, the
// seed folded from broadcast(fill 1) into a fill, mul) becomes one kernel, ReLU's VJP (step, mul) another;
// GEMMs, reductions and lone pointwise ops (the forward relu between two
// linears) are never part of a group.

// CHECK-LABEL: vouch.model "mlp"
// CHECK: vouch.relu
// CHECK-NOT: fusion_group
// CHECK-SAME: vouch.node = 1
// CHECK-NOT: vouch.fill 1.000000e+00 {{.*}}tensor<f32>
// CHECK: vouch.sub {{.*}}vouch.fusion_group = "mlp_fused0"
// CHECK: vouch.scale {{.*}}vouch.fusion_group = "mlp_fused0"
// CHECK-NOT: vouch.broadcast
// CHECK: %[[SEED:.*]] = vouch.fill 1.000000e+00 {vouch.fusion_group = "mlp_fused0", vouch.vjp_of = 3 : i64} : tensor<4x1xf32>
// CHECK: vouch.mul %[[SEED]], {{.*}}vouch.fusion_group = "mlp_fused0"
// CHECK: vouch.matmul
// CHECK-NOT: fusion_group
// CHECK-SAME: vouch.vjp_of = 2
// CHECK: vouch.reduce_sum
// CHECK-NOT: fusion_group
// CHECK-SAME: vouch.vjp_of = 2
// CHECK: vouch.step {{.*}}vouch.fusion_group = "mlp_fused1"
// CHECK: vouch.mul {{.*}}vouch.fusion_group = "mlp_fused1"
vouch.model "mlp" attributes {batch = 4 : i64} {
  %x = vouch.input "x" : tensor<4x2xf32>
  %y = vouch.target "y" : tensor<4x1xf32>
  %w1 = vouch.param "w1" = "xavier_uniform" : tensor<8x2xf32>
  %b1 = vouch.param "b1" = "zeros" : tensor<8xf32>
  %w2 = vouch.param "w2" = "xavier_uniform" : tensor<1x8xf32>
  %b2 = vouch.param "b2" = "zeros" : tensor<1xf32>
  %h = vouch.linear %x, %w1, %b1 : (tensor<4x2xf32>, tensor<8x2xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %r = vouch.relu %h : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = vouch.linear %r, %w2, %b2 : (tensor<4x8xf32>, tensor<1x8xf32>, tensor<1xf32>) -> tensor<4x1xf32>
  %l = vouch.mse_loss %p, %y : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<f32>
  vouch.output "pred" %p : tensor<4x1xf32>
  vouch.loss %l : tensor<f32>
}
