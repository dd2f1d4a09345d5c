// gnncheck/checks/verdict.h — what a check concludes about one system on one case.
//
// Every check (checks/checks.h) returns a Verdict: which check, system, target and tensor
// (output or gradient) it is about, its Conclusion, the measured metric and the bound it was held
// to, the worst element with both values, the declared precision and the tolerance model used, the
// seed, and — on failure — a message a reader can act on and the command that re-runs exactly that
// case. `comparisons` keeps the per-tensor detail behind the headline numbers, each naming the
// input or output it is about (`input`), so that checks exchange structured results, never labels.
//
// Verdicts fail closed: only Conclusion::pass passes. A comparison that could not decide (a kink
// of the forward on every probed step, a pre-activation within rounding of a ReLU's 0) is
// Agreement::inconclusive with its reason: shown and counted, never passed; a verdict whose
// comparisons are all inconclusive is Conclusion::inconclusive.
//
//   gnncheck::checks::Verdict v = gnncheck::checks::differential(system, c);
//   if (!v.passed()) std::cerr << to_string(v.conclusion) << ": " << v.message << "\n";
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/case.h"

namespace gnncheck::checks {

// The checks of DESIGN.md, one name each (also the names suites and reports use).
enum class CheckKind {
  differential,        // system vs oracle, forward and every gradient
  gradient,            // the system's backward vs central finite differences of its own forward (float64)
  adjoint,             // ⟨ȳ, J·u⟩ = ⟨Jᵀ·ȳ, u⟩ from the system's own forward and backward
  op_order,            // normalize+aggregate on a graph whose in- and out-degrees differ
  metamorphic_relabel, // relabeling nodes permutes the outputs
  metamorphic_edge_order,  // reordering edges within a row changes nothing
  metamorphic_linearity,   // backward is linear in the output gradient
  state_interleaved,   // forward(A), forward(B), backward(A) equals backward of A alone
  state_repeat,        // backward twice agrees within the non-determinism tolerance
  numerics,            // no NaN/Inf where the exact result is finite (large logits)
  resources,           // memory does not grow across repeated evaluations of the same case
};
std::string_view to_string(CheckKind kind);
// Throws InputError naming the accepted names.
CheckKind parse_check_kind(std::string_view name);
const std::vector<CheckKind>& all_check_kinds();

// One element of one tensor, with the system's value, the reference value and the bound there.
struct ElementReport {
  std::int64_t flat_index = 0;     // index into the tensor's values
  std::vector<std::int64_t> index;  // the same as a multi-index over the tensor's shape
  double actual = 0.0;              // what the system produced
  double expected = 0.0;            // what it should be (oracle, or the system's own reference run)
  double bound = 0.0;               // the element's bound
};

// What a check concludes about one system on one case.
enum class Conclusion {
  pass,            // every comparison agreed, at least one was conclusive
  fail,            // a comparison disagreed: the system computed something else
  error,           // the system did not answer properly (status crashed, timeout, error, invalid_output)
  unsupported,     // the system answered Status::unsupported
  not_applicable,  // the check says nothing about this kind of case (see detail)
  inconclusive,    // the check ran but could not decide (every comparison inconclusive; see detail)
};
// "pass", "fail", "error", "unsupported", "not applicable", "inconclusive".
std::string_view to_string(Conclusion c);

// The state of one comparison.
enum class Agreement {
  agrees,        // within its bound
  disagrees,     // over its bound (or missing, misshapen, non-finite)
  inconclusive,  // the comparison cannot decide here; TensorComparison::reason says why
};
std::string_view to_string(Agreement a);  // "agrees", "disagrees", "inconclusive"

// The comparison of one tensor ("output y", "gradient x", "⟨ȳ,J·u⟩ vs ⟨Jᵀȳ,u⟩", …).
struct TensorComparison {
  std::string tensor;         // the label shown to people ("after relabeling: gradient x")
  std::string input;          // the input (for a gradient) or output it is about: "x", "y"; "" for none
  bool is_gradient = false;   // true: about the gradient of `input`; false: about the output `input`
  Agreement agreement = Agreement::agrees;
  std::string reason;         // why it is inconclusive, what is missing, or how it was decided (adjoint: the direction)
  bool empty = false;         // inconclusive only because there is nothing to compare (no elements)
  bool agrees() const { return agreement == Agreement::agrees; }
  bool disagrees() const { return agreement == Agreement::disagrees; }
  bool inconclusive() const { return agreement == Agreement::inconclusive; }
  double worst_ratio = 0.0;  // max over elements of |actual − expected| / bound (∞ on NaN or bound 0 with error)
  std::optional<ElementReport> worst;  // the element with the worst ratio (absent for empty tensors)
  std::int64_t elements = 0;
  std::int64_t elements_over_bound = 0;
};

struct Verdict {
  CheckKind check = CheckKind::differential;
  std::string system;
  std::string target;
  std::string tensor;  // which output or gradient the headline numbers are about ("" when the check has none)
  Conclusion conclusion = Conclusion::fail;
  bool passed() const { return conclusion == Conclusion::pass; }
  Status system_status = Status::ok;  // anything but ok: the conclusion is error or unsupported
  Precision precision = Precision::float64;  // the system's declared precision for the target (its storage)
  Precision accumulation = Precision::float64;  // the format it declares its sums in (System::accumulation)
  std::string tolerance_model;  // how the bound was formed, e.g. "closed form 2·γ_k·Σ|w||x| (k = in-degree + 2)"
  // run_check compared the case moved within the softmax analysis (checks/softmax_past_analysis.h);
  // tolerance_model says how. The runs count such cases among the conclusive ones.
  bool compared_moved = false;
  std::string metric_name;      // what `metric` measures
  double metric = 0.0;          // at the worst element (or the scalar the check measures)
  double bound = 0.0;           // the bound at that element
  std::optional<ElementReport> worst;
  std::vector<TensorComparison> comparisons;
  std::uint64_t seed = 0;
  std::string counterexample_path;  // directory of the saved minimal case, once written
  std::string rerun_command;        // re-runs exactly this case
  std::string detail;               // what else the check found (e.g. which wrong formula the output matches)
  std::string message;              // empty on a plain pass; on failure the full, actionable story
};

// Element-wise comparison of `actual` against `expected` with a per-element `bound` (same shape).
// An element passes when |actual − expected| ≤ bound; a NaN or ±Inf where `expected` is finite
// always fails; equal infinities pass. Shape mismatches are reported as a failed comparison
// naming both shapes (never thrown: they are the system's fault). `tensor` is the label;
// input/is_gradient are left for the caller (compare_with_exact and compare_answers in check_support fill them).
// `lowest` (same shape, optional; Bounds::lowest in checks/tolerance.h) makes the interval
// asymmetric: an element below `expected` whose lowest[i] is not NaN passes when
// actual ≥ lowest[i], and its bound is the lower side's, expected − lowest[i] (reported with the
// element, and its ratio is above 1 exactly when it lies below lowest[i]).
TensorComparison compare_elementwise(const std::string& tensor, const Tensor& actual, const Tensor& expected,
                                     const Tensor& bound, const Tensor* lowest = nullptr);

// For a comparison of two answers of one system (`actual` against `expected`, as compared into
// `tc` with per-element `bound`): where `exact`, the oracle's value, is finite and both answers are
// the same non-finite value — NaN and NaN, or equal infinities, which compare_elementwise counts as
// agreeing — the element is over its bound with ratio ∞, reported with the exact value as the
// expected one. A NaN answered twice is a wrong answer twice, never an agreement. Shapes that
// differ from `exact`'s, and inconclusive comparisons, are left as they are.
void disagree_where_exact_is_finite(TensorComparison& tc, const Tensor& actual, const Tensor& expected,
                                    const Tensor& exact, const Tensor& bound);

// Fills the headline fields of `v` from its comparisons (the disagreeing one with the worst ratio,
// else the worst agreeing one; inconclusive ones only when nothing else is there) and sets
// v.conclusion: error/unsupported from a non-ok system_status, fail if any comparison disagrees,
// inconclusive if every comparison is (or there is none), pass otherwise.
void summarize(Verdict& v);

// How many of v's comparisons are inconclusive (a pass may carry some: shown, never counted as passed).
int inconclusive_comparisons(const Verdict& v);

// The one-paragraph failure story: system, target, tensor, worst element with both values and its
// bound, precision and tolerance model, seed, counterexample and re-run command. Empty on a pass.
std::string failure_message(const Verdict& v);

// A one-line summary for logs: "PASS differential cpu_float32/spmm_ve: worst 0.31 of bound (…)";
// other conclusions are named ("INCONCLUSIVE adjoint …: <detail>").
std::string one_line(const Verdict& v);

}  // namespace gnncheck::checks
