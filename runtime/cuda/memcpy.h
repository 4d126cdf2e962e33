// memcpy.h: checked host <-> device copies on a stream.
//
// upload / download are asynchronous with respect to the host (cudaMemcpyAsync on the
// stream): the host buffer must stay alive, and a download's data may be read only
// after the stream is synchronized (with pageable host memory the driver may copy
// synchronously, but that is not a guarantee). download_scalar synchronizes and
// returns the value. Errors name the call, the direction and the byte count, e.g.
//   cudaMemcpyAsync(host to device, 64 bytes) failed: ... (cudaErrorInvalidValue)
#ifndef VOUCH_RUNTIME_CUDA_MEMCPY_H_
#define VOUCH_RUNTIME_CUDA_MEMCPY_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "runtime/cuda/check.h"

namespace vouch::rt::cuda {

inline Status copy_bytes_async(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                               cudaStream_t stream) {
  if (bytes == 0) return Status::Ok();
  const char* dir = kind == cudaMemcpyHostToDevice   ? "host to device"
                    : kind == cudaMemcpyDeviceToHost ? "device to host"
                    : kind == cudaMemcpyDeviceToDevice ? "device to device"
                                                       : "default";
  VOUCH_CUDA_CHECK_WHAT(cudaMemcpyAsync(dst, src, bytes, kind, stream),
                        "cudaMemcpyAsync(" + std::string(dir) + ", " + std::to_string(bytes) +
                            " bytes)");
  return Status::Ok();
}

// count elements host -> device.
template <class T>
Status upload(T* dst_device, const T* src_host, size_t count, cudaStream_t stream) {
  return copy_bytes_async(dst_device, src_host, count * sizeof(T), cudaMemcpyHostToDevice,
                          stream);
}

// count elements device -> host (read them after synchronizing the stream).
template <class T>
Status download(T* dst_host, const T* src_device, size_t count, cudaStream_t stream) {
  return copy_bytes_async(dst_host, src_device, count * sizeof(T), cudaMemcpyDeviceToHost,
                          stream);
}

// rows of `columns` elements, each the start of a `pitch`-element row on the device,
// device -> host, packed (cudaMemcpy2DAsync; read them after synchronizing the stream).
template <class T>
Status download_rows(T* dst_host, const T* src_device, size_t rows, size_t columns,
                     size_t pitch, cudaStream_t stream) {
  if (rows == 0 || columns == 0) return Status::Ok();
  VOUCH_CUDA_CHECK_WHAT(
      cudaMemcpy2DAsync(dst_host, columns * sizeof(T), src_device, pitch * sizeof(T),
                        columns * sizeof(T), rows, cudaMemcpyDeviceToHost, stream),
      "cudaMemcpy2DAsync(device to host, " + std::to_string(rows) + " rows of " +
          std::to_string(columns * sizeof(T)) + " bytes)");
  return Status::Ok();
}

// count elements device -> device.
template <class T>
Status copy_device(T* dst_device, const T* src_device, size_t count, cudaStream_t stream) {
  return copy_bytes_async(dst_device, src_device, count * sizeof(T), cudaMemcpyDeviceToDevice,
                          stream);
}

// One element device -> host, synchronously (e.g. a loss): waits for the stream.
template <class T>
Result<T> download_scalar(const T* src_device, cudaStream_t stream) {
  T value{};
  Status s = download(&value, src_device, 1, stream);
  if (!s.ok()) return s;
  VOUCH_CUDA_CHECK_WHAT(cudaStreamSynchronize(stream),
                        "cudaStreamSynchronize (download of a " + std::to_string(sizeof(T)) +
                            "-byte scalar)");
  return value;
}

}  // namespace vouch::rt::cuda

#endif  // VOUCH_RUNTIME_CUDA_MEMCPY_H_
