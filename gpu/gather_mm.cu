#include "gpu/gather_mm.cuh"

#include "gpu/launch.cuh"

namespace gnncheck::gpu {
namespace {

using namespace detail;

// An edge's relation: its type is an integer stored as a float (exact below 2^24).
__device__ __forceinline__ std::int64_t relation_of(const float* __restrict__ types, std::int64_t k) {
  return static_cast<std::int64_t>(types[k]);
}

// y[k, o] = Σ_f x[k, f] · w[t_k, f, o].
__global__ void forward_kernel(std::int64_t edges, std::int64_t in, std::int64_t out, const float* __restrict__ types,
                               const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y) {
  const std::int64_t n = edges * out;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t k = id / out, o = id % out;
    const float* wt = w + relation_of(types, k) * in * out;
    float sum = 0.0f;
    for (std::int64_t f = 0; f < in; ++f) sum += x[k * in + f] * wt[f * out + o];
    y[id] = sum;
  }
}

// grad_x[k, f] = Σ_o grad_y[k, o] · w[t_k, f, o]: w[t_k]ᵀ.
__global__ void grad_x_kernel(std::int64_t edges, std::int64_t in, std::int64_t out, const float* __restrict__ types,
                              const float* __restrict__ w, const float* __restrict__ grad_y, float* __restrict__ grad_x) {
  const std::int64_t n = edges * in;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t k = id / in, f = id % in;
    const float* wt = w + relation_of(types, k) * in * out;
    float sum = 0.0f;
    for (std::int64_t o = 0; o < out; ++o) sum += grad_y[k * out + o] * wt[f * out + o];
    grad_x[id] = sum;
  }
}

// grad_w[r, f, o] = Σ_{k: t_k = r} x[k, f] · grad_y[k, o], in edge-id order; a relation no edge has gets 0.
__global__ void grad_w_kernel(std::int64_t edges, std::int64_t relations, std::int64_t in, std::int64_t out,
                              const float* __restrict__ types, const float* __restrict__ x,
                              const float* __restrict__ grad_y, float* __restrict__ grad_w) {
  const std::int64_t n = relations * in * out;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t r = id / (in * out), f = (id / out) % in, o = id % out;
    float sum = 0.0f;
    for (std::int64_t k = 0; k < edges; ++k)
      if (relation_of(types, k) == r) sum += x[k * in + f] * grad_y[k * out + o];
    grad_w[id] = sum;
  }
}

}  // namespace

void gather_mm_forward(GpuContext& ctx, std::int64_t edges, std::int64_t in_features, std::int64_t out_features,
                       const float* x, const float* types, const float* w, float* y) {
  const std::int64_t n = edges * out_features;
  if (n == 0) return;
  forward_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(edges, in_features, out_features, types, x, w,
                                                                          y);
  GNNCHECK_CHECK_LAUNCH();
}

void gather_mm_backward(GpuContext& ctx, std::int64_t edges, std::int64_t relations, std::int64_t in_features,
                        std::int64_t out_features, const float* x, const float* types, const float* w,
                        const float* grad_y, float* grad_x, float* grad_w) {
  const std::int64_t nx = edges * in_features;
  if (grad_x && nx > 0) {
    grad_x_kernel<<<blocks_for_threads(nx), block_threads, 0, ctx.stream>>>(edges, in_features, out_features, types, w,
                                                                            grad_y, grad_x);
    GNNCHECK_CHECK_LAUNCH();
  }
  // Every element is written, a relation with no edge (or a graph with none) included: its sum is 0.
  const std::int64_t nw = relations * in_features * out_features;
  if (grad_w && nw > 0) {
    grad_w_kernel<<<blocks_for_threads(nw), block_threads, 0, ctx.stream>>>(edges, relations, in_features, out_features,
                                                                            types, x, grad_y, grad_w);
    GNNCHECK_CHECK_LAUNCH();
  }
}

}  // namespace gnncheck::gpu
