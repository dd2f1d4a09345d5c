#include "checks/softmax_past_analysis.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace gnncheck::checks {
namespace {

constexpr double kRhoLimit = 0.5;
// How far within the analysis a moved case lands: every logit's own rounding L·u ≤ 2^-6, so storing
// the logits moves no α by more than a factor e^(2L·u) ≤ e^(1/32) — exp's rounding far inside first
// order, where the measured model is the one the campaigns hold it to. At the analysis's edge that
// factor reaches e^0.2, where the linear model is least known to hold and its bound widest.
constexpr double kMovedLogitRoundoff = 0x1p-6;

double rho(const oracle::SoftmaxRow& row, double u) {
  return (6.0 + 4.8 * row.largest_logit + 2.4 * std::log(row.length)) * u;
}

std::vector<oracle::SoftmaxRow> rows_of(const oracle::TargetDef& def, const Case& c) {
  return def.spec.tolerance.softmax_rows(c, oracle::with_defaults(def.spec, c.attributes));
}

double largest_logit(const std::vector<oracle::SoftmaxRow>& rows) {
  double largest = 0.0;
  for (const oracle::SoftmaxRow& r : rows) largest = std::max(largest, r.largest_logit);
  return largest;
}

}  // namespace

bool past_softmax_analysis(const oracle::SoftmaxRow& row, double u) {
  if (row.length < 1.0) return false;  // a row without entries exponentiates nothing
  const double r = rho(row, u);
  return r > kRhoLimit || !std::isfinite(r);
}

void note_softmax_past_analysis(const oracle::TargetDef& def, const Case& c, Precision format, Bounds& b) {
  if (!b.no_bound.empty() || !def.spec.tolerance.softmax_rows) return;
  // The storage format's u even where the sums are float32: storing the logits' inputs moves a logit
  // by up to L·u_s, which is as far from first order as exp's own rounding in that format (a
  // bfloat16-stored GAT row of two edges with |s| ~ 10³ swings from one edge to the other, and one
  // random nudge of the measured model need not show it: docs/campaigns.md). Where storing moves no
  // value, the accumulation format's, as the floors read (StoredValues::floor_format).
  const double u = unit_roundoff(format);
  if (u <= unit_roundoff(Precision::float32)) return;  // float32 past the analysis keeps the measured model
  const std::vector<oracle::SoftmaxRow> rows = rows_of(def, c);
  std::size_t past = 0;
  double widest = 0.0;
  for (const oracle::SoftmaxRow& r : rows) {
    if (past_softmax_analysis(r, u)) {
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

std::optional<SoftmaxAnalysisMove> moved_within_softmax_analysis(const oracle::TargetDef& def, const Case& c,
                                                                 Precision format) {
  const double u = unit_roundoff(format);
  const oracle::ToleranceRule& rule = def.spec.tolerance;
  if (u <= unit_roundoff(Precision::float32) || !rule.softmax_rows || rule.logit_scales.empty()) return std::nullopt;
  const std::vector<oracle::SoftmaxRow> rows = rows_of(def, c);
  bool past = false;
  for (const oracle::SoftmaxRow& r : rows) past = past || past_softmax_analysis(r, u);
  if (!past) return std::nullopt;
  SoftmaxAnalysisMove move;
  move.largest_logit_before = largest_logit(rows);
  if (!std::isfinite(move.largest_logit_before)) return std::nullopt;
  // The fewest halvings that bring L·u to kMovedLogitRoundoff or below.
  move.halvings = static_cast<int>(std::ceil(std::log2(move.largest_logit_before * u / kMovedLogitRoundoff)));
  move.moved = c;
  for (const std::string& name : rule.logit_scales) {
    Tensor* scaled = nullptr;
    if (auto it = move.moved.parameters.find(name); it != move.moved.parameters.end()) scaled = &it->second;
    if (auto it = move.moved.inputs.find(name); it != move.moved.inputs.end()) scaled = &it->second;
    if (!scaled) continue;  // an optional tensor this case does not have
    for (double& v : scaled->values()) v = std::ldexp(v, -move.halvings);
  }
  // The logits scale exactly; the rows are read again all the same (a row whose length alone is past
  // the analysis, or a declared tensor that is not a pure scale: no move).
  const std::vector<oracle::SoftmaxRow> after = rows_of(def, move.moved);
  for (const oracle::SoftmaxRow& r : after)
    if (past_softmax_analysis(r, u)) return std::nullopt;
  move.largest_logit_after = largest_logit(after);
  std::string names;
  for (const std::string& name : rule.logit_scales) names += (names.empty() ? "" : ", ") + name;
  move.note = fmt::format(
      "checked with {} scaled by 2^-{}: the case's softmax rows reached |s| = {:.4g}, past the softmax analysis in {} "
      "(no bound there); scaled, they reach {:.4g}, L·u ≤ 2^-6",
      names, move.halvings, move.largest_logit_before, to_string(format), move.largest_logit_after);
  return move;
}

}  // namespace gnncheck::checks
