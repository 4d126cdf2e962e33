// RUN: %vouch-opt %s | %vouch-opt | FileCheck %s
// RUN: %vouch-opt %s --mlir-print-op-generic | %vouch-opt | FileCheck %s

// Every op of the dialect prints in its custom form and parses back to the
// same IR, directly and through the generic form.

// CHECK-LABEL: vouch.model "all_ops" attributes {batch = 4 : i64
// CHECK-SAME: data = #vouch.data<kind = regression_grid, lo = -1.000000e+00, hi = 1.000000e+00, n = 5>
// CHECK-SAME: train = #vouch.train<optimizer = adam, lr = 3.000000e-02, beta1 = 9.000000e-01, beta2 = 0.99899999999999999, eps = 1.000000e-08, weight_decay = 0.000000e+00, steps = 200, log_every = 25>}
vouch.model "all_ops" attributes {batch = 4 : i64, data = #vouch.data<kind = regression_grid, lo = -1.0, hi = 1.0, n = 5>, train = #vouch.train<optimizer = adam, lr = 3.0e-02, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08, weight_decay = 0.0, steps = 200, log_every = 25>} {
  // CHECK: %[[X:.*]] = vouch.input "x" : tensor<4x2xf32>
  %x = vouch.input "x" : tensor<4x2xf32>
  // CHECK: %[[Y:.*]] = vouch.target "y" : tensor<4x1xf32>
  %y = vouch.target "y" : tensor<4x1xf32>
  // CHECK: %[[W:.*]] = vouch.param "w" = xavier_uniform {{ *}}: tensor<3x2xf32>
  %w = vouch.param "w" = xavier_uniform : tensor<3x2xf32>
  // CHECK: %[[B:.*]] = vouch.param "b" = uniform [-1.000000e-01, 1.000000e-01] : tensor<3xf32>
  %b = vouch.param "b" = uniform [-0.1, 0.1] : tensor<3xf32>
  // CHECK: vouch.param "v" = normal [0.000000e+00, 2.000000e-02] : tensor<1x3xf32>
  %v = vouch.param "v" = normal [0.0, 0.02] : tensor<1x3xf32>
  // CHECK: vouch.linear %[[X]], %[[W]], %[[B]] : (tensor<4x2xf32>, tensor<3x2xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %h = vouch.linear %x, %w, %b : (tensor<4x2xf32>, tensor<3x2xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: vouch.linear %{{.*}}, %{{.*}} : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x1xf32>
  %nb = vouch.linear %h, %v : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x1xf32>
  // CHECK: vouch.relu
  %r = vouch.relu %h : (tensor<4x3xf32>) -> tensor<4x3xf32>
  // CHECK: vouch.step
  %s = vouch.step %h : (tensor<4x3xf32>) -> tensor<4x3xf32>
  // CHECK: vouch.add
  %a = vouch.add %r, %s : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  // CHECK: vouch.sub
  %d = vouch.sub %a, %r : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  // CHECK: vouch.mul
  %m = vouch.mul %d, %a : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  // CHECK: vouch.scale %{{.*}} by 5.000000e-01 : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %sc = vouch.scale %m by 0.5 : (tensor<4x3xf32>) -> tensor<4x3xf32>
  // CHECK: vouch.matmul %{{.*}}, %{{.*}} {transpose_rhs} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x4xf32>
  %mm = vouch.matmul %sc, %m {transpose_rhs} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x4xf32>
  // CHECK: vouch.matmul %{{.*}}, %{{.*}} {transpose_lhs} : (tensor<2x4x3xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %bl = vouch.fill 1.0 : tensor<2x4x3xf32>
  %br = vouch.fill 2.0 : tensor<2x4x5xf32>
  %bm = vouch.matmul %bl, %br {transpose_lhs} : (tensor<2x4x3xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  // CHECK: vouch.broadcast %{{.*}} dims [1] : (tensor<3xf32>) -> tensor<4x3xf32>
  %bb = vouch.broadcast %b dims [1] : (tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: vouch.reshape %{{.*}} : (tensor<4x3xf32>) -> tensor<12xf32>
  %rs = vouch.reshape %bb : (tensor<4x3xf32>) -> tensor<12xf32>
  // CHECK: vouch.permute %{{.*}} perm [1, 0] : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %pm = vouch.permute %bb perm [1, 0] : (tensor<4x3xf32>) -> tensor<3x4xf32>
  // CHECK: vouch.reduce_sum %{{.*}} axes [0] : (tensor<3x4xf32>) -> tensor<4xf32>
  %rsum = vouch.reduce_sum %pm axes [0] : (tensor<3x4xf32>) -> tensor<4xf32>
  // CHECK: vouch.reduce_mean %{{.*}} axes [0, 1] : (tensor<4x4xf32>) -> tensor<f32>
  %rmean = vouch.reduce_mean %mm axes [0, 1] : (tensor<4x4xf32>) -> tensor<f32>
  // CHECK: %[[L:.*]] = vouch.mse_loss %{{.*}}, %[[Y]] : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<f32>
  %l = vouch.mse_loss %nb, %y : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<f32>
  // CHECK: vouch.output "pred" %{{.*}} : tensor<4x1xf32>
  vouch.output "pred" %nb : tensor<4x1xf32>
  // CHECK: vouch.loss %[[L]] : tensor<f32>
  vouch.loss %l : tensor<f32>
  // CHECK: vouch.param_grad "w" %{{.*}} : tensor<3x2xf32>
  %gw = vouch.fill 0.0 : tensor<3x2xf32>
  vouch.param_grad "w" %gw : tensor<3x2xf32>
}

// An initialiser may still be spelled as a quoted name.
// CHECK-LABEL: vouch.model "quoted_init"
// CHECK: vouch.param "w" = kaiming_uniform {{ *}}: tensor<3x2xf32>
vouch.model "quoted_init" attributes {batch = 1 : i64} {
  %w = vouch.param "w" = "kaiming_uniform" : tensor<3x2xf32>
}

// sgd keeps momentum and has no betas; npy names a file per field.
// CHECK-LABEL: vouch.model "sgd_npy"
// CHECK-SAME: data = #vouch.data<kind = npy, files = {x = "x.npy", y = "y.npy"}>
// CHECK-SAME: train = #vouch.train<optimizer = sgd, lr = 5.000000e-01, weight_decay = 0.000000e+00, momentum = 9.000000e-01, steps = 1, log_every = 1>}
vouch.model "sgd_npy" attributes {batch = 1 : i64, data = #vouch.data<kind = npy, files = {x = "x.npy", y = "y.npy"}>, train = #vouch.train<optimizer = sgd, lr = 0.5, momentum = 0.9, weight_decay = 0.0, steps = 1, log_every = 1>} {
}

// layer_norm_grad has one result per gradient it computes: dx, then dweight
// where there is a weight, then dbias where `with_bias` is set.
// CHECK-LABEL: vouch.model "layer_norm_grads"
// CHECK: %dx, %param_grads:2 = vouch.layer_norm_grad %[[G:[^,]*]], %[[X:[^ ]*]] weight %[[W:[^ ]*]] with_bias eps 1.000000e-05 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK: %{{[^ ]*}}, %{{[^ ]*}} = vouch.layer_norm_grad %[[G]], %[[X]] weight %[[W]] eps 1.000000e-05 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
// CHECK: %{{[^ ]*}}, %{{[^ ]*}} = vouch.layer_norm_grad %[[G]], %[[X]] with_bias eps 1.000000e-05 : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
// CHECK: %{{[^ ]*}} = vouch.layer_norm_grad %[[G]], %[[X]] eps 1.000000e-05 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// An addend (vouch-fold-layer-norm-grad-sum), with and without a weight:
// CHECK: %{{[^ ]*}}, %{{[^ ]*}} = vouch.layer_norm_grad %[[G]], %[[X]] weight %[[W]] plus %[[G]] eps 1.000000e-05 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
// CHECK: %{{[^ ]*}} = vouch.layer_norm_grad %[[G]], %[[X]] plus %[[X]] eps 1.000000e-05 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
vouch.model "layer_norm_grads" attributes {batch = 1 : i64} {
  %g = vouch.fill 1.0 : tensor<4x8xf32>
  %x = vouch.fill 2.0 : tensor<4x8xf32>
  %w = vouch.fill 3.0 : tensor<8xf32>
  %a:3 = vouch.layer_norm_grad %g, %x weight %w with_bias eps 1.0e-05 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  %b:2 = vouch.layer_norm_grad %g, %x weight %w eps 1.0e-05 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
  %c:2 = vouch.layer_norm_grad %g, %x with_bias eps 1.0e-05 : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
  %d = vouch.layer_norm_grad %g, %x eps 1.0e-05 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %e:2 = vouch.layer_norm_grad %g, %x weight %w plus %g eps 1.0e-05 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
  %f = vouch.layer_norm_grad %g, %x plus %x eps 1.0e-05 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
}

// layer_norm with an addend (vouch-fold-layer-norm-add): y and the sum it
// normalised, the addend printed before the weight and bias.
// CHECK-LABEL: vouch.model "layer_norm_plus"
// CHECK: %result, %sum = vouch.layer_norm %[[X:[^ ]*]] plus %[[R:[^ ]*]] weight %[[W:[^ ]*]] bias %[[W]] eps 1.000000e-05 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: vouch.layer_norm %[[X]] plus %[[R]] eps 1.000000e-05 : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
vouch.model "layer_norm_plus" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<4x8xf32>
  %r = vouch.fill 2.0 : tensor<4x8xf32>
  %w = vouch.fill 3.0 : tensor<8xf32>
  %y, %s = vouch.layer_norm %x plus %r weight %w bias %w eps 1.0e-05 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %y2, %s2 = vouch.layer_norm %x plus %r eps 1.0e-05 : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
}

// A convolution's ops: the composites with and without a bias, and the two
// index ops of their composed form.
// CHECK-LABEL: vouch.model "convolution"
// CHECK: vouch.conv %[[X:[^,]*]], %[[W:[^,]*]], %{{[^ ]*}} stride [2, 1] padding [1, 0] dilation [1, 2] groups 2 : (tensor<2x4x6x7xf32>, tensor<6x2x3x2xf32>, tensor<6xf32>) -> tensor<2x6x3x5xf32>
// CHECK: vouch.conv %[[X]], %[[W]] stride [1, 1] padding [0, 0] dilation [1, 1] groups 2 : (tensor<2x4x6x7xf32>, tensor<6x2x3x2xf32>) -> tensor<2x6x4x6xf32>
// CHECK: vouch.conv_transpose %{{[^,]*}}, %{{[^ ]*}} stride [2] padding [1] output_padding [1] dilation [1] groups 1 : (tensor<2x4x5xf32>, tensor<4x3x3xf32>) -> tensor<2x3x10xf32>
// CHECK: %[[C:.*]] = vouch.im2col %[[X]] kernel [3, 2] stride [2, 1] padding [1, 0] dilation [1, 2] groups 2 : (tensor<2x4x6x7xf32>) -> tensor<2x12x2x3x5xf32>
// CHECK: vouch.col2im %[[C]] kernel [3, 2] stride [2, 1] padding [1, 0] dilation [1, 2] groups 2 : (tensor<2x12x2x3x5xf32>) -> tensor<2x4x6x7xf32>
// CHECK: vouch.col2im_matmul %{{[^,]*}}, %{{[^ ]*}} kernel [3, 2] stride [2, 1] padding [1, 0] dilation [1, 2] grid [3, 5] groups 2 : (tensor<2x3x12xf32>, tensor<2x3x30xf32>) -> tensor<2x4x6x7xf32>
vouch.model "convolution" attributes {batch = 2 : i64} {
  %x = vouch.fill 1.0 : tensor<2x4x6x7xf32>
  %w = vouch.fill 1.0 : tensor<6x2x3x2xf32>
  %b = vouch.fill 1.0 : tensor<6xf32>
  %y = vouch.conv %x, %w, %b stride [2, 1] padding [1, 0] dilation [1, 2] groups 2 : (tensor<2x4x6x7xf32>, tensor<6x2x3x2xf32>, tensor<6xf32>) -> tensor<2x6x3x5xf32>
  %z = vouch.conv %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] groups 2 : (tensor<2x4x6x7xf32>, tensor<6x2x3x2xf32>) -> tensor<2x6x4x6xf32>
  %s = vouch.fill 1.0 : tensor<2x4x5xf32>
  %v = vouch.fill 1.0 : tensor<4x3x3xf32>
  %t = vouch.conv_transpose %s, %v stride [2] padding [1] output_padding [1] dilation [1] groups 1 : (tensor<2x4x5xf32>, tensor<4x3x3xf32>) -> tensor<2x3x10xf32>
  %c = vouch.im2col %x kernel [3, 2] stride [2, 1] padding [1, 0] dilation [1, 2] groups 2 : (tensor<2x4x6x7xf32>) -> tensor<2x12x2x3x5xf32>
  %i = vouch.col2im %c kernel [3, 2] stride [2, 1] padding [1, 0] dilation [1, 2] groups 2 : (tensor<2x12x2x3x5xf32>) -> tensor<2x4x6x7xf32>
  %fl = vouch.fill 1.0 : tensor<2x3x12xf32>
  %fr = vouch.fill 1.0 : tensor<2x3x30xf32>
  %fi = vouch.col2im_matmul %fl, %fr kernel [3, 2] stride [2, 1] padding [1, 0] dilation [1, 2] grid [3, 5] groups 2 : (tensor<2x3x12xf32>, tensor<2x3x30xf32>) -> tensor<2x4x6x7xf32>
}

