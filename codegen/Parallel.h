//===- Parallel.h - run independent build jobs on every core ----*- C++ -*-===//
//
// The build's independent jobs (NVRTC programs, the host compiler's parts)
// run side by side: each job writes only its own slot of the caller's
// results, so the results do not depend on the order the jobs finish in.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CODEGEN_PARALLEL_H
#define VOUCH_CODEGEN_PARALLEL_H

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace vouch::codegen {

/// The threads a build uses for `jobs` jobs: `limit` (0: one per hardware
/// thread), at most one per job, at least one.
inline unsigned buildThreads(size_t jobs, unsigned limit = 0) {
  size_t threads = limit ? limit : std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::max<size_t>(1, std::min(threads, jobs)));
}

/// Calls job(i) for every i in [0, count) on buildThreads(count, limit)
/// threads, each taking the next i when it is done with one.
template <class Job>
void parallelFor(size_t count, unsigned limit, Job job) {
  std::atomic<size_t> next = 0;
  auto work = [&] {
    for (size_t i; (i = next++) < count;)
      job(i);
  };
  unsigned n = buildThreads(count, limit);
  if (n == 1) {
    work();
    return;
  }
  std::vector<std::thread> threads(n);
  for (std::thread &t : threads)
    t = std::thread(work);
  for (std::thread &t : threads)
    t.join();
}

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_PARALLEL_H
