// gnncheck/gpu/degree_norm.cuh — degree normalizations fused with aggregation on the GPU
// (definitions: oracle/degree_norm.h).
//
//   symmetric:  Y = D_dst^-½ · A · D_src^-½ · X     row_mean:  Y = D_dst^-1 · A · X
// The per-node factors (in-degree of each destination from row_ptr, out-degree of each source
// counted over col_idx) are computed on the device; a zero degree gets factor 0 (its node has no
// edges). The forward is ONE pass of gpu/aggregate.cuh with the source factor applied to each
// gathered row and the destination factor to the sum — no normalized edge values are stored.
// The backward grad_X = D_src^-½ · Aᵀ · (D_dst^-½ · grad_Y) (row_mean: Aᵀ · D_dst^-1 · grad_Y) is
// the same kernel over the CSC with the factors' roles swapped — again one pass, no scaled copy.
//
//   normalized_spmm_forward(ctx, dg, gpu::DegreeNorm::symmetric, d_x, f, d_y);
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu {

// The two normalizations of oracle/degree_norm.h (a separate enum so that .cu files need no
// oracle header; gpu_systems.cpp converts).
enum class DegreeNorm { symmetric, row_mean };

struct DegreeFactors {
  DeviceBuffer<float> dst;  // [n_dst]: in_degree^-½ (symmetric) or in_degree^-1 (row_mean)
  DeviceBuffer<float> src;  // [n_src]: out_degree^-½ (symmetric); empty for row_mean (factor 1)
};
DegreeFactors degree_factors(GpuContext& ctx, DeviceGraph& g, DegreeNorm norm);

// The normalized edge values ŵ_e = dst[row_e] · src[col_e] as an [E] tensor (the unfused form).
void degree_norm_edge_values(GpuContext& ctx, DeviceGraph& g, DegreeNorm norm, float* values);

void normalized_spmm_forward(GpuContext& ctx, DeviceGraph& g, DegreeNorm norm, const float* x, std::int64_t f,
                             float* y);
void normalized_spmm_backward(GpuContext& ctx, DeviceGraph& g, DegreeNorm norm, const float* grad_y,
                              std::int64_t f, float* grad_x);

}  // namespace gnncheck::gpu
