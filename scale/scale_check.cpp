#include "scale/scale_check.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"
#include "scale/neighbourhood.h"

namespace gnncheck::scale {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Where the rows of one restricted tensor live in the big one.
struct TensorMapping {
  std::string label;  // "output y" / "gradient x"
  std::string name;
  bool is_output = false;
  oracle::TensorKind kind = oracle::TensorKind::dst_nodes;
  const std::vector<index_t>* big_rows = nullptr;  // restricted row i -> big row
};

std::vector<index_t> multi_index(index_t flat, const std::vector<index_t>& shape) {
  std::vector<index_t> idx(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    const index_t extent = std::max<index_t>(1, shape[d]);
    idx[d] = flat % extent;
    flat /= extent;
  }
  return idx;
}

class Checker {
 public:
  Checker(System& system, std::shared_ptr<const Graph> graph, const ScaleOptions& options)
      : system_(system), graph_(std::move(graph)), options_(options) {}

  ScaleResult run() {
    r_.system = system_.name();
    r_.target = options_.target;
    r_.graph_description = options_.graph_description;
    r_.graph_summary = graph_->summary();
    r_.seed = options_.seed;
    r_.rerun_command = options_.rerun_command;
    require_supported_target(options_.target);
    if (options_.rows < 1) throw InputError(fmt::format("--rows must be at least 1, got {}", options_.rows));
    if (!(options_.input_magnitude > 0.0) || !std::isfinite(options_.input_magnitude))
      throw InputError(fmt::format("--magnitude must be a positive finite number, got {}", options_.input_magnitude));
    require_restrictable(options_.target, options_.attributes, *graph_);  // before the system's whole-graph run
    const auto& def = oracle::find_target(options_.target);
    const Attributes attrs = oracle::with_defaults(def.spec, options_.attributes);

    if (!system_.supports(options_.target))
      return error(fmt::format("system '{}' does not implement target '{}'", r_.system, r_.target));
    r_.precision = system_.precision(options_.target);

    auto t = Clock::now();
    Case big = oracle::make_random_case(def, graph_, options_.attributes, options_.seed,
                                        {.min_value = -options_.input_magnitude, .max_value = options_.input_magnitude});
    r_.seconds.inputs = seconds_since(t);

    t = Clock::now();
    r_.rows = sample_rows(*graph_, {.rows = options_.rows, .seed = options_.seed, .edge_offset_limit = options_.edge_offset_limit});
    const std::vector<index_t> ids = row_ids(r_.rows);
    big.grad_outputs = sampled_grad_outputs(big, ids);
    const double sampling_seconds = seconds_since(t);

    t = Clock::now();
    const Result got = system_.evaluate(big);
    r_.seconds.system = seconds_since(t);
    if (!got.ok()) return error(fmt::format("system '{}' answered {}: {}", r_.system, to_string(got.status), got.message));

    t = Clock::now();
    nb_ = restrict_to_rows(big, ids);
    const Result exact = oracle::evaluate(nb_.sub, Precision::float64);
    if (!exact.ok()) throw InternalError(fmt::format("scale: the oracle could not evaluate the neighbourhood: {}", exact.message));
    const checks::Bounds bounds = checks::ToleranceModel(options_.tolerance).bounds(nb_.sub, exact, r_.precision);
    r_.seconds.oracle = sampling_seconds + seconds_since(t);
    r_.tolerance_model = bounds.model;
    r_.neighbourhood_edges = static_cast<index_t>(nb_.edges.size());
    r_.neighbourhood_sources = static_cast<index_t>(nb_.cols.size());
    r_.padding_edges = nb_.padding_edges;

    t = Clock::now();
    const auto out_shapes = def.output_shapes(*graph_, attrs);
    const auto in_shapes = def.input_shapes(*graph_, attrs);
    std::vector<TensorMapping> mappings;
    for (const auto& out : def.spec.outputs) mappings.push_back(mapping("output " + out.name, out.name, true, out.kind));
    for (const auto& in : def.spec.inputs) {
      if (!in.differentiable || !in_shapes.count(in.name)) continue;  // an optional parameter left out (a layer without bias)
      if (in.kind == oracle::TensorKind::parameter) {
        auto& ids = all_rows_[in.name];
        ids.resize(static_cast<size_t>(in_shapes.at(in.name).empty() ? 1 : in_shapes.at(in.name)[0]));
        for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<index_t>(i);
      }
      mappings.push_back(mapping("gradient " + in.name, in.name, false, in.kind));
    }
    for (const auto& m : mappings) {
      const TensorMap& answers = m.is_output ? got.outputs : got.gradients;
      const auto it = answers.find(m.name);
      const auto& shape = (m.is_output ? out_shapes : in_shapes).at(m.name);
      if (it == answers.end()) return error(fmt::format("system '{}' returned no {}", r_.system, m.label));
      if (it->second.shape() != shape)
        return error(fmt::format("system '{}' returned {} of shape {}, expected {}", r_.system, m.label, it->second.shape(), shape));
      const Tensor& want = (m.is_output ? exact.outputs : exact.gradients).at(m.name);
      compare_inside(m, it->second, want, bounds.tensors.at(m.label));
      if (!m.is_output && m.kind != oracle::TensorKind::parameter) compare_outside(m, it->second);
    }
    r_.seconds.compare = seconds_since(t);
    return conclude();
  }

