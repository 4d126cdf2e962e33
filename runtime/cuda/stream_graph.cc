// stream_graph.cc: streams and captured step graphs (stream_graph.h).
#include "runtime/cuda/stream_graph.h"

#include <cuda.h>

#include <algorithm>
#include <mutex>
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

Status LaunchAudit::begin(cudaStream_t stream) {
  stream_ = stream;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  VOUCH_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  active_ = status == cudaStreamCaptureStatusActive;
  seen_.clear();
  launches_.clear();
  stray_.clear();
  text_.clear();
  unreported_ = mismatched_ = 0;
  return Status::Ok();
}

Result<std::vector<cudaGraphNode_t>> LaunchAudit::new_nodes() {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  VOUCH_CUDA_CHECK(
      cudaStreamGetCaptureInfo(stream_, &status, nullptr, &graph, nullptr, nullptr, nullptr));
  size_t count = 0;
  VOUCH_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> all(count);
  if (count > 0) VOUCH_CUDA_CHECK(cudaGraphGetNodes(graph, all.data(), &count));
  std::vector<cudaGraphNode_t> fresh;
  for (cudaGraphNode_t n : all)
    if (!std::binary_search(seen_.begin(), seen_.end(), n)) fresh.push_back(n);
  seen_.insert(seen_.end(), fresh.begin(), fresh.end());
  std::sort(seen_.begin(), seen_.end());
  return fresh;
}

Status LaunchAudit::before(std::string label, std::string expected_kernel,
                           std::vector<std::string> expected_calls) {
  if (!active_) return Status::Ok();
  Result<std::vector<cudaGraphNode_t>> stray = new_nodes();
  if (!stray.ok()) return stray.status();
  stray_.insert(stray_.end(), stray.value().begin(), stray.value().end());
  launches_.push_back(
      {std::move(label), std::move(expected_kernel), std::move(expected_calls), {}, {}});
  return Status::Ok();
}

Status LaunchAudit::after(std::vector<std::string> calls, std::string fallback,
                          std::vector<std::string> fallback_calls) {
  if (!active_ || launches_.empty()) return Status::Ok();
  Result<std::vector<cudaGraphNode_t>> made = new_nodes();
  if (!made.ok()) return made.status();
  Launch& l = launches_.back();
  l.nodes = made.value();
  l.calls = std::move(calls);
  if (!fallback.empty()) {
    l.label += " — " + fallback;
    l.expected_calls = std::move(fallback_calls);
  }
  return Status::Ok();
}

namespace {
// The name of a kernel node's function. The runtime API cannot name kernels loaded
// from a library (cudaFuncGetName answers for registered entry points only), so the
// driver's cuGraphKernelNodeGetParams / cuFuncGetName / cuKernelGetName are looked up
// through the runtime (cudaGetDriverEntryPointByVersion: no link against libcuda).
// Empty when no way answers.
std::string kernel_node_name(cudaGraphNode_t node) {
  using GetParams = CUresult (*)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS*);
  using FuncName = CUresult (*)(const char**, CUfunction);
  using KernelName = CUresult (*)(const char**, CUkernel);
  static GetParams get_params = nullptr;
  static FuncName func_name = nullptr;
  static KernelName kernel_name = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    auto entry = [](const char* symbol, void** fn) {
      cudaDriverEntryPointQueryResult found{};
      if (cudaGetDriverEntryPointByVersion(symbol, fn, 12030, cudaEnableDefault, &found) !=
              cudaSuccess ||
          found != cudaDriverEntryPointSuccess)
        *fn = nullptr;
      (void)cudaGetLastError();
    };
    entry("cuGraphKernelNodeGetParams", reinterpret_cast<void**>(&get_params));
    entry("cuFuncGetName", reinterpret_cast<void**>(&func_name));
    entry("cuKernelGetName", reinterpret_cast<void**>(&kernel_name));
  });
  const char* name = nullptr;
  CUDA_KERNEL_NODE_PARAMS params{};
  if (get_params != nullptr && get_params(node, &params) == CUDA_SUCCESS) {
    if (params.func != nullptr && func_name != nullptr &&
        func_name(&name, params.func) == CUDA_SUCCESS && name != nullptr)
      return name;
    if (params.kern != nullptr && kernel_name != nullptr &&
        kernel_name(&name, params.kern) == CUDA_SUCCESS && name != nullptr)
      return name;
  }
  cudaKernelNodeParams runtime_params{};
  if (cudaGraphKernelNodeGetParams(node, &runtime_params) == cudaSuccess &&
      cudaFuncGetName(&name, runtime_params.func) == cudaSuccess && name != nullptr)
    return name;
  (void)cudaGetLastError();
  return "";
}

