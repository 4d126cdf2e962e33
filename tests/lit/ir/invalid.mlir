// RUN: %vouch-opt %s -split-input-file -verify-diagnostics
// Each op's shape rule (VouchOps.cpp) words its failure once; the frontend
// reports the same words after the builtin's name (tests/lit/frontend).

// A pointwise op whose operands differ in shape names the op and every shape.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %b = vouch.fill 1.0 : tensor<3x2xf32>
  // expected-error @+1 {{'vouch.add' op operands 'tensor<2x3xf32>' and 'tensor<3x2xf32>' differ in shape}}
  %c = vouch.add %a, %b : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
}

// -----

// Matmul contraction extents must agree (taking transpose flags into account).
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<4x3xf32>
  %b = vouch.fill 1.0 : tensor<4x5xf32>
  // expected-error @+1 {{'vouch.matmul' op cannot multiply 'tensor<4x3xf32>' by 'tensor<4x5xf32>': contraction extents 3 and 4 differ}}
  %c = vouch.matmul %a, %b : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
}

// -----

// Transposed-lhs matmul with the wrong result shape.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<4x3xf32>
  %b = vouch.fill 1.0 : tensor<4x5xf32>
  // expected-error @+1 {{'vouch.matmul' op result 'tensor<4x5xf32>' differs from the inferred 'tensor<3x5xf32>'}}
  %c = vouch.matmul %a, %b {transpose_lhs} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
}

// -----

// Linear: the input's features must match the weight's second axis.
vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x3xf32>
  %w = vouch.param "w" = zeros : tensor<8x2xf32>
  // expected-error @+1 {{'vouch.linear' op input 'tensor<1x3xf32>' does not match weight 'tensor<8x2xf32>': the input's last axis must have extent 2 (the weight is [out, in])}}
  %y = vouch.linear %x, %w : (tensor<1x3xf32>, tensor<8x2xf32>) -> tensor<1x8xf32>
}

// -----

// Linear: the bias must have the weight's output extent.
vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x2xf32>
  %w = vouch.param "w" = zeros : tensor<8x2xf32>
  %b = vouch.param "b" = zeros : tensor<4xf32>
  // expected-error @+1 {{'vouch.linear' op bias 'tensor<4xf32>' does not match weight 'tensor<8x2xf32>': expected [8]}}
  %y = vouch.linear %x, %w, %b : (tensor<1x2xf32>, tensor<8x2xf32>, tensor<4xf32>) -> tensor<1x8xf32>
}

// -----

// Linear: a bf16 result (its bf16Result, folded by vouch-round-bf16-operands)
// is a product of bf16 input and weight.
vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x2xf32>
  %w = vouch.param "w" = zeros : tensor<8x2xf32>
  %x16 = vouch.round_bf16 %x : (tensor<1x2xf32>) -> tensor<1x2xbf16>
  // expected-error @+1 {{'vouch.linear' op result 'tensor<1x8xbf16>' is bf16, which a linear stores only from bf16 input and weight}}
  %y = vouch.linear %x16, %w : (tensor<1x2xbf16>, tensor<8x2xf32>) -> tensor<1x8xbf16>
}

// -----

// Linear: a bf16 result adds a bf16 bias (cuBLASLt adds a bias of D's type).
vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x2xf32>
  %w = vouch.param "w" = zeros : tensor<8x2xf32>
  %b = vouch.param "b" = zeros : tensor<8xf32>
  %x16 = vouch.round_bf16 %x : (tensor<1x2xf32>) -> tensor<1x2xbf16>
  %w16 = vouch.round_bf16 %w : (tensor<8x2xf32>) -> tensor<8x2xbf16>
  // expected-error @+1 {{'vouch.linear' op result 'tensor<1x8xbf16>' is bf16 but its bias 'tensor<8xf32>' is not: a linear storing a bf16 result adds a bf16 bias}}
  %y = vouch.linear %x16, %w16, %b : (tensor<1x2xbf16>, tensor<8x2xbf16>, tensor<8xf32>) -> tensor<1x8xbf16>
}

// -----

// Linear: a bf16 bias only beside a bf16 result.
vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x2xf32>
  %w = vouch.param "w" = zeros : tensor<8x2xf32>
  %b = vouch.param "b" = zeros : tensor<8xf32>
  %b16 = vouch.round_bf16 %b : (tensor<8xf32>) -> tensor<8xbf16>
  // expected-error @+1 {{'vouch.linear' op bias 'tensor<8xbf16>' is bf16, which only a linear storing a bf16 result takes}}
  %y = vouch.linear %x, %w, %b16 : (tensor<1x2xf32>, tensor<8x2xf32>, tensor<8xbf16>) -> tensor<1x8xf32>
}

// -----

// Matmul operands share an element type.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<4x3xf32>
  %b = vouch.fill 1.0 : tensor<3x5xf64>
  // expected-error @+1 {{'vouch.matmul' op element types differ: 'tensor<4x3xf32>' and 'tensor<3x5xf64>'}}
  %c = vouch.matmul %a, %b : (tensor<4x3xf32>, tensor<3x5xf64>) -> tensor<4x5xf32>
}

// -----

// Batched matmul: batched operands have the same batch axes (the frontend
// broadcasts a partial batch before it builds the op).
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x4x3xf32>
  %b = vouch.fill 1.0 : tensor<3x3x5xf32>
  // expected-error @+1 {{'vouch.matmul' op batch axes differ: 'tensor<2x4x3xf32>' and 'tensor<3x3x5xf32>' (an operand has the result's batch axes or is one matrix of rank 2)}}
  %c = vouch.matmul %a, %b : (tensor<2x4x3xf32>, tensor<3x3x5xf32>) -> tensor<2x4x5xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x2x4x3xf32>
  %b = vouch.fill 1.0 : tensor<2x3x5xf32>
  // expected-error @+1 {{'vouch.matmul' op batch axes differ: 'tensor<2x2x4x3xf32>' and 'tensor<2x3x5xf32>'}}
  %c = vouch.matmul %a, %b : (tensor<2x2x4x3xf32>, tensor<2x3x5xf32>) -> tensor<2x2x4x5xf32>
}

// -----

// Matrices: a vector is not one.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<3xf32>
  %b = vouch.fill 1.0 : tensor<3x5xf32>
  // expected-error @+1 {{'vouch.matmul' op multiplies matrices or batches of matrices (rank 2 or more), got 'tensor<3xf32>' and 'tensor<3x5xf32>'}}
  %c = vouch.matmul %a, %b : (tensor<3xf32>, tensor<3x5xf32>) -> tensor<5xf32>
}

// -----

// A pointwise op's result has its operands' type.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.relu' op result 'tensor<3x2xf32>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.relu %a : (tensor<2x3xf32>) -> tensor<3x2xf32>
}

// -----

// Broadcast can only stretch unit axes.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<3xf32>
  // expected-error @+1 {{'vouch.broadcast' op cannot broadcast 'tensor<3xf32>' to [4, 5]: input axis 0 has extent 3 but target axis 1 has 5}}
  %b = vouch.broadcast %a dims [1] : (tensor<3xf32>) -> tensor<4x5xf32>
}

// -----

// Reshape keeps the element count.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.reshape' op cannot reshape 'tensor<2x3xf32>' (6 elements) to [7] (7 elements)}}
  %b = vouch.reshape %a : (tensor<2x3xf32>) -> tensor<7xf32>
}

// -----

// Permute needs a permutation.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.permute' op [0, 0] is not a permutation of the axes of 'tensor<2x3xf32>'}}
  %b = vouch.permute %a perm [0, 0] : (tensor<2x3xf32>) -> tensor<2x3xf32>
}

// -----

// Reductions remove exactly their axes.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.reduce_sum' op result 'tensor<2xf32>' differs from the inferred 'tensor<3xf32>'}}
  %b = vouch.reduce_sum %a axes [0] : (tensor<2x3xf32>) -> tensor<2xf32>
}

// -----

// Reduction axes are strictly increasing axes of the input.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.reduce_mean' op axes must be strictly increasing axes of 'tensor<2x3xf32>', got [1, 0]}}
  %b = vouch.reduce_mean %a axes [1, 0] : (tensor<2x3xf32>) -> tensor<f32>
}

// -----

// cross_entropy: labels are the logits' shape without the class axis.
vouch.model "m" attributes {batch = 1 : i64} {
  %z = vouch.fill 1.0 : tensor<2x3x4xf32>
  %y = vouch.target "y" : tensor<2x4xi32>
  // expected-error @+1 {{'vouch.cross_entropy' op labels 'tensor<2x4xi32>' must have the shape of logits 'tensor<2x3x4xf32>' without its class axis}}
  %l = vouch.cross_entropy %z, %y {ignore_index = -100 : i64} : (tensor<2x3x4xf32>, tensor<2x4xi32>) -> tensor<f32>
}

// -----

// cross_entropy: the logits need a class axis.
vouch.model "m" attributes {batch = 1 : i64} {
  %z = vouch.fill 1.0 : tensor<f32>
  %y = vouch.target "y" : tensor<i32>
  // expected-error @+1 {{'vouch.cross_entropy' op logits 'tensor<f32>' need a class axis (last) of at least one class}}
  %l = vouch.cross_entropy %z, %y {ignore_index = -100 : i64} : (tensor<f32>, tensor<i32>) -> tensor<f32>
}

