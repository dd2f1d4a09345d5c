// gnncheck/oracle/layers/kink_side.h — which one-sided derivative a layer's backward takes at a kink.
//
// At a non-differentiable point both one-sided derivatives are valid subgradients (checks/kinks.h
// lists the points). `left` — ReLU′(0) = 0, LeakyReLU′(0) = the slope, AGNN's floor side at
// ‖x_i‖ = floor — is the oracle's (and PyTorch's); `right` — derivative 1 at 0, the normalizing
// side at the floor — is the other, taken by the control system cpu_float32_right_derivatives
// (adapters/cpu_systems.h). It is not an attribute: it does not change the function, only which
// valid derivative an implementation reports, and every check must accept either.
//
// KinkFlips names single units whose backward takes the derivative of the side opposite to the one
// their argument was computed on (at exactly the kink, the other KinkSide): a unit is a site (a
// layer's kink tensor, numbered in oracle/kink_arguments.h: GIN's MLP ReLU, GAT's logits, …) and a
// flat index into it. Near a kink a correct implementation in a lower precision may compute the
// argument on either side of each unit independently; checks/kink_set.h builds every such gradient
// from one flip at a time.
#pragma once

#include <map>
#include <span>
#include <vector>

#include "core/tensor.h"

namespace gnncheck::oracle::layers {

enum class KinkSide { left, right };

struct KinkFlips {
  std::map<int, std::vector<index_t>> units;  // site -> sorted flat indices taking the other side

  // The sorted flipped indices of one site (empty when none).
  std::span<const index_t> at(int site) const {
    const auto it = units.find(site);
    return it == units.end() ? std::span<const index_t>{} : std::span<const index_t>(it->second);
  }
  bool empty() const { return units.empty(); }
};

}  // namespace gnncheck::oracle::layers
