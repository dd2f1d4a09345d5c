// gnncheck/gpu/broadcast_operands.cuh — device code the generalized ops' kernels (gspmm.cu,
// gsddmm.cu) share: an operand read through its NumPy-style broadcast over [heads, features] and the
// elementwise operation of a left and a right operand with its partial derivatives, as
// oracle/broadcast_operands.h defines them (internal to gpu/).
#pragma once

#include <cstdint>

#include "gpu/broadcast.h"

namespace gnncheck::gpu::detail {

// Output column c's column in an operand row (oracle::BroadcastShape::column).
__device__ __forceinline__ std::int64_t operand_column(const BroadcastOperand& o, std::int64_t c, std::int64_t features) {
  switch (o.broadcast) {
    case OperandBroadcast::none: return c;
    case OperandBroadcast::features: return c / features;
    case OperandBroadcast::heads: return c % features;
    case OperandBroadcast::both: return 0;
  }
  return 0;
}

__device__ __forceinline__ float binary_value(ElementwiseOp op, float a, float b) {
  switch (op) {
    case ElementwiseOp::copy_lhs: return a;
    case ElementwiseOp::copy_rhs: return b;
    case ElementwiseOp::add: return a + b;
    case ElementwiseOp::sub: return a - b;
    case ElementwiseOp::mul: return a * b;
    case ElementwiseOp::div: return a / b;
  }
  return a;
}

// ∂(a op b)/∂a into da, ∂(a op b)/∂b into db.
__device__ __forceinline__ void binary_partials(ElementwiseOp op, float a, float b, float& da, float& db) {
  switch (op) {
    case ElementwiseOp::copy_lhs: da = 1.0f, db = 0.0f; return;
    case ElementwiseOp::copy_rhs: da = 0.0f, db = 1.0f; return;
    case ElementwiseOp::add: da = 1.0f, db = 1.0f; return;
    case ElementwiseOp::sub: da = 1.0f, db = -1.0f; return;
    case ElementwiseOp::mul: da = b, db = a; return;
    case ElementwiseOp::div: da = 1.0f / b, db = -a / (b * b); return;
  }
  da = db = 0.0f;
}

}  // namespace gnncheck::gpu::detail
