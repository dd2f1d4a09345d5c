#include "checks/check_support.h"

#include <algorithm>

#include <fmt/format.h>

#include "checks/kinks.h"
#include "core/error.h"

namespace gnncheck::checks::detail {

Verdict start_verdict(CheckKind kind, System& system, const Case& c, const CheckOptions& options) {
  Verdict v;
  v.check = kind;
  v.system = system.name();
  v.target = c.target;
  v.precision = system.precision(c.target);
  v.seed = c.seed;
  v.rerun_command = options.rerun_command;
  return v;
}

Result exact_result(const Case& c) {
  Result r = oracle::evaluate(c, Precision::float64);
  if (!r.ok()) throw InputError(fmt::format("the oracle rejects this case of target '{}': {}", c.target, r.message));
  return r;
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
                          const Result* exact = nullptr) {
  for (const NamedTensor& nt : result_tensors(spec, reference)) {
    const Tensor& expected = *find_tensor(reference, nt);
    Tensor bound = bounds.tensors.at(nt.label);
    for (double& b : bound.values()) b *= factor;
    const Tensor* got = find_tensor(actual, nt);
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
    v.comparisons.push_back(std::move(tc));
  }
}

}  // namespace

void compare_with_exact(Verdict& v, const oracle::TargetSpec& spec, const Result& exact, const Result& actual,
                        const Bounds& bounds, const std::string& label_prefix) {
  compare_every_tensor(v, spec, exact, actual, bounds, 1.0, true, label_prefix);
}

void compare_answers(Verdict& v, const oracle::TargetSpec& spec, const Result& exact, const Result& first,
                     const Result& later, const Bounds& bounds, double factor, const std::string& label_prefix) {
  compare_every_tensor(v, spec, first, later, bounds, factor, false, label_prefix, &exact);
}

Verdict not_applicable(Verdict v, const std::string& reason) {
  v.conclusion = Conclusion::not_applicable;
  v.detail = reason;
  v.message.clear();
  return v;
}

void screen_kinks(Verdict& v, const Case& c, bool same_inputs) {
  bool any_gradient = false;
  for (const auto& tc : v.comparisons) any_gradient = any_gradient || (tc.is_gradient && !tc.inconclusive());
  if (!any_gradient) return;
  const std::optional<NearestKink> kink = nearest_kink(c, v.precision);
  if (!kink || !kink->near || (same_inputs && kink->distance == 0)) return;
  for (auto& tc : v.comparisons)
    if (tc.is_gradient && !tc.inconclusive() && tc.reason.empty() &&
        std::find(kink->upstream.begin(), kink->upstream.end(), tc.input) != kink->upstream.end())
      mark_inconclusive(tc, fmt::format("{}: either one-sided derivative is valid there", kink->description));
}

void mark_inconclusive(TensorComparison& tc, const std::string& reason) {
  tc.agreement = Agreement::inconclusive;
  tc.reason = reason;
  tc.worst_ratio = 0;
  tc.elements_over_bound = 0;
}

}  // namespace gnncheck::checks::detail
