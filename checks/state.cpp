// Checks of behavior across evaluations: state (interleaved and repeated), numerics at large
// magnitudes and resource growth.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "checks/check_support.h"
#include "oracle/error.h"
#include "oracle/random_case.h"

namespace gnncheck::checks {

using namespace detail;

namespace {

// B: the same graph and attributes as A, fresh values in A's range.
Case other_inputs(const Case& a) {
  double largest = 0.0;
  for (const auto& m : {a.inputs, a.parameters})
    for (const auto& [name, t] : m)
      for (double x : t.values()) largest = std::max(largest, std::abs(x));
  const double range = largest > 0 ? largest : 1.0;
  Case b = a;
  b.inputs = random_like(a.inputs, a.seed, "state B input", -range, range);
  b.parameters = random_like(a.parameters, a.seed, "state B parameter", -range, range);
  b.grad_outputs = random_like(a.grad_outputs, a.seed, "state B ȳ");
  return b;
}

Verdict repeated_agrees(CheckKind kind, System& system, const Case& c, const CheckOptions& options,
                        const Result& first, const Result& again, const std::string& what) {
  Verdict v = start_verdict(kind, system, c, options);
  const auto& spec = oracle::find_target(c.target).spec;
  const Bounds bounds = ToleranceModel(options.tolerance).bounds(c, exact_result(c), v.precision);
  v.tolerance_model = fmt::format("non-determinism tolerance {}× ({})", options.nondeterminism_factor, bounds.model);
  v.metric_name = "|later answer − first answer| at the worst element";
  compare_all(v, spec, first, again, bounds, options.nondeterminism_factor, what);
  screen_kinks(v, c, /*same_inputs=*/true);
  summarize(v);
  return v;
}

}  // namespace

Verdict state_interleaved(System& system, const Case& c, const CheckOptions& options) {
  Verdict v = start_verdict(CheckKind::state_interleaved, system, c, options);
  Case a = c;
  if (a.grad_outputs.empty()) a.grad_outputs = random_like(exact_result(c).outputs, c.seed, "state ȳ");
  Case a_forward = a, b_forward = other_inputs(a);
  a_forward.grad_outputs.clear();
  Case b_full = b_forward;
  b_forward.grad_outputs.clear();

  const Result alone = system.evaluate(a);
  if (system_failed(v, alone, "A with gradients, first")) return v;
  for (const auto& [step, k] : {std::pair<const char*, const Case*>{"A forward", &a_forward}, {"B forward", &b_forward}}) {
    if (system_failed(v, system.evaluate(*k), step)) return v;
  }
  const Result after_forwards = system.evaluate(a);
  if (system_failed(v, after_forwards, "A with gradients after A and B forward")) return v;
  if (system_failed(v, system.evaluate(b_full), "B with gradients")) return v;
  const Result after_b = system.evaluate(a);
  if (system_failed(v, after_b, "A with gradients after B with gradients")) return v;

  Verdict first = repeated_agrees(CheckKind::state_interleaved, system, c, options, alone, after_forwards,
                                  "after forward(A), forward(B): ");
  Verdict second =
      repeated_agrees(CheckKind::state_interleaved, system, c, options, alone, after_b, "after evaluating B: ");
  v.tolerance_model = first.tolerance_model;
  v.metric_name = first.metric_name;
  v.comparisons = first.comparisons;
  v.comparisons.insert(v.comparisons.end(), second.comparisons.begin(), second.comparisons.end());
  summarize(v);
  if (v.conclusion == Conclusion::fail) {
    v.detail = "expected = A's answer evaluated alone first; got = A's answer after other evaluations: the system "
               "keeps state between evaluations (e.g. a backward reading a buffer a later forward overwrote).";
    v.message = failure_message(v);
  }
  return v;
}

Verdict state_repeat(System& system, const Case& c, const CheckOptions& options) {
  Verdict v = start_verdict(CheckKind::state_repeat, system, c, options);
  const Result first = system.evaluate(c);
  if (system_failed(v, first, "first evaluation")) return v;
  const Result second = system.evaluate(c);
  if (system_failed(v, second, "second evaluation")) return v;
  v = repeated_agrees(CheckKind::state_repeat, system, c, options, first, second, "second evaluation: ");
  if (v.conclusion == Conclusion::fail) {
    v.detail = "expected = the first answer, got = the second answer to the same case.";
    v.message = failure_message(v);
  }
  return v;
}

namespace {

double largest_finite(Precision p) {
  switch (p) {
    case Precision::float64: return std::numeric_limits<double>::max();
    case Precision::float32:
    case Precision::tf32: return std::numeric_limits<float>::max();
    case Precision::bfloat16: return 3.3895313892515355e38;
    case Precision::float16: return 65504.0;
  }
  return 0.0;
}

}  // namespace

Verdict numerics(System& system, const Case& c, const CheckOptions& options) {
  Verdict v = start_verdict(CheckKind::numerics, system, c, options);
  double largest = 0.0;
  for (const auto& m : {c.inputs, c.parameters})
    for (const auto& [name, t] : m)
      for (double x : t.values()) largest = std::max(largest, std::abs(x));
  if (largest == 0.0) return not_applicable(v, "every input is zero; there is nothing to scale");
  const double scale = options.numerics_magnitude / largest;
  Case big = c;
  for (TensorMap* m : {&big.inputs, &big.parameters})
    for (auto& [name, t] : *m)
      for (double& x : t.values()) x *= scale;
  const auto& spec = oracle::find_target(c.target).spec;
  const Result exact = exact_result(big);
  const Result got = system.evaluate(big);
  if (system_failed(v, got, fmt::format("with inputs scaled to |x| ≤ {:g}", options.numerics_magnitude))) return v;
  // Representable: finite and with headroom of 16 below the format's largest value, where a correct
  // implementation cannot overflow in its last few operations.
  const double limit = largest_finite(v.precision) / 16;
  v.tolerance_model = fmt::format("finite wherever the exact result is finite and below {:.3g}", limit);
  v.metric_name = "non-finite elements where the exact result is representable";
  index_t representable = 0;
  for (const NamedTensor& nt : result_tensors(spec, exact)) {
    const Tensor& y = *find_tensor(exact, nt);
    const Tensor* s = find_tensor(got, nt);
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

Verdict resources(System& system, const Case& c, const CheckOptions& options) {
  Verdict v = start_verdict(CheckKind::resources, system, c, options);
  if (options.resource_evaluations < options.resource_warmup + 2)
    throw InputError(fmt::format("resources check: {} evaluations leave fewer than 2 after {} warm-up ones",
                                 options.resource_evaluations, options.resource_warmup));
  std::vector<std::int64_t> live, peak, reported_device;
  // gnncheck's own readings, per evaluation: a system measured around its evaluations has none
  // before its first (its context did not exist yet), which only the warm-up may lack.
  std::vector<std::optional<device_memory::Reading>> readings;
  for (int k = 0; k < options.resource_evaluations; ++k) {
    const Result r = system.evaluate(c);
    if (system_failed(v, r, fmt::format("evaluation {}", k + 1))) return v;
    if (auto b = system.live_bytes()) live.push_back(*b);
    if (r.peak_bytes) peak.push_back(*r.peak_bytes);
    if (auto d = system.reported_device_bytes()) reported_device.push_back(*d);
    readings.push_back(system.measured_device_bytes());
  }
  const size_t n = static_cast<size_t>(options.resource_evaluations);
  const size_t first = static_cast<size_t>(options.resource_warmup);
  const bool have_device = std::any_of(readings.begin(), readings.end(), [](const auto& r) { return r.has_value(); });
  std::vector<std::int64_t> device(n, 0);
  std::vector<std::string> device_sources(n);
  bool device_complete = true;  // a reading at every evaluation after warm-up
  for (size_t k = 0; k < n; ++k) {
    if (readings[k]) {
      device[k] = readings[k]->bytes;
      device_sources[k] = readings[k]->source;
    } else if (k >= first) {
      device_complete = false;
      device_sources[k] = "no reading";
    }
  }
  const bool have_live = live.size() == n, have_peak = peak.size() == n;
  const bool have_reported_device = reported_device.size() == n;
  if (!have_live && !have_peak && !have_device && !have_reported_device)
    return not_applicable(v, fmt::format("system '{}' reports neither live_bytes() nor peak_bytes, and gnncheck measured "
                                         "no device memory of it",
                                         v.system));
  // One measurement kind over every evaluation after warm-up, or the series cannot be compared.
  const bool device_comparable =
      have_device && device_complete &&
      std::all_of(device_sources.begin() + static_cast<std::ptrdiff_t>(first), device_sources.end(),
                  [&](const std::string& s) { return s == device_sources.back(); });
  v.tolerance_model = fmt::format(
      "growth after {} warm-up evaluations: ≤ {} bytes in what the system reports (live_bytes(), peak_bytes); ≤ {} bytes "
      "(one driver page) in device memory as the driver counts it (device_bytes reported by the system, and what "
      "gnncheck measures itself: {})",
      options.resource_warmup, options.resource_allowance_bytes, device_memory::kDriverPageBytes,
      have_device ? device_sources.back() : "not measured for this system");
  v.metric_name = "bytes gained between the first evaluation after warm-up and the last";
  struct Series {
    std::string label;
    const std::vector<std::int64_t>* values;
    bool have;
    std::int64_t allowance;
  };
  const std::vector<Series> all = {
      {"live_bytes() reported by the system", &live, have_live, options.resource_allowance_bytes},
      {"peak_bytes reported by the system", &peak, have_peak, options.resource_allowance_bytes},
      {"device_bytes reported by the system", &reported_device, have_reported_device, device_memory::kDriverPageBytes},
      {fmt::format("device memory measured by gnncheck ({})", have_device ? device_sources.back() : ""), &device,
       device_comparable, device_memory::kDriverPageBytes},
  };
  for (const Series& s : all) {
    if (!s.have) continue;
    const auto& series = *s.values;
    const double growth = static_cast<double>(series[n - 1] - series[first]);
    const double allowance = static_cast<double>(s.allowance);
    TensorComparison tc;
    tc.tensor = fmt::format("{} over {} evaluations", s.label, n);
    tc.elements = static_cast<std::int64_t>(n);
    tc.agreement = growth <= allowance ? Agreement::agrees : Agreement::disagrees;
    tc.elements_over_bound = tc.agrees() ? 0 : 1;
    tc.worst_ratio = tc.agrees() ? 0.0 : (allowance > 0 ? growth / allowance : INFINITY);
    tc.worst = ElementReport{static_cast<std::int64_t>(n - 1), {}, static_cast<double>(series[n - 1]),
                             static_cast<double>(series[first]), allowance};
    v.comparisons.push_back(tc);
  }
  summarize(v);
  // The headline comparison (the worst disagreeing one, else the worst agreeing one) gives the figures.
  v.metric = v.worst ? v.worst->actual - v.worst->expected : 0.0;
  v.bound = v.worst ? v.worst->bound : 0.0;
  if (have_device && !device_comparable && v.conclusion != Conclusion::fail) {
    // Fail closed: what the system reports is not enough to pass a GPU system's memory.
    v.conclusion = Conclusion::inconclusive;
    v.detail = fmt::format("gnncheck's device-memory measurement changed kind during the evaluations after warm-up "
                           "(from '{}' to '{}'), so its readings cannot be compared",
                           device_sources[first], device_sources.back());
  }
  if (v.conclusion == Conclusion::fail) {
    v.detail = fmt::format("memory grew by {:.0f} bytes over {} evaluations of the same case (got = bytes at the "
                           "last evaluation, expected = bytes after warm-up; bound {:.0f} bytes).",
                           v.metric, n - first - 1, v.bound);
    v.message = failure_message(v);
  }
  return v;
}

Verdict run_check(CheckKind kind, System& system, const Case& c, const CheckOptions& options) {
  switch (kind) {
    case CheckKind::differential: return differential(system, c, options);
    case CheckKind::gradient: return gradient(system, c, options);
    case CheckKind::adjoint: return adjoint(system, c, options);
    case CheckKind::op_order: return op_order(system, c, options);
    case CheckKind::metamorphic_relabel: return metamorphic_relabel(system, c, options);
    case CheckKind::metamorphic_edge_order: return metamorphic_edge_order(system, c, options);
    case CheckKind::metamorphic_linearity: return metamorphic_linearity(system, c, options);
    case CheckKind::state_interleaved: return state_interleaved(system, c, options);
    case CheckKind::state_repeat: return state_repeat(system, c, options);
    case CheckKind::numerics: return numerics(system, c, options);
    case CheckKind::resources: return resources(system, c, options);
  }
  throw InternalError("run_check: unknown check kind");
}

}  // namespace gnncheck::checks
