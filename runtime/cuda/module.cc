// module.cc: loading kernel libraries from memory and launching their kernels (module.h).
#include "runtime/cuda/module.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>
#include <utility>

#include "runtime/cuda/status.h"

namespace vouch::rt::cuda {

namespace {

// Kernel handle -> name, for launch errors. Never destroyed.
struct KernelNames {
  std::mutex mu;
  std::unordered_map<cudaKernel_t, std::string> names;
};
KernelNames& kernel_names() {
  static KernelNames* const k = new KernelNames;
  return *k;
}

uint32_t read_u32le(const unsigned char* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

bool is_image_error(cudaError_t e) {
  return e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidKernelImage ||
         e == cudaErrorUnsupportedPtxVersion;
}

std::string sm_text(int arch) { return "sm_" + std::to_string(arch); }

void note_ptx_fallback_once(const std::string& reason) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::fprintf(stderr, "note: %s; loading the PTX instead (JIT-compiled by the driver)\n",
                 reason.c_str());
    std::fflush(stderr);
  });
}

// cudaLibraryLoadData can return cudaSuccess for an image that did not load (seen with
// CUDA 13.0 / driver 580 on an H200: unparseable or un-JIT-able PTX, a garbage cubin:
// the JIT error log is filled, the library reports 0 kernels, and the real error
// (cudaErrorInvalidPtx, cudaErrorInvalidKernelImage) comes from the first kernel
// lookup). And under CUDA's default lazy loading a loaded image may only be put on the
// device at first use. So verify now: an image with no kernels is asked for one (a
// well-formed but empty library answers cudaErrorSymbolNotFound, which is fine), and
// every kernel is loaded into the current context (cudaFuncGetAttributes). A failure
// is reported here, while the JIT log buffer is alive, not by a later launch. On
// failure the library is unloaded and `failed_call` names the call that failed.
cudaError_t force_load(cudaLibrary_t lib, std::string& failed_call) {
  unsigned count = 0;
  cudaError_t e = cudaLibraryGetKernelCount(&count, lib);
  if (e != cudaSuccess) {
    failed_call = "cudaLibraryGetKernelCount";
  } else if (count == 0) {
    cudaKernel_t probe = nullptr;
    e = cudaLibraryGetKernel(&probe, lib, "__vouch_load_probe__");
    if (e == cudaErrorSymbolNotFound || e == cudaSuccess) {
      (void)cudaGetLastError();
      e = cudaSuccess;  // a valid image without kernels
    } else {
      failed_call = "cudaLibraryGetKernel (the image has no loadable kernels)";
    }
  } else {
    std::vector<cudaKernel_t> kernels(count);
    e = cudaLibraryEnumerateKernels(kernels.data(), count, lib);
    if (e != cudaSuccess) failed_call = "cudaLibraryEnumerateKernels";
    for (unsigned i = 0; i < count && e == cudaSuccess; i++) {
      cudaFuncAttributes attr{};
      e = cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(kernels[i]));
      if (e != cudaSuccess)
        failed_call = "cudaFuncGetAttributes (loading kernel " + std::to_string(i + 1) + " of " +
                      std::to_string(count) + ")";
    }
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    (void)cudaLibraryUnload(lib);
  }
  return e;
}

Result<cudaLibrary_t> load_ptx(const char* ptx) {
  char log[8192] = {0};
  cudaJitOption options[] = {cudaJitErrorLogBuffer, cudaJitErrorLogBufferSizeBytes};
  void* values[] = {log, reinterpret_cast<void*>(uintptr_t(sizeof log))};
  cudaLibrary_t lib = nullptr;
  const std::string what = "cudaLibraryLoadData(PTX, " + std::to_string(std::strlen(ptx)) +
                           " bytes)";
  std::string failed = what;
  cudaError_t e = cudaLibraryLoadData(&lib, ptx, options, values, 2, nullptr, nullptr, 0);
  if (e == cudaSuccess) {
    e = force_load(lib, failed);
    failed += " after " + what;
  }
  if (e != cudaSuccess) {
    std::string msg = cuda_failure(failed, e).message();
    if (log[0] != '\0') msg += "\nJIT error log:\n" + std::string(log);
    return Status::Error(msg);
  }
  return lib;
}

// One image loaded: its library, whether from the PTX, the cubin's sm (or -1).
struct LoadedImage {
  cudaLibrary_t library = nullptr;
  bool from_ptx = false;
  int cubin_arch = -1;
};

