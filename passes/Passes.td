//===- Passes.td - every vouch pass -------------------------*- tablegen -*-===//
#ifndef VOUCH_PASSES_TD
#define VOUCH_PASSES_TD

include "mlir/Pass/PassBase.td"

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
    without a VJP rule is an error naming the op.
  }];
}

#endif // VOUCH_PASSES_TD
