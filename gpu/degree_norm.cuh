// gnncheck/gpu/degree_norm.cuh — degree normalizations fused with aggregation on the GPU
// (definitions: oracle/degree_norm.h).
//
//   symmetric:  Y = D_dst^-½ · A · D_src^-½ · X     row_mean:  Y = D_dst^-1 · A · X
// The per-node factors (in-degree of each destination from row_ptr; for each source its out-degree
// counted over col_idx, or with SourceDegree::in its own row's length, 0 beyond n_dst) are computed
// on the device; a zero degree gets factor 0. The forward is ONE pass of gpu/aggregate.cuh with the source factor applied to each
// gathered row and the destination factor to the sum — no normalized edge values are stored.
// The backward grad_X = D_src^-½ · Aᵀ · (D_dst^-½ · grad_Y) (row_mean: Aᵀ · D_dst^-1 · grad_Y) is
// the same kernel over the CSC with the factors' roles swapped — again one pass, no scaled copy.
//
//   normalized_spmm_forward(ctx, dg, gpu::DegreeNorm::symmetric, gpu::SourceDegree::out, d_x, f, d_y);
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu {

// The two normalizations of oracle/degree_norm.h (a separate enum so that .cu files need no
// oracle header; gpu_systems.cpp converts).
enum class DegreeNorm { symmetric, row_mean };
// Which degree scales source j (oracle::SourceDegree): its out-degree, or its in-degree as destination j.
enum class SourceDegree { out, in };
// What a source in-degree of 0 scales by (oracle::ZeroDegree): factor 0, or the degree taken as 1.
enum class ZeroDegree { zero, one };

struct DegreeFactors {
  DeviceBuffer<float> dst;  // [n_dst]: in_degree^-½ (symmetric) or in_degree^-1 (row_mean)
  DeviceBuffer<float> src;  // [n_src]: d_src^-½ (symmetric); empty for row_mean (factor 1)
};
DegreeFactors degree_factors(GpuContext& ctx, DeviceGraph& g, DegreeNorm norm, SourceDegree source_degree,
                             ZeroDegree zero_degree = ZeroDegree::zero);

// The normalized edge values ŵ_e = dst[row_e] · src[col_e] as an [E] tensor (the unfused form).
void degree_norm_edge_values(GpuContext& ctx, DeviceGraph& g, DegreeNorm norm, SourceDegree source_degree,
                             float* values, ZeroDegree zero_degree = ZeroDegree::zero);

void normalized_spmm_forward(GpuContext& ctx, DeviceGraph& g, DegreeNorm norm, SourceDegree source_degree,
                             const float* x, std::int64_t f, float* y, ZeroDegree zero_degree = ZeroDegree::zero);
void normalized_spmm_backward(GpuContext& ctx, DeviceGraph& g, DegreeNorm norm, SourceDegree source_degree,
                              const float* grad_y, std::int64_t f, float* grad_x,
                              ZeroDegree zero_degree = ZeroDegree::zero);

}  // namespace gnncheck::gpu
