#include "gpu/benchmarks/reddit_training.cuh"

#include <algorithm>
#include <cmath>

#include "gpu/cuda_check.h"

namespace gnncheck::perf {
namespace {

constexpr int threads = 256;
constexpr int warp = 32;

unsigned blocks_for(std::int64_t work) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((work + threads - 1) / threads, 1, 65535ll * 16));
}

__global__ void cross_entropy_kernel(std::int64_t rows, std::int64_t classes, const float* __restrict__ logits,
                                     const std::int32_t* __restrict__ labels, const std::uint8_t* __restrict__ mask,
                                     float inv_count, float* __restrict__ loss, float* __restrict__ grad) {
  const int lane = threadIdx.x % warp;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / warp;
  for (std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / warp; i < rows;
       i += warps) {
    const float* z = logits + i * classes;
    float* g = grad + i * classes;
    if (!mask[i]) {
      for (std::int64_t c = lane; c < classes; c += warp) g[c] = 0.0f;
      continue;
    }
    float row_max = -INFINITY;
    for (std::int64_t c = lane; c < classes; c += warp) row_max = fmaxf(row_max, z[c]);
    for (int o = warp / 2; o > 0; o /= 2) row_max = fmaxf(row_max, __shfl_xor_sync(0xffffffffu, row_max, o));
    float sum = 0.0f;
    for (std::int64_t c = lane; c < classes; c += warp) sum += expf(z[c] - row_max);
    for (int o = warp / 2; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    const int label = labels[i];
    for (std::int64_t c = lane; c < classes; c += warp)
      g[c] = inv_count * (expf(z[c] - row_max) / sum - (c == label ? 1.0f : 0.0f));
    if (lane == 0) atomicAdd(loss, inv_count * (logf(sum) + row_max - z[label]));
  }
}

__global__ void adam_kernel(std::int64_t n, float learning_rate, float beta1, float beta2, float epsilon,
                            float bias_correction1, float bias_correction2, float* __restrict__ param,
                            const float* __restrict__ grad, float* __restrict__ m, float* __restrict__ v) {
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float g = grad[k];
    m[k] = beta1 * m[k] + (1.0f - beta1) * g;
    v[k] = beta2 * v[k] + (1.0f - beta2) * g * g;
    param[k] -= learning_rate * (m[k] / bias_correction1) / (sqrtf(v[k] / bias_correction2) + epsilon);
  }
}

}  // namespace

void softmax_cross_entropy(gpu::GpuContext& ctx, std::int64_t rows, std::int64_t classes, const float* logits,
                           const std::int32_t* labels, const std::uint8_t* mask, std::int64_t train_count,
                           float* loss, float* grad) {
  GNNCHECK_CUDA_CHECK(cudaMemsetAsync(loss, 0, sizeof(float), ctx.stream));
  if (rows == 0 || classes == 0) return;
  const float inv_count = train_count > 0 ? 1.0f / static_cast<float>(train_count) : 0.0f;
  cross_entropy_kernel<<<blocks_for(rows * warp), threads, 0, ctx.stream>>>(rows, classes, logits, labels, mask,
                                                                             inv_count, loss, grad);
  GNNCHECK_CUDA_CHECK(cudaGetLastError());
}

void adam_step(gpu::GpuContext& ctx, std::int64_t n, float learning_rate, float beta1, float beta2, float epsilon,
               int step, float* param, const float* grad, float* m, float* v) {
  if (n == 0) return;
  const float c1 = 1.0f - std::pow(beta1, static_cast<float>(step));
  const float c2 = 1.0f - std::pow(beta2, static_cast<float>(step));
  adam_kernel<<<blocks_for(n), threads, 0, ctx.stream>>>(n, learning_rate, beta1, beta2, epsilon, c1, c2, param, grad,
                                                         m, v);
  GNNCHECK_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gnncheck::perf
