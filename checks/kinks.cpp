#include "checks/kinks.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "checks/jumps_within_rounding.h"
#include "checks/stored_values.h"
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

bool CaseKinks::upstream_held(Precision storage) {
  if (upstream_held_ && upstream_held_->first == storage) return upstream_held_->second;
  bool held = true;
  for (const std::string& name : arguments().upstream)
    for (const TensorMap* m : {&case_.inputs, &case_.parameters})
      if (const auto it = m->find(name); it != m->end()) held = held && held_exactly(it->second, storage);
  upstream_held_ = std::pair{storage, held};
  return held;
}

double kink_margin(CaseKinks& kinks, std::size_t n, const Formats& formats) {
  const oracle::KinkArguments& k = kinks.arguments();
  if (n >= k.stored_terms.size()) return kink_margin(k.terms[n], k.abs_terms[n], formats);
  const double stored = formats.mixed() && kinks.upstream_held(formats.storage) ? 0.0 : k.stored_terms[n];
  return kink_margin(k.terms[n], k.abs_terms[n], stored, formats);
}

std::optional<NearestKink> nearest_kink(CaseKinks& kinks, const Formats& formats) {
  return nearest_kink(kinks, formats, KinkReading::every);
}

std::optional<NearestKink> nearest_kink(CaseKinks& kinks, const Formats& formats, KinkReading reading) {
  const Case& c = kinks.kink_case();
  const oracle::KinkArguments& k = kinks.arguments();
  std::optional<NearestKink> best;
  double best_ratio = std::numeric_limits<double>::infinity();
  for (std::size_t n = 0; n < k.offsets.size(); ++n) {
    const bool declared_jump = n < k.jump_elements.size();
    if (declared_jump && (reading == KinkReading::outputs ||
                          (reading == KinkReading::gradients && gradients_withheld_at(kinks, n))))
      continue;
    const double distance = std::abs(k.offsets[n]);
    const double margin = kink_margin(kinks, n, formats);
    const double ratio = margin > 0 ? distance / margin : (distance == 0 ? 0.0 : std::numeric_limits<double>::infinity());
    if (ratio >= best_ratio) continue;
    best_ratio = ratio;
    best = NearestKink{k.describe(n), distance, margin, distance <= margin, k.upstream, "", false};
  }
  if (best) best->tie = oracle::entry_of(c).kinks.ties;
  if (best) best->jumping_outputs = oracle::entry_of(c).kinks.jumping_outputs;
  if (best)
    best->description =
        fmt::format("{} is {:.3g} from its kink, {} the {:.3g} that a correct {} implementation may err in computing it",
                    best->what, best->distance, best->near ? "within" : "beyond", best->margin,
                    precision_text(formats.storage, formats.accumulation));
  return best;
}

}  // namespace gnncheck::checks