// -----

// cross_entropy_grad: dloss is the loss's rank-0 type.
vouch.model "m" attributes {batch = 1 : i64} {
  %z = vouch.fill 1.0 : tensor<2x4xf32>
  %y = vouch.target "y" : tensor<2xi32>
  %d = vouch.fill 1.0 : tensor<2xf32>
  // expected-error @+1 {{'vouch.cross_entropy_grad' op dloss 'tensor<2xf32>' must be 'tensor<f32>'}}
  %g = vouch.cross_entropy_grad %z, %y, %d {ignore_index = -100 : i64} : (tensor<2x4xf32>, tensor<2xi32>, tensor<2xf32>) -> tensor<2x4xf32>
}

// -----

// layer_norm's y is bf16 only for f32 rows (its bf16Result), of their shape.
vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<2x4xf64>
  // expected-error @+1 {{'vouch.layer_norm' op result 'tensor<2x4xbf16>' differs from the inferred 'tensor<2x4xf64>'}}
  %y = vouch.layer_norm %x eps 1.0e-05 : (tensor<2x4xf64>) -> tensor<2x4xbf16>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<2x4xf32>
  // expected-error @+1 {{'vouch.layer_norm' op result 'tensor<4x2xbf16>' differs from the inferred 'tensor<2x4xf32>'}}
  %y = vouch.layer_norm %x eps 1.0e-05 : (tensor<2x4xf32>) -> tensor<4x2xbf16>
}

// -----

// cross_entropy_grad's result is the logits' type, or bf16 of their shape for f32
// logits only (its bf16Result).
vouch.model "m" attributes {batch = 1 : i64} {
  %z = vouch.fill 1.0 : tensor<2x4xf64>
  %y = vouch.target "y" : tensor<2xi32>
  %d = vouch.fill 1.0 : tensor<f64>
  // expected-error @+1 {{'vouch.cross_entropy_grad' op result 'tensor<2x4xbf16>' must be the logits' type 'tensor<2x4xf64>' (or, for f32 logits, their shape in bf16)}}
  %g = vouch.cross_entropy_grad %z, %y, %d {ignore_index = -100 : i64} : (tensor<2x4xf64>, tensor<2xi32>, tensor<f64>) -> tensor<2x4xbf16>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %z = vouch.fill 1.0 : tensor<2x4xf32>
  %y = vouch.target "y" : tensor<2xi32>
  %d = vouch.fill 1.0 : tensor<f32>
  // expected-error @+1 {{'vouch.cross_entropy_grad' op result 'tensor<2x5xbf16>' must be the logits' type 'tensor<2x4xf32>' (or, for f32 logits, their shape in bf16)}}
  %g = vouch.cross_entropy_grad %z, %y, %d {ignore_index = -100 : i64} : (tensor<2x4xf32>, tensor<2xi32>, tensor<f32>) -> tensor<2x5xbf16>
}

// -----

// cross_entropy's classes (vouch-pad-classes') count at most the class axis.
vouch.model "m" attributes {batch = 1 : i64} {
  %z = vouch.fill 1.0 : tensor<2x4xf32>
  %y = vouch.target "y" : tensor<2xi32>
  // expected-error @+1 {{'vouch.cross_entropy' op classes 5 must be in [1, the class axis's extent] of 'tensor<2x4xf32>'}}
  %l = vouch.cross_entropy %z, %y {classes = 5 : i64, ignore_index = -100 : i64} : (tensor<2x4xf32>, tensor<2xi32>) -> tensor<f32>
}

// -----

// ... and at least one class; cross_entropy_grad's too.
vouch.model "m" attributes {batch = 1 : i64} {
  %z = vouch.fill 1.0 : tensor<2x4xf32>
  %y = vouch.target "y" : tensor<2xi32>
  %d = vouch.fill 1.0 : tensor<f32>
  // expected-error @+1 {{'vouch.cross_entropy_grad' op classes 0 must be in [1, the class axis's extent] of 'tensor<2x4xf32>'}}
  %g = vouch.cross_entropy_grad %z, %y, %d {classes = 0 : i64, ignore_index = -100 : i64} : (tensor<2x4xf32>, tensor<2xi32>, tensor<f32>) -> tensor<2x4xf32>
}

// -----

// An output's columns (vouch-pad-classes') are at most its last extent.
vouch.model "m" attributes {batch = 1 : i64} {
  %z = vouch.fill 1.0 : tensor<2x4xf32>
  // expected-error @+1 {{'vouch.output' op columns 7 must be in [1, the last extent] of 'tensor<2x4xf32>'}}
  vouch.output "z" %z {columns = 7 : i64} : tensor<2x4xf32>
}

// -----

// mse_loss compares equal shapes.
vouch.model "m" attributes {batch = 1 : i64} {
  %p = vouch.fill 1.0 : tensor<2x1xf32>
  %t = vouch.fill 1.0 : tensor<1x2xf32>
  // expected-error @+1 {{'vouch.mse_loss' op prediction 'tensor<2x1xf32>' and target 'tensor<1x2xf32>' must have the same shape}}
  %l = vouch.mse_loss %p, %t : (tensor<2x1xf32>, tensor<1x2xf32>) -> tensor<f32>
}

// -----

// The loss is a scalar.
vouch.model "m" attributes {batch = 1 : i64} {
  %p = vouch.fill 1.0 : tensor<2xf32>
  // expected-error @+1 {{'vouch.loss' op loss must be a scalar (rank-0 tensor), got 'tensor<2xf32>'}}
  vouch.loss %p : tensor<2xf32>
}

// -----

// Initialisers are a closed set (vouch::InitKind) with fixed arity.
vouch.model "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{unknown initialiser 'glorot'; known: zeros, ones, uniform, normal, xavier_uniform, kaiming_uniform}}
  %w = vouch.param "w" = glorot : tensor<2xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'vouch.param' op initialiser 'uniform' takes 2 arguments, got 1}}
  %w = vouch.param "w" = uniform [1.0] : tensor<2xf32>
}

// -----

// A train attribute holds exactly its optimizer's hyper-parameters.
// expected-error @+1 {{'adam' needs its argument 'beta1'}}
vouch.model "m" attributes {batch = 1 : i64, train = #vouch.train<optimizer = adam, lr = 0.1, weight_decay = 0.0, steps = 1, log_every = 1>} {
}

// -----

// expected-error @+1 {{'sgd' takes no argument 'beta1'}}
vouch.model "m" attributes {batch = 1 : i64, train = #vouch.train<optimizer = sgd, lr = 0.1, beta1 = 0.9, weight_decay = 0.0, momentum = 0.0, steps = 1, log_every = 1>} {
}

// -----

// Optimizers are a closed set (vouch::OptimizerKind).
// expected-error @+2 {{expected ::vouch::OptimizerKind to be one of: sgd, adam, adamw}}
// expected-error @+1 {{failed to parse Vouch_TrainAttr parameter 'optimizer'}}
vouch.model "m" attributes {batch = 1 : i64, train = #vouch.train<optimizer = adan, lr = 0.1, weight_decay = 0.0, steps = 1, log_every = 1>} {
}

// -----

// A data attribute holds exactly its source's arguments.
// expected-error @+1 {{'csv' takes no argument 'files'}}
vouch.model "m" attributes {batch = 1 : i64, data = #vouch.data<kind = csv, path = "a.csv", files = {x = "b.npy"}>} {
}

// -----

// Two declarations of one name are refused, pointing at the first.
vouch.model "m" attributes {batch = 1 : i64} {
  // expected-note @+1 {{previous definition is here}}
  %w = vouch.param "w" = zeros : tensor<2xf32>
  // expected-error @+1 {{'vouch.param' op redefines 'w'}}
  %v = vouch.param "w" = zeros : tensor<2xf32>
}

// -----

// Shapes are static: a dynamic extent is rejected by the type constraint.
vouch.model "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'vouch.input' op result #0 must be statically shaped tensor}}
  %x = vouch.input "x" : tensor<?x2xf32>
}

// -----

// Every compute op's shape rule has a case here: the reference capsules'
// shape contracts cite this file for each op (tools/check_evidence.sh
// checks that an `'vouch.<op>' op` error is expected for every one).

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %b = vouch.fill 1.0 : tensor<3x2xf32>
  // expected-error @+1 {{'vouch.sub' op operands 'tensor<2x3xf32>' and 'tensor<3x2xf32>' differ in shape}}
  %c = vouch.sub %a, %b : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
}

// -----

// Pointwise operands share an element type.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %b = vouch.fill 1.0 : tensor<2x3xf64>
  // expected-error @+1 {{'vouch.mul' op element types differ: 'tensor<2x3xf32>' and 'tensor<2x3xf64>'}}
  %c = vouch.mul %a, %b : (tensor<2x3xf32>, tensor<2x3xf64>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.tanh' op result 'tensor<2x3xf64>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.tanh %a : (tensor<2x3xf32>) -> tensor<2x3xf64>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.exp' op result 'tensor<6xf32>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.exp %a : (tensor<2x3xf32>) -> tensor<6xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.step' op result 'tensor<3x2xf32>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.step %a : (tensor<2x3xf32>) -> tensor<3x2xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.scale' op result 'tensor<2xf32>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.scale %a by 2.0 : (tensor<2x3xf32>) -> tensor<2xf32>
}

