//===- VouchOps.td - the vouch ops, one record each ---------*- tablegen -*-===//
//
// Semantics, shape rule, VJP rule and (for pointwise ops) scalar formula of
// an op are found together: the record here, and the op's banner section in
// VouchOps.cpp. Each record also sets its row of the op table (the fields of
// Vouch_Op in VouchBase.td). Records are in the order the op table, the
// catalogs and the builtin list of the language follow.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_OPS_TD
#define VOUCH_OPS_TD

include "VouchBase.td"
include "VouchAttrs.td"
include "VouchInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Structure: the model and the values it is made of
//===----------------------------------------------------------------------===//

def Vouch_ModelOp : Vouch_StructuralOp<"model", [IsolatedFromAbove, NoTerminator,
                                       SingleBlock]> {
  let summary = "A model: its inputs, parameters, computation and loss";
  let description = [{
    Holds one block of ops computing the model. `batch` is the static batch
    size substituted for the `batch` dimension of the description; `train`
    and `data` carry the description's training and data clauses as typed
    attributes (VouchAttrs.td).

    ```mlir
    vouch.model "quickstart_mlp" attributes {batch = 1 : i64,
        data = #vouch.data<kind = regression_grid, lo = -1.000000e+00, hi = 1.000000e+00, n = 5>,
        train = #vouch.train<optimizer = adam, lr = 3.000000e-02, ...>} {
      %x = vouch.input "x" : tensor<1x2xf32>
      ...
    }
    ```
  }];
  let arguments = (ins StrAttr:$sym_name, I64Attr:$batch,
                       OptionalAttr<Vouch_TrainAttr>:$train,
                       OptionalAttr<Vouch_DataAttr>:$data,
                       OptionalAttr<Vouch_EvalAttr>:$eval);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getBlock() { return getBody().front(); }
  }];
}

def Vouch_InputOp : Vouch_StructuralOp<"input", [Pure]> {
  let summary = "A model input, fed one batch at a time";
  let description = [{
    ```mlir
    %x = vouch.input "x" : tensor<1x2xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Vouch_AnyTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def Vouch_TargetOp : Vouch_StructuralOp<"target", [Pure]> {
  let summary = "A training target, fed one batch at a time; never trainable";
  let description = [{
    ```mlir
    %y = vouch.target "y" : tensor<1x1xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Vouch_AnyTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def Vouch_ParamOp : Vouch_StructuralOp<"param", [Pure]> {
  let summary = "A trainable parameter with its initialiser";
  let description = [{
    `init` is the initialiser (a vouch::InitKind: zeros, ones, uniform,
    normal, xavier_uniform, kaiming_uniform), written bare, and `init_args`
    its arguments, as many as its signature has. The parameter's index among
    the model's params (program order) selects its seed:
    `nextSeed(S, index)`. The quoted spelling of before (`= "zeros"`) still
    parses.

    ```mlir
    %w = vouch.param "w1" = xavier_uniform : tensor<8x2xf32>
    %u = vouch.param "u" = uniform [-0.1, 0.1] : tensor<4xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, Vouch_InitKindAttr:$init,
                       DefaultValuedAttr<DenseF64ArrayAttr, "{}">:$init_args);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat =
      "$name `=` custom<Init>($init, $init_args) attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Vouch_FillOp : Vouch_Op<"fill", [Pure]> {
  let summary = "A tensor with every element equal to `value`";
  let description = [{
    ```mlir
    %one = vouch.fill 1.0 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins F64Attr:$value);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";

  let family = Vouch_Generator;
  let formula = "every element equals the attribute `value`";
}

def Vouch_LossOp : Vouch_StructuralOp<"loss", []> {
  let summary = "Marks the scalar the model minimises";
  let description = [{
    ```mlir
    vouch.loss %l : tensor<f32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def Vouch_OutputOp : Vouch_StructuralOp<"output", []> {
  let summary = "Marks a named model output (e.g. the prediction)";
  let description = [{
    With `columns` set (only `vouch-pad-classes` sets it), the output is the
    first `columns` entries of the value's last axis: the value is logits
    with zero padding past them, which the executable drops as it reads the
    prediction (no copy in the training step).

    ```mlir
    vouch.output "pred" %p : tensor<1x1xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, Vouch_AnyTensor:$value,
                       OptionalAttr<I64Attr>:$columns);
  let assemblyFormat = "$name $value attr-dict `:` type($value)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The output's shape: the value's, its last axis cut to `columns`.
    ::llvm::SmallVector<int64_t> outputShape();
  }];
}

def Vouch_ParamGradOp : Vouch_StructuralOp<"param_grad", []> {
  let summary = "The gradient of the loss with respect to a named parameter";
  let description = [{
    Written by the autodiff pass, one per parameter.

    ```mlir
    vouch.param_grad "w1" %g : tensor<8x2xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, Vouch_FloatTensor:$value);
  let assemblyFormat = "$name $value attr-dict `:` type($value)";
}

// Non-trainable state: values a forward pass reads and a training step may
// update in place, kept across steps and in checkpoints, never trained
// (batch_norm's running statistics).
def Vouch_StateOp : Vouch_StructuralOp<"state", [Pure]> {
  let summary = "Non-trainable model state (batch_norm's running statistics)";
  let description = [{
    The storage of a piece of state, by its checkpoint name: the value a
    forward pass reads is the state's contents when it reads it. Its only
    readers are the batch_norms it holds the running mean or variance of;
    each updates it in place in a training step (in program order when
    several share it, as a torch module called twice), so it persists from
    step to step. `init` (zeros or ones) is its value before the first step.
    No gradient, no optimizer, no weight decay.

    ```mlir
    %rm = vouch.state "bn1.running_mean" = zeros : tensor<8xf32>
    %rv = vouch.state "bn1.running_var" = ones : tensor<8xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, Vouch_InitKindAttr:$init);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat =
      "$name `=` custom<InitKind>($init) attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Dense linear algebra
//===----------------------------------------------------------------------===//

def Vouch_LinearOp : Vouch_Op<"linear", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "Affine layer: input · weightᵀ + bias, weight stored [out, in]";
  let description = [{
    `input` is [..., in], `weight` [out, in], the optional `bias` [out]; the
    result is [..., out]. z = W·x + b per row, as TorchLean and PyTorch.

    ```mlir
    %z = vouch.linear %x, %w, %b : (tensor<1x2xf32>, tensor<8x2xf32>, tensor<8xf32>) -> tensor<1x8xf32>
    ```
  }];
  // The bias is bf16 only beside a bf16 result (bf16Result below).
  let arguments = (ins Vouch_ProductOperand:$input, Vouch_ProductOperand:$weight,
                       Optional<Vouch_ProductOperand>:$bias);
  // bf16 only as vouch-round-bf16-operands makes it (bf16Result below).
  let results = (outs Vouch_ProductOperand:$result);
  let assemblyFormat =
      "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify() and the frontend (`bias` may be null).
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType input, ::mlir::RankedTensorType weight,
        ::mlir::RankedTensorType bias);
  }];

  let family = Vouch_Gemm;
  let formula = "input·weightᵀ + bias per row, weight stored [out, in]";
  let builtin = "linear";
  let builtinParams = "input, weight, bias = none";
  let cudaProviders = "cublaslt,native-cuda";
  let cpuKernel = "vouch::rt::linear<T>";
  let cpuEvidence = "cpu-kernels";
  // Under bf16 products a linear of bf16 operands whose result only bf16
  // readers take (a qkv that attention64's kernels load as bf16) has
  // cuBLASLt store it as bf16 (D = CUDA_R_16BF, the bias added to the f32
  // sums in the epilogue, then rounded), where nothing pads it; the f32
  // result is never written. Its bias is then bf16 too, rounded by a
  // vouch.round_bf16 as autocast rounds it: cuBLASLt 13.0 stores no bf16 D
  // beside an f32 bias.
  let bf16Result = 0;
}

def Vouch_MatmulOp : Vouch_Op<"matmul", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "Matrix product op(lhs) · op(rhs), optionally batched";
  let description = [{
    Rank 2: op(lhs) is [M,K], op(rhs) is [K,N], the result [M,N]; op()
    transposes the last two axes when `transpose_lhs` / `transpose_rhs` is
    set, reading the original row-major storage (no transposed copy is ever
    made). Leading (batch) axes: an operand of rank 2 is one matrix shared
    by every batch entry; operands of higher rank have the result's batch
    axes. (The frontend applies torch.matmul's broadcasting first: a batch of
    one entry becomes a rank-2 view, any other partial batch a broadcast.)

    ```mlir
    %c = vouch.matmul %a, %b {transpose_rhs} : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x5xf32>
    ```
  }];
  let arguments = (ins Vouch_ProductOperand:$lhs, Vouch_ProductOperand:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify() and the frontend.
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType lhs, ::mlir::RankedTensorType rhs,
        bool transposeLhs, bool transposeRhs);
  }];

  let family = Vouch_Gemm;
  let formula = "op(lhs)·op(rhs) per batch entry, op() transposing the last "
                "two axes when flagged";
  let builtin = "matmul";
  let builtinParams = "lhs, rhs, transpose_lhs = false, transpose_rhs = false";
  let cudaProviders = "cublas,native-cuda";
  let cpuKernel = "vouch::rt::matmul<T>";
  let cpuEvidence = "cpu-kernels";
}

// vouch-fold-linear-bias-grad (cuda builds) makes it of a linear's VJP: the
// weight's product and the bias's column sums read the same gradient, and
// cuBLASLt's BGRADB epilogue sums the columns as the product reads them.
def Vouch_LinearWeightGradOp : Vouch_Op<"linear_weight_grad", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "A linear's weight and bias gradients in one product";
  let description = [{
    `grad` is [rows, out] (the linear's result gradient, its leading axes
    flattened), `input` [rows, in]; `weight_grad` = gradᵀ·input is [out,
    in] and `bias_grad`[o] = Σ_rows grad[r, o] is [out]: what
    `vouch.matmul %grad, %input {transpose_lhs}` and `vouch.reduce_sum
    %grad axes [0]` compute.

    ```mlir
    %dw, %db = vouch.linear_weight_grad %dy, %x : (tensor<16x8xf32>, tensor<16x4xf32>) -> (tensor<8x4xf32>, tensor<8xf32>)
    ```
  }];
  let arguments = (ins Vouch_ProductOperand:$grad, Vouch_ProductOperand:$input);
  let results = (outs Vouch_FloatTensor:$weight_grad,
                      Vouch_FloatTensor:$bias_grad);
  let assemblyFormat =
      "$grad `,` $input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let builders = [
    // The results' types follow from the operands.
    OpBuilder<(ins "::mlir::Value":$grad, "::mlir::Value":$input)>
  ];

  let family = Vouch_Gemm;
  let formula = "weight_grad = gradᵀ·input, bias_grad = Σ_rows grad";
  let cudaProviders = "cublaslt";
  // Built under --bias-grad-epilogue only, so no model of the GPU suite plans
  // it by default (the suite builds two with the flag): the runtime's call
  // is the test that names it.
  let cudaEvidence = "blas-device";
  let cpuKernel = "vouch::rt::linear_weight_grad<T>";
  let cpuKernelNote = "the product as vouch::rt::matmul (transposed lhs), "
                      "then each column of grad summed over its rows "
                      "ascending, as vouch::rt::reduce_sum";
  let cpuEvidence = "cpu-kernels";
}

//===----------------------------------------------------------------------===//
// Pointwise ops (one shape for all operands and the result)
//===----------------------------------------------------------------------===//

// The family's shape rule (vouch::inferPointwiseType: operands of one type,
// which the result has) verifies every pointwise op; the frontend applies
// the same rule.
def Vouch_PointwiseShape : NativeOpTrait<"PointwiseShape"> {
  let cppNamespace = "::vouch::OpTrait";
}

class Vouch_PointwiseOp<string mnemonic, list<Trait> traits = []>
    : Vouch_Op<mnemonic, !listconcat(traits, [Pure, Vouch_PointwiseShape,
        DeclareOpInterfaceMethods<Vouch_VJPOpInterface>,
        DeclareOpInterfaceMethods<Vouch_PointwiseOpInterface>])> {
  let family = Vouch_Pointwise;
}

