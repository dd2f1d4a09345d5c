#include "adapters/replicas/gpu/replica_kernels.cuh"

#include <algorithm>
#include <cmath>

#include "gpu/cuda_check.h"

namespace gnncheck::gpu_replicas {
namespace {

constexpr int kWarp = 32;
constexpr int kBlockThreads = 256;
constexpr std::int64_t kMaxBlocks = 65535ll * 16;  // grid-stride loops cover the rest

unsigned blocks_for_warps(std::int64_t warps) {
  const std::int64_t per_block = kBlockThreads / kWarp;
  return static_cast<unsigned>(std::clamp<std::int64_t>((warps + per_block - 1) / per_block, 1, kMaxBlocks));
}

__device__ __forceinline__ std::int64_t first_warp() {
  return (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
}
__device__ __forceinline__ std::int64_t warp_stride() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x / kWarp;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// One warp per row of a compressed structure (CSR: ptr = row_ptr, idx = col_idx; CSC: ptr = col_ptr,
// idx = row_idx); lanes stride over the width. Edge values, when given, are read at the position
// p in that structure: w[p·heads + head of the column]. Which structure and which edge array a
// caller passes is where replicas 1, 5 and 11 go wrong. Offset and Index are the graph's own
// index types (DeviceGraph), whatever their width.
// `perm`, when given, maps a position to the edge id whose value is read (eShuffle): w[perm[p]].
template <class Offset, class Index, class Perm>
__global__ void gather_kernel(std::int64_t rows, const Offset* __restrict__ ptr, const Index* __restrict__ idx,
                              const Perm* __restrict__ perm, const float* __restrict__ w, std::int64_t heads,
                              std::int64_t channels, const float* __restrict__ in, float* __restrict__ out) {
  const int lane = threadIdx.x % kWarp;
  const std::int64_t width = heads * channels;
  for (std::int64_t i = first_warp(); i < rows; i += warp_stride()) {
    const std::int64_t begin = ptr[i], end = ptr[i + 1];
    for (std::int64_t c = lane; c < width; c += kWarp) {
      const std::int64_t head = c / channels;
      float sum = 0.0f;
      for (std::int64_t p = begin; p < end; ++p) {
        const float weight = w ? w[(perm ? static_cast<std::int64_t>(perm[p]) : p) * heads + head] : 1.0f;
        sum += weight * in[static_cast<std::int64_t>(idx[p]) * width + c];
      }
      out[i * width + c] = sum;
    }
  }
}

// The replica-10 kernel: the same walk, but the lanes advance over whole blocks of 32 columns only.
template <class Offset, class Index>
__global__ void whole_warps_kernel(std::int64_t rows, const Offset* __restrict__ ptr, const Index* __restrict__ idx,
                                   std::int64_t width, const float* __restrict__ in, float* __restrict__ out) {
  const int lane = threadIdx.x % kWarp;
  const std::int64_t whole_blocks = width / kWarp;  // the bug: the partial last block is never visited
  for (std::int64_t i = first_warp(); i < rows; i += warp_stride()) {
    const std::int64_t begin = ptr[i], end = ptr[i + 1];
    for (std::int64_t block = 0; block < whole_blocks; ++block) {
      const std::int64_t c = block * kWarp + lane;
      float sum = 0.0f;
      for (std::int64_t p = begin; p < end; ++p) sum += in[static_cast<std::int64_t>(idx[p]) * width + c];
      out[i * width + c] = sum;
    }
  }
}

// The replica-8 kernel: one warp per destination row, no max subtraction before exp.
template <class Offset>
__global__ void softmax_without_max_kernel(std::int64_t rows, const Offset* __restrict__ row_ptr,
                                           const float* __restrict__ logits, std::int64_t heads,
                                           float* __restrict__ alpha) {
  const int lane = threadIdx.x % kWarp;
  for (std::int64_t i = first_warp(); i < rows; i += warp_stride()) {
    const std::int64_t begin = row_ptr[i], end = row_ptr[i + 1];
    for (std::int64_t h = 0; h < heads; ++h) {
      float partial = 0.0f;
      for (std::int64_t k = begin + lane; k < end; k += kWarp) partial += expf(logits[k * heads + h]);
      const float denominator = warp_sum(partial);
      for (std::int64_t k = begin + lane; k < end; k += kWarp) alpha[k * heads + h] = expf(logits[k * heads + h]) / denominator;
    }
  }
}

template <class Offset, class Index, class Perm = std::int64_t>
void launch_gather(GpuContext& ctx, std::int64_t rows, const Offset* ptr, const Index* idx, const float* w,
                   std::int64_t heads, std::int64_t channels, const float* in, float* out,
                   const Perm* perm = nullptr) {
  if (rows == 0 || heads * channels == 0) return;
  gather_kernel<<<blocks_for_warps(rows), kBlockThreads, 0, ctx.stream>>>(rows, ptr, idx, perm, w, heads, channels,
                                                                          in, out);
  GNNCHECK_CUDA_CHECK(cudaGetLastError());
}

template <class Offset, class Index>
void launch_whole_warps(GpuContext& ctx, std::int64_t rows, const Offset* ptr, const Index* idx, std::int64_t width,
                        const float* in, float* out) {
  if (rows == 0 || width < kWarp) return;  // not one whole block of 32: nothing is written
  whole_warps_kernel<<<blocks_for_warps(rows), kBlockThreads, 0, ctx.stream>>>(rows, ptr, idx, width, in, out);
  GNNCHECK_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void gather_rows_unweighted(GpuContext& ctx, DeviceGraph& g, const float* in, std::int64_t width, float* out) {
  launch_gather(ctx, g.n_dst(), g.row_ptr(), g.col_idx(), nullptr, 1, width, in, out);
}

void gather_rows_weighted(GpuContext& ctx, DeviceGraph& g, const float* w, std::int64_t heads, const float* in,
                          std::int64_t channels, float* out) {
  launch_gather(ctx, g.n_dst(), g.row_ptr(), g.col_idx(), w, heads, channels, in, out);
}

void gather_columns_unshuffled(GpuContext& ctx, DeviceGraph& g, const float* w, std::int64_t heads, const float* in,
                               std::int64_t channels, float* out) {
  g.ensure_csc(ctx);
  launch_gather(ctx, g.n_src(), g.col_ptr(ctx), g.row_idx(ctx), w, heads, channels, in, out);
}

void gather_columns_shuffled(GpuContext& ctx, DeviceGraph& g, const float* w, std::int64_t heads, const float* in,
                             std::int64_t channels, float* out) {
  g.ensure_csc(ctx);
  launch_gather(ctx, g.n_src(), g.col_ptr(ctx), g.row_idx(ctx), w, heads, channels, in, out, g.edge_perm(ctx));
}

void edge_softmax_without_max(GpuContext& ctx, DeviceGraph& g, const float* logits, std::int64_t heads, float* alpha) {
  if (g.num_edges() * heads == 0) return;
  softmax_without_max_kernel<<<blocks_for_warps(g.n_dst()), kBlockThreads, 0, ctx.stream>>>(g.n_dst(), g.row_ptr(),
                                                                                            logits, heads, alpha);
  GNNCHECK_CUDA_CHECK(cudaGetLastError());
}

void aggregate_whole_warps_forward(GpuContext& ctx, DeviceGraph& g, const float* in, std::int64_t width, float* out) {
  launch_whole_warps(ctx, g.n_dst(), g.row_ptr(), g.col_idx(), width, in, out);
}

void aggregate_whole_warps_backward(GpuContext& ctx, DeviceGraph& g, const float* in, std::int64_t width, float* out) {
  g.ensure_csc(ctx);
  launch_whole_warps(ctx, g.n_src(), g.col_ptr(ctx), g.row_idx(ctx), width, in, out);
}

}  // namespace gnncheck::gpu_replicas
