// cuda_info.cc: prints what this process can see of CUDA (probe_runtime), the
// deterministic reduction mode and the reuse-cache cap. Exit 0 with a usable device;
// exit 3 (the executables' "device not available" status) with the reason otherwise.
#include <cstdio>

#include "runtime/cuda/allocator.h"
#include "runtime/cuda/deterministic.h"
#include "runtime/cuda/status.h"

int main() {
  using namespace vouch::rt::cuda;
  const RuntimeStatus& s = probe_runtime();
  std::fputs(format(s).c_str(), stdout);
  std::printf("  deterministic=%s (reductions are fixed-order either way: vouch's kernels "
              "fixed-order-tree or left-fold, cuBLAS library-fixed)\n",
              deterministic_mode_name());
  const uint64_t cap = process_cache_cap_bytes();
  std::printf("  cache_cap_bytes=%llu%s\n", static_cast<unsigned long long>(cap),
              cap == 0 ? " (unbounded)" : "");
  std::fflush(stdout);
  vouch::rt::Status st = status_for(s);
  if (!st.ok()) {
    std::fprintf(stderr, "error: %s\n", st.message().c_str());
    return 3;
  }
  return 0;
}
