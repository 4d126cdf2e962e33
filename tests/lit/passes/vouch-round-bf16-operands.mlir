// RUN: %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-autodiff,vouch-round-bf16-operands))' | FileCheck %s
// RUN: %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-autodiff,vouch-round-bf16-operands{small-multiply-adds=65536 small-max-k=256}))' | FileCheck %s --check-prefix=SMALL
// RUN: %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-autodiff,vouch-round-bf16-operands,vouch-fuse-pointwise))' | FileCheck %s --check-prefix=FUSED

// A linear over leading axes, its input made by a relu. The forward product
// reads the input and the weight rounded once each, as forward nodes of their
// own (the nodes renumbered: relu 0, roundings 1 and 2, linear 3, loss 4):
// the relu's right after it, the param's before the product. Its VJP's weight
// product reads the same rounded input through a bf16 reshape (the f32
// reshape it read is gone) and the result gradient rounded right after the
// loss's VJP makes it (in that VJP, where a pointwise chain can store it);
// the bias sums still read the f32 gradient.
// CHECK-LABEL: vouch.model "lin"
// CHECK: %[[H:[0-9]+]] = vouch.relu %{{[0-9]+}} {vouch.node = 0 : i64}
// CHECK: %[[XB:[0-9]+]] = vouch.round_bf16 %[[H]] {vouch.node = 1 : i64} : (tensor<4x8x16xf32>) -> tensor<4x8x16xbf16>
// CHECK: %[[WB:[0-9]+]] = vouch.round_bf16 %{{[0-9]+}} {vouch.node = 2 : i64} : (tensor<24x16xf32>) -> tensor<24x16xbf16>
// CHECK: %[[Y:[0-9]+]] = vouch.linear %[[XB]], %[[WB]], %{{[0-9]+}} {vouch.node = 3 : i64} : (tensor<4x8x16xbf16>, tensor<24x16xbf16>, tensor<24xf32>) -> tensor<4x8x24xf32>
// CHECK: vouch.mse_loss %[[Y]], %{{[0-9]+}} {vouch.node = 4 : i64}
// CHECK: %[[DY:[0-9]+]] = vouch.mul {{.*}}vouch.vjp_of = 4
// CHECK-NEXT: %[[DYB:[0-9]+]] = vouch.round_bf16 %[[DY]] {vouch.vjp_of = 4 : i64} : (tensor<4x8x24xf32>) -> tensor<4x8x24xbf16>
// CHECK-NEXT: %[[DY2:[0-9]+]] = vouch.reshape %[[DY]] {vouch.vjp_of = 3 : i64} : (tensor<4x8x24xf32>) -> tensor<32x24xf32>
// CHECK-NOT: vouch.reshape %[[H]]
// CHECK: %[[DYB2:[0-9]+]] = vouch.reshape %[[DYB]] {vouch.vjp_of = 3 : i64} : (tensor<4x8x24xbf16>) -> tensor<32x24xbf16>
// CHECK: %[[XB2:[0-9]+]] = vouch.reshape %[[XB]] {vouch.vjp_of = 3 : i64} : (tensor<4x8x16xbf16>) -> tensor<32x16xbf16>
// CHECK: %[[DW:[0-9]+]] = vouch.matmul %[[DYB2]], %[[XB2]] {transpose_lhs, vouch.vjp_of = 3 : i64} : (tensor<32x24xbf16>, tensor<32x16xbf16>) -> tensor<24x16xf32>
// CHECK: vouch.reduce_sum %[[DY2]] axes [0]
// CHECK: vouch.param_grad "w" %[[DW]]
// Under checked_cuda's small-product rule both products (24·16·32
// multiply-adds) run vouch's own kernel, which reads f32: left alone.
// SMALL-LABEL: vouch.model "lin"
// SMALL-NOT: round_bf16
// SMALL-LABEL: vouch.model "two_layers"
vouch.model "lin" attributes {batch = 4 : i64} {
  %x = vouch.input "x" : tensor<4x8x16xf32>
  %t = vouch.target "t" : tensor<4x8x24xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<24x16xf32>
  %b = vouch.param "b" = zeros : tensor<24xf32>
  %h = vouch.relu %x : (tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %y = vouch.linear %h, %w, %b : (tensor<4x8x16xf32>, tensor<24x16xf32>, tensor<24xf32>) -> tensor<4x8x24xf32>
  %l = vouch.mse_loss %y, %t : (tensor<4x8x24xf32>, tensor<4x8x24xf32>) -> tensor<f32>
  vouch.output "y" %y : tensor<4x8x24xf32>
  vouch.loss %l : tensor<f32>
}

// Two linears: the second layer's weight is rounded once for its forward
// product and its dx (the second linear's VJP reads it rounded, no second
// rounding of it); the first layer's weight gradient reads the input (a data
// field) rounded once in the forward pass.
// CHECK-LABEL: vouch.model "two_layers"
// CHECK: %[[X:[0-9]+]] = vouch.input "x"
// CHECK: %[[W2:[0-9]+]] = vouch.param "w2"
// CHECK: %[[XB:[0-9]+]] = vouch.round_bf16 %[[X]] {vouch.node = 0 : i64}
// CHECK: %[[W2B:[0-9]+]] = vouch.round_bf16 %[[W2]] {vouch.node = 5 : i64}
// CHECK-NOT: vouch.round_bf16 %[[W2]]
// CHECK-NOT: vouch.round_bf16 %[[X]]
// CHECK: vouch.matmul %{{[0-9]+}}, %[[W2B]] {vouch.vjp_of = 6 : i64}
// CHECK: vouch.matmul %{{[0-9]+}}, %[[XB]] {transpose_lhs, vouch.vjp_of = 2 : i64}
// vouch-fuse-pointwise then makes each rounding of a pointwise op's result
// the last op of that op's chain (its kernel stores the value as bf16): the
// relu's, the loss gradient's and the relu gradient's.
// FUSED-LABEL: vouch.model "two_layers"
// FUSED: vouch.relu %{{[0-9]+}} {vouch.fusion_group = "[[G0:two_layers_fused[0-9]+]]", vouch.node = 3 : i64}
// FUSED-NEXT: vouch.round_bf16 %{{[0-9]+}} {vouch.fusion_group = "[[G0]]", vouch.node = 4 : i64}
// FUSED: vouch.mul %{{[0-9]+}}, %{{[0-9]+}} {vouch.fusion_group = "[[G1:two_layers_fused[0-9]+]]", vouch.vjp_of = 7 : i64}
// FUSED-NEXT: vouch.round_bf16 %{{[0-9]+}} {vouch.fusion_group = "[[G1]]", vouch.vjp_of = 7 : i64}
// FUSED: vouch.mul %{{[0-9]+}}, %{{[0-9]+}} {vouch.fusion_group = "[[G2:two_layers_fused[0-9]+]]", vouch.vjp_of = 3 : i64}
// FUSED-NEXT: vouch.round_bf16 %{{[0-9]+}} {vouch.fusion_group = "[[G2]]", vouch.vjp_of = 3 : i64}
vouch.model "two_layers" attributes {batch = 32 : i64} {
  %x = vouch.input "x" : tensor<32x16xf32>
  %t = vouch.target "t" : tensor<32x8xf32>
  %w1 = vouch.param "w1" = xavier_uniform : tensor<24x16xf32>
  %w2 = vouch.param "w2" = xavier_uniform : tensor<8x24xf32>
  %h = vouch.linear %x, %w1 : (tensor<32x16xf32>, tensor<24x16xf32>) -> tensor<32x24xf32>
  %r = vouch.relu %h : (tensor<32x24xf32>) -> tensor<32x24xf32>
  %y = vouch.linear %r, %w2 : (tensor<32x24xf32>, tensor<8x24xf32>) -> tensor<32x8xf32>
  %l = vouch.mse_loss %y, %t : (tensor<32x8xf32>, tensor<32x8xf32>) -> tensor<f32>
  vouch.output "y" %y : tensor<32x8xf32>
  vouch.loss %l : tensor<f32>
}

// A bias-free linear whose result only a product reads (through its
// rounding): the rounding is folded into the linear (the op table's
// bf16Result), whose cuBLASLt call stores y as bf16; the second product and
// its weight gradient read that bf16 h, and no f32 h is left. With a bias
// (the qkv model below) the bias is read rounded to bf16 too: cuBLASLt
// stores no bf16 D beside an f32 bias. A qkv linear with 12 outputs pads
// N (12 -> 16): its W through the executor's padded copy (so W stays f32) and
// its output in the scratch, copied out as f32: it keeps its f32 result and
// the rounding after it for the attention.
// CHECK-LABEL: vouch.model "folded"
// CHECK: %[[H:[0-9]+]] = vouch.linear %{{[0-9]+}}, %{{[0-9]+}} {vouch.node = 2 : i64} : (tensor<32x16xbf16>, tensor<24x16xbf16>) -> tensor<32x24xbf16>
// CHECK-NOT: vouch.round_bf16 %[[H]]
// CHECK: vouch.linear %[[H]], %{{[0-9]+}} {{.*}}: (tensor<32x24xbf16>, tensor<8x24xbf16>) -> tensor<32x8xf32>
// CHECK: vouch.matmul %{{[0-9]+}}, %[[H]] {transpose_lhs, vouch.vjp_of = 4 : i64} : (tensor<32x8xbf16>, tensor<32x24xbf16>) -> tensor<8x24xf32>
// CHECK-LABEL: vouch.model "folded_padded"
// CHECK: %[[P:[0-9]+]] = vouch.linear {{.*}} -> tensor<1x4x12xf32>
// CHECK-NEXT: vouch.round_bf16 %[[P]] {{.*}} : (tensor<1x4x12xf32>) -> tensor<1x4x12xbf16>
// SMALL-LABEL: vouch.model "folded"
// SMALL-NOT: bf16
// SMALL-LABEL: vouch.model "folded_padded"
vouch.model "folded" attributes {batch = 32 : i64} {
  %x = vouch.input "x" : tensor<32x16xf32>
  %t = vouch.target "t" : tensor<32x8xf32>
  %w1 = vouch.param "w1" = xavier_uniform : tensor<24x16xf32>
  %w2 = vouch.param "w2" = xavier_uniform : tensor<8x24xf32>
  %h = vouch.linear %x, %w1 : (tensor<32x16xf32>, tensor<24x16xf32>) -> tensor<32x24xf32>
  %y = vouch.linear %h, %w2 : (tensor<32x24xf32>, tensor<8x24xf32>) -> tensor<32x8xf32>
  %l = vouch.mse_loss %y, %t : (tensor<32x8xf32>, tensor<32x8xf32>) -> tensor<f32>
  vouch.output "y" %y : tensor<32x8xf32>
  vouch.loss %l : tensor<f32>
}

vouch.model "folded_padded" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x4x8xf32>
  %t = vouch.target "t" : tensor<1x4x4xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<12x8xf32>
  %qkv = vouch.linear %x, %w : (tensor<1x4x8xf32>, tensor<12x8xf32>) -> tensor<1x4x12xf32>
  %o, %lse = vouch.qkv_attention %qkv heads 1 scale 0.5 : (tensor<1x4x12xf32>) -> (tensor<1x4x4xf32>, tensor<1x1x4xf32>)
  %l = vouch.mse_loss %o, %t : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<f32>
  vouch.output "y" %o : tensor<1x4x4xf32>
  vouch.loss %l : tensor<f32>
}

