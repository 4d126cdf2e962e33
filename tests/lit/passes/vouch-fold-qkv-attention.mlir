// RUN: %vouch-opt %s -split-input-file --pass-pipeline='builtin.module(vouch.model(vouch-decompose{attention=fused},vouch-fold-qkv-attention))' --mlir-print-debuginfo | FileCheck %s
// RUN: %vouch-opt %s -split-input-file --pass-pipeline='builtin.module(vouch.model(vouch-decompose{attention=fused},vouch-fold-qkv-attention,vouch-autodiff))' | FileCheck %s --check-prefix=GRAD
// RUN: %vouch-opt %s -split-input-file --pass-pipeline='builtin.module(vouch.model(vouch-decompose,vouch-fold-qkv-attention))' | FileCheck %s --check-prefix=COMPOSED

// vouch-fold-qkv-attention: a self-attention whose q, k and v are sliced out of
// one projection [B, T, 3·H·d], reshaped to [B, T, H, d] and permuted to
// [B, H, T, d], and whose result is permuted and reshaped back, becomes one
// qkv_attention of the projection with flash_attention's causal / mask, scale and
// location; its VJP is one qkv_attention_grad writing dqkv (no permute, slice or
// concat left on either side). The composed form has no flash_attention: nothing
// folds.
// CHECK-LABEL: vouch.model "causal"
// CHECK-NOT: vouch.slice
// CHECK-NOT: vouch.permute
// CHECK: %[[O:.*]], %{{.*}} = vouch.qkv_attention %[[QKV:.*]] heads 2 causal scale 5.000000e-01 : (tensor<2x3x12xf32>) -> (tensor<2x3x4xf32>, tensor<2x2x3xf32>) loc(#[[LOC:.*]])
// CHECK-NOT: vouch.permute
// CHECK: vouch.output "y" %[[O]]
// CHECK: #[[LOC]] = loc("vouch.scaled_dot_product_attention"(#{{.*}}))
// GRAD-LABEL: vouch.model "causal"
// GRAD: %[[O:.*]], %[[LSE:.*]] = vouch.qkv_attention %[[QKV:[^ ]*]] heads 2 causal scale 5.000000e-01 {vouch.node = [[N:[0-9]+]] : i64}
// GRAD: vouch.qkv_attention_grad %{{.*}}, %[[QKV]], %[[O]], %[[LSE]] heads 2 causal scale 5.000000e-01 {vouch.vjp_of = [[N]] : i64} : (tensor<2x3x4xf32>, tensor<2x3x12xf32>, tensor<2x3x4xf32>, tensor<2x2x3xf32>) -> tensor<2x3x12xf32>
// GRAD-NOT: vouch.permute
// GRAD-NOT: vouch.concat
// GRAD-NOT: vouch.slice
// COMPOSED-LABEL: vouch.model "causal"
// COMPOSED-NOT: vouch.qkv_attention
// COMPOSED: vouch.masked_softmax
// COMPOSED-NOT: vouch.qkv_attention
vouch.model "causal" attributes {batch = 2 : i64} {
  %x = vouch.input "x" : tensor<2x3x12xf32>
  %t = vouch.target "t" : tensor<2x3x4xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<12x12xf32>
  %qkv = vouch.linear %x, %w : (tensor<2x3x12xf32>, tensor<12x12xf32>) -> tensor<2x3x12xf32>
  %qs = vouch.slice %qkv axis 2 start 0 end 4 step 1 : (tensor<2x3x12xf32>) -> tensor<2x3x4xf32>
  %ks = vouch.slice %qkv axis 2 start 4 end 8 step 1 : (tensor<2x3x12xf32>) -> tensor<2x3x4xf32>
  %vs = vouch.slice %qkv axis 2 start 8 end 12 step 1 : (tensor<2x3x12xf32>) -> tensor<2x3x4xf32>
  %qr = vouch.reshape %qs : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
  %kr = vouch.reshape %ks : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
  %vr = vouch.reshape %vs : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
  %q = vouch.permute %qr perm [0, 2, 1, 3] : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
  %k = vouch.permute %kr perm [0, 2, 1, 3] : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
  %v = vouch.permute %vr perm [0, 2, 1, 3] : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
  %a = vouch.scaled_dot_product_attention %q, %k, %v causal scale 0.5 : (tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>) -> tensor<2x2x3x2xf32>
  %ap = vouch.permute %a perm [0, 2, 1, 3] : (tensor<2x2x3x2xf32>) -> tensor<2x3x2x2xf32>
  %y = vouch.reshape %ap : (tensor<2x3x2x2xf32>) -> tensor<2x3x4xf32>
  %l = vouch.mse_loss %y, %t : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<f32>
  vouch.output "y" %y : tensor<2x3x4xf32>
  vouch.loss %l : tensor<f32>
}

