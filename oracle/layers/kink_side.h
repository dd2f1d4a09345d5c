// gnncheck/oracle/layers/kink_side.h — which one-sided derivative a layer's backward takes at a kink.
//
// At a non-differentiable point both one-sided derivatives are valid subgradients (checks/kinks.h
// lists the points). `left` — ReLU′(0) = 0, LeakyReLU′(0) = the slope, AGNN's floor side at
// ‖x_i‖ = floor — is the oracle's (and PyTorch's); `right` — derivative 1 at 0, the normalizing
// side at the floor — is the other, taken by the control system cpu_float32_right_derivatives
// (adapters/cpu_systems.h). It is not an attribute: it does not change the function, only which
// valid derivative an implementation reports, and every check must accept either.
#pragma once

namespace gnncheck::oracle::layers {

enum class KinkSide { left, right };

}  // namespace gnncheck::oracle::layers