// Extents a bf16 product pads: the forward product's K = 12 (x's and W's
// row pitch, padded to 16) and the weight gradient's N = 12 (x's pitch):
// those operands keep the executor's padded copies. The weight gradient's
// other operand, dy [32, 8], is read as it lies: rounded here.
// CHECK-LABEL: vouch.model "padded"
// CHECK: %[[X:[0-9]+]] = vouch.input "x"
// CHECK-NOT: round_bf16
// CHECK: vouch.loss
// CHECK: %[[DYB:[0-9]+]] = vouch.round_bf16 %{{[0-9]+}} {vouch.vjp_of = 1 : i64} : (tensor<32x8xf32>) -> tensor<32x8xbf16>
// CHECK: vouch.matmul %[[DYB]], %[[X]] {transpose_lhs, vouch.vjp_of = 0 : i64} : (tensor<32x8xbf16>, tensor<32x12xf32>) -> tensor<8x12xf32>
// f64 products are never rounded.
// CHECK-LABEL: vouch.model "f64"
// CHECK-NOT: round_bf16
vouch.model "padded" attributes {batch = 32 : i64} {
  %x = vouch.input "x" : tensor<32x12xf32>
  %t = vouch.target "t" : tensor<32x8xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<8x12xf32>
  %y = vouch.linear %x, %w : (tensor<32x12xf32>, tensor<8x12xf32>) -> tensor<32x8xf32>
  %l = vouch.mse_loss %y, %t : (tensor<32x8xf32>, tensor<32x8xf32>) -> tensor<f32>
  vouch.output "y" %y : tensor<32x8xf32>
  vouch.loss %l : tensor<f32>
}

