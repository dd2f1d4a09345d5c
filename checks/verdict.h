// gnncheck/checks/verdict.h — what a check concludes about one system on one case.
//
// Every check (checks/checks.h) returns a Verdict: which check, system, target and tensor
// (output or gradient) it is about, whether it passed, the measured metric and the bound it was
// held to, the worst element with both values, the declared precision and the tolerance model
// used, the seed, and — on failure — a message a reader can act on and the command that re-runs
// exactly that case. `comparisons` keeps the per-tensor detail behind the headline numbers.
//
//   gnncheck::checks::Verdict v = gnncheck::checks::differential(system, c);
//   if (!v.passed) std::cerr << v.message << "\n";   // names system, target, tensor, element, seed
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oracle/case.h"

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

// The comparison of one tensor ("output y", "gradient x", "⟨ȳ,J·u⟩ vs ⟨Jᵀȳ,u⟩", …).
struct TensorComparison {
  std::string tensor;
  bool passed = true;
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
  bool passed = false;
  bool applicable = true;  // false: the check does not apply to this system or case (see detail); passed stays true
  Status system_status = Status::ok;  // anything but ok: the system errored and the verdict failed for it
  Precision precision = Precision::float64;  // the system's declared precision for the target
  std::string tolerance_model;  // how the bound was formed, e.g. "closed form 2·γ_k·Σ|w||x| (k = in-degree + 2)"
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
// naming both shapes (never thrown: they are the system's fault).
TensorComparison compare_elementwise(const std::string& tensor, const Tensor& actual, const Tensor& expected,
                                     const Tensor& bound);

// Fills the headline fields of `v` from its comparisons (the failing one with the worst ratio,
// or the worst overall when all pass) and sets v.passed.
void summarize(Verdict& v);

// The one-paragraph failure story: system, target, tensor, worst element with both values and its
// bound, precision and tolerance model, seed, counterexample and re-run command. Empty on a pass.
std::string failure_message(const Verdict& v);

// A one-line summary for logs: "PASS differential cpu_float32/spmm_ve: worst 0.31 of bound (…)".
std::string one_line(const Verdict& v);

}  // namespace gnncheck::checks
