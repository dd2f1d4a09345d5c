#include "gpu/device_allocator.h"

#include <fmt/format.h>

#include "gpu/cuda_check.h"

namespace gnncheck::gpu {

std::string_view to_string(MemoryCategory c) {
  switch (c) {
    case MemoryCategory::untagged: return "untagged";
    case MemoryCategory::graph: return "graph";
    case MemoryCategory::activations: return "activations";
    case MemoryCategory::saved_for_backward: return "saved_for_backward";
    case MemoryCategory::parameters: return "parameters";
    case MemoryCategory::workspace: return "workspace";
  }
  return "unknown";
}

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
  current_split_[static_cast<int>(category_)] += static_cast<std::int64_t>(bytes);
  category_of_[ptr] = category_;
  ++allocation_count_;
  if (current_bytes_ > peak_bytes_) {
    peak_bytes_ = current_bytes_;
    peak_split_ = current_split_;
  }
  return ptr;
}

void DeviceAllocator::deallocate(void* ptr, std::size_t bytes) noexcept {
  if (ptr == nullptr) return;
  cudaFree(ptr);
  current_bytes_ -= static_cast<std::int64_t>(bytes);
  const auto tagged = category_of_.find(ptr);
  if (tagged != category_of_.end()) {
    current_split_[static_cast<int>(tagged->second)] -= static_cast<std::int64_t>(bytes);
    category_of_.erase(tagged);
  }
}

}  // namespace gnncheck::gpu
