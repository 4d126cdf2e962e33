// RUN: %vouch-opt %s -split-input-file --pass-pipeline='builtin.module(vouch.model(vouch-decompose))' --mlir-print-debuginfo | FileCheck %s
// RUN: not %vouch-opt %s -split-input-file --pass-pipeline='builtin.module(vouch.model(vouch-plan{profile=checked_cpu},vouch-gate))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNDECOMPOSED
// RUN: %vouch-opt %s -split-input-file --pass-pipeline='builtin.module(vouch.model(vouch-decompose{attention=fused}))' --mlir-print-debuginfo | FileCheck %s --check-prefix=FUSED
// RUN: not %vouch-opt %s -split-input-file --pass-pipeline='builtin.module(vouch.model(vouch-decompose{attention=sideways}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORM
// FORM: vouch-decompose: attention must be composed, fused or auto, got 'sideways'

// The fused form: one flash_attention (result and lse [..., Tq]), located at
// the call, named after it; its mask passed through.
// FUSED-LABEL: vouch.model "causal"
// FUSED: %[[O:.*]], %{{.*}} = vouch.flash_attention %{{.*}}, %{{.*}}, %{{.*}} causal scale 5.000000e-01 : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x6xf32>) -> (tensor<2x3x6xf32>, tensor<2x3xf32>) loc(#[[LOC:.*]])
// FUSED: vouch.output "o" %[[O]]
// FUSED: #[[LOC]] = loc("vouch.scaled_dot_product_attention"(#{{.*}}))
// FUSED-LABEL: vouch.model "masked"
// FUSED: vouch.flash_attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} scale 2.500000e-01 : (tensor<2x2x3x4xf64>, tensor<2x2x3x4xf64>, tensor<2x2x3x4xf64>, tensor<2x1x3x3xi1>) -> (tensor<2x2x3x4xf64>, tensor<2x2x3xf64>)
// FUSED: vouch.flash_attention %{{.*}}, %{{.*}}, %{{.*}} scale 2.500000e-01 :


// Planned without vouch-decompose, the composite op is a gate failure that
// says what to run.
// UNDECOMPOSED: model.vouch:7:8: error: assurance gate [capsule]: vouch.scaled_dot_product_attention is a composite op: vouch-decompose replaces it by its composed form's ops before planning (run it before vouch-autodiff), and they have the capsules

// scaled_dot_product_attention's composed form: q scaled (a [Tq, D] tensor,
// not the [Tq, Tk] scores), ·kᵀ through a transpose flag (no copy of k),
// causal_mask [Tq, Tk] under masked_softmax over the last axis, then · v;
// every op located at the call, named after it.

// CHECK-LABEL: vouch.model "causal"
// CHECK-NOT: vouch.scaled_dot_product_attention
// CHECK: %[[Q:.*]] = vouch.input "q"
// CHECK: %[[K:.*]] = vouch.input "k"
// CHECK: %[[QS:.*]] = vouch.scale %[[Q]] by 5.000000e-01 : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc(#[[LOC:.*]])
// CHECK: %[[T:.*]] = vouch.matmul %[[QS]], %[[K]] {transpose_rhs} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32> loc(#[[LOC]])
// CHECK: %[[M:.*]] = vouch.causal_mask : tensor<3x5xi1> loc(#[[LOC]])
// CHECK: %[[P:.*]] = vouch.masked_softmax %[[T]], %[[M]] axis 2 : {{.*}} loc(#[[LOC]])
// CHECK: %[[O:.*]] = vouch.matmul %[[P]], %{{.*}} : (tensor<2x3x5xf32>, tensor<2x5x6xf32>) -> tensor<2x3x6xf32> loc(#[[LOC]])
// CHECK: vouch.output "o" %[[O]]
// CHECK: #[[LOC]] = loc("vouch.scaled_dot_product_attention"(#{{.*}}))
vouch.model "causal" attributes {batch = 2 : i64} {
  %q = vouch.input "q" : tensor<2x3x4xf32>
  %k = vouch.input "k" : tensor<2x5x4xf32>
  %v = vouch.param "v" = "xavier_uniform" : tensor<2x5x6xf32>
  %o = vouch.scaled_dot_product_attention %q, %k, %v causal scale 0.5 : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x6xf32>) -> tensor<2x3x6xf32> loc("model.vouch":7:8)
  vouch.output "o" %o : tensor<2x3x6xf32>
}

// -----

// A mask of the data (broadcast by masked_softmax); none: a plain softmax.
// CHECK-LABEL: vouch.model "masked"
// CHECK: vouch.masked_softmax %{{.*}}, %[[MASK:.*]] axis 3 : (tensor<2x2x3x3xf64>, tensor<2x1x3x3xi1>) -> tensor<2x2x3x3xf64>
// CHECK: vouch.softmax %{{.*}} axis 3 : (tensor<2x2x3x3xf64>) -> tensor<2x2x3x3xf64>
vouch.model "masked" attributes {batch = 2 : i64} {
  %q = vouch.input "q" : tensor<2x2x3x4xf64>
  %m = vouch.input "m" : tensor<2x1x3x3xi1>
  %o = vouch.scaled_dot_product_attention %q, %q, %q mask %m scale 0.25 : (tensor<2x2x3x4xf64>, tensor<2x2x3x4xf64>, tensor<2x2x3x4xf64>, tensor<2x1x3x3xi1>) -> tensor<2x2x3x4xf64>
  %p = vouch.scaled_dot_product_attention %q, %q, %o scale 0.25 : (tensor<2x2x3x4xf64>, tensor<2x2x3x4xf64>, tensor<2x2x3x4xf64>) -> tensor<2x2x3x4xf64>
  vouch.output "p" %p : tensor<2x2x3x4xf64>
}