// Attention over heads packed in one tensor (built by vouch-fold-qkv-attention).
// CHECK-LABEL: vouch.model "packed_heads"
// CHECK: %[[PO:.*]], %[[PL:.*]] = vouch.qkv_attention %[[QKV:.*]] heads 2 causal scale 5.000000e-01 : (tensor<2x3x12xf32>) -> (tensor<2x3x4xf32>, tensor<2x2x3xf32>)
// CHECK: vouch.qkv_attention_grad %[[PO]], %[[QKV]], %[[PO]], %[[PL]] heads 2 causal scale 5.000000e-01 : (tensor<2x3x4xf32>, tensor<2x3x12xf32>, tensor<2x3x4xf32>, tensor<2x2x3xf32>) -> tensor<2x3x12xf32>
vouch.model "packed_heads" attributes {batch = 2 : i64} {
  %qkv = vouch.fill 1.0 : tensor<2x3x12xf32>
  %po, %pl = vouch.qkv_attention %qkv heads 2 causal scale 0.5 : (tensor<2x3x12xf32>) -> (tensor<2x3x4xf32>, tensor<2x2x3xf32>)
  %pd = vouch.qkv_attention_grad %po, %qkv, %po, %pl heads 2 causal scale 0.5 : (tensor<2x3x4xf32>, tensor<2x3x12xf32>, tensor<2x3x4xf32>, tensor<2x2x3xf32>) -> tensor<2x3x12xf32>
}

