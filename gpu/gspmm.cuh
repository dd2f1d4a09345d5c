// gnncheck/gpu/gspmm.cuh — the generalized SpMM on the GPU, forward and backward (definition and
// conventions: oracle/gspmm.h).
//
//   y[i, c] = reduce_{k ∈ row i} op(u[col_k, c_u], e[k, c_e])    reduce ∈ {sum, mean, max, min}
//
// One thread per (destination, output column) walks its CSR row in edge-id order: the sum and
// mean in that order, max and min keeping the first extreme (the oracle's choice at a tie). The
// backward recomputes that choice rather than storing an argmax (nothing survives between calls)
// and adds each message's share into grad_u and grad_e with atomics: many rows read one source and
// a broadcast operand is read by many columns.
//
//   gspmm_forward(ctx, dg, shape, d_u, d_e, d_y);
#pragma once

#include "gpu/broadcast.h"
#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu {

// oracle::GspmmConfig as the kernels take it (gpu/op_targets.cpp converts).
struct GspmmShape {
  std::int64_t heads = 1, features = 1;
  ElementwiseOp message = ElementwiseOp::copy_lhs;  // of u (left) and e (right)
  RowReduction reduce = RowReduction::sum;
  bool empty_rows_identity = false;  // max and min give −∞ / +∞ on an empty row, else 0
  BroadcastOperand u, e;
  std::int64_t width() const { return heads * features; }
  bool uses_u() const { return message != ElementwiseOp::copy_rhs; }
  bool uses_e() const { return message != ElementwiseOp::copy_lhs; }
};

// u [n_src, columns(u_broadcast)] and e [E, columns(e_broadcast)], each nullptr when the message
// does not read it; y [n_dst, heads·features] is overwritten.
void gspmm_forward(GpuContext& ctx, DeviceGraph& g, const GspmmShape& config, const float* u, const float* e,
                   float* y);
// grad_u and grad_e (the operands' shapes, zero-filled by the caller) gain the gradients; either
// may be nullptr to skip it.
void gspmm_backward(GpuContext& ctx, DeviceGraph& g, const GspmmShape& config, const float* u, const float* e,
                    const float* grad_y, float* grad_u, float* grad_e);

}  // namespace gnncheck::gpu
