#include "gpu/edge_softmax.cuh"

#include <cmath>

#include "gpu/launch.cuh"

namespace gnncheck::gpu {
namespace {

using namespace detail;

__global__ void edge_softmax_kernel(std::int64_t rows, const offset_t* __restrict__ row_ptr,
                                    const float* __restrict__ logits, std::int64_t heads, float* __restrict__ alpha) {
  const int lane = threadIdx.x % warp_size;
  for (std::int64_t i = global_warp(); i < rows; i += warp_count()) {
    const std::int64_t begin = row_ptr[i], end = row_ptr[i + 1];
    for (std::int64_t h = 0; h < heads; ++h) {
      float row_max = -INFINITY;
      for (std::int64_t k = begin + lane; k < end; k += warp_size) row_max = fmaxf(row_max, logits[k * heads + h]);
      row_max = warp_max(row_max);
      float partial = 0.0f;
      for (std::int64_t k = begin + lane; k < end; k += warp_size) partial += expf(logits[k * heads + h] - row_max);
      const float denominator = warp_sum(partial);
      for (std::int64_t k = begin + lane; k < end; k += warp_size)
        alpha[k * heads + h] = expf(logits[k * heads + h] - row_max) / denominator;
    }
  }
}

__global__ void edge_softmax_backward_kernel(std::int64_t rows, const offset_t* __restrict__ row_ptr,
                                             const float* __restrict__ alpha, const float* __restrict__ grad_alpha,
                                             std::int64_t heads, float* __restrict__ grad_logits) {
  const int lane = threadIdx.x % warp_size;
  for (std::int64_t i = global_warp(); i < rows; i += warp_count()) {
    const std::int64_t begin = row_ptr[i], end = row_ptr[i + 1];
    for (std::int64_t h = 0; h < heads; ++h) {
      float partial = 0.0f;
      for (std::int64_t k = begin + lane; k < end; k += warp_size) partial += alpha[k * heads + h] * grad_alpha[k * heads + h];
      const float weighted = warp_sum(partial);
      for (std::int64_t k = begin + lane; k < end; k += warp_size)
        grad_logits[k * heads + h] = alpha[k * heads + h] * (grad_alpha[k * heads + h] - weighted);
    }
  }
}

}  // namespace

void edge_softmax_forward(GpuContext& ctx, DeviceGraph& g, const float* logits, std::int64_t heads, float* alpha) {
  if (g.num_edges() * heads == 0) return;
  edge_softmax_kernel<<<blocks_for_warps(g.n_dst()), block_threads, 0, ctx.stream>>>(g.n_dst(), g.row_ptr(), logits,
                                                                                     heads, alpha);
  GNNCHECK_CHECK_LAUNCH();
}

void edge_softmax_backward(GpuContext& ctx, DeviceGraph& g, const float* alpha, const float* grad_alpha,
                           std::int64_t heads, float* grad_logits) {
  if (g.num_edges() * heads == 0) return;
  edge_softmax_backward_kernel<<<blocks_for_warps(g.n_dst()), block_threads, 0, ctx.stream>>>(
      g.n_dst(), g.row_ptr(), alpha, grad_alpha, heads, grad_logits);
  GNNCHECK_CHECK_LAUNCH();
}

}  // namespace gnncheck::gpu