// -----

// A fill makes a static float tensor, nothing else.
vouch.model "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'vouch.fill' op result #0 must be statically shaped tensor of 32-bit float or 64-bit float values, but got 'tensor<2x3xi32>'}}
  %a = vouch.fill 1.0 : tensor<2x3xi32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.abs' op result 'tensor<2x3xf64>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.abs %a : (tensor<2x3xf32>) -> tensor<2x3xf64>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.sqrt' op result 'tensor<2x3xf64>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.sqrt %a : (tensor<2x3xf32>) -> tensor<2x3xf64>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.log' op result 'tensor<2x3xf64>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.log %a : (tensor<2x3xf32>) -> tensor<2x3xf64>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.sin' op result 'tensor<2x3xf64>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.sin %a : (tensor<2x3xf32>) -> tensor<2x3xf64>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.cos' op result 'tensor<2x3xf64>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.cos %a : (tensor<2x3xf32>) -> tensor<2x3xf64>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.sigmoid' op result 'tensor<2x3xf64>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.sigmoid %a : (tensor<2x3xf32>) -> tensor<2x3xf64>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.silu' op result 'tensor<2x3xf64>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.silu %a : (tensor<2x3xf32>) -> tensor<2x3xf64>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.inv' op result 'tensor<2x3xf64>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.inv %a : (tensor<2x3xf32>) -> tensor<2x3xf64>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %b = vouch.fill 1.0 : tensor<3x2xf32>
  // expected-error @+1 {{'vouch.div' op operands 'tensor<2x3xf32>' and 'tensor<3x2xf32>' differ in shape}}
  %c = vouch.div %a, %b : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %b = vouch.fill 1.0 : tensor<3x2xf32>
  // expected-error @+1 {{'vouch.maximum' op operands 'tensor<2x3xf32>' and 'tensor<3x2xf32>' differ in shape}}
  %c = vouch.maximum %a, %b : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %b = vouch.fill 1.0 : tensor<3x2xf32>
  // expected-error @+1 {{'vouch.minimum' op operands 'tensor<2x3xf32>' and 'tensor<3x2xf32>' differ in shape}}
  %c = vouch.minimum %a, %b : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.softplus' op result 'tensor<2x3xf64>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.softplus %a beta 1.0 threshold 20.0 : (tensor<2x3xf32>) -> tensor<2x3xf64>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.safe_log' op result 'tensor<2x3xf64>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.safe_log %a eps 1.0e-12 : (tensor<2x3xf32>) -> tensor<2x3xf64>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.clamp' op result 'tensor<2x3xf64>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.clamp %a min -1.0 max 1.0 : (tensor<2x3xf32>) -> tensor<2x3xf64>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.pow' op result 'tensor<2x3xf64>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.pow %a p 2.0 : (tensor<2x3xf32>) -> tensor<2x3xf64>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.softplus' op beta must be a finite non-zero number, got 0}}
  %b = vouch.softplus %a beta 0.0 threshold 20.0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.safe_log' op eps must be a finite positive number, got 0}}
  %b = vouch.safe_log %a eps 0.0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.clamp' op min (1) must not exceed max (-1)}}
  %b = vouch.clamp %a min 1.0 max -1.0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.reduce_max' op result 'tensor<2xf32>' differs from the inferred 'tensor<3xf32>'}}
  %b = vouch.reduce_max %a axes [0] : (tensor<2x3xf32>) -> tensor<2xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.reduce_min' op axes must be strictly increasing axes of 'tensor<2x3xf32>', got [1, 0]}}
  %b = vouch.reduce_min %a axes [1, 0] : (tensor<2x3xf32>) -> tensor<f32>
}

// -----

// gelu's mode is "tanh" or "none".
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.gelu' op approximate must be "tanh" or "none", got "fast"}}
  %b = vouch.gelu %a approximate "fast" : (tensor<2x3xf32>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.gelu_grad' op result 'tensor<3x2xf32>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.gelu_grad %a approximate "none" : (tensor<2x3xf32>) -> tensor<3x2xf32>
}

// -----

// slice's bounds are normalised: 0 ≤ start < end ≤ extent, step ≥ 1.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x5xf32>
  // expected-error @+1 {{'vouch.slice' op start -1 and end 5 must satisfy 0 ≤ start < end ≤ 5 (axis 1 of 'tensor<2x5xf32>')}}
  %b = vouch.slice %a axis 1 start -1 end 5 step 1 : (tensor<2x5xf32>) -> tensor<2x5xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x5xf32>
  // expected-error @+1 {{'vouch.slice' op step must be at least 1, got 0}}
  %b = vouch.slice %a axis 1 start 0 end 5 step 0 : (tensor<2x5xf32>) -> tensor<2x5xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x5xf32>
  // expected-error @+1 {{'vouch.slice' op result 'tensor<2x2xf32>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.slice %a axis 1 start 0 end 5 step 2 : (tensor<2x5xf32>) -> tensor<2x2xf32>
}

// -----

// slice_scatter's result is what the slice reads from.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x2xf32>
  // expected-error @+1 {{'vouch.slice_scatter' op input 'tensor<2x2xf32>' differs from the slice of the result, 'tensor<2x3xf32>'}}
  %b = vouch.slice_scatter %a axis 1 start 0 end 5 step 2 : (tensor<2x2xf32>) -> tensor<2x5xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.slice_scatter' op axis 2 is not an axis of 'tensor<2x5xf32>'}}
  %b = vouch.slice_scatter %a axis 2 start 0 end 1 step 1 : (tensor<2x3xf32>) -> tensor<2x5xf32>
}

// -----

// concat's inputs agree but on the axis.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %b = vouch.fill 1.0 : tensor<3x3xf32>
  // expected-error @+1 {{'vouch.concat' op shapes must agree except on axis 1, got 'tensor<2x3xf32>', 'tensor<3x3xf32>'}}
  %c = vouch.concat %a, %b axis 1 : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %b = vouch.fill 1.0 : tensor<2x1xf32>
  // expected-error @+1 {{'vouch.concat' op result 'tensor<2x5xf32>' differs from the inferred 'tensor<2x4xf32>'}}
  %c = vouch.concat %a, %b axis 1 : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %b = vouch.fill 1.0 : tensor<2x3xf64>
  // expected-error @+1 {{'vouch.concat' op element types differ: 'tensor<2x3xf32>' and 'tensor<2x3xf64>'}}
  %c = vouch.concat %a, %b axis 0 : (tensor<2x3xf32>, tensor<2x3xf64>) -> tensor<4x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.softmax' op axis 2 is out of range for 'tensor<2x3xf32>' (rank 2)}}
  %b = vouch.softmax %a axis 2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.log_softmax' op result 'tensor<3x2xf32>' differs from the inferred 'tensor<2x3xf32>'}}
  %b = vouch.log_softmax %a axis 1 : (tensor<2x3xf32>) -> tensor<3x2xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %b = vouch.fill 1.0 : tensor<3x2xf32>
  // expected-error @+1 {{'vouch.softmax_grad' op grad 'tensor<2x3xf32>' and output 'tensor<3x2xf32>' must have one type}}
  %c = vouch.softmax_grad %a, %b axis 1 : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.log_softmax_grad' op axis -1 is out of range for 'tensor<2x3xf32>' (rank 2)}}
  %c = vouch.log_softmax_grad %a, %a axis -1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %w = vouch.fill 1.0 : tensor<2xf32>
  // expected-error @+1 {{'vouch.layer_norm' op weight 'tensor<2xf32>' does not match input 'tensor<2x3xf32>': expected [3] (the input's last extent)}}
  %b = vouch.layer_norm %a weight %w eps 1.0e-05 : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<f32>
  // expected-error @+1 {{'vouch.layer_norm' op normalises the last axis of a tensor of rank ≥ 1, got 'tensor<f32>'}}
  %b = vouch.layer_norm %a eps 1.0e-05 : (tensor<f32>) -> tensor<f32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.layer_norm' op eps must be a finite number ≥ 0, got -1}}
  %b = vouch.layer_norm %a eps -1.0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %b = vouch.fill 1.0 : tensor<2x3xf64>
  // expected-error @+1 {{'vouch.layer_norm_grad' op grad 'tensor<2x3xf64>' and input 'tensor<2x3xf32>' must have one type}}
  %c = vouch.layer_norm_grad %b, %a eps 1.0e-05 : (tensor<2x3xf64>, tensor<2x3xf32>) -> tensor<2x3xf32>
}

// -----

