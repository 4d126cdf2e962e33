//===- Passes.td - every vouch pass -------------------------*- tablegen -*-===//
#ifndef VOUCH_PASSES_TD
#define VOUCH_PASSES_TD

include "mlir/Pass/PassBase.td"

def Decompose : Pass<"vouch-decompose", "::vouch::ModelOp"> {
  let summary = "Replaces composite ops by the ops of their composed or fused form";
  let description = [{
    Every op implementing CompositeOpInterface (scaled_dot_product_attention)
    builds the ops it stands for in its place and is erased: its composed
    form (CompositeOpInterface::decompose), or, as `attention` asks, its
    fused form (CompositeOpInterface::fuse: one flash_attention), both
    written in the op's section of ir/VouchOps.cpp. The ops built keep its
    location, wrapped in a NameLoc of its name, so the plan and the report
    can say which call they came from. Runs before vouch-autodiff: the ops
    built carry the VJP rules.

    ```mlir
    %o = vouch.scaled_dot_product_attention %q, %k, %v causal scale 0.5 : ...
    // composed:
    %qs = vouch.scale %q by 0.5 : ...
    %s = vouch.matmul %qs, %k {transpose_rhs} : ...
    %m = vouch.causal_mask : tensor<4x4xi1>
    %p = vouch.masked_softmax %s, %m axis 2 : ...
    %o = vouch.matmul %p, %v : ...
    // fused:
    %o, %lse = vouch.flash_attention %q, %k, %v causal scale 0.5 : ...
    ```
  }];
  let options = [
    Option<"attention", "attention", "std::string", /*default=*/"\"composed\"",
           "scaled_dot_product_attention's form: composed; fused (an error "
           "where the fused kernels cannot take the op); auto (fused where "
           "they can, composed elsewhere)">
  ];
}

def FoldQkvAttention : Pass<"vouch-fold-qkv-attention", "::vouch::ModelOp"> {
  let summary = "Folds the head slices and permutes around a flash_attention "
                "into one qkv_attention";
  let description = [{
    Where q, k and v of a flash_attention are the three parts of one packed
    projection qkv [..., T, 3·H·d], each
    `permute(reshape(slice(qkv, last axis, part·H·d, (part+1)·H·d), [..., T,
    H, d]), T and H swapped)` used only there, and its result is only
    permuted back and reshaped to [..., T, H·d] (its lse unused), the whole
    becomes `qkv_attention(qkv) heads H` with flash_attention's mask,
    `causal`, scale and location: the same sums, the kernels reading the
    heads out of qkv and writing the result through strides, so neither the
    five copies nor, after vouch-autodiff, their five gradients' copies are
    made. Runs after vouch-decompose (which builds flash_attention for the
    fused form), before vouch-autodiff, on every target.

    ```mlir
    %s = vouch.slice %qkv axis 2 start 0 end 4 step 1 : ...  // and k's, v's
    %r = vouch.reshape %s : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
    %q = vouch.permute %r perm [0, 2, 1, 3] : ...
    %o, %lse = vouch.flash_attention %q, %k, %v causal scale 0.5 : ...
    %p = vouch.permute %o perm [0, 2, 1, 3] : ...
    %a = vouch.reshape %p : (tensor<2x3x2x2xf32>) -> tensor<2x3x4xf32>
    // becomes
    %a, %lse = vouch.qkv_attention %qkv heads 2 causal scale 0.5 : ...
    ```
  }];
}