// -----

// A padding mask [B, 1, T, T] over the heads: folded, the mask kept.
// CHECK-LABEL: vouch.model "masked"
// CHECK: vouch.qkv_attention %{{.*}} mask %{{.*}} heads 2 scale 5.000000e-01 : (tensor<2x3x12xf32>, tensor<2x1x3x3xi1>) -> (tensor<2x3x4xf32>, tensor<2x2x3xf32>)
// GRAD-LABEL: vouch.model "masked"
// GRAD: vouch.qkv_attention_grad {{.*}} mask %{{.*}} heads 2 scale 5.000000e-01
vouch.model "masked" attributes {batch = 2 : i64} {
  %x = vouch.input "x" : tensor<2x3x12xf32>
  %m = vouch.input "m" : tensor<2x1x3x3xi1>
  %t = vouch.target "t" : tensor<2x3x4xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<12x12xf32>
  %qkv = vouch.linear %x, %w : (tensor<2x3x12xf32>, tensor<12x12xf32>) -> tensor<2x3x12xf32>
  %qs = vouch.slice %qkv axis 2 start 0 end 4 step 1 : (tensor<2x3x12xf32>) -> tensor<2x3x4xf32>
  %ks = vouch.slice %qkv axis 2 start 4 end 8 step 1 : (tensor<2x3x12xf32>) -> tensor<2x3x4xf32>
  %vs = vouch.slice %qkv axis 2 start 8 end 12 step 1 : (tensor<2x3x12xf32>) -> tensor<2x3x4xf32>
  %qr = vouch.reshape %qs : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
  %kr = vouch.reshape %ks : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
  %vr = vouch.reshape %vs : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
  %q = vouch.permute %qr perm [0, 2, 1, 3] : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
  %k = vouch.permute %kr perm [0, 2, 1, 3] : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
  %v = vouch.permute %vr perm [0, 2, 1, 3] : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
  %a = vouch.scaled_dot_product_attention %q, %k, %v mask %m scale 0.5 : (tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x1x3x3xi1>) -> tensor<2x2x3x2xf32>
  %ap = vouch.permute %a perm [0, 2, 1, 3] : (tensor<2x2x3x2xf32>) -> tensor<2x3x2x2xf32>
  %y = vouch.reshape %ap : (tensor<2x3x2x2xf32>) -> tensor<2x3x4xf32>
  %l = vouch.mse_loss %y, %t : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<f32>
  vouch.output "y" %y : tensor<2x3x4xf32>
  vouch.loss %l : tensor<f32>
}

// -----

