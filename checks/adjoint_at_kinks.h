// gnncheck/checks/adjoint_at_kinks.h — the adjoint check where a kink stays within rounding.
//
// The adjoint check moves its base point off kinks (up to four jitters); in a half format a layer of
// a few dozen nodes keeps some unit within rounding of its kink at every one, and the gradient there
// is a set P of valid ones (ties of a max or min: checks/subgradient_set.h; one-sided kinks:
// checks/kink_set.h), not a point. Two things make the identity decide there, under the unchanged
// bound:
//
// - the probe directions are projected onto the complement of what the choices change: u with
//   ⟨p − g, u⟩ = 0 for every p ∈ P (g the oracle's gradient), so along u every valid gradient says
//   the same and a wrong backward is as visible as away from kinks;
// - the remaining spread of ⟨p − g, u⟩ over P (float64 rounding of that projection) is taken as an
//   interval that ⟨Jᵀȳ, u⟩ may sit anywhere in, so the comparison is sound whatever the projection
//   leaves.
//
// Where the choices span every direction of an input (more near units than its elements), or the
// set is not built (a tie inside a layer, AGNN's floor, too many units, two sites on one
// gradient), that input stays inconclusive, as before.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "checks/kinks.h"
#include "checks/tolerance.h"
#include "oracle/subgradients.h"
#include "oracle/targets.h"

namespace gnncheck::checks {

// The valid gradients at `point` (with output gradients), where `kink` — its nearest kink — is
// within rounding of `formats`; `oracle` is the oracle's result there. nullopt where none is built.
std::optional<oracle::SubgradientChoices> valid_gradients_at(const oracle::TargetDef& def, const Case& point,
                                                            const Result& oracle, const std::optional<NearestKink>& kink,
                                                            const Formats& formats);

// Above this many (choices × elements of the input), the projection is not formed: the input stays
// inconclusive (a dense basis of that size costs more than the check).
inline constexpr double kMaxKinkProjectionWork = 2e7;

// The directions of one input's gradient that the valid gradients do not differ along.
class KinkFreeDirections {
 public:
  // `set` holds `input` (set.base.count(input)); `elements` is its size.
  KinkFreeDirections(const oracle::SubgradientChoices& set, const std::string& input, index_t elements);
  // u without its components along what the choices change, rescaled to u's RMS; nullopt where
  // nothing of u is left (the choices span it) or the basis was not formed (kMaxKinkProjectionWork).
  std::optional<Tensor> project(const Tensor& u) const;
  // Why project() answers nothing for this input, or "" where it may answer.
  const std::string& unavailable() const { return unavailable_; }
  std::size_t choices() const { return choices_; }

 private:
  std::vector<std::vector<double>> basis_;  // orthonormal, each of the input's size
  std::size_t choices_ = 0;
  std::string unavailable_;
};

// Over every valid gradient p: the interval of ⟨p − oracle_gradient, u⟩ for `input`.
std::pair<double, double> valid_spread(const oracle::SubgradientChoices& set, const std::string& input,
                                       const Tensor& oracle_gradient, const Tensor& u);

}  // namespace gnncheck::checks