// A binary or unary pointwise op is a builtin of the language under its
// own name; the frontend lowers it generically (frontend/Builtins.cpp).
class Vouch_BinaryOp<string mnemonic, string claim>
    : Vouch_PointwiseOp<mnemonic> {
  let summary = "Elementwise " # claim;
  let formula = claim # " elementwise";
  let builtin = mnemonic;
  let builtinParams = "lhs, rhs";
  let description = [{
    Both operands and the result have one shape (the frontend inserts
    `vouch.broadcast` for NumPy-style broadcasting).

    ```mlir
    %c = vouch.}] # mnemonic # [{ %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$lhs, Vouch_FloatTensor:$rhs);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

class Vouch_UnaryOp<string mnemonic, string claim>
    : Vouch_PointwiseOp<mnemonic> {
  let summary = "Elementwise " # claim;
  let formula = claim # " elementwise";
  let builtin = mnemonic;
  let builtinParams = "x";
  let description = [{
    ```mlir
    %r = vouch.}] # mnemonic # [{ %a : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Vouch_ReluOp : Vouch_UnaryOp<"relu", "max(x, 0)"> {
  // The quickstart end-to-end test's first-step loss flows through relu.
  let cpuEvidence = "cpu-build";
}
def Vouch_AddOp : Vouch_BinaryOp<"add", "lhs + rhs">;
def Vouch_SubOp : Vouch_BinaryOp<"sub", "lhs - rhs">;
def Vouch_MulOp : Vouch_BinaryOp<"mul", "lhs * rhs">;
def Vouch_DivOp : Vouch_BinaryOp<"div", "lhs / rhs"> {
  let cpuEvidence = "golden-torch";  // examples/activations_mlp.vouch
}
// NaN when either operand is NaN, as torch.maximum / torch.minimum; where
// lhs == rhs the gradient is split half and half between them (PyTorch's rule).
def Vouch_MaximumOp : Vouch_BinaryOp<"maximum", "max(lhs, rhs)"> {
  let cpuEvidence = "golden-torch";  // examples/activations_mlp.vouch
}
def Vouch_MinimumOp : Vouch_BinaryOp<"minimum", "min(lhs, rhs)"> {
  let cpuEvidence = "golden-torch";  // examples/activations_mlp.vouch
}
def Vouch_TanhOp : Vouch_UnaryOp<"tanh", "tanh(x)">;
def Vouch_ExpOp : Vouch_UnaryOp<"exp", "exp(x)">;
def Vouch_AbsOp : Vouch_UnaryOp<"abs", "|x|"> {
  let cpuEvidence = "golden-torch";  // examples/activations_mlp.vouch
}
def Vouch_SqrtOp : Vouch_UnaryOp<"sqrt", "sqrt(x)"> {
  let cpuEvidence = "golden-torch";  // examples/activations_mlp.vouch
}
def Vouch_LogOp : Vouch_UnaryOp<"log", "ln(x)"> {
  let cpuEvidence = "golden-torch";  // examples/activations_mlp.vouch
}
def Vouch_SinOp : Vouch_UnaryOp<"sin", "sin(x)"> {
  let cpuEvidence = "golden-torch";  // examples/activations_mlp.vouch
}
def Vouch_CosOp : Vouch_UnaryOp<"cos", "cos(x)"> {
  let cpuEvidence = "golden-torch";  // examples/activations_mlp.vouch
}
def Vouch_SigmoidOp : Vouch_UnaryOp<"sigmoid", "1 / (1 + exp(-x))"> {
  let cpuEvidence = "golden-torch";  // examples/activations_mlp.vouch
}
def Vouch_SiluOp : Vouch_UnaryOp<"silu", "x / (1 + exp(-x))"> {
  let cpuEvidence = "golden-torch";  // examples/activations_mlp.vouch
}
def Vouch_InvOp : Vouch_UnaryOp<"inv", "1 / x"> {
  let cpuEvidence = "golden-torch";  // examples/activations_mlp.vouch
}
// Pointwise ops with number parameters: the builtin's parameters after x are
// F64 attributes of the same names (the frontend's generic pointwise lowering).
class Vouch_PointwiseWithNumbers<string mnemonic, string claim, string params,
                                 dag numbers, string format>
    : Vouch_PointwiseOp<mnemonic> {
  let summary = "Elementwise " # claim;
  let formula = claim # ", elementwise";
  let builtin = mnemonic;
  let builtinParams = params;
  let description = [{
    ```mlir
    %r = vouch.}] # mnemonic # [{ %a }] # format # [{ : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = !con((ins Vouch_FloatTensor:$input), numbers);
  let results = (outs Vouch_FloatTensor:$result);
  let hasVerifier = 1;
  let cpuEvidence = "golden-torch";  // examples/activations_mlp.vouch
}

def Vouch_SoftplusOp : Vouch_PointwiseWithNumbers<"softplus",
    "log(1 + exp(beta·x)) / beta, or x where beta·x > threshold (PyTorch's softplus)",
    "x, beta = 1, threshold = 20", (ins F64Attr:$beta, F64Attr:$threshold),
    "beta 1.0 threshold 20.0"> {
  let assemblyFormat = "$input `beta` $beta `threshold` $threshold attr-dict `:` "
                       "functional-type(operands, results)";
}
def Vouch_SafeLogOp : Vouch_PointwiseWithNumbers<"safe_log",
    "ln(max(x, eps)) (TorchLean's safe_log)", "x, eps = 1e-12",
    (ins F64Attr:$eps), "eps 1.0e-12"> {
  let assemblyFormat = "$input `eps` $eps attr-dict `:` functional-type(operands, results)";
}
def Vouch_ClampOp : Vouch_PointwiseWithNumbers<"clamp",
    "min(max(x, min), max) (torch.clamp; NaN stays NaN)", "x, min, max",
    (ins F64Attr:$min, F64Attr:$max), "min -1.0 max 1.0"> {
  let assemblyFormat = "$input `min` $min `max` $max attr-dict `:` "
                       "functional-type(operands, results)";
}
def Vouch_PowOp : Vouch_PointwiseWithNumbers<"pow",
    "x raised to the number p (std::pow; torch.pow with a number exponent)", "x, p",
    (ins F64Attr:$p), "p 3.0"> {
  let assemblyFormat = "$input `p` $p attr-dict `:` functional-type(operands, results)";
}

// GELU (PyTorch's gelu): approximate "tanh" is TorchLean's form, "none" the
// erf form. Both are evaluated without FMA contraction on every backend:
// the formula is a call of vouch::gelu_tanh / gelu_erf (runtime/cpu_kernels.h
// on cpu, built with -ffp-contract=off; runtime/cuda/kernels/gelu.cuh on
// cuda, written with __fmul_rn / __fadd_rn), so it rounds the same way
// inside a fused chain as alone.
def Vouch_GeluOp : Vouch_PointwiseOp<"gelu"> {
  let summary = "Elementwise GELU, tanh-approximate or exact (erf)";
  let description = [{
    `approximate` is "tanh": 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), or
    "none": 0.5·x·(1 + erf(x/√2)). Every multiplication and addition of the
    formula rounds on its own (no FMA contraction).

    ```mlir
    %r = vouch.gelu %a approximate "tanh" : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, StrAttr:$approximate);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$input `approximate` $approximate attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether `approximate` is "tanh" (else "none", the erf form).
    bool isTanh() { return getApproximate() == "tanh"; }
  }];

  let formula = "0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (approximate "
                "\"tanh\") or 0.5·x·(1 + erf(x/√2)) (\"none\"), elementwise, "
                "every product and sum rounded on its own (PyTorch's gelu)";
  let builtin = "gelu";
  let builtinParams = "x, approximate = \"tanh\"";
  let cpuEvidence = "golden-torch-slice";  // examples/slice_mlp.vouch
  let contraction = "none";
  let cudaKernelSource = "codegen/recipes/PointwiseRecipe.cpp, "
                         "runtime/cuda/kernels/pointwise.cuh, gelu.cuh";
  let cudaKernel = "vouch::pointwise_kernel calling vouch::gelu_tanh / vouch::gelu_erf";
}

// gelu's derivative, built by gelu's VJP only (dx = dy·gelu_grad(x)), with
// the same no-contraction evaluation.
def Vouch_GeluGradOp : Vouch_PointwiseOp<"gelu_grad"> {
  let summary = "Elementwise derivative of gelu";
  let description = [{
    "tanh": 0.5·(1 + t) + 0.5·x·(1 - t²)·√(2/π)·(1 + 3·0.044715·x²), t the
    tanh of gelu's formula; "none": Φ(x) + x·φ(x), the standard normal's
    cdf and density.

    ```mlir
    %g = vouch.gelu_grad %a approximate "none" : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, StrAttr:$approximate);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$input `approximate` $approximate attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isTanh() { return getApproximate() == "tanh"; }
  }];

  let formula = "d gelu / dx for approximate \"tanh\" or \"none\", elementwise, "
                "every product and sum rounded on its own";
  let cpuEvidence = "golden-torch-slice";  // examples/slice_mlp.vouch
  let contraction = "none";
  let cudaKernelSource = "codegen/recipes/PointwiseRecipe.cpp, "
                         "runtime/cuda/kernels/pointwise.cuh, gelu.cuh";
  let cudaKernel = "vouch::pointwise_kernel calling vouch::gelu_tanh_grad / "
                   "vouch::gelu_erf_grad";
}

// Built by relu's VJP only: not a builtin of the language.
def Vouch_StepOp : Vouch_UnaryOp<"step",
    "Heaviside step: 1 where x > 0, else 0 (ReLU's derivative)"> {
  let formula = "1 where x > 0, else 0, elementwise";
  let builtin = "";
  let builtinParams = "";
}

def Vouch_ScaleOp : Vouch_PointwiseOp<"scale"> {
  let summary = "Elementwise input · factor for a compile-time scalar factor";
  let description = [{
    ```mlir
    %h = vouch.scale %a by 0.5 : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, F64Attr:$factor);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat =
      "$input `by` $factor attr-dict `:` functional-type(operands, results)";

  let formula = "input · factor elementwise";
  let builtin = "scale";
  let builtinParams = "x, factor";
}

//===----------------------------------------------------------------------===//
// Shape and layout
//===----------------------------------------------------------------------===//

def Vouch_ReshapeOp : Vouch_Op<"reshape", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "Same elements in row-major order, another shape";
  let description = [{
    ```mlir
    %r = vouch.reshape %a : (tensor<2x3xf32>) -> tensor<6xf32>
    ```
  }];
  let arguments = (ins Vouch_ViewTensor:$input);
  let results = (outs Vouch_ViewTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify() and the frontend.
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType input, ::llvm::ArrayRef<int64_t> shape);
  }];

  let family = Vouch_View;
  let formula = "the same elements in row-major order, another shape";
  let builtin = "reshape";
  let builtinParams = "x, shape";
}

def Vouch_PermuteOp : Vouch_Op<"permute", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "Axis permutation: result axis i is input axis perm[i]";
  let description = [{
    ```mlir
    %t = vouch.permute %a perm [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat =
      "$input `perm` $perm attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify() and the frontend.
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType input, ::llvm::ArrayRef<int64_t> perm);
  }];

  let family = Vouch_Index;
  let formula = "result axis i is input axis perm[i]";
  let builtin = "permute";
  let builtinParams = "x, perm";
  let cpuKernel = "vouch::rt::permute<T>";
  let cpuEvidence = "cpu-kernels";
}

def Vouch_BroadcastOp : Vouch_Op<"broadcast", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "Broadcast into a larger shape (StableHLO broadcast_in_dim)";
  let description = [{
    Input axis i becomes result axis `dims[i]` (strictly increasing); its
    extent is 1 (repeated) or equal to the result's.

    ```mlir
    %bb = vouch.broadcast %b dims [1] : (tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat =
      "$input `dims` $dims attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify() and the frontend: `input` broadcast to
    /// `shape`, input axis i becoming axis dims[i].
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType input, ::llvm::ArrayRef<int64_t> shape,
        ::llvm::ArrayRef<int64_t> dims);
  }];

  let family = Vouch_Index;
  let formula =
      "input axis i becomes result axis dims[i]; extent-1 axes repeat";
  let builtin = "broadcast";
  let builtinParams = "x, shape";
  let cpuKernel = "vouch::rt::broadcast_in_dim<T>";
  let cpuEvidence = "cpu-kernels";
}

// Python slicing of one axis (x[..., start:end:step, ...]); the frontend
// normalises negative and out-of-range bounds as Python does.
def Vouch_SliceOp : Vouch_Op<"slice", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "Every step-th element of one axis from start up to end";
  let description = [{
    Result index j of `axis` reads input index start + j·step; the result
    has ceil((end - start) / step) entries there. The bounds are normalised:
    0 ≤ start < end ≤ the axis's extent, step ≥ 1.

    ```mlir
    %s = vouch.slice %a axis 1 start 1 end 8 step 2 : (tensor<4x8xf32>) -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, I64Attr:$axis, I64Attr:$start,
                       I64Attr:$end, I64Attr:$step);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$input `axis` $axis `start` $start `end` $end `step` $step "
                       "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify(), slice_scatter's verifier and the
    /// frontend (which normalises the bounds first).
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType input, int64_t axis, int64_t start,
        int64_t end, int64_t step);
  }];

  let family = Vouch_Index;
  let formula = "result index j of `axis` is input index start + j·step";
  let builtin = "slice";
  let builtinParams = "x, axis, start, end, step = 1";
  let cpuKernel = "vouch::rt::slice<T>";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource =
      "codegen/recipes/SliceRecipe.cpp, runtime/cuda/kernels/slice.cuh";
  let cudaKernel = "vouch::slice_kernel / vouch::slice_quads_kernel";
}

// slice's VJP: the gradient scattered into zeros of the sliced tensor's
// shape (torch.slice_scatter of zeros). Not a builtin.
def Vouch_SliceScatterOp : Vouch_Op<"slice_scatter", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "Zeros with `input` written at a slice's positions";
  let description = [{
    The result is zero but at the positions `vouch.slice` with the same
    attributes reads, which hold `input`'s elements: slice(result) = input.

    ```mlir
    %g = vouch.slice_scatter %d axis 1 start 1 end 8 step 2 : (tensor<4x4xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, I64Attr:$axis, I64Attr:$start,
                       I64Attr:$end, I64Attr:$step);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$input `axis` $axis `start` $start `end` $end `step` $step "
                       "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;

  let family = Vouch_Index;
  let formula = "zeros, but result index start + j·step of `axis` is input "
                "index j";
  let cpuKernel = "vouch::rt::slice_scatter<T>";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource =
      "codegen/recipes/SliceRecipe.cpp, runtime/cuda/kernels/slice.cuh";
  let cudaKernel = "vouch::slice_scatter_kernel";
}

// torch.cat: the inputs one after another along `axis`.
def Vouch_ConcatOp : Vouch_Op<"concat", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "Inputs joined along one axis (torch.cat)";
  let description = [{
    The inputs agree in rank, element type and every extent but `axis`'s;
    the result's extent there is their sum.

    ```mlir
    %c = vouch.concat %a, %b axis 1 : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<4x5xf32>
    ```
  }];
  let arguments = (ins Variadic<Vouch_FloatTensor>:$inputs, I64Attr:$axis);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$inputs `axis` $axis attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify() and the frontend.
    static ::vouch::InferredType inferResultType(
        ::llvm::ArrayRef<::mlir::RankedTensorType> inputs, int64_t axis);
  }];

  let family = Vouch_Index;
  let formula = "the inputs one after another along `axis`";
  let builtin = "concat";
  let builtinParams = "tensors, axis";
  let cpuKernel = "vouch::rt::concat<T>";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource =
      "codegen/recipes/SliceRecipe.cpp, runtime/cuda/kernels/concat.cuh";
  let cudaKernel = "vouch::concat_kernel / vouch::concat_quads_kernel";
}

