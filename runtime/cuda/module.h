// module.h: kernel libraries loaded from memory, and checked kernel launches.
//
// The compiler embeds, per executable, one or more kernel images (NVRTC compiles a
// model's kernels in parallel, a program per group: codegen/Nvrtc.h), each an sm_90 cubin
// and the PTX of the same kernels. A KernelModule is the libraries of all of them, and
// looks a kernel up by name in each. For each image load_module tries the cubin first; when the device cannot run it
// (another architecture; checked from the cubin's ELF header before loading, and from
// the loader's answer) it falls back to the PTX, which the driver JIT-compiles, and
// says so once per process on stderr. Loading uses the runtime API
// (cudaLibraryLoadData / cudaLibraryGetKernel / cudaLaunchKernel): no driver-API link,
// so executables start (and report the runtime status) where no driver is installed.
// Loading is made eager (every kernel is loaded into the current context before
// load_module returns, despite CUDA's default lazy loading), so a bad image or a failed
// JIT is reported by load_module, with the JIT log, not by a later launch.
#ifndef VOUCH_RUNTIME_CUDA_MODULE_H_
#define VOUCH_RUNTIME_CUDA_MODULE_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/cuda/check.h"

namespace vouch::rt::cuda {

// One NVRTC compile's output: its cubin (cubin_size bytes; may be nullptr) and the
// NUL-terminated PTX of the same kernels (may be nullptr).
struct KernelImage {
  const void* cubin = nullptr;
  size_t cubin_size = 0;
  const char* ptx = nullptr;
};

class KernelModule {
 public:
  KernelModule() = default;
  KernelModule(KernelModule&& other) noexcept;
  KernelModule& operator=(KernelModule&& other) noexcept;
  KernelModule(const KernelModule&) = delete;
  KernelModule& operator=(const KernelModule&) = delete;
  ~KernelModule();  // unloads (errors ignored: nothing can be done about them here)

  // The kernel `name` (an extern "C" / unmangled symbol) from the library that holds it
  // (kernel names are unique across a model's images; load_module indexes them, so a
  // lookup makes no failing CUDA call). Its name is remembered for launch()'s error
  // messages.
  Result<cudaKernel_t> kernel(const char* name) const;

  Status unload();  // every library; the first error
  bool loaded() const { return !libraries_.empty(); }
  size_t library_count() const { return libraries_.size(); }
  // Whether any image was loaded from its PTX.
  bool loaded_from_ptx() const { return from_ptx_; }
  // The first cubin's sm architecture (e.g. 90), or -1 when none was given / readable.
  int cubin_arch() const { return cubin_arch_; }

 private:
  friend Result<KernelModule> load_module(const KernelImage*, size_t);
  std::vector<cudaLibrary_t> libraries_;
  std::unordered_map<std::string, size_t> library_of_;  // kernel name -> its library
  bool from_ptx_ = false;
  int cubin_arch_ = -1;
};

// Loads `count` kernel images for the current device, each from its cubin first, else /
// on an architecture mismatch from its PTX. Errors name the image, the failing call, and
// include the JIT error log for PTX; on an error nothing stays loaded.
Result<KernelModule> load_module(const KernelImage* images, size_t count);
// One image.
inline Result<KernelModule> load_module(const void* cubin, size_t size, const char* ptx) {
  const KernelImage image{cubin, size, ptx};
  return load_module(&image, 1);
}

// Launches `kernel` via cudaLaunchKernel((const void*)kernel, ...) (the cast the CUDA
// runtime documents for cudaKernel_t), then checks cudaGetLastError; both errors name
// the kernel, the grid, the block and the shared memory size.
Status launch(cudaKernel_t kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
              void** args);

// The name a kernel was obtained under (KernelModule::kernel), else "<kernel 0x...>".
std::string kernel_name(cudaKernel_t kernel);

// Pure helpers (unit-tested without a device).
// The sm architecture of a CUDA ELF cubin (90 for sm_90), or -1 if `data` is not one.
int cubin_sm_arch(const void* data, size_t size);
// Whether a cubin for sm_<arch> runs on a device of compute capability major.minor
// (same major, minor >= the cubin's).
bool cubin_runs_on(int sm_arch, int cc_major, int cc_minor);
// True for a fatbinary (magic 0xBA55ED50): loaded as is, the driver picks the image.
bool is_fatbin(const void* data, size_t size);

}  // namespace vouch::rt::cuda

#endif  // VOUCH_RUNTIME_CUDA_MODULE_H_
