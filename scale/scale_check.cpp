#include "scale/scale_check.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"
#include "scale/neighbourhood.h"
#include "scale/scale_compare.h"

namespace gnncheck::scale {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

class Checker {
 public:
  Checker(System& system, std::shared_ptr<const Graph> graph, const ScaleOptions& options)
      : system_(system), graph_(std::move(graph)), options_(options), cmp_(r_, nb_) {}

  ScaleResult run() {
    r_.system = system_.name();
    require_valid_options(options_);
    const oracle::TargetDef& def = *options_.target;
    r_.target = def.spec.name;
    r_.graph_description = options_.graph_description;
    r_.graph_summary = graph_->summary();
    r_.seed = options_.seed;
    r_.rerun_command = options_.rerun_command;
    r_.hub_edge_budget = options_.hub_edge_budget;
    r_.hub_source_budget = options_.hub_source_budget;
    require_restrictable(def, options_.attributes, *graph_);  // before the system's whole-graph run
    const Attributes attrs = oracle::with_defaults(def.spec, options_.attributes);

    if (!system_.supports(r_.target))
      return cmp_.error(fmt::format("system '{}' does not implement target '{}'", r_.system, r_.target));
    r_.precision = system_.precision(r_.target);

    auto t = Clock::now();
    Case big = oracle::make_random_case(def, graph_, options_.attributes, options_.seed,
                                        {.min_value = -options_.input_magnitude, .max_value = options_.input_magnitude});
    r_.seconds.inputs = seconds_since(t);

    t = Clock::now();
    r_.rows = sample_rows(*graph_, sampling_options(options_));
    const std::vector<index_t> ids = row_ids(r_.rows);
    big.grad_outputs = sampled_grad_outputs(big, ids);
    r_.seconds.sampling = seconds_since(t);

    t = Clock::now();
    const Result got = system_.evaluate(big);
    r_.seconds.system = seconds_since(t);
    if (!got.ok()) return cmp_.error(fmt::format("system '{}' answered {}: {}", r_.system, to_string(got.status), got.message));

    t = Clock::now();
    nb_ = restrict_to_rows(big, ids);
    r_.seconds.neighbourhood = seconds_since(t);
    const auto [exact, bounds] = evaluate_neighbourhood(r_, nb_, options_.tolerance);

    t = Clock::now();
    const auto out_shapes = def.output_shapes(*graph_, attrs);
    const auto in_shapes = def.input_shapes(*graph_, attrs);
    for (const CompareSlot& slot : compare_slots(def, in_shapes)) {
      const TensorMap& answers = slot.is_output ? got.outputs : got.gradients;
      const auto it = answers.find(slot.name);
      const auto& shape = (slot.is_output ? out_shapes : in_shapes).at(slot.name);
      if (it == answers.end()) return cmp_.error(fmt::format("system '{}' returned no {}", r_.system, slot.label));
      if (it->second.shape() != shape)
        return cmp_.error(fmt::format("system '{}' returned {} of shape {}, expected {}", r_.system, slot.label, it->second.shape(), shape));
      const Tensor& want = (slot.is_output ? exact.outputs : exact.gradients).at(slot.name);
      const std::vector<index_t> every_row = all_rows(shape);
      const std::span<const index_t> rows =
          slot.kind == oracle::TensorKind::parameter ? std::span<const index_t>(every_row) : neighbourhood_rows(nb_, slot.kind, slot.name).big_rows;
      const ComparedTensor t_info{slot.label, slot.kind, rows, shape};
      cmp_.compare_inside(t_info, gather_rows(it->second, rows), want, bounds);
      if (!slot.is_output && slot.kind != oracle::TensorKind::parameter)
        cmp_.record_outside({slot.label + " outside the neighbourhood", slot.kind, rows, shape}, summarize_outside(it->second, rows));
    }
    r_.seconds.compare = seconds_since(t);
    return cmp_.conclude();
  }

 private:
  System& system_;
  std::shared_ptr<const Graph> graph_;
  const ScaleOptions& options_;
  ScaleResult r_;
  Neighbourhood nb_;
  ScaleComparer cmp_;
};

}  // namespace

int default_oracle_evaluations() {
  return std::max(checks::ToleranceOptions{}.concurrent_evaluations, static_cast<int>(std::thread::hardware_concurrency() / 2));
}

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
  index_t hubs = 0, hub_edges = 0, hub_smallest = 0, hub_largest = 0;
  for (const auto& row : r.rows)
    if (row.stratum == Stratum::highest_in_degree) {
      hub_smallest = hubs == 0 ? row.in_degree : std::min(hub_smallest, row.in_degree);
      hub_largest = std::max(hub_largest, row.in_degree);
      hub_edges += row.in_degree, ++hubs;
    }
  if (hubs > 0)
    s += fmt::format("  highest in-degree rows: {} rows, in-degree {} … {}, {} edges together (edge budget {}, source budget {})\n",
                     hubs, hub_smallest, hub_largest, hub_edges, r.hub_edge_budget, r.hub_source_budget);
  s += fmt::format("  compared {} elements against the exact oracle, {} gradient elements outside held to 0\n", r.compared_elements,
                   r.zero_checked_elements);
  for (const auto& c : r.comparisons)
    s += fmt::format("    {:<44} {} {:>10} elements, worst {:.3g} of bound{}\n", c.tensor, c.agrees() ? "ok  " : "FAIL", c.elements,
                     c.worst_ratio, c.elements_over_bound ? fmt::format(", {} over", c.elements_over_bound) : "");
  if (r.worst)
    s += fmt::format("  worst: {} {} at {}: system {:.9g}, exact {:.9g}, bound {:.3g} ({:.3g}× the bound)\n", r.worst->tensor,
                     r.worst->index, r.worst->where, r.worst->actual, r.worst->expected, r.worst->bound, r.worst->ratio);
  if (!r.tolerance_model.empty()) s += fmt::format("  tolerance: {}\n", r.tolerance_model);
  s += fmt::format(
      "  seconds: {}inputs {:.2f}, system {:.2f}, oracle part {:.3f} (sampling {:.3f}, neighbourhood {:.3f}, exact {:.3f}, bounds {:.3f}), "
      "compare {:.2f}\n",
      r.seconds.graph > 0.0 ? fmt::format("graph on the device {:.2f}, ", r.seconds.graph) : "", r.seconds.inputs, r.seconds.system,
      r.seconds.oracle, r.seconds.sampling, r.seconds.neighbourhood, r.seconds.exact, r.seconds.bounds, r.seconds.compare);
  if (r.device_peak_bytes > 0)
    s += fmt::format("  device memory: peak {:.2f} GiB over the check, {:.2f} GiB during the system's evaluation\n",
                     static_cast<double>(r.device_peak_bytes) / (1u << 30), static_cast<double>(r.system_peak_bytes) / (1u << 30));
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
  rec.seconds = r.seconds.graph + r.seconds.inputs + r.seconds.system + r.seconds.oracle + r.seconds.compare;
  if (r.worst) rec.error_vs_bound.push_back({std::abs(r.worst->actual - r.worst->expected), r.worst->bound});
  return rec;
}

}  // namespace gnncheck::scale