// layer_norm's addend has the input's type, and comes with its sum result
// (and the sum with an addend), of the input's type.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %b = vouch.fill 1.0 : tensor<3x2xf32>
  // expected-error @+1 {{'vouch.layer_norm' op addend 'tensor<3x2xf32>' and input 'tensor<2x3xf32>' must have one type}}
  %y, %s = vouch.layer_norm %a plus %b eps 1.0e-05 : (tensor<2x3xf32>, tensor<3x2xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.layer_norm' op has an addend but no sum result}}
  %y = vouch.layer_norm %a plus %a eps 1.0e-05 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.layer_norm' op has a sum result but no addend}}
  %y, %s = vouch.layer_norm %a eps 1.0e-05 : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.layer_norm' op sum has type 'tensor<2x3xf64>', expected 'tensor<2x3xf32>'}}
  %y, %s = vouch.layer_norm %a plus %a eps 1.0e-05 : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf64>)
}

// -----

// layer_norm_grad's addend has the input's type.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %b = vouch.fill 1.0 : tensor<3x2xf32>
  // expected-error @+1 {{'vouch.layer_norm_grad' op addend 'tensor<3x2xf32>' and input 'tensor<2x3xf32>' must have one type}}
  %c = vouch.layer_norm_grad %a, %a plus %b eps 1.0e-05 : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
}

// -----

// layer_norm_grad: one [D] result per gradient it says it computes.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %w = vouch.fill 1.0 : tensor<3xf32>
  // expected-error @+1 {{'vouch.layer_norm_grad' op has 2 results, expected 3 (dx, dweight, dbias)}}
  %c:2 = vouch.layer_norm_grad %a, %a weight %w with_bias eps 1.0e-05 : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.layer_norm_grad' op has 2 results, expected 1 (dx)}}
  %c:2 = vouch.layer_norm_grad %a, %a eps 1.0e-05 : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %w = vouch.fill 1.0 : tensor<3xf32>
  // expected-error @+1 {{'vouch.layer_norm_grad' op parameter gradient 'tensor<2x3xf32>' does not match input 'tensor<2x3xf32>': expected 'tensor<3xf32>'}}
  %c:2 = vouch.layer_norm_grad %a, %a weight %w eps 1.0e-05 : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
}

// -----

// embedding: ids i32, a [V, D] table; embedding_grad's dy is the embedding's type.
vouch.model "m" attributes {batch = 1 : i64} {
  %ids = vouch.target "ids" : tensor<4xi32>
  %t = vouch.fill 1.0 : tensor<10xf32>
  // expected-error @+1 {{'vouch.embedding' op table 'tensor<10xf32>' must be [V, D] with V, D ≥ 1}}
  %e = vouch.embedding %ids, %t : (tensor<4xi32>, tensor<10xf32>) -> tensor<4xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %ids = vouch.target "ids" : tensor<4xi32>
  %t = vouch.fill 1.0 : tensor<10x3xf32>
  // expected-error @+1 {{'vouch.embedding' op result 'tensor<4x10xf32>' differs from the inferred 'tensor<4x3xf32>'}}
  %e = vouch.embedding %ids, %t : (tensor<4xi32>, tensor<10x3xf32>) -> tensor<4x10xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %ids = vouch.target "ids" : tensor<4xi32>
  %dy = vouch.fill 1.0 : tensor<4x2xf32>
  // expected-error @+1 {{'vouch.embedding_grad' op dy 'tensor<4x2xf32>' must be 'tensor<4x3xf32>', the embedding of the ids in the result's table}}
  %g = vouch.embedding_grad %ids, %dy : (tensor<4xi32>, tensor<4x2xf32>) -> tensor<10x3xf32>
}

// -----

// gather / scatter_add: index i32 of x's rank and extents but on the axis.
vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<4x8xf32>
  %i = vouch.target "i" : tensor<3x3xi32>
  // expected-error @+1 {{'vouch.gather' op index 'tensor<3x3xi32>' must have the rank of 'tensor<4x8xf32>' and its extents on every axis but 1}}
  %g = vouch.gather %x, %i axis 1 : (tensor<4x8xf32>, tensor<3x3xi32>) -> tensor<3x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<4x8xf32>
  %i = vouch.target "i" : tensor<4x3xi32>
  // expected-error @+1 {{'vouch.gather' op axis 2 is not an axis of 'tensor<4x8xf32>'}}
  %g = vouch.gather %x, %i axis 2 : (tensor<4x8xf32>, tensor<4x3xi32>) -> tensor<4x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<4x8xf32>
  %i = vouch.target "i" : tensor<4x3xi32>
  %s = vouch.fill 1.0 : tensor<4x3xf64>
  // expected-error @+1 {{'vouch.scatter_add' op src 'tensor<4x3xf64>' must be 'tensor<4x3xf32>': index's shape in x's element type}}
  %r = vouch.scatter_add %x, %i, %s axis 1 : (tensor<4x8xf32>, tensor<4x3xi32>, tensor<4x3xf64>) -> tensor<4x8xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<4x8xf32>
  %i = vouch.target "i" : tensor<4x3xi32>
  %s = vouch.fill 1.0 : tensor<4x3xf32>
  // expected-error @+1 {{'vouch.scatter_add' op result 'tensor<4x3xf32>' differs from the inferred 'tensor<4x8xf32>'}}
  %r = vouch.scatter_add %x, %i, %s axis 1 : (tensor<4x8xf32>, tensor<4x3xi32>, tensor<4x3xf32>) -> tensor<4x3xf32>
}

// -----

// dropout's p is in [0, 1): p = 1 would scale the kept elements by 1/0.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x5xf32>
  // expected-error @+1 {{'vouch.dropout' op p must be in [0, 1), got 1}}
  %b = vouch.dropout %a p 1.0 ordinal 0 : (tensor<2x5xf32>) -> tensor<2x5xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x5xf32>
  // expected-error @+1 {{'vouch.dropout' op result type 'tensor<5x2xf32>' differs from the input's 'tensor<2x5xf32>'}}
  %b = vouch.dropout %a p 0.5 ordinal 0 : (tensor<2x5xf32>) -> tensor<5x2xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'vouch.bernoulli_mask' op p must be in [0, 1], got -0.25}}
  %m = vouch.bernoulli_mask p -0.25 ordinal 0 : tensor<2x5xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'vouch.rand_uniform' op ordinal must be non-negative, got -1}}
  %u = vouch.rand_uniform ordinal -1 : tensor<2x5xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %m = vouch.target "m" : tensor<2x3xi32>
  // expected-error @+1 {{'vouch.masked_softmax' op the mask must be i1 (true keeps an element), got 'tensor<2x3xi32>'}}
  %b = vouch.masked_softmax %a, %m axis 1 : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %m = vouch.target "m" : tensor<2x2xi1>
  // expected-error @+1 {{'vouch.masked_softmax' op the mask 'tensor<2x2xi1>' does not broadcast to 'tensor<2x3xf32>'}}
  %b = vouch.masked_softmax %a, %m axis 1 : (tensor<2x3xf32>, tensor<2x2xi1>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %m = vouch.target "m" : tensor<1x2x3xi1>
  // expected-error @+1 {{'vouch.masked_softmax' op the mask 'tensor<1x2x3xi1>' does not broadcast to 'tensor<2x3xf32>'}}
  %b = vouch.masked_softmax %a, %m axis 1 : (tensor<2x3xf32>, tensor<1x2x3xi1>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %m = vouch.target "m" : tensor<3xi1>
  // expected-error @+1 {{'vouch.masked_softmax' op axis 2 is out of range for 'tensor<2x3xf32>' (rank 2)}}
  %b = vouch.masked_softmax %a, %m axis 2 : (tensor<2x3xf32>, tensor<3xi1>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.cast' op converts to f32, f64 or i32, not 'i1'}}
  %b = vouch.cast %a : (tensor<2x3xf32>) -> tensor<2x3xi1>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.cast' op result 'tensor<3x2xi32>' differs from the inferred 'tensor<2x3xi32>'}}
  %b = vouch.cast %a : (tensor<2x3xf32>) -> tensor<3x2xi32>
}

// -----

// round_bf16 keeps its input's shape, rounds only f32 (bf16 products run in
// f32 builds), and makes bf16.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.round_bf16' op result 'tensor<3x2xbf16>' must have the input's shape 'tensor<2x3xf32>'}}
  %b = vouch.round_bf16 %a : (tensor<2x3xf32>) -> tensor<3x2xbf16>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf64>
  // expected-error @+1 {{'vouch.round_bf16' op operand #0 must be statically shaped tensor of 32-bit float values}}
  %b = vouch.round_bf16 %a : (tensor<2x3xf64>) -> tensor<2x3xbf16>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.round_bf16' op result #0 must be statically shaped tensor of bfloat16 type values}}
  %b = vouch.round_bf16 %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
}

// -----

// A bf16 operand stands for an f32 value: beside an f64 one it is an error,
// and the product's result is f32.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<4x3xf32>
  %ab = vouch.round_bf16 %a : (tensor<4x3xf32>) -> tensor<4x3xbf16>
  %b = vouch.fill 1.0 : tensor<3x5xf64>
  // expected-error @+1 {{'vouch.matmul' op element types differ: 'tensor<4x3xbf16>' and 'tensor<3x5xf64>'}}
  %c = vouch.matmul %ab, %b : (tensor<4x3xbf16>, tensor<3x5xf64>) -> tensor<4x5xf64>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<4x3xf32>
  %ab = vouch.round_bf16 %a : (tensor<4x3xf32>) -> tensor<4x3xbf16>
  %w = vouch.fill 1.0 : tensor<5x3xf64>
  // expected-error @+1 {{'vouch.linear' op element types differ: 'tensor<4x3xbf16>' and 'tensor<5x3xf64>'}}
  %c = vouch.linear %ab, %w : (tensor<4x3xbf16>, tensor<5x3xf64>) -> tensor<4x5xf32>
}

