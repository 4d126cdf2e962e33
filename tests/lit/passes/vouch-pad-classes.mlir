// RUN: %vouch-opt %s -split-input-file --pass-pipeline='builtin.module(vouch.model(vouch-pad-classes{quantum=4}))' --mlir-print-debuginfo | FileCheck %s
// RUN: %vouch-opt %s -split-input-file --pass-pipeline='builtin.module(vouch.model(vouch-pad-classes{quantum=4},vouch-autodiff))' | FileCheck %s --check-prefix=GRAD
// RUN: %vouch-opt %s -split-input-file --pass-pipeline='builtin.module(vouch.model(vouch-pad-classes{quantum=0}))' | FileCheck %s --check-prefix=OFF
// RUN: not %vouch-opt %s -split-input-file --pass-pipeline='builtin.module(vouch.model(vouch-pad-classes{quantum=2048}))' 2>&1 | FileCheck %s --check-prefix=LARGE

// vouch-pad-classes: an LM head's 13 classes padded to 16 at quantum 4. The
// weight (and bias) gain three zero rows (slice_scatter, whose VJP slices the
// gradient back), the linear computes 16 logits a row at the head's location,
// cross_entropy counts the first 13 (its VJP writes 0 past them) and the
// output takes the first 13 of each row. Quantum 0: nothing changes.
// CHECK-LABEL: vouch.model "head"
// CHECK: %[[W:.*]] = vouch.param "w"
// CHECK: %[[B:.*]] = vouch.param "b"
// CHECK: %[[WP:.*]] = vouch.slice_scatter %[[W]] axis 0 start 0 end 13 step 1 : (tensor<13x8xf32>) -> tensor<16x8xf32> loc(#[[LOC:.*]])
// CHECK: %[[BP:.*]] = vouch.slice_scatter %[[B]] axis 0 start 0 end 13 step 1 : (tensor<13xf32>) -> tensor<16xf32> loc(#[[LOC]])
// CHECK: %[[Z:.*]] = vouch.linear %{{.*}}, %[[WP]], %[[BP]] : (tensor<2x3x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<2x3x16xf32> loc(#[[LOC]])
// CHECK: vouch.output "logits" %[[Z]] {columns = 13 : i64} : tensor<2x3x16xf32>
// CHECK: vouch.cross_entropy %[[Z]], %{{.*}} {classes = 13 : i64, ignore_index = -100 : i64} : (tensor<2x3x16xf32>, tensor<2x3xi32>) -> tensor<f32>
// CHECK-NOT: tensor<2x3x13xf32>
// CHECK: #[[LOC]] = loc("head.vouch":4:7)
// GRAD-LABEL: vouch.model "head"
// GRAD: %[[Z:.*]] = vouch.linear {{.*}} -> tensor<2x3x16xf32>
// GRAD: vouch.cross_entropy_grad %[[Z]], %{{.*}}, %{{.*}} {classes = 13 : i64, ignore_index = -100 : i64, vouch.vjp_of = {{[0-9]+}} : i64} : (tensor<2x3x16xf32>, tensor<2x3xi32>, tensor<f32>) -> tensor<2x3x16xf32>
// GRAD-DAG: vouch.slice %{{.*}} axis 0 start 0 end 13 step 1 {{.*}} : (tensor<16x8xf32>) -> tensor<13x8xf32>
// GRAD-DAG: vouch.slice %{{.*}} axis 0 start 0 end 13 step 1 {{.*}} : (tensor<16xf32>) -> tensor<13xf32>
// OFF-LABEL: vouch.model "head"
// OFF-NOT: vouch.slice_scatter
// OFF: vouch.linear {{.*}} -> tensor<2x3x13xf32>
// OFF-NOT: classes
// LARGE: error: vouch-pad-classes: quantum must be in [0, 1024], got 2048
vouch.model "head" attributes {batch = 2 : i64} {
  %x = vouch.input "x" : tensor<2x3x8xf32>
  %y = vouch.target "y" : tensor<2x3xi32>
  %w = vouch.param "w" = xavier_uniform : tensor<13x8xf32>
  %b = vouch.param "b" = zeros : tensor<13xf32>
  %z = vouch.linear %x, %w, %b : (tensor<2x3x8xf32>, tensor<13x8xf32>, tensor<13xf32>) -> tensor<2x3x13xf32> loc("head.vouch":4:7)
  vouch.output "logits" %z : tensor<2x3x13xf32>
  %l = vouch.cross_entropy %z, %y {ignore_index = -100 : i64} : (tensor<2x3x13xf32>, tensor<2x3xi32>) -> tensor<f32>
  vouch.loss %l : tensor<f32>
}

// -----

// Classes already a multiple of the quantum, and logits another op reads
// (here a softmax): nothing is padded.
// CHECK-LABEL: vouch.model "aligned"
// CHECK-NOT: slice_scatter
// CHECK-LABEL: vouch.model "shared"
// CHECK-NOT: slice_scatter
// CHECK: vouch.softmax
vouch.model "aligned" attributes {batch = 2 : i64} {
  %x = vouch.input "x" : tensor<2x8xf32>
  %y = vouch.target "y" : tensor<2xi32>
  %w = vouch.param "w" = xavier_uniform : tensor<12x8xf32>
  %z = vouch.linear %x, %w : (tensor<2x8xf32>, tensor<12x8xf32>) -> tensor<2x12xf32>
  vouch.output "logits" %z : tensor<2x12xf32>
  %l = vouch.cross_entropy %z, %y {ignore_index = -100 : i64} : (tensor<2x12xf32>, tensor<2xi32>) -> tensor<f32>
  vouch.loss %l : tensor<f32>
}

// -----

vouch.model "shared" attributes {batch = 2 : i64} {
  %x = vouch.input "x" : tensor<2x8xf32>
  %y = vouch.target "y" : tensor<2xi32>
  %w = vouch.param "w" = xavier_uniform : tensor<13x8xf32>
  %z = vouch.linear %x, %w : (tensor<2x8xf32>, tensor<13x8xf32>) -> tensor<2x13xf32>
  %p = vouch.softmax %z axis 1 : (tensor<2x13xf32>) -> tensor<2x13xf32>
  vouch.output "p" %p : tensor<2x13xf32>
  %l = vouch.cross_entropy %z, %y {ignore_index = -100 : i64} : (tensor<2x13xf32>, tensor<2xi32>) -> tensor<f32>
  vouch.loss %l : tensor<f32>
}