// torch.nn.functional.embedding: rows of a table picked by i32 ids.
def Vouch_EmbeddingOp : Vouch_Op<"embedding", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "Rows of a [V, D] table picked by i32 ids (F.embedding)";
  let description = [{
    `ids` is an i32 tensor of any shape, `table` is `[V, D]`; the result is
    `ids`' shape followed by D: result[p, :] = table[ids[p], :]. An id outside
    [0, V) gives a row of NaN (the kernels never read outside the table; the
    data loader refuses such ids in data fields before training).

    ```mlir
    %e = vouch.embedding %ids, %table : (tensor<4x3xi32>, tensor<10x8xf32>) -> tensor<4x3x8xf32>
    ```
  }];
  let arguments = (ins Vouch_IntTensor:$ids, Vouch_FloatTensor:$table);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat =
      "$ids `,` $table attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify(), embedding_grad's verifier and the
    /// frontend.
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType ids, ::mlir::RankedTensorType table);
  }];

  let family = Vouch_Index;
  let formula = "result[p, :] = table[ids[p], :]; NaN row for an id outside "
                "[0, V)";
  let builtin = "embedding";
  let builtinParams = "ids, table";
  let cpuKernel = "vouch::rt::embedding<T>";
  let cpuEvidence = "golden-torch-embedding";
  let cudaKernelSource =
      "codegen/recipes/GatherRecipe.cpp, runtime/cuda/kernels/embedding.cuh";
  let cudaKernel = "vouch::embedding_kernel";
}

// embedding's VJP: dy summed into the table's rows. Not a builtin.
def Vouch_EmbeddingGradOp : Vouch_Op<"embedding_grad", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "dy's rows summed into a [V, D] table by their ids";
  let description = [{
    result[v, d] is the sum, over positions p in ascending (row-major) order
    whose id is v, of dy[p, d], starting from 0 (a fixed order: no atomics,
    the same bits every run). Any id outside [0, V) makes the whole result
    NaN: a gradient built from a bad id is never silently wrong.

    ```mlir
    %g = vouch.embedding_grad %ids, %dy : (tensor<4x3xi32>, tensor<4x3x8xf32>) -> tensor<10x8xf32>
    ```
  }];
  let arguments = (ins Vouch_IntTensor:$ids, Vouch_FloatTensor:$dy);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat =
      "$ids `,` $dy attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;

  let family = Vouch_Index;
  let formula = "result[v, d] = sum over p ascending with ids[p] = v of "
                "dy[p, d], from 0; all NaN if an id is outside [0, V)";
  let cpuKernel = "vouch::rt::embedding_grad<T>";
  let cpuEvidence = "golden-torch-embedding";
  let cudaKernelSource =
      "codegen/recipes/GatherRecipe.cpp, runtime/cuda/kernels/embedding.cuh";
  let cudaKernel = "vouch::embedding_grad_kernel";
  let sums = 1;
}

// torch.gather along one axis. The index has x's extents on every other axis
// (torch allows smaller ones; vouch asks for equal ones).
def Vouch_GatherOp : Vouch_Op<"gather", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "Elements of x picked along one axis by an i32 index (torch.gather)";
  let description = [{
    `index` is i32 of x's rank and extents but on `axis`; the result has
    index's shape: result[.., j, ..] = x[.., index[.., j, ..], ..] along
    `axis`. An index outside [0, x's extent on axis) gives NaN.

    ```mlir
    %g = vouch.gather %x, %i axis 1 : (tensor<4x8xf32>, tensor<4x3xi32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, Vouch_IntTensor:$index,
                       I64Attr:$axis);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$input `,` $index `axis` $axis attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify(), scatter_add's verifier and the frontend.
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType input, ::mlir::RankedTensorType index,
        int64_t axis);
  }];

  let family = Vouch_Index;
  let formula = "result[.., j, ..] = input[.., index[.., j, ..], ..] along "
                "`axis`; NaN for an index out of range";
  let builtin = "gather";
  let builtinParams = "x, index, axis";
  let cpuKernel = "vouch::rt::gather<T>";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource =
      "codegen/recipes/GatherRecipe.cpp, runtime/cuda/kernels/gather.cuh";
  let cudaKernel = "vouch::gather_axis_kernel";
}

// torch.Tensor.scatter_add (out of place), summed in a fixed order.
def Vouch_ScatterAddOp : Vouch_Op<"scatter_add", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "x with src added at an i32 index along one axis (torch scatter_add)";
  let description = [{
    `index` and `src` share a shape, of x's rank and extents but on `axis`.
    result[.., a, ..] = x[.., a, ..] + the sum, over j ascending with
    index[.., j, ..] = a, of src[.., j, ..] (x's element first, then the
    matches in order: no atomics, the same bits every run). An index out of
    range makes its whole fiber along `axis` NaN.

    ```mlir
    %s = vouch.scatter_add %x, %i, %src axis 1 : (tensor<4x8xf32>, tensor<4x3xi32>, tensor<4x3xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, Vouch_IntTensor:$index,
                       Vouch_FloatTensor:$src, I64Attr:$axis);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$input `,` $index `,` $src `axis` $axis attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify() and the frontend.
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType input, ::mlir::RankedTensorType index,
        ::mlir::RankedTensorType src, int64_t axis);
  }];

  let family = Vouch_Index;
  let formula = "result[.., a, ..] = input[.., a, ..] + sum over j ascending "
                "with index[.., j, ..] = a of src[.., j, ..]; NaN fiber for an "
                "index out of range";
  let builtin = "scatter_add";
  let builtinParams = "x, index, src, axis";
  let cpuKernel = "vouch::rt::scatter_add<T>";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource =
      "codegen/recipes/GatherRecipe.cpp, runtime/cuda/kernels/gather.cuh";
  let cudaKernel = "vouch::scatter_add_axis_kernel";
  let sums = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and losses
//===----------------------------------------------------------------------===//

// The family's shape rule (vouch::inferReductionType: `axes` strictly
// increasing axes of the input, removed from its shape) verifies every
// reduction; the frontend applies the same rule.
def Vouch_ReductionShape : NativeOpTrait<"ReductionShape"> {
  let cppNamespace = "::vouch::OpTrait";
}

class Vouch_ReduceOp<string mnemonic, string what>
    : Vouch_Op<mnemonic, [Pure, Vouch_ReductionShape,
        DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = what # " over `axes`, which are removed from the shape";
  let description = [{
    ```mlir
    %s = vouch.}] # mnemonic # [{ %a axes [0] : (tensor<4x8xf32>) -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat =
      "$input `axes` $axes attr-dict `:` functional-type(operands, results)";

  // A builtin under its own name, lowered generically (frontend/Builtins.cpp).
  let family = Vouch_Reduction;
  let builtin = mnemonic;
  let builtinParams = "x, axes = all";
  let cpuKernel = "vouch::rt::reduce_sum<T>";
}

def Vouch_ReduceSumOp : Vouch_ReduceOp<"reduce_sum", "Sum"> {
  let formula = "sum over `axes`";
  let cpuEvidence = "cpu-kernels";
}
// cpu_kernels_test covers the sum, not the division after it.
def Vouch_ReduceMeanOp : Vouch_ReduceOp<"reduce_mean", "Arithmetic mean"> {
  let formula = "sum over `axes` divided by the reduced element count";
  let cpuKernelNote = "then divides by the reduced element count";
}

// torch.amax / torch.amin: NaN if an element of the slice is NaN; the
// gradient is split evenly among the elements equal to the result.
def Vouch_ReduceMaxOp : Vouch_ReduceOp<"reduce_max", "Maximum"> {
  let formula = "maximum over `axes` (NaN where a reduced element is NaN)";
  let cpuKernel = "vouch::rt::reduce_max<T>";
  let cpuEvidence = "golden-torch";
}
def Vouch_ReduceMinOp : Vouch_ReduceOp<"reduce_min", "Minimum"> {
  let formula = "minimum over `axes` (NaN where a reduced element is NaN)";
  let cpuKernel = "vouch::rt::reduce_min<T>";
  let cpuEvidence = "golden-torch";
}

def Vouch_MseLossOp : Vouch_Op<"mse_loss", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "Mean of squared differences, a rank-0 tensor";
  let description = [{
    ```mlir
    %l = vouch.mse_loss %p, %y : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$prediction, Vouch_FloatTensor:$target);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat =
      "$prediction `,` $target attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify() and the frontend.
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType prediction, ::mlir::RankedTensorType target);
  }];

  let family = Vouch_Loss;
  let formula = "mean of (prediction - target)² over all elements";
  let builtin = "mse_loss";
  let builtinParams = "prediction, target";
  let cpuKernel = "vouch::rt::mse_loss<T>";
  let cpuEvidence = "cpu-kernels";
}

// The classifier's loss (llm.c's fused classifier split in two kernels: the
// loss, and dlogits from the logits, never a probability tensor).
def Vouch_CrossEntropyOp : Vouch_Op<"cross_entropy", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "Mean softmax cross-entropy of logits against int32 class labels";
  let description = [{
    `logits` is `[..., C]`, `labels` the same shape without the class axis.
    Positions whose label is `ignore_index` do not count; the result is the
    mean over the others (NaN when every position is ignored, as PyTorch).
    A label outside [0, C) that is not `ignore_index` gives NaN (the data
    loader refuses such labels before training).

    `classes`, where set (only `vouch-pad-classes` sets it), counts the
    first `classes` entries of the class axis as the classes (C above) and
    ignores the rest: zero padding that makes the logits' row length a
    multiple of a tensor-core product's quantum, so the LM head's products
    need no padded copies. Unset, every entry is a class.

    ```mlir
    %l = vouch.cross_entropy %logits, %labels {ignore_index = -100 : i64}
        : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$logits, Vouch_IntTensor:$labels,
                       I64Attr:$ignore_index, OptionalAttr<I64Attr>:$classes);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat =
      "$logits `,` $labels attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify() and the frontend.
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType logits, ::mlir::RankedTensorType labels);
    /// The classes counted: `classes` where set, else the whole class axis.
    int64_t classCount();
  }];

  let family = Vouch_Loss;
  let formula = "mean over positions p with labels[p] ≠ ignore_index of "
                "logsumexp(logits[p, :]) - logits[p, labels[p]]";
  let builtin = "cross_entropy";
  let builtinParams = "logits, labels, ignore_index = -100";
  let cpuKernel = "vouch::rt::cross_entropy<T>";
  let cpuEvidence = "golden-torch-digits";
  let cudaKernelSource = "codegen/recipes/LossRecipe.cpp, runtime/cuda/kernels/classifier.cuh";
  let cudaKernel = "vouch::cross_entropy_kernel";
}

def Vouch_CrossEntropyGradOp : Vouch_Op<"cross_entropy_grad", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "The gradient of cross_entropy with respect to its logits";
  let description = [{
    Built by cross_entropy's VJP rule; `dloss` is the loss's rank-0
    gradient. With `classes` set (cross_entropy's), the entries of the class
    axis past the first `classes` are written 0. A bf16 result (f32 logits;
    made by vouch-round-bf16-operands in place of a vouch.round_bf16 of the
    f32 result) holds each entry rounded to bf16, nearest even.

    ```mlir
    %d = vouch.cross_entropy_grad %logits, %labels, %dl {ignore_index = -100 : i64}
        : (tensor<4x10xf32>, tensor<4xi32>, tensor<f32>) -> tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$logits, Vouch_IntTensor:$labels,
                       Vouch_FloatTensor:$dloss, I64Attr:$ignore_index,
                       OptionalAttr<I64Attr>:$classes);
  // bf16 only as vouch-round-bf16-operands makes it (bf16Result below).
  let results = (outs Vouch_ProductOperand:$result);
  let assemblyFormat = "$logits `,` $labels `,` $dloss attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The classes counted: `classes` where set, else the whole class axis.
    int64_t classCount();
  }];

  let family = Vouch_Loss;
  let formula = "dloss · (softmax(logits[p, :]) - onehot(labels[p])) / "
                "(positions not ignored), 0 on ignored positions and past "
                "`classes`";
  let cpuKernel = "vouch::rt::cross_entropy_grad<T>";
  let cpuEvidence = "golden-torch-digits";
  let cudaKernelSource = "codegen/recipes/LossRecipe.cpp, runtime/cuda/kernels/classifier.cuh";
  let cudaKernel = "vouch::cross_entropy_grad_kernel";
  // dlogits may be written over the logits: both kernels read a row (its
  // statistics; the cuda one stages it in shared memory or re-reads element
  // c) before writing element c of the same row, and touch no other row.
  let inPlaceOperand = 0;
  // Under bf16 products the LM head's products read dlogits as bf16: the cuda
  // kernel stores them rounded (classifier.cuh's Bf16Out; f32 logits only),
  // and the f32 dlogits are never written.
  let bf16Result = 0;
  let cudaKernelNote = "over more than 4096 classes each row is staged in shared "
                       "memory by a cluster of two blocks and read once, the "
                       "halves' max and sum combined in rank order (softmax.cuh's "
                       "long_rows_staged)";
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

