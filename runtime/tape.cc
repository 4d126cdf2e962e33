// tape.cc: reverse walk and printing of the tape (tape.h).
#include "runtime/tape.h"

namespace vouch::rt {

void Tape::backward(void* ctx) const {
  for (size_t i = nodes_.size(); i-- > 0;)
    if (nodes_[i].vjp != nullptr) nodes_[i].vjp(ctx, nodes_[i].node_id);
}

void Tape::print(std::ostream& os) const {
  for (size_t i = 0; i < nodes_.size(); i++) {
    const TapeNode& n = nodes_[i];
    os << "  #" << i << " " << (n.op ? n.op : "?")
       << " capsule=" << (n.capsule ? n.capsule : "unassigned") << " node=" << n.node_id
       << " saved=[";
    for (size_t j = 0; j < n.saved.size(); j++) os << (j ? ", " : "") << n.saved[j];
    os << "]\n";
  }
}

}  // namespace vouch::rt
