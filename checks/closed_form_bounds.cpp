// The closed-form rule of the tolerance model (checks/tolerance.md, "Closed form").
#include "checks/closed_form_bounds.h"

#include <algorithm>
#include <cmath>
#include <future>
#include <map>
#include <optional>
#include <vector>

#include <omp.h>

#include <fmt/format.h>

#include "checks/agnn_floor.h"
#include "checks/gat_floor.h"
#include "checks/range_rule.h"
#include "checks/segment_softmax_floor.h"
#include "checks/softmax_past_analysis.h"
#include "checks/stored_values.h"
#include "checks/case_transforms.h"
#include "checks/tolerance_formats.h"
#include "checks/tolerance_tasks.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/splitmix64.h"
#include "oracle/targets.h"

namespace gnncheck::checks {

using oracle::TensorKind;

ClosedFormEvaluations start_closed_form_evaluations(const oracle::TargetDef& def, const Case& c, Precision precision) {
  const bool async = worth_tasks(c);
  if (def.closed_form_terms) {
    // The target's own Σ|terms| and counts: one task, whose two results the evaluations share.
    // `precision` is the storage format's: ties of a max are decided by the values as stored.
    auto terms = start_task(async, [&def, &c, precision] { return def.closed_form_terms(c, unit_roundoff(precision)); });
    return {start_task(false, [terms] { return terms.get().abs_sums; }),
            start_task(false, [terms] { return terms.get().term_counts; })};
  }
  return {start_task(async, [&c] { return must_evaluate(abs_case(c), Precision::float64, "|inputs|"); }),
          start_task(async, [&c] { return must_evaluate(ones_case(c), Precision::float64, "all-ones inputs"); })};
}

Bounds closed_form_from(const oracle::TargetDef& def, const Case& c, const ClosedFormEvaluations& evaluations,
                        const Result& exact, const Formats& formats, double safety_factor) {
  const auto& spec = def.spec;
  const oracle::ToleranceRule& rule = spec.tolerance;
  const Graph& g = *c.graph;
  const Precision precision = formats.storage;
  const double u = unit_roundoff(precision);
  const double tiny = smallest_subnormal(precision);
  const Result& abs_sums = evaluations.abs_sums.get();
  const Result& term_counts = evaluations.term_counts.get();
  // Storage and accumulation (tolerance.md, "Storage and accumulation"): the entry's storage
  // roundings and the result's own rounding to storage in u_s, the additions and the rest of r in
  // u_a. An entry that does not say which of its r are in storage keeps the storage bound whole.
  const bool split = formats.mixed() && rule.storage_roundings.has_value();
  const double storage_part = split ? *rule.storage_roundings + 1.0 : 0.0;
  const double accumulation_extra = split ? std::max(0, rule.extra_roundings - *rule.storage_roundings) : 0.0;

  Bounds b;
  b.precision = precision;
  b.accumulation = formats.accumulation;
  b.unit_roundoff = u;
  if (split)
    b.model = fmt::format(
        "closed form {}·((1 + γ_(r_s+1)(u_s))·(1 + γ_(k+r_a)(u_a)) − 1)·Σ|terms| (k = terms per element{}, r_s = {} "
        "roundings in storage and the result's own, r_a = {}: {}; u_s = {}, u_a = {})",
        safety_factor, rule.extra_roundings == 0 ? " plus the roundings of one" : "", *rule.storage_roundings,
        rule.extra_roundings - *rule.storage_roundings, rule.why, u_text(precision), u_text(formats.accumulation));
  else
  b.model = rule.extra_roundings == 0
                ? fmt::format("closed form {}·γ_k·Σ|terms| (k = terms per element plus the roundings of one: {}; u = {})",
                              safety_factor, rule.why, u_text(precision))
                : fmt::format("closed form {}·γ_(k+{})·Σ|a||b| (k = terms per element, r = {}: {}; u = {})",
                              safety_factor, rule.extra_roundings, rule.extra_roundings, rule.why, u_text(precision));
  for (const NamedTensor& nt : result_tensors(spec, exact)) {
    const Tensor& y = must_find(exact, nt, "the oracle's result");
    const Tensor& s = must_find(abs_sums, nt, "the |inputs| evaluation");
    const Tensor& ones = must_find(term_counts, nt, "the all-ones evaluation");
    Tensor bound(y.shape());
    const index_t width = std::max<index_t>(1, y.row_size());
#pragma omp parallel for schedule(static) if (worth_parallel(y.size()))
    for (index_t i = 0; i < y.size(); ++i) {
      const index_t row = i / width;
      double k = std::ceil(ones[i] - 1e-9);
      if (nt.kind == TensorKind::dst_nodes || nt.kind == TensorKind::src_nodes)
        k = std::max(k, node_row_terms(g, nt.kind, row));
      if (split) {
        const double n = std::max(k, 1.0) + accumulation_extra;
        bound[i] = safety_factor * mixed_gamma(storage_part, n, formats) * s[i] + (n + storage_part) * tiny;
        continue;
      }
      const double n = std::max(k, 1.0) + rule.extra_roundings;
      bound[i] = safety_factor * gamma(n, u) * s[i] + n * tiny;
    }
    note_range(b, nt.label, s, y, safety_factor);
    note_inputs_range(b, c, safety_factor);
    b.tensors.emplace(nt.label, std::move(bound));
  }
  return b;
}

Bounds ToleranceModel::closed_form(const oracle::TargetDef& def, const Case& c, const Result& exact,
                                   const Formats& formats) const {
  return closed_form_from(def, c, start_closed_form_evaluations(def, c, formats.storage), exact, formats,
                          options_.safety_factor);
}

}  // namespace gnncheck::checks
