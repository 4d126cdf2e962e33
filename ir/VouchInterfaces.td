//===- VouchInterfaces.td - how passes talk to ops ----------*- tablegen -*-===//
//
// Passes ask ops through these interfaces and never switch on op names: the
// autodiff pass asks for a VJP, the fusion pass and the kernel emitters ask a
// pointwise op for its scalar formula, the reference interpreter asks it for
// its value.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_INTERFACES_TD
#define VOUCH_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Vouch_VJPOpInterface : OpInterface<"VJPOpInterface"> {
  let cppNamespace = "::vouch";
  let description = [{
    An op with a vector-Jacobian product rule. Given the gradient of the
    loss with respect to each result, the rule builds (with vouch ops, at the
    builder's insertion point) the gradient with respect to each operand.
    Matrix products use transpose attributes, never an explicit transpose.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/[{Appends one gradient per operand to `operandGrads`; a null
                 Value means no gradient flows to that operand (it is not
                 differentiable, e.g. a target).}],
      /*retTy=*/"::mlir::LogicalResult",
      /*methodName=*/"buildVJP",
      /*args=*/(ins "::mlir::OpBuilder &":$builder,
                    "::mlir::ValueRange":$resultGrads,
                    "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>
  ];
}

def Vouch_PointwiseOpInterface : OpInterface<"PointwiseOpInterface"> {
  let cppNamespace = "::vouch";
  let description = [{
    An elementwise op on operands of one shape. It states its scalar formula
    twice, on purpose: as a C/CUDA expression (what codegen emits into fused
    kernels) and as a float64 evaluation (what the reference interpreter
    computes). Tests compare the two.
  }];
  let methods = [
    InterfaceMethod<
      "C++/CUDA expression of the result over scalar operand expressions of "
      "type `T` (a template parameter of the emitted code).",
      "std::string", "emitScalarExpr",
      (ins "::llvm::ArrayRef<std::string>":$operands)>,
    InterfaceMethod<
      "Reference value in float64.",
      "double", "evaluateScalar",
      (ins "::llvm::ArrayRef<double>":$operands)>
  ];
}

def Vouch_CompositeOpInterface : OpInterface<"CompositeOpInterface"> {
  let cppNamespace = "::vouch";
  let description = [{
    An op whose meaning is a composition of other vouch ops (its `composed`
    form), and which may also have a `fused` form. vouch-decompose asks it to
    build one of them, at the builder's insertion point, and replaces its
    results by theirs; autodiff then differentiates the ops it became.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/[{Builds the ops the op stands for and appends the values that
                 replace its results, one per result.}],
      /*retTy=*/"::mlir::LogicalResult",
      /*methodName=*/"decompose",
      /*args=*/(ins "::mlir::OpBuilder &":$builder,
                    "::llvm::SmallVectorImpl<::mlir::Value> &":$results)>,
    InterfaceMethod<
      /*desc=*/[{Builds the op's fused form (fewer ops with kernels of their
                 own) and appends the values that replace its results; fails,
                 building nothing, where the op has no fused form for these
                 operands (its composed form is then the only one).}],
      /*retTy=*/"::mlir::LogicalResult",
      /*methodName=*/"fuse",
      /*args=*/(ins "::mlir::OpBuilder &":$builder,
                    "::llvm::SmallVectorImpl<::mlir::Value> &":$results)>,
    InterfaceMethod<
      /*desc=*/[{Whether the op has a fused form at all (attention does; a
                 convolution's only form is its composed one): vouch-decompose
                 asks for a fused form, and insists on one under
                 attention=fused, only where it has.}],
      /*retTy=*/"bool",
      /*methodName=*/"hasFusedForm",
      /*args=*/(ins), /*methodBody=*/"", /*defaultImplementation=*/"return true;">
  ];
}

def Vouch_IndexCountsOpInterface : OpInterface<"IndexCountsOpInterface"> {
  let cppNamespace = "::vouch";
  let description = [{
    An op whose kernels index with counts of their own beyond its operands'
    and results' element counts and extents (pooling: a plane's spatial
    product, a window's volume, a padded extent; a convolution's im2col /
    col2im: the windows per image, the kernel's offsets, the columns' rows
    and columns). The assurance gate checks each count against the UInt32
    CUDA ABI on its own, so no product of other extents (a channel count,
    the batch, an empty axis) can hide one that overflows.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/[{Appends each count the op's kernels compute with, named as
                 the gate's message says it ("the input's spatial product"),
                 saturated at UINT64_MAX.}],
      /*retTy=*/"void",
      /*methodName=*/"getIndexCounts",
      /*args=*/(ins "::llvm::SmallVectorImpl<std::pair<std::string, uint64_t>> &":$counts)>
  ];
}

#endif // VOUCH_INTERFACES_TD
