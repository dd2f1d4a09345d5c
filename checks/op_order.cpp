// The op_order check: the differential check on the case's graph with two hubs added, so that in-
// and out-degrees differ (a normalization applied on the wrong side shows). Near a kink of the
// forward (checks/kinks.h) gradients are inconclusive.
#include <cmath>

#include <fmt/format.h>

#include "checks/check_support.h"
#include "core/error.h"
#include "oracle/degree_norm.h"
#include "oracle/spmm_ve.h"

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

namespace {

// FailureDiagnosis::normalization_side (normalized_spmm): the wrong formulas published systems used,
// evaluated in float64, and which one the system's gradient is closest to. Empty when nothing is
// closer than the correct answer.
std::string diagnose_normalization_side(const Case& c, const Result& got, const Result& exact) {
  if (!got.gradients.count("x") || c.grad_outputs.empty()) return {};
  const Graph& g = *c.graph;
  if (!g.is_square()) return {};
  const Attributes attrs = oracle::with_defaults(oracle::entry_of(c).spec, c.attributes);
  const oracle::DegreeNorm norm = oracle::parse_degree_norm(attrs.get_string("norm"));
  // With one degree per node (source_degree = in) on a square graph both sides carry the same
  // factors, so applying them in the forward's order gives the same answer: nothing to diagnose.
  if (norm == oracle::DegreeNorm::symmetric &&
      oracle::parse_source_degree(attrs.get_string("source_degree")) == oracle::SourceDegree::in)
    return {};
  // Backward scaled with the degrees of the wrong sides: D_dst^-½ Aᵀ D_src^-½ ḡ (symmetric) or
  // D^-1 Aᵀ ḡ (row_mean), i.e. Aᵀ with edge values built from the swapped degrees.
  Tensor wrong_w({g.num_edges(), 1});
  for (index_t e = 0; e < g.num_edges(); ++e) {
    const index_t i = g.row_of_edge()[e], j = g.col_idx()[e];
    wrong_w[e] = norm == oracle::DegreeNorm::symmetric
                     ? 1.0 / std::sqrt(static_cast<double>(g.out_degree(i) * g.in_degree(j)))
                     : (g.in_degree(j) > 0 ? 1.0 / static_cast<double>(g.in_degree(j)) : 0.0);
    if (!std::isfinite(wrong_w[e])) wrong_w[e] = 0.0;
  }
  const Tensor wrong = oracle::spmm_ve_transposed_forward(g, wrong_w, c.grad_outputs.at("y"));
  auto distance = [&](const Tensor& a) {
    double d = 0.0;
    for (index_t k = 0; k < a.size(); ++k) d = std::max(d, std::abs(a[k] - got.gradients.at("x")[k]));
    return d;
  };
  const double to_wrong = distance(wrong), to_right = distance(exact.gradients.at("x"));
  if (to_wrong >= to_right) return {};
  return fmt::format(
      "The gradient matches the backward scaled on the wrong side ({}) to within {:.3g} (vs {:.3g} from the correct "
      "one): the normalization was applied in the forward's order.",
      norm == oracle::DegreeNorm::symmetric ? "D_dst^-1/2 Aᵀ D_src^-1/2 ḡ instead of D_src^-1/2 Aᵀ D_dst^-1/2 ḡ"
                                            : "D^-1 Aᵀ ḡ instead of Aᵀ D^-1 ḡ",
      to_wrong, to_right);
}

// What the target's catalogue entry says a failure can be explained by.
std::string diagnose(const oracle::TargetSpec& spec, const Case& c, const Result& got, const Result& exact) {
  switch (spec.diagnosis) {
    case oracle::FailureDiagnosis::normalization_side: return diagnose_normalization_side(c, got, exact);
    case oracle::FailureDiagnosis::none: break;
  }
  return {};
}

}  // namespace

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
  if (v.conclusion == Conclusion::fail) {
    v.detail = diagnose(spec, *skewed, got, exact);
    v.message = failure_message(v);
  }
  return v;
}

}  // namespace gnncheck::checks
