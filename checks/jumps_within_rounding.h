// gnncheck/checks/jumps_within_rounding.h — a value that jumps at a kink, within rounding of it.
//
// segment_aggregation's std is 0 up to var = 10⁻⁵ and √var above (PyG's StdAggregation). Within the
// declared format's rounding of that floor a correct implementation may return either, and its
// derivative is then 0 or g·(x − mean)/(n·y): one-format bfloat16 computes E[x²] − E[x]² to within
// about 2⁻⁸·E[x²], so every segment of a small variance is there. Where the target declares each
// jump's element (oracle::KinkArguments::jump_elements) the checks decide the rest of such a case
// instead of leaving it all inconclusive:
//
//   - the element's bound covers every value either side may give: the interval of jump_values at
//     the argument's margin, widened by the element's own bound (cover_jumps_within_rounding, on
//     every Bounds the tolerance model returns);
//   - its output gradient ȳ is 0 (withhold_gradients_at_jumps, applied by run_check and at the
//     adjoint's base point), so the backward does not read the side and every gradient is determined
//     — including 0 flowing from that element, which a backward that reads the wrong ȳ breaks.
//
// What is given up: that element's own derivative, on that case only.
#pragma once

#include <cstddef>
#include <vector>

#include "checks/kinks.h"
#include "checks/tolerance.h"
#include "core/case.h"

namespace gnncheck::checks {

// The arguments of kinks.kink_case() that are jumps declaring their element and lie within the
// rounding of `formats` (checks/kinks.h's margin).
std::vector<std::size_t> jumps_within_rounding(CaseKinks& kinks, const Formats& formats);

// Sets ȳ to 0 at the element of every jump within rounding, in each jumping output c has ȳ for;
// returns how many elements of ȳ it changed (0: c as it was).
std::size_t withhold_gradients_at_jumps(Case& c, const Formats& formats);

// Whether argument n of `kinks` is a jump whose element has ȳ 0 (or no ȳ) in every jumping output:
// no gradient of the case depends on its side.
bool gradients_withheld_at(CaseKinks& kinks, std::size_t n);

// Widens b at the element of every jump within rounding so that it holds both sides' values
// (`exact`: the float64 answer the bounds are around). Leaves b as it is where it has no bound.
void cover_jumps_within_rounding(Bounds& b, const Case& c, const Result& exact, const Formats& formats);

}  // namespace gnncheck::checks