// cast(x, f32|f64|i32): torch's .to(dtype). A run computes in one real type
// (--dtype), so a cast between f32 and f64 is the identity at run time; it
// keeps the IR's types consistent. real -> i32 truncates toward zero, with a
// defined result outside int32 (NaN 0, saturation at INT32_MIN / INT32_MAX).
def Vouch_CastOp : Vouch_Op<"cast", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "Element type conversion, as torch's .to(dtype)";
  let description = [{
    The result has the input's shape and the element type f32, f64 or i32;
    the input is f32, f64, i32 or i1 (a mask: 0 or 1). Only real -> real
    casts carry a gradient (dy, converted back); an integer input or result
    has none.

    ```mlir
    %y = vouch.cast %x : (tensor<4x8xf32>) -> tensor<4x8xi32>
    ```
  }];
  let arguments = (ins Vouch_AnyTensor:$input);
  let results = (outs Vouch_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify() and the frontend: `element` is f32, f64
    /// or i32.
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType input, ::mlir::Type element);
  }];

  let family = Vouch_Index;
  let formula = "x converted elementwise: reals exact in the run's real type, "
                "integers exact, real -> i32 truncated toward zero (NaN 0, "
                "saturated outside int32)";
  let builtin = "cast";
  let builtinParams = "x, to";
  let cpuKernel = "vouch::rt::cast<T>";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource = "codegen/recipes/CastRecipe.cpp, runtime/cuda/kernels/cast.cuh";
  let cudaKernel = "vouch::cast_kernel";
}

// vouch-round-bf16-operands makes it in cuda builds with bf16 products (after
// autodiff): an f32 value that cuBLAS products read is rounded to bf16 once,
// into a buffer of its own that each of them reads in place, instead of by an
// executor copy before each product (a layer's activation is read by its
// forward product and by its weight gradient, a weight by the forward and by
// dx). Not a builtin: the language has no bf16 values.
def Vouch_RoundBf16Op : Vouch_Op<"round_bf16", [Pure]> {
  let summary = "f32 values rounded to bf16, a bf16 product's operand";
  let description = [{
    The result has the input's shape; each element is the input's rounded to
    the nearest bf16, ties to even (infinities stay, finite values past
    bf16's largest become infinite, NaN stays NaN): the rounding the
    executor's operand copies make (runtime/cuda/gemm_call.h's ProductMath
    Bf16). Only vouch.matmul, vouch.linear, vouch.linear_weight_grad and
    vouch.reshape read a bf16 value.

    ```mlir
    %b = vouch.round_bf16 %x : (tensor<4x8xf32>) -> tensor<4x8xbf16>
    ```
  }];
  let arguments = (ins Vouch_F32Tensor:$input);
  let results = (outs Vouch_Bf16Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let builders = [
    // The result's type follows from the input's.
    OpBuilder<(ins "::mlir::Value":$input)>
  ];

  let family = Vouch_Index;
  let formula = "each f32 rounded to the nearest bf16, ties to even";
  let cpuKernel = "vouch::rt::round_bf16<T>";
  let cpuKernelNote = "the reference of the cuda kernel's rounding; no cpu "
                      "program has bf16 values";
  let cpuEvidence = "cpu-kernels";
  // A pointwise chain's bf16 store (vouch-fuse-pointwise fuses it into the
  // kernel computing its input where it can; alone, a chain of one), or the
  // second store of the kernel computing its input where that op stores a
  // bf16 twin (the op table's bf16Twin; that op's capsule says so).
  let cudaKernelSource = "codegen/recipes/PointwiseRecipe.cpp, runtime/cuda/kernels/pointwise.cuh";
  let cudaKernel = "vouch::pointwise_kernel (a Bf16Out store), or the bf16 "
                   "twin store of the kernel computing its input (fused with "
                   "that op: the op table's bf16Twin)";
  // Planned only by bf16 builds: the GPU suite's, against the cpu f64
  // reference under bf16's declared tolerances.
  let cudaEvidence = "gpu-suite-bf16";
}

//===----------------------------------------------------------------------===//
// Normalizations: each row along one axis scaled by its own sums
//===----------------------------------------------------------------------===//

// softmax / log_softmax along `axis` (PyTorch's dim), shifted by the row's
// maximum so exp never overflows. The VJPs are the *_grad ops below.
class Vouch_RowSoftmaxOp<string mnemonic, string what, string claim>
    : Vouch_Op<mnemonic, [Pure,
        DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = what # " along `axis` (PyTorch's dim), max-shifted";
  let description = [{
    ```mlir
    %p = vouch.}] # mnemonic # [{ %a axis 1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat =
      "$input `axis` $axis attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify() and the frontend (`axis` normalised).
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType input, int64_t axis);
  }];

  let family = Vouch_Normalization;
  let formula = claim;
  let builtin = mnemonic;
  let builtinParams = "x, axis = -1";
  let cpuKernel = "vouch::rt::" # mnemonic # "<T>";
  let cpuEvidence = "cpu-kernels";
}

def Vouch_SoftmaxOp : Vouch_RowSoftmaxOp<"softmax", "Softmax",
    "exp(x - max) / Σ exp(x - max) along `axis`">;
def Vouch_LogSoftmaxOp : Vouch_RowSoftmaxOp<"log_softmax", "Log-softmax",
    "x - max - ln Σ exp(x - max) along `axis`">;

// Built by the VJPs of softmax / log_softmax only: `grad` is the gradient
// of the result `output`; the result is the gradient of the input.
class Vouch_RowSoftmaxGradOp<string mnemonic, string what, string claim>
    : Vouch_Op<mnemonic, [Pure,
        DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = what # "'s VJP along `axis`, from its result";
  let description = [{
    ```mlir
    %dx = vouch.}] # mnemonic # [{ %dy, %p axis 1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$grad, Vouch_FloatTensor:$output,
                       I64Attr:$axis);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $output `axis` $axis attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify().
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType grad, ::mlir::RankedTensorType output,
        int64_t axis);
  }];

  let family = Vouch_Normalization;
  let formula = claim;
  let cpuKernel = "vouch::rt::" # mnemonic # "<T>";
  let cpuEvidence = "cpu-kernels";
}

def Vouch_SoftmaxGradOp : Vouch_RowSoftmaxGradOp<"softmax_grad", "Softmax",
    "output · (grad - Σ grad·output) along `axis`">;
def Vouch_LogSoftmaxGradOp : Vouch_RowSoftmaxGradOp<"log_softmax_grad",
    "Log-softmax", "grad - exp(output) · Σ grad along `axis`">;

// TorchLean's hard-mask softmax: `mask` (i1, broadcastable to `input` by
// NumPy's rules) selects the elements that take part; a blocked element has
// an exactly zero numerator (no -inf or finite sentinel is added to x), so a
// fully blocked row is all zeros. The result is zero wherever the mask is
// false, so softmax_grad of it is the VJP (zero on a fully blocked row); the
// mask has no gradient.
def Vouch_MaskedSoftmaxOp : Vouch_Op<"masked_softmax", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "Softmax along `axis` over the elements a boolean mask keeps";
  let description = [{
    Each row along `axis`: y = mask · exp(x - m) / Σ mask · exp(x - m), m
    the maximum over the kept elements; 0 where the mask is false, and 0 on
    the whole row when it keeps nothing.

    ```mlir
    %p = vouch.masked_softmax %a, %mask axis 1 : (tensor<4x8xf32>, tensor<4x8xi1>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, Vouch_AnyTensor:$mask,
                       I64Attr:$axis);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$input `,` $mask `axis` $axis attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify() and the frontend (`axis` normalised):
    /// the mask is i1 and broadcasts to the input.
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType input, ::mlir::RankedTensorType mask,
        int64_t axis);
  }];

  let family = Vouch_Normalization;
  let formula = "mask · exp(x - max) / Σ mask · exp(x - max) along `axis`, "
                "max over the kept elements; 0 where mask is false and on "
                "rows it blocks entirely";
  let builtin = "masked_softmax";
  let builtinParams = "x, mask, axis = -1";
  let cpuKernel = "vouch::rt::masked_softmax<T>";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource = "codegen/recipes/NormalizationRecipe.cpp, "
                         "runtime/cuda/kernels/softmax.cuh";
  let cudaKernel = "vouch::masked_softmax_kernel";
}

// torch.nn.functional.layer_norm(x, [D], weight, bias, eps) over the last
// axis: biased variance, statistics in the element type. `addend`
// (vouch-fold-layer-norm-add) is a residual stream's other term: the op then
// normalises input + addend and writes that sum as its second result (one
// kernel, one read of the sum fewer than the separate add).
def Vouch_LayerNormOp : Vouch_Op<"layer_norm", [Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "Layer normalisation over the last axis, optionally affine";
  let description = [{
    `input` is [..., D]; the optional `weight` and `bias` are [D]. Each row
    r of D elements: y = (x - mean) / sqrt(var + eps) · weight + bias, var
    the biased variance (mean of squared deviations). With `addend`
    (input's type), x = input + addend, rounded to the element type as the
    separate add would, and x is the second result `sum`. A bf16 result
    (f32 input; made by vouch-round-bf16-operands in place of a
    vouch.round_bf16 of the f32 y) holds each y rounded to bf16, nearest
    even.

    ```mlir
    %y = vouch.layer_norm %x weight %w bias %b eps 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %y, %sum = vouch.layer_norm %x plus %r eps 1.0e-05 : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input,
                       Optional<Vouch_FloatTensor>:$addend,
                       Optional<Vouch_FloatTensor>:$weight,
                       Optional<Vouch_FloatTensor>:$bias, F64Attr:$eps);
  // bf16 only as vouch-round-bf16-operands makes it (bf16Result below).
  let results = (outs Vouch_ProductOperand:$result,
                      Optional<Vouch_FloatTensor>:$sum);
  let assemblyFormat = "$input (`plus` $addend^)? (`weight` $weight^)? "
                       "(`bias` $bias^)? `eps` $eps "
                       "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let builders = [
    // Without an addend: y alone, of type `result`.
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
                   "::mlir::Value":$weight, "::mlir::Value":$bias,
                   "::mlir::FloatAttr":$eps)>
  ];
  let extraClassDeclaration = [{
    /// The shape rule, for verify() and the frontend (`weight`, `bias` may
    /// be null).
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType input, ::mlir::RankedTensorType weight,
        ::mlir::RankedTensorType bias);
  }];

  let family = Vouch_Normalization;
  let formula = "(x - mean) / sqrt(var + eps) · weight + bias per row of the "
                "last axis, var biased; with an addend, x = input + addend, "
                "also written out";
  let builtin = "layer_norm";
  let builtinParams = "x, weight = none, bias = none, eps = 1e-5";
  let cpuKernel = "vouch::rt::layer_norm<T>";
  let cpuEvidence = "cpu-kernels";
  // Under bf16 products a transformer's layer_norms feed linears only (their
  // forward product and their weight gradient's): the cuda kernel stores y
  // rounded (layernorm.cuh, O = bf16 bits; f32 input only), and the f32 y is
  // never written.
  let bf16Result = 0;
}