Result<LoadedImage> load_image(const void* cubin, size_t size, const char* ptx) {
  const bool have_cubin = cubin != nullptr && size > 0;
  if (!have_cubin && ptx == nullptr)
    return Status::Error("load_module: neither a cubin nor PTX was given");
  Status device = require_native_cuda();
  if (!device.ok()) return Status::Error("load_module: " + device.message());

  int arch = -1;
  if (have_cubin) {
    if (is_fatbin(cubin, size)) {
      cudaLibrary_t lib = nullptr;
      const std::string what = "cudaLibraryLoadData(fatbin, " + std::to_string(size) + " bytes)";
      VOUCH_CUDA_CHECK_WHAT(cudaLibraryLoadData(&lib, cubin, nullptr, nullptr, 0, nullptr,
                                                nullptr, 0),
                            what);
      std::string failed;
      cudaError_t e = force_load(lib, failed);
      if (e != cudaSuccess) return cuda_failure(failed + " after " + what, e);
      return LoadedImage{lib, false, -1};
    }
    arch = cubin_sm_arch(cubin, size);
    if (arch < 0)
      return Status::Error("load_module: the " + std::to_string(size) +
                           "-byte cubin is not a 64-bit CUDA ELF image");
    int dev = 0, major = 0, minor = 0;
    VOUCH_CUDA_CHECK(cudaGetDevice(&dev));
    VOUCH_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    VOUCH_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    const std::string device_text = "device " + std::to_string(dev) +
                                    " is compute capability " + std::to_string(major) + "." +
                                    std::to_string(minor);
    std::string reason;
    if (cubin_runs_on(arch, major, minor)) {
      cudaLibrary_t lib = nullptr;
      const std::string what =
          "cudaLibraryLoadData(cubin " + sm_text(arch) + ", " + std::to_string(size) + " bytes)";
      std::string failed = what;
      cudaError_t e = cudaLibraryLoadData(&lib, cubin, nullptr, nullptr, 0, nullptr, nullptr, 0);
      if (e == cudaSuccess) {
        e = force_load(lib, failed);
        failed += " after " + what;
      }
      if (e == cudaSuccess) return LoadedImage{lib, false, arch};
      if (ptx == nullptr || !is_image_error(e)) return cuda_failure(failed, e);
      reason = cuda_failure(failed, e).message();
    } else {
      reason = "the kernel cubin is " + sm_text(arch) + " but " + device_text;
      if (ptx == nullptr)
        return Status::Error("load_module: " + reason + ", and no PTX was given to JIT-compile");
    }
    note_ptx_fallback_once(reason);
  }
  Result<cudaLibrary_t> lib = load_ptx(ptx);
  if (!lib.ok()) return lib.status();
  return LoadedImage{lib.value(), true, arch};
}

// Records which library holds each of `lib`'s kernels (by the names the image gives
// them: extern "C" names as written).
Status index_kernels(cudaLibrary_t lib, size_t index,
                     std::unordered_map<std::string, size_t>& library_of) {
  unsigned count = 0;
  VOUCH_CUDA_CHECK(cudaLibraryGetKernelCount(&count, lib));
  std::vector<cudaKernel_t> kernels(count);
  if (count > 0) VOUCH_CUDA_CHECK(cudaLibraryEnumerateKernels(kernels.data(), count, lib));
  for (unsigned i = 0; i < count; i++) {
    const char* name = nullptr;
    VOUCH_CUDA_CHECK_WHAT(cudaFuncGetName(&name, reinterpret_cast<const void*>(kernels[i])),
                          "cudaFuncGetName (kernel " + std::to_string(i + 1) + " of " +
                              std::to_string(count) + ")");
    library_of.emplace(name, index);  // names are unique across a model's images
  }
  return Status::Ok();
}

}  // namespace

int cubin_sm_arch(const void* data, size_t size) {
  if (data == nullptr || size < 64) return -1;
  const unsigned char* d = static_cast<const unsigned char*>(data);
  if (d[0] != 0x7f || d[1] != 'E' || d[2] != 'L' || d[3] != 'F') return -1;
  if (d[4] != 2 || d[5] != 1) return -1;              // 64-bit little-endian only
  if ((d[18] | d[19] << 8) != 190) return -1;         // e_machine EM_CUDA
  const uint32_t flags = read_u32le(d + 48);          // e_flags of an ELF64 header
  const int abi_version = d[8];
  // ABI version 8 (CUDA 13) stores the sm number in bits 8..15; older ones in 0..7.
  return abi_version >= 8 ? int((flags >> 8) & 0xff) : int(flags & 0xff);
}

