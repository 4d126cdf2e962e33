// RUN: %vouch-opt %s -split-input-file -verify-diagnostics --allow-unregistered-dialect --pass-pipeline='builtin.module(vouch.model(vouch-autodiff))' | FileCheck %s

// The quickstart MLP: every linear layer's VJP is two matmuls on the stored
// operands (dx = dy·W, dW = dyᵀ·x through transpose_lhs) and a bias sum; no
// permute is ever built, no gradient of the target or the input is kept,
// and the param grads come in param order.

// CHECK-LABEL: vouch.model "mlp"
// CHECK: %[[X:.*]] = vouch.input "x"
// CHECK: %[[W1:.*]] = vouch.param "w1"
// CHECK: %[[W2:.*]] = vouch.param "w2"
// CHECK: %[[H:.*]] = vouch.linear {{.*}} {vouch.node = 0 : i64}
// CHECK: %[[R:.*]] = vouch.relu %[[H]] {vouch.node = 1 : i64}
// CHECK: vouch.linear {{.*}} {vouch.node = 2 : i64}
// CHECK: vouch.mse_loss {{.*}} {vouch.node = 3 : i64}
// CHECK: %[[SEED:.*]] = vouch.fill 1.000000e+00 {vouch.vjp_of = 3 : i64} : tensor<f32>
// CHECK: %[[DP:.*]] = vouch.mul {{.*}} {vouch.vjp_of = 3 : i64}
// CHECK-NOT: by -1.0
// CHECK: %[[DR:.*]] = vouch.matmul %[[DP]], %[[W2]] {vouch.vjp_of = 2 : i64}
// CHECK: %[[DW2:.*]] = vouch.matmul %[[DP]], %[[R]] {transpose_lhs, vouch.vjp_of = 2 : i64}
// CHECK: %[[DB2:.*]] = vouch.reduce_sum %[[DP]] axes [0] {vouch.vjp_of = 2 : i64}
// CHECK: %[[MASK:.*]] = vouch.step %[[H]] {vouch.vjp_of = 1 : i64}
// CHECK: %[[DH:.*]] = vouch.mul %[[DR]], %[[MASK]] {vouch.vjp_of = 1 : i64}
// CHECK-NOT: vouch.matmul %[[DH]], %[[W1]]
// CHECK: %[[DW1:.*]] = vouch.matmul %[[DH]], %[[X]] {transpose_lhs, vouch.vjp_of = 0 : i64}
// CHECK: %[[DB1:.*]] = vouch.reduce_sum %[[DH]] axes [0] {vouch.vjp_of = 0 : i64}
// CHECK-NOT: vouch.permute
// CHECK: vouch.param_grad "w1" %[[DW1]]
// CHECK: vouch.param_grad "b1" %[[DB1]]
// CHECK: vouch.param_grad "w2" %[[DW2]]
// CHECK: vouch.param_grad "b2" %[[DB2]]
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

// -----

// A value used twice gets the sum of both gradients; a transposed forward
// matmul differentiates into products that still only use flags.

// CHECK-LABEL: vouch.model "fanout"
// CHECK: %[[A:.*]] = vouch.param "a"
// CHECK: %[[B:.*]] = vouch.param "b"
// CHECK: vouch.matmul %[[A]], %[[B]] {transpose_rhs, vouch.node = 0 : i64}
// CHECK: %[[DA1:.*]] = vouch.matmul %{{.*}}, %[[B]] {vouch.vjp_of = 0 : i64}
// CHECK: %[[DB:.*]] = vouch.matmul %{{.*}}, %[[A]] {transpose_lhs, vouch.vjp_of = 0 : i64}
// CHECK: %[[DA:.*]] = vouch.add %{{.*}}, %[[DA1]] {vouch.vjp_of = 0 : i64}
// CHECK-NOT: vouch.permute
// CHECK: vouch.param_grad "a" %[[DA]]
// CHECK: vouch.param_grad "b" %[[DB]]
vouch.model "fanout" attributes {batch = 1 : i64} {
  %a = vouch.param "a" = "ones" : tensor<2x3xf32>
  %b = vouch.param "b" = "ones" : tensor<4x3xf32>
  %c = vouch.matmul %a, %b {transpose_rhs} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %s = vouch.reduce_sum %c axes [0, 1] : (tensor<2x4xf32>) -> tensor<f32>
  %t = vouch.reduce_sum %a axes [0, 1] : (tensor<2x3xf32>) -> tensor<f32>
  %u = vouch.add %s, %t : (tensor<f32>, tensor<f32>) -> tensor<f32>
  vouch.loss %u : tensor<f32>
}

