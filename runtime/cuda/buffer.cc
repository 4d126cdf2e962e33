// buffer.cc: DeviceBuffer over the process-wide allocator (buffer.h).
#include "runtime/cuda/buffer.h"

#include <cstdio>
#include <utility>

#include "runtime/cuda/allocator.h"

namespace vouch::rt::cuda {

Result<DeviceBuffer> DeviceBuffer::allocate(size_t bytes, cudaStream_t stream) {
  Result<void*> p = process_allocator().allocate(bytes, stream);
  if (!p.ok()) return p.status();
  return DeviceBuffer(p.value(), bytes, stream);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      stream_(std::exchange(other.stream_, nullptr)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    Status s = release();
    if (!s.ok()) std::fprintf(stderr, "warning: %s\n", s.message().c_str());
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  Status s = release();
  if (!s.ok()) std::fprintf(stderr, "warning: releasing a device buffer: %s\n", s.message().c_str());
}

Status DeviceBuffer::release() {
  if (ptr_ == nullptr) return Status::Ok();
  void* p = std::exchange(ptr_, nullptr);
  bytes_ = 0;
  return process_allocator().release(p, stream_);
}

}  // namespace vouch::rt::cuda
