// stream_graph.cc: streams and captured step graphs (stream_graph.h).
#include "runtime/cuda/stream_graph.h"

#include <algorithm>
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

Status CaptureDependencies::begin(int32_t num_buffers) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  VOUCH_CUDA_CHECK(cudaStreamIsCapturing(stream_, &status));
  active_ = status == cudaStreamCaptureStatusActive;
  // A capture of several steps: this step's first launches follow the previous step's
  // ends (what finish() left as the capture's dependencies; none at a capture's start).
  after_previous_.clear();
  if (active_) {
    const cudaGraphNode_t* ends = nullptr;
    size_t count = 0;
    VOUCH_CUDA_CHECK(
        cudaStreamGetCaptureInfo(stream_, &status, nullptr, nullptr, &ends, nullptr, &count));
    after_previous_.assign(ends, ends + count);
  }
  writer_.assign(size_t(num_buffers), {});
  readers_.assign(size_t(num_buffers), {});
  leaves_.clear();
  pending_.clear();
  return Status::Ok();
}

namespace {
void append_unique(std::vector<cudaGraphNode_t>& to, const std::vector<cudaGraphNode_t>& from) {
  for (cudaGraphNode_t n : from)
    if (std::find(to.begin(), to.end(), n) == to.end()) to.push_back(n);
}
}  // namespace

Status CaptureDependencies::before(const std::vector<int32_t>& reads,
                                   const std::vector<int32_t>& writes) {
  if (!active_) return Status::Ok();
  pending_.clear();
  for (int32_t b : reads) append_unique(pending_, writer_[size_t(b)]);
  for (int32_t b : writes) {
    append_unique(pending_, writer_[size_t(b)]);
    append_unique(pending_, readers_[size_t(b)]);
  }
  // Nothing of this step to follow: follow the previous step (every launch of a step
  // then comes after the previous one's, directly or through its dependencies).
  if (pending_.empty()) pending_ = after_previous_;
  VOUCH_CUDA_CHECK(cudaStreamUpdateCaptureDependencies(stream_, pending_.data(), nullptr,
                                                       pending_.size(),
                                                       cudaStreamSetCaptureDependencies));
  return Status::Ok();
}

Status CaptureDependencies::after(const std::vector<int32_t>& reads,
                                  const std::vector<int32_t>& writes) {
  if (!active_) return Status::Ok();
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaGraphNode_t* ends = nullptr;
  size_t count = 0;
  VOUCH_CUDA_CHECK(
      cudaStreamGetCaptureInfo(stream_, &status, nullptr, nullptr, &ends, nullptr, &count));
  std::vector<cudaGraphNode_t> made(ends, ends + count);
  // The launch's dependencies are no longer open ends; its own nodes are.
  for (cudaGraphNode_t n : pending_)
    leaves_.erase(std::remove(leaves_.begin(), leaves_.end(), n), leaves_.end());
  append_unique(leaves_, made);
  for (int32_t b : reads) append_unique(readers_[size_t(b)], made);
  for (int32_t b : writes) {
    writer_[size_t(b)] = made;
    readers_[size_t(b)].clear();
  }
  return Status::Ok();
}

Status CaptureDependencies::finish() {
  if (!active_) return Status::Ok();  // (the end of a step outside a capture)
  if (leaves_.empty()) leaves_ = after_previous_;  // a step that launched nothing
  VOUCH_CUDA_CHECK(cudaStreamUpdateCaptureDependencies(stream_, leaves_.data(), nullptr,
                                                       leaves_.size(),
                                                       cudaStreamSetCaptureDependencies));
  active_ = false;
  return Status::Ok();
}

}  // namespace vouch::rt::cuda