// -----

// Only products and reshapes read bf16 values.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  %b = vouch.round_bf16 %a : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  // expected-error @+1 {{'vouch.relu' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float values}}
  %c = vouch.relu %b : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
}

// -----

// The causal mask is an i1 matrix.
vouch.model "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'vouch.causal_mask' op result must be an i1 matrix [rows, columns], got 'tensor<2x3x3xi1>'}}
  %m = vouch.causal_mask : tensor<2x3x3xi1>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'vouch.causal_mask' op result must be an i1 matrix [rows, columns], got 'tensor<3x3xf32>'}}
  %m = vouch.causal_mask : tensor<3x3xf32>
}

// -----

// scaled_dot_product_attention: a mask or causal, not both.
vouch.model "m" attributes {batch = 1 : i64} {
  %q = vouch.fill 1.0 : tensor<2x3x4xf32>
  %m = vouch.causal_mask : tensor<3x3xi1>
  // expected-error @+1 {{'vouch.scaled_dot_product_attention' op takes a mask or `causal`, not both (as torch's is_causal with attn_mask)}}
  %o = vouch.scaled_dot_product_attention %q, %q, %q mask %m causal scale 0.5 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3x3xi1>) -> tensor<2x3x4xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %q = vouch.fill 1.0 : tensor<2x3x4xf32>
  %v = vouch.fill 1.0 : tensor<2x3x6xf32>
  // expected-error @+1 {{'vouch.scaled_dot_product_attention' op result 'tensor<2x3x4xf32>' differs from the inferred 'tensor<2x3x6xf32>'}}
  %o = vouch.scaled_dot_product_attention %q, %q, %v scale 0.5 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x6xf32>) -> tensor<2x3x4xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %q = vouch.fill 1.0 : tensor<2x3x4xf32>
  %m = vouch.causal_mask : tensor<4x3xi1>
  // expected-error @+1 {{'vouch.scaled_dot_product_attention' op the mask 'tensor<4x3xi1>' does not broadcast to 'tensor<2x3x3xf32>'}}
  %o = vouch.scaled_dot_product_attention %q, %q, %q mask %m scale 0.5 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4x3xi1>) -> tensor<2x3x4xf32>
}

// -----

// flash_attention: scaled_dot_product_attention's rules, and lse [..., Tq].
vouch.model "m" attributes {batch = 1 : i64} {
  %q = vouch.fill 1.0 : tensor<2x3x4xf32>
  %m = vouch.causal_mask : tensor<3x3xi1>
  // expected-error @+1 {{'vouch.flash_attention' op takes a mask or `causal`, not both}}
  %o, %l = vouch.flash_attention %q, %q, %q mask %m causal scale 0.5 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3x3xi1>) -> (tensor<2x3x4xf32>, tensor<2x3xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %q = vouch.fill 1.0 : tensor<2x3x4xf32>
  // expected-error @+1 {{'vouch.flash_attention' op lse 'tensor<2x4xf32>' must be 'tensor<2x3xf32>' (q's shape without its feature axis)}}
  %o, %l = vouch.flash_attention %q, %q, %q causal scale 0.5 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x4xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %q = vouch.fill 1.0 : tensor<2x3x4xf32>
  %v = vouch.fill 1.0 : tensor<2x3x6xf32>
  // expected-error @+1 {{'vouch.flash_attention' op result 'tensor<2x3x4xf32>' differs from the inferred 'tensor<2x3x6xf32>'}}
  %o, %l = vouch.flash_attention %q, %q, %v scale 0.5 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x6xf32>) -> (tensor<2x3x4xf32>, tensor<2x3xf32>)
}

// -----

// flash_attention_grad: dy has the result's type, each gradient its input's.
vouch.model "m" attributes {batch = 1 : i64} {
  %q = vouch.fill 1.0 : tensor<2x3x4xf32>
  %g = vouch.fill 1.0 : tensor<2x3x5xf32>
  %o, %l = vouch.flash_attention %q, %q, %q causal scale 0.5 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3xf32>)
  // expected-error @+1 {{'vouch.flash_attention_grad' op grad 'tensor<2x3x5xf32>' and result 'tensor<2x3x4xf32>' must have one type}}
  %dq, %dk, %dv = vouch.flash_attention_grad %g, %q, %q, %q, %o, %l causal scale 0.5 : (tensor<2x3x5xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %q = vouch.fill 1.0 : tensor<2x3x4xf32>
  %o, %l = vouch.flash_attention %q, %q, %q causal scale 0.5 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3xf32>)
  // expected-error @+1 {{'vouch.flash_attention_grad' op gradient 'tensor<2x3x5xf32>' must have its input's type 'tensor<2x3x4xf32>'}}
  %dq, %dk, %dv = vouch.flash_attention_grad %o, %q, %q, %q, %o, %l causal scale 0.5 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x5xf32>, tensor<2x3x4xf32>)
}

// -----

// qkv_attention: qkv [..., T, 3·H·d], the result [..., T, H·d], lse [..., H, T],
// the mask over the heads' scores [..., H, T, T].
vouch.model "m" attributes {batch = 1 : i64} {
  %qkv = vouch.fill 1.0 : tensor<2x3x10xf32>
  // expected-error @+1 {{'vouch.qkv_attention' op qkv 'tensor<2x3x10xf32>' must be [..., T, 3·H·d] with H = heads = 2 ≥ 1 and d ≥ 1 (q's, k's and v's heads side by side)}}
  %o, %l = vouch.qkv_attention %qkv heads 2 causal scale 0.5 : (tensor<2x3x10xf32>) -> (tensor<2x3x4xf32>, tensor<2x2x3xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %qkv = vouch.fill 1.0 : tensor<2x3x12xf32>
  // expected-error @+1 {{'vouch.qkv_attention' op result 'tensor<2x2x3x2xf32>' must be 'tensor<2x3x4xf32>' (each head's output side by side)}}
  %o, %l = vouch.qkv_attention %qkv heads 2 causal scale 0.5 : (tensor<2x3x12xf32>) -> (tensor<2x2x3x2xf32>, tensor<2x2x3xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %qkv = vouch.fill 1.0 : tensor<2x3x12xf32>
  // expected-error @+1 {{'vouch.qkv_attention' op lse 'tensor<2x3xf32>' must be 'tensor<2x2x3xf32>' (a log-sum-exp per head and query)}}
  %o, %l = vouch.qkv_attention %qkv heads 2 causal scale 0.5 : (tensor<2x3x12xf32>) -> (tensor<2x3x4xf32>, tensor<2x3xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %qkv = vouch.fill 1.0 : tensor<2x3x12xf32>
  %m = vouch.causal_mask : tensor<3x3xi1>
  // expected-error @+1 {{'vouch.qkv_attention' op takes a mask or `causal`, not both}}
  %o, %l = vouch.qkv_attention %qkv mask %m heads 2 causal scale 0.5 : (tensor<2x3x12xf32>, tensor<3x3xi1>) -> (tensor<2x3x4xf32>, tensor<2x2x3xf32>)
}

// -----

// qkv_attention_grad: dy has the result's type, dqkv qkv's.
vouch.model "m" attributes {batch = 1 : i64} {
  %qkv = vouch.fill 1.0 : tensor<2x3x12xf32>
  %o, %l = vouch.qkv_attention %qkv heads 2 causal scale 0.5 : (tensor<2x3x12xf32>) -> (tensor<2x3x4xf32>, tensor<2x2x3xf32>)
  // expected-error @+1 {{'vouch.qkv_attention_grad' op dqkv 'tensor<2x3x4xf32>' must have qkv's shape and type (f32 for a bf16 qkv) 'tensor<2x3x12xf32>'}}
  %d = vouch.qkv_attention_grad %o, %qkv, %o, %l heads 2 causal scale 0.5 : (tensor<2x3x4xf32>, tensor<2x3x12xf32>, tensor<2x3x4xf32>, tensor<2x2x3xf32>) -> tensor<2x3x4xf32>
}

// -----

// A bf16 qkv's gradient is f32 (its results are).
vouch.model "m" attributes {batch = 1 : i64} {
  %qkv = vouch.fill 1.0 : tensor<2x3x12xf32>
  %b = vouch.round_bf16 %qkv : (tensor<2x3x12xf32>) -> tensor<2x3x12xbf16>
  %o, %l = vouch.qkv_attention %b heads 2 causal scale 0.5 : (tensor<2x3x12xbf16>) -> (tensor<2x3x4xf32>, tensor<2x2x3xf32>)
  // expected-error @+1 {{'vouch.qkv_attention_grad' op dqkv 'tensor<2x3x12xf64>' must have qkv's shape and type (f32 for a bf16 qkv) 'tensor<2x3x12xbf16>'}}
  %d = vouch.qkv_attention_grad %o, %b, %o, %l heads 2 causal scale 0.5 : (tensor<2x3x4xf32>, tensor<2x3x12xbf16>, tensor<2x3x4xf32>, tensor<2x2x3xf32>) -> tensor<2x3x12xf64>
}

// -----

// A bf16 qkv's results are f32.
vouch.model "m" attributes {batch = 1 : i64} {
  %qkv = vouch.fill 1.0 : tensor<2x3x12xf32>
  %b = vouch.round_bf16 %qkv : (tensor<2x3x12xf32>) -> tensor<2x3x12xbf16>
  // expected-error @+1 {{'vouch.qkv_attention' op result 'tensor<2x3x4xf64>' must be 'tensor<2x3x4xf32>' (each head's output side by side)}}
  %o, %l = vouch.qkv_attention %b heads 2 causal scale 0.5 : (tensor<2x3x12xbf16>) -> (tensor<2x3x4xf64>, tensor<2x2x3xf32>)
}

// -----

// Pooling: [N, C, *spatial] with 1, 2 or 3 spatial axes.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<4x8xf32>
  // expected-error @+1 {{'vouch.max_pool' op pools [N, C, *spatial] with 1, 2 or 3 spatial axes, got 'tensor<4x8xf32>'}}
  %b = vouch.max_pool %a kernel [2] stride [2] padding [0] : (tensor<4x8xf32>) -> tensor<4x4xf32>
}

// -----

// One kernel, stride and padding entry per spatial axis.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3x8xf32>
  // expected-error @+1 {{'vouch.max_pool' op kernel [2, 2] has 2 entries, but 'tensor<2x3x8xf32>' has 1 spatial axis (one entry each)}}
  %b = vouch.max_pool %a kernel [2, 2] stride [2] padding [0] : (tensor<2x3x8xf32>) -> tensor<2x3x4xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3x8x8xf32>
  // expected-error @+1 {{'vouch.avg_pool' op stride [2] has 1 entries, but 'tensor<2x3x8x8xf32>' has 2 spatial axes (one entry each)}}
  %b = vouch.avg_pool %a kernel [2, 2] stride [2] padding [0, 0] : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3x8xf32>
  // expected-error @+1 {{'vouch.avg_pool' op kernel [0] must be at least 1 on spatial axis 0}}
  %b = vouch.avg_pool %a kernel [0] stride [1] padding [0] : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3x8x8xf32>
  // expected-error @+1 {{'vouch.smooth_max_pool' op stride [2, 0] must be at least 1 on spatial axis 1}}
  %b = vouch.smooth_max_pool %a kernel [2, 2] stride [2, 0] padding [0, 0] beta 1.0 : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
}

// -----

// torch's padding rule: at most half the kernel, so every window holds an
// input position.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<1x1x4x4x4xf32>
  // expected-error @+1 {{'vouch.max_pool' op padding [0, 2, 0] must be between 0 and kernel / 2 = 1 on spatial axis 1 (torch's rule: every window holds an input position)}}
  %b = vouch.max_pool %a kernel [2, 3, 2] stride [2, 2, 2] padding [0, 2, 0] : (tensor<1x1x4x4x4xf32>) -> tensor<1x1x2x2x2xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<1x1x4xf32>
  // expected-error @+1 {{'vouch.avg_pool' op padding [-1] must be between 0 and kernel / 2 = 1 on spatial axis 0 (torch's rule: every window holds an input position)}}
  %b = vouch.avg_pool %a kernel [2] stride [1] padding [-1] : (tensor<1x1x4xf32>) -> tensor<1x1x3xf32>
}