// A bf16 qkv (vouch-round-bf16-operands's): f32 results and dqkv.
// CHECK-LABEL: vouch.model "packed_heads_bf16"
// CHECK: vouch.qkv_attention %{{.*}} : (tensor<2x3x12xbf16>) -> (tensor<2x3x4xf32>, tensor<2x2x3xf32>)
// CHECK: vouch.qkv_attention_grad {{.*}} : (tensor<2x3x4xf32>, tensor<2x3x12xbf16>, tensor<2x3x4xf32>, tensor<2x2x3xf32>) -> tensor<2x3x12xf32>
vouch.model "packed_heads_bf16" attributes {batch = 2 : i64} {
  %qkv = vouch.fill 1.0 : tensor<2x3x12xf32>
  %b = vouch.round_bf16 %qkv : (tensor<2x3x12xf32>) -> tensor<2x3x12xbf16>
  %po, %pl = vouch.qkv_attention %b heads 2 causal scale 0.5 : (tensor<2x3x12xbf16>) -> (tensor<2x3x4xf32>, tensor<2x2x3xf32>)
  %pd = vouch.qkv_attention_grad %po, %b, %po, %pl heads 2 causal scale 0.5 : (tensor<2x3x4xf32>, tensor<2x3x12xbf16>, tensor<2x3x4xf32>, tensor<2x2x3xf32>) -> tensor<2x3x12xf32>
}

