#include "adapters/replicas/gpu/scale_replica_kernels.cuh"

#include <algorithm>
#include <cmath>

#include "adapters/replicas/gpu/scale_replica_thresholds.h"
#include "gpu/cuda_check.h"
#include "gpu/kronecker.h"

namespace gnncheck::gpu_replicas {
namespace {

constexpr int kWarp = 32;
constexpr int kBlockThreads = 256;
constexpr std::int64_t kMaxBlocks = 65535ll * 16;

unsigned blocks_for_warps(std::int64_t warps) {
  const std::int64_t per_block = kBlockThreads / kWarp;
  return static_cast<unsigned>(std::clamp<std::int64_t>((warps + per_block - 1) / per_block, 1, kMaxBlocks));
}
__device__ __forceinline__ std::int64_t first_warp() {
  return (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
}
__device__ __forceinline__ std::int64_t warp_stride() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x / kWarp; }
__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// One warp per row, lanes over the features, edges in increasing order.
__global__ void int32_offsets_kernel(std::int64_t rows, const std::int64_t* __restrict__ row_ptr, const std::int32_t* __restrict__ col_idx,
                                     std::int64_t width, const float* __restrict__ x, float* __restrict__ y) {
  const int lane = threadIdx.x % kWarp;
  for (std::int64_t i = first_warp(); i < rows; i += warp_stride()) {
    const std::int32_t begin = static_cast<std::int32_t>(row_ptr[i]);  // the bug: offsets held in int32
    const std::int32_t end = static_cast<std::int32_t>(row_ptr[i + 1]);
    const bool malformed = begin < 0 || end < begin;
    for (std::int64_t f = lane; f < width; f += kWarp) {
      float acc = 0.0f;
      if (!malformed)
        for (std::int32_t p = begin; p < end; ++p) acc += x[static_cast<std::int64_t>(col_idx[p]) * width + f];
      y[i * width + f] = acc;
    }
  }
}

__global__ void softmax_long_rows_kernel(std::int64_t rows, const std::int64_t* __restrict__ row_ptr, const float* __restrict__ logits,
                                         std::int64_t heads, float* __restrict__ alpha) {
  const int lane = threadIdx.x % kWarp;
  for (std::int64_t i = first_warp(); i < rows; i += warp_stride()) {
    const std::int64_t begin = row_ptr[i], end = row_ptr[i + 1];
    const bool long_row = end - begin > softmax_long_row_degree;
    for (std::int64_t h = 0; h < heads; ++h) {
      float m = -INFINITY;
      if (!long_row) {  // the short-row path subtracts the row maximum; the long-row path does not (the bug)
        for (std::int64_t k = begin + lane; k < end; k += kWarp) m = fmaxf(m, logits[k * heads + h]);
        m = warp_max(m);
      }
      const float shift = long_row ? 0.0f : m;
      float partial = 0.0f;
      for (std::int64_t k = begin + lane; k < end; k += kWarp) partial += expf(logits[k * heads + h] - shift);
      const float denominator = warp_sum(partial);
      for (std::int64_t k = begin + lane; k < end; k += kWarp)
        alpha[k * heads + h] = expf(logits[k * heads + h] - shift) / denominator;
    }
  }
}

__global__ void racy_columns_kernel(std::int64_t cols, const std::int64_t* __restrict__ col_ptr, const std::int32_t* __restrict__ row_idx,
                                    std::int64_t width, const float* __restrict__ grad_y, float* __restrict__ grad_x) {
  const int lane = threadIdx.x % kWarp;
  for (std::int64_t j = first_warp(); j < cols; j += warp_stride()) {
    const std::int64_t begin = col_ptr[j], end = col_ptr[j + 1], length = end - begin;
    // The lost update: one chunk's partial sum, on rows of Aᵀ long enough to be split.
    std::int64_t lost_begin = end, lost_end = end;
    if (length > race_column_length) {
      const std::int64_t chunks = (length + race_chunk_entries - 1) / race_chunk_entries;
      const std::int64_t lost = static_cast<std::int64_t>(splitmix64(static_cast<std::uint64_t>(j)) %
                                                          static_cast<std::uint64_t>(chunks));
      lost_begin = begin + lost * race_chunk_entries;
      lost_end = lost_begin + race_chunk_entries < end ? lost_begin + race_chunk_entries : end;
    }
    for (std::int64_t f = lane; f < width; f += kWarp) {
      float acc = 0.0f;
      for (std::int64_t p = begin; p < end; ++p)
        if (p < lost_begin || p >= lost_end) acc += grad_y[static_cast<std::int64_t>(row_idx[p]) * width + f];
      grad_x[j * width + f] = acc;
    }
  }
}

}  // namespace

void spmm_int32_offsets_forward(gpu::GpuContext& ctx, gpu::DeviceGraph& g, const float* x, std::int64_t width, float* y) {
  if (g.n_dst() == 0 || width == 0) return;
  int32_offsets_kernel<<<blocks_for_warps(g.n_dst()), kBlockThreads, 0, ctx.stream>>>(g.n_dst(), g.row_ptr(), g.col_idx(), width, x, y);
  GNNCHECK_CUDA_CHECK(cudaGetLastError());
}

void edge_softmax_no_max_on_long_rows(gpu::GpuContext& ctx, gpu::DeviceGraph& g, const float* logits, std::int64_t heads,
                                      float* alpha) {
  if (g.num_edges() * heads == 0) return;
  softmax_long_rows_kernel<<<blocks_for_warps(g.n_dst()), kBlockThreads, 0, ctx.stream>>>(g.n_dst(), g.row_ptr(), logits, heads, alpha);
  GNNCHECK_CUDA_CHECK(cudaGetLastError());
}

void spmm_backward_racy_on_long_columns(gpu::GpuContext& ctx, gpu::DeviceGraph& g, const float* grad_y, std::int64_t width,
                                        float* grad_x) {
  if (g.n_src() == 0 || width == 0) return;
  racy_columns_kernel<<<blocks_for_warps(g.n_src()), kBlockThreads, 0, ctx.stream>>>(g.n_src(), g.col_ptr(ctx), g.row_idx(ctx), width,
                                                                                     grad_y, grad_x);
  GNNCHECK_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gnncheck::gpu_replicas