// -----

// The window must fit the padded extent.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<1x2x3xf32>
  // expected-error @+1 {{'vouch.max_pool' op kernel [6] does not fit 'tensor<1x2x3xf32>' on spatial axis 0: 6 > 3 + 2 · 1 (the padded extent)}}
  %b = vouch.max_pool %a kernel [6] stride [1] padding [1] : (tensor<1x2x3xf32>) -> tensor<1x2x1xf32>
}

// -----

// floor((extent + 2·padding - kernel) / stride) + 1 windows per axis.
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<1x2x7xf32>
  // expected-error @+1 {{'vouch.max_pool' op result 'tensor<1x2x3xf32>' differs from the inferred 'tensor<1x2x4xf32>'}}
  %b = vouch.max_pool %a kernel [3] stride [2] padding [1] : (tensor<1x2x7xf32>) -> tensor<1x2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<1x2x8xf32>
  %v = vouch.fill 1.0 : tensor<1x2x8xf64>
  // expected-error @+1 {{'vouch.max_pool' op values 'tensor<1x2x8xf64>' must have the input's type 'tensor<1x2x8xf32>'}}
  %b = vouch.max_pool %a values %v kernel [2] stride [2] padding [0] : (tensor<1x2x8xf32>, tensor<1x2x8xf64>) -> tensor<1x2x4xf32>
}

// -----

// The gradients: grad is the pooling of the result (the pooled input's type).
vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<1x2x8xf32>
  %g = vouch.fill 1.0 : tensor<1x2x5xf32>
  // expected-error @+1 {{'vouch.max_pool_grad' op grad 'tensor<1x2x5xf32>' must be 'tensor<1x2x4xf32>', the pooling of the result 'tensor<1x2x8xf32>'}}
  %dx = vouch.max_pool_grad %g, %x kernel [2] stride [2] padding [0] : (tensor<1x2x5xf32>, tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<1x2x8xf32>
  %g = vouch.fill 1.0 : tensor<1x2x4xf32>
  // expected-error @+1 {{'vouch.max_pool_grad' op result 'tensor<1x2x9xf32>' must be the input's 'tensor<1x2x8xf32>'}}
  %dx = vouch.max_pool_grad %g, %x kernel [2] stride [2] padding [0] : (tensor<1x2x4xf32>, tensor<1x2x8xf32>) -> tensor<1x2x9xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %g = vouch.fill 1.0 : tensor<1x2x3x3xf32>
  // expected-error @+1 {{'vouch.avg_pool_grad' op grad 'tensor<1x2x3x3xf32>' must be 'tensor<1x2x4x4xf32>', the pooling of the result 'tensor<1x2x8x8xf32>'}}
  %dx = vouch.avg_pool_grad %g kernel [2, 2] stride [2, 2] padding [0, 0] count_include_pad : (tensor<1x2x3x3xf32>) -> tensor<1x2x8x8xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<1x2x8xf32>
  // expected-error @+1 {{'vouch.smooth_max_pool' op beta must be a finite non-zero number, got 0}}
  %b = vouch.smooth_max_pool %a kernel [2] stride [2] padding [0] beta 0.0 : (tensor<1x2x8xf32>) -> tensor<1x2x4xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<1x2x8xf32>
  %g = vouch.fill 1.0 : tensor<1x2x4xf32>
  %y = vouch.fill 1.0 : tensor<1x2x4xf64>
  // expected-error @+1 {{'vouch.smooth_max_pool_grad' op output 'tensor<1x2x4xf64>' and grad 'tensor<1x2x4xf32>' must have one type}}
  %dx = vouch.smooth_max_pool_grad %g, %x, %y kernel [2] stride [2] padding [0] beta 1.0 : (tensor<1x2x4xf32>, tensor<1x2x8xf32>, tensor<1x2x4xf64>) -> tensor<1x2x8xf32>
}

// -----

// flatten: start_axis names an axis of x (normalised by the frontend).
vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3xf32>
  // expected-error @+1 {{'vouch.flatten' op start_axis 2 is out of range for 'tensor<2x3xf32>' (rank 2)}}
  %b = vouch.flatten %a start_axis 2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<2x3x4xf32>
  // expected-error @+1 {{'vouch.flatten' op result 'tensor<6x4xf32>' differs from the inferred 'tensor<2x12xf32>'}}
  %b = vouch.flatten %a start_axis 1 : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
}

// -----

// Convolution (im2col, col2im, conv, conv_transpose): every rule names the
// shapes it compares.
// im2col's columns are [G, C/G·K, N, *grid], the grid at most the windows
// that fit.
vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<2x1x4x4xf32>
  // expected-error @+1 {{'vouch.im2col' op the columns 'tensor<1x4x2x4x3xf32>' must be [G, C/G·K, N, *grid] = [1, 4, 2] followed by at most [3, 3] windows per spatial axis (every window that fits the image 'tensor<2x1x4x4xf32>')}}
  %c = vouch.im2col %x kernel [2, 2] stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 : (tensor<2x1x4x4xf32>) -> tensor<1x4x2x4x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<2x3x4x4xf32>
  // expected-error @+1 {{'vouch.im2col' op the image 'tensor<2x3x4x4xf32>' has 3 channels, which groups = 2 does not divide}}
  %c = vouch.im2col %x kernel [2, 2] stride [1, 1] padding [0, 0] dilation [1, 1] groups 2 : (tensor<2x3x4x4xf32>) -> tensor<2x4x2x3x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<2x1x4x4xf32>
  // expected-error @+1 {{'vouch.im2col' op along spatial axis 1 the kernel spans dilation·(k − 1) + 1 = 7 positions, more than the padded input's in + 2·padding = 6 (image 'tensor<2x1x4x4xf32>')}}
  %c = vouch.im2col %x kernel [2, 4] stride [1, 1] padding [1, 1] dilation [1, 2] groups 1 : (tensor<2x1x4x4xf32>) -> tensor<1x8x2x5x1xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<2x1x4x4xf32>
  // expected-error @+1 {{'vouch.im2col' op stride [1] has 1 entry; it needs one per spatial axis (2)}}
  %c = vouch.im2col %x kernel [2, 2] stride [1] padding [0, 0] dilation [1, 1] groups 1 : (tensor<2x1x4x4xf32>) -> tensor<1x4x2x3x3xf32>
}

