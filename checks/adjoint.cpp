// The adjoint (transpose) check: ⟨ȳ, J·u⟩ = ⟨Jᵀ·ȳ, u⟩ from the system's own forward and backward,
// held to a bound that only the declared precision and the trusted oracle make.
//
// For one differentiable input, at a base point x (the case moved off exact kinks, representable
// in the declared precision p), a direction u (scaled to the input's RMS) and a step s:
//   x± = round_p(x ± s·u), u_eff = (x₊ − x₋) / 2s (exact in float64): the points the system sees;
//   q̂ = ⟨ȳ, (f̂(x₊) − f̂(x₋)) / 2s⟩ − ⟨ĝ, u_eff⟩ from the system's forward f̂ and backward ĝ;
//   q  = the same from the float64 oracle at the same x±: the truncation of the true function at
//        this very step, kink crossings included, which a system computing that function shares.
// With B± the differential check's bounds on the outputs at x± and B_g its bounds on the gradient
// at x (checks/tolerance.h), the triangle inequality gives, for every system that the differential
// check passes at x, x₊ and x₋,
//   |q̂ − q| ≤ Σ|ȳ|·(B₊ + B₋)/2s + Σ B_g·|u_eff| + (float64 rounding of the dot products),
// so a false alarm here is a false alarm of the differential check at one of those points: none by
// construction beyond the differential check's own. Nothing the system answered enters the bound
// (a random or noisy forward makes q̂ large and fails), and no kink can raise one (the oracle
// crosses it at the same points).
//
// The step keeps the identity meaningful: from s = RMS down by factors of 4 to h/16 (h = u_p^⅓),
// the oracle's differences at s/2, s, 2s, classified by checks/derivative_probe.h against the
// bound's rounding part, pick the first step at which the true function's own truncation |q| is
// below that rounding part (else the step with the smallest |q| + rounding part; the comparison
// then notes whether a kink, a singularity or curvature kept |q| larger). At that step a system
// whose backward is the transpose of its own forward passes whatever function it computes, up to
// |q|. A base point with a kink argument within p's rounding of its kink (checks/kinks.h) is moved
// by another seeded jitter (up to 4); if every one is that close, the comparisons are inconclusive.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/check_support.h"
#include "checks/derivative_probe.h"
#include "checks/kinks.h"
#include "core/error.h"
#include "core/splitmix64.h"
#include "oracle/random_case.h"

namespace gnncheck::checks {

using namespace detail;

namespace {

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
    base = jittered(c, c.seed + kSplitMix64Gamma * attempt);
    for (TensorMap* m : {&base.inputs, &base.parameters})
      for (auto& [name, t] : *m) t = rounded(t, p);
    kink = nearest_kink(base, p);
    if (!kink || !kink->near) break;
  }
  if (base.grad_outputs.empty()) base.grad_outputs = random_like(exact_result(c).outputs, c.seed, "adjoint ȳ");
  Case forward_only = base;
  forward_only.grad_outputs.clear();

  v.tolerance_model = fmt::format(
      "Σ|ȳ|·(B(x₊) + B(x₋))/2s + Σ B_g(x)·|u_eff| + float64 rounding; B the differential check's bounds in {}; "
      "step s from RMS(input) down to {:.3g}·RMS, where the oracle's own truncation is below that",
      to_string(p), h / 16);
  v.metric_name = "|⟨ȳ, J·u⟩ − ⟨Jᵀȳ, u⟩ − q_oracle| with J·u by central differences of the system's forward, q_oracle "
                  "the same for the float64 oracle at the same points";

  // The trusted side at the base point: the oracle's gradient and outputs, and the bounds there.
  const Result oracle_base = exact_result(base);
  const Bounds base_bounds = model.bounds(base, oracle_base, p);
  double sum_output_bound = 0.0;  // Σ|ȳ|·B_y(x): estimates Σ|ȳ|·(B₊ + B₋)/2 before those are computed
  for (const auto& [name, gy] : base.grad_outputs) {
    const Tensor& b = base_bounds.tensors.at("output " + name);
    for (index_t i = 0; i < gy.size(); ++i) sum_output_bound += std::abs(gy[i]) * b[i];
  }
  const double float64_sum = gamma(static_cast<double>(element_count(base) + 8), kFloat64Roundoff);

