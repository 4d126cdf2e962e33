// RUN: %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-fold-layer-norm-add))' | FileCheck %s
// RUN: %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-fold-layer-norm-add,vouch-autodiff,vouch-fold-layer-norm-grad-sum))' | FileCheck %s --check-prefix=GRAD

// Two blocks of a residual stream, x1 = x0 + f(x0), x2 = x1 + g(ln(x1)), each
// sum normalised by a layer_norm: each add goes into its layer_norm, which
// writes the sum for the next add to read.
// CHECK-LABEL: vouch.model "stream"
// CHECK: %[[X0:[^ ]*]] = vouch.input "x"
// CHECK: %[[F:[^ ]*]] = vouch.input "f"
// CHECK: %[[W:[^ ]*]] = vouch.param "w"
// CHECK: %[[B:[^ ]*]] = vouch.param "b"
// CHECK: %[[Y1:[^,]*]], %[[X1:[^ ]*]] = vouch.layer_norm %[[X0]] plus %[[F]] weight %[[W]] bias %[[B]] eps 1.000000e-05 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: %[[G:[^ ]*]] = vouch.linear %[[Y1]],
// CHECK: %[[Y2:[^,]*]], %[[X2:[^ ]*]] = vouch.layer_norm %[[X1]] plus %[[G]] eps 1.000000e-05
// CHECK-NOT: vouch.add
// CHECK: vouch.mse_loss %[[Y2]]
// CHECK: vouch.output "x2" %[[X2]]
//
// The VJP: the last block's layer_norm_grad reads its own sum and adds
// nothing (x2's other reader, the output, sends no gradient); the first
// block's reads x1 and adds x1's gradient from the second block (its dx),
// which is then the gradient of both of the first block's terms.
// GRAD-LABEL: vouch.model "stream"
// GRAD: %[[M:[^ ]*]] = vouch.param "m"
// GRAD: %[[Y1:[^,]*]], %[[X1:[^ ]*]] = vouch.layer_norm %{{[^ ]*}} plus
// GRAD: %[[Y2:[^,]*]], %[[X2:[^ ]*]] = vouch.layer_norm %[[X1]] plus
// GRAD: %[[D2:[^ ]*]] = vouch.layer_norm_grad %{{[^,]*}}, %[[X2]] eps 1.000000e-05 {vouch.vjp_of = 2 : i64}
// GRAD: %[[DY1:[^ ]*]] = vouch.matmul %[[D2]], %[[M]] {vouch.vjp_of = 1 : i64}
// GRAD: vouch.layer_norm_grad %[[DY1]], %[[X1]] weight %{{[^ ]*}} plus %[[D2]] with_bias eps 1.000000e-05 {vouch.vjp_of = 0 : i64}
// GRAD-NOT: vouch.add
// GRAD: vouch.param_grad "m"
vouch.model "stream" attributes {batch = 4 : i64} {
  %x0 = vouch.input "x" : tensor<4x8xf32>
  %f = vouch.input "f" : tensor<4x8xf32>
  %t = vouch.target "t" : tensor<4x8xf32>
  %w = vouch.param "w" = ones : tensor<8xf32>
  %b = vouch.param "b" = zeros : tensor<8xf32>
  %m = vouch.param "m" = xavier_uniform : tensor<8x8xf32>
  %x1 = vouch.add %x0, %f : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = vouch.layer_norm %x1 weight %w bias %b eps 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %g = vouch.linear %y1, %m : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %x2 = vouch.add %x1, %g : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y2 = vouch.layer_norm %x2 eps 1.0e-05 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = vouch.mse_loss %y2, %t : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
  vouch.output "x2" %x2 : tensor<4x8xf32>
  vouch.loss %l : tensor<f32>
}

// Left alone: a layer_norm that already has an addend; and one whose weight is
// computed after the add while another reader of the sum comes between them
// (the fused op could go neither where the add was nor where the norm was).
// CHECK-LABEL: vouch.model "already"
// CHECK: vouch.add
// CHECK: vouch.layer_norm %{{[^ ]*}} plus
// CHECK-LABEL: vouch.model "late_weight"
// CHECK: %[[S:[^ ]*]] = vouch.add
// CHECK: vouch.mul %[[S]], %[[S]]
// CHECK: vouch.layer_norm %[[S]] weight
//
// A weight computed after the add with no reader of the sum in between: the
// fused op goes where the layer_norm was, after the weight.
// CHECK-LABEL: vouch.model "late_weight_folded"
// CHECK: %[[W:[^ ]*]] = vouch.exp
// CHECK-NEXT: %{{[^,]*}}, %[[S:[^ ]*]] = vouch.layer_norm %{{[^ ]*}} plus %{{[^ ]*}} weight %[[W]]
// CHECK: vouch.mul %[[S]], %[[S]]
vouch.model "already" attributes {batch = 4 : i64} {
  %x = vouch.input "x" : tensor<4x8xf32>
  %r = vouch.input "r" : tensor<4x8xf32>
  %s = vouch.add %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y, %sum = vouch.layer_norm %s plus %r eps 1.0e-05 : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %t = vouch.target "t" : tensor<4x8xf32>
  %l = vouch.mse_loss %y, %t : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
  vouch.output "sum" %sum : tensor<4x8xf32>
  vouch.loss %l : tensor<f32>
}
vouch.model "late_weight" attributes {batch = 4 : i64} {
  %x = vouch.input "x" : tensor<4x8xf32>
  %r = vouch.input "r" : tensor<4x8xf32>
  %p = vouch.param "p" = ones : tensor<8xf32>
  %s = vouch.add %x, %r : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = vouch.mul %s, %s : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %w = vouch.exp %p : (tensor<8xf32>) -> tensor<8xf32>
  %y = vouch.layer_norm %s weight %w eps 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %t = vouch.target "t" : tensor<4x8xf32>
  %l = vouch.mse_loss %y, %t : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
  vouch.output "z" %z : tensor<4x8xf32>
  vouch.loss %l : tensor<f32>
}
vouch.model "late_weight_folded" attributes {batch = 4 : i64} {
  %x = vouch.input "x" : tensor<4x8xf32>
  %r = vouch.input "r" : tensor<4x8xf32>
  %p = vouch.param "p" = ones : tensor<8xf32>
  %s = vouch.add %x, %r : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %w = vouch.exp %p : (tensor<8xf32>) -> tensor<8xf32>
  %y = vouch.layer_norm %s weight %w eps 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %z = vouch.mul %s, %s : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = vouch.target "t" : tensor<4x8xf32>
  %l = vouch.mse_loss %y, %t : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
  vouch.output "z" %z : tensor<4x8xf32>
  vouch.loss %l : tensor<f32>
}
