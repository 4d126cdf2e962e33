// allocator.cc: the exact-size, event-guarded device reuse cache (allocator.h).
#include "runtime/cuda/allocator.h"

#include <cstdio>
#include <cstdlib>
#include <limits>

namespace vouch::rt::cuda {

namespace {

// The value as it will appear in a one-line warning: control characters escaped.
std::string quoted(const char* text) {
  std::string out = "\"";
  for (const char* c = text; *c != '\0'; c++) {
    unsigned char u = static_cast<unsigned char>(*c);
    if (u < 0x20 || u == 0x7f || u == '"' || u == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += *c;
    }
  }
  return out + "\"";
}

std::string bytes_text(size_t bytes) { return std::to_string(bytes) + " bytes"; }

std::string ptr_text(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

}  // namespace

CacheCapParse parse_cache_cap(const char* text) {
  CacheCapParse out;
  if (text == nullptr) return out;  // unset: unbounded, silently
  const std::string prefix = std::string("warning: ") + kCacheCapEnv + "=" + quoted(text);
  const std::string suffix = "; ignored; the cache is unbounded";
  if (*text == '\0') {
    out.warning = prefix + " is empty, not a decimal byte count" + suffix;
    return out;
  }
  uint64_t value = 0;
  bool overflow = false;
  for (const char* c = text; *c != '\0'; c++) {
    if (*c < '0' || *c > '9') {
      out.warning = prefix + " is not a decimal byte count (only digits 0-9 are allowed)" +
                    suffix;
      return out;
    }
    uint64_t digit = uint64_t(*c - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) overflow = true;
    if (!overflow) value = value * 10 + digit;
  }
  if (overflow) {
    out.warning = prefix + " overflows uint64 (max " +
                  std::to_string(std::numeric_limits<uint64_t>::max()) + ")" + suffix;
    return out;
  }
  out.value = value;
  return out;
}

uint64_t process_cache_cap_bytes() {
  static const uint64_t cap = [] {
    CacheCapParse parsed = parse_cache_cap(std::getenv(kCacheCapEnv));
    if (!parsed.warning.empty()) {
      std::fprintf(stderr, "%s\n", parsed.warning.c_str());
      std::fflush(stderr);
    }
    return parsed.value;
  }();
  return cap;
}

std::string format(const AllocatorStats& s) {
  std::string out = "cuda allocator: live_bytes=" + std::to_string(s.live_bytes) +
                    " peak_live_bytes=" + std::to_string(s.peak_live_bytes) +
                    " cache_bytes=" + std::to_string(s.cached_bytes) +
                    " cache_blocks=" + std::to_string(s.cached_blocks) +
                    " cache_cap_bytes=" + std::to_string(s.cap_bytes) +
                    (s.cap_bytes == 0 ? " (unbounded)" : " (bounded)") +
                    " cuda_malloc=" + std::to_string(s.alloc_count) +
                    " cuda_free=" + std::to_string(s.free_count) +
                    " cache_hits=" + std::to_string(s.cache_hits) +
                    " cap_frees=" + std::to_string(s.cap_frees);
  if (s.mem_info_ok) {
    out += " mem_free_bytes=" + std::to_string(s.device_free_bytes) +
           " mem_total_bytes=" + std::to_string(s.device_total_bytes);
  } else {
    out += " mem_info=unavailable (" + s.mem_info_error + ")";
  }
  return out;
}

CachingAllocator::CachingAllocator(uint64_t cap_bytes) : cap_bytes_(cap_bytes) {
  counters_.cap_bytes = cap_bytes;
}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(mu_);
  (void)trim_locked();
}

Result<void*> CachingAllocator::allocate(size_t bytes) {
  return allocate_impl(bytes, /*stream_known=*/false, nullptr);
}

Result<void*> CachingAllocator::allocate(size_t bytes, cudaStream_t stream) {
  return allocate_impl(bytes, /*stream_known=*/true, stream);
}

Result<void*> CachingAllocator::allocate_impl(size_t bytes, bool stream_known,
                                              cudaStream_t stream) {
  if (bytes == 0) return static_cast<void*>(nullptr);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cache_.find(bytes);
  if (it != cache_.end() && !it->second.empty()) {
    std::deque<Block>& q = it->second;
    size_t pick = q.size();
    if (stream_known) {
      for (size_t i = 0; i < q.size() && pick == q.size(); i++)
        if (q[i].stream == stream) pick = i;
    }
    for (size_t i = 0; i < q.size() && pick == q.size(); i++) {
      cudaError_t e = cudaEventQuery(q[i].event);
      if (e == cudaSuccess) {
        pick = i;
      } else if (e == cudaErrorNotReady) {
        (void)cudaGetLastError();  // "not ready" is an answer, not an error
      } else {
        return cuda_failure("cudaEventQuery(release event of a cached " + bytes_text(bytes) +
                                " block)", e);
      }
    }
    if (pick == q.size()) {  // none done yet: wait for the oldest
      pick = 0;
      VOUCH_CUDA_CHECK_WHAT(cudaEventSynchronize(q[0].event),
                            "cudaEventSynchronize(release event of a cached " +
                                bytes_text(bytes) + " block)");
    }
    Block b = q[pick];
    q.erase(q.begin() + static_cast<std::ptrdiff_t>(pick));
    if (q.empty()) cache_.erase(it);
    recycle_event(b.event);
    counters_.cached_bytes -= bytes;
    counters_.cached_blocks--;
    counters_.cache_hits++;
    live_[b.ptr] = bytes;
    counters_.live_bytes += bytes;
    if (counters_.live_bytes > counters_.peak_live_bytes)
      counters_.peak_live_bytes = counters_.live_bytes;
    return b.ptr;
  }

  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaErrorMemoryAllocation && !cache_.empty()) {
    // Out of memory with blocks cached: give them back and try once more.
    (void)cudaGetLastError();
    VOUCH_RETURN_IF_ERROR(trim_locked());
    e = cudaMalloc(&p, bytes);
  }
  if (e != cudaSuccess) return cuda_failure("cudaMalloc(" + bytes_text(bytes) + ")", e);
  counters_.alloc_count++;
  live_[p] = bytes;
  counters_.live_bytes += bytes;
  if (counters_.live_bytes > counters_.peak_live_bytes)
    counters_.peak_live_bytes = counters_.live_bytes;
  return p;
}

