// Metamorphic checks: answers of the system on related cases must be related exactly (up to the
// rounding a correct implementation makes, bounded by nondeterminism_factor × the differential bound:
// each answer may be off by its bound, in opposite directions). The oracle is used only for the
// bounds' magnitudes, never as the expected value.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "checks/check_support.h"
#include "core/error.h"
#include "oracle/random_case.h"

namespace gnncheck::checks {

using namespace detail;

namespace {

// Puts every output and gradient of `moved_result` back into the original order.
Result to_original(const oracle::TargetSpec& spec, const Result& moved_result, const Relabeling& r) {
  Result back = moved_result;
  for (auto& [name, t] : back.outputs) t = to_original_order(t, output_kind(spec, name), r);
  for (auto& [name, t] : back.gradients) t = to_original_order(t, input_kind(spec, name), r);
  return back;
}

Verdict transformed_agrees(CheckKind kind, System& system, const Case& c, const CheckOptions& options,
                           const Relabeling& moved, const std::string& what) {
  Verdict v = start_verdict(kind, system, c, options);
  const auto& spec = oracle::entry_of(c).spec;
  const Result original = system.evaluate(c);
  if (system_failed(v, original, "on the original case")) return v;
  const Result transformed = system.evaluate(moved.transformed);
  if (system_failed(v, transformed, "on the " + what + " case")) return v;
  Result back;
  try {
    back = to_original(spec, transformed, moved);
  } catch (const InputError& e) {
    v.system_status = Status::invalid_output;
    v.detail = e.what();
    summarize(v);
    return v;
  }
  const Result exact = exact_result(c);
  const Bounds bounds = ToleranceModel(options.tolerance).bounds(c, exact, formats_of(v));
  v.tolerance_model = fmt::format("{}× ({}) + {}·(|each answer|)", options.nondeterminism_factor, bounds.model,
                                  own_rounding_description(c, v.precision, options));
  v.metric_name = "|answer on the " + what + " case (mapped back) − answer on the original| at the worst element";
  // Expected = the system's own answer on the original case; actual = its answer after the move.
  compare_answers(v, spec, exact, original, back, bounds, options.nondeterminism_factor, "after " + what + ": ",
                  own_rounding_factor(c, v.precision, options));
  screen_kinks(v, c);
  summarize(v);
  if (v.conclusion == Conclusion::fail) {
    v.detail = fmt::format("got = the answer on the {} case mapped back, expected = the answer on the original case.",
                           what);
    v.message = failure_message(v);
    lead_with_forward_disagreement(v, c, original, options);
  }
  return v;
}

// Why relabeling the nodes changes the function itself, or empty. GAT's attention-dropout mask is
// drawn per edge id (oracle/layers/dropout.h: element e·H + h of the aggregated graph), and
// relabeling moves edges between rows, so the moved case drops other attention weights: a
// different function, not the same one relabeled. (Reordering within rows keeps each edge on a
// position with its own mask: checks/case_transforms.h.)
std::string edge_ids_define_the_function(const Case& c) {
  if (!edge_ids_enter_the_function(c)) return {};
  const oracle::TargetDef& def = oracle::entry_of(c);
  return fmt::format("{} with {} = {}: the dropout mask is a function of ({}, edge id), and "
                     "relabeling the nodes renumbers the edges across rows, which drops other attention weights; "
                     "the mask itself is checked by differential, adjoint, metamorphic_edge_order and the state checks",
                     c.target, def.dropout.probability_attribute,
                     oracle::dropout_probability(def, oracle::with_defaults(def.spec, c.attributes)), def.dropout.seed_attribute);
}

}  // namespace

Verdict metamorphic_relabel(System& system, const Case& c, const CheckOptions& options) {
  if (const std::string why = edge_ids_define_the_function(c); !why.empty())
    return not_applicable(start_verdict(CheckKind::metamorphic_relabel, system, c, options), why);
  return transformed_agrees(CheckKind::metamorphic_relabel, system, c, options, relabel_nodes(c, c.seed ^ 0x5eed),
                            "node-relabeled");
}

Verdict metamorphic_edge_order(System& system, const Case& c, const CheckOptions& options) {
  return transformed_agrees(CheckKind::metamorphic_edge_order, system, c, options,
                            shuffle_edges_within_rows(c, c.seed ^ 0xed9e), "row-shuffled");
}

Verdict metamorphic_linearity(System& system, const Case& c, const CheckOptions& options) {
  Verdict v = start_verdict(CheckKind::metamorphic_linearity, system, c, options);
  const auto& def = oracle::entry_of(c);
  constexpr double a = 1.5, b = -0.75;  // exact in binary: the combination adds no rounding of its own
  Case first = c;
  if (first.grad_outputs.empty()) first.grad_outputs = random_like(exact_result(c).outputs, c.seed, "linearity ȳ₁");
  Case second = c;
  second.grad_outputs = random_like(first.grad_outputs, c.seed, "linearity ȳ₂");
  Case combined = c;
  combined.grad_outputs = first.grad_outputs;
  for (auto& [name, t] : combined.grad_outputs)
    for (index_t i = 0; i < t.size(); ++i) t[i] = a * t[i] + b * second.grad_outputs.at(name)[i];

  const Result r1 = system.evaluate(first);
  if (system_failed(v, r1, "with ȳ₁")) return v;
  const Result r2 = system.evaluate(second);
  if (system_failed(v, r2, "with ȳ₂")) return v;
  const Result r12 = system.evaluate(combined);
  if (system_failed(v, r12, "with 1.5·ȳ₁ − 0.75·ȳ₂")) return v;

  const ToleranceModel model(options.tolerance);
  const Result e1 = exact_result(first), e2 = exact_result(second), e12 = exact_result(combined);
  const Bounds b1 = model.bounds(first, e1, formats_of(v)), b2 = model.bounds(second, e2, formats_of(v)),
               b12 = model.bounds(combined, e12, formats_of(v));
  // The model's bounds are built from the exact gradient's terms: where that gradient is 0 (an
  // empty column of Aᵀ, a cancelling sum) they are ~0, yet a backward computing some other linear
  // map rounds its own nonzero sums there. Each of the three answers is such a rounded sum, so its
  // rounding is also within safety·γ_K·|its own value| (no cancellation inside it assumed, K the most
  // terms any element can sum on this case): the terms of the compared quantities, added.
  const double self_factor = own_rounding_factor(c, v.precision, options);
  v.tolerance_model = fmt::format("bound(1.5ȳ₁−0.75ȳ₂) + 1.5·bound(ȳ₁) + 0.75·bound(ȳ₂), each {}; plus {} "
                                  "·(|g(1.5ȳ₁−0.75ȳ₂)| + 1.5·|g(ȳ₁)| + 0.75·|g(ȳ₂)|), the rounding of the system's own sums",
                                  b1.model, own_rounding_description(c, v.precision, options));
  v.metric_name = "|g(1.5ȳ₁ − 0.75ȳ₂) − (1.5·g(ȳ₁) − 0.75·g(ȳ₂))| at the worst element";
  for (const NamedTensor& nt : result_tensors(def.spec, e12)) {
    if (!nt.is_gradient) continue;
    const Tensor* g1 = find_tensor(r1, nt);
    const Tensor* g2 = find_tensor(r2, nt);
    const Tensor* g12 = find_tensor(r12, nt);
    const Tensor& exact_combined = *find_tensor(e12, nt);
    Tensor expected(exact_combined.shape()), bound(exact_combined.shape());
    const bool complete = g1 && g2 && g1->shape() == exact_combined.shape() && g2->shape() == exact_combined.shape();
    const bool combined_complete = complete && g12 && g12->shape() == exact_combined.shape();
    for (index_t i = 0; i < expected.size(); ++i) {
      expected[i] = complete ? a * (*g1)[i] + b * (*g2)[i] : 0.0;
      bound[i] = b12.tensors.at(nt.label)[i] + std::abs(a) * b1.tensors.at(nt.label)[i] +
                 std::abs(b) * b2.tensors.at(nt.label)[i];
      if (combined_complete) {
        const double own = std::abs((*g12)[i]) + std::abs(a * (*g1)[i]) + std::abs(b * (*g2)[i]);
        if (std::isfinite(own)) bound[i] += self_factor * own;
      }
    }
    TensorComparison tc = compare_elementwise(nt.label, complete && g12 ? *g12 : Tensor(), expected, bound);
    if (complete && g12) disagree_where_exact_is_finite(tc, *g12, expected, exact_combined, bound);
    for (const Bounds* range : {&b1, &b2, &b12})
      if (complete && g12 && !range->no_bound.empty()) {
        mark_inconclusive(tc, range->no_bound);
        break;
      }
    tc.input = nt.name;
    tc.is_gradient = true;
    v.comparisons.push_back(std::move(tc));
  }
  if (v.comparisons.empty()) return not_applicable(v, fmt::format("target '{}' returned no gradients", c.target));
  screen_kinks(v, c, /*same_inputs=*/true);
  summarize(v);
  if (v.conclusion == Conclusion::fail) {
    v.detail = "got = the gradient for the combined output gradient, expected = the same combination of the "
               "gradients: the backward is not linear in the output gradient.";
    v.message = failure_message(v);
    lead_with_forward_disagreement(v, first, r1, options);
  }
  return v;
}

}  // namespace gnncheck::checks