vouch.model "f64" attributes {batch = 32 : i64} {
  %x = vouch.input "x" : tensor<32x16xf64>
  %t = vouch.target "t" : tensor<32x8xf64>
  %w = vouch.param "w" = xavier_uniform : tensor<8x16xf64>
  %y = vouch.linear %x, %w : (tensor<32x16xf64>, tensor<8x16xf64>) -> tensor<32x8xf64>
  %l = vouch.mse_loss %y, %t : (tensor<32x8xf64>, tensor<32x8xf64>) -> tensor<f64>
  vouch.output "y" %y : tensor<32x8xf64>
  vouch.loss %l : tensor<f64>
}

// An LM head: the loss's VJP makes dlogits, which only the head's weight
// gradient reads (x is data: no dx), so cross_entropy_grad stores them as bf16 itself (its bf16Result): no
// rounding of them, no f32 dlogits. With a bias its column sum reads the f32
// dlogits, which stay f32 and are rounded for the products.
// CHECK-LABEL: vouch.model "head"
// CHECK: %[[D:[0-9]+]] = vouch.cross_entropy_grad {{.*}} -> tensor<32x40xbf16>
// CHECK-NOT: vouch.round_bf16 %[[D]]
// CHECK: vouch.matmul %[[D]], %{{[0-9]+}} {transpose_lhs, vouch.vjp_of = 2 : i64} : (tensor<32x40xbf16>, tensor<32x16xbf16>) -> tensor<40x16xf32>
// CHECK-LABEL: vouch.model "head_with_bias"
// CHECK: %[[D:[0-9]+]] = vouch.cross_entropy_grad {{.*}} -> tensor<32x40xf32>
// CHECK-NEXT: vouch.round_bf16 %[[D]] {{.*}} -> tensor<32x40xbf16>
// CHECK: vouch.reduce_sum %[[D]]
vouch.model "head" attributes {batch = 32 : i64} {
  %x = vouch.input "x" : tensor<32x16xf32>
  %t = vouch.target "t" : tensor<32xi32>
  %w = vouch.param "w" = xavier_uniform : tensor<40x16xf32>
  %z = vouch.linear %x, %w : (tensor<32x16xf32>, tensor<40x16xf32>) -> tensor<32x40xf32>
  %l = vouch.cross_entropy %z, %t {ignore_index = -100 : i64} : (tensor<32x40xf32>, tensor<32xi32>) -> tensor<f32>
  vouch.output "z" %z : tensor<32x40xf32>
  vouch.loss %l : tensor<f32>
}

