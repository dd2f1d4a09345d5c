// gnncheck/gpu/device_allocator.h — the one accounting allocator for all device memory of the GPU
// reference, and DeviceBuffer<T>, the RAII buffer that draws from it.
//
// Every cudaMalloc of the reference goes through DeviceAllocator::allocate — tensors, graph
// storage, cuSPARSE workspaces and the cuBLAS workspace alike — so current_bytes() and
// peak_bytes() are the whole footprint of an evaluation (the libraries' handles keep a few
// kilobytes of their own that no API exposes; see gpu/README.md). No caching: a buffer is
// cudaFree'd when its DeviceBuffer dies, so "memory does not grow across iterations" is a
// property of the code, not of a pool.
//
//   gnncheck::gpu::DeviceAllocator alloc;
//   gnncheck::gpu::DeviceBuffer<float> x(alloc, 1024);   // 4 KiB, counted
//   x.upload(host.data(), 1024, stream);
//   alloc.peak_bytes();                                  // >= 4096
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

namespace gnncheck::gpu {

class DeviceAllocator {
 public:
  DeviceAllocator() = default;
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  // cudaMalloc of `bytes` (nullptr for 0). Throws CudaError on failure; an out-of-memory message
  // also says how much this allocator held at the time.
  void* allocate(std::size_t bytes);
  // cudaFree; `bytes` must be what was allocated. Never throws (called from destructors).
  void deallocate(void* ptr, std::size_t bytes) noexcept;

  std::int64_t current_bytes() const { return current_bytes_; }
  std::int64_t peak_bytes() const { return peak_bytes_; }
  std::int64_t allocation_count() const { return allocation_count_; }  // cudaMalloc calls so far
  // Starts a new peak measurement from what is held now.
  void reset_peak() { peak_bytes_ = current_bytes_; }

 private:
  std::int64_t current_bytes_ = 0;
  std::int64_t peak_bytes_ = 0;
  std::int64_t allocation_count_ = 0;
};

// `count` values of T in device memory from a DeviceAllocator. Move-only; frees on destruction.
// Copies are explicit (upload/download) and asynchronous on the given stream.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceAllocator& allocator, std::int64_t count)
      : allocator_(&allocator),
        count_(count),
        data_(static_cast<T*>(allocator.allocate(static_cast<std::size_t>(count) * sizeof(T)))) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    DeviceBuffer(std::move(other)).swap(*this);
    return *this;
  }
  ~DeviceBuffer() {
    if (allocator_ != nullptr) allocator_->deallocate(data_, bytes());
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::int64_t size() const { return count_; }
  std::size_t bytes() const { return static_cast<std::size_t>(count_) * sizeof(T); }
  bool empty() const { return count_ == 0; }

  // Host -> device of the first `count` values (count <= size()).
  void upload(const T* host, std::int64_t count, cudaStream_t stream);
  void upload(const std::vector<T>& host, cudaStream_t stream) {
    upload(host.data(), static_cast<std::int64_t>(host.size()), stream);
  }
  // Device -> host of all values; synchronizes the stream so the result is ready on return.
  std::vector<T> download(cudaStream_t stream) const;
  // Sets every byte to zero (0.0f / 0 for the types used here).
  void zero(cudaStream_t stream);

 private:
  void swap(DeviceBuffer& other) noexcept {
    std::swap(allocator_, other.allocator_);
    std::swap(count_, other.count_);
    std::swap(data_, other.data_);
  }

  DeviceAllocator* allocator_ = nullptr;
  std::int64_t count_ = 0;
  T* data_ = nullptr;
};

}  // namespace gnncheck::gpu

#include "gpu/device_allocator_impl.h"
