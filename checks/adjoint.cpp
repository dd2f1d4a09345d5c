// The adjoint (transpose) check: ⟨ȳ, J·u⟩ = ⟨Jᵀ·ȳ, u⟩ using only the system's own answers.
//
// J·u comes from central differences of the system's forward, (f(x₊) − f(x₋)) / 2h with
// x± = round_p(x ± h·u) rounded to the system's declared precision p, so the system sees exactly the
// points we think it sees; the direction actually taken is u_eff = (x₊ − x₋) / 2h (exact in float64).
// h = u_p^(1/3) balances rounding (∝ u_p/h) against truncation (∝ h²). Jᵀ·ȳ is the system's backward.
//
// Bound, for one differentiable input: with q(h) = ⟨ȳ, D(h)⟩ − ⟨Jᵀȳ, u_eff(h)⟩,
//   |q(h)| ≤ M · spread + s · γ_k · (Σ|ȳ||D(h)| + Σ|Jᵀȳ||u_eff|) + s · u_p · Σ|ȳ|(|f₊| + |f₋|) / 2h
// where spread = max − min of q over the steps h/2, h, 2h estimates the finite-difference error
// (rounding grows as 1/h and truncation as h², so the three disagree by about as much as either
// is large), k bounds the terms of any sum in the case (max degree + widest row + 8), s is the
// safety factor and M the stated multiple. A backward that uses A for Aᵀ, drops a term or reads
// another input is off by O(Σ|ȳ||J·u|), constant in h, which the spread does not absorb.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/check_support.h"
#include "oracle/error.h"
#include "oracle/random_case.h"

namespace gnncheck::checks {

using namespace detail;

namespace {

double dot(const TensorMap& a, const TensorMap& b, bool absolute) {
  double s = 0.0;
  for (const auto& [name, t] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second.size() != t.size()) continue;
    for (index_t i = 0; i < t.size(); ++i) s += absolute ? std::abs(t[i] * it->second[i]) : t[i] * it->second[i];
  }
  return s;
}

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

}  // namespace