 private:
  TensorMapping mapping(std::string label, std::string name, bool is_output, oracle::TensorKind kind) const {
    TensorMapping m{std::move(label), std::move(name), is_output, kind, nullptr};
    switch (kind) {
      case oracle::TensorKind::dst_nodes: m.big_rows = &nb_.rows; break;
      case oracle::TensorKind::src_nodes: m.big_rows = &nb_.cols; break;
      case oracle::TensorKind::edges: m.big_rows = &nb_.edges; break;
      case oracle::TensorKind::parameter: m.big_rows = &all_rows_.at(m.name); break;
      default: throw InternalError(fmt::format("scale: {} has a kind a row restriction does not map", m.label));
    }
    return m;
  }

  // The big case's rows of `big` that the neighbourhood holds, against the exact values and bounds.
  void compare_inside(const TensorMapping& m, const Tensor& big, const Tensor& exact, const Tensor& bound) {
    const auto& rows = *m.big_rows;
    const index_t width = big.row_size();
    std::vector<index_t> shape = big.shape();
    shape[0] = static_cast<index_t>(rows.size());
    Tensor actual(shape), expected(shape), limit(shape);
    for (size_t i = 0; i < rows.size(); ++i) {
      std::copy_n(big.data() + rows[i] * width, width, actual.data() + static_cast<index_t>(i) * width);
      std::copy_n(exact.data() + static_cast<index_t>(i) * width, width, expected.data() + static_cast<index_t>(i) * width);
      std::copy_n(bound.data() + static_cast<index_t>(i) * width, width, limit.data() + static_cast<index_t>(i) * width);
    }
    checks::TensorComparison c = checks::compare_elementwise(m.label, actual, expected, limit);
    r_.compared_elements += c.elements;
    if (c.worst) {
      WorstElement w;
      w.tensor = m.label;
      const index_t sub_row = c.worst->flat_index / std::max<index_t>(1, width);
      w.index = multi_index(rows[sub_row] * width + c.worst->flat_index % std::max<index_t>(1, width), big.shape());
      w.actual = c.worst->actual;
      w.expected = c.worst->expected;
      w.bound = c.worst->bound;
      w.ratio = c.worst_ratio;
      w.where = where_inside(m.kind, sub_row);
      consider(w, c.agrees());
    }
    r_.comparisons.push_back(std::move(c));
  }

  // Gradient elements outside the neighbourhood are exactly 0 (their output gradient terms all are).
  void compare_outside(const TensorMapping& m, const Tensor& big) {
    const auto& rows = *m.big_rows;
    const index_t width = big.row_size();
    std::vector<char> inside(static_cast<size_t>(big.rows()), 0);
    for (index_t row : rows) inside[static_cast<size_t>(row)] = 1;
    checks::TensorComparison c;
    c.tensor = m.label + " outside the neighbourhood";
    index_t worst_flat = -1;
    double worst_abs = 0.0;
    for (index_t row = 0; row < big.rows(); ++row) {
      if (inside[static_cast<size_t>(row)]) continue;
      for (index_t k = 0; k < width; ++k) {
        const double v = big[row * width + k];
        ++c.elements;
        const double a = std::isnan(v) ? std::numeric_limits<double>::infinity() : std::abs(v);
        if (a > 0.0) {
          ++c.elements_over_bound;
          if (a > worst_abs) worst_abs = a, worst_flat = row * width + k;
        }
      }
    }
    r_.zero_checked_elements += c.elements;
    c.agreement = c.elements_over_bound == 0 ? checks::Agreement::agrees : checks::Agreement::disagrees;
    c.worst_ratio = c.agrees() ? 0.0 : std::numeric_limits<double>::infinity();
    if (worst_flat >= 0) {
      c.worst = checks::ElementReport{worst_flat, multi_index(worst_flat, big.shape()), big[worst_flat], 0.0, 0.0};
      WorstElement w{c.tensor, c.worst->index, big[worst_flat], 0.0, 0.0, c.worst_ratio, ""};
      w.where = fmt::format("{} {}, outside the sampled rows' neighbourhood (exact value 0)",
                            m.kind == oracle::TensorKind::edges ? "edge" : (m.kind == oracle::TensorKind::src_nodes ? "source" : "row"),
                            worst_flat / std::max<index_t>(1, width));
      consider(w, false);
    }
    r_.comparisons.push_back(std::move(c));
  }

