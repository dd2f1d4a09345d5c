#include "gpu/elementwise.cuh"

#include "gpu/launch.cuh"

namespace gnncheck::gpu {
namespace {

using namespace detail;

__global__ void gather_column_kernel(std::int64_t n, std::int64_t stride, std::int64_t offset,
                                     const float* __restrict__ in, float* __restrict__ out) {
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) out[k] = in[k * stride + offset];
}
__global__ void scatter_column_kernel(std::int64_t n, std::int64_t stride, std::int64_t offset,
                                      const float* __restrict__ in, float* __restrict__ out) {
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) out[k * stride + offset] = in[k];
}
// in and out may alias: no __restrict__.
__global__ void scale_groups_kernel(std::int64_t groups, std::int64_t group_size, const float* factors,
                                    const float* in, float* out) {
  const std::int64_t n = groups * group_size;
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) out[k] = factors[k / group_size] * in[k];
}
__global__ void axpby_kernel(std::int64_t n, float a, const float* x, float b, float* y) {
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) y[k] = a * x[k] + b * y[k];
}
__global__ void add_bias_kernel(std::int64_t rows, std::int64_t width, const float* __restrict__ bias,
                                float* __restrict__ y) {
  const std::int64_t n = rows * width;
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) y[k] += bias[k % width];
}
__global__ void column_sums_kernel(std::int64_t rows, std::int64_t width, const float* __restrict__ x,
                                   float* __restrict__ out) {
  for (std::int64_t c = global_thread(); c < width; c += thread_count()) {
    float acc = 0.0f;
    for (std::int64_t i = 0; i < rows; ++i) acc += x[i * width + c];
    out[c] = acc;
  }
}
__global__ void head_sums_kernel(std::int64_t groups, std::int64_t channels, const float* __restrict__ x,
                                 float* __restrict__ out) {
  for (std::int64_t g = global_thread(); g < groups; g += thread_count()) {
    float acc = 0.0f;
    for (std::int64_t c = 0; c < channels; ++c) acc += x[g * channels + c];
    out[g] = acc;
  }
}
__global__ void head_dot_kernel(std::int64_t rows, std::int64_t heads, std::int64_t channels,
                                const float* __restrict__ x, const float* __restrict__ a, float* __restrict__ out) {
  const std::int64_t groups = rows * heads;
  for (std::int64_t g = global_thread(); g < groups; g += thread_count()) {
    const std::int64_t h = g % heads;
    float acc = 0.0f;
    for (std::int64_t c = 0; c < channels; ++c) acc += x[g * channels + c] * a[h * channels + c];
    out[g] = acc;
  }
}
__global__ void head_dot_grad_x_kernel(std::int64_t rows, std::int64_t heads, std::int64_t channels,
                                       const float* __restrict__ a, const float* __restrict__ g, bool accumulate,
                                       float* __restrict__ grad_x) {
  const std::int64_t n = rows * heads * channels;
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) {
    const std::int64_t group = k / channels, c = k % channels, h = group % heads;
    const float v = g[group] * a[h * channels + c];
    grad_x[k] = accumulate ? grad_x[k] + v : v;
  }
}
__global__ void head_dot_grad_a_kernel(std::int64_t rows, std::int64_t heads, std::int64_t channels,
                                       const float* __restrict__ x, const float* __restrict__ g,
                                       float* __restrict__ grad_a) {
  const std::int64_t n = heads * channels;
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) {
    const std::int64_t h = k / channels, c = k % channels;
    float acc = 0.0f;
    for (std::int64_t i = 0; i < rows; ++i) acc += g[i * heads + h] * x[(i * heads + h) * channels + c];
    grad_a[k] = acc;
  }
}
__global__ void leaky_relu_kernel(std::int64_t n, float slope, const float* in, float* out) {
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) out[k] = in[k] > 0.0f ? in[k] : slope * in[k];
}
__global__ void leaky_relu_backward_kernel(std::int64_t n, float slope, const float* __restrict__ in,
                                           const float* grad_out, float* grad_in) {
  for (std::int64_t k = global_thread(); k < n; k += thread_count())
    grad_in[k] = in[k] > 0.0f ? grad_out[k] : slope * grad_out[k];
}

