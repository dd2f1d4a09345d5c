// gnncheck/gpu/broadcast.h — the operands of the generalized ops (gspmm, gsddmm) as the kernels take
// them: plain values, so that .cu files need no oracle header. Each enumeration lists its values in
// the order of its oracle counterpart (oracle/broadcast_operands.h, oracle/gspmm.h,
// oracle/gsddmm.h); gpu/op_targets.cpp converts and checks that order at compile time.
#pragma once

#include <cstdint>

namespace gnncheck::gpu {

// Which axes of [heads, features] an operand is broadcast over (oracle::Broadcast).
enum class OperandBroadcast : int { none, features, heads, both };
// The elementwise operation of a left and a right operand (oracle::BinaryOp).
enum class ElementwiseOp : int { copy_lhs, copy_rhs, add, sub, mul, div };
// Where an operand of gsddmm lives: source nodes, destination nodes, edges (oracle::OperandSide).
enum class OperandRows : int { u, v, e };
// gspmm's reduction per destination (oracle::Reduction).
enum class RowReduction : int { sum, mean, max, min };

struct BroadcastOperand {
  OperandBroadcast broadcast = OperandBroadcast::none;
  std::int64_t columns = 1;  // values per row
};

}  // namespace gnncheck::gpu
