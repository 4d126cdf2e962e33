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
       << " capsule=" << (n.capsule ? n.capsule : "unassigned") << " node=" << n.node_id;
    if (n.kernel && *n.kernel) os << " ran=" << n.kernel;
    auto buffers = [&](const char* label, std::span<const SavedBuffer> list) {
      os << label << "=[";
      for (size_t j = 0; j < list.size(); j++) {
        const SavedBuffer& b = list[j];
        os << (j ? ", " : "") << b.name;
        if (b.shape) os << " " << (b.dtype ? b.dtype : "") << b.shape;
        if (b.bytes >= 0) os << " " << b.bytes << " B";
      }
      os << "]";
    };
    buffers(" saved", n.saved);
    if (!n.state.empty()) buffers(" state", n.state);
    if (n.vjp_ran && !n.vjp_ran->empty()) os << " vjp=[" << *n.vjp_ran << "]";
    os << "\n";
  }
}

}  // namespace vouch::rt
