// gnncheck/gpu/gather_mm.cuh — gather matrix multiplication on the GPU, forward and backward
// (definition and conventions: oracle/gather_mm.h): y[k] = x[k] · w[t_k] for every edge row k, t_k =
// types[k], one of `relations` weight matrices.
//
// Plain float32 loops, one thread per output element: the forward and grad_x one thread per (edge,
// column) with the edge's relation converted from its float type; grad_w one thread per (relation,
// f, o) walking every edge in edge-id order and adding those of its relation — a fixed order, no
// atomics. The graph is not read: only the edge count, which is x's row count.
//
//   gather_mm_forward(ctx, edges, in_features, out_features, d_x, d_types, d_w, d_y);
#pragma once

#include <cstdint>

#include "gpu/context.h"

namespace gnncheck::gpu {

// x [edges, in_features]; types [edges], integers in [0, relations) stored as floats (validated by the
// caller); w [relations, in_features, out_features]; y [edges, out_features] is overwritten.
void gather_mm_forward(GpuContext& ctx, std::int64_t edges, std::int64_t in_features, std::int64_t out_features,
                       const float* x, const float* types, const float* w, float* y);
// grad_x [edges, in_features] and grad_w [relations, in_features, out_features] are overwritten; either
// may be nullptr. A relation no edge has gets a zero gradient.
void gather_mm_backward(GpuContext& ctx, std::int64_t edges, std::int64_t relations, std::int64_t in_features,
                        std::int64_t out_features, const float* x, const float* types, const float* w,
                        const float* grad_y, float* grad_x, float* grad_w);

}  // namespace gnncheck::gpu
