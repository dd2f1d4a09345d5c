// gnncheck/oracle/cpu_systems.h — the oracle and its float32 twins as Systems.
//
// `oracle`      the float64 oracle: the ground truth every other system is compared with.
// `cpu_float32` the oracle's own code evaluated in float32 (accumulating in float32): a second,
//               correct implementation that the tolerance model must never flag.
// `cpu_float32_right_derivatives`
//               cpu_float32 with the other valid one-sided derivative at every kink of the
//               catalogue (oracle/layers/kink_side.h, checks/kinks.h): ReLU′(0) = 1 in GIN,
//               LeakyReLU′(0) = 1 in GAT, the x/‖x‖ side at AGNN's norm floor. Correct, yet its
//               gradients differ from the oracle's by O(1) at those points: the control that every
//               check accepts either convention.
// `cpu_float32_online_softmax`
//               cpu_float32 with edge_softmax computed online in one pass (running maximum, the sum
//               rescaled whenever it grows) and its backward in the distributive form from a
//               recomputed alpha: a correct softmax the per-row bound must accept.
//
//   auto oracle = gnncheck::make_oracle_system();
//   gnncheck::Result r = oracle->evaluate(c);
#pragma once

#include <memory>

#include "core/system.h"

namespace gnncheck {

std::unique_ptr<System> make_oracle_system();
std::unique_ptr<System> make_cpu_float32_system();
std::unique_ptr<System> make_cpu_float32_right_derivatives_system();
std::unique_ptr<System> make_cpu_float32_online_softmax_system();

}  // namespace gnncheck
