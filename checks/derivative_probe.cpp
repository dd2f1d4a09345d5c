#include "checks/derivative_probe.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace gnncheck::checks {

std::string_view to_string(ProbeOutcome o) {
  switch (o) {
    case ProbeOutcome::agrees: return "agrees";
    case ProbeOutcome::disagrees: return "disagrees";
    case ProbeOutcome::kink: return "kink";
    case ProbeOutcome::singular: return "singular";
  }
  return "unknown";
}

ProbeFinding classify_probe(const DerivativeProbe& p) {
  const StepProbe& half = p.half;
  const StepProbe& full = p.full;
  const StepProbe& twice = p.twice;
  const double err = std::abs(full.q());
  if (!std::isfinite(err))
    return {ProbeOutcome::disagrees, fmt::format("the difference quotient or the derivative is not finite "
                                                 "(quotient {:.6g}, derivative {:.6g})",
                                                 full.quotient, full.derivative)};
  if (err <= p.bound)
    return {ProbeOutcome::agrees, fmt::format("|q(h)| = {:.3g} ≤ bound {:.3g}", err, p.bound)};

  // A kink between x − h/2·u and x + h/2·u makes the one-sided slopes differ by a constant: the
  // jump is the same at h/2, h and 2h (where f is smooth it halves with the step, where rounding
  // dominates it doubles). "The same" allows for 4 outputs' rounding at each step; a jump is only
  // evidence when it stands 32 resolutions above the noise.
  const double jumps_hi = std::max({half.jump, full.jump, twice.jump});
  bool constant_jump = jumps_hi > 0 && full.jump > 32 * full.resolution;
  for (const StepProbe* a : {&half, &full, &twice})
    for (const StepProbe* b : {&half, &full, &twice})
      constant_jump = constant_jump &&
                      std::abs(a->jump - b->jump) <= 0.5 * jumps_hi + 4 * (a->resolution + b->resolution);
  // Several kinks near x (integer data puts many pre-activations at 0) make the jump vary, but it
  // never falls as the step shrinks, whereas smooth curvature makes it fall 4× from 2h to h/2.
  const bool kinks_near_x = half.jump >= twice.jump && half.jump > 32 * half.resolution && half.jump >= 0.25 * err;
  if ((constant_jump && full.jump >= 0.25 * err) || kinks_near_x)
    return {ProbeOutcome::kink,
            fmt::format("|q(h)| = {:.3g} > bound {:.3g}, explained by one-sided slopes that differ by {:.3g}, {:.3g}, "
                        "{:.3g} at h/2, h, 2h (a kink along u)",
                        err, p.bound, half.jump, full.jump, twice.jump)};
  // A singularity (x/‖x‖ at x = 0): the quotients grow as the step shrinks.
  if (std::abs(half.quotient) > 1.5 * std::abs(full.quotient) && std::abs(full.quotient) > 1.5 * std::abs(twice.quotient))
    return {ProbeOutcome::singular,
            fmt::format("|q(h)| = {:.3g} > bound {:.3g}, and the quotients {:.3g}, {:.3g}, {:.3g} at h/2, h, 2h grow as "
                        "the step shrinks (a singularity)",
                        err, p.bound, half.quotient, full.quotient, twice.quotient)};
  return {ProbeOutcome::disagrees,
          fmt::format("|q(h)| = {:.3g} > bound {:.3g} where the forward is smooth along u (q = {:.3g}, {:.3g}, {:.3g} "
                      "at h/2, h, 2h)",
                      err, p.bound, half.q(), full.q(), twice.q())};
}

}  // namespace gnncheck::checks