Result<cudaEvent_t> CachingAllocator::take_event() {
  if (!spare_events_.empty()) {
    cudaEvent_t ev = spare_events_.back();
    spare_events_.pop_back();
    return ev;
  }
  cudaEvent_t ev = nullptr;
  VOUCH_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  return ev;
}

void CachingAllocator::recycle_event(cudaEvent_t event) { spare_events_.push_back(event); }

Status CachingAllocator::free_block(void* ptr, size_t bytes) {
  VOUCH_CUDA_CHECK_WHAT(cudaFree(ptr), "cudaFree(" + bytes_text(bytes) + " at " +
                                           ptr_text(ptr) + ")");
  counters_.free_count++;
  return Status::Ok();
}

Status CachingAllocator::release(void* p, cudaStream_t stream) {
  if (p == nullptr) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(p);
  if (it == live_.end())
    return Status::Error("release(" + ptr_text(p) +
                         "): not a live block of this allocator (released twice, or "
                         "not allocated here)");
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  VOUCH_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  if (capture != cudaStreamCaptureStatusNone)
    return Status::Error("release(" + ptr_text(p) +
                         ") while its stream is capturing a CUDA graph: release device "
                         "blocks outside the capture");
  const size_t bytes = it->second;
  live_.erase(it);
  counters_.live_bytes -= bytes;

  Result<cudaEvent_t> ev = take_event();
  cudaError_t rec = ev.ok() ? cudaEventRecord(ev.value(), stream) : cudaSuccess;
  if (!ev.ok() || rec != cudaSuccess) {
    // Without an event the block cannot be cached safely: wait for the stream, free
    // it, and report what failed.
    Status why = ev.ok() ? cuda_failure("cudaEventRecord(release of a " + bytes_text(bytes) +
                                            " block)", rec)
                         : ev.status();
    if (ev.ok()) recycle_event(ev.value());
    (void)cudaStreamSynchronize(stream);
    (void)free_block(p, bytes);
    return why;
  }
  if (cap_bytes_ != 0 && counters_.cached_bytes + bytes > cap_bytes_) {
    cudaError_t e = cudaEventSynchronize(ev.value());
    recycle_event(ev.value());
    if (e != cudaSuccess)
      return cuda_failure("cudaEventSynchronize(release of a " + bytes_text(bytes) +
                              " block over the cache cap)", e);
    VOUCH_RETURN_IF_ERROR(free_block(p, bytes));
    counters_.cap_frees++;
    return Status::Ok();
  }
  cache_[bytes].push_back(Block{p, ev.value(), stream});
  counters_.cached_bytes += bytes;
  counters_.cached_blocks++;
  return Status::Ok();
}

Status CachingAllocator::trim_locked() {
  Status first = Status::Ok();
  for (auto& [bytes, q] : cache_) {
    for (Block& b : q) {
      cudaError_t e = cudaEventSynchronize(b.event);
      if (e != cudaSuccess && first.ok())
        first = cuda_failure("cudaEventSynchronize(release event of a cached " +
                                 bytes_text(bytes) + " block)", e);
      recycle_event(b.event);
      Status s = free_block(b.ptr, bytes);
      if (!s.ok() && first.ok()) first = s;
      counters_.cached_bytes -= bytes;
      counters_.cached_blocks--;
    }
  }
  cache_.clear();
  for (cudaEvent_t ev : spare_events_) (void)cudaEventDestroy(ev);
  spare_events_.clear();
  (void)cudaGetLastError();
  return first;
}

Status CachingAllocator::trim() {
  std::lock_guard<std::mutex> lock(mu_);
  return trim_locked();
}

AllocatorStats CachingAllocator::stats() {
  AllocatorStats s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    s = counters_;
  }
  s.cap_bytes = cap_bytes_;
  size_t free_b = 0, total_b = 0;
  cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
  if (e == cudaSuccess) {
    s.mem_info_ok = true;
    s.device_free_bytes = free_b;
    s.device_total_bytes = total_b;
  } else {
    (void)cudaGetLastError();
    const char* name = cudaGetErrorName(e);
    s.mem_info_error = std::string("cudaMemGetInfo: ") + (name != nullptr ? name : "?");
  }
  return s;
}

CachingAllocator& process_allocator() {
  static CachingAllocator* const allocator = new CachingAllocator(process_cache_cap_bytes());
  return *allocator;
}

Result<void*> allocate(size_t bytes) { return process_allocator().allocate(bytes); }
Result<void*> allocate(size_t bytes, cudaStream_t stream) {
  return process_allocator().allocate(bytes, stream);
}
Status release(void* p, cudaStream_t stream) { return process_allocator().release(p, stream); }
Status trim() { return process_allocator().trim(); }
AllocatorStats stats() { return process_allocator().stats(); }

}  // namespace vouch::rt::cuda
