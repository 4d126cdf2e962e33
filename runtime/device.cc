// device.cc: device names and the CPU-only build's runtime check (device.h).
#include "runtime/device.h"

#include <string>

namespace vouch::rt {

namespace {

constexpr Device kAll[] = {Device::Auto, Device::Cpu,      Device::Cuda,   Device::Rocm,
                           Device::Metal, Device::Wasm,    Device::Tpu,    Device::Trainium,
                           Device::Custom, Device::External};

}  // namespace

const char* device_name(Device device) {
  switch (device) {
    case Device::Auto: return "auto";
    case Device::Cpu: return "cpu";
    case Device::Cuda: return "cuda";
    case Device::Rocm: return "rocm";
    case Device::Metal: return "metal";
    case Device::Wasm: return "wasm";
    case Device::Tpu: return "tpu";
    case Device::Trainium: return "trainium";
    case Device::Custom: return "custom";
    case Device::External: return "external";
  }
  return "unknown";
}

Result<Device> parse_device(std::string_view name) {
  std::string known;
  for (Device d : kAll) {
    if (name == device_name(d)) return d;
    known += std::string(known.empty() ? "" : ", ") + device_name(d);
  }
  return Status::Error("unknown device `" + std::string(name) + "` (known: " + known + ")");
}

Device resolve_device(Device requested) {
  return requested == Device::Auto ? Device::Cpu : requested;
}

Status require_runtime(Device requested) {
  Device d = resolve_device(requested);
  if (d == Device::Cpu) return Status::Ok();
  if (d == Device::Cuda)
    return Status::Error(
        "device `cuda` requested, but this executable is a CPU-only build (no native CUDA "
        "runtime linked); rebuild it with `vouch build --target cuda`");
  return Status::Error(std::string("device `") + device_name(d) +
                       "` has no maintained runtime profile");
}

}  // namespace vouch::rt
