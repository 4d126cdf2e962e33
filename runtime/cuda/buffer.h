// buffer.h: DeviceBuffer, an owning handle to one block of the process-wide allocator.
//
// A buffer remembers the stream its work is ordered on; releasing it (explicitly, or
// in the destructor) hands the block back to the reuse cache after the work queued on
// that stream (allocator.h). Prefer release(), which returns the Status; the
// destructor can only report a failure on stderr.
#ifndef VOUCH_RUNTIME_CUDA_BUFFER_H_
#define VOUCH_RUNTIME_CUDA_BUFFER_H_

#include <cuda_runtime_api.h>

#include <cstddef>

#include "runtime/cuda/check.h"

namespace vouch::rt::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // `bytes` from the process allocator, for use on `stream`.
  static Result<DeviceBuffer> allocate(size_t bytes, cudaStream_t stream);

  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  // Returns the block to the allocator; the buffer is empty afterwards.
  Status release();

  void* data() const { return ptr_; }
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }
  cudaStream_t stream() const { return stream_; }
  bool empty() const { return ptr_ == nullptr; }

 private:
  DeviceBuffer(void* ptr, size_t bytes, cudaStream_t stream)
      : ptr_(ptr), bytes_(bytes), stream_(stream) {}
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  cudaStream_t stream_ = nullptr;
};

}  // namespace vouch::rt::cuda

#endif  // VOUCH_RUNTIME_CUDA_BUFFER_H_
