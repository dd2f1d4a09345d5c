// gnncheck/oracle/cpu_systems.h — the oracle and its float32 twin as Systems.
//
// `oracle`      the float64 oracle: the ground truth every other system is compared with.
// `cpu_float32` the oracle's own code evaluated in float32 (accumulating in float32): a second,
//               correct implementation that the tolerance model must never flag.
//
//   auto oracle = gnncheck::make_oracle_system();
//   gnncheck::Result r = oracle->evaluate(c);
#pragma once

#include <memory>

#include "core/system.h"

namespace gnncheck {

std::unique_ptr<System> make_oracle_system();
std::unique_ptr<System> make_cpu_float32_system();

}  // namespace gnncheck
