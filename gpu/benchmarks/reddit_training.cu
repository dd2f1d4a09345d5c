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

// Block b sums rows [b·chunk, (b+1)·chunk): thread t takes column t % width and every
// (256 / width)-th row from t / width; the block then adds its threads' sums in thread order.
__global__ void column_partials_kernel(std::int64_t rows, std::int64_t heads, std::int64_t channels,
                                       const float* __restrict__ x, const float* __restrict__ w,
                                       float* __restrict__ partials) {
  __shared__ float sums[threads];
  const std::int64_t width = heads * channels;
  const std::int64_t chunk = (rows + gridDim.x - 1) / gridDim.x;
  const std::int64_t begin = blockIdx.x * chunk, end = begin + chunk < rows ? begin + chunk : rows;
  for (std::int64_t col0 = 0; col0 < width; col0 += threads) {
    const std::int64_t cols = width - col0 < threads ? width - col0 : threads;
    const std::int64_t lanes = threads / cols;  // threads per column
    const std::int64_t col = col0 + threadIdx.x % cols, lane = threadIdx.x / cols;
    float acc = 0.0f;
    if (lane < lanes) {
      const std::int64_t h = col / channels;
      for (std::int64_t i = begin + lane; i < end; i += lanes)
        acc += (w ? w[i * heads + h] : 1.0f) * x[i * width + col];
    }
    sums[threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.x < cols) {
      float total = 0.0f;
      for (std::int64_t l = 0; l < lanes; ++l) total += sums[l * cols + threadIdx.x];
      partials[blockIdx.x * width + col0 + threadIdx.x] = total;
    }
    __syncthreads();
  }
}

__global__ void column_totals_kernel(std::int64_t blocks, std::int64_t width, const float* __restrict__ partials,
                                     float* __restrict__ out) {
  for (std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < width;
       c += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float total = 0.0f;
    for (std::int64_t b = 0; b < blocks; ++b) total += partials[b * width + c];
    out[c] = total;
  }
}

__global__ void add_head_products_kernel(std::int64_t rows, std::int64_t heads, std::int64_t channels,
                                         const float* __restrict__ g, const float* __restrict__ a,
                                         float* __restrict__ grad_x) {
  const std::int64_t n = rows * heads * channels;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t hc = k % (heads * channels);
    grad_x[k] += g[(k / (heads * channels)) * heads + hc / channels] * a[hc];
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

void weighted_column_sums(gpu::GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels,
                          const float* x, const float* w, float* partials, float* out) {
  const std::int64_t width = heads * channels;
  if (width == 0) return;
  column_partials_kernel<<<reduction_blocks, threads, 0, ctx.stream>>>(rows, heads, channels, x, w, partials);
  GNNCHECK_CUDA_CHECK(cudaGetLastError());
  column_totals_kernel<<<blocks_for(width), threads, 0, ctx.stream>>>(reduction_blocks, width, partials, out);
  GNNCHECK_CUDA_CHECK(cudaGetLastError());
}

void add_head_products(gpu::GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels,
                       const float* g, const float* a, float* grad_x) {
  if (rows * heads * channels == 0) return;
  add_head_products_kernel<<<blocks_for(rows * heads * channels), threads, 0, ctx.stream>>>(rows, heads, channels, g,
                                                                                           a, grad_x);
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
