#include "checks/check_support.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "checks/tolerance.h"
#include "core/error.h"
#include "oracle/targets.h"

namespace gnncheck::checks::detail {

Verdict start_verdict(CheckKind kind, System& system, const Case& c, const CheckOptions& options) {
  Verdict v;
  v.check = kind;
  v.system = system.name();
  v.target = c.target;
  v.precision = system.precision(c.target);
  v.accumulation = system.accumulation(c.target);
  v.seed = c.seed;
  v.rerun_command = options.rerun_command;
  return v;
}

Result exact_result(const Case& c) {
  Result r = oracle::evaluate(c, Precision::float64);
  if (!r.ok()) throw InputError(fmt::format("the oracle rejects this case of target '{}': {}", c.target, r.message));
  return r;
}

index_t element_count(const Case& c) {
  index_t n = 0;
  for (const auto& m : {c.inputs, c.parameters, c.grad_outputs})
    for (const auto& [name, t] : m) n += t.size();
  return n;
}

bool system_failed(Verdict& v, const Result& got, const std::string& during) {
  if (got.ok()) return false;
  v.system_status = got.status;
  v.detail = fmt::format("{}{}: {}", during.empty() ? "" : during + ": ", to_string(got.status),
                         got.message.empty() ? std::string("(no message)") : got.message);
  summarize(v);
  return true;
}

namespace {

// factor scales the symmetric bound; `with_lower_side` adds the model's lower endpoints. `exact`
// (when `reference` is another answer of the system): the oracle's answer, for
// disagree_where_exact_is_finite.
void compare_every_tensor(Verdict& v, const oracle::TargetSpec& spec, const Result& reference, const Result& actual,
                          const Bounds& bounds, double factor, bool with_lower_side, const std::string& label_prefix,
                          const Result* exact = nullptr, double own_factor = 0.0) {
  for (const NamedTensor& nt : result_tensors(spec, reference)) {
    const Tensor& expected = *find_tensor(reference, nt);
    Tensor bound = bounds.tensors.at(nt.label);
    for (double& b : bound.values()) b *= factor;
    const Tensor* got = find_tensor(actual, nt);
    if (own_factor > 0 && got && got->shape() == expected.shape())
      for (index_t i = 0; i < bound.size(); ++i)
        if (const double own = std::abs(expected[i]) + std::abs((*got)[i]); std::isfinite(own)) bound[i] += own_factor * own;
    TensorComparison tc = compare_elementwise(label_prefix + nt.label, got ? *got : Tensor(), expected, bound,
                                              with_lower_side ? bounds.lowest_of(nt.label) : nullptr);
    tc.input = nt.name;
    tc.is_gradient = nt.is_gradient;
    if (!got) {
      tc.tensor += " (missing from the system's answer)";
      tc.reason = "missing from the system's answer";
    } else if (const Tensor* exact_tensor = exact ? find_tensor(*exact, nt) : nullptr) {
      disagree_where_exact_is_finite(tc, *got, expected, *exact_tensor, bound);
    }
    if (got && !bounds.no_bound.empty()) mark_inconclusive(tc, bounds.no_bound);
    v.comparisons.push_back(std::move(tc));
  }
}

}  // namespace

void compare_with_exact(Verdict& v, const oracle::TargetSpec& spec, const Result& exact, const Result& actual,
                        const Bounds& bounds, const std::string& label_prefix) {
  compare_every_tensor(v, spec, exact, actual, bounds, 1.0, true, label_prefix);
}

void compare_answers(Verdict& v, const oracle::TargetSpec& spec, const Result& exact, const Result& first,
                     const Result& later, const Bounds& bounds, double factor, const std::string& label_prefix,
                     double own_factor) {
  compare_every_tensor(v, spec, first, later, bounds, factor, false, label_prefix, &exact, own_factor);
}

namespace {

double longest_sum(const Case& c) {
  index_t degree = 0, row = 0;
  if (c.graph) {
    for (index_t i = 0; i < c.graph->n_dst(); ++i) degree = std::max(degree, c.graph->in_degree(i));
    for (index_t j = 0; j < c.graph->n_src(); ++j) degree = std::max(degree, c.graph->out_degree(j));
  }
  for (const auto& m : {c.inputs, c.parameters, c.grad_outputs})
    for (const auto& [name, t] : m) row = std::max(row, t.rows() ? t.row_size() : index_t{0});
  return static_cast<double>(degree + row + 2);
}

}  // namespace

double own_rounding_factor(const Case& c, Precision precision, const CheckOptions& options) {
  return options.tolerance.safety_factor * gamma(longest_sum(c), unit_roundoff(precision));
}

std::string own_rounding_description(const Case& c, Precision precision, const CheckOptions& options) {
  return fmt::format("{}·γ_{} (u = {:.3g})", options.tolerance.safety_factor, longest_sum(c), unit_roundoff(precision));
}

std::string forward_disagreement(const Case& c, const Result& answer, Precision precision, const CheckOptions& options) {
  if (!answer.ok() || answer.outputs.empty()) return {};
  Case forward = c;
  forward.grad_outputs.clear();
  Result exact;
  try {
    exact = exact_result(forward);
  } catch (const InputError&) {
    return {};
  }
  const Bounds bounds = ToleranceModel(options.tolerance).bounds(forward, exact, precision);
  Verdict scratch;
  Result outputs_only = answer;
  outputs_only.gradients.clear();
  compare_with_exact(scratch, oracle::entry_of(c).spec, exact, outputs_only, bounds);
  const TensorComparison* worst = nullptr;
  for (const auto& tc : scratch.comparisons)
    if (!tc.is_gradient && tc.disagrees() && (!worst || tc.worst_ratio > worst->worst_ratio)) worst = &tc;
  if (!worst) return {};
  return fmt::format("The system's own forward already disagrees with the oracle on this case ({} at {:.3g}× the "
                     "differential bound): it computes another function, and this check held its answers to each other, "
                     "not to the oracle; the differential check shows the forward's error.",
                     worst->tensor, worst->worst_ratio);
}

void lead_with_forward_disagreement(Verdict& v, const Case& c, const Result& answer, const CheckOptions& options) {
  if (v.conclusion != Conclusion::fail) return;
  const std::string first = forward_disagreement(c, answer, v.precision, options);
  if (first.empty()) return;
  v.message = first + "\n" + failure_message(v);
}

Verdict not_applicable(Verdict v, const std::string& reason) {
  v.conclusion = Conclusion::not_applicable;
  v.detail = reason;
  v.message.clear();
  return v;
}

void screen_kinks(Verdict& v, const Case& c, bool same_inputs) {
  CaseKinks kinks(c);
  screen_kinks(v, kinks, same_inputs);
}

void screen_kinks(Verdict& v, CaseKinks& kinks, bool same_inputs) {
  // Only gradients are screened, and the outputs of a target whose value jumps at its kinks: where
  // none is compared, the arguments are not evaluated.
  const auto& jumping = oracle::entry_of(kinks.kink_case()).kinks.jumping_outputs;
  bool any_screened = false;
  for (const auto& tc : v.comparisons)
    any_screened = any_screened || (!tc.inconclusive() && (tc.is_gradient || !jumping.empty()));
  if (!any_screened) return;
  // A jump that declares its element is held by the outputs' bounds, and by the gradients once its
  // ȳ is 0 (checks/jumps_within_rounding.h): each side reads the kinks it must heed.
  const auto deciding = [&](KinkReading reading) -> std::optional<NearestKink> {
    std::optional<NearestKink> kink = nearest_kink(kinks, formats_of(v), reading);
    if (!kink || !kink->near || (same_inputs && kink->distance == 0 && !kink->tie)) return std::nullopt;
    return kink;
  };
  const std::optional<NearestKink> for_gradients = deciding(KinkReading::gradients);
  const std::optional<NearestKink> for_outputs = jumping.empty() ? std::nullopt : deciding(KinkReading::outputs);
  if (!for_gradients && !for_outputs) return;
  const auto names = [](const std::vector<std::string>& list, const std::string& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  for (auto& tc : v.comparisons) {
    if (tc.inconclusive() || !tc.reason.empty()) continue;
    const std::optional<NearestKink>& kink = tc.is_gradient ? for_gradients : for_outputs;
    if (!kink) continue;
    if (tc.is_gradient && names(kink->upstream, tc.input))
      mark_inconclusive(tc, fmt::format("{}: {}", kink->description,
                                        kink->tie ? "any of the tied candidates may receive the gradient"
                                                  : "either one-sided derivative is valid there"));
    else if (!tc.is_gradient && names(kink->jumping_outputs, tc.input))
      mark_inconclusive(tc, fmt::format("{}: the value jumps there, and either side's is valid", kink->description));
  }
}

void mark_inconclusive(TensorComparison& tc, const std::string& reason) {
  tc.agreement = Agreement::inconclusive;
  tc.reason = reason;
  tc.worst_ratio = 0;
  tc.elements_over_bound = 0;
}

}  // namespace gnncheck::checks::detail
