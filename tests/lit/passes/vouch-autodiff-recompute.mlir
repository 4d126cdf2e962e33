// RUN: %vouch-opt %s -split-input-file --allow-unregistered-dialect --pass-pipeline='builtin.module(vouch.model(vouch-autodiff{recompute-min-elements=8 recompute-layer-norm=true}))' | FileCheck %s --check-prefix=AT8
// RUN: %vouch-opt %s -split-input-file --allow-unregistered-dialect --pass-pipeline='builtin.module(vouch.model(vouch-autodiff{recompute-min-elements=8}))' | FileCheck %s --check-prefix=NOLN
// RUN: %vouch-opt %s -split-input-file --allow-unregistered-dialect --pass-pipeline='builtin.module(vouch.model(vouch-autodiff{recompute-min-elements=9}))' | FileCheck %s --check-prefix=AT9
// RUN: %vouch-opt %s -split-input-file --allow-unregistered-dialect --pass-pipeline='builtin.module(vouch.model(vouch-autodiff))' | FileCheck %s --check-prefix=AT9

// gelu's result feeds a linear layer whose VJP reads it (dW), and gelu's own
// VJP reads its operand h: with at least recompute-min-elements elements (8
// here), the backward pass computes gelu(h) again, tagged with the linear's
// node, right before dW, and the forward result is read by the forward pass
// only. Below the threshold (9, and the default 2^20) it is kept.

// AT8-LABEL: vouch.model "mlp"
// AT8: %[[H:.*]] = vouch.linear {{.*}} {vouch.node = 0 : i64}
// AT8: %[[G:.*]] = vouch.gelu %[[H]] approximate "tanh" {vouch.node = 1 : i64}
// AT8: vouch.linear %[[G]], {{.*}} {vouch.node = 2 : i64}
// AT8-NOT: %[[G]]
// AT8: %[[AGAIN:.*]] = vouch.gelu %[[H]] approximate "tanh" {vouch.vjp_of = 2 : i64}
// AT8-NEXT: vouch.matmul %{{.*}}, %[[AGAIN]] {transpose_lhs, vouch.vjp_of = 2 : i64}
// AT8: vouch.gelu_grad %[[H]] approximate "tanh" {vouch.vjp_of = 1 : i64}

// AT9-LABEL: vouch.model "mlp"
// AT9: %[[G:.*]] = vouch.gelu {{.*}} {vouch.node = 1 : i64}
// AT9-NOT: vouch.gelu {{.*}} {vouch.vjp_of
// AT9: vouch.matmul %{{.*}}, %[[G]] {transpose_lhs, vouch.vjp_of = 2 : i64}
vouch.model "mlp" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x2xf32>
  %y = vouch.target "y" : tensor<1x1xf32>
  %w1 = vouch.param "w1" = "xavier_uniform" : tensor<8x2xf32>
  %w2 = vouch.param "w2" = "xavier_uniform" : tensor<1x8xf32>
  %h = vouch.linear %x, %w1 : (tensor<1x2xf32>, tensor<8x2xf32>) -> tensor<1x8xf32>
  %g = vouch.gelu %h approximate "tanh" : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %p = vouch.linear %g, %w2 : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x1xf32>
  %l = vouch.mse_loss %p, %y : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<f32>
  vouch.output "pred" %p : tensor<1x1xf32>
  vouch.loss %l : tensor<f32>
}

// -----

// tanh's VJP reads its result, not its operand: nothing reads h in the backward
// pass, so recomputing tanh would keep h alive instead; it is not recomputed.

// AT8-LABEL: vouch.model "tanh_mlp"
// AT8: %[[T:.*]] = vouch.tanh {{.*}} {vouch.node = 1 : i64}
// AT8-NOT: vouch.tanh {{.*}} {vouch.vjp_of
// AT8: vouch.matmul %{{.*}}, %[[T]] {transpose_lhs, vouch.vjp_of = 2 : i64}
// AT9-LABEL: vouch.model "tanh_mlp"
// AT9-NOT: vouch.tanh {{.*}} {vouch.vjp_of
vouch.model "tanh_mlp" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x2xf32>
  %y = vouch.target "y" : tensor<1x1xf32>
  %w1 = vouch.param "w1" = "xavier_uniform" : tensor<8x2xf32>
  %w2 = vouch.param "w2" = "xavier_uniform" : tensor<1x8xf32>
  %h = vouch.linear %x, %w1 : (tensor<1x2xf32>, tensor<8x2xf32>) -> tensor<1x8xf32>
  %t = vouch.tanh %h : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %p = vouch.linear %t, %w2 : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x1xf32>
  %l = vouch.mse_loss %p, %y : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<f32>
  vouch.output "pred" %p : tensor<1x1xf32>
  vouch.loss %l : tensor<f32>
}