// -----

// A param off the gradient path gets an explicit zero gradient.

// CHECK-LABEL: vouch.model "unused"
// CHECK: %[[Z:.*]] = vouch.fill 0.000000e+00 : tensor<3xf32>
// CHECK: vouch.param_grad "unused" %[[Z]]
vouch.model "unused" attributes {batch = 1 : i64} {
  %a = vouch.param "a" = "ones" : tensor<3xf32>
  %n = vouch.param "unused" = "ones" : tensor<3xf32>
  %s = vouch.reduce_sum %a axes [0] : (tensor<3xf32>) -> tensor<f32>
  vouch.loss %s : tensor<f32>
}

// -----

// Without a loss there is nothing to differentiate.

// expected-error @+1 {{'vouch.model' op has no vouch.loss: there is nothing to differentiate}}
vouch.model "noloss" attributes {batch = 1 : i64} {
  %a = vouch.param "a" = "ones" : tensor<3xf32>
}

// -----

// An op without a VJP rule on the gradient path is an error naming the op
// (an op of another dialect stands in for one: every vouch op has a rule).

vouch.model "novjp" attributes {batch = 1 : i64} {
  %a = vouch.param "a" = "ones" : tensor<3xf32>
  // expected-error @+1 {{'test.opaque' op has no VJP rule, but lies on the gradient path from the loss to the parameters}}
  %b = "test.opaque"(%a) : (tensor<3xf32>) -> tensor<3xf32>
  %s = vouch.reduce_sum %b axes [0] : (tensor<3xf32>) -> tensor<f32>
  vouch.loss %s : tensor<f32>
}

// -----

// layer_norm's VJP is one layer_norm_grad with dx, dweight and dbias (one
// kernel on cuda): no recomputed layer_norm, no mul, no reduction chain.

// CHECK-LABEL: vouch.model "layer_norm"
// CHECK: %[[X:.*]] = vouch.input "x"
// CHECK: %[[W:.*]] = vouch.param "w"
// CHECK: %[[B:.*]] = vouch.param "b"
// CHECK: vouch.layer_norm %[[X]] weight %[[W]] bias %[[B]] eps 1.000000e-05 {vouch.node = 0 : i64}
// CHECK: %{{[^ ]*}}, %[[P:[^ ]*]]:2 = vouch.layer_norm_grad %{{[^ ]*}}, %[[X]] weight %[[W]] with_bias eps 1.000000e-05 {vouch.vjp_of = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NOT: vouch.layer_norm {{.*}}vouch.vjp_of
// CHECK-NOT: vouch.mul {{.*}}vouch.vjp_of = 0
// CHECK-NOT: vouch.reduce_sum {{.*}}vouch.vjp_of = 0
// CHECK: vouch.param_grad "w" %[[P]]#0
// CHECK: vouch.param_grad "b" %[[P]]#1
vouch.model "layer_norm" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<2x4xf32>
  %w = vouch.param "w" = "ones" : tensor<4xf32>
  %b = vouch.param "b" = "zeros" : tensor<4xf32>
  %y = vouch.layer_norm %x weight %w bias %b eps 1.0e-05 : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %s = vouch.reduce_sum %y axes [0, 1] : (tensor<2x4xf32>) -> tensor<f32>
  vouch.loss %s : tensor<f32>
}

// -----

// Without weight and bias it computes dx alone; with a bias only, dx and dbias.

