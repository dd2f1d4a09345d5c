#include "checks/jumps_within_rounding.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "oracle/targets.h"

namespace gnncheck::checks {

std::vector<std::size_t> jumps_within_rounding(CaseKinks& kinks, const Formats& formats) {
  std::vector<std::size_t> near;
  if (oracle::entry_of(kinks.kink_case()).kinks.jumping_outputs.empty()) return near;
  const oracle::KinkArguments& k = kinks.arguments();
  for (std::size_t n = 0; n < k.jump_elements.size(); ++n)
    if (std::abs(k.offsets[n]) <= kink_margin(kinks, n, formats)) near.push_back(n);
  return near;
}

bool gradients_withheld_at(CaseKinks& kinks, std::size_t n) {
  const Case& c = kinks.kink_case();
  const oracle::KinkArguments& k = kinks.arguments();
  if (n >= k.jump_elements.size()) return false;
  for (const std::string& name : oracle::entry_of(c).kinks.jumping_outputs)
    if (const auto it = c.grad_outputs.find(name); it != c.grad_outputs.end() && it->second[k.jump_elements[n]] != 0)
      return false;
  return true;
}

std::size_t withhold_gradients_at_jumps(Case& c, const Formats& formats) {
  if (c.grad_outputs.empty() || oracle::entry_of(c).kinks.jumping_outputs.empty()) return 0;
  std::vector<index_t> elements;
  {
    CaseKinks kinks(c);
    for (const std::size_t n : jumps_within_rounding(kinks, formats)) elements.push_back(kinks.arguments().jump_elements[n]);
  }
  std::size_t changed = 0;
  for (const std::string& name : oracle::entry_of(c).kinks.jumping_outputs) {
    const auto it = c.grad_outputs.find(name);
    if (it == c.grad_outputs.end()) continue;
    for (const index_t e : elements) {
      if (it->second[e] == 0) continue;
      it->second[e] = 0;
      ++changed;
    }
  }
  return changed;
}

void cover_jumps_within_rounding(Bounds& b, const Case& c, const Result& exact, const Formats& formats) {
  if (!b.no_bound.empty() || oracle::entry_of(c).kinks.jumping_outputs.empty()) return;
  CaseKinks kinks(c);
  const std::vector<std::size_t> near = jumps_within_rounding(kinks, formats);
  if (near.empty()) return;
  const oracle::KinkArguments& k = kinks.arguments();
  // The value either side gives is rounded once more where it is formed and stored.
  const double rounding = gamma(2, unit_roundoff(formats.storage));
  for (const std::string& name : oracle::entry_of(c).kinks.jumping_outputs) {
    const std::string label = "output " + name;
    const auto value = exact.outputs.find(name);
    const auto bound = b.tensors.find(label);
    if (value == exact.outputs.end() || bound == b.tensors.end()) continue;
    auto lowest = b.lowest.find(label);
    if (lowest == b.lowest.end())
      lowest = b.lowest.emplace(label, Tensor(bound->second.shape(), std::numeric_limits<double>::quiet_NaN())).first;
    for (const std::size_t n : near) {
      const index_t e = k.jump_elements[n];
      const auto [lo, hi] = k.jump_values(n, kink_margin(kinks, n, formats));
      const double x = value->second[e], own = bound->second[e];
      const double least = std::min(lo, x) - own - rounding * std::abs(lo);
      const double most = std::max(hi, x) + own + rounding * std::abs(hi);
      bound->second[e] = std::max({own, most - x, x - least});
      double& floor = lowest->second[e];
      floor = std::isnan(floor) ? least : std::min(floor, least);
    }
  }
}

}  // namespace gnncheck::checks
