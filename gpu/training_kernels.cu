#include "gpu/training_kernels.cuh"

#include <cmath>

#include "gpu/launch.cuh"
#include "core/splitmix64.h"

namespace gnncheck::gpu {
namespace {

using namespace detail;

__global__ void random_uniform_kernel(std::int64_t n, std::uint64_t seed, float lo, float hi, float* __restrict__ out) {
  const std::uint64_t key = splitmix64(seed);
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) {
    const float u = static_cast<float>(splitmix64(key ^ static_cast<std::uint64_t>(k)) >> 40) * 0x1p-24f;
    out[k] = lo + (hi - lo) * u;
  }
}

__global__ void random_labels_kernel(std::int64_t n, std::uint64_t seed, std::int32_t classes,
                                     std::int32_t* __restrict__ labels) {
  const std::uint64_t key = splitmix64(seed ^ 0x1B873593ull);
  for (std::int64_t k = global_thread(); k < n; k += thread_count())
    labels[k] = static_cast<std::int32_t>(splitmix64(key ^ static_cast<std::uint64_t>(k)) % static_cast<std::uint64_t>(classes));
}

// One warp per row: the lanes stride over the classes and combine by shuffles. logits and grad may be
// the same buffer (no __restrict__): a row's logits are all read (max, sum, the label's) before any
// lane writes that row's gradient, and each lane then reads only the elements it writes. Lane 0 of a
// warp sums its rows' losses in float64 and adds them with one atomic at the end (at 134M rows one
// atomic per row on one address would serialize).
__global__ void softmax_cross_entropy_kernel(std::int64_t rows, std::int64_t classes, const float* logits,
                                             const std::int32_t* __restrict__ labels,
                                             const std::uint8_t* __restrict__ mask, float scale, float* grad,
                                             double* __restrict__ loss_sum) {
  const int lane = static_cast<int>(threadIdx.x % warp_size);
  double warp_loss = 0.0;
  for (std::int64_t i = global_warp(); i < rows; i += warp_count()) {
    const float* z = logits + i * classes;
    float* g = grad + i * classes;
    if (mask && !mask[i]) {
      for (std::int64_t c = lane; c < classes; c += warp_size) g[c] = 0.0f;
      continue;
    }
    float row_max = -INFINITY;
    for (std::int64_t c = lane; c < classes; c += warp_size) row_max = fmaxf(row_max, z[c]);
    row_max = warp_max(row_max);
    float denominator = 0.0f;
    for (std::int64_t c = lane; c < classes; c += warp_size) denominator += expf(z[c] - row_max);
    denominator = warp_sum(denominator);
    const std::int32_t label = labels[i];
    const float label_logit = z[label];
    __syncwarp();  // every lane has read the row before any lane overwrites it (grad == logits)
    if (lane == 0) warp_loss += static_cast<double>(logf(denominator) + row_max - label_logit);
    for (std::int64_t c = lane; c < classes; c += warp_size)
      g[c] = scale * (expf(z[c] - row_max) / denominator - (c == label ? 1.0f : 0.0f));
  }
  if (lane == 0 && warp_loss != 0.0) atomicAdd(loss_sum, warp_loss);
}

// Block b sums rows [b·chunk, (b+1)·chunk): thread t takes column t % width and every
// (256 / width)-th row from t / width; the block then adds its threads' sums in thread order.
__global__ void column_partials_kernel(std::int64_t rows, std::int64_t heads, std::int64_t channels,
                                       const float* __restrict__ x, const float* __restrict__ w,
                                       float* __restrict__ partials) {
  __shared__ float sums[block_threads];
  const std::int64_t width = heads * channels;
  const std::int64_t chunk = (rows + gridDim.x - 1) / gridDim.x;
  const std::int64_t begin = blockIdx.x * chunk, end = begin + chunk < rows ? begin + chunk : rows;
  for (std::int64_t col0 = 0; col0 < width; col0 += block_threads) {
    const std::int64_t cols = width - col0 < block_threads ? width - col0 : block_threads;
    const std::int64_t lanes = block_threads / cols;  // threads per column
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

__global__ void column_totals_kernel(std::int64_t slices, std::int64_t width, const float* __restrict__ partials,
                                     float* __restrict__ out) {
  for (std::int64_t c = global_thread(); c < width; c += thread_count()) {
    float total = 0.0f;
    for (std::int64_t b = 0; b < slices; ++b) total += partials[b * width + c];
    out[c] = total;
  }
}

__global__ void adam_kernel(std::int64_t n, float lr, float beta1, float beta2, float epsilon, float correction1,
                            float correction2, float* __restrict__ param, const float* __restrict__ grad,
                            float* __restrict__ m, float* __restrict__ v) {
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) {
    m[k] = beta1 * m[k] + (1.0f - beta1) * grad[k];
    v[k] = beta2 * v[k] + (1.0f - beta2) * grad[k] * grad[k];
    param[k] -= lr * (m[k] / correction1) / (sqrtf(v[k] / correction2) + epsilon);
  }
}

}  // namespace

void random_uniform(GpuContext& ctx, std::int64_t n, std::uint64_t seed, float lo, float hi, float* out) {
  if (n == 0) return;
  random_uniform_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(n, seed, lo, hi, out);
  GNNCHECK_CHECK_LAUNCH();
}

void random_labels(GpuContext& ctx, std::int64_t n, std::uint64_t seed, std::int32_t classes, std::int32_t* labels) {
  if (n == 0) return;
  random_labels_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(n, seed, classes, labels);
  GNNCHECK_CHECK_LAUNCH();
}

void softmax_cross_entropy(GpuContext& ctx, std::int64_t rows, std::int64_t classes, const float* logits,
                           const std::int32_t* labels, const std::uint8_t* mask, float scale, double* loss_sum,
                           float* grad) {
  GNNCHECK_CUDA_CHECK(cudaMemsetAsync(loss_sum, 0, sizeof(double), ctx.stream));
  if (rows == 0 || classes == 0) return;
  softmax_cross_entropy_kernel<<<blocks_for_warps(rows), block_threads, 0, ctx.stream>>>(
      rows, classes, logits, labels, mask, scale, grad, loss_sum);
  GNNCHECK_CHECK_LAUNCH();
}

double softmax_cross_entropy(GpuContext& ctx, std::int64_t n, std::int64_t classes, const float* logits,
                             const std::int32_t* labels, float* grad) {
  if (n == 0) return 0.0;
  DeviceBuffer<double> loss_sum(ctx.allocator, 1);
  softmax_cross_entropy(ctx, n, classes, logits, labels, nullptr, 1.0f / static_cast<float>(n), loss_sum.data(), grad);
  return loss_sum.download(ctx.stream)[0] / static_cast<double>(n);
}

void weighted_column_sums(GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels,
                          const float* x, const float* w, float* partials, float* out) {
  const std::int64_t width = heads * channels;
  if (width == 0) return;
  column_partials_kernel<<<column_sum_slices, block_threads, 0, ctx.stream>>>(rows, heads, channels, x, w, partials);
  GNNCHECK_CHECK_LAUNCH();
  column_totals_kernel<<<blocks_for_threads(width), block_threads, 0, ctx.stream>>>(column_sum_slices, width, partials,
                                                                                   out);
  GNNCHECK_CHECK_LAUNCH();
}

void column_sums_of_rows(GpuContext& ctx, std::int64_t rows, std::int64_t width, const float* x, float* out) {
  if (width == 0) return;
  DeviceBuffer<float> partials(ctx.allocator, column_sum_slices * width);
  weighted_column_sums(ctx, rows, 1, width, x, nullptr, partials.data(), out);
  ctx.synchronize();  // `partials` is freed on return
}

void adam_step(GpuContext& ctx, const AdamConfig& adam, int step, std::int64_t n, float* param, const float* grad,
               float* m, float* v) {
  if (n == 0) return;
  const float correction1 = 1.0f - std::pow(adam.beta1, static_cast<float>(step));
  const float correction2 = 1.0f - std::pow(adam.beta2, static_cast<float>(step));
  adam_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(n, adam.learning_rate, adam.beta1, adam.beta2,
                                                                       adam.epsilon, correction1, correction2, param,
                                                                       grad, m, v);
  GNNCHECK_CHECK_LAUNCH();
}

}  // namespace gnncheck::gpu