__global__ void mean_over_heads_kernel(std::int64_t rows, std::int64_t heads, std::int64_t channels,
                                       const float* __restrict__ in, float* __restrict__ out) {
  const std::int64_t n = rows * channels;
  const float inv_heads = 1.0f / static_cast<float>(heads);
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) {
    const std::int64_t i = k / channels, c = k % channels;
    float acc = 0.0f;
    for (std::int64_t h = 0; h < heads; ++h) acc += inv_heads * in[(i * heads + h) * channels + c];
    out[k] = acc;
  }
}
__global__ void mean_over_heads_backward_kernel(std::int64_t rows, std::int64_t heads, std::int64_t channels,
                                                const float* __restrict__ grad_out, float* __restrict__ grad_in) {
  const std::int64_t n = rows * heads * channels;
  const float inv_heads = 1.0f / static_cast<float>(heads);
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) {
    const std::int64_t c = k % channels, i = k / (heads * channels);
    grad_in[k] = inv_heads * grad_out[i * channels + c];
  }
}
// One warp per row.
__global__ void row_normalize_kernel(std::int64_t rows, std::int64_t width, float floor, const float* __restrict__ x,
                                     float* __restrict__ out, float* __restrict__ divisor) {
  const int lane = threadIdx.x % warp_size;
  for (std::int64_t i = global_warp(); i < rows; i += warp_count()) {
    float partial = 0.0f;
    for (std::int64_t c = lane; c < width; c += warp_size) partial += x[i * width + c] * x[i * width + c];
    const float d = fmaxf(sqrtf(warp_sum(partial)), floor);
    for (std::int64_t c = lane; c < width; c += warp_size) out[i * width + c] = x[i * width + c] / d;
    if (lane == 0) divisor[i] = d;
  }
}
__global__ void row_normalize_backward_kernel(std::int64_t rows, std::int64_t width, float floor,
                                              const float* __restrict__ n, const float* __restrict__ divisor,
                                              const float* __restrict__ grad_n, float* __restrict__ grad_x) {
  const int lane = threadIdx.x % warp_size;
  for (std::int64_t i = global_warp(); i < rows; i += warp_count()) {
    const float d = divisor[i];
    const bool at_floor = !(d > floor);
    float partial = 0.0f;
    if (!at_floor)
      for (std::int64_t c = lane; c < width; c += warp_size) partial += n[i * width + c] * grad_n[i * width + c];
    const float projection = warp_sum(partial);
    for (std::int64_t c = lane; c < width; c += warp_size)
      grad_x[i * width + c] += (grad_n[i * width + c] - projection * n[i * width + c]) / d;
  }
}

}  // namespace

void mean_over_heads(GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels, const float* in,
                     float* out) {
  if (rows * channels == 0) return;
  mean_over_heads_kernel<<<blocks_for_threads(rows * channels), block_threads, 0, ctx.stream>>>(rows, heads, channels,
                                                                                                in, out);
  GNNCHECK_CHECK_LAUNCH();
}
void mean_over_heads_backward(GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels,
                              const float* grad_out, float* grad_in) {
  if (rows * heads * channels == 0) return;
  mean_over_heads_backward_kernel<<<blocks_for_threads(rows * heads * channels), block_threads, 0, ctx.stream>>>(
      rows, heads, channels, grad_out, grad_in);
  GNNCHECK_CHECK_LAUNCH();
}
void row_normalize(GpuContext& ctx, std::int64_t rows, std::int64_t width, float floor, const float* x, float* out,
                   float* divisor) {
  if (rows == 0) return;
  row_normalize_kernel<<<blocks_for_warps(rows), block_threads, 0, ctx.stream>>>(rows, width, floor, x, out, divisor);
  GNNCHECK_CHECK_LAUNCH();
}
void row_normalize_backward_add(GpuContext& ctx, std::int64_t rows, std::int64_t width, float floor,
                                const float* normalized, const float* divisor, const float* grad_normalized,
                                float* grad_x) {
  if (rows == 0) return;
  row_normalize_backward_kernel<<<blocks_for_warps(rows), block_threads, 0, ctx.stream>>>(
      rows, width, floor, normalized, divisor, grad_normalized, grad_x);
  GNNCHECK_CHECK_LAUNCH();
}