vouch.model "head_with_bias" attributes {batch = 32 : i64} {
  %x = vouch.input "x" : tensor<32x16xf32>
  %t = vouch.target "t" : tensor<32xi32>
  %w = vouch.param "w" = xavier_uniform : tensor<40x16xf32>
  %b = vouch.param "b" = zeros : tensor<40xf32>
  %z = vouch.linear %x, %w, %b : (tensor<32x16xf32>, tensor<40x16xf32>, tensor<40xf32>) -> tensor<32x40xf32>
  %l = vouch.cross_entropy %z, %t {ignore_index = -100 : i64} : (tensor<32x40xf32>, tensor<32xi32>) -> tensor<f32>
  vouch.output "z" %z : tensor<32x40xf32>
  vouch.loss %l : tensor<f32>
}

// A layer_norm whose y only products read (the linear's forward product and its
// weight gradient's): the layer_norm stores y as bf16 itself (its bf16Result), no
// rounding of it; its sum stays f32. Where something else reads y (here a relu
// beside the product), y stays f32 and is rounded for the product.
// CHECK-LABEL: vouch.model "norm_then_linear"
// CHECK: %[[Y:[a-z0-9]+]], %{{[a-z0-9]+}} = vouch.layer_norm {{.*}} -> (tensor<8x16xbf16>, tensor<8x16xf32>)
// CHECK-NOT: vouch.round_bf16 %[[Y]]
// CHECK: vouch.linear %[[Y]], %{{[0-9]+}} {vouch.node = {{[0-9]+}} : i64} : (tensor<8x16xbf16>, tensor<24x16xbf16>) -> tensor<8x24xf32>
// CHECK: vouch.matmul %{{[0-9]+}}, %[[Y]] {transpose_lhs, vouch.vjp_of = {{[0-9]+}} : i64} : (tensor<8x24xbf16>, tensor<8x16xbf16>) -> tensor<24x16xf32>
// CHECK-LABEL: vouch.model "norm_read_twice"
// CHECK: %[[Y:[a-z0-9]+]] = vouch.layer_norm {{.*}} -> tensor<8x16xf32>
// CHECK-NEXT: vouch.round_bf16 %[[Y]] {{.*}} -> tensor<8x16xbf16>
// CHECK: vouch.relu %[[Y]]
vouch.model "norm_then_linear" attributes {batch = 8 : i64} {
  %x = vouch.input "x" : tensor<8x16xf32>
  %r = vouch.input "r" : tensor<8x16xf32>
  %t = vouch.target "t" : tensor<8x24xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<24x16xf32>
  %g = vouch.param "g" = ones : tensor<16xf32>
  %y, %s = vouch.layer_norm %x plus %r weight %g eps 1.0e-05 : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>)
  %z = vouch.linear %y, %w : (tensor<8x16xf32>, tensor<24x16xf32>) -> tensor<8x24xf32>
  %l = vouch.mse_loss %z, %t : (tensor<8x24xf32>, tensor<8x24xf32>) -> tensor<f32>
  vouch.output "s" %s : tensor<8x16xf32>
  vouch.loss %l : tensor<f32>
}

