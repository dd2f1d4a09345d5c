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
//
// Memory attribution (optional): each allocation is counted under the allocator's current
// MemoryCategory (set it with a MemoryCategoryScope), and peak_split() says how the peak divided
// among the categories at the moment it was reached. Code that never sets a category sees
// everything under MemoryCategory::untagged.
//
//   { MemoryCategoryScope tag(alloc, MemoryCategory::graph); DeviceBuffer<int> row_ptr(alloc, n + 1); }
//   alloc.peak_split()[static_cast<int>(MemoryCategory::graph)];   // graph bytes held at the peak
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

namespace gnncheck::gpu {

// What an allocation is for, in the split of the peak that the paper's method reports.
enum class MemoryCategory : int {
  untagged = 0,        // allocated while no category was set
  graph,               // graph storage (CSR, COO rows, CSC, edge_perm, unit values, degree factors)
  activations,         // input features and activations that live only until their consumer ran
  saved_for_backward,  // activations kept from the forward for the backward
  parameters,          // weights, their gradients and the optimizer's moments
  workspace,           // library and op scratch (cuSPARSE buffers, cuBLAS workspace, temporaries)
};
inline constexpr int memory_category_count = 6;
std::string_view to_string(MemoryCategory c);
using MemorySplit = std::array<std::int64_t, memory_category_count>;  // bytes, indexed by category

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
  void reset_peak() {
    peak_bytes_ = current_bytes_;
    peak_split_ = current_split_;
  }

  // The category that allocations are counted under from now on (see MemoryCategoryScope).
  MemoryCategory category() const { return category_; }
  void set_category(MemoryCategory c) { category_ = c; }
  // Bytes held now, and at the moment of the peak, per category (they sum to current_bytes() and
  // peak_bytes()).
  const MemorySplit& current_split() const { return current_split_; }
  const MemorySplit& peak_split() const { return peak_split_; }

 private:
  std::int64_t current_bytes_ = 0;
  std::int64_t peak_bytes_ = 0;
  std::int64_t allocation_count_ = 0;
  MemoryCategory category_ = MemoryCategory::untagged;
  MemorySplit current_split_{};
  MemorySplit peak_split_{};
  std::unordered_map<void*, MemoryCategory> category_of_;  // live allocations
};

// Sets the allocator's category for the scope's lifetime and restores the previous one.
class MemoryCategoryScope {
 public:
  MemoryCategoryScope(DeviceAllocator& allocator, MemoryCategory c) : allocator_(allocator), previous_(allocator.category()) {
    allocator.set_category(c);
  }
  ~MemoryCategoryScope() { allocator_.set_category(previous_); }
  MemoryCategoryScope(const MemoryCategoryScope&) = delete;
  MemoryCategoryScope& operator=(const MemoryCategoryScope&) = delete;

 private:
  DeviceAllocator& allocator_;
  MemoryCategory previous_;
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