def PadClasses : Pass<"vouch-pad-classes", "::vouch::ModelOp"> {
  let summary = "Pads the classes of a linear's logits to a multiple of a "
                "tensor-core product's quantum";
  let description = [{
    Where a cross_entropy's logits [..., C] are a vouch.linear's result, C
    is not a multiple of `quantum`, and the logits are read only by
    cross_entropy ops and the model's output: the weight [C, D] (and bias)
    gain zero rows up to C' = C rounded up to the quantum (a slice_scatter,
    whose VJP slices the gradient back), the linear computes [..., C'],
    each cross_entropy counts the first C entries (`classes = C`; its VJP
    writes 0 past them), and the output takes the first C of each row
    (`columns = C`, dropped as the executable reads it). The loss, every
    gradient and the output are those of the unpadded model: the padded
    logits are x·0 = 0 and take no part. What it buys: a tensor-core
    product (tf32: 4, bf16: 8 f32s to a 16-byte row) whose row pitch is
    not a multiple of the quantum runs padded, the executor copying its
    operands and output around it (runtime/cuda/gemm_call.h); GPT-2's 50257
    logits a row made three such copies of the [B·T, 50257] logits and
    their gradient a step. Quantum 0 or 1: nothing changes. Runs after
    vouch-decompose, before vouch-autodiff.

    ```mlir
    %z = vouch.linear %x, %w : (tensor<4x8xf32>, tensor<13x8xf32>) -> tensor<4x13xf32>
    %l = vouch.cross_entropy %z, %y {ignore_index = -100 : i64} : ...
    // becomes, at quantum 4
    %wp = vouch.slice_scatter %w axis 0 start 0 end 13 step 1 : (tensor<13x8xf32>) -> tensor<16x8xf32>
    %zp = vouch.linear %x, %wp : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    %l = vouch.cross_entropy %zp, %y {classes = 13 : i64, ignore_index = -100 : i64} : ...
    ```
  }];
  let options = [
    Option<"quantum", "quantum", "int64_t", /*default=*/"0",
           "Pad the classes to a multiple of this (0 or 1: off; at most "
           "1024)">
  ];
}

def Autodiff : Pass<"vouch-autodiff", "::vouch::ModelOp"> {
  let summary = "Builds the gradient of the loss with respect to every param";
  let description = [{
    Walks the forward ops in reverse and asks each op on the gradient path
    (active: reachable from a param and reaching the loss) for its VJP rule
    through VJPOpInterface. Fan-out gradients are summed with vouch.add.
    Every forward compute op gets a `vouch.node` id; every op built for its
    VJP gets `vouch.vjp_of` = that id, so the runtime tape can run the
    backward of one node at a time. One `vouch.param_grad` per param, in
    param order (zeros where no gradient flows). An op on the gradient path
    without a VJP rule is an error naming the op. Two rewrites of the result:
    the gradient of a value split into pieces that tile one axis is their
    concat; and the backward pass computes a one-operand pointwise result of
    at least `recompute-min-elements` elements again from its operand (which
    it reads anyway) instead of keeping it from the forward pass, and, with
    `recompute-layer-norm`, a layer_norm's output of that size again from its
    x (which layer_norm_grad reads anyway; with an addend, the sum) as a
    layer_norm of x alone. Not by default: GPT-2's 24 layer_norms a step
    would cost 24 launches for memory its fp32 / tf32 builds do not need to
    stay under PyTorch's peak (docs/performance.md).
  }];
  let options = [
    Option<"recomputeMinElements", "recompute-min-elements", "int64_t",
           /*default=*/"1 << 20",
           "Recompute a pointwise result (and, with recompute-layer-norm, a "
           "layer_norm's output) of at least this many elements in the "
           "backward pass (0: never); smaller ones are kept (the memory they "
           "hold does not pay for a launch)">,
    Option<"recomputeLayerNorm", "recompute-layer-norm", "bool",
           /*default=*/"false",
           "Also recompute layer_norm outputs of at least "
           "recompute-min-elements elements from their x">
  ];
}