vouch.model "norm_read_twice" attributes {batch = 8 : i64} {
  %x = vouch.input "x" : tensor<8x16xf32>
  %t = vouch.target "t" : tensor<8x24xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<24x16xf32>
  %y = vouch.layer_norm %x eps 1.0e-05 : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %z = vouch.linear %y, %w : (tensor<8x16xf32>, tensor<24x16xf32>) -> tensor<8x24xf32>
  %h = vouch.relu %y : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %l = vouch.mse_loss %z, %t : (tensor<8x24xf32>, tensor<8x24xf32>) -> tensor<f32>
  vouch.output "h" %h : tensor<8x16xf32>
  vouch.loss %l : tensor<f32>
}

// qkv_attention over heads attention64.cuh's kernels take (d = 8): the
// linear's qkv read as bf16, which cuBLASLt stores itself (the rounding
// folded into the linear, its bias rounded before it as a param's rounding:
// bias rounding 3, linear 4, attention 5), the forward and its gradient
// reading the bf16 value; no f32 qkv; dqkv stays f32 (the bias sum reads
// it; the weight gradient its own rounding, a launch of its own: the
// attention gradient stores no bf16 twin). Under the small-product rule's
// kernel (which stores no bf16 result) the linear keeps its f32 result and
// bias, and the rounding after it: qkv is not a product's operand.
// CHECK-LABEL: vouch.model "qkv"
// CHECK: %[[BB:[0-9]+]] = vouch.round_bf16 %{{[0-9]+}} {vouch.node = 3 : i64} : (tensor<48xf32>) -> tensor<48xbf16>
// CHECK-NEXT: %[[QB:[0-9]+]] = vouch.linear %{{[0-9]+}}, %{{[0-9]+}}, %[[BB]] {vouch.node = 4 : i64} : (tensor<2x4x16xbf16>, tensor<48x16xbf16>, tensor<48xbf16>) -> tensor<2x4x48xbf16>
// CHECK-NEXT: %[[O:[a-z0-9]+]], %[[L:[a-z0-9]+]] = vouch.qkv_attention %[[QB]] heads 2 causal scale {{.*}}vouch.node = 5 : i64} : (tensor<2x4x48xbf16>) -> (tensor<2x4x16xf32>, tensor<2x2x4xf32>)
// CHECK-NOT: round_bf16 %[[BB]]
// CHECK: %[[DQKV:[0-9]+]] = vouch.qkv_attention_grad %{{[0-9]+}}, %[[QB]], %[[O]], %[[L]] heads 2 causal scale {{.*}} {vouch.vjp_of = 5 : i64} : (tensor<2x4x16xf32>, tensor<2x4x48xbf16>, tensor<2x4x16xf32>, tensor<2x2x4xf32>) -> tensor<2x4x48xf32>
// CHECK-NEXT: vouch.round_bf16 %[[DQKV]] {vouch.vjp_of = 5 : i64} : (tensor<2x4x48xf32>) -> tensor<2x4x48xbf16>
// SMALL-LABEL: vouch.model "qkv"
// SMALL: vouch.linear {{.*}} : (tensor<2x4x16xf32>, tensor<48x16xf32>, tensor<48xf32>) -> tensor<2x4x48xf32>
// SMALL-NEXT: vouch.round_bf16 %{{[0-9]+}} {vouch.node = 2 : i64} : (tensor<2x4x48xf32>) -> tensor<2x4x48xbf16>
// SMALL: vouch.qkv_attention_grad {{.*}}tensor<2x4x48xbf16>
vouch.model "qkv" attributes {batch = 2 : i64} {
  %x = vouch.input "x" : tensor<2x4x16xf32>
  %t = vouch.target "t" : tensor<2x4x16xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<48x16xf32>
  %b = vouch.param "b" = zeros : tensor<48xf32>
  %h = vouch.relu %x : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %qkv = vouch.linear %h, %w, %b : (tensor<2x4x16xf32>, tensor<48x16xf32>, tensor<48xf32>) -> tensor<2x4x48xf32>
  %o, %lse = vouch.qkv_attention %qkv heads 2 causal scale 0.35355339059327373 : (tensor<2x4x48xf32>) -> (tensor<2x4x16xf32>, tensor<2x2x4xf32>)
  %l = vouch.mse_loss %o, %t : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<f32>
  vouch.output "y" %o : tensor<2x4x16xf32>
  vouch.loss %l : tensor<f32>
}

