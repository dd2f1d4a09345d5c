// run_check: the one dispatch from a check's kind to its function (one file per check, named after it).
#include "checks/checks.h"
#include "core/error.h"

namespace gnncheck::checks {

Verdict run_check(CheckKind kind, System& system, const Case& c, const CheckOptions& options) {
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

}  // namespace gnncheck::checks