  std::string row_text(index_t sampled) const {
    return fmt::format("row {} ({})", r_.rows[static_cast<size_t>(sampled)].row, to_string(r_.rows[static_cast<size_t>(sampled)].stratum));
  }

  std::string where_inside(oracle::TensorKind kind, index_t sub_row) const {
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
  void consider(const WorstElement& w, bool passed) {
    const bool better = !r_.worst || (!passed && worst_passed_) || (passed == worst_passed_ && w.ratio > r_.worst->ratio);
    if (better) {
      r_.worst = w;
      worst_passed_ = passed;
    }
  }

  ScaleResult error(std::string message) {
    r_.outcome = reports::Outcome::error;
    r_.message = std::move(message);
    return std::move(r_);
  }

  ScaleResult conclude() {
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

  System& system_;
  std::shared_ptr<const Graph> graph_;
  const ScaleOptions& options_;
  ScaleResult r_;
  Neighbourhood nb_;
  std::map<std::string, std::vector<index_t>> all_rows_;  // parameters: every row, in order
  bool worst_passed_ = true;
};

}  // namespace

ScaleResult run_scale_check(System& system, std::shared_ptr<const Graph> graph, const ScaleOptions& options) {
  if (!graph) throw InputError("scale: no graph");
  return Checker(system, std::move(graph), options).run();
}

std::string summary_text(const ScaleResult& r) {
  std::string s;
  const char* verdict = r.outcome == reports::Outcome::pass ? "PASS" : (r.outcome == reports::Outcome::fail ? "FAIL" : "ERROR");
  s += fmt::format("{} scale {}/{} on {} ({}), seed {}, precision {}\n", verdict, r.system, r.target, r.graph_description,
                   r.graph_summary, r.seed, to_string(r.precision));
  std::vector<std::string> strata;
  for (const auto& [stratum, count] : stratum_counts(r.rows))
    if (count > 0) strata.push_back(fmt::format("{} {}", count, to_string(stratum)));
  s += fmt::format("  sampled rows: {} ({}); neighbourhood {} edges, {} sources{}\n", r.rows.size(), fmt::join(strata, ", "),
                   r.neighbourhood_edges, r.neighbourhood_sources,
                   r.padding_edges ? fmt::format(", {} degree-padding edges", r.padding_edges) : "");
  s += fmt::format("  compared {} elements against the exact oracle, {} gradient elements outside held to 0\n", r.compared_elements,
                   r.zero_checked_elements);
  for (const auto& c : r.comparisons)
    s += fmt::format("    {:<44} {} {:>10} elements, worst {:.3g} of bound{}\n", c.tensor, c.agrees() ? "ok  " : "FAIL", c.elements,
                     c.worst_ratio, c.elements_over_bound ? fmt::format(", {} over", c.elements_over_bound) : "");
  if (r.worst)
    s += fmt::format("  worst: {} {} at {}: system {:.9g}, exact {:.9g}, bound {:.3g} ({:.3g}× the bound)\n", r.worst->tensor,
                     r.worst->index, r.worst->where, r.worst->actual, r.worst->expected, r.worst->bound, r.worst->ratio);
  if (!r.tolerance_model.empty()) s += fmt::format("  tolerance: {}\n", r.tolerance_model);
  s += fmt::format("  seconds: inputs {:.2f}, system {:.2f}, oracle part {:.3f}, compare {:.2f}\n", r.seconds.inputs, r.seconds.system,
                   r.seconds.oracle, r.seconds.compare);
  // A failure's message repeats the lines above (for reports); an error's message is its only reason.
  if (r.outcome == reports::Outcome::error && !r.message.empty()) s += fmt::format("  {}\n", r.message);
  s += fmt::format("  re-run: {}\n", r.rerun_command);
  return s;
}

reports::ResultRecord to_result_record(const ScaleResult& r) {
  reports::ResultRecord rec;
  rec.entry = "scale";
  rec.system = r.system;
  rec.target = r.target;
  rec.check = "scale";
  rec.outcome = r.outcome;
  rec.precision = std::string(to_string(r.precision));
  rec.metric_name = "|system − exact| at the element nearest (or furthest past) its bound";
  if (r.worst) {
    rec.metric = std::abs(r.worst->actual - r.worst->expected);
    rec.bound = r.worst->bound;
  }
  rec.tolerance_model = r.tolerance_model;
  rec.seed = r.seed;
  rec.cases = 1;
  rec.conclusive = r.outcome == reports::Outcome::error ? 0 : 1;
  rec.message = r.message;
  rec.repro = r.rerun_command;
  rec.seconds = r.seconds.inputs + r.seconds.system + r.seconds.oracle + r.seconds.compare;
  if (r.worst) rec.error_vs_bound.push_back({std::abs(r.worst->actual - r.worst->expected), r.worst->bound});
  return rec;
}

}  // namespace gnncheck::scale
