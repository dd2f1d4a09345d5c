#include "gpu/device_allocator.h"

#include <fmt/format.h>

#include "gpu/cuda_check.h"

namespace gnncheck::gpu {

void* DeviceAllocator::allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* ptr = nullptr;
  const cudaError_t status = cudaMalloc(&ptr, bytes);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error state of a failed allocation
    throw CudaError(fmt::format("cudaMalloc of {} bytes failed: {} ({}) {}; the GPU reference held {} bytes "
                                "(peak {}) at the time",
                                bytes, cudaGetErrorName(status), static_cast<int>(status),
                                cudaGetErrorString(status), current_bytes_, peak_bytes_));
  }
  current_bytes_ += static_cast<std::int64_t>(bytes);
  ++allocation_count_;
  if (current_bytes_ > peak_bytes_) peak_bytes_ = current_bytes_;
  return ptr;
}

void DeviceAllocator::deallocate(void* ptr, std::size_t bytes) noexcept {
  if (ptr == nullptr) return;
  cudaFree(ptr);
  current_bytes_ -= static_cast<std::int64_t>(bytes);
}

}  // namespace gnncheck::gpu
