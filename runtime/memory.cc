// memory.cc: see memory.h.
#include "runtime/memory.h"

#include <sys/sysinfo.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

namespace vouch::rt {

namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

// The kB value of `key` ("MemAvailable") in /proc/meminfo, in bytes; false when absent.
bool meminfo(const char* key, uint64_t* bytes) {
  FILE* f = std::fopen("/proc/meminfo", "r");
  if (f == nullptr) return false;
  char line[256];
  bool found = false;
  const size_t len = std::strlen(key);
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long long kb = 0;
    if (std::strncmp(line, key, len) == 0 && line[len] == ':' &&
        std::sscanf(line + len + 1, "%llu", &kb) == 1) {
      *bytes = mul_bytes(kb, 1024);
      found = true;
      break;
    }
  }
  std::fclose(f);
  return found;
}

}  // namespace

uint64_t add_bytes(uint64_t a, uint64_t b) { return a > kMax - b ? kMax : a + b; }

uint64_t mul_bytes(uint64_t a, uint64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kMax / b ? kMax : a * b;
}

std::string format_bytes(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(bytes) / 1024;
  int unit = 0;
  while (v >= 1024 && unit < 5) {
    v /= 1024;
    unit++;
  }
  char text[64];
  std::snprintf(text, sizeof text, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v,
                kUnits[unit]);
  return std::string(text) + " (" + std::to_string(bytes) + " bytes)";
}

uint64_t MemoryNeed::total(const std::vector<MemoryPart>& parts) {
  uint64_t sum = 0;
  for (const MemoryPart& p : parts) sum = add_bytes(sum, p.bytes);
  return sum;
}

std::string MemoryNeed::describe(const std::vector<MemoryPart>& parts) {
  std::string text;
  for (const MemoryPart& p : parts)
    if (p.bytes > 0) text += (text.empty() ? "" : ", ") + p.what + " " + format_bytes(p.bytes);
  return text;
}

Result<uint64_t> host_memory_available(std::string* source) {
  uint64_t bytes = 0;
  if (meminfo("MemAvailable", &bytes)) {
    if (source) *source = "MemAvailable in /proc/meminfo";
    return bytes;
  }
  struct sysinfo info;
  if (sysinfo(&info) != 0)
    return Status::Error(std::string("cannot read the memory available: sysinfo: ") +
                         std::strerror(errno));
  if (source) *source = "free and buffer RAM, sysinfo(2)";
  return mul_bytes(add_bytes(info.freeram, info.bufferram), info.mem_unit);
}

Result<uint64_t> host_memory_total() {
  uint64_t bytes = 0;
  if (meminfo("MemTotal", &bytes)) return bytes;
  struct sysinfo info;
  if (sysinfo(&info) != 0)
    return Status::Error(std::string("cannot read the machine's memory: sysinfo: ") +
                         std::strerror(errno));
  return mul_bytes(info.totalram, info.mem_unit);
}

MemoryNeed cpu_run_memory(uint64_t storage_bytes, uint64_t param_elements, int64_t real_bytes) {
  MemoryNeed need;
  need.host.push_back({"buffers (params, gradients, activations)", storage_bytes});
  need.host.push_back({"optimizer state", mul_bytes(mul_bytes(2, param_elements),
                                                    uint64_t(real_bytes))});
  need.host.push_back({"float64 copies of the params (initialisation, checkpoints)",
                       mul_bytes(16, param_elements)});
  return need;
}

Status check_memory_fits(const std::string& model, const std::string& run,
                         const std::string& where, const std::vector<MemoryPart>& need,
                         uint64_t available, const std::string& source) {
  const uint64_t bytes = MemoryNeed::total(need);
  if (bytes <= available) return Status::Ok();
  return Status::Error("model `" + model + "` needs " + format_bytes(bytes) + " of " + where +
                       " memory for " + run + " (" + MemoryNeed::describe(need) + "), but " +
                       format_bytes(available) + " is available (" + source +
                       "): it does not fit");
}

}  // namespace vouch::rt
