// gnncheck/checks/subgradient_set.h — gradients at ties: is the system's one of the valid ones?
//
// At a tie of a max or min (oracle/subgradients.h) the valid gradients form a set, not a point:
// P = base + Σ_groups conv(alternatives). A system's gradients g agree when some p ∈ P lies within
// the element-wise bounds b of g, and disagree when none does. decide_subgradient() answers both
// soundly:
//
// - inside: it finds the weights of p by least squares in bound units (minimise Σ_j ((g_j − p_j)/b_j)²
//   over the product of simplices, block by block with projected gradient steps) and accepts when
//   every |g_j − p_j| ≤ b_j;
// - outside: it proves that no such p exists with a separating direction φ (in bound units):
//   ⟨φ, g⟩ − max_{p ∈ P} ⟨φ, p⟩ > Σ_j |φ_j|·b_j, where max over P is exact (each group contributes
//   its best alternative). Directions tried: the residual at the nearest p found, its signs where
//   it exceeds the bound, and the worst element alone.
// - undecided: neither (the nearest p found is over a bound and no direction separates): the
//   comparison is inconclusive, never passed and never failed.
//
// Gradient copied to every tied edge, sent to an edge that does not tie, or scaled: each is outside.
//
//   SubgradientDecision d = decide_subgradient(set, {{"u", &grad_u}}, {{"u", &bound_u}});
//   if (d.outcome == SubgradientOutcome::outside) ... d.nearest.at("u") is the valid gradient nearest
#pragma once

#include <map>
#include <optional>
#include <string>

#include "checks/tolerance.h"
#include "checks/verdict.h"
#include "oracle/subgradients.h"
#include "oracle/targets.h"

namespace gnncheck::checks {

enum class SubgradientOutcome { inside, outside, undecided };

struct SubgradientDecision {
  SubgradientOutcome outcome = SubgradientOutcome::undecided;
  std::map<std::string, Tensor> nearest;  // by input: the valid gradient nearest the system's (in bound units)
  std::string how;                        // one sentence: how it was decided
};

// `actual` and `bound` hold, for every input of set.base, the system's gradient and its bound, of
// the base's shape and finite (InternalError otherwise: the caller compares those element-wise).
SubgradientDecision decide_subgradient(const oracle::SubgradientChoices& set,
                                       const std::map<std::string, const Tensor*>& actual,
                                       const std::map<std::string, const Tensor*>& bound);

// For a target whose kinks are ties (oracle::KinkHooks::ties) and a case with output gradients that
// has ties at `precision`: the decision on the system's gradients `got`. nullopt where there is no
// tie, or where a gradient is missing, misshapen or not finite (the element-wise comparison decides).
std::optional<SubgradientDecision> decide_at_ties(const oracle::TargetDef& def, const Case& c, const Result& got,
                                                  const Bounds& bounds, Precision precision);

// For a target whose kinks are ties (oracle::KinkHooks::ties): where the case has ties at the
// verdict's precision, replaces v's gradient comparisons with comparisons against the nearest valid
// gradient (agree when inside, disagree when outside, inconclusive when undecided), each with the
// decision in its reason. Leaves them as they are where the case has no tie, or where a gradient is
// missing, misshapen or not finite (the element-wise comparison already says so).
void compare_gradients_at_ties(Verdict& v, const oracle::TargetDef& def, const Case& c, const Result& got,
                               const Bounds& bounds);
// Replaces v's comparisons of the gradients `decision` holds with comparisons against the valid
// gradient nearest `got` (agree when inside, disagree when outside, inconclusive when undecided), each
// with the decision in its reason: a decision at ties (decide_at_ties) or within rounding of one-sided
// kinks (decide_near_kinks, checks/kink_set.h).
void compare_gradients_at_valid_subgradients(Verdict& v, const SubgradientDecision& decision, const Result& got,
                                             const Bounds& bounds);

}  // namespace gnncheck::checks
