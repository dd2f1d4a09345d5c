#include "gpu/segment_mm.cuh"

#include "gpu/launch.cuh"

namespace gnncheck::gpu {
namespace {

using namespace detail;

// y[k, o] = Σ_f x[k, f] · w[i, f, o], i = row_of_edge[k].
__global__ void forward_kernel(std::int64_t edges, std::int64_t in, std::int64_t out,
                               const node_t* __restrict__ row_of_edge, const float* __restrict__ x,
                               const float* __restrict__ w, float* __restrict__ y) {
  const std::int64_t n = edges * out;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t k = id / out, o = id % out;
    const float* wi = w + static_cast<std::int64_t>(row_of_edge[k]) * in * out;
    float sum = 0.0f;
    for (std::int64_t f = 0; f < in; ++f) sum += x[k * in + f] * wi[f * out + o];
    y[id] = sum;
  }
}

// grad_x[k, f] = Σ_o grad_y[k, o] · w[i, f, o]: w[i]ᵀ.
__global__ void grad_x_kernel(std::int64_t edges, std::int64_t in, std::int64_t out,
                              const node_t* __restrict__ row_of_edge, const float* __restrict__ w,
                              const float* __restrict__ grad_y, float* __restrict__ grad_x) {
  const std::int64_t n = edges * in;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t k = id / in, f = id % in;
    const float* wi = w + static_cast<std::int64_t>(row_of_edge[k]) * in * out;
    float sum = 0.0f;
    for (std::int64_t o = 0; o < out; ++o) sum += grad_y[k * out + o] * wi[f * out + o];
    grad_x[id] = sum;
  }
}

// grad_w[i, f, o] = Σ_{k ∈ segment i} x[k, f] · grad_y[k, o], in edge-id order; an empty segment gets 0.
__global__ void grad_w_kernel(std::int64_t n_dst, std::int64_t in, std::int64_t out,
                              const offset_t* __restrict__ row_ptr, const float* __restrict__ x,
                              const float* __restrict__ grad_y, float* __restrict__ grad_w) {
  const std::int64_t n = n_dst * in * out;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t i = id / (in * out), f = (id / out) % in, o = id % out;
    float sum = 0.0f;
    for (offset_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) sum += x[k * in + f] * grad_y[k * out + o];
    grad_w[id] = sum;
  }
}

}  // namespace

void segment_mm_forward(GpuContext& ctx, DeviceGraph& g, std::int64_t in_features, std::int64_t out_features,
                        const float* x, const float* w, float* y) {
  const std::int64_t n = g.num_edges() * out_features;
  if (n == 0) return;
  forward_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(g.num_edges(), in_features, out_features,
                                                                          g.row_of_edge(ctx), x, w, y);
  GNNCHECK_CHECK_LAUNCH();
}

void segment_mm_backward(GpuContext& ctx, DeviceGraph& g, std::int64_t in_features, std::int64_t out_features,
                         const float* x, const float* w, const float* grad_y, float* grad_x, float* grad_w) {
  const std::int64_t nx = g.num_edges() * in_features;
  if (grad_x && nx > 0) {
    grad_x_kernel<<<blocks_for_threads(nx), block_threads, 0, ctx.stream>>>(g.num_edges(), in_features, out_features,
                                                                            g.row_of_edge(ctx), w, grad_y, grad_x);
    GNNCHECK_CHECK_LAUNCH();
  }
  const std::int64_t nw = g.n_dst() * in_features * out_features;
  if (grad_w && nw > 0) {
    grad_w_kernel<<<blocks_for_threads(nw), block_threads, 0, ctx.stream>>>(g.n_dst(), in_features, out_features,
                                                                            g.row_ptr(), x, grad_y, grad_w);
    GNNCHECK_CHECK_LAUNCH();
  }
}

}  // namespace gnncheck::gpu
