// RUN: %vouch-opt %s -split-input-file --pass-pipeline='builtin.module(vouch.model(vouch-decompose))' --mlir-print-debuginfo | FileCheck %s
// RUN: %vouch-opt %s -split-input-file --pass-pipeline='builtin.module(vouch.model(vouch-decompose{attention=fused}))' | FileCheck %s --check-prefix=FUSED
// RUN: not %vouch-opt %s -split-input-file --pass-pipeline='builtin.module(vouch.model(vouch-plan{profile=checked_cuda},vouch-gate))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNDECOMPOSED

// A convolution has one form, its composed one: attention=fused (the cuda
// builds' default) decomposes it all the same.
// FUSED-LABEL: vouch.model "grouped"
// FUSED-NOT: vouch.conv
// FUSED: vouch.im2col
// FUSED-LABEL: vouch.model "transposed"
// FUSED: vouch.col2im

// Planned without vouch-decompose, the composite is a gate failure.
// UNDECOMPOSED: model.mlir:20:8: error: assurance gate [capsule]: vouch.conv is a composite op: vouch-decompose replaces it by its composed form's ops before planning

// conv's composed form: im2col [G, C/G·K, N, *out]; the weight viewed [G,
// O/G, C/G·K] times the columns viewed [G, C/G·K, N·L] (one product batched
// over the groups); [O, N, L] permuted to [N, O, L]; the bias broadcast over
// channel axis 1 and added; every op located at the call, named after it.
// CHECK-LABEL: vouch.model "grouped"
// CHECK-NOT: vouch.conv
// CHECK: %[[X:.*]] = vouch.input "x"
// CHECK: %[[W:.*]] = vouch.param "w"
// CHECK: %[[B:.*]] = vouch.param "b"
// CHECK: %[[C:.*]] = vouch.im2col %[[X]] kernel [3, 2] stride [2, 1] padding [1, 0] dilation [1, 2] groups 2 : (tensor<2x4x6x7xf32>) -> tensor<2x12x2x3x5xf32> loc(#[[LOC:.*]])
// CHECK: %[[WV:.*]] = vouch.reshape %[[W]] : (tensor<6x2x3x2xf32>) -> tensor<2x3x12xf32> loc(#[[LOC]])
// CHECK: %[[CV:.*]] = vouch.reshape %[[C]] : (tensor<2x12x2x3x5xf32>) -> tensor<2x12x30xf32> loc(#[[LOC]])
// CHECK: %[[P:.*]] = vouch.matmul %[[WV]], %[[CV]] : (tensor<2x3x12xf32>, tensor<2x12x30xf32>) -> tensor<2x3x30xf32> loc(#[[LOC]])
// CHECK: %[[ONL:.*]] = vouch.reshape %[[P]] : (tensor<2x3x30xf32>) -> tensor<6x2x15xf32>
// CHECK: %[[NOL:.*]] = vouch.permute %[[ONL]] perm [1, 0, 2] : (tensor<6x2x15xf32>) -> tensor<2x6x15xf32>
// CHECK: %[[Y:.*]] = vouch.reshape %[[NOL]] : (tensor<2x6x15xf32>) -> tensor<2x6x3x5xf32>
// CHECK: %[[BB:.*]] = vouch.broadcast %[[B]] dims [1] : (tensor<6xf32>) -> tensor<2x6x3x5xf32>
// CHECK: %[[S:.*]] = vouch.add %[[Y]], %[[BB]]
// CHECK: vouch.output "y" %[[S]]
// CHECK: #[[LOC]] = loc("vouch.conv"(#{{.*}}))
vouch.model "grouped" attributes {batch = 2 : i64} {
  %x = vouch.input "x" : tensor<2x4x6x7xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<6x2x3x2xf32>
  %b = vouch.param "b" = zeros : tensor<6xf32>
  %y = vouch.conv %x, %w, %b stride [2, 1] padding [1, 0] dilation [1, 2] groups 2 : (tensor<2x4x6x7xf32>, tensor<6x2x3x2xf32>, tensor<6xf32>) -> tensor<2x6x3x5xf32> loc("model.mlir":20:8)
  vouch.output "y" %y : tensor<2x6x3x5xf32>
}

