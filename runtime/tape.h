// tape.h: the record of one forward pass, walked backwards to run the compiled VJPs.
//
// The executors (runtime/executor.h, runtime/cuda/executor.h) record one TapeNode per
// executed forward op, from the Program's node table (the op, the capsule that
// computed it, what ran, the buffers its VJP reads), and backward() calls the VJPs in
// reverse order. The backward rules are vouch's own compiled code; the tape only
// orders them and makes them visible (--show-tape).
#ifndef VOUCH_RUNTIME_TAPE_H_
#define VOUCH_RUNTIME_TAPE_H_

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <span>
#include <utility>
#include <vector>

namespace vouch::rt {

// A compiled VJP: reads saved buffers and upstream gradients from the model state it
// is given (`ctx`, the argument of Tape::backward) and writes the gradients of the
// node's inputs. `node_id` is the recording node's TapeNode::node_id, so one function
// can serve every node of a table-driven model (runtime/executor.h).
using VjpFn = void (*)(void* ctx, int node_id);

// A buffer the node's VJP reads. `shape` ("[8, 2]") and `dtype` ("f32") may be null
// and `bytes` negative where the recorder does not know them (a hand-written model).
struct SavedBuffer {
  const char* name = "";
  const char* shape = nullptr;
  const char* dtype = nullptr;
  int64_t bytes = -1;
};

struct TapeNode {
  const char* op = "";                   // e.g. "matmul"
  const char* capsule = "unassigned";    // the planned capsule it ran under
  int node_id = -1;                      // the node in the compiled graph
  // The buffers the VJP reads: a view, not a copy, of data that outlives the tape
  // (the executor's ProgramTape, a test's static array).
  std::span<const SavedBuffer> saved;
  VjpFn vjp = nullptr;                   // nullptr: nothing to propagate
  const char* kernel = "";               // the kernel (or library call) that ran it
  // What the VJP launches, in order, each with its capsule (null or "" when unknown).
  // The executor's ProgramTape keeps the text and amends it when a VJP step runs other
  // calls than it names (a cuBLASLt fallback, found as the VJP runs): a tape recorded
  // before then prints the amended text too.
  const std::string* vjp_ran = nullptr;
  // The state it reads and, in a training step, updates in place (batch_norm's running
  // statistics), a view as `saved` is; empty for other nodes.
  std::span<const SavedBuffer> state;
};

class Tape {
 public:
  void record(TapeNode node) { nodes_.push_back(std::move(node)); }
  // Calls each node's vjp(ctx, node_id), last recorded first.
  void backward(void* ctx) const;
  void clear() { nodes_.clear(); }
  size_t size() const { return nodes_.size(); }
  const std::vector<TapeNode>& nodes() const { return nodes_; }
  // One line per node: "  #<index> <op> capsule=<capsule> node=<id>", then " ran=<kernel>"
  // when known, " saved=[a f32[8, 2] 64 B, ...]" (name only where the shape is
  // unknown), " state=[...]" (likewise) for a node with state, and " vjp=[...]" when
  // known.
  void print(std::ostream& os) const;

 private:
  std::vector<TapeNode> nodes_;
};

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_TAPE_H_
