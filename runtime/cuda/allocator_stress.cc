// allocator_stress.cc: exercises the process-wide allocator under the cap the
// environment sets (TORCHLEAN_CUDA_CACHE_CAP_BYTES), for the GPU suite, which runs it
// in fresh subprocesses: a finite cap, unbounded, a malformed value, an overflowing one.
//
// Two rounds allocate and release the same sizes (1..8 MiB and four more 1 MiB blocks,
// 40 MiB in all) on one stream; then the stats are printed and checked:
//   bounded:   cache_bytes <= cap after every release;
//   unbounded: everything released is cached, and round 2 is served from the cache.
// Output: `cap_bytes=N (bounded|unbounded)`, the stats after each round and after
// trim(), then `allocator_stress: ok` (exit 0) or `allocator_stress: FAIL: <why>`
// (exit 1). With no usable device: the cap line, then `SKIPPED (no CUDA device):
// allocator stress` and exit 0, or exit 3 with --require-device.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/cuda/allocator.h"
#include "runtime/cuda/status.h"
#include "runtime/cuda/stream_graph.h"

namespace {

using namespace vouch::rt::cuda;

int fail(const std::string& why) {
  std::printf("allocator_stress: FAIL: %s\n", why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  bool require_device = false;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "--require-device") == 0) {
      require_device = true;
    } else {
      std::fprintf(stderr, "usage: allocator_stress [--require-device]\n");
      return 2;
    }
  }
  const uint64_t cap = process_cache_cap_bytes();
  std::printf("cap_bytes=%llu (%s)\n", static_cast<unsigned long long>(cap),
              cap == 0 ? "unbounded" : "bounded");
  std::fflush(stdout);
  vouch::rt::Status device = require_native_cuda();
  if (!device.ok()) {
    std::printf("SKIPPED (no CUDA device): allocator stress\n");
    std::fprintf(stderr, "%s\n", device.message().c_str());
    return require_device ? 3 : 0;
  }

  std::vector<size_t> sizes;
  for (size_t mib = 1; mib <= 8; mib++) sizes.push_back(mib << 20);
  for (int i = 0; i < 4; i++) sizes.push_back(size_t(1) << 20);
  uint64_t total = 0;
  for (size_t s : sizes) total += s;

  vouch::rt::Result<Stream> stream = Stream::create();
  if (!stream.ok()) return fail(stream.status().message());
  cudaStream_t st = stream.value().get();

  for (int round = 1; round <= 2; round++) {
    std::vector<void*> blocks;
    for (size_t s : sizes) {
      vouch::rt::Result<void*> p = allocate(s, st);
      if (!p.ok()) return fail(p.status().message());
      if (cudaMemsetAsync(p.value(), round, s, st) != cudaSuccess)
        return fail("cudaMemsetAsync failed");
      blocks.push_back(p.value());
    }
    for (void* p : blocks) {
      vouch::rt::Status r = release(p, st);
      if (!r.ok()) return fail(r.message());
      AllocatorStats now = stats();
      if (cap != 0 && now.cached_bytes > cap)
        return fail("cache_bytes=" + std::to_string(now.cached_bytes) + " exceeds cap_bytes=" +
                    std::to_string(cap));
    }
    AllocatorStats s = stats();
    std::printf("round %d: %s\n", round, format(s).c_str());
    if (s.live_bytes != 0) return fail("live_bytes is not 0 after releasing everything");
    if (s.cap_bytes != cap) return fail("stats report a different cap");
    if (cap == 0) {
      if (s.cached_bytes != total) return fail("unbounded: not every released block was cached");
      if (round == 2 && s.cache_hits != sizes.size())
        return fail("unbounded: round 2 was not served from the cache (cache_hits=" +
                    std::to_string(s.cache_hits) + ")");
    }
  }
  vouch::rt::Status t = trim();
  if (!t.ok()) return fail(t.message());
  AllocatorStats after = stats();
  std::printf("after trim: %s\n", format(after).c_str());
  if (after.cached_bytes != 0) return fail("trim left cached bytes");
  if (after.alloc_count != after.free_count)
    return fail("cudaMalloc and cudaFree counts differ after trim");
  std::printf("allocator_stress: ok\n");
  return 0;
}
