// gnncheck/gpu/edge_softmax.cuh — softmax over each destination's in-edges, per head, on the GPU
// (definitions: oracle/edge_softmax.h).
//
//   alpha[k,h] = exp(s[k,h] − m[i,h]) / Σ_{k' ∈ row i} exp(s[k',h] − m[i,h]),  m = the row's max
//   grad_s[k,h] = alpha[k,h] · (grad_alpha[k,h] − Σ_{k' ∈ row i} alpha[k',h] · grad_alpha[k',h])
// Max subtraction keeps every exponent ≤ 0, so any finite logits give finite alpha (no overflow
// to NaN at scale). One warp per destination row walks its CSR range (edge ids are contiguous per
// row, so no permutation is needed); lanes stride over the row's edges.
//
//   edge_softmax_forward(ctx, dg, d_logits, heads, d_alpha);
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu {

void edge_softmax_forward(GpuContext& ctx, DeviceGraph& g, const float* logits, std::int64_t heads, float* alpha);
void edge_softmax_backward(GpuContext& ctx, DeviceGraph& g, const float* alpha, const float* grad_alpha,
                           std::int64_t heads, float* grad_logits);

}  // namespace gnncheck::gpu
