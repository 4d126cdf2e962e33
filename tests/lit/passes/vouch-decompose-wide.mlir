// RUN: %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-decompose{attention=auto}))' | FileCheck %s --check-prefix=AUTO
// RUN: not %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-decompose{attention=fused}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=WIDE

// Heads wider than the fused attention kernels take (257 features): the
// composed form under auto, an error naming the limit under fused.
// AUTO-LABEL: vouch.model "wide"
// AUTO-NOT: vouch.flash_attention
// AUTO: vouch.masked_softmax
// WIDE: error: 'vouch.scaled_dot_product_attention' op has no fused form for these operands (the fused attention kernels take heads of at most 256 features); use --attention composed or auto
vouch.model "wide" attributes {batch = 1 : i64} {
  %q = vouch.input "q" : tensor<1x3x257xf32>
  %o = vouch.scaled_dot_product_attention %q, %q, %q causal scale 0.5 : (tensor<1x3x257xf32>, tensor<1x3x257xf32>, tensor<1x3x257xf32>) -> tensor<1x3x257xf32>
  vouch.output "o" %o : tensor<1x3x257xf32>
}
