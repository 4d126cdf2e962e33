// status.cc: probing the CUDA runtime once per process (status.h).
#include "runtime/cuda/status.h"

#include <cstdio>

#include "runtime/device.h"

namespace vouch::rt::cuda {

const char* runtime_state_name(RuntimeState state) {
  switch (state) {
    case RuntimeState::NativeWithDevice: return "native-with-device";
    case RuntimeState::NativeNoDevice: return "native-no-device";
    case RuntimeState::StubBuild: return "stub-build";
  }
  return "unknown";
}

namespace {

RuntimeStatus probe_uncached() {
  RuntimeStatus s;
  s.state = RuntimeState::NativeNoDevice;
  int count = 0;
  s.count_error = cudaGetDeviceCount(&count);
  const char* name = cudaGetErrorName(s.count_error);
  s.count_error_name = name != nullptr ? name : "cudaError " + std::to_string(int(s.count_error));
  s.device_count = s.count_error == cudaSuccess ? count : 0;
  if (cudaDriverGetVersion(&s.driver_version) != cudaSuccess) s.driver_version = 0;
  if (cudaRuntimeGetVersion(&s.runtime_version) != cudaSuccess) s.runtime_version = 0;
  (void)cudaGetLastError();  // the probe's failures are reported through the struct
  if (s.device_count <= 0) return s;

  cudaDeviceProp prop{};
  cudaError_t err = cudaGetDeviceProperties(&prop, 0);
  if (err != cudaSuccess) {
    s.property_error = cuda_failure("cudaGetDeviceProperties(device 0)", err).message();
    return s;
  }
  s.device_name = prop.name;
  s.cc_major = prop.major;
  s.cc_minor = prop.minor;
  s.sm_count = prop.multiProcessorCount;
  s.total_memory_bytes = prop.totalGlobalMem;
  s.state = RuntimeState::NativeWithDevice;
  return s;
}

}  // namespace

const RuntimeStatus& probe_runtime() {
  static const RuntimeStatus status = probe_uncached();  // thread-safe, once
  return status;
}

Status status_for(const RuntimeStatus& status) {
  switch (status.state) {
    case RuntimeState::NativeWithDevice:
      return Status::Ok();
    case RuntimeState::StubBuild:
      return ::vouch::rt::require_runtime(::vouch::rt::Device::Cuda);
    case RuntimeState::NativeNoDevice:
      break;
  }
  std::string reason = status.count_error_name;
  if (status.count_error == cudaSuccess) {
    reason = status.property_error.empty() ? "0 devices"
                                           : "1+ devices, but " + status.property_error;
  }
  return Status::Error("device `cuda` requested, but no usable CUDA device is visible "
                       "(cudaGetDeviceCount: " + reason +
                       "): this executable will not fall back to the CPU");
}

Status require_native_cuda() { return status_for(probe_runtime()); }

std::string format_cuda_version(int version) {
  if (version <= 0) return "none";
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string format(const RuntimeStatus& s) {
  std::string out = "cuda runtime: " + std::string(runtime_state_name(s.state)) + "\n";
  out += "  cudaGetDeviceCount: " + s.count_error_name + ", " +
         std::to_string(s.device_count) + " device(s)\n";
  out += "  driver: " + format_cuda_version(s.driver_version) +
         "  runtime: " + format_cuda_version(s.runtime_version) + "\n";
  if (s.state == RuntimeState::NativeWithDevice) {
    char mem[64];
    std::snprintf(mem, sizeof mem, "%.1f GiB", double(s.total_memory_bytes) / (1ull << 30));
    out += "  device 0: " + s.device_name + "  compute capability " +
           std::to_string(s.cc_major) + "." + std::to_string(s.cc_minor) + " (sm_" +
           std::to_string(s.cc_major) + std::to_string(s.cc_minor) + ")  " +
           std::to_string(s.sm_count) + " SMs  " + mem + "\n";
  }
  if (!s.property_error.empty()) out += "  " + s.property_error + "\n";
  return out;
}

}  // namespace vouch::rt::cuda
