// stream_graph.h: the session's stream, and one training step as a CUDA graph.
//
// Shapes are static, so a training step issues the same work every time: StepGraph
// captures the step's callable once (cudaStreamBeginCapture ... cudaStreamEndCapture,
// cudaGraphInstantiate) and replays it with one cudaGraphLaunch per call (the callable
// may enqueue several steps: the executor's unrolled graph). In Disabled
// mode (`--no-cuda-graph`) it simply calls the callable, so results are identical
// either way. The callable must only enqueue work on the stream: buffers are allocated
// before the first run (cudaMalloc is refused during a capture), and host-side reads of
// results happen after the step. Capture uses cudaStreamCaptureModeThreadLocal, so an
// unsafe call from the capturing thread fails the capture instead of corrupting it.
#ifndef VOUCH_RUNTIME_CUDA_STREAM_GRAPH_H_
#define VOUCH_RUNTIME_CUDA_STREAM_GRAPH_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/cuda/check.h"

namespace vouch::rt::cuda {

// An owned non-blocking stream (one per session).
class Stream {
 public:
  Stream() = default;
  static Result<Stream> create();  // cudaStreamCreateWithFlags(cudaStreamNonBlocking)
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  cudaStream_t get() const { return stream_; }
  Status synchronize() const;  // cudaStreamSynchronize
  Status destroy();

 private:
  explicit Stream(cudaStream_t s) : stream_(s) {}
  cudaStream_t stream_ = nullptr;
};

class StepGraph {
 public:
  enum class Mode { Graph, Disabled };
  StepGraph(cudaStream_t stream, Mode mode) : stream_(stream), mode_(mode) {}
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;
  ~StepGraph();  // destroys the instantiated graph

  // Graph mode: the first call captures `step` and instantiates the graph, then every
  // call (the first included) launches it. Disabled: returns step(). A Status error
  // from `step` during capture ends the capture and is returned (with that context).
  Status run(const std::function<Status()>& step);
  // Drops the captured graph; the next run captures again.
  Status reset();

  Mode mode() const { return mode_; }
  bool captured() const { return exec_ != nullptr; }
  int64_t captures() const { return captures_; }
  int64_t launches() const { return launches_; }  // graph launches (Graph mode)

 private:
  Status capture(const std::function<Status()>& step);
  cudaStream_t stream_;
  Mode mode_;
  cudaGraphExec_t exec_ = nullptr;
  int64_t captures_ = 0, launches_ = 0;
};

// The launches of a step as a dependency graph instead of a chain. While a capture is
// active on the stream, each launch is made to depend only on the nodes it must
// follow: the last writers of the buffers it reads (read after write), and the last
// writer and the readers since of the buffers it writes (write after write, write
// after read). Independent launches (a weight gradient and the gradient flowing
// further back) then run side by side when the graph replays. `finish` joins every
// open end, so the step ends when all of its work has. Outside a capture (no CUDA
// graph) it does nothing: the stream runs launches in order, which satisfies every
// dependency. Buffers are identified by storage (the caller resolves views).
class CaptureDependencies {
 public:
  explicit CaptureDependencies(cudaStream_t stream) : stream_(stream) {}
  // Starts a step: forgets the previous one's nodes; active when the stream captures.
  // Several steps may follow each other in one capture: a launch with nothing of its
  // own step to follow follows the previous step's ends.
  Status begin(int32_t num_buffers);
  // Before a launch that reads `reads` and writes `writes`: sets the capture's
  // dependencies to exactly the nodes it must follow.
  Status before(const std::vector<int32_t>& reads, const std::vector<int32_t>& writes);
  // After that launch (one or more nodes: a library call may add several): records
  // the capture's new ends as the last writer / readers of those buffers.
  Status after(const std::vector<int32_t>& reads, const std::vector<int32_t>& writes);
  // Makes the capture end on every node nothing depends on yet.
  Status finish();
  bool active() const { return active_; }

 private:
  cudaStream_t stream_;
  bool active_ = false;
  std::vector<std::vector<cudaGraphNode_t>> writer_, readers_;  // per buffer
  std::vector<cudaGraphNode_t> leaves_, pending_;
  std::vector<cudaGraphNode_t> after_previous_;  // the previous step's ends (same capture)
};

// Which launch made each node of a captured step (an executable's --audit-launches):
// proof that every node of the graph belongs to a launch the schedule names, and that
// a launch of vouch's own kernel made exactly one kernel node running that kernel.
// Used while the stream captures: before(label) and after() bracket each launch; the
// nodes the capture gained in between are that launch's. Nodes gained outside a
// bracket are unreported. A library step (expected kernel "") must make exactly the
// library calls it names (blas.h's BlasCallLog tells which were made), and may make
// any number of nodes, none of them a vouch kernel (a name starting "vouch_").
class LaunchAudit {
 public:
  // Starts an audit when `stream` captures (else does nothing: active() is false).
  Status begin(cudaStream_t stream);
  Status before(std::string label, std::string expected_kernel,
                std::vector<std::string> expected_calls);
  // `calls`: the library calls the launch made. A launch that ran other calls than it
  // names, and says so (`fallback`: what it ran and why), is held to `fallback_calls`.
  Status after(std::vector<std::string> calls = {}, std::string fallback = "",
               std::vector<std::string> fallback_calls = {});
  // Claims what no bracket did, and writes the text.
  Status finish();
  bool active() const { return active_; }
  bool done() const { return !text_.empty(); }
  // One line per node ("  node 3 kernel vouch_small_linear_f32 <- label"), then the
  // summary: "launch audit: N graph nodes, N made by named launches, U unreported,
  // M not the kernel named".
  const std::string& text() const { return text_; }
  int64_t problems() const { return unreported_ + mismatched_; }

 private:
  struct Launch {
    std::string label, expected;
    std::vector<std::string> expected_calls, calls;
    std::vector<cudaGraphNode_t> nodes;
  };
  Result<std::vector<cudaGraphNode_t>> new_nodes();
  cudaStream_t stream_ = nullptr;
  bool active_ = false;
  std::vector<cudaGraphNode_t> seen_;  // sorted
  std::vector<Launch> launches_;
  std::vector<cudaGraphNode_t> stray_;
  std::string text_;
  int64_t unreported_ = 0, mismatched_ = 0;
};

}  // namespace vouch::rt::cuda

#endif  // VOUCH_RUNTIME_CUDA_STREAM_GRAPH_H_