// Built by layer_norm's VJP only: all of its gradients in one op (one kernel
// on cuda), the row statistics recomputed from `input` exactly as the forward
// computed them. Results: dx, then dweight where there is a weight, then dbias
// where `with_bias` is set. `addend` (vouch-fold-layer-norm-grad-sum) is the
// rest of the input's gradient, which dx then includes: the residual stream's
// sum of contributions without a separate add.
def Vouch_LayerNormGradOp : Vouch_Op<"layer_norm_grad", [Pure,
    AttrSizedOperandSegments, DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "layer_norm's input, weight and bias gradients over the last axis";
  let description = [{
    With x̂ = (x - mean) · rstd and g = grad · weight (grad without a
    weight), each row: dx = rstd · (g - mean(g) - x̂ · mean(g · x̂)), plus
    `addend` (input's type) where given, added last: addend + dx with dx
    rounded first, the separate add's bits; the [D] results dweight =
    Σ_rows grad · x̂ (when `weight` is given) and dbias = Σ_rows grad (when
    `with_bias` is set) follow dx in that order.

    ```mlir
    %dx, %dw, %db = vouch.layer_norm_grad %dy, %x weight %w with_bias eps 1.0e-05 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
    %sum = vouch.layer_norm_grad %dy, %x plus %rest eps 1.0e-05 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$grad, Vouch_FloatTensor:$input,
                       Optional<Vouch_FloatTensor>:$weight,
                       Optional<Vouch_FloatTensor>:$addend,
                       UnitAttr:$with_bias, F64Attr:$eps);
  let results = (outs Vouch_FloatTensor:$dx,
                      Variadic<Vouch_FloatTensor>:$param_grads);
  let assemblyFormat = "$grad `,` $input (`weight` $weight^)? (`plus` $addend^)? "
                       "(`with_bias` $with_bias^)? `eps` $eps "
                       "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let builders = [
    // The results' types follow from the operands: dx like `input`, dweight
    // and dbias [D].
    OpBuilder<(ins "::mlir::Value":$grad, "::mlir::Value":$input,
                   "::mlir::Value":$weight, "bool":$withBias,
                   "::mlir::FloatAttr":$eps,
                   CArg<"::mlir::Value", "{}">:$addend)>
  ];
  let extraClassDeclaration = [{
    /// dweight (null without a weight) and dbias (null without `with_bias`).
    ::mlir::Value getWeightGrad() {
      return getWeight() ? getParamGrads().front() : ::mlir::Value();
    }
    ::mlir::Value getBiasGrad() {
      return getWithBias() ? getParamGrads().back() : ::mlir::Value();
    }
  }];

  let family = Vouch_Normalization;
  let formula = "dx = rstd · (g - mean(g) - x̂ · mean(g · x̂)) per row of the "
                "last axis, g = grad · weight, then + addend where given; "
                "dweight = Σ_rows grad · x̂, dbias = Σ_rows grad";
  let cpuKernel = "vouch::rt::layer_norm_grad<T>";
  let cpuKernelNote = "dx (with its addend), dweight and dbias in one pass over the rows";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource = "codegen/recipes/NormalizationRecipe.cpp, "
                         "runtime/cuda/kernels/layernorm.cuh";
  let cudaKernel = "vouch::layer_norm_grad_kernel";
  let cudaKernelNote =
      "dx (with its addend, added by __fadd_rn: never contracted into dx's "
      "product), dweight and dbias in one launch, a block per chunk of 32 rows "
      "(not per row): each block writes the dx of its chunks, row by row, "
      "and folds their columns (rows ascending) into its "
      "own partial sums in scratch; the last block to arrive (a fence, then "
      "an integer ticket) adds the blocks' partials in block order 0, 1, ... "
      "and resets the counter: a fixed order for the launch's grid, no float "
      "atomics, bitwise the same on every launch (checked by the kernel lab)";
  // dx's twin: the previous linear's products read it rounded, its bias
  // gradient and the residual's sum the f32.
  let bf16Twin = 0;
}

//===----------------------------------------------------------------------===//
// Batch normalisation: statistics over every axis but the channels (axis 1),
// running statistics kept as the model's state (vouch.state)
//===----------------------------------------------------------------------===//

// torch.nn.functional.batch_norm(x, running_mean, running_var, weight, bias,
// training, momentum, eps), the channel axis 1 of BatchNorm1d / 2d / 3d. Not
// Pure: a training step updates its running statistics in place.
def Vouch_BatchNormOp : Vouch_Op<"batch_norm", [AttrSizedOperandSegments,
    MemoryEffects<[MemRead, MemWrite]>,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "Batch normalisation over every axis but 1, with running statistics";
  let description = [{
    `input` is [N, C, *spatial] (rank ≥ 2); `weight`, `bias` (optional),
    `running_mean` and `running_var` (vouch.state values) are [C]. In a
    training step (a forward that records the tape) each channel c uses its
    batch statistics over the M = N·spatial elements x[:, c, ...]: mean and
    the biased variance var; the results `mean` and `rstd` are mean and
    1 / sqrt(var + eps), and the step updates the state in place:
    running_mean = (1 - momentum)·running_mean + momentum·mean,
    running_var = (1 - momentum)·running_var + momentum·var·M / (M - 1)
    (the unbiased variance, as torch). In any other forward `mean` and
    `rstd` are running_mean and 1 / sqrt(running_var + eps), and the state
    is left as it is. Either way y = (x - mean)·rstd·weight + bias. The
    statistics are computed in double.

    ```mlir
    %y, %mean, %rstd = vouch.batch_norm %x weight %w bias %b running %rm, %rv eps 1.0e-05 momentum 1.0e-01 : (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>)
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input,
                       Optional<Vouch_FloatTensor>:$weight,
                       Optional<Vouch_FloatTensor>:$bias,
                       Vouch_FloatTensor:$running_mean,
                       Vouch_FloatTensor:$running_var, F64Attr:$eps,
                       F64Attr:$momentum);
  let results = (outs Vouch_FloatTensor:$result, Vouch_FloatTensor:$mean,
                      Vouch_FloatTensor:$rstd);
  let assemblyFormat = "$input (`weight` $weight^)? (`bias` $bias^)? `running` "
                       "$running_mean `,` $running_var `eps` $eps `momentum` "
                       "$momentum attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule of the normalised result, for verify() and the
    /// frontend (`weight`, `bias` may be null); the statistics are [C].
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType input, ::mlir::RankedTensorType weight,
        ::mlir::RankedTensorType bias);
  }];

  let family = Vouch_BatchNormalization;
  let formula = "(x - mean) · rstd · weight + bias per channel (axis 1); in "
                "training steps mean and rstd = 1/sqrt(var + eps) of the batch "
                "(var biased) and the running statistics updated in place with "
                "momentum (running_var with the unbiased var), otherwise the "
                "running statistics'";
  let builtin = "batch_norm";
  let builtinParams = "x, weight = none, bias = none, eps = 1e-5, momentum = 0.1";
  let cpuKernel = "vouch::rt::batch_norm<T>";
  let cpuKernelNote = "statistics in double, folded left over (n, spatial) "
                      "ascending per channel: the mean, then the squared "
                      "deviations";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource = "codegen/recipes/BatchNormRecipe.cpp, "
                         "runtime/cuda/kernels/batchnorm.cuh";
  let cudaKernel = "vouch::batch_norm_kernel";
  let cudaKernelNote =
      "the statistics (the mean, then the squared deviations), the "
      "normalisation and, in training steps (the step context's flag), the "
      "running update in one launch; the running statistics written in place "
      "by one thread per channel, after the channel's sums";
}

// Built by batch_norm's VJP only: dx, dweight and dbias in one op (one
// kernel on cuda) from the forward's saved batch statistics. Results: dx,
// then dweight where there is a weight, then dbias where `with_bias` is set.
def Vouch_BatchNormGradOp : Vouch_Op<"batch_norm_grad", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "batch_norm's input, weight and bias gradients (training mode)";
  let description = [{
    With x̂ = (x - mean)·rstd per channel c (mean, rstd the forward's
    batch statistics, [C]) and the sums over the M = N·spatial elements of
    each channel: dx = weight·rstd·(grad - Σ grad / M - x̂·Σ(grad·x̂) / M)
    (weight 1 without one), dweight = Σ grad·x̂, dbias = Σ grad.

    ```mlir
    %dx, %dw, %db = vouch.batch_norm_grad %dy, %x, %mean, %rstd weight %w with_bias : (tensor<4x3x5xf32>, tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>)
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$grad, Vouch_FloatTensor:$input,
                       Vouch_FloatTensor:$mean, Vouch_FloatTensor:$rstd,
                       Optional<Vouch_FloatTensor>:$weight,
                       UnitAttr:$with_bias);
  let results = (outs Vouch_FloatTensor:$dx,
                      Variadic<Vouch_FloatTensor>:$param_grads);
  let assemblyFormat = "$grad `,` $input `,` $mean `,` $rstd (`weight` $weight^)? "
                       "(`with_bias` $with_bias^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let builders = [
    // dx like `input`, dweight and dbias [C].
    OpBuilder<(ins "::mlir::Value":$grad, "::mlir::Value":$input,
                   "::mlir::Value":$mean, "::mlir::Value":$rstd,
                   "::mlir::Value":$weight, "bool":$withBias)>
  ];
  let extraClassDeclaration = [{
    /// dweight (null without a weight) and dbias (null without `with_bias`).
    ::mlir::Value getWeightGrad() {
      return getWeight() ? getParamGrads().front() : ::mlir::Value();
    }
    ::mlir::Value getBiasGrad() {
      return getWithBias() ? getParamGrads().back() : ::mlir::Value();
    }
  }];

  let family = Vouch_BatchNormalization;
  let formula = "dx = weight · rstd · (grad - mean(grad) - x̂ · mean(grad · "
                "x̂)) per channel (axis 1), x̂ = (x - mean) · rstd; dweight = "
                "Σ grad · x̂, dbias = Σ grad over every axis but 1";
  let cpuKernel = "vouch::rt::batch_norm_grad<T>";
  let cpuKernelNote = "dx, dweight and dbias in two passes per channel, the "
                      "sums in double folded left over (n, spatial) ascending";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource = "codegen/recipes/BatchNormRecipe.cpp, "
                         "runtime/cuda/kernels/batchnorm.cuh";
  let cudaKernel = "vouch::batch_norm_grad_kernel";
  let cudaKernelNote = "dx, dweight and dbias in one launch: Σ grad and "
                       "Σ grad·x̂ per channel, then dx";
}

//===----------------------------------------------------------------------===//
// Random ops: counter-based, the same bits on cpu and cuda for one --seed
//===----------------------------------------------------------------------===//
// Each draws from runtime/cuda/kernels/counter_rng.h's generator, keyed by the
// run seed, the op's `ordinal` (its place among the model's random ops in
// program order, set by the frontend; a VJP reuses its forward op's), the
// training step and the element's flat index (docs/language.md, "Random ops").

def Vouch_DropoutOp : Vouch_Op<"dropout", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "Zeroes each element with probability p in training steps";
  let description = [{
    In a training step (a forward that records the tape) element i is zero
    where counter_rng.h's draw for (seed, ordinal, step, i) falls below
    threshold(p), and x · 1/(1 - p) elsewhere; in any other forward the
    result is x. With a fixed step it is a linear map of x; its VJP is the
    same op applied to dy (the same ordinal, so the same mask).

    ```mlir
    %d = vouch.dropout %x p 2.500000e-01 ordinal 0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, F64Attr:$p, I64Attr:$ordinal);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$input `p` $p `ordinal` $ordinal attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;

  let family = Vouch_Index;
  let formula = "x · (u53(seed, ordinal, step, i) < ⌊p·2^53⌋ ? 0 : 1/(1-p)) in "
                "training steps, x otherwise; u53 = mix(mix(mix(seed ^ "
                "mix(ordinal)) + step) + i) >> 11, mix = splitmix64";
  let builtin = "dropout";
  let builtinParams = "x, p";
  let cpuKernel = "vouch::rt::dropout<T>";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource =
      "codegen/recipes/RandomRecipe.cpp, runtime/cuda/kernels/random.cuh";
  let cudaKernel = "vouch::dropout_kernel";
}