Verdict adjoint(System& system, const Case& c, const CheckOptions& options) {
  Verdict v = start_verdict(CheckKind::adjoint, system, c, options);
  const auto& def = oracle::find_target(c.target);
  const Precision p = v.precision;
  const double u = unit_roundoff(p);
  const double h = std::cbrt(u);
  const double safety = options.tolerance.safety_factor;

  // The base point: the case moved off exact kinks (see jittered()), representable in the declared
  // precision; ȳ from the case or seeded.
  Case base = jittered(c, c.seed);
  for (TensorMap* m : {&base.inputs, &base.parameters})
    for (auto& [name, t] : *m) t = rounded(t, p);
  if (base.grad_outputs.empty()) base.grad_outputs = random_like(exact_result(c).outputs, c.seed, "adjoint ȳ");
  const Result backward = system.evaluate(base);
  if (system_failed(v, backward, "evaluating the case with output gradients")) return v;

  Case forward_only = base;
  forward_only.grad_outputs.clear();
  const double k = static_cast<double>(max_degree(*c.graph) + widest_row(c) + 8);
  v.tolerance_model = fmt::format(
      "{}·spread of q over steps h/2, h, 2h + {}·γ_{:.0f}·Σ|terms| + {}·u·Σ|ȳ||f±|/2h (h = u^(1/3) = {:.3g}, u = {:.3g})",
      options.adjoint_multiple, safety, k, safety, h, u);
  v.metric_name = "|⟨ȳ, J·u⟩ − ⟨Jᵀȳ, u⟩| with J·u by central differences of the system's forward";

  // f(x) itself, for the one-sided slopes that reveal a kink (ReLU, LeakyReLU, a norm at 0).
  const Result at_x = system.evaluate(forward_only);
  if (system_failed(v, at_x, "forward at x")) return v;
  std::vector<std::string> inconclusive;

  std::uint64_t stream = 0;
  for (const auto& slot : def.spec.inputs) {
    if (!slot.differentiable) continue;
    if (!base.inputs.count(slot.name) && !base.parameters.count(slot.name)) continue;
    const Tensor& x = input_tensor(base, slot.name);
    const Tensor direction = oracle::random_tensor(x.shape(), c.seed + 7919 * ++stream, "adjoint direction " + slot.name);
    auto git = backward.gradients.find(slot.name);
    TensorComparison tc;
    tc.tensor = "gradient " + slot.name + " (⟨ȳ, J·u⟩ vs ⟨Jᵀȳ, u⟩)";
    tc.elements = 1;
    if (git == backward.gradients.end() || git->second.shape() != x.shape()) {
      tc.passed = false;
      tc.elements_over_bound = 1;
      tc.worst_ratio = INFINITY;
      tc.tensor += git == backward.gradients.end() ? " (missing from the system's answer)" : " (wrong shape)";
      v.comparisons.push_back(tc);
      continue;
    }
    const Tensor& grad = git->second;

    struct Probe {
      double q = 0, lhs = 0, rhs = 0, abs_terms = 0, output_noise = 0;
      double jump = 0;  // |⟨ȳ, f(x₊) − 2f(x) + f(x₋)⟩| / step: the change of one-sided slopes
    };
    auto probe = [&](double step, Probe& out) -> bool {
      Case plus = forward_only, minus = forward_only;
      Tensor& xp = input_tensor(plus, slot.name);
      Tensor& xm = input_tensor(minus, slot.name);
      Tensor u_eff(x.shape());
      for (index_t i = 0; i < x.size(); ++i) {
        xp[i] = round_to_precision(x[i] + step * direction[i], p);
        xm[i] = round_to_precision(x[i] - step * direction[i], p);
        u_eff[i] = (xp[i] - xm[i]) / (2 * step);
      }
      const Result fp = system.evaluate(plus);
      if (system_failed(v, fp, fmt::format("forward at x + h·u for input '{}'", slot.name))) return false;
      const Result fm = system.evaluate(minus);
      if (system_failed(v, fm, fmt::format("forward at x − h·u for input '{}'", slot.name))) return false;
      TensorMap jvp;
      double noise = 0.0, second_difference = 0.0;
      for (const auto& [name, gy] : base.grad_outputs) {
        auto a = fp.outputs.find(name), b = fm.outputs.find(name);
        if (a == fp.outputs.end() || b == fm.outputs.end() || a->second.shape() != gy.shape() ||
            b->second.shape() != gy.shape()) {
          v.system_status = Status::invalid_output;
          v.detail = fmt::format("the forward answer lacks output '{}' of shape {}", name, fmt::format("{}", gy.shape()));
          summarize(v);
          return false;
        }
        Tensor d(gy.shape());
        const Tensor& mid = at_x.outputs.at(name);
        for (index_t i = 0; i < d.size(); ++i) {
          d[i] = (a->second[i] - b->second[i]) / (2 * step);
          noise += std::abs(gy[i]) * (std::abs(a->second[i]) + std::abs(b->second[i]));
          second_difference += gy[i] * (a->second[i] - 2 * mid[i] + b->second[i]);
        }
        jvp.emplace(name, std::move(d));
      }
      TensorMap grad_map{{slot.name, grad}}, dir_map{{slot.name, u_eff}};
      out.lhs = dot(base.grad_outputs, jvp, false);
      out.rhs = dot(grad_map, dir_map, false);
      out.q = out.lhs - out.rhs;
      out.abs_terms = dot(base.grad_outputs, jvp, true) + dot(grad_map, dir_map, true);
      out.output_noise = noise * u / (2 * step);
      out.jump = std::abs(second_difference) / step;
      return true;
    };
    Probe at_h, at_half, at_double;
    if (!probe(h, at_h) || !probe(h / 2, at_half) || !probe(2 * h, at_double)) return v;
    const double spread = std::max({at_h.q, at_half.q, at_double.q}) - std::min({at_h.q, at_half.q, at_double.q});
    const double bound = options.adjoint_multiple * spread + safety * gamma(k, u) * at_h.abs_terms +
                         safety * at_h.output_noise;
    tc.worst = ElementReport{0, {}, at_h.rhs, at_h.lhs, bound};
    const double err = std::abs(at_h.q);
    // A kink between x − h/2·u and x + h/2·u makes the one-sided slopes differ by a constant: the
    // jump stays the same at h/2, h and 2h (smooth: it halves with the step; rounding: it doubles).
    // Where such a jump is large enough to explain the disagreement, the function is not
    // differentiable here and the comparison says nothing about the backward.
    // "The same" allows for rounding noise in the second differences (4 outputs' worth at each step).
    const Probe* probes[] = {&at_half, &at_h, &at_double};
    const double jumps_hi = std::max({at_half.jump, at_h.jump, at_double.jump});
    bool constant_jump = jumps_hi > 0 && at_h.jump > 8 * 4 * at_h.output_noise;
    for (const Probe* a : probes)
      for (const Probe* b : probes)
        constant_jump = constant_jump &&
                        std::abs(a->jump - b->jump) <= 0.5 * jumps_hi + 4 * (a->output_noise + b->output_noise);
    // Several kinks near x (integer data puts many pre-activations exactly at 0) make the jump vary,
    // but it never falls as the step shrinks, whereas smooth curvature makes it fall 4× from 2h to h/2.
    const bool kinks_near_x = at_half.jump >= at_double.jump && at_half.jump > 8 * 4 * at_half.output_noise &&
                              at_half.jump >= 0.25 * err;
    const bool kink = (constant_jump && at_h.jump >= 0.25 * err) || kinks_near_x;
    // A singularity (e.g. x/‖x‖ at x = 0): the difference quotients grow as the step shrinks, so no
    // step resolves the derivative.
    const bool singular = std::abs(at_half.lhs) > 1.5 * std::abs(at_h.lhs) &&
                          std::abs(at_h.lhs) > 1.5 * std::abs(at_double.lhs);
    if (err > bound && (kink || singular)) {
      inconclusive.push_back(slot.name);
      tc.tensor += kink ? " (inconclusive: the forward has a kink along u here)"
                        : " (inconclusive: the forward is singular here; difference quotients grow as h shrinks)";
      tc.worst_ratio = 0;
      tc.passed = true;
      v.comparisons.push_back(tc);
      continue;
    }
    tc.worst_ratio = std::isfinite(err) ? (err == 0 ? 0.0 : (bound > 0 ? err / bound : INFINITY)) : INFINITY;
    tc.passed = tc.worst_ratio <= 1.0;
    tc.elements_over_bound = tc.passed ? 0 : 1;
    v.comparisons.push_back(tc);
  }
  if (v.comparisons.empty()) return not_applicable(v, fmt::format("target '{}' has no differentiable input", c.target));
  if (inconclusive.size() == v.comparisons.size())
    return not_applicable(v, fmt::format("the forward is not differentiable at this case along the probed directions "
                                         "(a kink, e.g. ReLU at 0) for every input: {}",
                                         fmt::join(inconclusive, ", ")));
  summarize(v);
  if (!v.passed) {
    v.detail = "got = ⟨Jᵀȳ, u⟩ from the system's backward, expected = ⟨ȳ, J·u⟩ from its own forward: the backward "
               "is not the transpose of the forward (e.g. A used where Aᵀ is needed, or a missing term).";
    v.message = failure_message(v);
  }
  return v;
}

}  // namespace gnncheck::checks
