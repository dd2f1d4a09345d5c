#include "gpu/sddmm.cuh"

#include "gpu/aggregate.cuh"
#include "gpu/cusparse_ops.h"
#include "gpu/elementwise.cuh"
#include "gpu/launch.cuh"
#include "gpu/spmm_ve.cuh"

namespace gnncheck::gpu {
namespace {

using namespace detail;

__global__ void sddmm_dot_kernel(std::int64_t edges, const node_t* __restrict__ row_of_edge,
                                 const node_t* __restrict__ col_idx, const float* __restrict__ u,
                                 const float* __restrict__ v, std::int64_t heads, std::int64_t channels,
                                 float* __restrict__ e) {
  const int lane = threadIdx.x % warp_size;
  const std::int64_t width = heads * channels;
  for (std::int64_t k = global_warp(); k < edges; k += warp_count()) {
    const float* u_row = u + static_cast<std::int64_t>(row_of_edge[k]) * width;
    const float* v_row = v + static_cast<std::int64_t>(col_idx[k]) * width;
    for (std::int64_t h = 0; h < heads; ++h) {
      float partial = 0.0f;
      for (std::int64_t c = lane; c < channels; c += warp_size) partial += u_row[h * channels + c] * v_row[h * channels + c];
      const float total = warp_sum(partial);
      if (lane == 0) e[k * heads + h] = total;
    }
  }
}

__global__ void sddmm_add_kernel(std::int64_t edges, const node_t* __restrict__ row_of_edge,
                                 const node_t* __restrict__ col_idx, const float* __restrict__ a,
                                 const float* __restrict__ b, std::int64_t heads, float* __restrict__ e) {
  const std::int64_t n = edges * heads;
  for (std::int64_t t = global_thread(); t < n; t += thread_count()) {
    const std::int64_t k = t / heads, h = t % heads;
    e[t] = a[static_cast<std::int64_t>(row_of_edge[k]) * heads + h] + b[static_cast<std::int64_t>(col_idx[k]) * heads + h];
  }
}

// out[i, h] = Σ_{p ∈ [ptr[i], ptr[i+1])} x[perm ? perm[p] : p, h]; one thread per (row, head).
__global__ void segment_sums_kernel(std::int64_t rows, const offset_t* __restrict__ ptr,
                                    const edge_t* __restrict__ perm, const float* __restrict__ x, std::int64_t heads,
                                    float* __restrict__ out) {
  const std::int64_t n = rows * heads;
  for (std::int64_t t = global_thread(); t < n; t += thread_count()) {
    const std::int64_t i = t / heads, h = t % heads;
    float acc = 0.0f;
    for (offset_t p = ptr[i]; p < ptr[i + 1]; ++p) acc += x[(perm ? perm[p] : p) * heads + h];
    out[t] = acc;
  }
}

void segment_sums(GpuContext& ctx, std::int64_t rows, const offset_t* ptr, const edge_t* perm, const float* x,
                  std::int64_t heads, float* out) {
  if (rows * heads == 0) return;
  segment_sums_kernel<<<blocks_for_threads(rows * heads), block_threads, 0, ctx.stream>>>(rows, ptr, perm, x, heads,
                                                                                          out);
  GNNCHECK_CHECK_LAUNCH();
}

}  // namespace

void sddmm_dot_forward(GpuContext& ctx, DeviceGraph& g, const float* u, const float* v, std::int64_t heads,
                       std::int64_t channels, float* e) {
  const std::int64_t edges = g.num_edges();
  if (edges * heads == 0) return;
  sddmm_dot_kernel<<<blocks_for_warps(edges), block_threads, 0, ctx.stream>>>(edges, g.row_of_edge(ctx), g.col_idx(),
                                                                              u, v, heads, channels, e);
  GNNCHECK_CHECK_LAUNCH();
}

void sddmm_dot_backward(GpuContext& ctx, DeviceGraph& g, const float* u, const float* v, std::int64_t heads,
                        std::int64_t channels, const float* grad_e, float* grad_u, float* grad_v) {
  if (grad_u) spmm_ve_forward(ctx, g, grad_e, heads, v, channels, grad_u, ForwardMethod::row_kernel);
  if (grad_v) spmm_ve_transposed_forward(ctx, g, grad_e, heads, u, channels, grad_v, TransposeMethod::fused_csc_kernel);
}

void sddmm_add_forward(GpuContext& ctx, DeviceGraph& g, const float* a, const float* b, std::int64_t heads, float* e) {
  const std::int64_t edges = g.num_edges();
  if (edges * heads == 0) return;
  sddmm_add_kernel<<<blocks_for_threads(edges * heads), block_threads, 0, ctx.stream>>>(edges, g.row_of_edge(ctx),
                                                                                        g.col_idx(), a, b, heads, e);
  GNNCHECK_CHECK_LAUNCH();
}

void sddmm_add_backward(GpuContext& ctx, DeviceGraph& g, const float* grad_e, std::int64_t heads, float* grad_a,
                        float* grad_b) {
  if (grad_a) segment_sums(ctx, g.n_dst(), g.row_ptr(), nullptr, grad_e, heads, grad_a);
  if (grad_b) segment_sums(ctx, g.n_src(), g.col_ptr(ctx), g.edge_perm(ctx), grad_e, heads, grad_b);
}

void sddmm_dot_cusparse(GpuContext& ctx, DeviceGraph& g, const float* u, const float* v, std::int64_t heads,
                        std::int64_t channels, float* e) {
  const CsrView pattern{g.n_dst(), g.n_src(), g.num_edges(), g.cusparse_row_ptr(ctx), g.col_idx(), nullptr};
  csr_sddmm_per_head(ctx, pattern, u, v, heads, channels, e);
}

}  // namespace gnncheck::gpu
