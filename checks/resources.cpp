// The resources check: memory (live_bytes(), peak_bytes) must not grow over repeated evaluations of
// one case after a warm-up.
#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "checks/check_support.h"
#include "core/error.h"

namespace gnncheck::checks {

using namespace detail;

Verdict resources(System& system, const Case& c, const CheckOptions& options) {
  Verdict v = start_verdict(CheckKind::resources, system, c, options);
  if (options.resource_evaluations < options.resource_warmup + 2)
    throw InputError(fmt::format("resources check: {} evaluations leave fewer than 2 after {} warm-up ones",
                                 options.resource_evaluations, options.resource_warmup));
  std::vector<std::int64_t> live, peak;
  for (int k = 0; k < options.resource_evaluations; ++k) {
    const Result r = system.evaluate(c);
    if (system_failed(v, r, fmt::format("evaluation {}", k + 1))) return v;
    if (auto b = system.live_bytes()) live.push_back(*b);
    if (r.peak_bytes) peak.push_back(*r.peak_bytes);
  }
  const size_t n = static_cast<size_t>(options.resource_evaluations);
  const bool have_live = live.size() == n, have_peak = peak.size() == n;
  if (!have_live && !have_peak)
    return not_applicable(v, fmt::format("system '{}' reports neither live_bytes() nor peak_bytes", v.system));
  v.tolerance_model = fmt::format("growth after {} warm-up evaluations ≤ {} bytes", options.resource_warmup,
                                  options.resource_allowance_bytes);
  v.metric_name = "bytes gained between the first evaluation after warm-up and the last";
  const size_t first = static_cast<size_t>(options.resource_warmup);
  for (const auto& [label, series, have] : {std::tuple{"live_bytes()", &live, have_live},
                                           std::tuple{"peak_bytes", &peak, have_peak}}) {
    if (!have) continue;
    const double growth = static_cast<double>((*series)[n - 1] - (*series)[first]);
    TensorComparison tc;
    tc.tensor = fmt::format("{} over {} evaluations", label, n);
    tc.elements = static_cast<std::int64_t>(n);
    tc.agreement = growth <= static_cast<double>(options.resource_allowance_bytes) ? Agreement::agrees : Agreement::disagrees;
    tc.elements_over_bound = tc.agrees() ? 0 : 1;
    const double allowance = static_cast<double>(options.resource_allowance_bytes);
    tc.worst_ratio = tc.agrees() ? 0.0 : (allowance > 0 ? growth / allowance : INFINITY);
    tc.worst = ElementReport{static_cast<std::int64_t>(n - 1), {}, static_cast<double>((*series)[n - 1]),
                             static_cast<double>((*series)[first]), allowance};
    v.comparisons.push_back(tc);
  }
  summarize(v);
  v.metric = 0;
  for (const auto& tc : v.comparisons)
    if (tc.worst) v.metric = std::max(v.metric, tc.worst->actual - tc.worst->expected);
  v.bound = static_cast<double>(options.resource_allowance_bytes);
  if (v.conclusion == Conclusion::fail) {
    v.detail = fmt::format("memory grew by {:.0f} bytes over {} evaluations of the same case (got = bytes at the "
                           "last evaluation, expected = bytes after warm-up).",
                           v.metric, n - first - 1);
    v.message = failure_message(v);
  }
  return v;
}

}  // namespace gnncheck::checks
