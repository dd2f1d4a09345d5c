// The adjoint (transpose) check: ⟨ȳ, J·u⟩ = ⟨Jᵀ·ȳ, u⟩ from the system's own forward and backward,
// held to a bound that only the declared precision and the trusted oracle make.
//
// For one differentiable input, at a base point x (the case moved off exact kinks, representable
// in the declared precision p), a direction u (scaled to the input's RMS) and a step s:
//   x± = round_p(x ± s·u), u_eff = (x₊ − x₋) / 2s (exact in float64): the points the system sees;
//   q̂ = ⟨ȳ, (f̂(x₊) − f̂(x₋)) / 2s⟩ − ⟨ĝ, u_eff⟩ from the system's forward f̂ and backward ĝ;
//   q  = the same from the float64 oracle at the same x±: the truncation (and any kink crossing) of
//        the true function at this very step, which a correct system shares exactly.
// With B± the differential check's bounds on the outputs at x± and B_g its bounds on the gradient
// at x (checks/tolerance.h), the triangle inequality gives for any system that the differential
// check would pass at x, x₊ and x₋:
//   |q̂| ≤ |q| + Σ|ȳ|·(B₊ + B₋)/2s + Σ B_g·|u_eff| + (float64 rounding of the four dot products),
// so a false alarm of this check is a false alarm of the differential check at one of those
// points: none by construction beyond the differential check's own. Nothing the system answered
// enters the bound (a random or noisy forward makes |q̂| large and fails).
//
// The step: the oracle's own differences at s/2, s, 2s, classified by checks/derivative_probe.h
// with the bound's rounding part, say whether the true function is smooth along u there (the
// truncation |q| is then far below the rounding part) or crosses a kink or a singularity (|q| would
// then swamp a wrong backward's error): a kink makes the check try s/4, s/16 and then another
// direction, and an input for which nothing resolves is inconclusive, with the oracle's numbers.
// A base point whose nearest kink lies within rounding of p (checks/kinks.h) is moved by another
// seeded jitter (up to 4); if every one is that close, the comparisons are inconclusive.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/check_support.h"
#include "checks/derivative_probe.h"
#include "checks/kinks.h"
#include "oracle/error.h"
#include "oracle/random_case.h"

namespace gnncheck::checks {

using namespace detail;

namespace {

// Σ a·b over the tensors both maps have (absolute: Σ|a·b|).
double dot(const TensorMap& a, const TensorMap& b, bool absolute) {
  double s = 0.0;
  for (const auto& [name, t] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second.size() != t.size()) continue;
    for (index_t i = 0; i < t.size(); ++i) s += absolute ? std::abs(t[i] * it->second[i]) : t[i] * it->second[i];
  }
  return s;
}

double dot(const Tensor& a, const Tensor& b, bool absolute) {
  double s = 0.0;
  for (index_t i = 0; i < std::min(a.size(), b.size()); ++i) s += absolute ? std::abs(a[i] * b[i]) : a[i] * b[i];
  return s;
}

Tensor& input_tensor(Case& c, const std::string& name) {
  auto it = c.inputs.find(name);
  if (it != c.inputs.end()) return it->second;
  return c.parameters.at(name);
}

double rms(const Tensor& t) {
  double sq = 0.0;
  for (double v : t.values()) sq += v * v;
  return t.size() ? std::sqrt(sq / static_cast<double>(t.size())) : 0.0;
}

// The two points x± the system sees for one input, one direction and one step.
struct Points {
  double step = 0;
  Case plus, minus;
  Tensor u_eff;
};

Points points(const Case& forward_only, const std::string& input, const Tensor& direction, double step, Precision p) {
  Points pts{step, forward_only, forward_only, Tensor(direction.shape())};
  const Tensor& x = input_tensor(const_cast<Case&>(forward_only), input);
  Tensor& xp = input_tensor(pts.plus, input);
  Tensor& xm = input_tensor(pts.minus, input);
  for (index_t i = 0; i < x.size(); ++i) {
    xp[i] = round_to_precision(x[i] + step * direction[i], p);
    xm[i] = round_to_precision(x[i] - step * direction[i], p);
    pts.u_eff[i] = (xp[i] - xm[i]) / (2 * step);
  }
  return pts;
}

// ⟨ȳ, (f₊ − f₋)/2s⟩, Σ|ȳ|(|f₊| + |f₋|)/2s and |⟨ȳ, f₊ − 2f + f₋⟩|/s over every output ȳ has.
struct Differences {
  double quotient = 0, abs_quotient = 0, jump = 0;
  bool complete = true;  // every output present with ȳ's shape
};

Differences differences(const TensorMap& grad_outputs, const Result& fp, const Result& fm, const Result& at_x,
                        double step) {
  Differences d;
  for (const auto& [name, gy] : grad_outputs) {
    auto a = fp.outputs.find(name), b = fm.outputs.find(name), m = at_x.outputs.find(name);
    if (a == fp.outputs.end() || b == fm.outputs.end() || a->second.shape() != gy.shape() ||
        b->second.shape() != gy.shape()) {
      d.complete = false;
      return d;
    }
    const bool have_mid = m != at_x.outputs.end() && m->second.shape() == gy.shape();
    double second = 0.0;
    for (index_t i = 0; i < gy.size(); ++i) {
      d.quotient += gy[i] * (a->second[i] - b->second[i]) / (2 * step);
      d.abs_quotient += std::abs(gy[i]) * (std::abs(a->second[i]) + std::abs(b->second[i])) / (2 * step);
      if (have_mid) second += gy[i] * (a->second[i] - 2 * m->second[i] + b->second[i]);
    }
    d.jump += std::abs(second) / step;
  }
  return d;
}

// Σ|ȳ|·(bound at x₊ + bound at x₋) over every output.
double output_bound_sum(const TensorMap& grad_outputs, const Bounds& plus, const Bounds& minus) {
  double s = 0.0;
  for (const auto& [name, gy] : grad_outputs) {
    const Tensor& bp = plus.tensors.at("output " + name);
    const Tensor& bm = minus.tensors.at("output " + name);
    for (index_t i = 0; i < gy.size(); ++i) s += std::abs(gy[i]) * (bp[i] + bm[i]);
  }
  return s;
}

index_t element_count(const Case& c) {
  index_t n = 0;
  for (const auto& m : {c.inputs, c.parameters, c.grad_outputs})
    for (const auto& [name, t] : m) n += t.size();
  return n;
}

constexpr double kFloat64Roundoff = 0x1p-53;

}  // namespace

