// run_check: the one dispatch from a check's kind to its function (one file per check, named after it).
#include <cstddef>
#include <exception>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "checks/checks.h"
#include "checks/jumps_within_rounding.h"
#include "checks/softmax_past_analysis.h"
#include "checks/stored_values.h"
#include "core/error.h"
#include "oracle/targets.h"

namespace gnncheck::checks {
namespace {

Verdict dispatch(CheckKind kind, System& system, const Case& c, const CheckOptions& options) {
  switch (kind) {
    case CheckKind::differential: return differential(system, c, options);
    case CheckKind::gradient: return gradient(system, c, options);
    case CheckKind::adjoint: return adjoint(system, c, options);
    case CheckKind::op_order: return op_order(system, c, options);
    case CheckKind::metamorphic_relabel: return metamorphic_relabel(system, c, options);
    case CheckKind::metamorphic_edge_order: return metamorphic_edge_order(system, c, options);
    case CheckKind::metamorphic_linearity: return metamorphic_linearity(system, c, options);
    case CheckKind::state_interleaved: return state_interleaved(system, c, options);
    case CheckKind::state_repeat: return state_repeat(system, c, options);
    case CheckKind::numerics: return numerics(system, c, options);
    case CheckKind::resources: return resources(system, c, options);
  }
  throw InternalError("run_check: unknown check kind");
}

// A case whose softmax rows are past the analysis in the system's format, moved within it (every
// check that compares under the measured bounds; numerics scales its case on purpose and resources
// compares none). The format is the one the rule reads (StoredValues::floor_format). A case the
// oracle's hooks cannot read (a tensor missing) is left for the check to refuse with its own error.
std::optional<SoftmaxAnalysisMove> softmax_move(CheckKind kind, System& system, const Case& c) {
  if (kind == CheckKind::numerics || kind == CheckKind::resources) return std::nullopt;
  const oracle::TargetDef* def = oracle::lookup_target(c.target);
  if (!def || !def->spec.tolerance.softmax_rows || !system.supports(c.target)) return std::nullopt;
  try {
    const Formats formats(system.precision(c.target), system.accumulation(c.target));
    // The rule's format is never coarser than storage: float32 storage needs no reading of the case.
    if (unit_roundoff(formats.storage) <= unit_roundoff(Precision::float32)) return std::nullopt;
    return moved_within_softmax_analysis(*def, c, stored_values(c, formats).floor_format);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The case with ȳ = 0 at every element whose value jumps within the system's rounding
// (checks/jumps_within_rounding.h), for the same checks as the move; nullopt where it changes nothing.
struct JumpsWithheld {
  Case withheld;
  std::size_t elements = 0;  // of ȳ set to 0
};
std::optional<JumpsWithheld> jumps_withheld(CheckKind kind, System& system, const Case& c) {
  if (kind == CheckKind::numerics || kind == CheckKind::resources || c.grad_outputs.empty()) return std::nullopt;
  const oracle::TargetDef* def = oracle::lookup_target(c.target);
  if (!def || def->kinks.jumping_outputs.empty() || !system.supports(c.target)) return std::nullopt;
  try {
    JumpsWithheld out{c};
    out.elements = withhold_gradients_at_jumps(out.withheld, Formats(system.precision(c.target), system.accumulation(c.target)));
    if (out.elements == 0) return std::nullopt;
    return out;
  } catch (const std::exception&) {
    return std::nullopt;  // a case the hooks cannot read: the check refuses it with its own error
  }
}

void append_note(Verdict& v, const std::string& note) {
  v.tolerance_model += (v.tolerance_model.empty() ? "" : "; ") + note;
}

}  // namespace

Verdict run_check(CheckKind kind, System& system, const Case& c, const CheckOptions& options) {
  const std::optional<SoftmaxAnalysisMove> move = softmax_move(kind, system, c);
  const Case& drawn = move ? move->moved : c;
  const std::optional<JumpsWithheld> jumps = jumps_withheld(kind, system, drawn);
  Verdict v = dispatch(kind, system, jumps ? jumps->withheld : drawn, options);
  if (move) {
    append_note(v, move->note);
    v.compared_moved = true;
  }
  if (jumps)
    append_note(v, fmt::format("ȳ set to 0 at {} output element{} whose value jumps within rounding, compared with "
                               "either side's value (checks/jumps_within_rounding.h)",
                               jumps->elements, jumps->elements == 1 ? "" : "s"));
  return v;
}

}  // namespace gnncheck::checks
