// The op_order check: the differential check on the case's graph with two hubs added, so that in-
// and out-degrees differ (a normalization applied on the wrong side shows). Near a kink of the
// forward (checks/kinks.h) gradients are inconclusive. Which bug a failure matches (normalization in
// the forward's order, say) is the diagnosis's to name, from the entry's wrong variants (checks/diagnosis.h).
#include <cmath>

#include <fmt/format.h>

#include "checks/check_support.h"
#include "core/error.h"

namespace gnncheck::checks {

using namespace detail;

std::optional<Case> with_degree_asymmetry(const Case& c, std::string* why_not) {
  auto refuse = [&](std::string reason) -> std::optional<Case> {
    if (why_not) *why_not = std::move(reason);
    return std::nullopt;
  };
  const auto& spec = oracle::entry_of(c).spec;
  for (const auto& slot : spec.inputs)
    if (slot.kind == oracle::TensorKind::edges || slot.kind == oracle::TensorKind::edges_csc)
      return refuse(fmt::format("target '{}' has the edge input '{}', which has no values for added edges", c.target,
                                slot.name));
  for (const auto& slot : spec.outputs)
    if (slot.kind == oracle::TensorKind::edges || slot.kind == oracle::TensorKind::edges_csc)
      return refuse(fmt::format("target '{}' has the edge output '{}', whose output gradient has no values for added "
                                "edges",
                                c.target, slot.name));
  const Graph& g = *c.graph;
  if (g.n_dst() < 2 || g.n_src() < 1) return refuse("the graph needs at least 2 destinations and 1 source");
  // Two hubs, appended at the end of rows (existing edge ids shift, but no input or output is an
  // edge tensor): destination 0 gains an edge from every source, and every destination gains an edge
  // from the last source. Destination 0's in-degree and the last source's out-degree then exceed the
  // others, so neither side's degrees are uniform, and on a square graph node 0 has far more in- than
  // out-edges and the last node the opposite.
  std::vector<index_t> row_ptr{0}, col_idx;
  for (index_t i = 0; i < g.n_dst(); ++i) {
    for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e) col_idx.push_back(g.col_idx()[e]);
    if (i == 0)
      for (index_t j = 0; j + 1 < g.n_src(); ++j) col_idx.push_back(j);
    col_idx.push_back(g.n_src() - 1);
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  Case out = c;
  out.graph = std::make_shared<const Graph>(Graph::from_csr(g.n_dst(), g.n_src(), row_ptr, col_idx));
  return out;
}

Verdict op_order(System& system, const Case& c, const CheckOptions& options) {
  Verdict v = start_verdict(CheckKind::op_order, system, c, options);
  std::string why_not;
  const std::optional<Case> skewed = with_degree_asymmetry(c, &why_not);
  if (!skewed) return not_applicable(v, why_not);
  const auto& spec = oracle::entry_of(c).spec;
  const Result exact = exact_result(*skewed);
  const Result got = system.evaluate(*skewed);
  if (system_failed(v, got, "on the degree-asymmetric graph")) return v;
  const Bounds bounds = ToleranceModel(options.tolerance).bounds(*skewed, exact, formats_of(v));
  v.tolerance_model = bounds.model;
  compare_with_exact(v, spec, exact, got, bounds, "on the graph with a hub source: ");
  screen_kinks(v, *skewed);
  summarize(v);
  return v;
}

}  // namespace gnncheck::checks