def PlanPass : Pass<"vouch-plan", "::vouch::ModelOp"> {
  let summary = "Selects a kernel capsule and a kernel symbol for every compute op";
  let description = [{
    For every compute op, forward and backward, picks the capsule the
    profile prefers among the registry's capsules for the op on the
    profile's device, and records it as `vouch.capsule`; records the kernel
    symbol codegen emits for the op as `vouch.kernel`
    (`<model>_n<node>_<op>` forward, `<model>_b<node>_<k>_<op>` for the k-th
    backward op of node `node`); records the profile on the model as
    `vouch.profile`. An op without a capsule keeps no `vouch.capsule`: the
    assurance gate (vouch-gate) reports it with every other failure.

    ```mlir
    %h = vouch.linear %x, %w1, %b1 {vouch.capsule = "cublaslt.linear",
        vouch.kernel = "mlp_n0_linear", vouch.node = 0 : i64} : ...
    ```
  }];
  let options = [
    Option<"profile", "profile", "std::string", /*default=*/"\"checked_cpu\"",
           "Backend profile: checked_cpu, checked_cuda or libtorch_forward_cuda, optionally with `+tf32`">,
  ];
}

def GatePass : Pass<"vouch-gate", "::vouch::ModelOp"> {
  let summary = "The assurance gate: checks every obligation of every planned op";
  let description = [{
    Checks, for every op vouch-plan planned: a capsule exists and computes
    forward values; static shapes within the capsule's ranks; every axis,
    index and element count fits the UInt32 CUDA ABI (cuda); transpose
    flags only where the capsule reads them; a stated value contract; op ↔
    capsule and provider ↔ device ↔ profile identity; the provider is linked;
    the trust level is allowed by the profile's assurance policy; the
    numerical policy is allowed by the profile; forward-only capsules never
    on the gradient path; a fixed reduction order when `deterministic`;
    evidence for every contract when `require-evidence`; unique kernel
    symbols. Reports every failure as an error at the op's location, then a
    summary on the model, and fails; the model is left unchanged.
  }];
  let options = [
    Option<"profile", "profile", "std::string", /*default=*/"\"\"",
           "Backend profile (default: the one vouch-plan recorded)">,
    Option<"deterministic", "deterministic", "bool", /*default=*/"false",
           "Reject capsules whose reduction order is implementation-defined">,
    Option<"requireEvidence", "require-evidence", "bool", /*default=*/"false",
           "Reject contracts whose evidence is not-provided">,
  ];
}

