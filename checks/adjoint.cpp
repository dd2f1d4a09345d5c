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
// by another seeded jitter (up to 4); if every one is that close, the gradients there are a set, and
// the identity is probed along directions none of them differ in (checks/adjoint_at_kinks.h), or is
// inconclusive where no such set or direction is found.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/adjoint_at_kinks.h"
#include "checks/check_support.h"
#include "checks/derivative_probe.h"
#include "checks/jumps_within_rounding.h"
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

const Tensor& input_tensor(const Case& c, const std::string& name) {
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
  const Tensor& x = input_tensor(forward_only, input);
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
      if (same_infinity(a->second[i], b->second[i])) continue;  // constant there (an empty row's −∞): no change
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

constexpr double kFloat64Roundoff = 0x1p-53;

// The base point x and the trusted side there: what every input's probes share.
struct BasePoint {
  Precision precision = Precision::float64;  // the storage format: x± are representable in it
  Formats formats;                           // storage and accumulation, for the bounds and the kinks
  ToleranceModel model;
  Case point;                       // x with ȳ: what the system's backward answers
  Case forward_only;                // x without ȳ: the points x± are made from it
  std::optional<NearestKink> kink;  // at the last jitter tried
  // Where a kink stays within rounding at every jitter: the valid gradients there (ties of a max or
  // min, or one-sided kinks: checks/subgradient_set.h, checks/kink_set.h), for the inputs they cover.
  std::optional<oracle::SubgradientChoices> valid_gradients;
  Result oracle;                    // the oracle's outputs and gradients at x
  Bounds bounds;                    // the differential check's bounds at x
  double sum_output_bound = 0;      // Σ|ȳ|·B_y(x): estimates Σ|ȳ|·(B₊ + B₋)/2 before those are computed
  double float64_sum = 0;           // γ of the float64 dot products over every element of the case
  index_t output_elements = 0;      // in ȳ
};

// The base point: moved off exact kinks (jittered()), representable in p, and no kink argument
// within p's rounding of its kink (another jitter seed otherwise); ȳ seeded where the case has none.
BasePoint base_point(const Case& c, const Formats& formats, const CheckOptions& options) {
  const Precision p = formats.storage;
  BasePoint base;
  base.precision = p;
  base.formats = formats;
  base.model = ToleranceModel(options.tolerance);
  for (std::uint64_t attempt = 0; attempt < 4; ++attempt) {
    base.point = jittered(c, c.seed + kSplitMix64Gamma * attempt);
    for (TensorMap* m : {&base.point.inputs, &base.point.parameters})
      for (auto& [name, t] : *m) t = rounded(t, p);
    // A jump that declares its element is no reason to jitter again: its ȳ is withheld below.
    CaseKinks kinks(base.point);
    base.kink = nearest_kink(kinks, formats, KinkReading::outputs);
    if (!base.kink || !base.kink->near) break;
  }
  if (base.point.grad_outputs.empty())
    base.point.grad_outputs = random_like(exact_result(c).outputs, c.seed, "adjoint ȳ");
  // ȳ = 0 where a value jumps within rounding (checks/jumps_within_rounding.h): ⟨ȳ, f(x)⟩ is then
  // continuous there, and the finite differences along u mean what they do away from jumps.
  withhold_gradients_at_jumps(base.point, formats);
  {
    CaseKinks kinks(base.point);
    base.kink = nearest_kink(kinks, formats, KinkReading::gradients);
  }
  base.forward_only = base.point;
  base.forward_only.grad_outputs.clear();
  return base;
}

// The trusted side at the base point, which the step search and every bound are built from.
void add_oracle_side(BasePoint& base, const oracle::TargetDef& def) {
  base.oracle = exact_result(base.point);
  base.valid_gradients = valid_gradients_at(def, base.point, base.oracle, base.kink, base.formats);
  base.bounds = base.model.bounds(base.point, base.oracle, base.formats);
  for (const auto& [name, gy] : base.point.grad_outputs) {
    const Tensor& b = base.bounds.tensors.at("output " + name);
    for (index_t i = 0; i < gy.size(); ++i) base.sum_output_bound += std::abs(gy[i]) * b[i];
  }
  base.float64_sum = gamma(static_cast<double>(element_count(base.point) + 8), kFloat64Roundoff);
  for (const auto& [name, gy] : base.point.grad_outputs) base.output_elements += gy.size();
}

// The bound and the metric, stated with every verdict.
void describe_model(Verdict& v, Precision p) {
  const double h = std::cbrt(unit_roundoff(p));  // relative to the input's RMS
  v.tolerance_model = fmt::format(
      "Σ|ȳ|·(B(x₊) + B(x₋))/2s + Σ B_g(x)·|u_eff| + float64 rounding; B the differential check's bounds in {}; "
      "step s from RMS(input) down to {:.3g}·RMS, where the oracle's own truncation is below that",
      to_string(p), h / 16);
  v.metric_name = "|⟨ȳ, J·u⟩ − ⟨Jᵀȳ, u⟩ − q_oracle| with J·u by central differences of the system's forward, q_oracle "
                  "the same for the float64 oracle at the same points";
}

// One differentiable input at the base point: its value, the system's gradient and the trusted side.
struct Input {
  const std::string& name;
  const Tensor& x;
  const Tensor& grad;            // ĝ, the system's backward
  const Tensor& oracle_grad;     // the oracle's gradient at x
  const Tensor& gradient_bound;  // B_g(x)
  const oracle::SubgradientChoices* valid = nullptr;  // the valid gradients where a kink leaves them a set
  const KinkFreeDirections* kink_free = nullptr;       // with them: the directions they agree along
};

// The oracle at one step s along a direction: the points, its answers there, and what its
// differences at s/2, s, 2s say about the step.
struct StepChoice {
  Points at;
  Result oracle_plus, oracle_minus;
  double q_oracle = 0, abs_oracle = 0, rounding_estimate = 0;
  ProbeFinding finding;
  double total() const { return std::abs(q_oracle) + rounding_estimate; }
};

// The oracle's differences at s/2, s, 2s, classified by classify_probe with the rounding part
// estimated from the bounds at x as its bound: whether the true function's truncation at s is
// below what the bound allows for rounding.
StepChoice oracle_at_step(const BasePoint& base, const Input& in, const Tensor& direction, double step) {
  const Precision p = base.precision;
  const double u = unit_roundoff(p);
  StepProbe probes[3];
  std::optional<StepChoice> here;  // the points and oracle answers at `step` itself
  int k = 0;
  for (const double s : {step / 2, step, 2 * step}) {
    Points pts = points(base.forward_only, in.name, direction, s, p);
    Result fp = exact_result(pts.plus), fm = exact_result(pts.minus);
    const Differences diff = differences(base.point.grad_outputs, fp, fm, base.oracle, s);
    StepProbe& probe = probes[k++];
    probe.step = s;
    probe.quotient = diff.quotient;
    probe.derivative = dot(in.oracle_grad, pts.u_eff, false);
    probe.jump = diff.jump;
    // The oracle's own rounding: the bound in p scaled to float64, at both points and x.
    probe.resolution = 4 * base.sum_output_bound * (kFloat64Roundoff / u) / s +
                       base.float64_sum * (diff.abs_quotient + dot(in.oracle_grad, pts.u_eff, true));
    if (s == step) {
      here.emplace();
      here->q_oracle = probe.q();
      here->abs_oracle = diff.abs_quotient + dot(in.oracle_grad, pts.u_eff, true);
      here->rounding_estimate = base.sum_output_bound / s + dot(in.gradient_bound, pts.u_eff, true);
      here->at = std::move(pts);
      here->oracle_plus = std::move(fp);
      here->oracle_minus = std::move(fm);
    }
  }
  here->finding = classify_probe({probes[0], probes[1], probes[2], here->rounding_estimate});
  here->finding.reason = fmt::format("the oracle's differences at s = {:.3g}·RMS: {}", step, here->finding.reason);
  return std::move(*here);
}

// The step keeps the identity meaningful: from s = RMS(input) down by factors of 4 to h/16, the
// first step whose truncation the rounding part covers; if none does, the step with the smallest
// |q_oracle(s)| + rounding part (its finding says what the oracle found there).
StepChoice choose_step(const BasePoint& base, const Input& in, const Tensor& direction) {
  const double h = std::cbrt(unit_roundoff(base.precision));
  std::optional<StepChoice> chosen;
  for (double step = 1.0; step >= h / 16; step /= 4) {
    StepChoice here = oracle_at_step(base, in, direction, step);
    const bool clean = here.finding.outcome == ProbeOutcome::agrees;
    if (!chosen || clean || here.total() < chosen->total()) chosen = std::move(here);
    if (clean) break;  // smaller steps only add rounding
  }
  return std::move(*chosen);
}

// What one direction found: |q̂ − q_oracle| against its bound.
struct Probed {
  double err = 0, bound = 0, expected = 0, actual = 0;
  bool trivial = false;  // nothing to compare: the input or every output has no elements
  std::string note;
  std::string no_bound;  // no bound is known at a probe point, e.g. beyond the format's range (Bounds::no_bound)
};

// The system at the chosen points, and the bounds there: q̂ − q_oracle is what the system's forward
// differences and backward disagree by beyond the true function's own truncation (and kink
// crossings) at exactly these points. nullopt when the system did not answer (`v` says why).
std::optional<Probed> system_at(Verdict& v, System& system, const BasePoint& base, const Input& in,
                                const StepChoice& chosen) {
  Probed out;
  if (chosen.finding.outcome != ProbeOutcome::agrees) out.note = "note: " + chosen.finding.reason;
  const Points& pts = chosen.at;
  const Result fp = system.evaluate(pts.plus);
  if (system_failed(v, fp, fmt::format("forward at x + s·u for input '{}'", in.name))) return std::nullopt;
  const Result fm = system.evaluate(pts.minus);
  if (system_failed(v, fm, fmt::format("forward at x − s·u for input '{}'", in.name))) return std::nullopt;
  const TensorMap& grad_outputs = base.point.grad_outputs;
  const Differences mine = differences(grad_outputs, fp, fm, Result{}, pts.step);
  if (!mine.complete) {
    v.system_status = Status::invalid_output;
    v.detail = fmt::format("the forward answer for input '{}' lacks an output or has the wrong shape", in.name);
    summarize(v);
    return std::nullopt;
  }
  const Bounds plus_bounds = base.model.bounds(pts.plus, chosen.oracle_plus, base.formats);
  const Bounds minus_bounds = base.model.bounds(pts.minus, chosen.oracle_minus, base.formats);
  out.no_bound = !plus_bounds.no_bound.empty() ? plus_bounds.no_bound : minus_bounds.no_bound;
  const double lhs = mine.quotient, rhs = dot(in.grad, pts.u_eff, false);
  const double output_part = output_bound_sum(grad_outputs, plus_bounds, minus_bounds) / (2 * pts.step);
  const double gradient_part = dot(in.gradient_bound, pts.u_eff, true);
  out.bound = output_part + gradient_part +
              base.float64_sum * (mine.abs_quotient + dot(in.grad, pts.u_eff, true) + chosen.abs_oracle);
  if (std::getenv("GNNCHECK_ADJOINT_DEBUG"))
    fmt::print(stderr, "adjoint {} {}: s {:.3g}·RMS, q_oracle {:.3g}, output part {:.3g}, gradient part {:.3g}, "
                       "⟨ȳ, J·u⟩ {:.9g}, ⟨Jᵀȳ, u⟩ {:.9g}\n",
               base.point.target, in.name, pts.step, chosen.q_oracle, output_part, gradient_part, lhs, rhs);
  // ⟨Jᵀȳ, u⟩ of a backward that is the transpose of this forward: lhs − q_oracle, moved by what the
  // other valid gradients project to where a kink within rounding leaves a set.
  const auto [lo, hi] = in.valid ? valid_spread(*in.valid, in.name, in.oracle_grad, pts.u_eff) : std::pair{0.0, 0.0};
  const double miss = (lhs - rhs) - chosen.q_oracle;  // −⟨p − oracle's, u⟩ for the p the system took
  out.err = std::isfinite(miss) ? std::max({0.0, miss + lo, -hi - miss}) : std::abs(miss);
  out.expected = std::isfinite(miss) ? std::clamp(rhs, lhs - chosen.q_oracle + lo, lhs - chosen.q_oracle + hi)
                                     : lhs - chosen.q_oracle;
  out.actual = rhs;
  if (in.valid)
    out.note = fmt::format("{}{}a kink within rounding leaves a set of valid gradients ({} choice{}); u is along none "
                           "of them: ⟨p − oracle's, u⟩ spans [{:.3g}, {:.3g}]",
                           out.note, out.note.empty() ? "" : "; ", in.kink_free->choices(),
                           in.kink_free->choices() == 1 ? "" : "s", lo, hi);
  out.trivial = in.x.size() == 0 || base.output_elements == 0;
  return out;
}

// Two directions: a seeded random one, and the system's own gradient (scaled to the input's RMS),
// along which a wrong backward's error adds up instead of averaging out.
std::vector<std::pair<std::string, Tensor>> directions(const BasePoint& base, const Input& in, std::uint64_t stream) {
  const double scale = rms(in.x) > 0 ? rms(in.x) : 1.0;
  Tensor random_direction =
      oracle::random_tensor(in.x.shape(), base.point.seed + 7919 * stream, "adjoint direction " + in.name);
  for (double& e : random_direction.values()) e *= scale;
  std::vector<std::pair<std::string, Tensor>> out{{"a random direction", std::move(random_direction)}};
  if (const double g_rms = rms(in.grad); g_rms > 0 && std::isfinite(g_rms)) {
    Tensor along = in.grad;
    for (double& e : along.values()) e *= scale / g_rms;
    out.emplace_back("the system's gradient", std::move(along));
  }
  if (!in.kink_free) return out;
  // Along what the valid gradients differ by, none of them is wrong: keep each direction's rest.
  std::vector<std::pair<std::string, Tensor>> kink_free;
  for (auto& [what, direction] : out)
    if (std::optional<Tensor> rest = in.kink_free->project(direction))
      kink_free.emplace_back(what + " without what the kink choices change", std::move(*rest));
  return kink_free;
}

// The comparison of one input before it is probed: its label, and what ends it early.
TensorComparison identity_comparison(const std::string& input) {
  TensorComparison tc;
  tc.tensor = "gradient " + input + " (⟨ȳ, J·u⟩ vs ⟨Jᵀȳ, u⟩)";
  tc.input = input;
  tc.is_gradient = true;
  tc.elements = 1;
  return tc;
}

// A gradient the system did not answer (or answered in the wrong shape) fails outright.
void mark_unanswered(TensorComparison& tc, const std::string& reason) {
  tc.agreement = Agreement::disagrees;
  tc.elements_over_bound = 1;
  tc.worst_ratio = INFINITY;
  tc.reason = reason;
  tc.tensor += " (" + tc.reason + ")";
}

// Whether every jittered base point left a kink within rounding upstream of this input: its
// derivative there depends on which side the rounding lands.
bool kink_decides(const BasePoint& base, const std::string& input) {
  const auto& kink = base.kink;
  return kink && kink->near && std::find(kink->upstream.begin(), kink->upstream.end(), input) != kink->upstream.end();
}

// Probes one input along every direction and keeps the worst into `tc`; false when the system
// did not answer (`v` is then final).
bool probe_input(Verdict& v, System& system, const BasePoint& base, const Input& in, std::uint64_t stream,
                 TensorComparison& tc) {
  std::optional<Probed> worst;
  std::string worst_direction;
  bool all_trivial = true;
  const auto probes = directions(base, in, stream);
  if (probes.empty()) {
    mark_inconclusive(tc, "at every jittered base point a kink lies within rounding, and the valid gradients differ "
                          "along every direction tried");
    return true;
  }
  for (const auto& [what, direction] : probes) {
    const std::optional<Probed> r = system_at(v, system, base, in, choose_step(base, in, direction));
    if (!r) return false;
    all_trivial = all_trivial && r->trivial;
    if (!r->no_bound.empty()) {  // the system's forward there may overflow correctly
      mark_inconclusive(tc, "at a probe point x ± s·u: " + r->no_bound);
      return true;
    }
    const double ratio =
        std::isfinite(r->err) ? (r->err == 0 ? 0.0 : (r->bound > 0 ? r->err / r->bound : INFINITY)) : INFINITY;
    if (!worst || ratio > tc.worst_ratio) {
      worst = *r;
      worst_direction = what;
      tc.worst_ratio = ratio;
    }
  }
  if (all_trivial) {
    mark_inconclusive(tc, "nothing to compare: the input or every output has no elements");
    tc.empty = true;
    return true;
  }
  tc.worst = ElementReport{0, {}, worst->actual, worst->expected, worst->bound};
  tc.reason = worst->note.empty() ? "along " + worst_direction : "along " + worst_direction + "; " + worst->note;
  tc.agreement = tc.worst_ratio <= 1.0 ? Agreement::agrees : Agreement::disagrees;
  tc.elements_over_bound = tc.agrees() ? 0 : 1;
  return true;
}

// Appends one input's comparison to `v`; false when the system did not answer (`v` is then final).
bool compare_input(Verdict& v, System& system, const BasePoint& base, const Result& backward,
                   const std::string& input, std::uint64_t stream) {
  const Tensor& x = input_tensor(base.point, input);
  TensorComparison tc = identity_comparison(input);
  auto git = backward.gradients.find(input);
  if (git == backward.gradients.end() || git->second.shape() != x.shape()) {
    mark_unanswered(tc, git == backward.gradients.end() ? "missing from the system's answer" : "wrong shape");
  } else if (!base.bounds.no_bound.empty()) {
    mark_inconclusive(tc, base.bounds.no_bound);
  } else if (kink_decides(base, input) && !(base.valid_gradients && base.valid_gradients->base.count(input))) {
    mark_inconclusive(tc, fmt::format("at every jittered base point a kink lies within rounding: {}; the "
                                      "derivative there depends on which side the rounding lands",
                                      base.kink->description));
  } else {
    const bool at_kink = kink_decides(base, input);
    std::optional<KinkFreeDirections> kink_free;
    if (at_kink) kink_free.emplace(*base.valid_gradients, input, x.size());
    if (kink_free && !kink_free->unavailable().empty()) {
      mark_inconclusive(tc, fmt::format("at every jittered base point a kink lies within rounding ({}), and {}",
                                        base.kink->description, kink_free->unavailable()));
    } else {
      const Input in{input, x, git->second, base.oracle.gradients.at(input), base.bounds.tensors.at("gradient " + input),
                     at_kink ? &*base.valid_gradients : nullptr, kink_free ? &*kink_free : nullptr};
      if (!probe_input(v, system, base, in, stream, tc)) return false;
    }
  }
  v.comparisons.push_back(tc);
  return true;
}

// The differentiable inputs the case has, in the target's order.
std::vector<std::string> probed_inputs(const oracle::TargetSpec& spec, const Case& c) {
  std::vector<std::string> out;
  for (const auto& slot : spec.inputs)
    if (slot.differentiable && (c.inputs.count(slot.name) || c.parameters.count(slot.name))) out.push_back(slot.name);
  return out;
}

// What an inconclusive or failed verdict tells its reader.
void explain_conclusion(Verdict& v, const BasePoint& base, const Result& backward, const CheckOptions& options) {
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
    lead_with_forward_disagreement(v, base.point, backward, options);
  }
}

}  // namespace

Verdict adjoint(System& system, const Case& c, const CheckOptions& options) {
  Verdict v = start_verdict(CheckKind::adjoint, system, c, options);
  const oracle::TargetDef& def = oracle::entry_of(c);
  const auto& spec = def.spec;
  BasePoint base = base_point(c, formats_of(v), options);
  describe_model(v, v.precision);
  add_oracle_side(base, def);
  const Result backward = system.evaluate(base.point);
  if (system_failed(v, backward, "evaluating the case with output gradients")) return v;
  std::uint64_t stream = 0;  // one random direction per input
  for (const std::string& input : probed_inputs(spec, base.point))
    if (!compare_input(v, system, base, backward, input, ++stream)) return v;
  if (v.comparisons.empty()) return not_applicable(v, fmt::format("target '{}' has no differentiable input", c.target));
  summarize(v);
  explain_conclusion(v, base, backward, options);
  return v;
}

}  // namespace gnncheck::checks