Verdict adjoint(System& system, const Case& c, const CheckOptions& options) {
  Verdict v = start_verdict(CheckKind::adjoint, system, c, options);
  const auto& def = oracle::find_target(c.target);
  const Precision p = v.precision;
  const double u = unit_roundoff(p);
  const double h = std::cbrt(u);  // relative to the input's RMS
  const ToleranceModel model(options.tolerance);

  // The base point: moved off exact kinks (jittered()), representable in p, and no kink argument
  // within p's rounding of its kink (another jitter seed otherwise).
  Case base;
  std::optional<NearestKink> kink;
  for (std::uint64_t attempt = 0; attempt < 4; ++attempt) {
    base = jittered(c, c.seed + 0x9e3779b97f4a7c15ull * attempt);
    for (TensorMap* m : {&base.inputs, &base.parameters})
      for (auto& [name, t] : *m) t = rounded(t, p);
    kink = nearest_kink(base, p);
    if (!kink || !kink->near) break;
  }
  if (base.grad_outputs.empty()) base.grad_outputs = random_like(exact_result(c).outputs, c.seed, "adjoint ȳ");
  Case forward_only = base;
  forward_only.grad_outputs.clear();

  v.tolerance_model = fmt::format(
      "|q_oracle(s)| + Σ|ȳ|·(B(x₊) + B(x₋))/2s + Σ B_g(x)·|u_eff| + float64 rounding; B the differential check's "
      "bounds in {}, q_oracle = ⟨ȳ, D(s)⟩ − ⟨Jᵀȳ, u_eff⟩ of the float64 oracle at the same points; step s = {:.3g}·RMS "
      "of the input (or 1/4, 1/16 of it)",
      to_string(p), h);
  v.metric_name = "|⟨ȳ, J·u⟩ − ⟨Jᵀȳ, u⟩| with J·u by central differences of the system's forward";

  // The trusted side at the base point: the oracle's gradient and outputs, and the bounds there.
  const Result oracle_base = exact_result(base);
  const Bounds base_bounds = model.bounds(base, oracle_base, p);
  double sum_output_bound = 0.0;  // Σ|ȳ|·B_y(x): estimates Σ|ȳ|·(B₊ + B₋)/2 before those are computed
  for (const auto& [name, gy] : base.grad_outputs) {
    const Tensor& b = base_bounds.tensors.at("output " + name);
    for (index_t i = 0; i < gy.size(); ++i) sum_output_bound += std::abs(gy[i]) * b[i];
  }
  const double float64_sum = gamma(static_cast<double>(element_count(base) + 8), kFloat64Roundoff);

  const Result backward = system.evaluate(base);
  if (system_failed(v, backward, "evaluating the case with output gradients")) return v;

  std::uint64_t stream = 0;
  for (const auto& slot : def.spec.inputs) {
    if (!slot.differentiable) continue;
    if (!base.inputs.count(slot.name) && !base.parameters.count(slot.name)) continue;
    ++stream;
    const Tensor& x = input_tensor(base, slot.name);
    TensorComparison tc;
    tc.tensor = "gradient " + slot.name + " (⟨ȳ, J·u⟩ vs ⟨Jᵀȳ, u⟩)";
    tc.input = slot.name;
    tc.is_gradient = true;
    tc.elements = 1;
    auto git = backward.gradients.find(slot.name);
    if (git == backward.gradients.end() || git->second.shape() != x.shape()) {
      tc.agreement = Agreement::disagrees;
      tc.elements_over_bound = 1;
      tc.worst_ratio = INFINITY;
      tc.reason = git == backward.gradients.end() ? "missing from the system's answer" : "wrong shape";
      tc.tensor += " (" + tc.reason + ")";
      v.comparisons.push_back(tc);
      continue;
    }
    if (kink && kink->near) {
      mark_inconclusive(tc, fmt::format("at every jittered base point a kink lies within rounding: {}; the "
                                        "derivative there depends on which side the rounding lands",
                                        kink->description));
      v.comparisons.push_back(tc);
      continue;
    }
    const Tensor& grad = git->second;
    const Tensor& oracle_grad = oracle_base.gradients.at(slot.name);
    const Tensor& gradient_bound = base_bounds.tensors.at("gradient " + slot.name);
    const double scale = rms(x) > 0 ? rms(x) : 1.0;

    // The step: from s = RMS down by factors of 4 to h/16, the oracle's differences at s/2, s, 2s
    // and the bound they imply, |q_oracle(s)| + (rounding part, estimated from the bounds at x);
    // the first step whose truncation the rounding part covers ends the search, else the smooth
    // step with the smallest bound is taken. A direction on which every step with a small bound
    // crosses a kink or a singularity is replaced by a second one.
    struct Choice {
      Points at;
      Result oracle_plus, oracle_minus;
      double q_oracle = 0, abs_oracle = 0, rounding_estimate = 0;
      double total() const { return std::abs(q_oracle) + rounding_estimate; }
    };
    std::optional<Choice> chosen;
    std::string why_not;
    auto rounding_estimate = [&](double step, const Tensor& u_eff) {
      return sum_output_bound / step + dot(gradient_bound, u_eff, true);
    };
    for (int d = 0; d < 2 && !chosen; ++d) {
      Tensor direction = oracle::random_tensor(x.shape(), c.seed + 7919 * stream + 104729 * static_cast<std::uint64_t>(d),
                                               "adjoint direction " + slot.name);
      for (double& e : direction.values()) e *= scale;
      std::optional<Choice> smooth;          // the smooth step with the smallest bound so far
      std::optional<ProbeFinding> kinked;    // the finding at a step with a smaller bound that was not smooth
      double kinked_total = INFINITY;
      for (double step = 1.0; step >= h / 16; step /= 4) {
        StepProbe probes[3];
        std::optional<Choice> here;  // the points and oracle answers at `step` itself
        int k = 0;
        for (const double s : {step / 2, step, 2 * step}) {
          Points pts = points(forward_only, slot.name, direction, s, p);
          Result fp = exact_result(pts.plus), fm = exact_result(pts.minus);
          const Differences diff = differences(base.grad_outputs, fp, fm, oracle_base, s);
          StepProbe& probe = probes[k++];
          probe.step = s;
          probe.quotient = diff.quotient;
          probe.derivative = dot(oracle_grad, pts.u_eff, false);
          probe.jump = diff.jump;
          // The oracle's own rounding: the bound in p scaled to float64, at both points and x.
          probe.resolution = 4 * sum_output_bound * (kFloat64Roundoff / u) / s +
                             float64_sum * (diff.abs_quotient + dot(oracle_grad, pts.u_eff, true));
          if (s == step) {
            here.emplace();
            here->q_oracle = probe.q();
            here->abs_oracle = diff.abs_quotient + dot(oracle_grad, pts.u_eff, true);
            here->rounding_estimate = rounding_estimate(s, pts.u_eff);
            here->at = std::move(pts);
            here->oracle_plus = std::move(fp);
            here->oracle_minus = std::move(fm);
          }
        }
        const ProbeFinding finding = classify_probe({probes[0], probes[1], probes[2], here->rounding_estimate});
        const bool is_smooth = finding.outcome == ProbeOutcome::agrees || finding.outcome == ProbeOutcome::disagrees;
        if (is_smooth && (!smooth || here->total() < smooth->total())) {
          smooth = std::move(here);
        } else if (!is_smooth && here->total() < kinked_total) {
          kinked_total = here->total();
          kinked = finding;
          kinked->reason = fmt::format("at s = {:.3g}: {}", step, finding.reason);
        }
        if (finding.outcome == ProbeOutcome::agrees) break;  // smaller steps only add rounding
      }
      if (smooth && smooth->total() <= kinked_total) {
        chosen = std::move(smooth);
      } else if (kinked) {
        why_not = kinked->reason;
      }
    }
    if (!chosen) {
      mark_inconclusive(tc, fmt::format("along two directions the oracle's own differences cross a kink or a "
                                        "singularity at every step where the bound would be small ({})",
                                        why_not));
      v.comparisons.push_back(tc);
      continue;
    }

    // The system at the chosen points, and the bounds there.
    const Points& pts = chosen->at;
    const Result fp = system.evaluate(pts.plus);
    if (system_failed(v, fp, fmt::format("forward at x + s·u for input '{}'", slot.name))) return v;
    const Result fm = system.evaluate(pts.minus);
    if (system_failed(v, fm, fmt::format("forward at x − s·u for input '{}'", slot.name))) return v;
    const Differences mine = differences(base.grad_outputs, fp, fm, Result{}, pts.step);
    if (!mine.complete) {
      v.system_status = Status::invalid_output;
      v.detail = fmt::format("the forward answer for input '{}' lacks an output or has the wrong shape", slot.name);
      summarize(v);
      return v;
    }
    const Bounds plus_bounds = model.bounds(pts.plus, chosen->oracle_plus, p);
    const Bounds minus_bounds = model.bounds(pts.minus, chosen->oracle_minus, p);
    const double lhs = mine.quotient, rhs = dot(grad, pts.u_eff, false);
    const double rounding = output_bound_sum(base.grad_outputs, plus_bounds, minus_bounds) / (2 * pts.step) +
                            dot(gradient_bound, pts.u_eff, true) +
                            float64_sum * (mine.abs_quotient + dot(grad, pts.u_eff, true) + chosen->abs_oracle);
    const double bound = std::abs(chosen->q_oracle) + rounding;
    if (std::getenv("GNNCHECK_ADJOINT_DEBUG"))
      fmt::print(stderr, "adjoint {} {}: step {:.3g} q_oracle {:.3g} out {:.3g} grad {:.3g} lhs {:.6g} rhs {:.6g} abs {:.3g}\n",
                 c.target, slot.name, pts.step, chosen->q_oracle,
                 output_bound_sum(base.grad_outputs, plus_bounds, minus_bounds) / (2 * pts.step),
                 dot(gradient_bound, pts.u_eff, true), lhs, rhs, chosen->abs_oracle);
    const double err = std::abs(lhs - rhs);
    tc.worst = ElementReport{0, {}, rhs, lhs, bound};
    if (chosen->abs_oracle == 0 && mine.abs_quotient == 0 && err == 0) {
      mark_inconclusive(tc, "every term of the identity is 0 at this case (nothing depends on this input here)");
      v.comparisons.push_back(tc);
      continue;
    }
    tc.worst_ratio = std::isfinite(err) ? (err == 0 ? 0.0 : (bound > 0 ? err / bound : INFINITY)) : INFINITY;
    tc.agreement = tc.worst_ratio <= 1.0 ? Agreement::agrees : Agreement::disagrees;
    tc.elements_over_bound = tc.agrees() ? 0 : 1;
    v.comparisons.push_back(tc);
  }
  if (v.comparisons.empty()) return not_applicable(v, fmt::format("target '{}' has no differentiable input", c.target));
  summarize(v);
  if (v.conclusion == Conclusion::inconclusive) {
    std::vector<std::string> reasons;
    for (const auto& tc : v.comparisons) reasons.push_back(tc.input + ": " + tc.reason);
    v.detail = fmt::format("no input could be probed conclusively ({})", fmt::join(reasons, "; "));
  }
  if (v.conclusion == Conclusion::fail) {
    v.detail = "got = ⟨Jᵀȳ, u⟩ from the system's backward, expected = ⟨ȳ, J·u⟩ from its own forward: the backward "
               "is not the transpose of the forward (e.g. A used where Aᵀ is needed, or a missing term), or the "
               "forward is not repeatable within its declared precision.";
    v.message = failure_message(v);
  }
  return v;
}

}  // namespace gnncheck::checks
