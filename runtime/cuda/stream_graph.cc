// stream_graph.cc: streams and captured step graphs (stream_graph.h).
#include "runtime/cuda/stream_graph.h"

#include <utility>

namespace vouch::rt::cuda {

Result<Stream> Stream::create() {
  cudaStream_t s = nullptr;
  VOUCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return Stream(s);
}

Stream::Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    (void)destroy();
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

Stream::~Stream() { (void)destroy(); }

Status Stream::synchronize() const {
  VOUCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return Status::Ok();
}

Status Stream::destroy() {
  if (stream_ == nullptr) return Status::Ok();
  cudaStream_t s = std::exchange(stream_, nullptr);
  VOUCH_CUDA_CHECK(cudaStreamDestroy(s));
  return Status::Ok();
}

StepGraph::~StepGraph() { (void)reset(); }

Status StepGraph::reset() {
  if (exec_ == nullptr) return Status::Ok();
  cudaGraphExec_t e = std::exchange(exec_, nullptr);
  VOUCH_CUDA_CHECK(cudaGraphExecDestroy(e));
  return Status::Ok();
}

Status StepGraph::capture(const std::function<Status()>& step) {
  VOUCH_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  Status body = step();
  cudaGraph_t graph = nullptr;
  cudaError_t end = cudaStreamEndCapture(stream_, &graph);
  if (!body.ok()) {
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    return Status::Error("while capturing the step into a CUDA graph: " + body.message());
  }
  if (end != cudaSuccess) {
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    return cuda_failure("cudaStreamEndCapture (capturing the step into a CUDA graph)", end);
  }
  cudaGraphExec_t exec = nullptr;
  cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
  (void)cudaGraphDestroy(graph);
  if (inst != cudaSuccess) return cuda_failure("cudaGraphInstantiate(step graph)", inst);
  exec_ = exec;
  captures_++;
  return Status::Ok();
}

Status StepGraph::run(const std::function<Status()>& step) {
  if (mode_ == Mode::Disabled) return step();
  if (exec_ == nullptr) VOUCH_RETURN_IF_ERROR(capture(step));
  VOUCH_CUDA_CHECK(cudaGraphLaunch(exec_, stream_));
  launches_++;
  return Status::Ok();
}

}  // namespace vouch::rt::cuda
