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

std::optional<NearestKink> nearest_kink(CaseKinks& kinks, Precision p) { return nearest_kink(kinks, Formats(p)); }

double kink_margin(double terms, double abs_terms, const Formats& formats) {
  if (!formats.mixed()) return 2 * gamma(terms, unit_roundoff(formats.storage)) * abs_terms;
  return 2 * mixed_gamma(kKinkFactors, terms, formats) * abs_terms;
}

double kink_margin(double terms, double abs_terms, double stored_terms, const Formats& formats) {
  if (!formats.mixed() || stored_terms >= abs_terms) return kink_margin(terms, abs_terms, formats);
  const double accumulation = gamma(terms, unit_roundoff(formats.accumulation));
  return 2 * (gamma(kKinkFactors, unit_roundoff(formats.storage)) * (1 + accumulation) * stored_terms +
              accumulation * abs_terms);
}

double kink_margin(const oracle::KinkArguments& k, std::size_t n, const Formats& formats) {
  return n < k.stored_terms.size() ? kink_margin(k.terms[n], k.abs_terms[n], k.stored_terms[n], formats)
                                   : kink_margin(k.terms[n], k.abs_terms[n], formats);
}

std::optional<NearestKink> nearest_kink(CaseKinks& kinks, const Formats& formats) {
  const Case& c = kinks.kink_case();
  const oracle::KinkArguments& k = kinks.arguments();
  std::optional<NearestKink> best;
  double best_ratio = std::numeric_limits<double>::infinity();
  for (std::size_t n = 0; n < k.offsets.size(); ++n) {
    const double distance = std::abs(k.offsets[n]);
    const double margin = kink_margin(k, n, formats);
    const double ratio = margin > 0 ? distance / margin : (distance == 0 ? 0.0 : std::numeric_limits<double>::infinity());
    if (ratio >= best_ratio) continue;
    best_ratio = ratio;
    best = NearestKink{k.describe(n), distance, margin, distance <= margin, k.upstream, "", false};
  }
  if (best) best->tie = oracle::find_target(c.target).kinks.ties;
  if (best) best->jumping_outputs = oracle::find_target(c.target).kinks.jumping_outputs;
  if (best)
    best->description =
        fmt::format("{} is {:.3g} from its kink, {} the {:.3g} that a correct {} implementation may err in computing it",
                    best->what, best->distance, best->near ? "within" : "beyond", best->margin,
                    precision_text(formats.storage, formats.accumulation));
  return best;
}

}  // namespace gnncheck::checks