  index_t output_elements = 0;
  for (const auto& [name, gy] : base.grad_outputs) output_elements += gy.size();
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
    if (kink && kink->near && std::find(kink->upstream.begin(), kink->upstream.end(), slot.name) != kink->upstream.end()) {
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

    // One direction: the step search on the oracle's side, then the system at the chosen points.
    struct Probed {
      double err = 0, bound = 0, expected = 0, actual = 0;
      bool trivial = false;  // nothing to compare: the input or every output has no elements
      std::string note;
    };
    bool system_error = false;
    auto probe_along = [&](const Tensor& direction) -> Probed {
      // The step: from s = RMS(input) down by factors of 4 to h/16, the oracle's differences at
      // s/2, s, 2s (classify_probe with the rounding part estimated from the bounds at x as its
      // bound). The first step whose truncation the rounding part covers is taken; if none does,
      // the step with the smallest |q_oracle(s)| + rounding part, noting what the oracle found there.
      struct Choice {
        Points at;
        Result oracle_plus, oracle_minus;
        double q_oracle = 0, abs_oracle = 0, rounding_estimate = 0;
        ProbeFinding finding;
        double total() const { return std::abs(q_oracle) + rounding_estimate; }
      };
      std::optional<Choice> chosen;
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
            here->rounding_estimate = sum_output_bound / s + dot(gradient_bound, pts.u_eff, true);
            here->at = std::move(pts);
            here->oracle_plus = std::move(fp);
            here->oracle_minus = std::move(fm);
          }
        }
        here->finding = classify_probe({probes[0], probes[1], probes[2], here->rounding_estimate});
        here->finding.reason = fmt::format("the oracle's differences at s = {:.3g}·RMS: {}", step, here->finding.reason);
        const bool clean = here->finding.outcome == ProbeOutcome::agrees;
        if (!chosen || clean || here->total() < chosen->total()) chosen = std::move(here);
        if (clean) break;  // smaller steps only add rounding
      }
      Probed out;
      if (chosen->finding.outcome != ProbeOutcome::agrees) out.note = "note: " + chosen->finding.reason;

      // The system at the chosen points, and the bounds there.
      const Points& pts = chosen->at;
      const Result fp = system.evaluate(pts.plus);
      if (system_failed(v, fp, fmt::format("forward at x + s·u for input '{}'", slot.name))) return system_error = true, out;
      const Result fm = system.evaluate(pts.minus);
      if (system_failed(v, fm, fmt::format("forward at x − s·u for input '{}'", slot.name))) return system_error = true, out;
      const Differences mine = differences(base.grad_outputs, fp, fm, Result{}, pts.step);
      if (!mine.complete) {
        v.system_status = Status::invalid_output;
        v.detail = fmt::format("the forward answer for input '{}' lacks an output or has the wrong shape", slot.name);
        summarize(v);
        system_error = true;
        return out;
      }
      const Bounds plus_bounds = model.bounds(pts.plus, chosen->oracle_plus, p);
      const Bounds minus_bounds = model.bounds(pts.minus, chosen->oracle_minus, p);
      const double lhs = mine.quotient, rhs = dot(grad, pts.u_eff, false);
      const double output_part = output_bound_sum(base.grad_outputs, plus_bounds, minus_bounds) / (2 * pts.step);
      const double gradient_part = dot(gradient_bound, pts.u_eff, true);
      out.bound = output_part + gradient_part +
                  float64_sum * (mine.abs_quotient + dot(grad, pts.u_eff, true) + chosen->abs_oracle);
      if (std::getenv("GNNCHECK_ADJOINT_DEBUG"))
        fmt::print(stderr, "adjoint {} {}: s {:.3g}·RMS, q_oracle {:.3g}, output part {:.3g}, gradient part {:.3g}, "
                           "⟨ȳ, J·u⟩ {:.9g}, ⟨Jᵀȳ, u⟩ {:.9g}\n",
                   c.target, slot.name, pts.step, chosen->q_oracle, output_part, gradient_part, lhs, rhs);
      // q̂ − q_oracle: what the system's forward differences and backward disagree by beyond the
      // true function's own truncation (and kink crossings) at exactly these points.
      out.err = std::abs((lhs - rhs) - chosen->q_oracle);
      out.expected = lhs - chosen->q_oracle;
      out.actual = rhs;
      out.trivial = x.size() == 0 || output_elements == 0;
      return out;
    };

    // Two directions: a seeded random one, and the system's own gradient (scaled to the input's
    // RMS), along which a wrong backward's error adds up instead of averaging out.
    Tensor random_direction = oracle::random_tensor(x.shape(), c.seed + 7919 * stream, "adjoint direction " + slot.name);
    for (double& e : random_direction.values()) e *= scale;
    std::vector<std::pair<std::string, Tensor>> directions{{"a random direction", std::move(random_direction)}};
    if (const double g_rms = rms(grad); g_rms > 0 && std::isfinite(g_rms)) {
      Tensor along = grad;
      for (double& e : along.values()) e *= scale / g_rms;
      directions.emplace_back("the system's gradient", std::move(along));
    }
    std::optional<Probed> worst;
    std::string worst_direction;
    bool all_trivial = true;
    for (const auto& [what, direction] : directions) {
      const Probed r = probe_along(direction);
      if (system_error) return v;
      all_trivial = all_trivial && r.trivial;
      const double ratio = std::isfinite(r.err) ? (r.err == 0 ? 0.0 : (r.bound > 0 ? r.err / r.bound : INFINITY)) : INFINITY;
      if (!worst || ratio > tc.worst_ratio) {
        worst = r;
        worst_direction = what;
        tc.worst_ratio = ratio;
      }
    }
    if (all_trivial) {
      mark_inconclusive(tc, "nothing to compare: the input or every output has no elements");
      v.comparisons.push_back(tc);
      continue;
    }
    tc.worst = ElementReport{0, {}, worst->actual, worst->expected, worst->bound};
    tc.reason = worst->note.empty() ? "along " + worst_direction : "along " + worst_direction + "; " + worst->note;
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
    lead_with_forward_disagreement(v, base, backward, options);
  }
  return v;
}

}  // namespace gnncheck::checks
