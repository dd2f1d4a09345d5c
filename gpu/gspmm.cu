#include "gpu/gspmm.cuh"

#include <cmath>

#include "gpu/broadcast_operands.cuh"
#include "gpu/launch.cuh"

namespace gnncheck::gpu {
namespace {

using namespace detail;

__device__ __forceinline__ std::int64_t u_index(const GspmmShape& s, const node_t* col_idx, offset_t k, std::int64_t c) {
  return static_cast<std::int64_t>(col_idx[k]) * s.u.columns + operand_column(s.u, c, s.features);
}
__device__ __forceinline__ std::int64_t e_index(const GspmmShape& s, offset_t k, std::int64_t c) {
  return static_cast<std::int64_t>(k) * s.e.columns + operand_column(s.e, c, s.features);
}
__device__ __forceinline__ float message(const GspmmShape& s, const node_t* col_idx, const float* u, const float* e,
                                         offset_t k, std::int64_t c) {
  return binary_value(s.message, u ? u[u_index(s, col_idx, k, c)] : 0.0f, e ? e[e_index(s, k, c)] : 0.0f);
}
__device__ __forceinline__ bool selects(const GspmmShape& s) {
  return s.reduce == RowReduction::max || s.reduce == RowReduction::min;
}

// The first edge of row [begin, end) whose message is the row's extreme in column c, its message in
// `best` (-1: an empty row).
__device__ offset_t selected_edge(const GspmmShape& s, const node_t* col_idx, const float* u, const float* e,
                                  offset_t begin, offset_t end, std::int64_t c, float& best) {
  const bool max = s.reduce == RowReduction::max;
  offset_t chosen = -1;
  for (offset_t k = begin; k < end; ++k) {
    const float m = message(s, col_idx, u, e, k, c);
    if (chosen < 0 || (max ? m > best : m < best)) best = m, chosen = k;
  }
  return chosen;
}

__global__ void gspmm_forward_kernel(GspmmShape s, std::int64_t n_dst, const offset_t* __restrict__ row_ptr,
                                     const node_t* __restrict__ col_idx, const float* __restrict__ u,
                                     const float* __restrict__ e, float* __restrict__ y) {
  const std::int64_t width = s.heads * s.features, n = n_dst * width;
  for (std::int64_t t = global_thread(); t < n; t += thread_count()) {
    const std::int64_t i = t / width, c = t % width;
    const offset_t begin = row_ptr[i], end = row_ptr[i + 1];
    if (selects(s)) {
      float best = 0.0f;
      if (selected_edge(s, col_idx, u, e, begin, end, c, best) >= 0) y[t] = best;
      else if (s.empty_rows_identity) y[t] = s.reduce == RowReduction::max ? -INFINITY : INFINITY;
      else y[t] = 0.0f;
      continue;
    }
    float acc = 0.0f;
    for (offset_t k = begin; k < end; ++k) acc += message(s, col_idx, u, e, k, c);
    y[t] = s.reduce == RowReduction::mean && end > begin ? acc / static_cast<float>(end - begin) : acc;
  }
}

// Adds g·∂m/∂u and g·∂m/∂e of edge k's message in column c.
__device__ __forceinline__ void add_message_gradient(const GspmmShape& s, const node_t* col_idx, const float* u,
                                                     const float* e, offset_t k, std::int64_t c, float g,
                                                     float* grad_u, float* grad_e) {
  const std::int64_t ui = u ? u_index(s, col_idx, k, c) : 0, ei = e ? e_index(s, k, c) : 0;
  float du = 0.0f, de = 0.0f;
  binary_partials(s.message, u ? u[ui] : 0.0f, e ? e[ei] : 0.0f, du, de);
  if (grad_u) atomicAdd(grad_u + ui, g * du);
  if (grad_e) atomicAdd(grad_e + ei, g * de);
}

__global__ void gspmm_backward_kernel(GspmmShape s, std::int64_t n_dst, const offset_t* __restrict__ row_ptr,
                                      const node_t* __restrict__ col_idx, const float* __restrict__ u,
                                      const float* __restrict__ e, const float* __restrict__ grad_y, float* grad_u,
                                      float* grad_e) {
  const std::int64_t width = s.heads * s.features, n = n_dst * width;
  for (std::int64_t t = global_thread(); t < n; t += thread_count()) {
    const std::int64_t i = t / width, c = t % width;
    const offset_t begin = row_ptr[i], end = row_ptr[i + 1];
    if (end == begin) continue;
    if (selects(s)) {
      float best = 0.0f;
      const offset_t k = selected_edge(s, col_idx, u, e, begin, end, c, best);
      add_message_gradient(s, col_idx, u, e, k, c, grad_y[t], grad_u, grad_e);
      continue;
    }
    const float g = s.reduce == RowReduction::mean ? grad_y[t] / static_cast<float>(end - begin) : grad_y[t];
    for (offset_t k = begin; k < end; ++k) add_message_gradient(s, col_idx, u, e, k, c, g, grad_u, grad_e);
  }
}

}  // namespace

void gspmm_forward(GpuContext& ctx, DeviceGraph& g, const GspmmShape& config, const float* u, const float* e,
                   float* y) {
  const std::int64_t n = g.n_dst() * config.width();
  if (n == 0) return;
  gspmm_forward_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(
      config, g.n_dst(), g.row_ptr(), g.col_idx(), config.uses_u() ? u : nullptr, config.uses_e() ? e : nullptr, y);
  GNNCHECK_CHECK_LAUNCH();
}

void gspmm_backward(GpuContext& ctx, DeviceGraph& g, const GspmmShape& config, const float* u, const float* e,
                    const float* grad_y, float* grad_u, float* grad_e) {
  const std::int64_t n = g.n_dst() * config.width();
  if (n == 0 || g.num_edges() == 0) return;
  gspmm_backward_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(
      config, g.n_dst(), g.row_ptr(), g.col_idx(), config.uses_u() ? u : nullptr, config.uses_e() ? e : nullptr,
      grad_y, config.uses_u() ? grad_u : nullptr, config.uses_e() ? grad_e : nullptr);
  GNNCHECK_CHECK_LAUNCH();
}

}  // namespace gnncheck::gpu