def FoldCol2im : Pass<"vouch-fold-col2im", "::vouch::ModelOp"> {
  let summary = "Folds a product through transpose_lhs and the col2im that "
                "reads it into one col2im_matmul (cuda builds)";
  let description = [{
    In a node's VJP, `col2im(reshape(matmul(lhs, rhs) {transpose_lhs}))`,
    the product and the reshape used only there (a convolution's input
    gradient, its weight's rows times the output gradient), becomes
    `col2im_matmul(lhs, rhs)` with col2im's attributes, location and tags
    and the columns' trailing extents as its grid: the same sums, the
    columns (C/G·K times the image) never in memory, where the image has at
    least 32 channels per group (the kernel's tiles are 64 channels: with
    fewer it mostly computes zeros, and the composed form is faster) and the
    kernel more than one offset (a 1×1 kernel's columns are no larger than
    the image: nothing to save). The
    product's node keeps its other ops (dW); a forward conv_transpose is
    left composed (its forward ops are tape nodes of their own). Run for
    cuda profiles, before vouch-fuse-pointwise.
  }];
}

def FoldLinearBiasGrad : Pass<"vouch-fold-linear-bias-grad",
                              "::vouch::ModelOp"> {
  let summary = "Folds a linear's weight product and bias sums into one "
                "linear_weight_grad (cuda builds)";
  let description = [{
    A linear's VJP computes its weight's gradient as `matmul(dy, x)
    {transpose_lhs}` and its bias's as `reduce_sum(dy) axes [0]`, both
    reading the same [rows, out] gradient. Where both belong to one VJP
    (vouch.vjp_of), out and in are multiples of 8
    (no tensor-core precision pads the product: gemm_call.h's ProductPlan)
    and the product is larger than the small-product rule's (options below:
    a small product runs vouch's own kernel, which has no bias sums), they
    become `linear_weight_grad(dy, x)`: one cuBLASLt call whose BGRADB
    epilogue sums dy's columns as the product reads them, instead of a
    second pass over dy. Run for cuda profiles that ask for it (`vouch build
    --bias-grad-epilogue`), before vouch-fuse-pointwise. Not by default:
    in a CUDA graph the column-sum kernel runs beside the input gradient's
    product, and the epilogue costs the product about what the kernel did
    (GPT-2 on an H100: tf32 50.0 -> 50.3 ms a step, bf16 37.15 -> 37.17;
    docs/performance.md).

    ```mlir
    %dw = vouch.matmul %dy, %x {transpose_lhs} : ...
    %db = vouch.reduce_sum %dy axes [0] : ...
    // becomes
    %dw, %db = vouch.linear_weight_grad %dy, %x : ...
    ```
  }];
  let options = [
    Option<"smallMultiplyAdds", "small-multiply-adds", "int64_t", "0",
           "the profile's small-product rule: products of at most this many "
           "multiply-adds (and a k within small-max-k) are left alone">,
    Option<"smallMaxK", "small-max-k", "int64_t", "0",
           "the small-product rule's largest k">,
  ];
}

def RoundBf16Operands : Pass<"vouch-round-bf16-operands", "::vouch::ModelOp"> {
  let summary = "Rounds a bf16 product's f32 operand once, into a bf16 value "
                "its products share (cuda builds with bf16 products)";
  let description = [{
    Under bf16 products the executor rounds every f32 operand of a cuBLAS
    or cuBLASLt product into its scratch before the call, once per product,
    so a value several products read is rounded again for each (an
    activation for its forward product and its weight gradient, a weight
    for the forward product and dx). This pass rounds it once:
    `vouch.round_bf16` into a bf16 value every such product reads in place
    (a reshape of it for a product that reads the value reshaped). The bits
    each product multiplies are the same.

    Operands: f32 operands of matmul, linear and linear_weight_grad that
    the small-product rule (options below) leaves to a library call, and
    that the executor would copy without moving a value (gemm_call.h's
    OperandLayout::in_place_as_bf16): an operand whose product pads its
    pitch or rows (GPT-2's LM head: 50257 classes) keeps the executor's
    rounding copy. The rounding goes right after the op computing the value,
    at its place on the tape (a forward node of its own, the nodes
    renumbered in block order; a VJP's op; a prologue op), where
    vouch-fuse-pointwise can make it a bf16 store of that op's pointwise
    chain; a param's or a data field's before its first product, at that
    product's place. qkv_attention and qkv_attention_grad whose heads
    attention64.cuh's kernels take (at most 64 features) read their qkv
    rounded alike, once: those kernels round each float tile to bf16 for
    their products, and load a bf16 tile as it is (half the bytes). An op
    whose cuda kernel can store the rounded value itself takes the rounding
    over: its result becomes bf16 where nothing else reads the f32 value
    (the op table's bf16Result), or, where something does, the rounding
    moves right after it and the two form one fusion group
    (`<model>_twin<k>`) that codegen emits as the op's launch storing both
    (the op table's bf16Twin: layer_norm_grad's dx). Run after autodiff and
    the folds that make products, before vouch-fuse-pointwise, which leaves
    twin groups as they are.

    ```mlir
    %y = vouch.linear %x, %w : ...
    %dw = vouch.matmul %dy, %x2 {transpose_lhs} : ...   // %x2 reshapes %x
    // becomes
    %xb = vouch.round_bf16 %x : (tensor<8x4x16xf32>) -> tensor<8x4x16xbf16>
    ...
    %wb = vouch.round_bf16 %w : (tensor<32x16xf32>) -> tensor<32x16xbf16>
    %y = vouch.linear %xb, %wb : ...
    %x2b = vouch.reshape %xb : (tensor<8x4x16xbf16>) -> tensor<32x16xbf16>
    %dw = vouch.matmul %dy, %x2b {transpose_lhs} : ...
    ```
  }];
  let options = [
    Option<"smallMultiplyAdds", "small-multiply-adds", "int64_t", "0",
           "the profile's small-product rule: products of at most this many "
           "multiply-adds (and a k within small-max-k) are left alone">,
    Option<"smallMaxK", "small-max-k", "int64_t", "0",
           "the small-product rule's largest k">,
  ];
}

def FoldLayerNormAdd : Pass<"vouch-fold-layer-norm-add", "::vouch::ModelOp"> {
  let summary = "Folds a residual add into the layer_norm that normalises "
                "its sum";
  let description = [{
    A layer_norm whose input is an add (its operands of its type: the add's
    verifier says so) takes the add's terms as its input and addend and writes the sum as its
    second result, which the add's other readers then read: the same bits
    (the sum rounded as the add rounds it, then normalised), one kernel and
    one read of the sum fewer. The fused op goes where the add was (where
    the layer_norm's weight or bias is defined after the add: where the
    layer_norm was, unless another reader of the sum comes between them).
    Its VJP gives layer_norm_grad the sum's other gradient as its addend.
    Runs before vouch-autodiff, on every target.

    ```mlir
    %x1 = vouch.add %x0, %branch : ...
    %y = vouch.layer_norm %x1 weight %w bias %b eps 1.0e-05 : ...
    // becomes
    %y, %x1 = vouch.layer_norm %x0 plus %branch weight %w bias %b eps 1.0e-05 : ...
    ```
  }];
}

def FoldLayerNormGradSum : Pass<"vouch-fold-layer-norm-grad-sum",
                                 "::vouch::ModelOp"> {
  let summary = "Folds the add of a layer_norm's dx into the gradient of the "
                "value's other readers into layer_norm_grad's addend";
  let description = [{
    vouch-autodiff sums a value's gradient over its readers: a value read by
    a layer_norm and by something else (a transformer's residual stream) gets
    `add(rest, dx)` (or `add(dx, rest)`), dx a layer_norm_grad's first result
    read only there. Where the add belongs to the same VJP (vouch.vjp_of) as
    the layer_norm_grad, all three have one type, and `rest` is defined
    before the layer_norm_grad, the add is dropped and the layer_norm_grad
    takes `rest` as its addend: the same bits (dx rounded first, then one
    addition, which commutes), one kernel and one tensor fewer. Runs after
    vouch-autodiff, on every target.

    ```mlir
    %dx, %dw, %db = vouch.layer_norm_grad %g, %x weight %w with_bias eps 1.0e-05 : ...
    %sum = vouch.add %rest, %dx : ...
    // becomes
    %sum, %dw, %db = vouch.layer_norm_grad %g, %x weight %w plus %rest with_bias eps 1.0e-05 : ...
    ```
  }];
}

def FusePointwise : Pass<"vouch-fuse-pointwise", "::vouch::ModelOp"> {
  let summary = "Groups chains of pointwise ops into one kernel each";
  let description = [{
    Within the forward pass, and within each node's VJP, maximal runs of
    consecutive pointwise ops (PointwiseOpInterface, vouch.fill,
    broadcasts of a scalar, and vouch.round_bf16: the identity in the chain,
    its result stored as bf16) over the same element count become one fused
    kernel: every op of a run gets `vouch.fusion_group = "<model>_fused<k>"`.
    Values used only inside a run stay in registers; the rest are stored.
    Fusion changes launches, not meaning: the tape still records one node
    per forward op. Runs of a single op are left alone. A run longer than
    kMaxFusedOps (64) ops, or reading more than kMaxFusedLoads (64) values
    from outside it, is cut into several groups (passes/Passes.h). First,
    `broadcast(fill c)` becomes `fill c` of the broadcast's shape, so
    constants join the group that reads them.
  }];
}

#endif // VOUCH_PASSES_TD
