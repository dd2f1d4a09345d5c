#include "gpu/eshuffle.cuh"

#include "gpu/launch.cuh"

namespace gnncheck::gpu {
namespace {

using namespace detail;

// gather = true: out[p] = x[perm[p]]; false: out[perm[p]] = x[p]. One thread per (position, head).
__global__ void permute_rows_kernel(std::int64_t positions, std::int64_t heads, const edge_t* __restrict__ perm,
                                    bool gather, const float* __restrict__ x, float* __restrict__ out) {
  const std::int64_t n = positions * heads;
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) {
    const std::int64_t p = k / heads, h = k % heads;
    const std::int64_t e = perm[p];
    if (gather) out[k] = x[e * heads + h];
    else out[e * heads + h] = x[k];
  }
}

void permute_rows(GpuContext& ctx, DeviceGraph& g, const float* x, std::int64_t heads, bool gather, float* out) {
  const std::int64_t n = g.num_edges() * heads;
  if (n == 0) return;
  permute_rows_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(g.num_edges(), heads,
                                                                               g.edge_perm(ctx), gather, x, out);
  GNNCHECK_CHECK_LAUNCH();
}

}  // namespace

void eshuffle_forward(GpuContext& ctx, DeviceGraph& g, const float* x, std::int64_t heads, float* out) {
  permute_rows(ctx, g, x, heads, /*gather=*/true, out);
}

void eshuffle_inverse_forward(GpuContext& ctx, DeviceGraph& g, const float* x, std::int64_t heads, float* out) {
  permute_rows(ctx, g, x, heads, /*gather=*/false, out);
}

}  // namespace gnncheck::gpu
