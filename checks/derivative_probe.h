// gnncheck/checks/derivative_probe.h — what central differences at three steps say about a derivative.
//
// A directional probe evaluates a forward f at x ± h·u for the steps h/2, h and 2h and compares the
// difference quotient ⟨ȳ, (f(x₊) − f(x₋)) / 2h⟩ with a directional derivative ⟨g, u_eff⟩ (g a
// backward's answer). classify_probe() is a pure function of those numbers and a bound:
//
//   agrees     |q(h)| ≤ bound                      (q = quotient − derivative)
//   kink       the one-sided slopes differ by a jump that stays the same as the step shrinks
//              (a ReLU or LeakyReLU pre-activation crosses 0 within the step), or several kinks
//              near x make the jump grow as the step shrinks; and the jump explains q
//   singular   the quotients grow as the step shrinks (x/‖x‖ at x = 0): no step resolves the slope
//   disagrees  none of these: over the bound at a point where f is smooth along u
//
// Who supplies the numbers decides what an outcome means: `adjoint` probes the trusted oracle at
// the points the system sees (checks/adjoint.cpp) to decide whether the step is usable; `gradient`
// probes a float64 system's own forward when its element-wise comparison fails.
//
//   DerivativeProbe p{half, full, twice, bound};
//   ProbeFinding f = classify_probe(p);
//   if (f.outcome == ProbeOutcome::kink) ...   // f.reason says which numbers showed it
#pragma once

#include <string>
#include <string_view>

namespace gnncheck::checks {

// One central difference at one step.
struct StepProbe {
  double step = 0;        // h (the direction's scale included)
  double quotient = 0;    // ⟨ȳ, (f(x₊) − f(x₋)) / 2h⟩
  double derivative = 0;  // ⟨g, u_eff⟩, u_eff = (x₊ − x₋) / 2h
  double jump = 0;        // |⟨ȳ, f(x₊) − 2f(x) + f(x₋)⟩| / h: how far the two one-sided slopes differ
  double resolution = 0;  // the rounding noise of quotient and jump at this step (≥ 0)
  double q() const { return quotient - derivative; }
};

struct DerivativeProbe {
  StepProbe half;   // at h/2
  StepProbe full;   // at h
  StepProbe twice;  // at 2h
  double bound = 0;  // what |q(h)| may be where f is smooth and the derivative right
};

enum class ProbeOutcome { agrees, disagrees, kink, singular };
std::string_view to_string(ProbeOutcome o);  // "agrees", "disagrees", "kink", "singular"

struct ProbeFinding {
  ProbeOutcome outcome = ProbeOutcome::disagrees;
  std::string reason;  // the numbers that decided it, one sentence
};

// Pure: the same numbers always give the same finding. A non-finite q is `disagrees`.
ProbeFinding classify_probe(const DerivativeProbe& p);

}  // namespace gnncheck::checks
