// gnncheck/gpu/sddmm.cuh — sampled dense-dense products over the edges on the GPU, forward and
// backward (definitions: oracle/sddmm.h).
//
//   sddmm_dot:  e[k,h] = ⟨U[row_k,h,:], V[col_k,h,:]⟩     U [n_dst, H·C], V [n_src, H·C] -> e [E, H]
//   sddmm_add:  e[k,h] = a[row_k,h] + b[col_k,h]           a [n_dst, H],   b [n_src, H]
// Both forwards are edge-parallel over the row-ordered COO (row_of_edge, col_idx): one warp per
// edge for the dot product, one thread per (edge, head) for the sum — no search for an edge's
// row. Backward:
//   sddmm_dot:  grad_U = spmm_ve(grad_e, V), grad_V = spmm_ve_transposed(grad_e, U)
//   sddmm_add:  grad_a = row sums of grad_e (CSR), grad_b = column sums (CSC walk through
//               edge_perm: a fused eShuffle + reduce, fixed order, no atomics)
//
//   sddmm_dot_forward(ctx, dg, d_u, d_v, heads, channels, d_e);
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu {

void sddmm_dot_forward(GpuContext& ctx, DeviceGraph& g, const float* u, const float* v, std::int64_t heads,
                       std::int64_t channels, float* e);
// grad_u [n_dst, H·C], grad_v [n_src, H·C] are overwritten; either may be nullptr.
void sddmm_dot_backward(GpuContext& ctx, DeviceGraph& g, const float* u, const float* v, std::int64_t heads,
                        std::int64_t channels, const float* grad_e, float* grad_u, float* grad_v);

void sddmm_add_forward(GpuContext& ctx, DeviceGraph& g, const float* a, const float* b, std::int64_t heads, float* e);
// grad_a [n_dst, H], grad_b [n_src, H] are overwritten; either may be nullptr.
void sddmm_add_backward(GpuContext& ctx, DeviceGraph& g, const float* grad_e, std::int64_t heads, float* grad_a,
                        float* grad_b);

// sddmm_dot by cusparseSDDMM, one call per head (for the `cusparse` system). Requires
// g.fits_cusparse().
void sddmm_dot_cusparse(GpuContext& ctx, DeviceGraph& g, const float* u, const float* v, std::int64_t heads,
                        std::int64_t channels, float* e);

}  // namespace gnncheck::gpu
