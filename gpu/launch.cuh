// gnncheck/gpu/launch.cuh — launch-size helpers and warp reductions shared by the .cu files
// (internal to gpu/; not part of the public interface).
#pragma once

#include <algorithm>
#include <cstdint>

#include "gpu/cuda_check.h"

namespace gnncheck::gpu::detail {

constexpr int warp_size = 32;
constexpr int block_threads = 256;
constexpr int warps_per_block = block_threads / warp_size;
// Grid-stride loops cover any size; capping the grid keeps launches valid for huge inputs.
constexpr std::int64_t max_blocks = 65535ll * 16;

inline unsigned blocks_for_threads(std::int64_t threads) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((threads + block_threads - 1) / block_threads, 1, max_blocks));
}
inline unsigned blocks_for_warps(std::int64_t warps) {
  return static_cast<unsigned>(
      std::clamp<std::int64_t>((warps + warps_per_block - 1) / warps_per_block, 1, max_blocks));
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = warp_size / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int offset = warp_size / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Global warp id and warp count for warp-per-item grid-stride loops.
__device__ __forceinline__ std::int64_t global_warp() {
  return (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / warp_size;
}
__device__ __forceinline__ std::int64_t warp_count() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x / warp_size;
}
__device__ __forceinline__ std::int64_t global_thread() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::int64_t thread_count() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

// Checks the launch that was just made (configuration errors surface here, not at the next sync).
#define GNNCHECK_CHECK_LAUNCH() GNNCHECK_CUDA_CHECK(cudaGetLastError())

}  // namespace gnncheck::gpu::detail
