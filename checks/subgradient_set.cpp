#include "checks/subgradient_set.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "checks/check_support.h"

namespace gnncheck::checks {
namespace {

// A bound below this is taken as this, so that residuals in bound units stay finite when squared.
constexpr double kSmallestBound = 1e-150;
// The largest worst residual, in bound units, of an answer inside the set: 1 less a margin for
// rebuilding the nearest gradient in its own units.
constexpr double kInside = 1.0 - 1e-6;

// One alternative's terms as (position in the flattened gradients, value in bound units).
struct ScaledTerm {
  std::size_t at;
  double value;
};

struct Problem {
  std::vector<std::string> inputs;           // in the order they are flattened
  std::vector<std::size_t> offsets;          // where each input starts
  std::vector<double> target;                // (actual − base) / bound, flattened
  std::vector<double> bound;                 // the bounds, flattened
  std::vector<std::vector<std::vector<ScaledTerm>>> groups;  // group → alternative → terms
};

Problem scaled_problem(const oracle::SubgradientChoices& set, const std::map<std::string, const Tensor*>& actual,
                       const std::map<std::string, const Tensor*>& bound) {
  Problem p;
  std::map<std::string, std::size_t> offset_of;
  for (const auto& [input, base] : set.base) {
    const auto a = actual.find(input);
    const auto b = bound.find(input);
    if (a == actual.end() || b == bound.end() || a->second->shape() != base.shape() || b->second->shape() != base.shape())
      throw InternalError(fmt::format("decide_subgradient: gradient {} or its bound is missing or misshapen", input));
    offset_of[input] = p.target.size();
    p.inputs.push_back(input);
    p.offsets.push_back(p.target.size());
    for (index_t i = 0; i < base.size(); ++i) {
      const double scale = std::max((*b->second)[i], kSmallestBound);
      p.bound.push_back(scale);
      p.target.push_back(((*a->second)[i] - base[i]) / scale);
    }
  }
  for (const oracle::TieGroup& group : set.groups) {
    auto& alternatives = p.groups.emplace_back();
    for (const oracle::TieAlternative& alternative : group.alternatives) {
      auto& terms = alternatives.emplace_back();
      for (const oracle::GradientTerm& t : alternative.terms) {
        const std::size_t at = offset_of.at(t.input) + static_cast<std::size_t>(t.flat_index);
        terms.push_back({at, t.value / p.bound[at]});
      }
    }
  }
  return p;
}

// Euclidean projection onto the probability simplex (Held, Wolfe and Crowder; sort-based).
void project_to_simplex(std::vector<double>& w) {
  std::vector<double> sorted = w;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  double sum = 0, theta = 0;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    sum += sorted[i];
    const double t = (sum - 1.0) / double(i + 1);
    if (sorted[i] - t > 0) theta = t;
  }
  for (double& x : w) x = std::max(x - theta, 0.0);
}

// Least squares over the product of simplices: block coordinate descent, each block by projected
// gradient steps of 1/L (L = Σ_a ‖v_a‖², at least the block Hessian's largest eigenvalue).
// Returns the weights; `residual` ends as target − Σ w·v.
std::vector<std::vector<double>> nearest_weights(const Problem& p, std::vector<double>& residual) {
  residual = p.target;
  std::vector<std::vector<double>> weights;
  for (const auto& group : p.groups) {
    weights.emplace_back(group.size(), 1.0 / double(group.size()));  // the even split to start
    for (std::size_t a = 0; a < group.size(); ++a)
      for (const ScaledTerm& t : group[a]) residual[t.at] -= weights.back()[a] * t.value;
  }
  const auto objective = [&] { return std::inner_product(residual.begin(), residual.end(), residual.begin(), 0.0); };
  double previous = objective();
  for (int sweep = 0; sweep < 200; ++sweep) {
    for (std::size_t gi = 0; gi < p.groups.size(); ++gi) {
      const auto& group = p.groups[gi];
      auto& w = weights[gi];
      double lipschitz = 0;
      for (const auto& terms : group)
        for (const ScaledTerm& t : terms) lipschitz += t.value * t.value;
      if (lipschitz == 0) continue;
      for (int step = 0; step < 20; ++step) {
        std::vector<double> next = w;
        for (std::size_t a = 0; a < group.size(); ++a) {
          double gradient = 0;  // ∂(½‖r‖²)/∂w_a = −⟨r, v_a⟩
          for (const ScaledTerm& t : group[a]) gradient -= residual[t.at] * t.value;
          next[a] -= gradient / lipschitz;
        }
        project_to_simplex(next);
        for (std::size_t a = 0; a < group.size(); ++a)
          for (const ScaledTerm& t : group[a]) residual[t.at] -= (next[a] - w[a]) * t.value;
        w = std::move(next);
      }
    }
    const double now = objective();
    if (now <= 1e-30 || previous - now <= 1e-12 * previous) break;
    previous = now;
  }
  return weights;
}

// Whether direction φ (bound units) separates the target from P' ⊕ [−1, 1]^n:
// ⟨φ, target⟩ − Σ_groups max_a ⟨φ, v_a⟩ > ‖φ‖₁ (the base is already subtracted from the target),
// by more than the rounding of computing it. In bound units a float64 system's terms are about 1/u
// (its bounds are a few units of its own rounding), so the sums' rounding — γ_n·Σ|products|, and
// the target's own (actual − base)/bound, 3 roundings of each |target_j| — is a bound unit or more
// and must not pass for a separation.
bool separates(const Problem& p, const std::vector<double>& phi) {
  double lhs = 0, l1 = 0, magnitude = 0;
  std::size_t products = phi.size();
  for (std::size_t j = 0; j < phi.size(); ++j) {
    lhs += phi[j] * p.target[j], l1 += std::abs(phi[j]);
    magnitude += std::abs(phi[j] * p.target[j]);
  }
  if (l1 == 0) return false;
  for (const auto& group : p.groups) {
    double best = -std::numeric_limits<double>::infinity(), best_magnitude = 0;
    for (const auto& terms : group) {
      double dot = 0, dot_magnitude = 0;
      for (const ScaledTerm& t : terms) dot += phi[t.at] * t.value, dot_magnitude += std::abs(phi[t.at] * t.value);
      if (dot > best) best = dot, best_magnitude = dot_magnitude;
      products += terms.size();
    }
    lhs -= best;
    magnitude += best_magnitude;
    ++products;
  }
  constexpr double u = std::numeric_limits<double>::epsilon() / 2;
  const double n = static_cast<double>(products + 3);
  const double rounding = n * u / (1 - n * u) * magnitude;
  return lhs > l1 * (1 + 1e-9) + rounding;
}

// Weights within 1e-9 of a vertex of their simplex become that vertex exactly: a tie's valid
// gradient is most often one candidate's (the oracle's own, a system's "first" or "last"), and a
// weight of 1 − 4e-16 would move that candidate's term by more than a float64 system's bound.
void snap_to_vertices(std::vector<std::vector<double>>& weights) {
  for (auto& w : weights)
    for (std::size_t a = 0; a < w.size(); ++a)
      if (std::abs(w[a] - 1.0) <= 1e-9) {
        std::fill(w.begin(), w.end(), 0.0);
        w[a] = 1.0;
        break;
      }
}

}  // namespace

