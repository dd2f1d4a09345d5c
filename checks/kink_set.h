// gnncheck/checks/kink_set.h — gradients within rounding of one-sided kinks: is the system's one of
// the valid ones?
//
// Within rounding of a kink (checks/kinks.h: |argument| ≤ margin at the declared precision) a
// correct implementation may compute the argument on either side and take that side's derivative,
// at each near unit independently. Until this existed the gradients before such a kink were only
// inconclusive there, which at TF32, bfloat16 and float16 is most cases of a few dozen nodes.
//
// Where every near unit belongs to one kink site of the layer (oracle/kink_arguments.h), each unit's
// side changes the gradients by its own amount, whatever the others' sides: the backward multiplies
// the unit's derivative into a gradient that no other unit of the site changes (GIN's ReLU on z1:
// ∂L/∂z1 = ∂L/∂h ⊙ ReLU′(z1) with ∂L/∂h read after the ReLU; GAT's LeakyReLU on the logits, whose
// gradient the edge softmax gives without reading the slope; GATv2's per channel; SAGE's
// projection; GINE's message ReLU), and everything after it is linear in that gradient. So the
// valid gradients are
//
//   base + Σ_k w_k·Δ_k,   w_k ∈ [0, 1],
//
// base the oracle's (every unit on its side) and Δ_k the change when unit k alone takes the other
// side (KinkHooks::evaluate_f64_flipped), w_k = 0 and 1 the two one-sided derivatives and the
// values between the rest of the Clarke subgradient. That is checks/subgradient_set.h's set with one
// group {∅, Δ_k} per near unit, decided the same way (inside, outside or undecided) under the same
// bounds: nothing is widened. No decision (the comparisons stay inconclusive, as before) where
// near units sit at two sites (GINE's messages and z1 at once: the second's derivative scales the
// first's gradient, so their effects multiply), where one of them is a tie of a max inside a layer
// or AGNN's norm floor, or where more than kMaxNearKinkUnits are near (kMaxNearKinkWork on large
// graphs).
//
//   CaseKinks kinks(c);
//   if (auto d = decide_near_kinks(def, kinks, exact, got, bounds, Formats(Precision::bfloat16))) ... d->outcome
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "checks/kinks.h"
#include "checks/subgradient_set.h"

namespace gnncheck::checks {

// Above this many near units, or this many near units × (nodes + edges) of the case, a case is left
// inconclusive there: each unit costs one float64 evaluation of the layer, which on a large graph
// takes seconds.
inline constexpr std::size_t kMaxNearKinkUnits = 2000;
inline constexpr double kMaxNearKinkWork = 5e7;

// The valid gradients of c (the case of `kinks`) where it has kink units within the rounding of
// `formats`: for the inputs whose gradients the units of at most one near site change, the oracle's
// gradient (`exact`) and one group {∅, Δ_k} per near unit. nullopt where c has no near unit or no
// set is built (a tie or AGNN's floor among them, no such input); `too_many` says why the groups were
// not built where more units are near than kMaxNearKinkUnits (or kMaxNearKinkWork) allows.
struct NearKinkSet {
  oracle::SubgradientChoices set;
  std::size_t near_count = 0;  // the near units of every site
  std::string too_many;        // non-empty: set.groups was not built
};
std::optional<NearKinkSet> near_kink_set(const oracle::TargetDef& def, CaseKinks& kinks, const Result& exact,
                                         const Formats& formats);

// The decision on the system's gradients `got` of the inputs before the kinks of c (the case of
// `kinks`, whose arguments it reads only past its own early returns), where c has kink units within
// `precision`'s rounding; nullopt where it has none, where no decision is made (above), or where a
// gradient before the kink is missing, misshapen or not finite (the element-wise comparison
// decides). `exact` is the oracle's result for c.
std::optional<SubgradientDecision> decide_near_kinks(const oracle::TargetDef& def, CaseKinks& kinks,
                                                     const Result& exact, const Result& got, const Bounds& bounds,
                                                     const Formats& formats);

// Where decide_near_kinks decides, replaces v's comparisons of those gradients with comparisons
// against the nearest valid gradient (agree when inside, disagree when outside, inconclusive when
// undecided), each with the decision as its reason; leaves them as they are otherwise.
void compare_gradients_near_kinks(Verdict& v, const oracle::TargetDef& def, CaseKinks& kinks, const Result& exact,
                                  const Result& got, const Bounds& bounds);

}  // namespace gnncheck::checks
