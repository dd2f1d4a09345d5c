#include "checks/softmax_past_analysis.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace gnncheck::checks {

void note_softmax_past_analysis(const oracle::TargetDef& def, const Case& c, Precision format, Bounds& b) {
  if (!b.no_bound.empty() || !def.spec.tolerance.softmax_rows) return;
  // The storage format's u even where the sums are float32: storing the logits' inputs moves a logit
  // by up to L·u_s, which is as far from first order as exp's own rounding in that format (a
  // bfloat16-stored GAT row of two edges with |s| ~ 10³ swings from one edge to the other, and one
  // random nudge of the measured model need not show it: docs/campaigns.md). Where storing moves no
  // value, the accumulation format's, as the floors read (StoredValues::floor_format).
  const double u = unit_roundoff(format);
  if (u <= unit_roundoff(Precision::float32)) return;  // float32 past the analysis keeps the measured model
  const std::vector<oracle::SoftmaxRow> rows =
      def.spec.tolerance.softmax_rows(c, oracle::with_defaults(def.spec, c.attributes));
  std::size_t past = 0;
  double widest = 0.0;
  for (const oracle::SoftmaxRow& r : rows) {
    if (r.length < 1.0) continue;
    const double rho = (6.0 + 4.8 * r.largest_logit + 2.4 * std::log(r.length)) * u;
    if (rho > 0.5 || !std::isfinite(rho)) {
      ++past;
      widest = std::max(widest, r.largest_logit);
    }
  }
  if (past)
    b.no_bound = fmt::format(
        "no bound in {}: on {} of {} softmax rows inside '{}' the logits reach |s| = {:.4g}, past the softmax analysis "
        "(ρ = (6 + 4.8·L + 2.4·ln d)·u > 1/2), where exp's rounding is not first order and the measured model, linear "
        "in u, does not hold",
        to_string(format), past, rows.size(), def.spec.name, widest);
}

}  // namespace gnncheck::checks
