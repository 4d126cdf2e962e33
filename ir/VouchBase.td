//===- VouchBase.td - the vouch dialect and its type constraints -*- tablegen -*-===//
//
// The vouch dialect describes a model: its inputs, targets and trainable
// parameters, the computation from them to a scalar loss, and (after the
// autodiff pass) the gradient of that loss with respect to every parameter.
// All tensors are ranked with static shapes: codegen bakes every extent into
// the emitted kernels, and the assurance gate checks every one against the
// UInt32 CUDA ABI.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_BASE_TD
#define VOUCH_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Vouch_Dialect : Dialect {
  let name = "vouch";
  let cppNamespace = "::vouch";
  let summary = "Models, their loss and their gradients, with static shapes";
  let description = [{
    Values are builtin ranked tensors with static shapes and element types
    f32, f64 (data), i32 (indices) or i1 (masks). Parameters, inputs and
    targets are ops of their own (`vouch.param`, `vouch.input`,
    `vouch.target`) so every pass knows which values are trainable.
  }];
}

// Every value the dialect computes with is a static-shape tensor.
def Vouch_AnyTensor : StaticShapeTensorOf<[F32, F64, I32, I1]>;
def Vouch_FloatTensor : StaticShapeTensorOf<[F32, F64]>;

class Vouch_Op<string mnemonic, list<Trait> traits = []>
    : Op<Vouch_Dialect, mnemonic, traits>;

#endif // VOUCH_BASE_TD