void gather_column(GpuContext& ctx, std::int64_t n, std::int64_t stride, std::int64_t offset, const float* in,
                   float* out) {
  if (n == 0) return;
  gather_column_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(n, stride, offset, in, out);
  GNNCHECK_CHECK_LAUNCH();
}
void scatter_column(GpuContext& ctx, std::int64_t n, std::int64_t stride, std::int64_t offset, const float* in,
                    float* out) {
  if (n == 0) return;
  scatter_column_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(n, stride, offset, in, out);
  GNNCHECK_CHECK_LAUNCH();
}
void scale_rows(GpuContext& ctx, std::int64_t rows, std::int64_t width, const float* factors, const float* in,
                float* out) {
  if (rows * width == 0) return;
  scale_groups_kernel<<<blocks_for_threads(rows * width), block_threads, 0, ctx.stream>>>(rows, width, factors, in,
                                                                                          out);
  GNNCHECK_CHECK_LAUNCH();
}
void scale_heads(GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels, const float* factors,
                 const float* in, float* out) {
  if (rows * heads * channels == 0) return;
  scale_groups_kernel<<<blocks_for_threads(rows * heads * channels), block_threads, 0, ctx.stream>>>(
      rows * heads, channels, factors, in, out);
  GNNCHECK_CHECK_LAUNCH();
}
void axpby(GpuContext& ctx, std::int64_t n, float a, const float* x, float b, float* y) {
  if (n == 0) return;
  axpby_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(n, a, x, b, y);
  GNNCHECK_CHECK_LAUNCH();
}
void add_bias(GpuContext& ctx, std::int64_t rows, std::int64_t width, const float* bias, float* y) {
  if (rows * width == 0) return;
  add_bias_kernel<<<blocks_for_threads(rows * width), block_threads, 0, ctx.stream>>>(rows, width, bias, y);
  GNNCHECK_CHECK_LAUNCH();
}
void column_sums(GpuContext& ctx, std::int64_t rows, std::int64_t width, const float* grad_y, float* grad_bias) {
  if (width == 0) return;
  column_sums_kernel<<<blocks_for_threads(width), block_threads, 0, ctx.stream>>>(rows, width, grad_y, grad_bias);
  GNNCHECK_CHECK_LAUNCH();
}
void head_sums(GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels, const float* x,
               float* out) {
  if (rows * heads == 0) return;
  head_sums_kernel<<<blocks_for_threads(rows * heads), block_threads, 0, ctx.stream>>>(rows * heads, channels, x,
                                                                                       out);
  GNNCHECK_CHECK_LAUNCH();
}
void head_dot(GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels, const float* x,
              const float* a, float* out) {
  if (rows * heads == 0) return;
  head_dot_kernel<<<blocks_for_threads(rows * heads), block_threads, 0, ctx.stream>>>(rows, heads, channels, x, a,
                                                                                      out);
  GNNCHECK_CHECK_LAUNCH();
}
void head_dot_backward(GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels, const float* x,
                       const float* a, const float* g, bool accumulate_grad_x, float* grad_x, float* grad_a) {
  if (rows * heads * channels > 0) {
    head_dot_grad_x_kernel<<<blocks_for_threads(rows * heads * channels), block_threads, 0, ctx.stream>>>(
        rows, heads, channels, a, g, accumulate_grad_x, grad_x);
    GNNCHECK_CHECK_LAUNCH();
  }
  if (heads * channels > 0) {
    head_dot_grad_a_kernel<<<blocks_for_threads(heads * channels), block_threads, 0, ctx.stream>>>(rows, heads,
                                                                                                  channels, x, g, grad_a);
    GNNCHECK_CHECK_LAUNCH();
  }
}
void leaky_relu_forward(GpuContext& ctx, std::int64_t n, float slope, const float* in, float* out) {
  if (n == 0) return;
  leaky_relu_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(n, slope, in, out);
  GNNCHECK_CHECK_LAUNCH();
}
void leaky_relu_backward(GpuContext& ctx, std::int64_t n, float slope, const float* in, const float* grad_out,
                         float* grad_in) {
  if (n == 0) return;
  leaky_relu_backward_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(n, slope, in, grad_out,
                                                                                      grad_in);
  GNNCHECK_CHECK_LAUNCH();
}
void relu_forward(GpuContext& ctx, std::int64_t n, const float* in, float* out) {
  leaky_relu_forward(ctx, n, 0.0f, in, out);
}
void relu_backward(GpuContext& ctx, std::int64_t n, const float* in, const float* grad_out, float* grad_in) {
  leaky_relu_backward(ctx, n, 0.0f, in, grad_out, grad_in);
}

}  // namespace gnncheck::gpu
