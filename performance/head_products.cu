#include "performance/head_products.cuh"

#include "gpu/launch.cuh"

namespace gnncheck::perf {
namespace {

using namespace gpu::detail;

__global__ void add_head_products_kernel(std::int64_t rows, std::int64_t heads, std::int64_t channels,
                                         const float* __restrict__ g, const float* __restrict__ a,
                                         float* __restrict__ grad_x) {
  const std::int64_t n = rows * heads * channels;
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) {
    const std::int64_t hc = k % (heads * channels);
    grad_x[k] += g[(k / (heads * channels)) * heads + hc / channels] * a[hc];
  }
}

}  // namespace

void add_head_products(gpu::GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels,
                       const float* g, const float* a, float* grad_x) {
  if (rows * heads * channels == 0) return;
  add_head_products_kernel<<<blocks_for_threads(rows * heads * channels), block_threads, 0, ctx.stream>>>(
      rows, heads, channels, g, a, grad_x);
  GNNCHECK_CHECK_LAUNCH();
}

}  // namespace gnncheck::perf