bool cubin_runs_on(int sm_arch, int cc_major, int cc_minor) {
  return sm_arch > 0 && sm_arch / 10 == cc_major && sm_arch % 10 <= cc_minor;
}

bool is_fatbin(const void* data, size_t size) {
  return data != nullptr && size >= 4 &&
         read_u32le(static_cast<const unsigned char*>(data)) == 0xBA55ED50u;
}

KernelModule::KernelModule(KernelModule&& other) noexcept
    : libraries_(std::exchange(other.libraries_, {})),
      library_of_(std::exchange(other.library_of_, {})),
      from_ptx_(other.from_ptx_),
      cubin_arch_(other.cubin_arch_) {}

KernelModule& KernelModule::operator=(KernelModule&& other) noexcept {
  if (this != &other) {
    (void)unload();
    libraries_ = std::exchange(other.libraries_, {});
    library_of_ = std::exchange(other.library_of_, {});
    from_ptx_ = other.from_ptx_;
    cubin_arch_ = other.cubin_arch_;
  }
  return *this;
}

KernelModule::~KernelModule() { (void)unload(); }

Status KernelModule::unload() {
  Status first = Status::Ok();
  library_of_.clear();
  for (cudaLibrary_t lib : std::exchange(libraries_, {})) {
    const cudaError_t e = cudaLibraryUnload(lib);
    if (e != cudaSuccess && first.ok()) first = cuda_failure("cudaLibraryUnload", e);
  }
  return first;
}

Result<cudaKernel_t> KernelModule::kernel(const char* name) const {
  if (libraries_.empty())
    return Status::Error(std::string("kernel(\"") + name + "\"): the module is not loaded");
  // The index, not a cudaLibraryGetKernel on each library in turn: a lookup in the wrong
  // library is an API error that compute-sanitizer reports (and fails the run on).
  auto at = library_of_.find(name);
  if (at == library_of_.end())
    return Status::Error(std::string("kernel \"") + name + "\" is in none of the " +
                         std::to_string(libraries_.size()) + " loaded kernel image(s)");
  cudaKernel_t k = nullptr;
  VOUCH_CUDA_CHECK_WHAT(cudaLibraryGetKernel(&k, libraries_[at->second], name),
                        std::string("cudaLibraryGetKernel(\"") + name + "\")");
  KernelNames& kn = kernel_names();
  std::lock_guard<std::mutex> lock(kn.mu);
  kn.names[k] = name;
  return k;
}

Result<KernelModule> load_module(const KernelImage* images, size_t count) {
  if (images == nullptr || count == 0)
    return Status::Error("load_module: no kernel image was given");
  KernelModule module;
  for (size_t i = 0; i < count; i++) {
    Result<LoadedImage> image = load_image(images[i].cubin, images[i].cubin_size, images[i].ptx);
    if (!image.ok()) {
      if (count == 1) return image.status();
      return Status::Error("kernel image " + std::to_string(i + 1) + " of " +
                           std::to_string(count) + ": " + image.status().message());
    }
    module.libraries_.push_back(image.value().library);
    Status named = index_kernels(image.value().library, i, module.library_of_);
    if (!named.ok()) {
      if (count == 1) return named;
      return Status::Error("kernel image " + std::to_string(i + 1) + " of " +
                           std::to_string(count) + ": " + named.message());
    }
    module.from_ptx_ = module.from_ptx_ || image.value().from_ptx;
    if (i == 0) module.cubin_arch_ = image.value().cubin_arch;
  }
  return module;
}

std::string kernel_name(cudaKernel_t kernel) {
  {
    KernelNames& kn = kernel_names();
    std::lock_guard<std::mutex> lock(kn.mu);
    auto it = kn.names.find(kernel);
    if (it != kn.names.end()) return it->second;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "<kernel %p>", static_cast<void*>(kernel));
  return buf;
}

Status launch(cudaKernel_t kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
              void** args) {
  auto what = [&](const char* prefix) {
    char dims[128];
    std::snprintf(dims, sizeof dims, "grid=(%u,%u,%u), block=(%u,%u,%u), smem=%zu", grid.x,
                  grid.y, grid.z, block.x, block.y, block.z, smem);
    return std::string(prefix) + "cudaLaunchKernel(" + kernel_name(kernel) + ", " + dims + ")";
  };
  cudaError_t e = cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, args,
                                   smem, stream);
  if (e != cudaSuccess) return cuda_failure(what(""), e);
  e = cudaGetLastError();
  if (e != cudaSuccess) return cuda_failure(what("cudaGetLastError after "), e);
  return Status::Ok();
}

}  // namespace vouch::rt::cuda