// layer_norm_grad's dx, read by the first linear's weight gradient (a
// product: rounded) and its bias gradient (f32): the rounding is dx's bf16
// twin, fused with the layer_norm_grad (bf16Twin), which vouch-fuse-pointwise
// leaves as it is.
// CHECK-LABEL: vouch.model "norm_grad_twin"
// CHECK: %[[DX:[a-z0-9]+]], %{{[a-z0-9_]+}} = vouch.layer_norm_grad {{.*}}vouch.fusion_group = "norm_grad_twin_twin0"
// CHECK-NEXT: vouch.round_bf16 %[[DX]] {vouch.fusion_group = "norm_grad_twin_twin0"{{.*}} -> tensor<8x16xbf16>
// CHECK: vouch.reduce_sum %[[DX]] axes [0]
// FUSED-LABEL: vouch.model "norm_grad_twin"
// FUSED: vouch.layer_norm_grad {{.*}}vouch.fusion_group = "norm_grad_twin_twin0"
// FUSED-NEXT: vouch.round_bf16 {{.*}}vouch.fusion_group = "norm_grad_twin_twin0"
vouch.model "norm_grad_twin" attributes {batch = 8 : i64} {
  %x = vouch.input "x" : tensor<8x12xf32>
  %t = vouch.target "t" : tensor<8x24xf32>
  %w1 = vouch.param "w1" = xavier_uniform : tensor<16x12xf32>
  %b1 = vouch.param "b1" = zeros : tensor<16xf32>
  %w2 = vouch.param "w2" = xavier_uniform : tensor<24x16xf32>
  %g = vouch.param "g" = ones : tensor<16xf32>
  %h = vouch.linear %x, %w1, %b1 : (tensor<8x12xf32>, tensor<16x12xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %y = vouch.layer_norm %h weight %g eps 1.0e-05 : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %z = vouch.linear %y, %w2 : (tensor<8x16xf32>, tensor<24x16xf32>) -> tensor<8x24xf32>
  %l = vouch.mse_loss %z, %t : (tensor<8x24xf32>, tensor<8x24xf32>) -> tensor<f32>
  vouch.output "z" %z : tensor<8x24xf32>
  vouch.loss %l : tensor<f32>
}

// Heads of 72 features are attention.cuh's (wider than attention64.cuh's
// 64), whose kernels read f32: qkv left alone.
// CHECK-LABEL: vouch.model "wide_heads"
// CHECK-NOT: round_bf16 %{{[0-9]+}} {{.*}}tensor<1x4x216xf32>
// CHECK: vouch.qkv_attention %{{[0-9]+}} heads 1 {{.*}}(tensor<1x4x216xf32>)
// CHECK: vouch.qkv_attention_grad {{.*}}tensor<1x4x216xf32>, {{.*}}-> tensor<1x4x216xf32>
// CHECK-NOT: fusion_group
vouch.model "wide_heads" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x4x8xf32>
  %t = vouch.target "t" : tensor<1x4x72xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<216x8xf32>
  %qkv = vouch.linear %x, %w : (tensor<1x4x8xf32>, tensor<216x8xf32>) -> tensor<1x4x216xf32>
  %o, %lse = vouch.qkv_attention %qkv heads 1 scale 0.125 : (tensor<1x4x216xf32>) -> (tensor<1x4x72xf32>, tensor<1x1x4xf32>)
  %l = vouch.mse_loss %o, %t : (tensor<1x4x72xf32>, tensor<1x4x72xf32>) -> tensor<f32>
  vouch.output "y" %o : tensor<1x4x72xf32>
  vouch.loss %l : tensor<f32>
}
