// RUN: %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-autodiff,vouch-fold-layer-norm-grad-sum))' | FileCheck %s
// RUN: %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-autodiff))' | FileCheck %s --check-prefix=UNFOLDED

// A residual block, r = h + layer_norm(h): h's gradient is the sum of the add's
// (dr) and the layer_norm's dx, which vouch-autodiff writes as an add of the
// layer_norm's VJP. The fold makes the sum layer_norm_grad's own dx (addend dr),
// with the add's node, the parameter gradients unchanged.
// UNFOLDED-LABEL: vouch.model "residual"
// UNFOLDED: %dx, %param_grads:2 = vouch.layer_norm_grad %[[DR:[^,]*]], %{{[^ ]*}} weight %{{[^ ]*}} with_bias eps
// UNFOLDED: vouch.add %[[DR]], %dx {vouch.vjp_of = [[N:[0-9]+]] : i64}
// CHECK-LABEL: vouch.model "residual"
// CHECK: %dx, %param_grads:2 = vouch.layer_norm_grad %[[DR:[^,]*]], %{{[^ ]*}} weight %{{[^ ]*}} plus %[[DR]] with_bias eps 1.000000e-05 {vouch.vjp_of = 1 : i64}
// CHECK-NOT: vouch.add {{.*}}vjp_of
// CHECK: vouch.matmul %dx, %{{[^ ]*}} {transpose_lhs, vouch.vjp_of = 0 : i64}
// CHECK: vouch.param_grad "w" %param_grads#0
// CHECK: vouch.param_grad "b" %param_grads#1
vouch.model "residual" attributes {batch = 4 : i64} {
  %x = vouch.input "x" : tensor<4x8xf32>
  %t = vouch.target "t" : tensor<4x8xf32>
  %w = vouch.param "w" = ones : tensor<8xf32>
  %b = vouch.param "b" = zeros : tensor<8xf32>
  %m = vouch.param "m" = xavier_uniform : tensor<8x8xf32>
  %h = vouch.linear %x, %m : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %n = vouch.layer_norm %h weight %w bias %b eps 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %r = vouch.add %h, %n : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = vouch.mse_loss %r, %t : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
  vouch.output "y" %r : tensor<4x8xf32>
  vouch.loss %l : tensor<f32>
}

// Left alone: the layer_norm's input read by nothing else (no sum); and a sum
// that belongs to another op's VJP: h is read by a scale before the layer_norm,
// so vouch-autodiff (last op first) adds the scale's gradient to dx in the
// scale's VJP; folding it would move the scale's work into the layer_norm's
// node on the tape.
// CHECK-LABEL: vouch.model "no_sum"
// CHECK: vouch.layer_norm_grad {{[^:]*}} eps 1.000000e-05 {vouch.vjp_of
// CHECK-NOT: plus
// CHECK-LABEL: vouch.model "other_node"
// CHECK: %[[DX:[^ ]*]] = vouch.layer_norm_grad {{[^:]*}} eps 1.000000e-05 {vouch.vjp_of = [[LN:[0-9]+]] : i64}
// CHECK-NOT: plus
// CHECK: vouch.add %[[DX]], %{{[^ ]*}} {vouch.vjp_of = [[SCALE:[0-9]+]] : i64}
vouch.model "no_sum" attributes {batch = 4 : i64} {
  %x = vouch.input "x" : tensor<4x8xf32>
  %t = vouch.target "t" : tensor<4x8xf32>
  %m = vouch.param "m" = xavier_uniform : tensor<8x8xf32>
  %h = vouch.linear %x, %m : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %n = vouch.layer_norm %h eps 1.0e-05 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = vouch.mse_loss %n, %t : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
  vouch.loss %l : tensor<f32>
}
vouch.model "other_node" attributes {batch = 4 : i64} {
  %x = vouch.input "x" : tensor<4x8xf32>
  %t = vouch.target "t" : tensor<4x8xf32>
  %m = vouch.param "m" = xavier_uniform : tensor<8x8xf32>
  %h = vouch.linear %x, %m : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %s = vouch.scale %h by 2.0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = vouch.layer_norm %h eps 1.0e-05 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = vouch.add %s, %n : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = vouch.mse_loss %r, %t : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
  vouch.loss %l : tensor<f32>
}
