// gnncheck/oracle/subgradients.h — every gradient a correct implementation may return at a tie.
//
// Where a max or min reduction has tied candidates (equal within the rounding the declared precision
// allows), its backward may send the output gradient to any one of them, split it evenly (PyTorch's
// scatter_reduce amax), or take any other convex combination: each is a valid subgradient. The set
// of them is
//
//   { base + Σ_groups Σ_a w_a · alternative_a  :  w_a ≥ 0, Σ_a w_a = 1 in each group }
//
// with one group per tied (output element) and one alternative per tied candidate: the gradient terms
// that candidate receives when it gets the whole output gradient. `base` holds every gradient term
// outside the ties. checks/subgradient_set.h decides whether a system's gradients lie in this set
// within their bounds.
//
//   SubgradientChoices s = def.subgradients(c, unit_roundoff(Precision::float32));
//   if (s.groups.empty()) ... no tie: the oracle's gradient is the only valid one
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace gnncheck::oracle {

// One gradient term: `value` added to element `flat_index` of the gradient of input `input`.
struct GradientTerm {
  std::string input;
  index_t flat_index = 0;
  double value = 0.0;
};

// What one tied candidate receives when it takes the whole output gradient.
struct TieAlternative {
  std::string candidate;  // for messages: "edge 3 (source 1)"
  std::vector<GradientTerm> terms;
};

struct TieGroup {
  std::string what;  // the output element the candidates tie for: "y[0, 2]"
  std::vector<TieAlternative> alternatives;  // two or more
};

struct SubgradientChoices {
  std::map<std::string, Tensor> base;  // by input name, shaped as the gradient
  std::vector<TieGroup> groups;
  // The groups are kink units within rounding (checks/kink_set.h: each unit's one-sided derivatives,
  // alternatives "the oracle's side" and "the other side"), not ties: only the messages differ.
  bool one_sided_kinks = false;
};

}  // namespace gnncheck::oracle
