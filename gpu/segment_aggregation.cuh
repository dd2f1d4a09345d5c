// gnncheck/gpu/segment_aggregation.cuh — PyG's var, std, mul and softmax aggregations over each
// destination's segment of edge rows, forward and backward, on the GPU (definition and conventions:
// oracle/segment_aggregation.h).
//
// One thread per (destination, feature) walks its segment row_ptr[i] … row_ptr[i+1]−1 in edge-id
// order. The softmax's temperature gradient is accumulated with one atomic add per (destination, feature).
// std is var's square root, 0 where var ≤ 1e-5 (PyG's floor); mul's gradient is the product of the
// rows before k times the product of those after it (exact where the segment holds zeros), formed
// with one pass forward and one backward over the segment.
//
//   segment_aggregation_forward(ctx, dg, SegmentAggregationKind::var, features, d_x, nullptr, d_y);
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu {

enum class SegmentAggregationKind { var, softmax, std, mul };

// x [E, features]; t: one float on the device (softmax only, else nullptr); y [n_dst, features] is
// overwritten.
void segment_aggregation_forward(GpuContext& ctx, DeviceGraph& g, SegmentAggregationKind kind, std::int64_t features,
                                 const float* x, const float* t, float* y);
// grad_x [E, features] is overwritten; grad_t (softmax only, one float) is overwritten.
void segment_aggregation_backward(GpuContext& ctx, DeviceGraph& g, SegmentAggregationKind kind, std::int64_t features,
                                  const float* x, const float* t, const float* grad_y, float* grad_x, float* grad_t);

}  // namespace gnncheck::gpu
