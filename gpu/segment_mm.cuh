// gnncheck/gpu/segment_mm.cuh — segment matrix multiplication on the GPU, forward and backward
// (definition and conventions: oracle/segment_mm.h): y[k] = x[k] · w[i] for every row k of segment i
// = rows row_ptr[i] … row_ptr[i+1]−1.
//
// Plain float32 loops, one thread per output element: the forward and grad_x one thread per (edge,
// column) with the edge's segment from row_of_edge; grad_w one thread per (segment, f, o) walking
// its segment in edge-id order — a fixed order, no atomics.
//
//   segment_mm_forward(ctx, dg, in_features, out_features, d_x, d_w, d_y);
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu {

// x [E, in_features], w [n_dst, in_features, out_features]; y [E, out_features] is overwritten.
void segment_mm_forward(GpuContext& ctx, DeviceGraph& g, std::int64_t in_features, std::int64_t out_features,
                        const float* x, const float* w, float* y);
// grad_x [E, in_features] and grad_w [n_dst, in_features, out_features] are overwritten; either may be nullptr.
void segment_mm_backward(GpuContext& ctx, DeviceGraph& g, std::int64_t in_features, std::int64_t out_features,
                         const float* x, const float* w, const float* grad_y, float* grad_x, float* grad_w);

}  // namespace gnncheck::gpu
