// The numerics check: inputs scaled to a large magnitude; wherever the exact result is representable
// the system's must be finite (e.g. a softmax without max subtraction overflows).
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "checks/check_support.h"
#include "checks/softmax_past_analysis.h"
#include "checks/tolerance_formats.h"
#include "core/error.h"
#include "oracle/targets.h"

namespace gnncheck::checks {

using namespace detail;

std::optional<Case> with_large_inputs(const Case& c, double magnitude) {
  double largest = 0.0;
  for (const auto& m : {c.inputs, c.parameters})
    for (const auto& [name, t] : m)
      if (!is_index_tensor(c, name))
        for (double x : t.values()) largest = std::max(largest, std::abs(x));
  if (largest == 0.0) return std::nullopt;
  const double scale = magnitude / largest;
  Case big = c;
  for (TensorMap* m : {&big.inputs, &big.parameters})
    for (auto& [name, t] : *m)
      if (!is_index_tensor(c, name))
        for (double& x : t.values()) x *= scale;
  return big;
}

Verdict numerics(System& system, const Case& c, const CheckOptions& options) {
  Verdict v = start_verdict(CheckKind::numerics, system, c, options);
  const std::optional<Case> scaled = with_large_inputs(c, options.numerics_magnitude);
  if (!scaled) return not_applicable(v, "every input is zero; there is nothing to scale");
  const Case& big = *scaled;
  const auto& spec = oracle::entry_of(c).spec;
  const oracle::TargetDef& def = oracle::entry_of(c);
  // Past the softmax analysis in a format coarser than float32 no bound is known, and the differential
  // check leaves such a case inconclusive: a correct answer may be off without limit, ±∞ once stored.
  // The GPU reference stored in float16 returned ∞ for GATv2's att gradient at logits of 10⁹, which
  // float32 rounds by about 60: enough to turn a one-hot row into a tie.
  Bounds past_analysis;
  note_softmax_past_analysis(def, big, v.precision, past_analysis);
  if (!past_analysis.no_bound.empty())
    return not_applicable(v, fmt::format("with inputs scaled to |x| ≤ {:g}, {}", options.numerics_magnitude,
                                         past_analysis.no_bound));
  const Result exact = exact_result(big);
  const std::optional<Result> reach = def.intermediate_magnitudes ? def.intermediate_magnitudes(big) : std::nullopt;
  const Result got = system.evaluate(big);
  if (system_failed(v, got, fmt::format("with inputs scaled to |x| ≤ {:g}", options.numerics_magnitude))) return v;
  // Representable: finite and with headroom of 16 below the format's largest value, where a correct
  // implementation cannot overflow in its last few operations; and so are the intermediate values
  // it may form on the way (TargetDef::intermediate_magnitudes: a product's partial products).
  const double limit = largest_finite(v.precision) / 16;
  v.tolerance_model = fmt::format("finite wherever the exact result is finite and below {:.3g}", limit);
  v.metric_name = "non-finite elements where the exact result is representable";
  index_t representable = 0;
  for (const NamedTensor& nt : result_tensors(spec, exact)) {
    const Tensor& y = *find_tensor(exact, nt);
    const Tensor* s = find_tensor(got, nt);
    const Tensor* intermediates = reach ? find_tensor(*reach, nt) : nullptr;
    TensorComparison tc;
    tc.tensor = fmt::format("{} (inputs scaled to |x| ≤ {:g})", nt.label, options.numerics_magnitude);
    tc.elements = y.size();
    tc.input = nt.name;
    tc.is_gradient = nt.is_gradient;
    if (!s || s->shape() != y.shape()) {
      tc.agreement = Agreement::disagrees;
      tc.worst_ratio = INFINITY;
      tc.elements_over_bound = y.size();
      tc.tensor += " (missing or misshapen)";
      v.comparisons.push_back(tc);
      continue;
    }
    for (index_t i = 0; i < y.size(); ++i) {
      if (!std::isfinite(y[i]) || std::abs(y[i]) > limit) continue;
      if (intermediates && intermediates->shape() == y.shape() && !((*intermediates)[i] <= limit)) continue;
      ++representable;
      if (std::isfinite((*s)[i])) continue;
      ++tc.elements_over_bound;
      if (!tc.worst) tc.worst = ElementReport{i, {}, (*s)[i], y[i], limit};
    }
    tc.agreement = tc.elements_over_bound == 0 ? Agreement::agrees : Agreement::disagrees;
    tc.worst_ratio = tc.agrees() ? 0.0 : INFINITY;
    v.comparisons.push_back(tc);
  }
  if (representable == 0)
    return not_applicable(v, fmt::format("no exact result of the scaled case is representable in {}",
                                         to_string(v.precision)));
  summarize(v);
  if (!v.passed()) {
    v.metric = 0;
    for (const auto& tc : v.comparisons) v.metric += static_cast<double>(tc.elements_over_bound);
    v.bound = 0;
    v.detail = "the system returned NaN or Inf where the exact result is finite (e.g. exp without subtracting the "
               "row maximum).";
    v.message = failure_message(v);
  } else {
    v.metric = 0;
    v.bound = 0;
  }
  return v;
}

}  // namespace gnncheck::checks