// Left alone: heads also used by another attention, and k's and v's heads
// swapped in qkv.
// CHECK-LABEL: vouch.model "unfolded"
// CHECK-NOT: vouch.qkv_attention
// CHECK-COUNT-3: vouch.flash_attention
// CHECK-NOT: vouch.qkv_attention
vouch.model "unfolded" attributes {batch = 2 : i64} {
  %x = vouch.input "x" : tensor<2x3x12xf32>
  %t = vouch.target "t" : tensor<2x3x4xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<12x12xf32>
  %qkv = vouch.linear %x, %w : (tensor<2x3x12xf32>, tensor<12x12xf32>) -> tensor<2x3x12xf32>
  // k and v swapped
  %qs = vouch.slice %qkv axis 2 start 0 end 4 step 1 : (tensor<2x3x12xf32>) -> tensor<2x3x4xf32>
  %ks = vouch.slice %qkv axis 2 start 8 end 12 step 1 : (tensor<2x3x12xf32>) -> tensor<2x3x4xf32>
  %vs = vouch.slice %qkv axis 2 start 4 end 8 step 1 : (tensor<2x3x12xf32>) -> tensor<2x3x4xf32>
  %qr = vouch.reshape %qs : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
  %kr = vouch.reshape %ks : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
  %vr = vouch.reshape %vs : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
  %q = vouch.permute %qr perm [0, 2, 1, 3] : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
  %k = vouch.permute %kr perm [0, 2, 1, 3] : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
  %v = vouch.permute %vr perm [0, 2, 1, 3] : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
  %a = vouch.scaled_dot_product_attention %q, %k, %v causal scale 0.5 : (tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>) -> tensor<2x2x3x2xf32>
  %ap = vouch.permute %a perm [0, 2, 1, 3] : (tensor<2x2x3x2xf32>) -> tensor<2x3x2x2xf32>
  %y = vouch.reshape %ap : (tensor<2x3x2x2xf32>) -> tensor<2x3x4xf32>
  // in order, but q's heads also feed another attention
  %qs2 = vouch.slice %qkv axis 2 start 0 end 4 step 1 : (tensor<2x3x12xf32>) -> tensor<2x3x4xf32>
  %ks2 = vouch.slice %qkv axis 2 start 4 end 8 step 1 : (tensor<2x3x12xf32>) -> tensor<2x3x4xf32>
  %vs2 = vouch.slice %qkv axis 2 start 8 end 12 step 1 : (tensor<2x3x12xf32>) -> tensor<2x3x4xf32>
  %qr2 = vouch.reshape %qs2 : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
  %kr2 = vouch.reshape %ks2 : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
  %vr2 = vouch.reshape %vs2 : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
  %q2 = vouch.permute %qr2 perm [0, 2, 1, 3] : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
  %k2 = vouch.permute %kr2 perm [0, 2, 1, 3] : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
  %v2 = vouch.permute %vr2 perm [0, 2, 1, 3] : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
  %a2 = vouch.scaled_dot_product_attention %q2, %k2, %v2 causal scale 0.5 : (tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>) -> tensor<2x2x3x2xf32>
  %a3 = vouch.scaled_dot_product_attention %q2, %k, %v causal scale 0.5 : (tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>) -> tensor<2x2x3x2xf32>
  %ap2 = vouch.permute %a2 perm [0, 2, 1, 3] : (tensor<2x2x3x2xf32>) -> tensor<2x3x2x2xf32>
  %y2 = vouch.reshape %ap2 : (tensor<2x3x2x2xf32>) -> tensor<2x3x4xf32>
  %s = vouch.add %y, %y2 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %l = vouch.mse_loss %s, %t : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<f32>
  vouch.output "y" %s : tensor<2x3x4xf32>
  vouch.output "a3" %a3 : tensor<2x2x3x2xf32>
  vouch.loss %l : tensor<f32>
}

// -----

// Left alone: k's and v's heads taken from each other's place in qkv.
// CHECK-LABEL: vouch.model "swapped"
// CHECK-NOT: vouch.qkv_attention
// CHECK: vouch.flash_attention
// CHECK-NOT: vouch.qkv_attention
vouch.model "swapped" attributes {batch = 2 : i64} {
  %x = vouch.input "x" : tensor<2x3x12xf32>
  %t = vouch.target "t" : tensor<2x3x4xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<12x12xf32>
  %qkv = vouch.linear %x, %w : (tensor<2x3x12xf32>, tensor<12x12xf32>) -> tensor<2x3x12xf32>
  %qs = vouch.slice %qkv axis 2 start 0 end 4 step 1 : (tensor<2x3x12xf32>) -> tensor<2x3x4xf32>
  %ks = vouch.slice %qkv axis 2 start 8 end 12 step 1 : (tensor<2x3x12xf32>) -> tensor<2x3x4xf32>
  %vs = vouch.slice %qkv axis 2 start 4 end 8 step 1 : (tensor<2x3x12xf32>) -> tensor<2x3x4xf32>
  %qr = vouch.reshape %qs : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
  %kr = vouch.reshape %ks : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
  %vr = vouch.reshape %vs : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
  %q = vouch.permute %qr perm [0, 2, 1, 3] : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
  %k = vouch.permute %kr perm [0, 2, 1, 3] : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
  %v = vouch.permute %vr perm [0, 2, 1, 3] : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
  %a = vouch.scaled_dot_product_attention %q, %k, %v causal scale 0.5 : (tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>) -> tensor<2x2x3x2xf32>
  %ap = vouch.permute %a perm [0, 2, 1, 3] : (tensor<2x2x3x2xf32>) -> tensor<2x3x2x2xf32>
  %y = vouch.reshape %ap : (tensor<2x3x2x2xf32>) -> tensor<2x3x4xf32>
  %l = vouch.mse_loss %y, %t : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<f32>
  vouch.output "y" %y : tensor<2x3x4xf32>
  vouch.loss %l : tensor<f32>
}