SubgradientDecision decide_subgradient(const oracle::SubgradientChoices& set,
                                       const std::map<std::string, const Tensor*>& actual,
                                       const std::map<std::string, const Tensor*>& bound) {
  const Problem p = scaled_problem(set, actual, bound);
  std::vector<double> residual;
  auto weights = nearest_weights(p, residual);
  snap_to_vertices(weights);

  // The valid gradient at `w` (one weight per alternative of each group), and its residual in bound
  // units, from the gradient in its own units: the solver's running residual in bound units has
  // rounded by up to a bound unit where terms are about 1/u (float64 systems).
  auto gradient_at = [&](const std::vector<std::vector<double>>& w, std::vector<double>& r) {
    std::map<std::string, Tensor> nearest;
    for (const auto& [input, base] : set.base) nearest.emplace(input, base);
    for (std::size_t gi = 0; gi < set.groups.size(); ++gi)
      for (std::size_t a = 0; a < set.groups[gi].alternatives.size(); ++a)
        for (const oracle::GradientTerm& t : set.groups[gi].alternatives[a].terms)
          nearest.at(t.input)[t.flat_index] += w[gi][a] * t.value;
    r.assign(p.target.size(), 0.0);
    for (std::size_t i = 0; i < p.inputs.size(); ++i) {
      const Tensor& n = nearest.at(p.inputs[i]);
      const Tensor& got = *actual.at(p.inputs[i]);
      for (index_t k = 0; k < n.size(); ++k) {
        const std::size_t j = p.offsets[i] + static_cast<std::size_t>(k);
        r[j] = (got[k] - n[k]) / p.bound[j];
      }
    }
    return nearest;
  };
  auto worst_of = [](const std::vector<double>& r) {
    std::size_t at = 0;
    for (std::size_t j = 0; j < r.size(); ++j)
      if (std::abs(r[j]) > std::abs(r[at])) at = j;
    return std::pair<double, std::size_t>{r.empty() ? 0.0 : std::abs(r[at]), at};
  };
  SubgradientDecision d;
  d.nearest = gradient_at(weights, residual);
  auto [worst, worst_at] = worst_of(residual);
  // Least squares trades the worst element for many: its nearest gradient can lie farther from the
  // answer there than a vertex does. The first alternative of every group (at a kink, the oracle's
  // own side) is a valid gradient too; where it lies within the bounds and its worst residual is
  // smaller, it is the one compared. Otherwise the least-squares residual stays: it is the direction
  // that separates an answer outside the set (below).
  std::vector<std::vector<double>> first(weights.size());
  for (std::size_t gi = 0; gi < weights.size(); ++gi) {
    first[gi].assign(weights[gi].size(), 0.0);
    if (!first[gi].empty()) first[gi][0] = 1.0;
  }
  std::vector<double> first_residual;
  std::map<std::string, Tensor> first_gradient = gradient_at(first, first_residual);
  if (const auto [first_worst, first_at] = worst_of(first_residual); first_worst < worst && first_worst <= kInside) {
    d.nearest = std::move(first_gradient);
    residual = std::move(first_residual);
    worst = first_worst;
    worst_at = first_at;
  }
  const std::size_t groups = set.groups.size();
  // "the 3 ties" or "the 3 kink units within rounding", for the messages.
  const std::string where = set.one_sided_kinks
                                ? fmt::format("{} kink unit{} within rounding", groups, groups == 1 ? "" : "s")
                                : fmt::format("{} tie{}", groups, groups == 1 ? "" : "s");
  if (worst <= kInside) {
    d.outcome = SubgradientOutcome::inside;
    d.how = fmt::format("compared with the valid gradient nearest to it at the {} ({} of bound at worst)", where,
                        fmt::format("{:.3g}", worst));
    return d;
  }
  std::vector<double> over_bound(residual.size(), 0.0), single(residual.size(), 0.0);
  for (std::size_t j = 0; j < residual.size(); ++j)
    if (std::abs(residual[j]) > 1.0) over_bound[j] = residual[j] > 0 ? 1.0 : -1.0;
  single[worst_at] = residual[worst_at] > 0 ? 1.0 : -1.0;
  for (const auto* phi : {&residual, &over_bound, &single})
    if (separates(p, *phi)) {
      d.outcome = SubgradientOutcome::outside;
      d.how = fmt::format("no valid gradient at the {} is within the bounds ({}); expected: the valid one nearest to it",
                          where,
                          set.one_sided_kinks ? "either one-sided derivative at each unit, or any between"
                                              : "any convex combination of the tied edges");
      return d;
    }
  d.outcome = SubgradientOutcome::undecided;
  d.how = fmt::format("at the {} the nearest valid gradient found is {:.3g}× a bound away, yet none is shown to be "
                      "out of reach: either may hold",
                      where, worst);
  return d;
}

