// The differential check: the system against the oracle, forward and every gradient. At a tie of a
// max or min the gradients are compared with every valid one (checks/subgradient_set.h), and so
// within rounding of a layer's one-sided kinks (checks/kink_set.h); near another kink of the
// forward (checks/kinks.h) they are inconclusive.
#include "checks/check_support.h"
#include "checks/kink_set.h"
#include "checks/subgradient_set.h"

namespace gnncheck::checks {

using namespace detail;

Verdict differential(System& system, const Case& c, const CheckOptions& options) {
  Verdict v = start_verdict(CheckKind::differential, system, c, options);
  const oracle::TargetDef& def = oracle::entry_of(c);
  const auto& spec = def.spec;
  const Result exact = exact_result(c);
  const Result got = system.evaluate(c);
  if (system_failed(v, got)) return v;
  const Bounds bounds = ToleranceModel(options.tolerance).bounds(c, exact, formats_of(v));
  v.tolerance_model = bounds.model;
  compare_with_exact(v, spec, exact, got, bounds);
  compare_gradients_at_ties(v, def, c, got, bounds);
  CaseKinks kinks(c);  // the kink arguments, evaluated once for the two steps that read them
  compare_gradients_near_kinks(v, def, kinks, exact, got, bounds);
  screen_kinks(v, kinks);
  summarize(v);
  return v;
}

}  // namespace gnncheck::checks
