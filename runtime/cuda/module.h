// module.h: kernel libraries loaded from memory, and checked kernel launches.
//
// The compiler embeds, per executable, an sm_90 cubin and the PTX of the same kernels
// (NVRTC output). load_module tries the cubin first; when the device cannot run it
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

#include "runtime/cuda/check.h"

namespace vouch::rt::cuda {

class KernelModule {
 public:
  KernelModule() = default;
  KernelModule(KernelModule&& other) noexcept;
  KernelModule& operator=(KernelModule&& other) noexcept;
  KernelModule(const KernelModule&) = delete;
  KernelModule& operator=(const KernelModule&) = delete;
  ~KernelModule();  // unloads (errors ignored: nothing can be done about them here)

  // The kernel `name` (an extern "C" / unmangled symbol) of this library. Its name is
  // remembered for launch()'s error messages.
  Result<cudaKernel_t> kernel(const char* name) const;

  Status unload();
  bool loaded() const { return library_ != nullptr; }
  bool loaded_from_ptx() const { return from_ptx_; }
  // The cubin's sm architecture (e.g. 90), or -1 when none was given / readable.
  int cubin_arch() const { return cubin_arch_; }
  cudaLibrary_t library() const { return library_; }

 private:
  friend Result<KernelModule> load_module(const void*, size_t, const char*);
  KernelModule(cudaLibrary_t library, bool from_ptx, int cubin_arch)
      : library_(library), from_ptx_(from_ptx), cubin_arch_(cubin_arch) {}
  cudaLibrary_t library_ = nullptr;
  bool from_ptx_ = false;
  int cubin_arch_ = -1;
};

// Loads a kernel library for the current device: `cubin` (size bytes; may be nullptr)
// first, else / on an architecture mismatch the NUL-terminated `ptx` (may be nullptr).
// Errors name the failing call and include the JIT error log for PTX.
Result<KernelModule> load_module(const void* cubin, size_t size, const char* ptx);

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
