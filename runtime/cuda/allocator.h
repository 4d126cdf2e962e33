// allocator.h: the process-wide device allocator with an exact-size reuse cache.
//
// Released blocks are not returned to the driver at once: each is kept, keyed by its
// exact byte size, together with a CUDA event recorded on the stream it was released
// on. A later allocation of the same size reuses it once the event has completed (it
// queries the events and, if none is done, waits for the oldest), or at once when the
// allocation names the same stream (stream order already protects it).
//
// Cap: TORCHLEAN_CUDA_CACHE_CAP_BYTES, read once at first use: decimal bytes; 0 or
// unset = unbounded; malformed (empty, non-digits, sign, spaces) or overflowing uint64
// -> exactly one warning on stderr ("...; ignored; the cache is unbounded") and
// unbounded. A released block that would push the cached bytes over the cap waits for
// its event (cudaEventSynchronize) and is freed instead. The cap bounds only the cache,
// never live buffers.
//
// All methods are thread-safe (one mutex). Buffers are meant to be allocated before a
// CUDA graph capture, not inside one (cudaMalloc is refused while capturing).
#ifndef VOUCH_RUNTIME_CUDA_ALLOCATOR_H_
#define VOUCH_RUNTIME_CUDA_ALLOCATOR_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/cuda/check.h"

namespace vouch::rt::cuda {

inline constexpr const char kCacheCapEnv[] = "TORCHLEAN_CUDA_CACHE_CAP_BYTES";

struct CacheCapParse {
  uint64_t value = 0;   // 0 = unbounded
  std::string warning;  // empty, or the one line to print on stderr (no newline)
};

// Parses the cap variable's value (nullptr = unset). Only [0-9]+ fitting uint64 is
// accepted; anything else yields value 0 and a warning naming the value.
CacheCapParse parse_cache_cap(const char* text);

// The cap of the process-wide allocator: the environment read once (thread-safe); its
// warning, if any, is printed to stderr exactly once, on that first read.
uint64_t process_cache_cap_bytes();

struct AllocatorStats {
  uint64_t live_bytes = 0;       // bytes of blocks handed out and not yet released
  uint64_t peak_live_bytes = 0;  // maximum of live_bytes so far
  uint64_t cached_bytes = 0;     // released blocks waiting for reuse (not in live_bytes)
  uint64_t cached_blocks = 0;
  uint64_t cap_bytes = 0;        // 0 = unbounded
  uint64_t alloc_count = 0;      // successful cudaMalloc calls
  uint64_t free_count = 0;       // cudaFree calls
  uint64_t cache_hits = 0;       // allocations served from the cache
  uint64_t cap_frees = 0;        // releases freed (not cached) because of the cap
  bool mem_info_ok = false;      // cudaMemGetInfo succeeded
  uint64_t device_free_bytes = 0, device_total_bytes = 0;
  std::string mem_info_error;    // why not, when !mem_info_ok
};

// One line: "cuda allocator: live_bytes=... peak_live_bytes=... cache_bytes=...
// cache_blocks=... cache_cap_bytes=... (unbounded|bounded) cuda_malloc=... cuda_free=...
// cache_hits=... cap_frees=... mem_free_bytes=... mem_total_bytes=..." (or
// "mem_info=unavailable (<error>)").
std::string format(const AllocatorStats& stats);

class CachingAllocator {
 public:
  // cap_bytes 0 = unbounded.
  explicit CachingAllocator(uint64_t cap_bytes);
  // Frees the cached blocks (best effort); live blocks belong to their owners.
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A device block of exactly `bytes` (nullptr for 0 bytes). Reuses a cached block of
  // the same size whose release event has completed, waiting for one if none has.
  Result<void*> allocate(size_t bytes);
  // The same, for use on `stream`: a cached block released on that same stream is
  // reused without waiting (stream order makes it safe).
  Result<void*> allocate(size_t bytes, cudaStream_t stream);
  // Hands the block back after the work queued so far on `stream` (an event is
  // recorded there). nullptr is a no-op. Refused while `stream` is capturing a graph.
  Status release(void* p, cudaStream_t stream);
  // Frees every cached block (waiting for its event first).
  Status trim();
  AllocatorStats stats();
  uint64_t cap_bytes() const { return cap_bytes_; }

 private:
  struct Block {
    void* ptr;
    cudaEvent_t event;
    cudaStream_t stream;
  };
  Result<void*> allocate_impl(size_t bytes, bool stream_known, cudaStream_t stream);
  Result<cudaEvent_t> take_event();
  void recycle_event(cudaEvent_t event);
  Status free_block(void* ptr, size_t bytes);
  Status trim_locked();

  const uint64_t cap_bytes_;
  std::mutex mu_;
  std::unordered_map<void*, size_t> live_;
  std::unordered_map<size_t, std::deque<Block>> cache_;  // oldest first
  std::vector<cudaEvent_t> spare_events_;
  AllocatorStats counters_;  // mem_info fields unused here
};

// The process-wide allocator (cap = process_cache_cap_bytes()); created at first use
// and never destroyed (no cudaFree from static destructors while cudart unloads).
CachingAllocator& process_allocator();

// Shorthands for process_allocator().
Result<void*> allocate(size_t bytes);
Result<void*> allocate(size_t bytes, cudaStream_t stream);
Status release(void* p, cudaStream_t stream);
Status trim();
AllocatorStats stats();

}  // namespace vouch::rt::cuda

#endif  // VOUCH_RUNTIME_CUDA_ALLOCATOR_H_
