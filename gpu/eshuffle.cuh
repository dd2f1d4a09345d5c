// gnncheck/gpu/eshuffle.cuh — edge tensors between edge-id (CSR) order and CSC order
// (definitions: oracle/eshuffle.h).
//
//   eshuffle:          out[p, :] = x[edge_perm[p], :]      (backward: eshuffle_inverse of the gradient)
//   eshuffle_inverse:  out[edge_perm[p], :] = x[p, :]      (backward: eshuffle of the gradient)
// x and out are [E, heads] device tensors; builds the graph's CSC on first use.
//
//   eshuffle_forward(ctx, dg, d_alpha, heads, d_alpha_csc);
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu {

void eshuffle_forward(GpuContext& ctx, DeviceGraph& g, const float* x, std::int64_t heads, float* out);
void eshuffle_inverse_forward(GpuContext& ctx, DeviceGraph& g, const float* x, std::int64_t heads, float* out);

inline void eshuffle_backward(GpuContext& ctx, DeviceGraph& g, const float* grad_out, std::int64_t heads,
                              float* grad_x) {
  eshuffle_inverse_forward(ctx, g, grad_out, heads, grad_x);
}
inline void eshuffle_inverse_backward(GpuContext& ctx, DeviceGraph& g, const float* grad_out, std::int64_t heads,
                                      float* grad_x) {
  eshuffle_forward(ctx, g, grad_out, heads, grad_x);
}

}  // namespace gnncheck::gpu
