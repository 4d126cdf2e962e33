// memory.h: the bytes a run allocates, and the bytes the machine has.
//
// A model larger than memory is refused before anything is allocated, with its bytes
// and the memory available, instead of dying of std::bad_alloc or the OOM killer
// part-way (train_main checks a backend's MemoryNeed; `vouch run --interpret` and
// `vouch build` check theirs). Sizes saturate at UINT64_MAX instead of wrapping.
#ifndef VOUCH_RUNTIME_MEMORY_H_
#define VOUCH_RUNTIME_MEMORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/status.h"

namespace vouch::rt {

// a + b and a * b, saturating at UINT64_MAX.
uint64_t add_bytes(uint64_t a, uint64_t b);
uint64_t mul_bytes(uint64_t a, uint64_t b);

// "8.00 GiB (8589934592 bytes)"; "512 bytes" below 1 KiB.
std::string format_bytes(uint64_t bytes);

// One part of what a run allocates ("buffers", "optimizer state").
struct MemoryPart {
  std::string what;
  uint64_t bytes = 0;
};

// What a run allocates on the host and on its device (empty for a cpu run), part by
// part.
struct MemoryNeed {
  std::vector<MemoryPart> host, device;
  static uint64_t total(const std::vector<MemoryPart>& parts);
  // "buffers 8.00 GiB (...), optimizer state 16.0 GiB (...)".
  static std::string describe(const std::vector<MemoryPart>& parts);
};

// Host memory a new allocation can get now: /proc/meminfo's MemAvailable, else
// sysinfo(2)'s free and buffer RAM. `source` (when given) says which.
Result<uint64_t> host_memory_available(std::string* source = nullptr);
// This machine's physical memory: /proc/meminfo's MemTotal, else sysinfo(2)'s.
Result<uint64_t> host_memory_total();

// The host memory of a run on the cpu executor (runtime/executor.h): the program's
// storage (`storage_bytes`: program_storage_bytes), the optimizer's state (at most two
// moments per parameter element: Adam's m and v) and the float64 copies of the
// parameters that initialisation and checkpoints make (two per element: the copy
// initialised, or loaded, and the one a checkpoint saves). Not the data, which its
// loader reads and checks.
MemoryNeed cpu_run_memory(uint64_t storage_bytes, uint64_t param_elements, int64_t real_bytes);

// Ok when `need` fits in `available` bytes; otherwise the refusal: "model `m` needs
// <bytes> of <where> memory for <run> (<parts>), but <available> is available
// (<source>)".
Status check_memory_fits(const std::string& model, const std::string& run,
                         const std::string& where, const std::vector<MemoryPart>& need,
                         uint64_t available, const std::string& source);

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_MEMORY_H_