// -----

// col2im: the result is the image its columns came from.
vouch.model "m" attributes {batch = 1 : i64} {
  %c = vouch.fill 1.0 : tensor<1x4x2x3x3xf32>
  // expected-error @+1 {{'vouch.col2im' op the columns 'tensor<1x4x2x3x3xf32>' must be [G, C/G·K, N, *grid] = [1, 8, 2] followed by at most [3, 3] windows per spatial axis (every window that fits the image 'tensor<2x2x4x4xf32>')}}
  %x = vouch.col2im %c kernel [2, 2] stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 : (tensor<1x4x2x3x3xf32>) -> tensor<2x2x4x4xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %c = vouch.fill 1.0 : tensor<1x4x2x3x3xf32>
  // expected-error @+1 {{'vouch.col2im' op dilation must be at least 1 on every spatial axis, got [1, 0]}}
  %x = vouch.col2im %c kernel [2, 2] stride [1, 1] padding [0, 0] dilation [1, 0] groups 1 : (tensor<1x4x2x3x3xf32>) -> tensor<2x1x4x4xf32>
}

// -----

// col2im_matmul: col2im's rules on the result and its grid attribute, then
// the product's operands [G, R, C/G·K] and [G, R, N·windows].
vouch.model "m" attributes {batch = 1 : i64} {
  %w = vouch.fill 1.0 : tensor<3x8xf32>
  %d = vouch.fill 1.0 : tensor<3x18xf32>
  // expected-error @+1 {{'vouch.col2im_matmul' op the columns 'tensor<1x8x2x4x4xf32>' must be [G, C/G·K, N, *grid] = [1, 8, 2] followed by at most [3, 3] windows per spatial axis (every window that fits the image 'tensor<2x2x4x4xf32>')}}
  %x = vouch.col2im_matmul %w, %d kernel [2, 2] stride [1, 1] padding [0, 0] dilation [1, 1] grid [4, 4] groups 1 : (tensor<3x8xf32>, tensor<3x18xf32>) -> tensor<2x2x4x4xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %w = vouch.fill 1.0 : tensor<3x8xf32>
  %d = vouch.fill 1.0 : tensor<3x18xf32>
  // expected-error @+1 {{'vouch.col2im_matmul' op grid [3] must have one extent per spatial axis (2)}}
  %x = vouch.col2im_matmul %w, %d kernel [2, 2] stride [1, 1] padding [0, 0] dilation [1, 1] grid [3] groups 1 : (tensor<3x8xf32>, tensor<3x18xf32>) -> tensor<2x2x4x4xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %w = vouch.fill 1.0 : tensor<3x8xf32>
  %d = vouch.fill 1.0 : tensor<2x18xf32>
  // expected-error @+1 {{'vouch.col2im_matmul' op lhs 'tensor<3x8xf32>' and rhs 'tensor<2x18xf32>' must be [R, C/G·K] and [R, N·windows] = [R, 8] and [R, 18] for the result 'tensor<2x2x4x4xf32>' (groups 1, grid [3, 3])}}
  %x = vouch.col2im_matmul %w, %d kernel [2, 2] stride [1, 1] padding [0, 0] dilation [1, 1] grid [3, 3] groups 1 : (tensor<3x8xf32>, tensor<2x18xf32>) -> tensor<2x2x4x4xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %w = vouch.fill 1.0 : tensor<3x8xf32>
  %d = vouch.fill 1.0 : tensor<3x18xf32>
  // expected-error @+1 {{'vouch.col2im_matmul' op lhs 'tensor<3x8xf32>' and rhs 'tensor<3x18xf32>' must be [G, R, C/G·K] and [G, R, N·windows] = [2, R, 8] and [2, R, 18] for the result 'tensor<2x4x4x4xf32>' (groups 2, grid [3, 3])}}
  %x = vouch.col2im_matmul %w, %d kernel [2, 2] stride [1, 1] padding [0, 0] dilation [1, 1] grid [3, 3] groups 2 : (tensor<3x8xf32>, tensor<3x18xf32>) -> tensor<2x4x4x4xf32>
}

// -----

// conv: x [N, C, *spatial], weight [O, C/groups, *kernel].
vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<2x4x5x5xf32>
  %w = vouch.fill 1.0 : tensor<6x4x3x3xf32>
  // expected-error @+1 {{'vouch.conv' op the weight 'tensor<6x4x3x3xf32>' must have C/groups = 2 input channels on axis 1 (x 'tensor<2x4x5x5xf32>' has 4, groups = 2)}}
  %y = vouch.conv %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] groups 2 : (tensor<2x4x5x5xf32>, tensor<6x4x3x3xf32>) -> tensor<2x6x3x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<2x4x5x5xf32>
  %w = vouch.fill 1.0 : tensor<5x2x3x3xf32>
  // expected-error @+1 {{'vouch.conv' op the weight 'tensor<5x2x3x3xf32>' has 5 output channels, which groups = 2 does not divide}}
  %y = vouch.conv %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] groups 2 : (tensor<2x4x5x5xf32>, tensor<5x2x3x3xf32>) -> tensor<2x5x3x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<2x3x4x5xf32>
  %w = vouch.fill 1.0 : tensor<6x3x3x3xf32>
  // expected-error @+1 {{'vouch.conv' op along spatial axis 0 the kernel spans dilation·(k − 1) + 1 = 5 positions, more than the padded input's in + 2·padding = 4 (x 'tensor<2x3x4x5xf32>', weight 'tensor<6x3x3x3xf32>')}}
  %y = vouch.conv %x, %w stride [1, 1] padding [0, 0] dilation [2, 1] groups 1 : (tensor<2x3x4x5xf32>, tensor<6x3x3x3xf32>) -> tensor<2x6x1x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<2x3x8xf32>
  %w = vouch.fill 1.0 : tensor<6x3x3xf32>
  %b = vouch.fill 1.0 : tensor<3xf32>
  // expected-error @+1 {{'vouch.conv' op the bias 'tensor<3xf32>' must be [O] = [6]}}
  %y = vouch.conv %x, %w, %b stride [1] padding [0] dilation [1] groups 1 : (tensor<2x3x8xf32>, tensor<6x3x3xf32>, tensor<3xf32>) -> tensor<2x6x6xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<2x3x8xf32>
  %w = vouch.fill 1.0 : tensor<6x3x3xf32>
  // expected-error @+1 {{'vouch.conv' op padding must be at least 0 on every spatial axis, got [-1]}}
  %y = vouch.conv %x, %w stride [1] padding [-1] dilation [1] groups 1 : (tensor<2x3x8xf32>, tensor<6x3x3xf32>) -> tensor<2x6x4xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<2x3x8xf32>
  %w = vouch.fill 1.0 : tensor<6x3x3xf32>
  // expected-error @+1 {{'vouch.conv' op result 'tensor<2x6x6xf32>' differs from the inferred 'tensor<2x6x3xf32>'}}
  %y = vouch.conv %x, %w stride [2] padding [0] dilation [1] groups 1 : (tensor<2x3x8xf32>, tensor<6x3x3xf32>) -> tensor<2x6x6xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<2x3x2x2x2x2xf32>
  %w = vouch.fill 1.0 : tensor<6x3x1x1x1x1xf32>
  // expected-error @+1 {{'vouch.conv' op x must be [N, C, *spatial] with 1 to 3 spatial axes (rank 3 to 5), got 'tensor<2x3x2x2x2x2xf32>'}}
  %y = vouch.conv %x, %w stride [1, 1, 1, 1] padding [0, 0, 0, 0] dilation [1, 1, 1, 1] groups 1 : (tensor<2x3x2x2x2x2xf32>, tensor<6x3x1x1x1x1xf32>) -> tensor<2x6x2x2x2x2xf32>
}

// -----