// "kernel NAME" (or "kernel ?" when nothing can name it), "memset", ...
std::string describe_node(cudaGraphNode_t node, std::string* kernel_name) {
  kernel_name->clear();
  cudaGraphNodeType type;
  if (cudaGraphNodeGetType(node, &type) != cudaSuccess) {
    (void)cudaGetLastError();
    return "node of unknown type";
  }
  switch (type) {
    case cudaGraphNodeTypeKernel:
      *kernel_name = kernel_node_name(node);
      return "kernel " + (kernel_name->empty() ? std::string("?") : *kernel_name);
    case cudaGraphNodeTypeMemcpy: return "memcpy";
    case cudaGraphNodeTypeMemset: return "memset";
    case cudaGraphNodeTypeHost: return "host function";
    case cudaGraphNodeTypeEmpty: return "empty (a join)";
    case cudaGraphNodeTypeEventRecord: return "event record";
    case cudaGraphNodeTypeWaitEvent: return "event wait";
    default: return "node of type " + std::to_string(int(type));
  }
}
}  // namespace

Status LaunchAudit::finish() {
  if (!active_) return Status::Ok();
  Result<std::vector<cudaGraphNode_t>> stray = new_nodes();
  if (!stray.ok()) return stray.status();
  stray_.insert(stray_.end(), stray.value().begin(), stray.value().end());
  std::string out;
  int64_t index = 0, named = 0;
  std::string name;
  for (const Launch& l : launches_) {
    int64_t kernels = 0;
    bool vouch_in_library = false, wrong_kernel = false;
    for (cudaGraphNode_t n : l.nodes) {
      std::string what = describe_node(n, &name);
      if (what.rfind("kernel", 0) == 0) kernels++;
      if (!l.expected.empty() && name != l.expected) wrong_kernel = true;
      if (l.expected.empty() && name.rfind("vouch_", 0) == 0) vouch_in_library = true;
      out += "  node " + std::to_string(index++) + " " + what + " <- " + l.label + "\n";
      named++;
    }
    auto joined = [](const std::vector<std::string>& v) {
      std::string s;
      for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
      return s.empty() ? std::string("none") : s;
    };
    std::string problem;
    if (!l.expected.empty() && (l.nodes.size() != 1 || kernels != 1 || wrong_kernel))
      problem = "expected exactly one node running " + l.expected + ", got " +
                std::to_string(l.nodes.size()) + " node(s)";
    else if (!l.expected.empty() && !l.calls.empty())
      problem = "a kernel launch made library calls (" + joined(l.calls) + ")";
    else if (l.expected.empty() && l.calls != l.expected_calls)
      problem = "names " + joined(l.expected_calls) + " but called " + joined(l.calls);
    else if (l.expected.empty() && l.nodes.empty())
      problem = "the library call made no node";
    else if (vouch_in_library)
      problem = "a library call ran a vouch kernel";
    if (!problem.empty()) {
      mismatched_++;
      out += "  MISMATCH " + l.label + ": " + problem + "\n";
    }
  }
  for (cudaGraphNode_t n : stray_) {
    out += "  node " + std::to_string(index++) + " " + describe_node(n, &name) +
           " <- UNREPORTED (made outside every named launch)\n";
    unreported_++;
  }
  out += "launch audit: " + std::to_string(index) + " graph nodes, " + std::to_string(named) +
         " made by named launches, " + std::to_string(unreported_) + " unreported, " +
         std::to_string(mismatched_) + " not the kernel named\n";
  text_ = std::move(out);
  active_ = false;
  return Status::Ok();
}

}  // namespace vouch::rt::cuda
