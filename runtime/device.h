// device.h: the devices an executable can be asked to run on, and whether this build
// can run on them.
//
// Every device name parses (so model descriptions and profiles can talk about them),
// but only devices with a linked runtime execute. Asking for any other device is an
// error with the reason; a run never falls back to the CPU behind the user's back.
#ifndef VOUCH_RUNTIME_DEVICE_H_
#define VOUCH_RUNTIME_DEVICE_H_

#include <string_view>

#include "runtime/status.h"

namespace vouch::rt {

enum class Device { Auto, Cpu, Cuda, Rocm, Metal, Wasm, Tpu, Trainium, Custom, External };

// "auto", "cpu", "cuda", "rocm", "metal", "wasm", "tpu", "trainium", "custom",
// "external"; anything else is an error listing these names.
Result<Device> parse_device(std::string_view name);

const char* device_name(Device device);

// The device `auto` stands for in this build (the CPU, in a CPU-only build).
Device resolve_device(Device requested);

// Ok when this (CPU-only) build can run on the device; otherwise why not.
Status require_runtime(Device requested);

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_DEVICE_H_
