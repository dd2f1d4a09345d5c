#include "gpu/gsddmm.cuh"

#include "gpu/broadcast_operands.cuh"
#include "gpu/launch.cuh"

namespace gnncheck::gpu {
namespace {

using namespace detail;

// The flat index of edge k's value of an operand on `rows`, for column c (oracle::GsddmmOperands).
__device__ __forceinline__ std::int64_t operand_index(const GsddmmShape& s, OperandRows rows,
                                                      const BroadcastOperand& o, const node_t* row_of_edge,
                                                      const node_t* col_idx, std::int64_t k, std::int64_t c) {
  std::int64_t row = k;
  if (rows == OperandRows::u) row = col_idx[k];
  else if (rows == OperandRows::v) row = row_of_edge[k];
  return row * o.columns + operand_column(o, c, s.features);
}

__global__ void gsddmm_forward_kernel(GsddmmShape s, std::int64_t edges, const node_t* __restrict__ row_of_edge,
                                      const node_t* __restrict__ col_idx, const float* __restrict__ lhs,
                                      const float* __restrict__ rhs, float* __restrict__ out) {
  const std::int64_t out_width = s.dot ? s.heads : s.heads * s.features, n = edges * out_width;
  const std::int64_t terms = s.dot ? s.features : 1;
  for (std::int64_t t = global_thread(); t < n; t += thread_count()) {
    const std::int64_t k = t / out_width, o = t % out_width;
    float acc = 0.0f;
    for (std::int64_t c = o * terms; c < (o + 1) * terms; ++c) {
      const float l = lhs ? lhs[operand_index(s, s.lhs_rows, s.lhs, row_of_edge, col_idx, k, c)] : 0.0f;
      const float r = rhs ? rhs[operand_index(s, s.rhs_rows, s.rhs, row_of_edge, col_idx, k, c)] : 0.0f;
      acc += binary_value(s.op, l, r);
    }
    out[t] = acc;
  }
}

__global__ void gsddmm_backward_kernel(GsddmmShape s, std::int64_t edges, const node_t* __restrict__ row_of_edge,
                                       const node_t* __restrict__ col_idx, const float* __restrict__ lhs,
                                       const float* __restrict__ rhs, const float* __restrict__ grad_out,
                                       float* grad_lhs, float* grad_rhs) {
  const std::int64_t width = s.heads * s.features, n = edges * width;
  const std::int64_t terms = s.dot ? s.features : 1;
  for (std::int64_t t = global_thread(); t < n; t += thread_count()) {
    const std::int64_t k = t / width, c = t % width;
    const float g = grad_out[k * (s.dot ? s.heads : width) + c / terms];
    const std::int64_t li = lhs ? operand_index(s, s.lhs_rows, s.lhs, row_of_edge, col_idx, k, c) : 0;
    const std::int64_t ri = rhs ? operand_index(s, s.rhs_rows, s.rhs, row_of_edge, col_idx, k, c) : 0;
    float dl = 0.0f, dr = 0.0f;
    binary_partials(s.op, lhs ? lhs[li] : 0.0f, rhs ? rhs[ri] : 0.0f, dl, dr);
    if (grad_lhs) atomicAdd(grad_lhs + li, g * dl);
    if (grad_rhs) atomicAdd(grad_rhs + ri, g * dr);
  }
}

}  // namespace

void gsddmm_forward(GpuContext& ctx, DeviceGraph& g, const GsddmmShape& config, const float* lhs, const float* rhs,
                    float* out) {
  const std::int64_t n = g.num_edges() * config.out_width();
  if (n == 0) return;
  gsddmm_forward_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(
      config, g.num_edges(), g.row_of_edge(ctx), g.col_idx(), config.uses_lhs() ? lhs : nullptr,
      config.uses_rhs() ? rhs : nullptr, out);
  GNNCHECK_CHECK_LAUNCH();
}

void gsddmm_backward(GpuContext& ctx, DeviceGraph& g, const GsddmmShape& config, const float* lhs, const float* rhs,
                     const float* grad_out, float* grad_lhs, float* grad_rhs) {
  const std::int64_t n = g.num_edges() * config.width();
  if (n == 0) return;
  gsddmm_backward_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(
      config, g.num_edges(), g.row_of_edge(ctx), g.col_idx(), config.uses_lhs() ? lhs : nullptr,
      config.uses_rhs() ? rhs : nullptr, grad_out, config.uses_lhs() ? grad_lhs : nullptr,
      config.uses_rhs() ? grad_rhs : nullptr);
  GNNCHECK_CHECK_LAUNCH();
}

}  // namespace gnncheck::gpu
