// RUN: %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-decompose))' --mlir-print-debuginfo | FileCheck %s
// RUN: %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-decompose{attention=fused}))' --mlir-print-debuginfo | FileCheck %s
// RUN: not %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-plan{profile=checked_cpu},vouch-gate))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNDECOMPOSED

// flatten's composed form is one reshape (a view: no kernel, no copy), located
// at the call and named after flatten, whatever form vouch-decompose is asked
// for (a view has nothing to fuse); a flatten of i1 masks too.
// CHECK-LABEL: vouch.model "flatten"
// CHECK-NOT: vouch.flatten
// CHECK: %[[X:.*]] = vouch.input "x"
// CHECK: %[[F:.*]] = vouch.reshape %[[X]] : (tensor<2x3x4x5xf32>) -> tensor<2x60xf32> loc(#[[LOC:.*]])
// CHECK: %[[G:.*]] = vouch.reshape %[[X]] : (tensor<2x3x4x5xf32>) -> tensor<2x3x20xf32> loc(#[[LOC2:.*]])
// CHECK: vouch.reshape %{{.*}} : (tensor<2x2x2xi1>) -> tensor<2x4xi1>
// CHECK: vouch.output "f" %[[F]]
// CHECK: vouch.output "g" %[[G]]
// CHECK: #[[LOC]] = loc("vouch.flatten"(#{{.*}}))
// CHECK: #[[LOC2]] = loc("vouch.flatten"(#{{.*}}))

// Planned without vouch-decompose, flatten is a gate failure saying what to run.
// UNDECOMPOSED: model.vouch:4:8: error: assurance gate [capsule]: vouch.flatten is a composite op: vouch-decompose replaces it by its composed form's ops before planning (run it before vouch-autodiff), and they have the capsules
vouch.model "flatten" attributes {batch = 2 : i64} {
  %x = vouch.input "x" : tensor<2x3x4x5xf32> loc("model.vouch":2:3)
  %m = vouch.input "m" : tensor<2x2x2xi1> loc("model.vouch":3:3)
  %f = vouch.flatten %x start_axis 1 : (tensor<2x3x4x5xf32>) -> tensor<2x60xf32> loc("model.vouch":4:8)
  %g = vouch.flatten %x start_axis 2 : (tensor<2x3x4x5xf32>) -> tensor<2x3x20xf32> loc("model.vouch":5:8)
  %h = vouch.flatten %m start_axis 1 : (tensor<2x2x2xi1>) -> tensor<2x4xi1> loc("model.vouch":6:8)
  vouch.output "f" %f : tensor<2x60xf32>
  vouch.output "g" %g : tensor<2x3x20xf32>
  vouch.output "h" %h : tensor<2x4xi1>
}
