// gnncheck/gpu/spmm_ve.cuh — edge-weighted SpMM per head and its transpose on the GPU, forward
// and backward (definitions: oracle/spmm_ve.h).
//
//   spmm_ve:             Y[i,h,:] = Σ_{e ∈ row i} w[e,h] · X[col_e,h,:]      w [E, H], X [n_src, H·C]
//   spmm_ve_transposed:  Z[j,h,:] = Σ_{e : col_e = j} w[e,h] · Y[row_e,h,:]  Y [n_dst, H·C]
//   backward of spmm_ve:  grad_w = sddmm_dot(grad_Y, X), grad_X = spmm_ve_transposed(w, grad_Y)
//   backward of the transpose: grad_w = sddmm_dot(Y, grad_Z), grad_Y = spmm_ve(w, grad_Z)
// The forward uses the ForwardMethod given: the CSR row kernel of gpu/aggregate.cuh (what the
// `gpu` system uses: all heads in one pass, weights read in edge order) or cusparseSpMM, one call
// per head (head h's weights copied to a contiguous [E] buffer, its C columns a column block of
// the row-major [N, H·C] operand, ld = H·C) — the default, and what the `cusparse` system checks.
// The transposed product uses the TransposeMethod given; attention backward uses the fused
// eShuffle+SpMMve kernel (TransposeMethod::fused_csc_kernel), which reads w[edge_perm[p]] while
// walking the CSC, so no shuffled copy of w is made and the sum order is fixed.
//
//   spmm_ve_forward(ctx, dg, d_alpha, heads, d_x, channels, d_y);
//   spmm_ve_backward(ctx, dg, d_alpha, heads, d_x, channels, d_grad_y, d_grad_alpha, d_grad_x);
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"
#include "gpu/spmm.cuh"

namespace gnncheck::gpu {

void spmm_ve_forward(GpuContext& ctx, DeviceGraph& g, const float* w, std::int64_t heads, const float* x,
                     std::int64_t channels, float* y, ForwardMethod method = ForwardMethod::cusparse);
void spmm_ve_transposed_forward(GpuContext& ctx, DeviceGraph& g, const float* w, std::int64_t heads, const float* y,
                                std::int64_t channels, float* z,
                                TransposeMethod method = TransposeMethod::fused_csc_kernel);

// grad_w [E, H] and grad_x [n_src, H·C] are overwritten; either may be nullptr to skip it.
void spmm_ve_backward(GpuContext& ctx, DeviceGraph& g, const float* w, std::int64_t heads, const float* x,
                      std::int64_t channels, const float* grad_y, float* grad_w, float* grad_x,
                      TransposeMethod method = TransposeMethod::fused_csc_kernel);
// grad_w [E, H] and grad_y [n_dst, H·C] are overwritten; either may be nullptr to skip it.
void spmm_ve_transposed_backward(GpuContext& ctx, DeviceGraph& g, const float* w, std::int64_t heads, const float* y,
                                 std::int64_t channels, const float* grad_z, float* grad_w, float* grad_y);

}  // namespace gnncheck::gpu
