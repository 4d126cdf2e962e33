// RUN: %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-decompose,vouch-autodiff,vouch-fold-col2im))' | FileCheck %s

// vouch-fold-col2im (cuda builds): in a VJP, col2im(reshape(matmul {transpose_lhs}))
// becomes one col2im_matmul with col2im's attributes and node, the columns'
// trailing extents its grid: the dx of a 3×3 conv of 32 channels per group (one
// group: rank-2 operands; two groups: rank 3, batched over them). Left composed:
// a 1×1 conv's dx (its columns are the image's size: nothing to save), a grouped
// conv's of 16 channels per group (fewer than half the kernel's 64-channel
// tile), and conv_transpose's forward (product and col2im are forward nodes of
// their own).
// CHECK-LABEL: vouch.model "folds"
// CHECK: vouch.matmul {{.*}}{transpose_lhs, vouch.node = 32 : i64}
// CHECK: vouch.col2im {{.*}}vouch.node = 34 : i64} : (tensor<1x12x2x6x6xf32>) -> tensor<2x3x12x12xf32>
// The grouped conv of 16 channels per group, then the 1×1: composed.
// CHECK: vouch.matmul {{.*}}{transpose_lhs, vouch.vjp_of = 24 : i64} : (tensor<4x4x144xf32>, tensor<4x4x72xf32>) -> tensor<4x144x72xf32>
// CHECK: vouch.col2im {{.*}} groups 4 {vouch.vjp_of = 21 : i64} : (tensor<4x144x2x6x6xf32>) -> tensor<2x64x6x6xf32>
// CHECK: vouch.matmul {{.*}}{transpose_lhs, vouch.vjp_of = 17 : i64} : (tensor<64x64xf32>, tensor<64x72xf32>) -> tensor<64x72xf32>
// CHECK: vouch.col2im {{.*}}kernel [1, 1]{{.*}}{vouch.vjp_of = 14 : i64} : (tensor<1x64x2x6x6xf32>) -> tensor<2x64x6x6xf32>
// The two 3×3 convs of 32 channels per group: folded.
// CHECK-NOT: vouch.col2im {{.*}}vjp_of
// CHECK: vouch.col2im_matmul %{{.*}}, %{{.*}} kernel [3, 3] stride [1, 1] padding [1, 1] dilation [1, 1] grid [6, 6] groups 2 {vouch.vjp_of = 7 : i64} : (tensor<2x32x288xf32>, tensor<2x32x72xf32>) -> tensor<2x64x6x6xf32>
// CHECK-NOT: vouch.matmul {{.*}}transpose_lhs, vouch.vjp_of
// CHECK: vouch.col2im_matmul %{{.*}}, %{{.*}} kernel [3, 3] stride [1, 1] padding [1, 1] dilation [1, 1] grid [6, 6] groups 1 {vouch.vjp_of = 0 : i64} : (tensor<64x288xf32>, tensor<64x72xf32>) -> tensor<2x32x6x6xf32>
// CHECK-NOT: vouch.col2im
vouch.model "folds" attributes {batch = 2 : i64} {
  %x = vouch.param "x" = xavier_uniform : tensor<2x32x6x6xf32>
  %t = vouch.target "t" : tensor<2x3x12x12xf32>
  %w0 = vouch.param "w0" = xavier_uniform : tensor<64x32x3x3xf32>
  %w1 = vouch.param "w1" = xavier_uniform : tensor<64x32x3x3xf32>
  %w2 = vouch.param "w2" = xavier_uniform : tensor<64x64x1x1xf32>
  %w3 = vouch.param "w3" = xavier_uniform : tensor<16x16x3x3xf32>
  %w4 = vouch.param "w4" = xavier_uniform : tensor<16x3x2x2xf32>
  %h0 = vouch.conv %x, %w0 stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : (tensor<2x32x6x6xf32>, tensor<64x32x3x3xf32>) -> tensor<2x64x6x6xf32>
  %h1 = vouch.conv %h0, %w1 stride [1, 1] padding [1, 1] dilation [1, 1] groups 2 : (tensor<2x64x6x6xf32>, tensor<64x32x3x3xf32>) -> tensor<2x64x6x6xf32>
  %h2 = vouch.conv %h1, %w2 stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 : (tensor<2x64x6x6xf32>, tensor<64x64x1x1xf32>) -> tensor<2x64x6x6xf32>
  %h3 = vouch.conv %h2, %w3 stride [1, 1] padding [1, 1] dilation [1, 1] groups 4 : (tensor<2x64x6x6xf32>, tensor<16x16x3x3xf32>) -> tensor<2x16x6x6xf32>
  %y = vouch.conv_transpose %h3, %w4 stride [2, 2] padding [0, 0] output_padding [0, 0] dilation [1, 1] groups 1 : (tensor<2x16x6x6xf32>, tensor<16x3x2x2xf32>) -> tensor<2x3x12x12xf32>
  %l = vouch.mse_loss %y, %t : (tensor<2x3x12x12xf32>, tensor<2x3x12x12xf32>) -> tensor<f32>
  vouch.output "y" %y : tensor<2x3x12x12xf32>
  vouch.loss %l : tensor<f32>
}
