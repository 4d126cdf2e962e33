// status.h: is native CUDA usable in this process? (the runtime status).
//
// Three states, three distinct answers when `--device cuda` is requested:
//   NativeWithDevice  this library is linked and cudaGetDeviceCount sees >= 1 device: ok;
//   NativeNoDevice    this library is linked but no device is usable (no driver, no
//                     GPU, CUDA_VISIBLE_DEVICES empty, ...): an error naming the
//                     cudaGetDeviceCount result; never a CPU fallback;
//   StubBuild         an executable built without CUDA (this library is not linked):
//                     the CPU runtime's vouch::rt::require_runtime(Device::Cuda) says so.
// The enum is shared so reports and tests can name all three.
#ifndef VOUCH_RUNTIME_CUDA_STATUS_H_
#define VOUCH_RUNTIME_CUDA_STATUS_H_

#include <cuda_runtime_api.h>

#include <string>

#include "runtime/cuda/check.h"

namespace vouch::rt::cuda {

enum class RuntimeState { NativeWithDevice, NativeNoDevice, StubBuild };

// "native-with-device", "native-no-device", "stub-build".
const char* runtime_state_name(RuntimeState state);

struct RuntimeStatus {
  RuntimeState state = RuntimeState::NativeNoDevice;
  // cudaGetDeviceCount's result.
  cudaError_t count_error = cudaSuccess;
  std::string count_error_name;  // "cudaSuccess", "cudaErrorInsufficientDriver", ...
  int device_count = 0;
  // Versions as cudart encodes them (1000 * major + 10 * minor); 0 when unknown (the
  // driver version is 0 when no driver is installed).
  int driver_version = 0;
  int runtime_version = 0;
  // Device 0, when state == NativeWithDevice.
  std::string device_name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  size_t total_memory_bytes = 0;
  // A failure while reading device 0's properties after the count succeeded (the
  // state is then NativeNoDevice); empty otherwise.
  std::string property_error;
};

// Probes once per process (cudaGetDeviceCount is called once; later calls return the
// cached result): device count, device 0's name, compute capability, SM count and
// memory, and the driver / runtime versions.
const RuntimeStatus& probe_runtime();

// The Status for `--device cuda` given a probe result (pure; unit-testable):
//   NativeWithDevice -> Ok;
//   NativeNoDevice   -> "device `cuda` requested, but no usable CUDA device is visible
//                       (cudaGetDeviceCount: <error name>): this executable will not fall
//                       back to the CPU" (with "0 devices" as the reason when the count
//                       succeeded with none);
//   StubBuild        -> the CPU runtime's CPU-only-build message.
Status status_for(const RuntimeStatus& status);

// status_for(probe_runtime()).
Status require_native_cuda();

// "13.0" from 13000; "none" for 0.
std::string format_cuda_version(int version);

// Multi-line human-readable report, as printed by //runtime/cuda:cuda_info.
std::string format(const RuntimeStatus& status);

}  // namespace vouch::rt::cuda

#endif  // VOUCH_RUNTIME_CUDA_STATUS_H_
