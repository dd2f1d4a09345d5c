#include "gpu/training_kernels.cuh"

#include <cmath>

#include "gpu/launch.cuh"
#include "core/splitmix64.h"

namespace gnncheck::gpu {
namespace {

using namespace detail;

constexpr std::int64_t column_chunk_rows = 4096;

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

// One thread per row (classes is small: the models' output widths).
// logits and grad may be the same buffer (no __restrict__): each element is read before it is overwritten.
__global__ void softmax_cross_entropy_kernel(std::int64_t n, std::int64_t classes, const float* logits,
                                             const std::int32_t* __restrict__ labels, float* grad,
                                             double* __restrict__ loss_sum) {
  double thread_loss = 0.0;
  const float inv_n = 1.0f / static_cast<float>(n);
  for (std::int64_t i = global_thread(); i < n; i += thread_count()) {
    const float* row = logits + i * classes;
    float row_max = -INFINITY;
    for (std::int64_t c = 0; c < classes; ++c) row_max = fmaxf(row_max, row[c]);
    float denominator = 0.0f;
    for (std::int64_t c = 0; c < classes; ++c) denominator += expf(row[c] - row_max);
    const std::int32_t label = labels[i];
    thread_loss += static_cast<double>(logf(denominator) - (row[label] - row_max));
    for (std::int64_t c = 0; c < classes; ++c) {
      const float p = expf(row[c] - row_max) / denominator;
      grad[i * classes + c] = (p - (c == label ? 1.0f : 0.0f)) * inv_n;
    }
  }
  // One atomic per warp, not per thread: at 134M rows per-thread atomics on one address serialize.
  for (int offset = warp_size / 2; offset > 0; offset /= 2) thread_loss += __shfl_xor_sync(0xffffffffu, thread_loss, offset);
  if (threadIdx.x % warp_size == 0) atomicAdd(loss_sum, thread_loss);
}

__global__ void chunk_sums_kernel(std::int64_t rows, std::int64_t width, std::int64_t chunks,
                                  const float* __restrict__ x, float* __restrict__ partial) {
  for (std::int64_t t = global_thread(); t < chunks * width; t += thread_count()) {
    const std::int64_t chunk = t / width, c = t % width;
    const std::int64_t chunk_end = (chunk + 1) * column_chunk_rows;
    const std::int64_t end = chunk_end < rows ? chunk_end : rows;
    float acc = 0.0f;
    for (std::int64_t i = chunk * column_chunk_rows; i < end; ++i) acc += x[i * width + c];
    partial[t] = acc;
  }
}

__global__ void sum_chunks_kernel(std::int64_t width, std::int64_t chunks, const float* __restrict__ partial,
                                  float* __restrict__ out) {
  for (std::int64_t c = global_thread(); c < width; c += thread_count()) {
    float acc = 0.0f;
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) acc += partial[chunk * width + c];
    out[c] = acc;
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

double softmax_cross_entropy(GpuContext& ctx, std::int64_t n, std::int64_t classes, const float* logits,
                             const std::int32_t* labels, float* grad) {
  if (n == 0) return 0.0;
  DeviceBuffer<double> loss_sum(ctx.allocator, 1);
  loss_sum.zero(ctx.stream);
  softmax_cross_entropy_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(n, classes, logits, labels,
                                                                                        grad, loss_sum.data());
  GNNCHECK_CHECK_LAUNCH();
  return loss_sum.download(ctx.stream)[0] / static_cast<double>(n);
}

void chunked_column_sums(GpuContext& ctx, std::int64_t rows, std::int64_t width, const float* x, float* out) {
  if (width == 0) return;
  const std::int64_t chunks = std::max<std::int64_t>(1, (rows + column_chunk_rows - 1) / column_chunk_rows);
  DeviceBuffer<float> partial(ctx.allocator, chunks * width);
  chunk_sums_kernel<<<blocks_for_threads(chunks * width), block_threads, 0, ctx.stream>>>(rows, width, chunks, x,
                                                                                         partial.data());
  GNNCHECK_CHECK_LAUNCH();
  sum_chunks_kernel<<<blocks_for_threads(width), block_threads, 0, ctx.stream>>>(width, chunks, partial.data(), out);
  GNNCHECK_CHECK_LAUNCH();
  ctx.synchronize();  // `partial` is freed on return
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
