// The state checks: behavior across evaluations, interleaved (forward on A, forward on B, backward
// for A) and repeated (the same case twice).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "checks/check_support.h"
#include "core/error.h"
#include "oracle/random_case.h"

namespace gnncheck::checks {

using namespace detail;

namespace {

// B: the same graph and attributes as A, fresh values in A's range.
Case other_inputs(const Case& a) {
  double largest = 0.0;
  for (const auto& m : {a.inputs, a.parameters})
    for (const auto& [name, t] : m)
      if (!is_index_tensor(a, name))
        for (double x : t.values()) largest = std::max(largest, std::abs(x));
  const double range = largest > 0 ? largest : 1.0;
  Case b = a;
  b.inputs = random_like(a.inputs, a.seed, "state B input", -range, range);
  b.parameters = random_like(a.parameters, a.seed, "state B parameter", -range, range);
  b.grad_outputs = random_like(a.grad_outputs, a.seed, "state B ȳ");
  // Fresh choices too (each edge's relation): state kept from A's types must show.
  const auto& spec = oracle::entry_of(a).spec;
  for (const auto& [name, count] : oracle::index_tensors(spec, oracle::with_defaults(spec, a.attributes)))
    if (auto it = b.inputs.find(name); it != b.inputs.end())
      it->second = oracle::random_index_tensor(it->second.shape(), a.seed, "state B input:" + name, count);
  return b;
}

Verdict repeated_agrees(CheckKind kind, System& system, const Case& c, const CheckOptions& options,
                        const Result& first, const Result& again, const std::string& what) {
  Verdict v = start_verdict(kind, system, c, options);
  const auto& spec = oracle::entry_of(c).spec;
  const Result exact = exact_result(c);
  const Bounds bounds = ToleranceModel(options.tolerance).bounds(c, exact, formats_of(v));
  v.tolerance_model = fmt::format("non-determinism tolerance {}× ({}) + {}·(|each answer|)", options.nondeterminism_factor,
                                  bounds.model, own_rounding_description(c, v.precision, options));
  v.metric_name = "|later answer − first answer| at the worst element";
  compare_answers(v, spec, exact, first, again, bounds, options.nondeterminism_factor, what,
                  own_rounding_factor(c, v.precision, options));
  screen_kinks(v, c, /*same_inputs=*/true);
  summarize(v);
  return v;
}

}  // namespace

StateCases state_interleaved_cases(const Case& c) {
  StateCases s{c, {}, {}, {}};
  if (s.a.grad_outputs.empty()) s.a.grad_outputs = random_like(exact_result(c).outputs, c.seed, "state ȳ");
  s.a_forward = s.a;
  s.a_forward.grad_outputs.clear();
  s.b_full = other_inputs(s.a);
  s.b_forward = s.b_full;
  s.b_forward.grad_outputs.clear();
  return s;
}

Verdict state_interleaved(System& system, const Case& c, const CheckOptions& options) {
  Verdict v = start_verdict(CheckKind::state_interleaved, system, c, options);
  const auto [a, a_forward, b_forward, b_full] = state_interleaved_cases(c);

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
    lead_with_forward_disagreement(v, a, alone, options);
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
    lead_with_forward_disagreement(v, c, first, options);
  }
  return v;
}

}  // namespace gnncheck::checks
