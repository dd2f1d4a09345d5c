// gnncheck/gpu/gsddmm.cuh — the generalized SDDMM on the GPU, forward and backward (definition and
// conventions: oracle/gsddmm.h).
//
//   out[k, c] = op(lhs[r_l(k), c_l], rhs[r_r(k), c_r]),  out[k, h] = Σ_f lhs·rhs for dot
//
// with r_u(k) = col_k, r_v(k) = row_k, r_e(k) = k. One thread per (edge, output value) over the
// row-ordered COO (row_of_edge, col_idx); dot sums its head's features in order. The backward is one
// thread per (edge, column), adding grad_out·∂/∂operand into the operand's row with atomics (many
// edges read one node, and a broadcast operand is read by many columns).
//
//   gsddmm_forward(ctx, dg, shape, d_lhs, d_rhs, d_out);
#pragma once

#include "gpu/broadcast.h"
#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu {

// oracle::GsddmmConfig as the kernels take it (gpu/op_targets.cpp converts).
struct GsddmmShape {
  std::int64_t heads = 1, features = 1;
  ElementwiseOp op = ElementwiseOp::mul;  // of one term; dot sums mul over each head's features
  bool dot = false;
  OperandRows lhs_rows = OperandRows::u, rhs_rows = OperandRows::v;
  BroadcastOperand lhs, rhs;
  std::int64_t width() const { return heads * features; }
  std::int64_t out_width() const { return dot ? heads : width(); }
  bool uses_lhs() const { return op != ElementwiseOp::copy_rhs; }
  bool uses_rhs() const { return op != ElementwiseOp::copy_lhs; }
};

// lhs and rhs as oracle::gsddmm_forward takes them (nullptr when op does not read one); out
// [E, out_width()] is overwritten.
void gsddmm_forward(GpuContext& ctx, DeviceGraph& g, const GsddmmShape& config, const float* lhs,
                    const float* rhs, float* out);
// grad_lhs and grad_rhs (the operands' shapes, zero-filled by the caller) gain the gradients;
// either may be nullptr to skip it.
void gsddmm_backward(GpuContext& ctx, DeviceGraph& g, const GsddmmShape& config, const float* lhs,
                     const float* rhs, const float* grad_out, float* grad_lhs, float* grad_rhs);

}  // namespace gnncheck::gpu