def Vouch_RandUniformOp : Vouch_Op<"rand_uniform", [Pure]> {
  let summary = "Uniform numbers on [0, 1), a fresh draw every step";
  let description = [{
    Element i is u53(seed, ordinal, step, i) · 2^-53, computed in double and
    rounded to the run's real type.

    ```mlir
    %u = vouch.rand_uniform ordinal 1 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins I64Attr:$ordinal);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "`ordinal` $ordinal attr-dict `:` type($result)";
  let hasVerifier = 1;

  let family = Vouch_Generator;
  let formula = "u53(seed, ordinal, step, i) · 2^-53 in double; u53 = "
                "mix(mix(mix(seed ^ mix(ordinal)) + step) + i) >> 11, mix = "
                "splitmix64";
  let builtin = "rand_uniform";
  let builtinParams = "shape";
  let cpuKernel = "vouch::rt::rand_uniform<T>";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource =
      "codegen/recipes/RandomRecipe.cpp, runtime/cuda/kernels/random.cuh";
  let cudaKernel = "vouch::rand_uniform_kernel";
}

def Vouch_BernoulliMaskOp : Vouch_Op<"bernoulli_mask", [Pure]> {
  let summary = "1 with probability p, else 0, a fresh draw every step";
  let description = [{
    Element i is 1 where u53(seed, ordinal, step, i) < ⌊p·2^53⌋, else 0.

    ```mlir
    %m = vouch.bernoulli_mask p 5.000000e-01 ordinal 2 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins F64Attr:$p, I64Attr:$ordinal);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "`p` $p `ordinal` $ordinal attr-dict `:` type($result)";
  let hasVerifier = 1;

  let family = Vouch_Generator;
  let formula = "u53(seed, ordinal, step, i) < ⌊p·2^53⌋ ? 1 : 0; u53 = "
                "mix(mix(mix(seed ^ mix(ordinal)) + step) + i) >> 11, mix = "
                "splitmix64";
  let builtin = "bernoulli_mask";
  let builtinParams = "shape, p";
  let cpuKernel = "vouch::rt::bernoulli_mask<T>";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource =
      "codegen/recipes/RandomRecipe.cpp, runtime/cuda/kernels/random.cuh";
  let cudaKernel = "vouch::bernoulli_mask_kernel";
}

def Vouch_CausalMaskOp : Vouch_Op<"causal_mask", [Pure]> {
  let summary = "The causal (lower-triangular) attention mask";
  let description = [{
    Element [i, j] is true where j <= i: query i sees keys 0 to i, as
    `torch.ones(rows, columns, dtype=torch.bool).tril()` (the mask of
    `F.scaled_dot_product_attention(..., is_causal=True)`). An i1 matrix
    for masked_softmax, which broadcasts it over leading batch axes.

    ```mlir
    %m = vouch.causal_mask : tensor<4x4xi1>
    ```
  }];
  let results = (outs Vouch_AnyTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;

  let family = Vouch_Generator;
  let formula = "element [i, j] is true where j <= i";
  let builtin = "causal_mask";
  let builtinParams = "rows, columns";
  let cpuKernel = "vouch::rt::causal_mask<int32_t>";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource =
      "codegen/recipes/MaskRecipe.cpp, runtime/cuda/kernels/mask.cuh";
  let cudaKernel = "vouch::causal_mask_kernel";
  let contraction = "none";  // no arithmetic: comparisons of indices
}

//===----------------------------------------------------------------------===//
// Attention in one kernel: scaled_dot_product_attention's `fused` form
//===----------------------------------------------------------------------===//

// Built by vouch-decompose from scaled_dot_product_attention when the fused
// form is chosen (`--attention fused`, the cuda default): the online softmax
// of FlashAttention, no Tq×Tk matrix in memory. `lse` is each query's
// log-sum-exp of its kept scores (-inf for a query that sees no key), which
// the gradient reads instead of the probabilities.
def Vouch_FlashAttentionOp : Vouch_Op<"flash_attention", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "scaled_dot_product_attention in one kernel, and each query's log-sum-exp";
  let description = [{
    Operands and attributes as `vouch.scaled_dot_product_attention`'s; the
    results are its result [..., Tq, Dv] and `lse` [..., Tq]: the log of
    Σ exp(scale·q_i·k_j) over the keys query i sees, -inf where it sees
    none (its result row is then zeros).

    ```mlir
    %o, %lse = vouch.flash_attention %q, %k, %v causal scale 0.5 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4xf32>)
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$query, Vouch_FloatTensor:$key,
                       Vouch_FloatTensor:$value,
                       Optional<Vouch_AnyTensor>:$mask, UnitAttr:$causal,
                       F64Attr:$scale);
  let results = (outs Vouch_FloatTensor:$result, Vouch_FloatTensor:$lse);
  let assemblyFormat = "$query `,` $key `,` $value (`mask` $mask^)? "
                       "(`causal` $causal^)? `scale` $scale attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The widest head (D and Dv) the fused kernels take.
    static constexpr int64_t kMaxHeadDim = ::vouch::kMaxAttentionHeadDim;
  }];

  let family = Vouch_Attention;
  let formula = "softmax(q·kᵀ·scale) · v per batch entry over the kept keys "
                "(0 for a query that sees none), by the online softmax: keys "
                "in ascending tiles, the running max and sum rescaled; and "
                "lse = max + log Σ exp(s - max)";
  let cpuKernel = "vouch::rt::flash_attention<T>";
  let cpuKernelNote = "the scores of one query at a time, its softmax max-shifted";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource =
      "codegen/recipes/AttentionRecipe.cpp, runtime/cuda/kernels/attention.cuh, "
      "runtime/cuda/kernels/attention64.cuh";
  let cudaKernel = "vouch::attention_forward_kernel (tensor-core products with heads "
                   "of at most 64: vouch::attention64_forward_kernel)";
}

// Built by flash_attention's VJP only: dq, dk and dv from the forward's
// inputs, its result and lse (FlashAttention-2's backward: the probabilities
// recomputed tile by tile from lse, never stored). Its own VJP goes through
// the composed form's ops.
def Vouch_FlashAttentionGradOp : Vouch_Op<"flash_attention_grad", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "flash_attention's gradients with respect to q, k and v";
  let description = [{
    With P the kept probabilities exp(scale·q·kᵀ - lse) (0 where blocked and
    on rows whose lse is -inf) and delta_i = Σ_c grad[i, c]·result[i, c]:
    dv = Pᵀ·grad, dS = P ∘ (grad·vᵀ - delta), dq = scale·dS·k,
    dk = scale·dSᵀ·q.

    ```mlir
    %dq, %dk, %dv = vouch.flash_attention_grad %dy, %q, %k, %v, %o, %lse causal scale 0.5 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>)
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$grad, Vouch_FloatTensor:$query,
                       Vouch_FloatTensor:$key, Vouch_FloatTensor:$value,
                       Vouch_FloatTensor:$result, Vouch_FloatTensor:$lse,
                       Optional<Vouch_AnyTensor>:$mask, UnitAttr:$causal,
                       F64Attr:$scale);
  let results = (outs Vouch_FloatTensor:$dq, Vouch_FloatTensor:$dk,
                      Vouch_FloatTensor:$dv);
  let assemblyFormat = "$grad `,` $query `,` $key `,` $value `,` $result `,` "
                       "$lse (`mask` $mask^)? (`causal` $causal^)? `scale` "
                       "$scale attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;

  let family = Vouch_Attention;
  let formula = "dq = scale·dS·k, dk = scale·dSᵀ·q, dv = Pᵀ·dy with P the "
                "kept probabilities recomputed from lse and dS = P ∘ (dy·vᵀ "
                "- Σ dy∘result), each sum in ascending key (dq) or query "
                "(dk, dv) order";
  let cpuKernel = "vouch::rt::flash_attention_grad<T>";
  let cpuKernelNote = "P recomputed from lse one query at a time";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource =
      "codegen/recipes/AttentionRecipe.cpp, runtime/cuda/kernels/attention.cuh, "
      "runtime/cuda/kernels/attention64.cuh";
  let cudaKernel = "vouch::attention_dkdv_kernel / vouch::attention_dq_kernel "
                   "(tensor-core products with heads of at most 64: "
                   "vouch::attention64_dkdv_kernel / vouch::attention64_dq_kernel)";
}

//===----------------------------------------------------------------------===//
// Attention over heads packed side by side: a fused q/k/v projection's output
//===----------------------------------------------------------------------===//
// qkv is [..., T, 3·H·d]: along its last axis q's H heads of d features, then
// k's, then v's (a self-attention's one q/k/v projection, GPT-2's c_attn). The
// head of query row t is q[..., h, t, c] = qkv[..., t, h·d + c], k's and v's the
// same at offsets H·d and 2·H·d; the result [..., T, H·d] holds head h's output
// row t at [..., t, h·d + c]. These are flash_attention's sums exactly, over
// the heads its composed form would slice, reshape and permute out of qkv
// (and permute back into the result): the kernels read and write the packed
// layout through strides instead, so those copies are never made. Built by
// vouch-fold-qkv-attention only.

// What both qkv ops' cuda kernels read under bf16 products.
defvar kQkvBf16Note =
    "under the profile's bf16 option, with heads of at most 64, qkv is a bf16 "
    "value (vouch.round_bf16's, made once by vouch-round-bf16-operands where "
    "the linear computing qkv leaves it) that attention64.cuh's bf16-input "
    "kernels load as it is, f32 results; the bits of the f32-input kernels, "
    "which round each tile alike (the kernel lab checks them bitwise)";

def Vouch_QkvAttentionOp : Vouch_Op<"qkv_attention", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "flash_attention over heads packed in one [..., T, 3·H·d] tensor";
  let description = [{
    The heads of q, k and v are read out of `qkv` [..., T, 3·H·d] (q's H
    heads of d features, then k's, then v's, along the last axis); the
    result [..., T, H·d] holds each head's output side by side, `lse`
    [..., H, T] each query's log-sum-exp (-inf where it sees no key). The
    optional mask is i1, broadcastable to the scores [..., H, T, T];
    `causal` masks with key j seen by query i where j <= i; not both.
    A bf16 qkv (vouch-round-bf16-operands's, under bf16 products where
    attention64.cuh's kernels take the heads) is read as it is: the results
    are f32.

    ```mlir
    %o, %lse = vouch.qkv_attention %qkv heads 2 causal scale 0.5 : (tensor<2x4x12xf32>) -> (tensor<2x4x4xf32>, tensor<2x2x4xf32>)
    ```
  }];
  let arguments = (ins Vouch_AttentionOperand:$qkv, Optional<Vouch_AnyTensor>:$mask,
                       I64Attr:$heads, UnitAttr:$causal, F64Attr:$scale);
  let results = (outs Vouch_FloatTensor:$result, Vouch_FloatTensor:$lse);
  let assemblyFormat = "$qkv (`mask` $mask^)? `heads` $heads (`causal` $causal^)? "
                       "`scale` $scale attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;

  let family = Vouch_Attention;
  let formula = "flash_attention(q, k, v) of the heads q[..., h, t, c] = "
                "qkv[..., t, h·d + c], k and v at offsets H·d and 2·H·d, its "
                "result row [..., h, t, :] stored at [..., t, h·d : (h+1)·d]";
  let cpuKernel = "vouch::rt::qkv_attention<T>";
  let cpuKernelNote = "copies q, k and v out of qkv head by head and runs "
                      "flash_attention's loops on them";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource =
      "codegen/recipes/AttentionRecipe.cpp, runtime/cuda/kernels/attention.cuh, "
      "runtime/cuda/kernels/attention64.cuh";
  let cudaKernel = "vouch::attention_forward_kernel (tensor-core products with heads "
                   "of at most 64: vouch::attention64_forward_kernel), q, k, v "
                   "and the result read and written through strides";
  let cudaKernelNote = kQkvBf16Note;
  let bf16Operand = 0;
}

// Built by qkv_attention's VJP only: dqkv [..., T, 3·H·d], flash_attention_grad's
// dq, dk and dv of the heads written where the heads were read.
def Vouch_QkvAttentionGradOp : Vouch_Op<"qkv_attention_grad", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>]> {
  let summary = "qkv_attention's gradient with respect to qkv";
  let description = [{
    `grad` and `result` are [..., T, H·d], `lse` [..., H, T]: dqkv holds
    flash_attention_grad's dq, dk and dv of each head where qkv_attention
    read that head's q, k and v (f32 where qkv is bf16).

    ```mlir
    %dqkv = vouch.qkv_attention_grad %dy, %qkv, %o, %lse heads 2 causal scale 0.5 : (tensor<2x4x4xf32>, tensor<2x4x12xf32>, tensor<2x4x4xf32>, tensor<2x2x4xf32>) -> tensor<2x4x12xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$grad, Vouch_AttentionOperand:$qkv,
                       Vouch_FloatTensor:$result, Vouch_FloatTensor:$lse,
                       Optional<Vouch_AnyTensor>:$mask, I64Attr:$heads,
                       UnitAttr:$causal, F64Attr:$scale);
  let results = (outs Vouch_FloatTensor:$dqkv);
  let assemblyFormat = "$grad `,` $qkv `,` $result `,` $lse (`mask` $mask^)? "
                       "`heads` $heads (`causal` $causal^)? `scale` $scale "
                       "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;

  let family = Vouch_Attention;
  let formula = "flash_attention_grad's dq, dk, dv of the heads of qkv, stored "
                "where qkv_attention reads q, k and v";
  let cpuKernel = "vouch::rt::qkv_attention_grad<T>";
  let cpuKernelNote = "copies the heads out of qkv, grad and result, runs "
                      "flash_attention_grad's loops, copies dq, dk, dv in";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource =
      "codegen/recipes/AttentionRecipe.cpp, runtime/cuda/kernels/attention.cuh, "
      "runtime/cuda/kernels/attention64.cuh";
  let cudaKernel = "vouch::attention_dkdv_kernel / vouch::attention_dq_kernel "
                   "(tensor-core products with heads of at most 64: "
                   "vouch::attention64_dkdv_kernel / vouch::attention64_dq_kernel), "
                   "writing dqkv through strides";
  let cudaKernelNote = kQkvBf16Note;
  let bf16Operand = 1;
}

//===----------------------------------------------------------------------===//
// Composite ops: replaced by the ops of their composed form before autodiff
//===----------------------------------------------------------------------===//

// Ops that vouch-decompose replaces by other ops before autodiff (their
// `composed` form): a formula and a builtin, but no kernel, capsule or VJP
// of their own.
class Vouch_CompositeOp<string mnemonic, list<Trait> traits = []>
    : Vouch_Op<mnemonic, !listconcat(traits,
          [DeclareOpInterfaceMethods<Vouch_CompositeOpInterface>])> {
  let family = Vouch_Composite;
  let cudaProviders = "";
  let cudaEvidence = "";
}

// torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask,
// is_causal=..., scale=...) with a boolean mask, but TorchLean's hard-mask
// meaning (masked_softmax's): a query that may see no key gets zeros and
// zero gradient, where torch's math path gives NaN.
def Vouch_ScaledDotProductAttentionOp
    : Vouch_CompositeOp<"scaled_dot_product_attention", [Pure]> {
  let summary = "softmax(q·kᵀ·scale, masked) · v over leading batch axes";
  let description = [{
    q is [..., Tq, D], k [..., Tk, D], v [..., Tk, Dv], with the same leading
    (batch, head) axes; the result is [..., Tq, Dv]. The optional `mask` is
    i1, broadcastable to [..., Tq, Tk] (true: the query sees the key);
    `causal` masks with `causal_mask(Tq, Tk)` instead (key j seen by query i
    where j <= i); not both. Rows that see no key are zeros.

    Composed form (built by vouch-decompose): scale(q) -> matmul(·, k,
    transpose_rhs) -> masked_softmax (softmax when nothing masks) ->
    matmul(·, v), named after this op in their locations.

    ```mlir
    %o = vouch.scaled_dot_product_attention %q, %k, %v causal scale 0.5 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$query, Vouch_FloatTensor:$key,
                       Vouch_FloatTensor:$value,
                       Optional<Vouch_AnyTensor>:$mask, UnitAttr:$causal,
                       F64Attr:$scale);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$query `,` $key `,` $value (`mask` $mask^)? "
                       "(`causal` $causal^)? `scale` $scale attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify() and the frontend; `mask` may be null.
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType query, ::mlir::RankedTensorType key,
        ::mlir::RankedTensorType value, ::mlir::RankedTensorType mask);
  }];

  let formula = "softmax(q·kᵀ·scale) · v per batch entry, the softmax over "
                "the keys the mask (or the causal rule j <= i) keeps; 0 for a "
                "query that sees no key";
  let builtin = "scaled_dot_product_attention";
  let builtinParams = "q, k, v, mask = none, causal = false, scale = none";
}

