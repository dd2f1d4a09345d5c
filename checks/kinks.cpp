#include "checks/kinks.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "checks/tolerance.h"
#include "oracle/targets.h"

namespace gnncheck::checks {

const oracle::KinkArguments& CaseKinks::arguments() {
  if (!arguments_) arguments_ = oracle::kink_arguments(case_);
  return *arguments_;
}

std::optional<NearestKink> nearest_kink(const Case& c, Precision p) {
  CaseKinks kinks(c);
  return nearest_kink(kinks, p);
}

std::optional<NearestKink> nearest_kink(CaseKinks& kinks, Precision p) {
  const Case& c = kinks.kink_case();
  const oracle::KinkArguments& k = kinks.arguments();
  const double u = unit_roundoff(p);
  std::optional<NearestKink> best;
  double best_ratio = std::numeric_limits<double>::infinity();
  for (std::size_t n = 0; n < k.offsets.size(); ++n) {
    const double distance = std::abs(k.offsets[n]);
    const double margin = 2 * gamma(k.terms[n], u) * k.abs_terms[n];
    const double ratio = margin > 0 ? distance / margin : (distance == 0 ? 0.0 : std::numeric_limits<double>::infinity());
    if (ratio >= best_ratio) continue;
    best_ratio = ratio;
    best = NearestKink{k.describe(n), distance, margin, distance <= margin, k.upstream, "", false};
  }
  if (best) best->tie = oracle::find_target(c.target).kinks.ties;
  if (best)
    best->description =
        fmt::format("{} is {:.3g} from its kink, {} the {:.3g} that a correct {} implementation may err in computing it",
                    best->what, best->distance, best->near ? "within" : "beyond", best->margin, to_string(p));
  return best;
}

}  // namespace gnncheck::checks