// batch_norm reads its running statistics (vouch.state) and returns y and the
// statistics it normalised with; batch_norm_grad one result per gradient.
// CHECK-LABEL: vouch.model "batch_norms"
// CHECK: %[[RM:[^ ]*]] = vouch.state "bn.running_mean" = zeros : tensor<3xf32>
// CHECK: %[[RV:[^ ]*]] = vouch.state "bn.running_var" = ones : tensor<3xf32>
// CHECK: %result, %mean, %rstd = vouch.batch_norm %[[X:[^ ]*]] weight %[[W:[^ ]*]] bias %{{[^ ]*}} running %[[RM]], %[[RV]] eps 1.000000e-05 momentum 1.000000e-01 : (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: vouch.batch_norm %[[X]] running %[[RM]], %[[RV]] eps 1.000000e-03 momentum 0.000000e+00 : (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: vouch.batch_norm_grad %{{[^,]*}}, %[[X]], %mean, %rstd weight %[[W]] with_bias : (tensor<4x3x5xf32>, tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: vouch.batch_norm_grad %{{[^,]*}}, %[[X]], %mean, %rstd : (tensor<4x3x5xf32>, tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3x5xf32>
vouch.model "batch_norms" attributes {batch = 4 : i64} {
  %x = vouch.input "x" : tensor<4x3x5xf32>
  %w = vouch.param "w" = ones : tensor<3xf32>
  %b = vouch.param "b" = zeros : tensor<3xf32>
  %rm = vouch.state "bn.running_mean" = zeros : tensor<3xf32>
  %rv = vouch.state "bn.running_var" = ones : tensor<3xf32>
  %y, %mean, %rstd = vouch.batch_norm %x weight %w bias %b running %rm, %rv eps 1.0e-05 momentum 1.0e-01 : (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>)
  %z:3 = vouch.batch_norm %x running %rm, %rv eps 1.0e-03 momentum 0.0 : (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>)
  %g:3 = vouch.batch_norm_grad %y, %x, %mean, %rstd weight %w with_bias : (tensor<4x3x5xf32>, tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>)
  %h = vouch.batch_norm_grad %y, %x, %mean, %rstd : (tensor<4x3x5xf32>, tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3x5xf32>
}

// linear_weight_grad: a linear's weight and bias gradients, [out, in] and [out].
// CHECK-LABEL: vouch.model "linear_weight_grad"
// CHECK: %weight_grad, %bias_grad = vouch.linear_weight_grad %{{[^,]*}}, %{{[^ ]*}} : (tensor<16x8xf32>, tensor<16x4xf32>) -> (tensor<8x4xf32>, tensor<8xf32>)
vouch.model "linear_weight_grad" attributes {batch = 1 : i64} {
  %g = vouch.input "g" : tensor<16x8xf32>
  %x = vouch.input "x" : tensor<16x4xf32>
  %dw, %db = vouch.linear_weight_grad %g, %x : (tensor<16x8xf32>, tensor<16x4xf32>) -> (tensor<8x4xf32>, tensor<8xf32>)
}

// round_bf16 and the products that read bf16 operands (vouch-round-bf16-operands'
// IR): a bf16 operand stands for f32, beside f32 or bf16, and the result is f32;
// a reshape views a bf16 value.
// CHECK-LABEL: vouch.model "bf16_operands"
// CHECK: %[[XB:.*]] = vouch.round_bf16 %{{.*}} : (tensor<16x8xf32>) -> tensor<16x8xbf16>
// CHECK: %[[WB:.*]] = vouch.round_bf16 %{{.*}} : (tensor<4x8xf32>) -> tensor<4x8xbf16>
// CHECK: vouch.linear %[[XB]], %[[WB]], %{{.*}} : (tensor<16x8xbf16>, tensor<4x8xbf16>, tensor<4xf32>) -> tensor<16x4xf32>
// CHECK: vouch.matmul %[[XB]], %{{.*}} {transpose_rhs} : (tensor<16x8xbf16>, tensor<4x8xf32>) -> tensor<16x4xf32>
// CHECK: %[[R:.*]] = vouch.reshape %[[XB]] : (tensor<16x8xbf16>) -> tensor<2x8x8xbf16>
// CHECK: vouch.matmul %[[R]], %[[WB]] {transpose_rhs} : (tensor<2x8x8xbf16>, tensor<4x8xbf16>) -> tensor<2x8x4xf32>
// CHECK: vouch.linear_weight_grad %{{.*}}, %[[XB]] : (tensor<16x4xf32>, tensor<16x8xbf16>) -> (tensor<4x8xf32>, tensor<4xf32>)
// cross_entropy_grad's dlogits stored as bf16 (its bf16Result), read by a product.
// CHECK: %[[D:.*]] = vouch.cross_entropy_grad %{{.*}} : (tensor<16x4xf32>, tensor<16xi32>, tensor<f32>) -> tensor<16x4xbf16>
// CHECK: vouch.matmul %[[D]], %[[WB]] : (tensor<16x4xbf16>, tensor<4x8xbf16>) -> tensor<16x8xf32>
// layer_norm's y stored as bf16 (its bf16Result; the sum stays f32), read by a product.
// CHECK: %[[LN:[a-z0-9_]+]], %{{[a-z0-9_]+}} = vouch.layer_norm %{{.*}} plus %{{.*}} eps 1.000000e-05 : (tensor<16x8xf32>, tensor<16x8xf32>) -> (tensor<16x8xbf16>, tensor<16x8xf32>)
// CHECK: vouch.linear %[[LN]], %[[WB]] : (tensor<16x8xbf16>, tensor<4x8xbf16>) -> tensor<16x4xf32>
// A linear's result stored as bf16 (its bf16Result), its bias bf16 too, read
// by a product.
// CHECK: %[[BB:.*]] = vouch.round_bf16 %{{.*}} : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK: %[[Y16:.*]] = vouch.linear %[[XB]], %[[WB]], %[[BB]] : (tensor<16x8xbf16>, tensor<4x8xbf16>, tensor<4xbf16>) -> tensor<16x4xbf16>
// CHECK: vouch.matmul %[[Y16]], %[[WB]] : (tensor<16x4xbf16>, tensor<4x8xbf16>) -> tensor<16x8xf32>
vouch.model "bf16_operands" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<16x8xf32>
  %w = vouch.input "w" : tensor<4x8xf32>
  %b = vouch.input "b" : tensor<4xf32>
  %g = vouch.input "g" : tensor<16x4xf32>
  %xb = vouch.round_bf16 %x : (tensor<16x8xf32>) -> tensor<16x8xbf16>
  %wb = vouch.round_bf16 %w : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  %y = vouch.linear %xb, %wb, %b : (tensor<16x8xbf16>, tensor<4x8xbf16>, tensor<4xf32>) -> tensor<16x4xf32>
  %m = vouch.matmul %xb, %w {transpose_rhs} : (tensor<16x8xbf16>, tensor<4x8xf32>) -> tensor<16x4xf32>
  %r = vouch.reshape %xb : (tensor<16x8xbf16>) -> tensor<2x8x8xbf16>
  %bm = vouch.matmul %r, %wb {transpose_rhs} : (tensor<2x8x8xbf16>, tensor<4x8xbf16>) -> tensor<2x8x4xf32>
  %dw, %db = vouch.linear_weight_grad %g, %xb : (tensor<16x4xf32>, tensor<16x8xbf16>) -> (tensor<4x8xf32>, tensor<4xf32>)
  %labels = vouch.target "labels" : tensor<16xi32>
  %dl = vouch.fill 1.0 : tensor<f32>
  %dz = vouch.cross_entropy_grad %g, %labels, %dl {ignore_index = -100 : i64} : (tensor<16x4xf32>, tensor<16xi32>, tensor<f32>) -> tensor<16x4xbf16>
  %dx = vouch.matmul %dz, %wb : (tensor<16x4xbf16>, tensor<4x8xbf16>) -> tensor<16x8xf32>
  %ln, %s = vouch.layer_norm %x plus %x eps 1.0e-05 : (tensor<16x8xf32>, tensor<16x8xf32>) -> (tensor<16x8xbf16>, tensor<16x8xf32>)
  %ly = vouch.linear %ln, %wb : (tensor<16x8xbf16>, tensor<4x8xbf16>) -> tensor<16x4xf32>
  %bb = vouch.round_bf16 %b : (tensor<4xf32>) -> tensor<4xbf16>
  %y16 = vouch.linear %xb, %wb, %bb : (tensor<16x8xbf16>, tensor<4x8xbf16>, tensor<4xbf16>) -> tensor<16x4xbf16>
  %yx = vouch.matmul %y16, %wb : (tensor<16x4xbf16>, tensor<4x8xbf16>) -> tensor<16x8xf32>
}
