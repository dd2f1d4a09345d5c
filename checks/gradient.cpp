// The gradient check: a float64 system's backward vs central finite differences of its own forward
// (oracle/gradcheck: the full Jacobian on small cases, random directions on large ones). This is
// what the oracle is trusted by, so nothing here uses the oracle.
//
// Element-wise differences fail where the forward has a kink (ReLU at 0) or a Jacobian block is ~0
// (saturated softmax) although the backward is right. An input whose elements disagree is probed
// once more along a random direction with the system's own forward at steps h/2, h, 2h
// (checks/derivative_probe.h): if that directional identity holds, or the probe shows a kink or a
// singularity, the input is inconclusive (shown and counted, never passed); if it disagrees where
// the forward is smooth, the element-wise failure stands.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/check_support.h"
#include "checks/derivative_probe.h"
#include "core/error.h"
#include "oracle/gradcheck.h"
#include "oracle/random_case.h"

namespace gnncheck::checks {

using namespace detail;

namespace {

Tensor& input_tensor(Case& c, const std::string& name) {
  auto it = c.inputs.find(name);
  if (it != c.inputs.end()) return it->second;
  return c.parameters.at(name);
}

index_t widest_row(const Case& c) {
  index_t w = 0;
  for (const auto& m : {c.inputs, c.parameters, c.grad_outputs})
    for (const auto& [name, t] : m) w = std::max(w, std::max(t.row_size(), t.rows()));
  return w;
}

index_t max_degree(const Graph& g) {
  index_t d = 0;
  for (index_t i = 0; i < g.n_dst(); ++i) d = std::max(d, g.in_degree(i));
  for (index_t j = 0; j < g.n_src(); ++j) d = std::max(d, g.out_degree(j));
  return d;
}

// The system's own probe along a seeded direction: nullopt (with `failure` set) when an evaluation
// did not answer properly. Bound: 8 × the spread of q over the three steps (truncation ∝ h²,
// rounding ∝ 1/h) + 2·γ_k·Σ|terms| + 2·u·Σ|ȳ|(|f₊| + |f₋|)/2h, u = 2⁻⁵³.
std::optional<DerivativeProbe> self_probe(System& system, const Case& at, const std::string& input, const Tensor& grad,
                                          std::uint64_t seed, std::string& failure) {
  constexpr double u = 0x1p-53;
  const Tensor& x = input_tensor(const_cast<Case&>(at), input);
  double sq = 0;
  for (double e : x.values()) sq += e * e;
  const double scale = x.size() && sq > 0 ? std::sqrt(sq / static_cast<double>(x.size())) : 1.0;
  const double h = std::cbrt(u) * scale;
  const Tensor direction = oracle::random_tensor(x.shape(), seed, "gradient direction " + input);
  Case forward_only = at;
  forward_only.grad_outputs.clear();
  const Result mid = system.evaluate(forward_only);
  if (!mid.ok()) {
    failure = fmt::format("forward at x: {}: {}", to_string(mid.status), mid.message);
    return std::nullopt;
  }
  const double k = static_cast<double>(max_degree(*at.graph) + widest_row(at) + 8);
  auto one = [&](double step, StepProbe& probe, double& abs_terms) -> bool {
    Case plus = forward_only, minus = forward_only;
    Tensor& xp = input_tensor(plus, input);
    Tensor& xm = input_tensor(minus, input);
    Tensor u_eff(x.shape());
    for (index_t i = 0; i < x.size(); ++i) {
      xp[i] = x[i] + step * direction[i];
      xm[i] = x[i] - step * direction[i];
      u_eff[i] = (xp[i] - xm[i]) / (2 * step);
    }
    const Result fp = system.evaluate(plus), fm = system.evaluate(minus);
    if (!fp.ok() || !fm.ok()) {
      const Result& bad = fp.ok() ? fm : fp;
      failure = fmt::format("forward at x ± h·u for input '{}': {}: {}", input, to_string(bad.status), bad.message);
      return false;
    }
    double quotient = 0, noise = 0, second = 0, abs_quotient = 0;
    for (const auto& [name, gy] : at.grad_outputs) {
      auto a = fp.outputs.find(name), b = fm.outputs.find(name), m = mid.outputs.find(name);
      if (a == fp.outputs.end() || b == fm.outputs.end() || m == mid.outputs.end() || a->second.size() != gy.size() ||
          b->second.size() != gy.size() || m->second.size() != gy.size()) {
        failure = fmt::format("the forward answer lacks output '{}' or has the wrong shape", name);
        return false;
      }
      for (index_t i = 0; i < gy.size(); ++i) {
        if (same_infinity(a->second[i], b->second[i])) continue;  // constant there (an empty row's −∞): no change
        const double d = (a->second[i] - b->second[i]) / (2 * step);
        quotient += gy[i] * d;
        abs_quotient += std::abs(gy[i] * d);
        noise += std::abs(gy[i]) * (std::abs(a->second[i]) + std::abs(b->second[i]));
        second += gy[i] * (a->second[i] - 2 * m->second[i] + b->second[i]);
      }
    }
    double derivative = 0, abs_derivative = 0;
    for (index_t i = 0; i < grad.size(); ++i) {
      derivative += grad[i] * u_eff[i];
      abs_derivative += std::abs(grad[i] * u_eff[i]);
    }
    probe = StepProbe{step, quotient, derivative, std::abs(second) / step, noise * u / (2 * step)};
    abs_terms = abs_quotient + abs_derivative;
    return true;
  };
  DerivativeProbe p;
  double abs_half = 0, abs_full = 0, abs_twice = 0;
  if (!one(h / 2, p.half, abs_half) || !one(h, p.full, abs_full) || !one(2 * h, p.twice, abs_twice)) return std::nullopt;
  const double spread = std::max({p.half.q(), p.full.q(), p.twice.q()}) - std::min({p.half.q(), p.full.q(), p.twice.q()});
  p.bound = 8 * spread + 2 * gamma(k, u) * abs_full + 2 * p.full.resolution;
  return p;
}

}  // namespace

namespace {

// The case the finite differences run on: moved off exact kinks (integer or zero inputs put ReLU
// pre-activations exactly at 0) by the continuous jitter, since float64 finite differences store
// nothing in a half format; output gradients of ones where the case has none.
Case with_output_gradients(const Case& c) {
  Case out = jittered(c, c.seed, HalfGrid::ignore);
  if (out.grad_outputs.empty()) {
    const Result exact = exact_result(c);
    for (const auto& [name, y] : exact.outputs) out.grad_outputs[name] = Tensor(y.shape(), 1.0);
  }
  return out;
}


// One input's element-wise comparison, as oracle/gradcheck found it.
TensorComparison comparison_of(const oracle::InputAgreement& in) {
  TensorComparison tc;
  tc.tensor = "gradient " + in.input;
  tc.input = in.input;
  tc.is_gradient = true;
  tc.elements = in.comparisons;
  tc.elements_over_bound = in.passed ? 0 : 1;
  tc.worst_ratio = in.bound > 0 ? in.worst_relative_error / in.bound : 0.0;
  tc.worst = ElementReport{0, {}, in.worst_analytical, in.worst_numerical, in.bound};
  tc.agreement = in.passed ? Agreement::agrees : Agreement::disagrees;
  if (in.comparisons == 0)
    mark_inconclusive(tc, in.left_out_at_kinks > 0
                              ? fmt::format("nothing compared: every step of the {} column(s) or direction(s) "
                                            "crossed a kink (oracle/gradcheck.h)",
                                            in.left_out_at_kinks)
                              : std::string("nothing to compare (the input or every output is empty)"));
  return tc;
}

// An input whose elements disagree, probed along a random direction with the system's own forward:
// a kink or a vanishing Jacobian block makes it inconclusive, a smooth disagreement leaves the
// failure standing. False (with v's status and detail set) when an evaluation did not answer properly.
bool probe_disagreement(Verdict& v, System& system, const Case& with_grads, const Result& backward,
                        const oracle::InputAgreement& in, std::uint64_t seed, TensorComparison& tc) {
  const auto g = backward.gradients.find(in.input);
  std::string failure;
  const std::optional<DerivativeProbe> probe =
      g == backward.gradients.end() ? std::nullopt : self_probe(system, with_grads, in.input, g->second, seed, failure);
  if (!failure.empty()) {
    v.system_status = Status::invalid_output;
    v.detail = failure;
    return false;
  }
  if (!probe) return true;
  const ProbeFinding finding = classify_probe(*probe);
  if (finding.outcome != ProbeOutcome::disagrees)
    mark_inconclusive(tc, fmt::format("finite differences disagree element-wise at {} ({:.3g} relative), but "
                                      "along a random direction the system's own differences say {}: {} — a "
                                      "kink or a vanishing Jacobian block",
                                      in.worst_location, in.worst_relative_error, to_string(finding.outcome),
                                      finding.reason));
  return true;
}

// The headline of this check is the relative disagreement, not the raw element values.
void state_relative_disagreement(Verdict& v, const oracle::GradcheckReport& report) {
  for (const auto& in : report.inputs)
    if ("gradient " + in.input == v.tensor && v.conclusion != Conclusion::inconclusive) {
      v.metric = in.worst_relative_error;
      v.bound = in.bound;
      if (!v.passed())
        v.detail = fmt::format("At {} ({}): backward {:.9g}, finite differences {:.9g}.", in.worst_location, in.method,
                               in.worst_analytical, in.worst_numerical);
    }
}

}  // namespace

Verdict gradient(System& system, const Case& c, const CheckOptions& options) {
  Verdict v = start_verdict(CheckKind::gradient, system, c, options);
  if (v.precision != Precision::float64)
    return not_applicable(v, fmt::format("finite differences need a float64 system; '{}' declares {} for '{}' "
                                         "(the adjoint check covers it)",
                                         v.system, to_string(v.precision), c.target));
  // oracle/gradcheck compares only the inputs the case has (a disabled bias is absent).
  const oracle::TargetSpec& spec = oracle::entry_of(c).spec;
  const Case with_grads = with_output_gradients(c);
  const oracle::CaseEvaluator evaluate = [&system](const Case& k) { return system.evaluate(k); };
  oracle::GradcheckOptions gc;
  gc.seed = c.seed;
  const bool full = element_count(with_grads) <= options.gradient_full_jacobian_limit;
  const oracle::GradcheckReport report = full ? oracle::check_full_jacobian(evaluate, with_grads, spec, gc)
                                              : oracle::check_random_directions(evaluate, with_grads, spec, gc);
  v.tolerance_model = fmt::format("relative disagreement ≤ {:.3g} (oracle/gradcheck: h = 2^-18, {})", gc.bound,
                                  full ? "full Jacobian" : "random directions");
  v.metric_name = "relative disagreement of backward and finite differences";
  if (!report.failure.empty()) {
    v.system_status = Status::error;
    v.detail = report.failure;
    summarize(v);
    return v;
  }
  std::optional<Result> backward;  // the system's gradients at with_grads, once an input needs a probe
  std::uint64_t stream = 0;
  for (const auto& in : report.inputs) {
    ++stream;
    TensorComparison tc = comparison_of(in);
    if (!in.passed) {
      if (!backward) {
        backward = system.evaluate(with_grads);
        if (system_failed(v, *backward, "evaluating the case with output gradients")) return v;
      }
      if (!probe_disagreement(v, system, with_grads, *backward, in, c.seed + 7919 * stream, tc)) {
        summarize(v);
        return v;
      }
    }
    v.comparisons.push_back(tc);
  }
  summarize(v);
  state_relative_disagreement(v, report);
  if (v.conclusion == Conclusion::fail) v.message = failure_message(v);
  return v;
}

}  // namespace gnncheck::checks
