//===- TapeLayout.cpp - which op runs where on the tape ---------*- C++ -*-===//
#include "passes/TapeLayout.h"

#include <map>

#include "passes/Attributes.h"

using namespace mlir;

namespace vouch {

SmallVector<Operation *> TapeLayout::forwardOps() const {
  SmallVector<Operation *> ops;
  for (const Node &node : nodes)
    ops.push_back(node.op);
  return ops;
}

TapeLayout computeTapeLayout(ModelOp model) {
  std::map<int64_t, Operation *> forward;
  std::map<int64_t, SmallVector<Operation *>> backward;
  TapeLayout layout;
  for (Operation &op : model.getBlock()) {
    if (isStructuralOp(&op))
      continue;
    if (auto node = op.getAttrOfType<IntegerAttr>(kNodeAttr))
      forward[node.getInt()] = &op;
    else if (auto of = op.getAttrOfType<IntegerAttr>(kVjpOfAttr))
      backward[of.getInt()].push_back(&op);
    else
      layout.prologue.push_back(&op);
  }
  for (auto &[id, op] : forward)
    layout.nodes.push_back({id, op, backward[id]});
  return layout;
}

} // namespace vouch