// CHECK-LABEL: vouch.model "layer_norm_bias"
// CHECK: %[[DX:[^ ]*]], %[[DB:[^ ]*]] = vouch.layer_norm_grad %{{[^ ]*}}, %{{[^ ]*}} with_bias eps 1.000000e-03 {vouch.vjp_of = 1 : i64} : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK: %[[DA:[^ ]*]] = vouch.layer_norm_grad %[[DX]], %{{[^ ]*}} eps 1.000000e-05 {vouch.vjp_of = 0 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: vouch.param_grad "a" %[[DA]]
// CHECK: vouch.param_grad "b" %[[DB]]
vouch.model "layer_norm_bias" attributes {batch = 1 : i64} {
  %a = vouch.param "a" = "ones" : tensor<3xf32>
  %b = vouch.param "b" = "zeros" : tensor<3xf32>
  %n = vouch.layer_norm %a eps 1.0e-05 : (tensor<3xf32>) -> tensor<3xf32>
  %y = vouch.layer_norm %n bias %b eps 1.0e-03 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %s = vouch.reduce_sum %y axes [0] : (tensor<3xf32>) -> tensor<f32>
  vouch.loss %s : tensor<f32>
}

// -----

// A value split into pieces that tile one axis (a qkv projection into q, k
// and v): its gradient is the concat of the pieces' gradients in range
// order, built where the last piece's VJP runs, not three full-size
// slice_scatters of zeros and the two additions of their sums.

// CHECK-LABEL: vouch.model "tiles"
// CHECK: %[[X:.*]] = vouch.input "x"
// CHECK: %[[A:.*]] = vouch.slice {{.*}} start 0 end 2
// CHECK: %[[B:.*]] = vouch.slice {{.*}} start 2 end 4
// CHECK: %[[DP:.*]] = vouch.mul {{.*}} {vouch.vjp_of = 6 : i64}
// CHECK: %[[DA:.*]] = vouch.mul %[[DP]], %[[B]] {vouch.vjp_of = 4 : i64}
// CHECK: %[[DB:.*]] = vouch.mul %[[DP]], %[[A]] {vouch.vjp_of = 4 : i64}
// CHECK-NOT: vouch.slice_scatter
// CHECK-NOT: vouch.add
// CHECK: %[[DH:.*]] = vouch.concat %[[DA]], %[[DB]], %[[DP]] axis 1 {vouch.vjp_of = 1 : i64} : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x6xf32>
// CHECK-NOT: vouch.slice_scatter
// CHECK: vouch.mul %[[DH]], %[[X]] {vouch.vjp_of = 0 : i64}
vouch.model "tiles" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x6xf32>
  %y = vouch.target "y" : tensor<1x2xf32>
  %w = vouch.param "w" = "xavier_uniform" : tensor<1x6xf32>
  %h = vouch.mul %x, %w : (tensor<1x6xf32>, tensor<1x6xf32>) -> tensor<1x6xf32>
  %a = vouch.slice %h axis 1 start 0 end 2 step 1 : (tensor<1x6xf32>) -> tensor<1x2xf32>
  %b = vouch.slice %h axis 1 start 2 end 4 step 1 : (tensor<1x6xf32>) -> tensor<1x2xf32>
  %c = vouch.slice %h axis 1 start 4 end 6 step 1 : (tensor<1x6xf32>) -> tensor<1x2xf32>
  %m = vouch.mul %a, %b : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %p = vouch.add %m, %c : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %l = vouch.mse_loss %p, %y : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<f32>
  vouch.output "p" %p : tensor<1x2xf32>
  vouch.loss %l : tensor<f32>
}

// -----

// With another use of the value besides its pieces, that use's gradient comes
// first and the concat of the pieces' gradients is added to it: one addition.

