// gnncheck/checks/check_support.h — pieces every check shares (internal to checks/).
//
// Starting a verdict for (check, system, case), evaluating the oracle on a case the caller vouches
// for, turning a system's non-ok answer into a failed verdict, and comparing two answers of a system
// with each other under the tolerance model.
//
//   Verdict v = start_verdict(CheckKind::differential, system, c, options);
//   Result got = system.evaluate(c);
//   if (system_failed(v, got)) return v;
#pragma once

#include <cmath>
#include <string>

#include "checks/case_transforms.h"
#include "checks/checks.h"
#include "checks/kinks.h"
#include "checks/tolerance.h"
#include "oracle/targets.h"

namespace gnncheck::checks::detail {

// The formats a verdict's system declared for its target (storage and accumulation).
inline Formats formats_of(const Verdict& v) { return Formats(v.precision, v.accumulation); }

Verdict start_verdict(CheckKind kind, System& system, const Case& c, const CheckOptions& options);

// The oracle's float64 answer; InputError (naming the target) when the oracle rejects the case.
Result exact_result(const Case& c);

// The values a case holds: its inputs, parameters and output gradients together.
index_t element_count(const Case& c);

// If `got` is not ok, marks `v` failed with the status and message and returns true.
bool system_failed(Verdict& v, const Result& got, const std::string& during = {});

// Compares every tensor `exact` (the oracle's answer) has, outputs and gradients, with `actual`,
// element-wise, within `bounds` (labels "output y", "gradient x"; input/is_gradient set from the
// name): on both sides of its interval where the model gives a lower endpoint (Bounds::lowest),
// else symmetric. Appends the comparisons to `v`.
// `label_prefix` is prepended to each tensor label (e.g. "on the graph with a hub source: ").
void compare_with_exact(Verdict& v, const oracle::TargetSpec& spec, const Result& exact, const Result& actual,
                        const Bounds& bounds, const std::string& label_prefix = {});

// Compares two answers of one system (`first` the expected one) with bound = factor · `bounds`,
// symmetric: each answer may lie anywhere in its interval around the exact value, so their
// difference is bounded by the larger side on either sign (Bounds::tensors). Otherwise as above.
// `exact` is the oracle's answer to the case both answer: where it is finite, answers that are
// both NaN (or the same infinity) are both wrong, not in agreement (checks/verdict.h:
// disagree_where_exact_is_finite).
// `own_factor` adds own_factor·(|first| + |later|) element-wise: each answer's rounding of its own
// sums, which the bounds (built from the exact answer's terms) miss where that answer is ~0 and the
// system computes something else (own_rounding_factor).
void compare_answers(Verdict& v, const oracle::TargetSpec& spec, const Result& exact, const Result& first,
                     const Result& later, const Bounds& bounds, double factor, const std::string& label_prefix = {},
                     double own_factor = 0.0);

// safety·γ_K(u) for the declared precision, K the most terms one element of any output or gradient
// of `c` can sum whatever linear map computes it on this graph: the longest row or column (an
// aggregation or its transpose) plus the longest tensor row (a feature contraction) plus 2 (nested
// sums add: γ_a then γ_b lie within γ_{a+b}). A self-consistency check compares the system's answers
// with each other; where the system computes another function than the oracle (a wrong backward that
// is linear, a forward summing duplicate edges), its answers are rounded sums of their own, whose
// rounding is within this factor times their magnitude, not within the exact answer's bound (0 where
// the exact answer is 0).
double own_rounding_factor(const Case& c, Precision precision, const CheckOptions& options);
std::string own_rounding_description(const Case& c, Precision precision, const CheckOptions& options);


// For a self-consistency check (metamorphic, adjoint, state) that failed: where the system's own
// forward `answer` to `c` already disagrees with the oracle beyond the differential bound, a
// sentence saying so (it computes another function, which its backward may follow exactly), to put
// first in the failure's detail; empty when the forward agrees or has no outputs to compare.
std::string forward_disagreement(const Case& c, const Result& answer, Precision precision, const CheckOptions& options);

// Puts forward_disagreement(c, answer, …) first in a failed verdict's message.
void lead_with_forward_disagreement(Verdict& v, const Case& c, const Result& answer, const CheckOptions& options);

// Marks `v` as not applicable to this case (Conclusion::not_applicable, with the reason in detail).
Verdict not_applicable(Verdict v, const std::string& reason);

// Where a kink argument of `c` lies within the declared precision's rounding of its kink
// (checks/kinks.h), makes the comparisons of the gradients that the side of the kink changes
// inconclusive with that reason (either one-sided derivative is valid there); outputs and the other
// gradients stay compared.
// `same_inputs`: the answers compared come from evaluations of the same inputs (state, linearity),
// so an argument exactly at its kink lands on the same side in every one of them (exact values
// sum exactly in any order) and only a non-zero distance within rounding can differ — except at a
// tie of a max or min, which an implementation may break differently from call to call.
void screen_kinks(Verdict& v, const Case& c, bool same_inputs = false);
// The same from the case's kink arguments shared with the check's other steps (CaseKinks).
void screen_kinks(Verdict& v, CaseKinks& kinks, bool same_inputs = false);

// Both the same infinity: an output that is constant at ±∞ near the point (a max over an empty row
// with the identity convention), whose finite difference is 0, not ∞ − ∞.
inline bool same_infinity(double a, double b) { return std::isinf(a) && a == b; }

// Makes `tc` inconclusive with `reason` (its ratio no longer counts toward any headline).
void mark_inconclusive(TensorComparison& tc, const std::string& reason);

}  // namespace gnncheck::checks::detail
