#include "adapters/replicas/gpu/device_fault_kernels.cuh"

#include <algorithm>

#include "gpu/cuda_check.h"

namespace gnncheck::gpu_replicas {
namespace {

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 4;
constexpr std::int64_t kMaxBlocks = 65535ll * 16;  // grid-stride loop covers the rest

template <class Offset, class Index>
__global__ void racy_spmm_kernel(std::int64_t rows, const Offset* __restrict__ row_ptr, const Index* __restrict__ col_idx,
                                 std::int64_t width, const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float partial_sums[kWarpsPerBlock][kWarp];
  const int lane = threadIdx.x % kWarp;
  const int warp_in_block = threadIdx.x / kWarp;
  // volatile: every step reads and writes shared memory (the warp-synchronous idiom of pre-Volta code).
  volatile float* s = partial_sums[warp_in_block];
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + warp_in_block; i < rows; i += warps) {
    const std::int64_t begin = row_ptr[i], end = row_ptr[i + 1];
    for (std::int64_t c = 0; c < width; ++c) {
      float sum = 0.0f;
      for (std::int64_t p = begin + lane; p < end; p += kWarp) sum += x[static_cast<std::int64_t>(col_idx[p]) * width + c];
      s[lane] = sum;
      // The bug: no __syncwarp() before each read of another lane's slot.
      for (int half = kWarp / 2; half > 0; half /= 2)
        if (lane < half) s[lane] = s[lane] + s[lane + half];
      if (lane == 0) y[i * width + c] = s[0];
    }
  }
}

}  // namespace

void racy_spmm_forward(gpu::GpuContext& ctx, gpu::DeviceGraph& g, const float* x, std::int64_t f, float* y) {
  if (g.n_dst() == 0 || f == 0) return;
  if (g.num_edges() == 0) {
    GNNCHECK_CUDA_CHECK(cudaMemsetAsync(y, 0, static_cast<std::size_t>(g.n_dst() * f) * sizeof(float), ctx.stream));
    return;
  }
  const auto blocks = static_cast<unsigned>(std::clamp<std::int64_t>((g.n_dst() + kWarpsPerBlock - 1) / kWarpsPerBlock, 1, kMaxBlocks));
  racy_spmm_kernel<<<blocks, kWarpsPerBlock * kWarp, 0, ctx.stream>>>(g.n_dst(), g.row_ptr(), g.col_idx(), f, x, y);
  GNNCHECK_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gnncheck::gpu_replicas