// CHECK-LABEL: vouch.model "tiles_and_direct"
// CHECK: vouch.mul {{.*}} {vouch.vjp_of = 5 : i64}
// CHECK-NEXT: %[[DIRECT:.*]] = vouch.mul {{.*}} {vouch.vjp_of = 5 : i64}
// CHECK-NOT: vouch.slice_scatter
// CHECK: %[[PIECES:.*]] = vouch.concat {{.*}} axis 1 {vouch.vjp_of = 1 : i64} : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x6xf32>
// CHECK-NEXT: %[[SUM:.*]] = vouch.add %[[DIRECT]], %[[PIECES]] {vouch.vjp_of = 1 : i64}
// CHECK-NOT: vouch.add
// CHECK: vouch.mul %[[SUM]]
vouch.model "tiles_and_direct" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x6xf32>
  %y = vouch.target "y" : tensor<1x6xf32>
  %w = vouch.param "w" = "xavier_uniform" : tensor<1x6xf32>
  %h = vouch.mul %x, %w : (tensor<1x6xf32>, tensor<1x6xf32>) -> tensor<1x6xf32>
  %a = vouch.slice %h axis 1 start 0 end 3 step 1 : (tensor<1x6xf32>) -> tensor<1x3xf32>
  %b = vouch.slice %h axis 1 start 3 end 6 step 1 : (tensor<1x6xf32>) -> tensor<1x3xf32>
  %m = vouch.mul %a, %b : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  %c = vouch.concat %m, %m axis 1 : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x6xf32>
  %p = vouch.mul %c, %h : (tensor<1x6xf32>, tensor<1x6xf32>) -> tensor<1x6xf32>
  %l = vouch.mse_loss %p, %y : (tensor<1x6xf32>, tensor<1x6xf32>) -> tensor<f32>
  vouch.output "p" %p : tensor<1x6xf32>
  vouch.loss %l : tensor<f32>
}

// -----

// Pieces that leave a gap (columns 2 and 3 unread), or that interleave with a
// step of 2, do not tile the axis: their gradients stay slice_scatters of
// zeros and their sum.

// CHECK-LABEL: vouch.model "gap"
// CHECK: vouch.slice_scatter {{.*}} start 4 end 6 step 1
// CHECK: vouch.slice_scatter {{.*}} start 0 end 2 step 1
// CHECK: vouch.add
// CHECK-NOT: vouch.concat
// CHECK-LABEL: vouch.model "interleaved"
// CHECK: vouch.slice_scatter {{.*}} start 1 end 6 step 2
// CHECK: vouch.slice_scatter {{.*}} start 0 end 6 step 2
// CHECK: vouch.add
// CHECK-NOT: vouch.concat
vouch.model "gap" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x6xf32>
  %y = vouch.target "y" : tensor<1x2xf32>
  %w = vouch.param "w" = "xavier_uniform" : tensor<1x6xf32>
  %h = vouch.mul %x, %w : (tensor<1x6xf32>, tensor<1x6xf32>) -> tensor<1x6xf32>
  %a = vouch.slice %h axis 1 start 0 end 2 step 1 : (tensor<1x6xf32>) -> tensor<1x2xf32>
  %c = vouch.slice %h axis 1 start 4 end 6 step 1 : (tensor<1x6xf32>) -> tensor<1x2xf32>
  %p = vouch.mul %a, %c : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %l = vouch.mse_loss %p, %y : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<f32>
  vouch.output "p" %p : tensor<1x2xf32>
  vouch.loss %l : tensor<f32>
}
vouch.model "interleaved" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x6xf32>
  %y = vouch.target "y" : tensor<1x3xf32>
  %w = vouch.param "w" = "xavier_uniform" : tensor<1x6xf32>
  %h = vouch.mul %x, %w : (tensor<1x6xf32>, tensor<1x6xf32>) -> tensor<1x6xf32>
  %even = vouch.slice %h axis 1 start 0 end 6 step 2 : (tensor<1x6xf32>) -> tensor<1x3xf32>
  %odd = vouch.slice %h axis 1 start 1 end 6 step 2 : (tensor<1x6xf32>) -> tensor<1x3xf32>
  %p = vouch.mul %even, %odd : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  %l = vouch.mse_loss %p, %y : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<f32>
  vouch.output "p" %p : tensor<1x3xf32>
  vouch.loss %l : tensor<f32>
}