//===----------------------------------------------------------------------===//
// Pooling: windows over the spatial axes of [N, C, *spatial], and flatten
//===----------------------------------------------------------------------===//
// x is [N, C, *spatial] with 1, 2 or 3 spatial axes; `kernel`, `stride` and
// `padding` have one entry per spatial axis (torch's max_pool{1,2,3}d /
// avg_pool{1,2,3}d without dilation or ceil_mode): window o of spatial axis a
// covers input positions o·stride - padding ... + kernel - 1 of it, of which
// only those in [0, extent) take part (padding is never a value); the result
// has floor((extent + 2·padding - kernel) / stride) + 1 windows there, and
// padding ≤ kernel / 2 (torch's rule) so every window holds an input
// position. Windows are read in row-major order of their positions. The
// gradients are ops of their own whose kernels give each input element one
// thread that gathers, in ascending (row-major) window order, the terms of
// the windows covering it: no atomics, the same bits every run, and the cpu
// kernels fold the same sequence.

class Vouch_PoolOp<string mnemonic, list<Trait> traits = []>
    : Vouch_Op<mnemonic, !listconcat(traits, [Pure,
          DeclareOpInterfaceMethods<Vouch_VJPOpInterface>,
          DeclareOpInterfaceMethods<Vouch_IndexCountsOpInterface>])> {
  let family = Vouch_Pool;
  let hasVerifier = 1;
  let cpuEvidence = "golden-torch-pool";
}

// torch.nn.functional.max_pool{1,2,3}d. The window's value is its first
// maximal element in row-major window order (PyTorch's tie rule: a later
// equal element never replaces it), or its first NaN; the gradient flows to
// that one element. With `values` (built by max_pool_grad's VJP only) the
// result is values' element at that position instead: the adjoint of
// max_pool_grad in its gradient.
def Vouch_MaxPoolOp : Vouch_PoolOp<"max_pool"> {
  let summary = "Maximum over each window of the spatial axes";
  let description = [{
    ```mlir
    %y = vouch.max_pool %x kernel [2, 2] stride [2, 2] padding [0, 0] : (tensor<4x3x8x8xf32>) -> tensor<4x3x4x4xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input,
                       Optional<Vouch_FloatTensor>:$values,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$padding);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$input (`values` $values^)? `kernel` $kernel `stride` "
                       "$stride `padding` $padding attr-dict `:` "
                       "functional-type(operands, results)";

  let formula = "each window's maximum of x over its input positions (padding "
                "never wins); ties and NaN: the first in the window's "
                "row-major order; with `values`, values' element there";
  let builtin = "max_pool";
  let builtinParams = "x, kernel, stride = kernel, padding = 0";
  let cpuKernel = "vouch::rt::max_pool<T>";
  let cudaKernelSource =
      "codegen/recipes/PoolRecipe.cpp, runtime/cuda/kernels/pool.cuh";
  let cudaKernel = "vouch::max_pool_kernel";
}

// max_pool's VJP: each input element gets the gradients of the windows whose
// first maximal element it is.
def Vouch_MaxPoolGradOp : Vouch_PoolOp<"max_pool_grad"> {
  let summary = "max_pool's input gradient, gathered per input element";
  let description = [{
    `grad` is the gradient of max_pool(input) (same attributes); the result
    has input's type: dx[i] is the sum, over the windows w covering i in
    ascending order whose first maximal element is i, of grad[w], from 0.

    ```mlir
    %dx = vouch.max_pool_grad %dy, %x kernel [2] stride [1] padding [1] : (tensor<2x3x6xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$grad, Vouch_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$padding);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $input `kernel` $kernel `stride` $stride "
                       "`padding` $padding attr-dict `:` "
                       "functional-type(operands, results)";

  let formula = "dx[i] = Σ over the windows w covering i, ascending, whose "
                "first maximal element is i, of grad[w], from 0";
  let cpuKernel = "vouch::rt::max_pool_grad<T>";
  let cpuKernelNote = "adds grad[w] into dx at each window's maximal element, "
                      "windows ascending: each dx element folds the gather's "
                      "sequence";
  let cudaKernelSource =
      "codegen/recipes/PoolRecipe.cpp, runtime/cuda/kernels/pool.cuh";
  let cudaKernel = "vouch::max_pool_grad_kernel";
  let cudaKernelNote = "one thread per input element gathers the windows "
                       "covering it in ascending order, finding each one's "
                       "maximal element again as the forward does (no atomics)";
  let sums = 1;
}

// torch.nn.functional.avg_pool{1,2,3}d (ceil_mode false, no divisor_override).
def Vouch_AvgPoolOp : Vouch_PoolOp<"avg_pool"> {
  let summary = "Mean over each window of the spatial axes";
  let description = [{
    Each window's input positions summed in row-major order from 0, then
    divided by the kernel's volume (`count_include_pad`, torch's default:
    padded positions count as zeros) or by the number of input positions in
    the window.

    ```mlir
    %y = vouch.avg_pool %x kernel [3] stride [2] padding [1] count_include_pad : (tensor<2x3x9xf32>) -> tensor<2x3x5xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       UnitAttr:$count_include_pad);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$input `kernel` $kernel `stride` $stride `padding` "
                       "$padding (`count_include_pad` $count_include_pad^)? "
                       "attr-dict `:` functional-type(operands, results)";

  let formula = "Σ x over each window's input positions, ascending from 0, "
                "divided by the kernel's volume (count_include_pad) or by the "
                "positions summed";
  let builtin = "avg_pool";
  let builtinParams =
      "x, kernel, stride = kernel, padding = 0, count_include_pad = true";
  let cpuKernel = "vouch::rt::avg_pool<T>";
  let cudaKernelSource =
      "codegen/recipes/PoolRecipe.cpp, runtime/cuda/kernels/pool.cuh";
  let cudaKernel = "vouch::avg_pool_kernel";
  let cudaKernelNote = "one thread per window folds its positions in "
                       "row-major order, then divides (no atomics)";
  let sums = 1;
}

// avg_pool's VJP (and avg_pool is this op's): linear in grad. The result type
// is the pooled input's, which the verifier pools again to check grad.
def Vouch_AvgPoolGradOp : Vouch_PoolOp<"avg_pool_grad"> {
  let summary = "avg_pool's input gradient, gathered per input element";
  let description = [{
    dx[i] is the sum, over the windows w covering input position i in
    ascending order, of grad[w] / divisor(w), from 0 (the divisor avg_pool
    with the same attributes uses).

    ```mlir
    %dx = vouch.avg_pool_grad %dy kernel [3] stride [2] padding [1] count_include_pad : (tensor<2x3x5xf32>) -> tensor<2x3x9xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$grad, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       UnitAttr:$count_include_pad);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$grad `kernel` $kernel `stride` $stride `padding` "
                       "$padding (`count_include_pad` $count_include_pad^)? "
                       "attr-dict `:` functional-type(operands, results)";

  let formula = "dx[i] = Σ over the windows w covering i, ascending, of "
                "grad[w] / divisor(w), from 0";
  let cpuKernel = "vouch::rt::avg_pool_grad<T>";
  let cpuKernelNote = "adds grad[w] / divisor(w) into each position of window "
                      "w, windows ascending: each dx element folds the "
                      "gather's sequence";
  let cudaKernelSource =
      "codegen/recipes/PoolRecipe.cpp, runtime/cuda/kernels/pool.cuh";
  let cudaKernel = "vouch::avg_pool_grad_kernel";
  let cudaKernelNote = "one thread per input element gathers the windows "
                       "covering it in ascending order (no atomics)";
  let sums = 1;
}

// TorchLean's log-sum-exp surrogate of max pooling: (1/beta)·ln Σ exp(beta·x)
// over each window's input positions (padded positions take no part), with
// the max-shift of torch.logsumexp. beta < 0 gives a smooth minimum.
def Vouch_SmoothMaxPoolOp : Vouch_PoolOp<"smooth_max_pool"> {
  let summary = "(1/beta)·log Σ exp(beta·x) over each window, max-shifted";
  let description = [{
    Per window, m = max beta·x over its input positions (0 where m is
    infinite, as torch.logsumexp), s = Σ exp(beta·x - m) in row-major order
    from 0, and the result (m + ln s) / beta. beta is finite and non-zero.

    ```mlir
    %y = vouch.smooth_max_pool %x kernel [2, 2] stride [2, 2] padding [0, 0] beta 4.0 : (tensor<4x3x8x8xf32>) -> tensor<4x3x4x4xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       F64Attr:$beta);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$input `kernel` $kernel `stride` $stride `padding` "
                       "$padding `beta` $beta attr-dict `:` "
                       "functional-type(operands, results)";

  let formula = "(m + ln Σ exp(beta·x - m)) / beta over each window's input "
                "positions, the sum ascending from 0, m = max beta·x (0 where "
                "infinite)";
  let builtin = "smooth_max_pool";
  let builtinParams = "x, kernel, stride = kernel, padding = 0, beta = 1";
  let cpuKernel = "vouch::rt::smooth_max_pool<T>";
  let cudaKernelSource =
      "codegen/recipes/PoolRecipe.cpp, runtime/cuda/kernels/pool.cuh";
  let cudaKernel = "vouch::smooth_max_pool_kernel";
  let cudaKernelNote = "one thread per window: its maximum, then the sum of "
                       "exponentials in row-major order (no atomics)";
  let sums = 1;
}

// smooth_max_pool's VJP: the gradient distributed over each window in
// proportion to exp(beta·x), the window's softmax weights, from the forward's
// result y: dx[i] = Σ_w grad[w] · exp(beta·(x[i] - y[w])).
def Vouch_SmoothMaxPoolGradOp : Vouch_PoolOp<"smooth_max_pool_grad"> {
  let summary = "smooth_max_pool's input gradient, gathered per input element";
  let description = [{
    `output` is smooth_max_pool(input) with the same attributes, `grad` its
    gradient: dx[i] = Σ over the windows w covering i, ascending, of
    grad[w] · exp(beta·(input[i] - output[w])), from 0.

    ```mlir
    %dx = vouch.smooth_max_pool_grad %dy, %x, %y kernel [2] stride [2] padding [0] beta 1.0 : (tensor<2x3x4xf32>, tensor<2x3x8xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$grad, Vouch_FloatTensor:$input,
                       Vouch_FloatTensor:$output, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       F64Attr:$beta);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $input `,` $output `kernel` $kernel `stride` "
                       "$stride `padding` $padding `beta` $beta attr-dict `:` "
                       "functional-type(operands, results)";

  let formula = "dx[i] = Σ over the windows w covering i, ascending, of "
                "grad[w] · exp(beta·(x[i] - output[w])), from 0";
  let cpuKernel = "vouch::rt::smooth_max_pool_grad<T>";
  let cpuKernelNote = "adds each window's terms into its positions, windows "
                      "ascending: each dx element folds the gather's sequence";
  let cudaKernelSource =
      "codegen/recipes/PoolRecipe.cpp, runtime/cuda/kernels/pool.cuh";
  let cudaKernel = "vouch::smooth_max_pool_grad_kernel";
  let cudaKernelNote = "one thread per input element gathers the windows "
                       "covering it in ascending order (no atomics)";
  let sums = 1;
}

// torch.flatten(x, start_axis): a convenience of the language for a reshape
// (a view: no copy), decomposed before autodiff.
def Vouch_FlattenOp : Vouch_CompositeOp<"flatten", [Pure]> {
  let summary = "Axes from `start_axis` on merged into one (torch.flatten)";
  let description = [{
    The result keeps x's axes before `start_axis` (normalised: 0 ≤ start_axis
    < rank) and merges the others into one of their product. Composed form
    (built by vouch-decompose): one vouch.reshape, a view of x.

    ```mlir
    %f = vouch.flatten %x start_axis 1 : (tensor<4x3x2x2xf32>) -> tensor<4x12xf32>
    ```
  }];
  let arguments = (ins Vouch_AnyTensor:$input, I64Attr:$start_axis);
  let results = (outs Vouch_AnyTensor:$result);
  let assemblyFormat = "$input `start_axis` $start_axis attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify() and the frontend (`startAxis`
    /// normalised).
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType input, int64_t startAxis);
  }];

  let formula = "x's axes from start_axis on merged into one (torch.flatten): "
                "the same elements in row-major order";
  let builtin = "flatten";
  let builtinParams = "x, start_axis = 1";
}

//===----------------------------------------------------------------------===//
// Convolution: im2col, col2im, and the composite conv / conv_transpose
//===----------------------------------------------------------------------===//

