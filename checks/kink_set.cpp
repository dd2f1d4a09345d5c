#include "checks/kink_set.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "oracle/kink_arguments.h"

namespace gnncheck::checks {

std::optional<NearKinkSet> near_kink_set(const oracle::TargetDef& def, CaseKinks& kinks, const Result& exact,
                                         const Formats& formats) {
  const Precision precision = formats.storage;
  const Case& c = kinks.kink_case();
  if (!def.kinks.evaluate_f64_flipped || c.grad_outputs.empty() || !exact.ok()) return std::nullopt;
  const oracle::KinkArguments& k = kinks.arguments();
  if (k.units.empty()) return std::nullopt;
  std::map<int, std::vector<std::size_t>> near_by_site;
  std::size_t near_count = 0;
  for (std::size_t n = 0; n < k.offsets.size(); ++n) {
    if (std::abs(k.offsets[n]) > kink_margin(kinks, n, formats)) continue;
    if (k.units[n].site < 0) return std::nullopt;  // a tie, or AGNN's floor: no unit to flip
    near_by_site[k.units[n].site].push_back(n);
    ++near_count;
  }
  if (near_by_site.empty()) return std::nullopt;
  auto changes = [&](int site, const std::string& input) {
    const auto it = k.site_inputs.find(site);
    const std::vector<std::string>& inputs = it == k.site_inputs.end() ? k.upstream : it->second;
    return std::find(inputs.begin(), inputs.end(), input) != inputs.end();
  };

  // The inputs decided here: those whose gradients the units of at most one near site change (the
  // effects of two sites on one gradient multiply: kink_set.h). The others stay as they are.
  NearKinkSet out;
  out.near_count = near_count;
  out.set.one_sided_kinks = true;
  for (const std::string& input : k.upstream) {
    const auto base = exact.gradients.find(input);
    if (base == exact.gradients.end()) continue;  // not an input of this case (bias = false, …)
    int sites = 0;
    for (const auto& [site, units] : near_by_site) sites += changes(site, input);
    if (sites <= 1) out.set.base.emplace(input, base->second);
  }
  if (out.set.base.empty()) return std::nullopt;
  std::vector<std::size_t> near;  // the units whose side changes a gradient decided here
  for (const auto& [site, units] : near_by_site) {
    const int at = site;  // a lambda may not capture a structured binding (clang < 16)
    if (std::any_of(out.set.base.begin(), out.set.base.end(), [&](const auto& entry) { return changes(at, entry.first); }))
      near.insert(near.end(), units.begin(), units.end());
  }
  const double size = static_cast<double>(c.graph->n_dst() + c.graph->n_src() + c.graph->num_edges());
  if (near.size() > kMaxNearKinkUnits || static_cast<double>(near.size()) * size > kMaxNearKinkWork) {
    out.too_many = fmt::format("{} kink units are within {}'s rounding, more than the valid gradients are built for on "
                               "a case of {:.0f} nodes and edges (checks/kink_set.h): either side may hold at each",
                               near.size(), to_string(precision), size);
    return out;
  }
  for (const std::size_t n : near) {
    oracle::layers::KinkFlips flips;
    flips.units[k.units[n].site] = {k.units[n].index};
    const Result flipped = oracle::evaluate_with_flipped_kinks(c, flips);
    if (!flipped.ok())
      throw InternalError(fmt::format("the oracle's '{}' with {} on its other side: {}", c.target, k.describe(n),
                                      flipped.message));
    oracle::TieAlternative other{"the other side", {}};
    for (const auto& [input, base] : out.set.base) {
      const Tensor& g = flipped.gradients.at(input);
      for (index_t i = 0; i < base.size(); ++i)
        if (g[i] != base[i]) other.terms.push_back({input, i, g[i] - base[i]});
    }
    if (other.terms.empty()) continue;  // the unit's side changes no gradient here
    out.set.groups.push_back({k.describe(n), {{"the oracle's side", {}}, std::move(other)}});
  }
  return out;
}

std::optional<SubgradientDecision> decide_near_kinks(const oracle::TargetDef& def, CaseKinks& kinks,
                                                     const Result& exact, const Result& got, const Bounds& bounds,
                                                     const Formats& formats) {
  // Where no bound is known (beyond the format's range) the comparisons stay inconclusive (Bounds::no_bound).
  if (!bounds.no_bound.empty()) return std::nullopt;
  const std::optional<NearKinkSet> near = near_kink_set(def, kinks, exact, formats);
  if (!near) return std::nullopt;
  std::map<std::string, const Tensor*> actual, bound;
  for (const auto& [input, base] : near->set.base) {
    const auto a = got.gradients.find(input);
    const auto b = bounds.tensors.find("gradient " + input);
    if (a == got.gradients.end() || b == bounds.tensors.end() || a->second.shape() != base.shape())
      return std::nullopt;
    for (double x : a->second.values())
      if (!std::isfinite(x)) return std::nullopt;
    actual[input] = &a->second;
    bound[input] = &b->second;
  }
  if (!near->too_many.empty()) {
    SubgradientDecision d;
    d.outcome = SubgradientOutcome::undecided;
    d.nearest = near->set.base;
    d.how = near->too_many;
    return d;
  }
  SubgradientDecision d = decide_subgradient(near->set, actual, bound);
  if (near->set.groups.empty())  // no near unit moves a gradient: the oracle's is the only valid one
    d.how = fmt::format("the {} kink unit{} within {}'s rounding change{} no gradient here: compared with the "
                        "oracle's",
                        near->near_count, near->near_count == 1 ? "" : "s", to_string(formats.storage),
                        near->near_count == 1 ? "s" : "");
  return d;
}

void compare_gradients_near_kinks(Verdict& v, const oracle::TargetDef& def, CaseKinks& kinks, const Result& exact,
                                  const Result& got, const Bounds& bounds) {
  if (const std::optional<SubgradientDecision> d = decide_near_kinks(def, kinks, exact, got, bounds, Formats(v.precision, v.accumulation)))
    compare_gradients_at_valid_subgradients(v, *d, got, bounds);
}

}  // namespace gnncheck::checks
