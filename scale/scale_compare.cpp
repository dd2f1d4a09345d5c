#include "scale/scale_compare.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "scale/huge_pages.h"
#include "oracle/targets.h"

namespace gnncheck::scale {

std::vector<index_t> multi_index(index_t flat, const std::vector<index_t>& shape) {
  std::vector<index_t> idx(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    const index_t extent = std::max<index_t>(1, shape[d]);
    idx[d] = flat % extent;
    flat /= extent;
  }
  return idx;
}

std::vector<index_t> all_rows(const std::vector<index_t>& shape) {
  std::vector<index_t> ids(static_cast<size_t>(shape.empty() ? 1 : shape[0]));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<index_t>(i);
  return ids;
}

std::vector<CompareSlot> compare_slots(const oracle::TargetDef& def, const std::map<std::string, std::vector<index_t>>& input_shapes) {
  std::vector<CompareSlot> slots;
  for (const auto& out : def.spec.outputs) slots.push_back({"output " + out.name, out.name, true, out.kind});
  for (const auto& in : def.spec.inputs)
    if (in.differentiable && input_shapes.count(in.name)) slots.push_back({"gradient " + in.name, in.name, false, in.kind});
  return slots;
}

void require_valid_options(const ScaleOptions& options) {
  if (!options.target) throw InputError("scale: no target given");
  require_supported(*options.target);
  if (options.rows < 1) throw InputError(fmt::format("--rows must be at least 1, got {}", options.rows));
  if (!(options.input_magnitude > 0.0) || !std::isfinite(options.input_magnitude))
    throw InputError(fmt::format("--magnitude must be a positive finite number, got {}", options.input_magnitude));
  if (options.hub_edge_budget < 0) throw InputError(fmt::format("--hub-edges must be at least 0, got {}", options.hub_edge_budget));
  if (options.hub_source_budget < 0)
    throw InputError(fmt::format("--hub-sources must be at least 0, got {}", options.hub_source_budget));
}

SamplingOptions sampling_options(const ScaleOptions& options) {
  return {.rows = options.rows,
          .seed = options.seed,
          .edge_offset_limit = options.edge_offset_limit,
          .hub_edge_budget = options.hub_edge_budget,
          .hub_source_budget = options.hub_source_budget};
}

void record_neighbourhood(ScaleResult& r, const Neighbourhood& nb, const checks::Bounds& bounds) {
  r.tolerance_model = bounds.model;
  r.neighbourhood_edges = static_cast<index_t>(nb.edges.size());
  r.neighbourhood_sources = static_cast<index_t>(nb.cols.size());
  r.padding_edges = nb.padding_edges;
}

ExactAnswer evaluate_neighbourhood(ScaleResult& r, const Neighbourhood& nb, const checks::ToleranceOptions& tolerance) {
  using Clock = std::chrono::steady_clock;
  const auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  // The float64 reference runs beside the tolerance model's own evaluations (one pool; the same
  // values as evaluating it first): `exact` is the oracle's own evaluation time, `bounds` the rest.
  const auto t = Clock::now();
  // The evaluations' fresh tensors on huge pages: their page faults were most of this part's time
  // on the H200's host (docs/scale-figures.md, "Huge pages for the oracle's tensors").
  const LargeTensorsOnHugePages huge_pages;
  checks::ReferenceAndBounds rb = checks::ToleranceModel(tolerance).reference_and_bounds(nb.sub, r.precision);
  if (!rb.reference.ok())
    throw InternalError(fmt::format("scale: the oracle could not evaluate the neighbourhood: {}", rb.reference.message));
  const double both = since(t);
  r.seconds.exact = std::min(rb.reference.seconds, both);
  r.seconds.bounds = both - r.seconds.exact;
  ExactAnswer a{std::move(rb.reference), std::move(rb.bounds)};
  r.seconds.oracle = r.seconds.sampling + r.seconds.neighbourhood + r.seconds.exact + r.seconds.bounds;
  record_neighbourhood(r, nb, a.bounds);
  return a;
}

OutsideSummary summarize_outside(const Tensor& big, std::span<const index_t> inside_rows) {
  const index_t width = big.row_size();
  std::vector<char> inside(static_cast<size_t>(big.rows()), 0);
  for (index_t row : inside_rows) inside[static_cast<size_t>(row)] = 1;
  OutsideSummary s;
  double worst_abs = 0.0;
  for (index_t row = 0; row < big.rows(); ++row) {
    if (inside[static_cast<size_t>(row)]) continue;
    for (index_t k = 0; k < width; ++k) {
      const double v = big[row * width + k];
      ++s.elements;
      const double a = std::isnan(v) ? std::numeric_limits<double>::infinity() : std::abs(v);
      if (a > 0.0) {
        ++s.nonzero;
        if (a > worst_abs || s.worst_flat < 0) worst_abs = a, s.worst_flat = row * width + k, s.worst_value = v;
      }
    }
  }
  return s;
}

void ScaleComparer::compare_inside(const ComparedTensor& t, const Tensor& actual, const Tensor& exact, const checks::Bounds& bounds) {
  const index_t n = static_cast<index_t>(t.big_rows.size());
  const index_t width = actual.row_size();
  std::vector<index_t> shape = actual.shape();
  shape[0] = n;
  Tensor expected(shape), limit(shape);
  std::copy_n(exact.data(), n * width, expected.data());
  std::copy_n(bounds.tensors.at(t.label).data(), n * width, limit.data());
  std::optional<Tensor> lowest;
  if (const Tensor* low = bounds.lowest_of(t.label)) {
    lowest.emplace(shape);
    std::copy_n(low->data(), n * width, lowest->data());
  }
  checks::TensorComparison c = checks::compare_elementwise(t.label, actual, expected, limit, lowest ? &*lowest : nullptr);
  r_.compared_elements += c.elements;
  if (c.worst) {
    WorstElement w;
    w.tensor = t.label;
    const index_t sub_row = c.worst->flat_index / std::max<index_t>(1, width);
    w.index = multi_index(t.big_rows[static_cast<size_t>(sub_row)] * width + c.worst->flat_index % std::max<index_t>(1, width), t.big_shape);
    w.actual = c.worst->actual;
    w.expected = c.worst->expected;
    w.bound = c.worst->bound;
    w.ratio = c.worst_ratio;
    w.where = where_inside(t.kind, sub_row);
    consider(w, c.agrees());
  }
  r_.comparisons.push_back(std::move(c));
}

// Gradient elements outside the neighbourhood are exactly 0 (their output gradient terms all are).
void ScaleComparer::record_outside(const ComparedTensor& t, const OutsideSummary& outside) {
  index_t width = 1;
  for (size_t d = 1; d < t.big_shape.size(); ++d) width *= t.big_shape[d];
  checks::TensorComparison c;
  c.tensor = t.label;
  c.elements = outside.elements;
  c.elements_over_bound = outside.nonzero;
  r_.zero_checked_elements += c.elements;
  c.agreement = c.elements_over_bound == 0 ? checks::Agreement::agrees : checks::Agreement::disagrees;
  c.worst_ratio = c.agrees() ? 0.0 : std::numeric_limits<double>::infinity();
  if (outside.worst_flat >= 0) {
    c.worst = checks::ElementReport{outside.worst_flat, multi_index(outside.worst_flat, t.big_shape), outside.worst_value, 0.0, 0.0};
    WorstElement w{c.tensor, c.worst->index, outside.worst_value, 0.0, 0.0, c.worst_ratio, ""};
    w.where = fmt::format("{} {}, outside the sampled rows' neighbourhood (exact value 0)",
                          t.kind == oracle::TensorKind::edges ? "edge" : (t.kind == oracle::TensorKind::src_nodes ? "source" : "row"),
                          outside.worst_flat / std::max<index_t>(1, width));
    consider(w, false);
  }
  r_.comparisons.push_back(std::move(c));
}

std::string ScaleComparer::row_text(index_t sampled) const {
  return fmt::format("row {} ({})", r_.rows[static_cast<size_t>(sampled)].row, to_string(r_.rows[static_cast<size_t>(sampled)].stratum));
}

std::string ScaleComparer::where_inside(oracle::TensorKind kind, index_t sub_row) const {
  const Graph& sub = *nb_.sub.graph;
  switch (kind) {
    case oracle::TensorKind::dst_nodes: return row_text(sub_row);
    case oracle::TensorKind::edges:
      return fmt::format("edge {} of {}", nb_.edges[static_cast<size_t>(sub_row)], row_text(sub.row_of_edge()[sub_row]));
    case oracle::TensorKind::src_nodes: {
      const auto col = sub.col_idx();
      for (index_t e = 0; e < static_cast<index_t>(nb_.edges.size()); ++e)
        if (col[e] == sub_row)
          return fmt::format("source {}, read by {}", nb_.cols[static_cast<size_t>(sub_row)], row_text(sub.row_of_edge()[e]));
      if (sub_row < static_cast<index_t>(r_.rows.size()) && nb_.cols[static_cast<size_t>(sub_row)] == r_.rows[static_cast<size_t>(sub_row)].row)
        return fmt::format("source {}, the own features of {}", nb_.cols[static_cast<size_t>(sub_row)], row_text(sub_row));
      return fmt::format("source {}", nb_.cols[static_cast<size_t>(sub_row)]);
    }
    case oracle::TensorKind::parameter: return "a parameter (summed over every sampled row)";
    default: return "";
  }
}

// Keeps the failing element with the worst ratio, or the worst overall while nothing fails.
void ScaleComparer::consider(const WorstElement& w, bool passed) {
  const bool better = !r_.worst || (!passed && worst_passed_) || (passed == worst_passed_ && w.ratio > r_.worst->ratio);
  if (better) {
    r_.worst = w;
    worst_passed_ = passed;
  }
}

ScaleResult ScaleComparer::error(std::string message) {
  r_.outcome = reports::Outcome::error;
  r_.message = std::move(message);
  return std::move(r_);
}

ScaleResult ScaleComparer::conclude() {
  if (r_.compared_elements == 0) {
    r_.nothing_compared = true;
    return error(fmt::format("no element was compared ({} sampled rows, {} neighbourhood edges): nothing was verified",
                             r_.rows.size(), r_.neighbourhood_edges));
  }
  bool passed = true;
  for (const auto& c : r_.comparisons) passed = passed && c.agrees();
  r_.outcome = passed ? reports::Outcome::pass : reports::Outcome::fail;
  if (!passed) {
    const WorstElement& w = *r_.worst;
    r_.message = fmt::format(
        "scale check of {} on target {} ({}, {}; {} sampled rows, seed {}): {} at {} — {}: system {:.17g}, exact {:.17g}, "
        "|error| {:.3g} vs bound {:.3g} ({:.3g}× the bound); precision {}; tolerance {}. Re-run: {}",
        r_.system, r_.target, r_.graph_description, r_.graph_summary, r_.rows.size(), r_.seed, w.tensor, w.index, w.where,
        w.actual, w.expected, std::abs(w.actual - w.expected), w.bound, w.ratio, to_string(r_.precision), r_.tolerance_model,
        r_.rerun_command);
  }
  return std::move(r_);
}

}  // namespace gnncheck::scale