// An image is [N, C, *spatial] (1 to 3 spatial axes, channel-first, batch
// first: PyTorch's layout); its windows are those of a convolution with
// `kernel` extents, `stride`, `padding` (zeros, the same on both sides of an
// axis) and `dilation`, one entry per spatial axis, the channels split into
// `groups`. The windows' columns are [G, C/G·K, N, *grid]: row c·K + k of
// group g (k the kernel offset, row-major over the kernel axes) and column
// (n, *o) (o the window, row-major over the grid) hold image element
// [n, g·C/G + c, o·stride − padding + k·dilation] (per axis), 0 where that
// lies in the padding. `grid` (the columns' trailing extents) is the number
// of windows along each axis: at most ⌊(in + 2·padding − dilation·(k − 1) −
// 1) / stride⌋ + 1, every window that fits (a convolution's output extents),
// or fewer (conv_transpose's gradient, whose output_padding may leave room
// for more windows than its input has). ir/ConvGeometry.h derives the
// extents for every stage.

// The windows of an image as columns: what a convolution multiplies by its
// weight (one product with a transpose flag per direction, over every batch
// entry's columns at once).
def Vouch_Im2colOp : Vouch_Op<"im2col", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>,
    DeclareOpInterfaceMethods<Vouch_IndexCountsOpInterface>]> {
  let summary = "The windows of an image as columns [G, C/G·K, N, *grid]";
  let description = [{
    result[g, c·K + k, n, *o] = input[n, g·C/G + c, o·stride − padding +
    k·dilation] per spatial axis, 0 in the padding. Its VJP is col2im.

    ```mlir
    %c = vouch.im2col %x kernel [2, 2] stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 : (tensor<2x1x4x4xf32>) -> tensor<1x4x2x3x3xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$input `kernel` $kernel `stride` $stride `padding` "
                       "$padding `dilation` $dilation `groups` $groups "
                       "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule (every window that fits), for conv's composed form.
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType input, ::llvm::ArrayRef<int64_t> kernel,
        ::llvm::ArrayRef<int64_t> stride, ::llvm::ArrayRef<int64_t> padding,
        ::llvm::ArrayRef<int64_t> dilation, int64_t groups);
  }];

  let family = Vouch_Index;
  let formula = "result[g, c·K + k, n, *o] = input[n, g·C/G + c, o·stride − "
                "padding + k·dilation] per spatial axis (k row-major over the "
                "kernel, o over the grid of windows), 0 in the padding";
  let cpuKernel = "vouch::rt::im2col<T>";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource =
      "codegen/recipes/ConvRecipe.cpp, runtime/cuda/kernels/conv.cuh";
  let cudaKernel = "vouch::im2col_kernel";
  let cudaKernelNote = "one thread per column element, or per four "
                       "consecutive windows stored as one vector where the "
                       "innermost grid axis holds whole quads, grid-stride, "
                       "its flat index split by multiply-high divisions "
                       "(fast_divide.h); the window geometry's products "
                       "(ConvGeometry, conv_geometry.h) checked against the "
                       "UInt32 CUDA ABI by the gate";
}

// im2col's adjoint (its VJP, and conv_transpose's last step): every column
// element added back into the image element it was read from.
def Vouch_Col2imOp : Vouch_Op<"col2im", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>,
    DeclareOpInterfaceMethods<Vouch_IndexCountsOpInterface>]> {
  let summary = "Columns [G, C/G·K, N, *grid] folded back into an image";
  let description = [{
    result[n, g·C/G + c, s] is the sum, over the kernel offsets k in
    ascending (row-major) order whose window o satisfies o·stride −
    padding + k·dilation = s on every spatial axis (o within the grid), of
    input[g, c·K + k, n, *o], from 0: one writer per image element, a fixed
    order, no atomics. The result type gives the image's extents. Its VJP is
    im2col.

    ```mlir
    %x = vouch.col2im %c kernel [2, 2] stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 : (tensor<1x4x2x3x3xf32>) -> tensor<2x1x4x4xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$input `kernel` $kernel `stride` $stride `padding` "
                       "$padding `dilation` $dilation `groups` $groups "
                       "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;

  let family = Vouch_Index;
  let formula = "result[n, g·C/G + c, s] = sum over the kernel offsets k "
                "ascending of input[g, c·K + k, n, *o] where o·stride − "
                "padding + k·dilation = s per spatial axis, from 0";
  let cpuKernel = "vouch::rt::col2im<T>";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource =
      "codegen/recipes/ConvRecipe.cpp, runtime/cuda/kernels/conv.cuh";
  let cudaKernel = "vouch::col2im_kernel";
  let cudaKernelNote = "one thread per image element folds its windows' "
                       "terms in ascending kernel order from 0, as the cpu "
                       "kernel (no atomics: the same bits every run), its "
                       "index split by multiply-high divisions "
                       "(fast_divide.h); the window geometry's products "
                       "checked against the UInt32 CUDA ABI by the gate";
  let sums = 1;
}

// col2im of a product through transpose_lhs, in one op: a convolution's
// input gradient (the weight's rows times the output gradient's) and
// conv_transpose's forward, computed as an implicit GEMM whose columns are
// never in memory (they are 9× the image for a 3×3 kernel). vouch-fold-col2im
// builds it for cuda builds after autodiff from matmul → reshape → col2im,
// where that pays (passes/FoldCol2im.cpp).
def Vouch_Col2imMatmulOp : Vouch_Op<"col2im_matmul", [Pure,
    DeclareOpInterfaceMethods<Vouch_VJPOpInterface>,
    DeclareOpInterfaceMethods<Vouch_IndexCountsOpInterface>]> {
  let summary = "col2im of lhsᵀ·rhs per group, the columns never stored";
  let description = [{
    lhs is [G, R, C/G·K] and rhs [G, R, N·L] (without the leading G when
    groups = 1), L the windows of the grid; the result is the image [N, C,
    *spatial] that col2im makes of the columns lhsᵀ·rhs viewed [G, C/G·K, N,
    *grid]: result[n, g·C/G + c, s] = Σ over the kernel offsets k ascending
    whose window o covers s (o·stride − padding + k·dilation = s per axis, o
    in the grid), Σ over r of lhs[g, r, c·K + k]·rhs[g, r, n·L + o]. Its VJP
    is two products with the result's gradient's columns (im2col).

    ```mlir
    %x = vouch.col2im_matmul %w, %dy kernel [3, 3] stride [1, 1] padding [1, 1] dilation [1, 1] grid [8, 8] groups 1 : (tensor<4x18xf32>, tensor<4x256xf32>) -> tensor<4x2x8x8xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$lhs, Vouch_FloatTensor:$rhs,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$padding, DenseI64ArrayAttr:$dilation,
                       DenseI64ArrayAttr:$grid, I64Attr:$groups);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs `kernel` $kernel `stride` $stride "
                       "`padding` $padding `dilation` $dilation `grid` $grid "
                       "`groups` $groups attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;

  let family = Vouch_Convolution;
  let formula = "result[n, g·C/G + c, s] = sum over the kernel offsets k "
                "ascending whose window o covers s (o·stride − padding + "
                "k·dilation = s per spatial axis, o in the grid) of sum over "
                "r of lhs[g, r, c·K + k]·rhs[g, r, n·L + o]: col2im of the "
                "columns lhsᵀ·rhs";
  let cpuKernel = "vouch::rt::col2im_matmul<T>";
  let cpuKernelNote = "one image element at a time, its terms folded left "
                      "over k ascending, then r ascending, from 0";
  let cpuEvidence = "cpu-kernels";
  let cudaKernelSource =
      "codegen/recipes/ConvRecipe.cpp, runtime/cuda/kernels/col2im_matmul.cuh";
  let cudaKernel = "vouch::col2im_matmul_kernel (f32 under products=tf32 / "
                   "bf16: vouch::col2im_matmul_tf32_kernel, mma.sync on "
                   "tensor cores)";
  let cudaKernelNote = "a block per tile of 64 channels by 128 image "
                       "positions of one group (implicit_tiles.h; positions "
                       "grouped by stride phase where a stride above 1 "
                       "divides its extent, so a tile skips the offsets "
                       "none of them has a window for), each position's "
                       "window found once per kernel offset and the rhs "
                       "rows it selects read into shared memory, never into "
                       "a columns buffer (a position without a window for "
                       "the offset reads 0: lhs·0, +0 for finite lhs); each "
                       "image element written by one thread, its terms "
                       "summed over k ascending, then r ascending (f32 and "
                       "f64: one fma per term, in that order; under "
                       "products=tf32 / bf16: operands rounded to TF32 by "
                       "cvt.rna, 8 r per mma summed in the tensor core's "
                       "order, in f32), no atomics (two runs give the same "
                       "bits); the geometry's products checked against the "
                       "UInt32 CUDA ABI by the gate, stride, padding, "
                       "dilation and grid below 2^32 (else the kernel "
                       "traps)";
  let sums = 1;
}

// torch.nn.functional.conv1d / conv2d / conv3d.
def Vouch_ConvOp : Vouch_CompositeOp<"conv", [Pure]> {
  let summary = "Convolution over 1 to 3 spatial axes (F.conv1d / 2d / 3d)";
  let description = [{
    x is [N, C, *spatial], weight [O, C/groups, *kernel], the optional bias
    [O]; the result is [N, O, *out] with out = ⌊(in + 2·padding −
    dilation·(k − 1) − 1) / stride⌋ + 1 per spatial axis: PyTorch's
    cross-correlation, zero padding, channels split into `groups`.

    Composed form (built by vouch-decompose): im2col of x [G, C/G·K, N,
    *out], the weight viewed [G, O/G, C/G·K] times those columns viewed [G,
    C/G·K, N·L] (one product, batched over the groups), its [O, N, L] result
    permuted to [N, O, L] (no permute when N = 1), the bias broadcast and
    added. Autodiff then gives dW as one product through a transpose flag
    (contracting over every batch entry's columns, no batch reduction), and
    dx as the product through the other flag folded by col2im.

    ```mlir
    %y = vouch.conv %x, %w, %b stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, Vouch_FloatTensor:$weight,
                       Optional<Vouch_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? `stride` $stride "
                       "`padding` $padding `dilation` $dilation `groups` "
                       "$groups attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify() and the frontend (`bias` may be null);
    /// a failure's argument is the builtin's parameter it is about.
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType input, ::mlir::RankedTensorType weight,
        ::mlir::RankedTensorType bias, ::llvm::ArrayRef<int64_t> stride,
        ::llvm::ArrayRef<int64_t> padding, ::llvm::ArrayRef<int64_t> dilation,
        int64_t groups);
    bool hasFusedForm() { return false; }
  }];

  let formula = "result[n, o, *p] = bias[o] + Σ over the group's channels c "
                "and kernel offsets k of weight[o, c, *k]·x[n, g·C/G + c, "
                "p·stride − padding + k·dilation] (0 in the padding), g = "
                "o div (O/G): F.conv1d / conv2d / conv3d";
  let builtin = "conv";
  let builtinParams = "x, weight, bias = none, stride = 1, padding = 0, "
                      "dilation = 1, groups = 1";
}

// torch.nn.functional.conv_transpose1d / 2d / 3d: the gradient of conv with
// respect to its input, as a layer.
def Vouch_ConvTransposeOp : Vouch_CompositeOp<"conv_transpose", [Pure]> {
  let summary = "Transposed convolution over 1 to 3 spatial axes "
                "(F.conv_transpose1d / 2d / 3d)";
  let description = [{
    x is [N, C, *spatial], weight [C, O/groups, *kernel] (torch's layout),
    the optional bias [O]; the result is [N, O, *out] with out = (in − 1)·
    stride − 2·padding + dilation·(k − 1) + output_padding + 1 per spatial
    axis, output_padding < stride or < dilation on each (torch's rule).

    Composed form: x viewed [G, C/G, N·L] (permuted from [N, C, L] first
    unless N = 1), the weight viewed [G, C/G, O/G·K] times it through a
    transpose flag, the columns [G, O/G·K, N, *in] folded by col2im into [N,
    O, *out], the bias broadcast and added.

    ```mlir
    %y = vouch.conv_transpose %x, %w stride [2] padding [1] output_padding [1] dilation [1] groups 1 : (tensor<2x4x5xf32>, tensor<4x3x3xf32>) -> tensor<2x3x10xf32>
    ```
  }];
  let arguments = (ins Vouch_FloatTensor:$input, Vouch_FloatTensor:$weight,
                       Optional<Vouch_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$output_padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups);
  let results = (outs Vouch_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? `stride` $stride "
                       "`padding` $padding `output_padding` $output_padding "
                       "`dilation` $dilation `groups` $groups attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape rule, for verify() and the frontend (`bias` may be null);
    /// a failure's argument is the builtin's parameter it is about.
    static ::vouch::InferredType inferResultType(
        ::mlir::RankedTensorType input, ::mlir::RankedTensorType weight,
        ::mlir::RankedTensorType bias, ::llvm::ArrayRef<int64_t> stride,
        ::llvm::ArrayRef<int64_t> padding,
        ::llvm::ArrayRef<int64_t> outputPadding,
        ::llvm::ArrayRef<int64_t> dilation, int64_t groups);
    bool hasFusedForm() { return false; }
  }];

  let formula = "result[n, o, *q] = bias[o] + Σ over x's positions p, the "
                "group's channels c and kernel offsets k with p·stride − "
                "padding + k·dilation = q of weight[g·C/G + c, o mod (O/G), "
                "*k]·x[n, g·C/G + c, *p], g = o div (O/G): "
                "F.conv_transpose1d / 2d / 3d";
  let builtin = "conv_transpose";
  let builtinParams = "x, weight, bias = none, stride = 1, padding = 0, "
                      "output_padding = 0, dilation = 1, groups = 1";
}

#endif // VOUCH_OPS_TD
