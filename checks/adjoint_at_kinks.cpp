#include "checks/adjoint_at_kinks.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "checks/kink_set.h"

namespace gnncheck::checks {

std::optional<oracle::SubgradientChoices> valid_gradients_at(const oracle::TargetDef& def, const Case& point,
                                                            const Result& oracle, const std::optional<NearestKink>& kink,
                                                            const Formats& formats) {
  if (!kink || !kink->near) return std::nullopt;
  if (def.kinks.ties) {
    if (!def.subgradients) return std::nullopt;
    oracle::SubgradientChoices set = def.subgradients(point, unit_roundoff(formats.storage));
    if (set.groups.empty()) return std::nullopt;
    return set;
  }
  CaseKinks kinks(point);
  std::optional<NearKinkSet> near = near_kink_set(def, kinks, oracle, formats);
  if (!near || !near->too_many.empty()) return std::nullopt;
  return std::move(near->set);
}

namespace {

double norm(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

// v minus its components along `basis` (orthonormal), twice: one pass of modified Gram-Schmidt
// leaves components of the order of the rounding times the condition; the second removes them.
void remove_components(std::vector<double>& v, const std::vector<std::vector<double>>& basis) {
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& q : basis) {
      double d = 0.0;
      for (std::size_t i = 0; i < v.size(); ++i) d += q[i] * v[i];
      for (std::size_t i = 0; i < v.size(); ++i) v[i] -= d * q[i];
    }
}

}  // namespace

KinkFreeDirections::KinkFreeDirections(const oracle::SubgradientChoices& set, const std::string& input, index_t elements) {
  // What each group's choice changes: every alternative minus the group's first.
  std::vector<std::vector<double>> changes;
  for (const auto& group : set.groups) {
    std::vector<double> first(static_cast<std::size_t>(elements), 0.0);
    for (const auto& term : group.alternatives.front().terms)
      if (term.input == input) first[static_cast<std::size_t>(term.flat_index)] += term.value;
    for (std::size_t a = 1; a < group.alternatives.size(); ++a) {
      std::vector<double> d(first.size(), 0.0);
      for (const auto& term : group.alternatives[a].terms)
        if (term.input == input) d[static_cast<std::size_t>(term.flat_index)] += term.value;
      for (std::size_t i = 0; i < d.size(); ++i) d[i] -= first[i];
      if (norm(d) > 0) changes.push_back(std::move(d));
    }
  }
  choices_ = changes.size();
  const double rank_bound = static_cast<double>(std::min<std::size_t>(changes.size(), static_cast<std::size_t>(elements)));
  if (static_cast<double>(changes.size()) * static_cast<double>(elements) * rank_bound > kMaxKinkProjectionWork) {
    unavailable_ = fmt::format("{} choices at kink units within rounding change the gradient of {} elements: more than "
                               "the projection is formed for (checks/adjoint_at_kinks.h)",
                               changes.size(), elements);
    return;
  }
  for (auto& d : changes) {
    const double before = norm(d);
    if (before == 0) continue;
    remove_components(d, basis_);
    const double after = norm(d);
    if (after <= 1e-10 * before) continue;  // already spanned
    for (double& x : d) x /= after;
    basis_.push_back(std::move(d));
  }
  if (basis_.size() >= static_cast<std::size_t>(elements))
    unavailable_ = fmt::format("the choices at kink units within rounding change every direction of its {} elements",
                               elements);
}

std::optional<Tensor> KinkFreeDirections::project(const Tensor& u) const {
  if (!unavailable_.empty()) return std::nullopt;
  std::vector<double> v(u.values().begin(), u.values().end());
  const double before = norm(v);
  if (before == 0) return std::nullopt;
  remove_components(v, basis_);
  const double after = norm(v);
  if (after <= 1e-6 * before) return std::nullopt;
  Tensor out(u.shape());
  for (index_t i = 0; i < out.size(); ++i) out[i] = v[static_cast<std::size_t>(i)] * before / after;
  return out;
}

std::pair<double, double> valid_spread(const oracle::SubgradientChoices& set, const std::string& input,
                                       const Tensor& oracle_gradient, const Tensor& u) {
  auto along = [&](const std::vector<oracle::GradientTerm>& terms) {
    double s = 0.0;
    for (const auto& term : terms)
      if (term.input == input) s += term.value * u[term.flat_index];
    return s;
  };
  double lo = 0.0;
  const Tensor& base = set.base.at(input);
  for (index_t i = 0; i < std::min(base.size(), u.size()); ++i) lo += (base[i] - oracle_gradient[i]) * u[i];
  double hi = lo;
  for (const auto& group : set.groups) {
    double least = INFINITY, most = -INFINITY;
    for (const auto& alternative : group.alternatives) {
      const double d = along(alternative.terms);
      least = std::min(least, d);
      most = std::max(most, d);
    }
    lo += least;
    hi += most;
  }
  return {lo, hi};
}

}  // namespace gnncheck::checks