std::optional<SubgradientDecision> decide_at_ties(const oracle::TargetDef& def, const Case& c, const Result& got,
                                                  const Bounds& bounds, Precision precision) {
  // Where no bound is known (beyond the format's range) the comparisons stay inconclusive (Bounds::no_bound).
  if (!def.subgradients || !def.kinks.ties || c.grad_outputs.empty() || !bounds.no_bound.empty())
    return std::nullopt;
  const oracle::SubgradientChoices set = def.subgradients(c, unit_roundoff(precision));
  if (set.groups.empty()) return std::nullopt;
  std::map<std::string, const Tensor*> actual, bound;
  for (const auto& [input, base] : set.base) {
    const auto a = got.gradients.find(input);
    const auto b = bounds.tensors.find("gradient " + input);
    if (a == got.gradients.end() || b == bounds.tensors.end() || a->second.shape() != base.shape()) return std::nullopt;
    for (double x : a->second.values())
      if (!std::isfinite(x)) return std::nullopt;
    actual[input] = &a->second;
    bound[input] = &b->second;
  }
  return decide_subgradient(set, actual, bound);
}

void compare_gradients_at_ties(Verdict& v, const oracle::TargetDef& def, const Case& c, const Result& got,
                               const Bounds& bounds) {
  if (const std::optional<SubgradientDecision> d = decide_at_ties(def, c, got, bounds, v.precision))
    compare_gradients_at_valid_subgradients(v, *d, got, bounds);
}

void compare_gradients_at_valid_subgradients(Verdict& v, const SubgradientDecision& d, const Result& got,
                                             const Bounds& bounds) {
  for (TensorComparison& tc : v.comparisons) {
    if (!tc.is_gradient || !d.nearest.count(tc.input)) continue;
    if (d.outcome == SubgradientOutcome::undecided) {
      detail::mark_inconclusive(tc, d.how);
      continue;
    }
    TensorComparison decided = compare_elementwise(tc.tensor, got.gradients.at(tc.input), d.nearest.at(tc.input),
                                                   bounds.tensors.at("gradient " + tc.input));
    decided.input = tc.input;
    decided.is_gradient = true;
    decided.reason = d.how;
    tc = std::move(decided);
  }
}

}  // namespace gnncheck::checks