// -----

// layer_norm's output feeds a linear (its VJP reads y for dW) and
// layer_norm_grad reads x: with recompute-layer-norm, at 8 elements the
// backward pass normalises x again, a layer_norm of x alone tagged with the
// linear's node, right before dW; layer_norm_grad still reads x. Below the
// threshold, or without recompute-layer-norm (the default), y is kept.

// AT8-LABEL: vouch.model "norm"
// AT8: %[[X:.*]] = vouch.input "x"
// AT8: %[[Y:.*]] = vouch.layer_norm %[[X]] weight %[[W:[^ ]*]] eps 1.000000e-05 {vouch.node = 0 : i64}
// AT8: vouch.linear %[[Y]], {{.*}} {vouch.node = 1 : i64}
// AT8-NOT: %[[Y]]
// AT8: %[[AGAIN:.*]] = vouch.layer_norm %[[X]] weight %[[W]] eps 1.000000e-05 {vouch.vjp_of = 1 : i64}
// AT8-NEXT: vouch.matmul %{{.*}}, %[[AGAIN]] {transpose_lhs, vouch.vjp_of = 1 : i64}
// AT8: vouch.layer_norm_grad %{{.*}}, %[[X]] weight %[[W]] eps 1.000000e-05 {vouch.vjp_of = 0 : i64}
// AT9-LABEL: vouch.model "norm"
// AT9-NOT: vouch.layer_norm {{.*}} {vouch.vjp_of
// AT9: vouch.layer_norm_grad
// NOLN-LABEL: vouch.model "norm"
// NOLN-NOT: vouch.layer_norm {{.*}} {vouch.vjp_of
// NOLN: vouch.layer_norm_grad
vouch.model "norm" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x8xf32>
  %y = vouch.target "y" : tensor<1x1xf32>
  %w = vouch.param "w" = "ones" : tensor<8xf32>
  %w2 = vouch.param "w2" = "xavier_uniform" : tensor<1x8xf32>
  %n = vouch.layer_norm %x weight %w eps 1.0e-05 : (tensor<1x8xf32>, tensor<8xf32>) -> tensor<1x8xf32>
  %p = vouch.linear %n, %w2 : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x1xf32>
  %l = vouch.mse_loss %p, %y : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<f32>
  vouch.output "pred" %p : tensor<1x1xf32>
  vouch.loss %l : tensor<f32>
}

// -----

// With an addend (a residual stream: layer_norm(x plus r) writes the sum too),
// layer_norm_grad reads the sum, so the backward pass normalises the sum alone;
// the forward's x and r are not read again.

// AT8-LABEL: vouch.model "residual_norm"
// AT8: %{{[^ ,]*}}, %[[S:[^ ]*]] = vouch.layer_norm %{{.*}} plus %{{.*}} eps 1.000000e-05 {vouch.node = 1 : i64}
// AT8: %[[AGAIN:.*]] = vouch.layer_norm %[[S]] eps 1.000000e-05 {vouch.vjp_of = 2 : i64}
// AT8-NEXT: vouch.matmul %{{.*}}, %[[AGAIN]] {transpose_lhs, vouch.vjp_of = 2 : i64}
// AT8: vouch.layer_norm_grad %{{.*}}, %[[S]] plus
// AT9-LABEL: vouch.model "residual_norm"
// AT9-NOT: vouch.layer_norm {{.*}} {vouch.vjp_of
// NOLN-LABEL: vouch.model "residual_norm"
// NOLN-NOT: vouch.layer_norm {{.*}} {vouch.vjp_of
vouch.model "residual_norm" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x8xf32>
  %y = vouch.target "y" : tensor<1x8xf32>
  %w1 = vouch.param "w1" = "xavier_uniform" : tensor<8x8xf32>
  %w2 = vouch.param "w2" = "xavier_uniform" : tensor<8x8xf32>
  %h = vouch.linear %x, %w1 : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>
  %n, %s = vouch.layer_norm %h plus %x eps 1.0e-05 : (tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>)
  %p = vouch.linear %n, %w2 : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>
  %o = vouch.add %p, %s : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %l = vouch.mse_loss %o, %y : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<f32>
  vouch.output "pred" %o : tensor<1x8xf32>
  vouch.loss %l : tensor<f32>
}
