// gnncheck/gpu/device_allocator_impl.h — DeviceBuffer's copy members (included by device_allocator.h).
#pragma once

#include <stdexcept>
#include <string>

#include "gpu/cuda_check.h"

namespace gnncheck::gpu {

template <class T>
void DeviceBuffer<T>::upload(const T* host, std::int64_t count, cudaStream_t stream) {
  if (count > count_)
    throw std::logic_error("DeviceBuffer::upload of " + std::to_string(count) + " values into a buffer of " +
                           std::to_string(count_));
  if (count == 0) return;
  GNNCHECK_CUDA_CHECK(
      cudaMemcpyAsync(data_, host, static_cast<std::size_t>(count) * sizeof(T), cudaMemcpyHostToDevice, stream));
}

template <class T>
std::vector<T> DeviceBuffer<T>::download(cudaStream_t stream) const {
  std::vector<T> host(static_cast<std::size_t>(count_));
  if (count_ > 0) GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(host.data(), data_, bytes(), cudaMemcpyDeviceToHost, stream));
  GNNCHECK_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

template <class T>
void DeviceBuffer<T>::zero(cudaStream_t stream) {
  if (count_ > 0) GNNCHECK_CUDA_CHECK(cudaMemsetAsync(data_, 0, bytes(), stream));
}

}  // namespace gnncheck::gpu