// conv_transpose: weight [C, O/groups, *kernel]; output_padding below stride
// or dilation (torch's rule); a positive output extent.
vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<2x4x5xf32>
  %w = vouch.fill 1.0 : tensor<3x2x3xf32>
  // expected-error @+1 {{'vouch.conv_transpose' op the weight 'tensor<3x2x3xf32>' must be [C, O/groups, *kernel] with C = 4 (x's channels) on axis 0 (x 'tensor<2x4x5xf32>')}}
  %y = vouch.conv_transpose %x, %w stride [1] padding [0] output_padding [0] dilation [1] groups 1 : (tensor<2x4x5xf32>, tensor<3x2x3xf32>) -> tensor<2x2x7xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<2x4x5x5xf32>
  %w = vouch.fill 1.0 : tensor<4x2x3x3xf32>
  // expected-error @+1 {{'vouch.conv_transpose' op output_padding [2, 0] must be smaller than stride [2, 2] or dilation [1, 1] on every spatial axis (torch's rule); spatial axis 0 has 2}}
  %y = vouch.conv_transpose %x, %w stride [2, 2] padding [0, 0] output_padding [2, 0] dilation [1, 1] groups 1 : (tensor<2x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<2x2x13x11xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<2x4x2xf32>
  %w = vouch.fill 1.0 : tensor<4x2x2xf32>
  // expected-error @+1 {{'vouch.conv_transpose' op along spatial axis 0 the output extent (in − 1)·stride − 2·padding + dilation·(k − 1) + output_padding + 1 is -1, not positive: the padding is too large (x 'tensor<2x4x2xf32>', weight 'tensor<4x2x2xf32>')}}
  %y = vouch.conv_transpose %x, %w stride [1] padding [2] output_padding [0] dilation [1] groups 1 : (tensor<2x4x2xf32>, tensor<4x2x2xf32>) -> tensor<2x2x1xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<2x4x5xf32>
  %w = vouch.fill 1.0 : tensor<4x2x3xf32>
  // expected-error @+1 {{'vouch.conv_transpose' op result 'tensor<2x2x7xf32>' differs from the inferred 'tensor<2x4x7xf32>'}}
  %y = vouch.conv_transpose %x, %w stride [1] padding [0] output_padding [0] dilation [1] groups 2 : (tensor<2x4x5xf32>, tensor<4x2x3xf32>) -> tensor<2x2x7xf32>
}

// -----

// batch_norm: [N, C, *spatial], its weight, bias and running statistics [C]
// (the statistics vouch.state values), more than one value per channel.
vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<4x3xf32>
  %w = vouch.fill 1.0 : tensor<2xf32>
  %rm = vouch.state "rm" = zeros : tensor<3xf32>
  %rv = vouch.state "rv" = ones : tensor<3xf32>
  // expected-error @+1 {{'vouch.batch_norm' op weight 'tensor<2xf32>' does not match input 'tensor<4x3xf32>': expected [3] (the input's channels, axis 1)}}
  %y:3 = vouch.batch_norm %x weight %w running %rm, %rv eps 1.0e-05 momentum 1.0e-01 : (tensor<4x3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<4xf32>
  %rm = vouch.state "rm" = zeros : tensor<4xf32>
  %rv = vouch.state "rv" = ones : tensor<4xf32>
  // expected-error @+1 {{'vouch.batch_norm' op normalises the channels (axis 1) of [N, C, *spatial] (rank ≥ 2), got 'tensor<4xf32>'}}
  %y:3 = vouch.batch_norm %x running %rm, %rv eps 1.0e-05 momentum 1.0e-01 : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<1x3x1xf32>
  %rm = vouch.state "rm" = zeros : tensor<3xf32>
  %rv = vouch.state "rv" = ones : tensor<3xf32>
  // expected-error @+1 {{'vouch.batch_norm' op needs more than one value per channel to train (its variance divides by M - 1): input 'tensor<1x3x1xf32>' has 1 (N · spatial); torch refuses it too}}
  %y:3 = vouch.batch_norm %x running %rm, %rv eps 1.0e-05 momentum 1.0e-01 : (tensor<1x3x1xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<1x3x1xf32>, tensor<3xf32>, tensor<3xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<4x3xf32>
  %rm = vouch.state "rm" = zeros : tensor<3xf32>
  %rv = vouch.state "rv" = ones : tensor<3xf32>
  // expected-error @+1 {{'vouch.batch_norm' op momentum must be a number in [0, 1], got 1.5}}
  %y:3 = vouch.batch_norm %x running %rm, %rv eps 1.0e-05 momentum 1.5 : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<4x3xf32>
  %rm = vouch.fill 0.0 : tensor<3xf32>
  %rv = vouch.state "rv" = ones : tensor<3xf32>
  // expected-error @+1 {{'vouch.batch_norm' op running_mean must be a vouch.state (the running statistics persist across steps)}}
  %y:3 = vouch.batch_norm %x running %rm, %rv eps 1.0e-05 momentum 1.0e-01 : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<4x3xf32>
  %rm = vouch.state "rm" = zeros : tensor<3xf32>
  %rv = vouch.state "rv" = ones : tensor<4xf32>
  // expected-error @+1 {{'vouch.batch_norm' op running_var 'tensor<4xf32>' must be 'tensor<3xf32>' (one value per channel of 'tensor<4x3xf32>')}}
  %y:3 = vouch.batch_norm %x running %rm, %rv eps 1.0e-05 momentum 1.0e-01 : (tensor<4x3xf32>, tensor<3xf32>, tensor<4xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<4x3xf32>
  // expected-error @+1 {{'vouch.state' op state starts as zeros or ones, got 'xavier_uniform'}}
  %rm = vouch.state "rm" = xavier_uniform : tensor<3xf32>
  %rv = vouch.state "rv" = ones : tensor<3xf32>
  %y:3 = vouch.batch_norm %x running %rm, %rv eps 1.0e-05 momentum 1.0e-01 : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'vouch.state' op 'rm' is read by 'vouch.relu': only batch_norm reads a state (its running statistics)}}
  %rm = vouch.state "rm" = zeros : tensor<3xf32>
  %r = vouch.relu %rm : (tensor<3xf32>) -> tensor<3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'vouch.state' op 'rm' is read by no batch_norm: a state holds the running statistics of batch_norms}}
  %rm = vouch.state "rm" = zeros : tensor<3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<4x3xf32>
  // expected-error @+1 {{'vouch.state' op 'a' is the running mean of one batch_norm and the running variance of another}}
  %a = vouch.state "a" = zeros : tensor<3xf32>
  %b = vouch.state "b" = ones : tensor<3xf32>
  %y:3 = vouch.batch_norm %x running %a, %b eps 1.0e-05 momentum 1.0e-01 : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
  %z:3 = vouch.batch_norm %x running %b, %a eps 1.0e-05 momentum 1.0e-01 : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
}

// -----

// A state's name is a checkpoint's: unique among the params and the state.
vouch.model "m" attributes {batch = 1 : i64} {
  %x = vouch.fill 1.0 : tensor<4x3xf32>
  // expected-note @+1 {{previous definition is here}}
  %w = vouch.param "w.running_mean" = zeros : tensor<3xf32>
  // expected-error @+1 {{'vouch.state' op redefines 'w.running_mean'}}
  %rm = vouch.state "w.running_mean" = zeros : tensor<3xf32>
  %rv = vouch.state "w.running_var" = ones : tensor<3xf32>
  %y:3 = vouch.batch_norm %x running %rm, %rv eps 1.0e-05 momentum 1.0e-01 : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<4x3xf32>
  %b = vouch.fill 1.0 : tensor<4x3xf64>
  %s = vouch.fill 1.0 : tensor<3xf32>
  // expected-error @+1 {{'vouch.batch_norm_grad' op grad 'tensor<4x3xf64>' and input 'tensor<4x3xf32>' must have one type}}
  %c = vouch.batch_norm_grad %b, %a, %s, %s : (tensor<4x3xf64>, tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<4x3xf32>
  %s = vouch.fill 1.0 : tensor<3xf32>
  // expected-error @+1 {{'vouch.batch_norm_grad' op has 2 results, expected 3 (dx, dweight, dbias)}}
  %c:2 = vouch.batch_norm_grad %a, %a, %s, %s weight %s with_bias : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %a = vouch.fill 1.0 : tensor<4x3xf32>
  %s = vouch.fill 1.0 : tensor<3xf32>
  %m = vouch.fill 1.0 : tensor<4xf32>
  // expected-error @+1 {{'vouch.batch_norm_grad' op mean 'tensor<4xf32>' must be 'tensor<3xf32>' (one value per channel of 'tensor<4x3xf32>')}}
  %c = vouch.batch_norm_grad %a, %a, %m, %s : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<4x3xf32>
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %g = vouch.fill 1.0 : tensor<16x8xf32>
  %x = vouch.fill 1.0 : tensor<12x4xf32>
  // expected-error @+1 {{'vouch.linear_weight_grad' op grad 'tensor<16x8xf32>' and input 'tensor<12x4xf32>' differ in rows}}
  %dw, %db = vouch.linear_weight_grad %g, %x : (tensor<16x8xf32>, tensor<12x4xf32>) -> (tensor<8x4xf32>, tensor<8xf32>)
}

// -----

vouch.model "m" attributes {batch = 1 : i64} {
  %g = vouch.fill 1.0 : tensor<16x8xf32>
  %x = vouch.fill 1.0 : tensor<16x4xf32>
  // expected-error @+1 {{'vouch.linear_weight_grad' op bias_grad has type 'tensor<4xf32>', expected 'tensor<8xf32>'}}
  %dw, %db = vouch.linear_weight_grad %g, %x : (tensor<16x8xf32>, tensor<16x4xf32>) -> (tensor<8x4xf32>, tensor<4xf32>)
}
