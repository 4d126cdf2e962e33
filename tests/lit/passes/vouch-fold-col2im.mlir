// RUN: %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-decompose,vouch-autodiff,vouch-fold-col2im))' | FileCheck %s

// vouch-fold-col2im (cuda builds): in a VJP, col2im(reshape(matmul {transpose_lhs}))
// becomes one col2im_matmul with col2im's attributes and node, the columns'
// trailing extents its grid: the dx of each conv (one group: rank-2 operands;
// two groups: rank 3, batched over them). conv_transpose's forward (product and
// col2im are forward nodes of their own) stays composed, and no col2im is left
// in a VJP.
// CHECK-LABEL: vouch.model "folds"
// CHECK: vouch.im2col {{.*}}vouch.node = 0
// CHECK: vouch.matmul {{.*}}{transpose_lhs, vouch.node = [[PRODUCT:[0-9]+]] : i64}
// CHECK: vouch.col2im {{.*}}vouch.node = [[FOLD:[0-9]+]] : i64} : (tensor<1x12x2x6x6xf32>) -> tensor<2x3x12x12xf32>
// CHECK-NOT: vouch.col2im {{.*}}vjp_of
// CHECK: %[[DW1:.*]] = vouch.matmul {{.*}}{transpose_rhs, vouch.vjp_of = 10 : i64} : (tensor<2x3x72xf32>, tensor<2x18x72xf32>) -> tensor<2x3x18xf32>
// CHECK-NOT: vouch.col2im {{.*}}vjp_of
// CHECK: vouch.col2im_matmul %{{.*}}, %{{.*}} kernel [3, 3] stride [1, 1] padding [1, 1] dilation [1, 1] grid [6, 6] groups 2 {vouch.vjp_of = 7 : i64} : (tensor<2x3x18xf32>, tensor<2x3x72xf32>) -> tensor<2x4x6x6xf32>
// CHECK-NOT: vouch.col2im {{.*}}vjp_of
// CHECK: vouch.matmul {{.*}}{transpose_rhs, vouch.vjp_of = 3 : i64} : (tensor<4x72xf32>, tensor<36x72xf32>) -> tensor<4x36xf32>
// CHECK-NOT: vouch.matmul {{.*}}transpose_lhs, vouch.vjp_of
// CHECK: vouch.col2im_matmul %{{.*}}, %{{.*}} kernel [3, 3] stride [1, 1] padding [1, 1] dilation [1, 1] grid [6, 6] groups 1 {vouch.vjp_of = 0 : i64} : (tensor<4x36xf32>, tensor<4x72xf32>) -> tensor<2x4x6x6xf32>
// CHECK-NOT: vouch.col2im
vouch.model "folds" attributes {batch = 2 : i64} {
  %x = vouch.param "x" = xavier_uniform : tensor<2x4x6x6xf32>
  %t = vouch.target "t" : tensor<2x3x12x12xf32>
  %w0 = vouch.param "w0" = xavier_uniform : tensor<4x4x3x3xf32>
  %w1 = vouch.param "w1" = xavier_uniform : tensor<6x2x3x3xf32>
  %w2 = vouch.param "w2" = xavier_uniform : tensor<6x3x2x2xf32>
  %h0 = vouch.conv %x, %w0 stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : (tensor<2x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<2x4x6x6xf32>
  %h1 = vouch.conv %h0, %w1 stride [1, 1] padding [1, 1] dilation [1, 1] groups 2 : (tensor<2x4x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x6x6xf32>
  %y = vouch.conv_transpose %h1, %w2 stride [2, 2] padding [0, 0] output_padding [0, 0] dilation [1, 1] groups 1 : (tensor<2x6x6x6xf32>, tensor<6x3x2x2xf32>) -> tensor<2x3x12x12xf32>
  %l = vouch.mse_loss %y, %t : (tensor<2x3x12x12xf32>, tensor<2x3x12x12xf32>) -> tensor<f32>
  vouch.output "y" %y : tensor<2x3x12x12xf32>
  vouch.loss %l : tensor<f32>
}
