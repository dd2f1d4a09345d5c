// gnncheck/checks/closed_form_bounds.h — the closed-form tolerance rule (checks/tolerance.md,
// "Closed form"): a bound γ·Σ|terms| per element from two helper evaluations of the case, for the
// tolerance model (checks/tolerance.h) and nothing else.
#pragma once

#include <future>

#include "checks/tolerance.h"
#include "oracle/targets.h"

namespace gnncheck::checks {

// The closed form's two helper evaluations, started side by side (each is a whole float64
// evaluation of the case; neither needs the other).
struct ClosedFormEvaluations {
  std::shared_future<Result> abs_sums, term_counts;
};

// Starts them; `precision` is the storage format's (ties of a max are decided by the values as stored).
ClosedFormEvaluations start_closed_form_evaluations(const oracle::TargetDef& def, const Case& c, Precision precision);

// The bounds of every result tensor from the helper evaluations.
Bounds closed_form_from(const oracle::TargetDef& def, const Case& c, const ClosedFormEvaluations& evaluations,
                        const Result& exact, const Formats& formats, double safety_factor);

}  // namespace gnncheck::checks
