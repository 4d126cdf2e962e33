// RUN: %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-autodiff,vouch-fold-linear-bias-grad))' | FileCheck %s
// RUN: %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-autodiff,vouch-fold-linear-bias-grad{small-multiply-adds=65536 small-max-k=256}))' | FileCheck %s --check-prefix=SMALL
// RUN: %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-autodiff))' | FileCheck %s --check-prefix=UNFOLDED

// A linear with a bias: its VJP's weight product and bias sums read the same
// gradient; the fold makes them one linear_weight_grad with the product's node.
// UNFOLDED-LABEL: vouch.model "biased"
// UNFOLDED: %[[DW:[^ ]*]] = vouch.matmul %[[DY:[^,]*]], %{{[^ ]*}} {transpose_lhs, vouch.vjp_of = [[N:[0-9]+]] : i64}
// UNFOLDED: %[[DB:[^ ]*]] = vouch.reduce_sum %[[DY]] axes [0] {vouch.vjp_of = [[N]] : i64}
// UNFOLDED: vouch.param_grad "w" %[[DW]]
// UNFOLDED: vouch.param_grad "b" %[[DB]]
// CHECK-LABEL: vouch.model "biased"
// CHECK-NOT: vouch.reduce_sum
// CHECK-NOT: transpose_lhs
// CHECK: %weight_grad, %bias_grad = vouch.linear_weight_grad %{{[^,]*}}, %{{[^ ]*}} {vouch.vjp_of = 0 : i64} : (tensor<32x24xf32>, tensor<32x16xf32>) -> (tensor<24x16xf32>, tensor<24xf32>)
// CHECK-NOT: vouch.reduce_sum
// CHECK-NOT: transpose_lhs
// CHECK: vouch.param_grad "w" %weight_grad
// CHECK: vouch.param_grad "b" %bias_grad
// Under checked_cuda's small-product rule this product (24·16·32 multiply-adds,
// k = 32) runs vouch's own kernel: left alone.
// SMALL-LABEL: vouch.model "biased"
// SMALL-NOT: linear_weight_grad
// SMALL: vouch.reduce_sum
vouch.model "biased" attributes {batch = 32 : i64} {
  %x = vouch.input "x" : tensor<32x16xf32>
  %t = vouch.target "t" : tensor<32x24xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<24x16xf32>
  %b = vouch.param "b" = zeros : tensor<24xf32>
  %y = vouch.linear %x, %w, %b : (tensor<32x16xf32>, tensor<24x16xf32>, tensor<24xf32>) -> tensor<32x24xf32>
  %l = vouch.mse_loss %y, %t : (tensor<32x24xf32>, tensor<32x24xf32>) -> tensor<f32>
  vouch.output "y" %y : tensor<32x24xf32>
  vouch.loss %l : tensor<f32>
}

// f64 and leading axes (the gradient reshaped to [rows, out] first): folded.
// SMALL-LABEL: vouch.model "f64_batched"
// CHECK-LABEL: vouch.model "f64_batched"
// CHECK: vouch.linear_weight_grad {{.*}} : (tensor<32x8xf64>, tensor<32x16xf64>) -> (tensor<8x16xf64>, tensor<8xf64>)
vouch.model "f64_batched" attributes {batch = 4 : i64} {
  %x = vouch.input "x" : tensor<4x8x16xf64>
  %t = vouch.target "t" : tensor<4x8x8xf64>
  %w = vouch.param "w" = xavier_uniform : tensor<8x16xf64>
  %b = vouch.param "b" = zeros : tensor<8xf64>
  %y = vouch.linear %x, %w, %b : (tensor<4x8x16xf64>, tensor<8x16xf64>, tensor<8xf64>) -> tensor<4x8x8xf64>
  %l = vouch.mse_loss %y, %t : (tensor<4x8x8xf64>, tensor<4x8x8xf64>) -> tensor<f64>
  vouch.loss %l : tensor<f64>
}

// Left alone: out = 6 (a tensor-core precision would pad the product); in = 12;
// no bias (no sums to fold).
// CHECK-LABEL: vouch.model "odd_out"
// CHECK-NOT: linear_weight_grad
// CHECK: vouch.reduce_sum
// CHECK-LABEL: vouch.model "odd_in"
// CHECK-NOT: linear_weight_grad
// CHECK: vouch.reduce_sum
// CHECK-LABEL: vouch.model "no_bias"
// CHECK-NOT: linear_weight_grad
// CHECK: vouch.matmul {{.*}}transpose_lhs
vouch.model "odd_out" attributes {batch = 32 : i64} {
  %x = vouch.input "x" : tensor<32x16xf32>
  %t = vouch.target "t" : tensor<32x6xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<6x16xf32>
  %b = vouch.param "b" = zeros : tensor<6xf32>
  %y = vouch.linear %x, %w, %b : (tensor<32x16xf32>, tensor<6x16xf32>, tensor<6xf32>) -> tensor<32x6xf32>
  %l = vouch.mse_loss %y, %t : (tensor<32x6xf32>, tensor<32x6xf32>) -> tensor<f32>
  vouch.loss %l : tensor<f32>
}
vouch.model "odd_in" attributes {batch = 32 : i64} {
  %x = vouch.input "x" : tensor<32x12xf32>
  %t = vouch.target "t" : tensor<32x8xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<8x12xf32>
  %b = vouch.param "b" = zeros : tensor<8xf32>
  %y = vouch.linear %x, %w, %b : (tensor<32x12xf32>, tensor<8x12xf32>, tensor<8xf32>) -> tensor<32x8xf32>
  %l = vouch.mse_loss %y, %t : (tensor<32x8xf32>, tensor<32x8xf32>) -> tensor<f32>
  vouch.loss %l : tensor<f32>
}
vouch.model "no_bias" attributes {batch = 32 : i64} {
  %x = vouch.input "x" : tensor<32x16xf32>
  %t = vouch.target "t" : tensor<32x8xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<8x16xf32>
  %y = vouch.linear %x, %w : (tensor<32x16xf32>, tensor<8x16xf32>) -> tensor<32x8xf32>
  %l = vouch.mse_loss %y, %t : (tensor<32x8xf32>, tensor<32x8xf32>) -> tensor<f32>
  vouch.loss %l : tensor<f32>
}