// -----

// One group and one batch entry: rank-2 operands, no permute.
// CHECK-LABEL: vouch.model "single"
// CHECK: %[[C:.*]] = vouch.im2col %{{.*}} kernel [3] stride [1] padding [1] dilation [1] groups 1 : (tensor<1x3x5xf32>) -> tensor<1x9x1x5xf32>
// CHECK: %[[CV:.*]] = vouch.reshape %[[C]] : (tensor<1x9x1x5xf32>) -> tensor<9x5xf32>
// CHECK: %[[P:.*]] = vouch.matmul %{{.*}}, %[[CV]] : (tensor<4x9xf32>, tensor<9x5xf32>) -> tensor<4x5xf32>
// CHECK-NOT: vouch.permute
// CHECK: vouch.reshape %[[P]] : (tensor<4x5xf32>) -> tensor<1x4x5xf32>
vouch.model "single" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x3x5xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<4x3x3xf32>
  %y = vouch.conv %x, %w stride [1] padding [1] dilation [1] groups 1 : (tensor<1x3x5xf32>, tensor<4x3x3xf32>) -> tensor<1x4x5xf32>
  vouch.output "y" %y : tensor<1x4x5xf32>
}

// -----

// conv_transpose's composed form: x [N, C, L] permuted to [C, N, L] and viewed
// [G, C/G, N·L]; the weight [C, O/G, *k] viewed [G, C/G, O/G·K] times it
// through transpose_lhs (no transposed copy); the columns [G, O/G·K, N, *in]
// folded by col2im into [N, O, *out]; then the bias.
// CHECK-LABEL: vouch.model "transposed"
// CHECK: %[[X:.*]] = vouch.input "x"
// CHECK: %[[XR:.*]] = vouch.reshape %[[X]] : (tensor<2x4x3x2xf32>) -> tensor<2x4x6xf32>
// CHECK: %[[XP:.*]] = vouch.permute %[[XR]] perm [1, 0, 2] : (tensor<2x4x6xf32>) -> tensor<4x2x6xf32>
// CHECK: %[[XV:.*]] = vouch.reshape %[[XP]] : (tensor<4x2x6xf32>) -> tensor<2x2x12xf32>
// CHECK: %[[WV:.*]] = vouch.reshape %{{.*}} : (tensor<4x1x2x3xf32>) -> tensor<2x2x6xf32>
// CHECK: %[[P:.*]] = vouch.matmul %[[WV]], %[[XV]] {transpose_lhs} : (tensor<2x2x6xf32>, tensor<2x2x12xf32>) -> tensor<2x6x12xf32>
// CHECK: %[[C:.*]] = vouch.reshape %[[P]] : (tensor<2x6x12xf32>) -> tensor<2x6x2x3x2xf32>
// CHECK: %[[Y:.*]] = vouch.col2im %[[C]] kernel [2, 3] stride [2, 1] padding [0, 1] dilation [1, 2] groups 2 : (tensor<2x6x2x3x2xf32>) -> tensor<2x2x7x4xf32> loc(#[[LOC:.*]])
// CHECK: vouch.broadcast %{{.*}} dims [1] : (tensor<2xf32>) -> tensor<2x2x7x4xf32>
// CHECK: #[[LOC]] = loc("vouch.conv_transpose"(#{{.*}}))
vouch.model "transposed" attributes {batch = 2 : i64} {
  %x = vouch.input "x" : tensor<2x4x3x2xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<4x1x2x3xf32>
  %b = vouch.param "b" = zeros : tensor<2xf32>
  %y = vouch.conv_transpose %x, %w, %b stride [2, 1] padding [0, 1] output_padding [1, 0] dilation [1, 2] groups 2 : (tensor<2x4x3x2xf32>, tensor<4x1x2x3xf32>, tensor<2xf32>) -> tensor<2x2x7x4xf32>
  vouch.output "y" %y : tensor<2x2x7x4xf32>
}
