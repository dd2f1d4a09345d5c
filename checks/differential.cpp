// The differential check: the system against the oracle, forward and every gradient. Near a kink
// of the forward (checks/kinks.h) gradients are inconclusive.
#include "checks/check_support.h"

namespace gnncheck::checks {

using namespace detail;

Verdict differential(System& system, const Case& c, const CheckOptions& options) {
  Verdict v = start_verdict(CheckKind::differential, system, c, options);
  const auto& spec = oracle::find_target(c.target).spec;
  const Result exact = exact_result(c);
  const Result got = system.evaluate(c);
  if (system_failed(v, got)) return v;
  const Bounds bounds = ToleranceModel(options.tolerance).bounds(c, exact, v.precision);
  v.tolerance_model = bounds.model;
  compare_with_exact(v, spec, exact, got, bounds);
  screen_kinks(v, c);
  summarize(v);
  return v;
}

}  // namespace gnncheck::checks
