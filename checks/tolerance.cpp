// The tolerance model: which rule a target declares, and the reference computed beside its
// evaluations; the rules are closed_form_bounds.cpp, measured_bounds.cpp and the softmax rule, the
// derivation is in tolerance.h and checks/tolerance.md.
#include "checks/tolerance.h"

#include <fmt/format.h>

#include "checks/closed_form_bounds.h"
#include "checks/jumps_within_rounding.h"
#include "checks/measured_evaluations.h"
#include "checks/tolerance_formats.h"
#include "checks/tolerance_tasks.h"
#include "core/error.h"
#include "oracle/targets.h"

namespace gnncheck::checks {

using oracle::TensorKind;

double node_row_terms(const Graph& g, TensorKind kind, index_t row) {
  switch (kind) {
    case TensorKind::dst_nodes: return static_cast<double>(g.in_degree(row));
    case TensorKind::src_nodes: return static_cast<double>(g.out_degree(row));
    case TensorKind::edges: return static_cast<double>(g.in_degree(g.row_of_edge()[row]));
    case TensorKind::edges_csc: return static_cast<double>(g.in_degree(g.row_of_edge()[g.edge_perm()[row]]));
    case TensorKind::parameter: return static_cast<double>(g.n_dst() + g.n_src() + g.num_edges());
  }
  return 0.0;
}

Result must_evaluate(const Case& c, Precision p, const char* what) {
  Result r = oracle::evaluate(c, p);
  if (!r.ok())
    throw InternalError(fmt::format("tolerance model: the oracle could not evaluate {} of target '{}' in {}: {}", what,
                                    c.target, to_string(p), r.message));
  return r;
}

double mixed_gamma(double storage_roundings, double accumulation_roundings, const Formats& formats) {
  if (!formats.mixed()) return gamma(storage_roundings + accumulation_roundings, unit_roundoff(formats.storage));
  return (1.0 + gamma(storage_roundings, unit_roundoff(formats.storage))) *
             (1.0 + gamma(accumulation_roundings, unit_roundoff(formats.accumulation))) -
         1.0;
}

const Tensor& must_find(const Result& r, const NamedTensor& nt, const char* what) {
  const Tensor* t = find_tensor(r, nt);
  if (!t) throw InternalError(fmt::format("tolerance model: {} lacks {}", what, nt.label));
  return *t;
}

Bounds ToleranceModel::bounds(const Case& c, const Result& exact, const Formats& formats) const {
  if (!c.graph) throw InternalError("tolerance model: case has no graph");
  if (!accumulation_fits(formats.storage, formats.accumulation))
    throw InternalError(fmt::format("tolerance model: accumulation in {} is coarser than storage in {}",
                                    to_string(formats.accumulation), to_string(formats.storage)));
  const oracle::TargetDef& def = oracle::entry_of(c);
  Bounds b;
  switch (def.spec.tolerance.kind) {
    case oracle::ToleranceKind::closed_form: b = closed_form(def, c, exact, formats); break;
    case oracle::ToleranceKind::softmax_per_row: b = softmax_per_row(def, c, exact, formats); break;
    case oracle::ToleranceKind::measured: b = measured(def, c, exact, formats); break;
  }
  cover_jumps_within_rounding(b, c, exact, formats);
  return b;
}

ReferenceAndBounds ToleranceModel::reference_and_bounds(const Case& c, const Formats& formats) const {
  if (!c.graph) throw InternalError("tolerance model: case has no graph");
  ReferenceAndBounds out;
  const oracle::TargetDef& def = oracle::entry_of(c);
  const oracle::ToleranceRule& rule = def.spec.tolerance;
  if (rule.kind == oracle::ToleranceKind::closed_form) {
    // The two helper evaluations run beside the reference (they refer to c: their futures wait).
    const ClosedFormEvaluations evaluations = start_closed_form_evaluations(def, c, formats.storage);
    out.reference = oracle::evaluate(c, Precision::float64);
    if (out.reference.ok()) {
      out.bounds = closed_form_from(def, c, evaluations, out.reference, formats, options_.safety_factor);
      cover_jumps_within_rounding(out.bounds, c, out.reference, formats);
    }
    return out;
  }
  if (rule.kind != oracle::ToleranceKind::measured) {
    out.reference = oracle::evaluate(c, Precision::float64);
    if (out.reference.ok()) out.bounds = bounds(c, out.reference, formats);
    return out;
  }
  // The float64 reference runs beside the model's own evaluations, in a slot like them.
  const std::shared_ptr<MeasuredEvaluations> ev = start_measured_evaluations(def, c, formats);
  {
    EvaluationSlot slot(ev->slots);
    out.reference = oracle::evaluate(c, Precision::float64);
  }
  if (out.reference.ok()) {
    out.bounds = measured_from(def, c, ev, out.reference, formats);
    cover_jumps_within_rounding(out.bounds, c, out.reference, formats);
  } else {
    ev->wait();  // the tasks refer to c: let them finish before returning
  }
  return out;
}

}  // namespace gnncheck::checks
