// The `scale` task kind: a scale graph family's one check (scale/scale_check.h) of one system and
// target on the family's one big graph, seeded by the task — the same record `gnncheck scale
// --report` writes, under this entry. Its re-run line is that `gnncheck scale` command whenever the
// command's flags can say everything the task set (targets' attributes among the width flags,
// --heads and --norm; no tolerance override), else the entry's `gnncheck run` line.
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "oracle/targets.h"
#include "scale/graph_spec.h"
#include "scale/neighbourhood.h"
#include "scale/scale_check.h"
#include "suites/scale_command_line.h"
#include "suites/scale_where_system_runs.h"
#include "suites/task.h"

namespace gnncheck::suites {
namespace {

using reports::Outcome;
using reports::ResultRecord;

class ScaleTask final : public TaskKind {
 public:
  std::string name() const override { return "scale"; }
  bool draws_cases() const override { return false; }
  bool checks_alone(const GraphFamily& family) const override { return family.kind() == GraphFamily::Kind::scale; }

  // The scale check and the scale graph family go together; its targets are named, supported by the
  // scale check, and fixed to one value per attribute (one result per target, no case loop).
  void validate(const Entry& e, const Suite& suite) const override {
    const GraphFamily& family = suite.graphs.at(e.graphs);
    if (!checks_alone(family))
      throw InputError(fmt::format("{}: entry '{}': the scale check runs on a graph family of family scale (graphs: {} is '{}')",
                                   e.location.where(), e.name, e.graphs, family.family));
    if (e.checks != std::vector<std::string>{"scale"})
      throw InputError(fmt::format("{}: entry '{}': checks: a scale graph family ('{}') is checked by the scale check alone; "
                                   "expected checks: scale, got {}",
                                   e.location.where(), e.name, e.graphs, fmt::join(e.checks, ", ")));
    for (std::size_t i = 0; i < e.targets.size(); ++i) {
      const TargetChoice& t = e.targets[i];
      auto refuse = [&](const std::string& what) {
        throw InputError(fmt::format("{}: entry '{}': targets[{}]: {}", t.location.where(), e.name, i, what));
      };
      if (!scale::is_supported_target(t.name))
        refuse(fmt::format("the scale check supports the targets {}; got '{}'{}", fmt::join(scale::supported_targets(), ", "), t.name,
                           t.is_selector() ? " (a scale entry names its targets)" : ""));
      Attributes attrs;
      for (const auto& a : t.attributes) {
        if (a.values.size() != 1)
          refuse(fmt::format("attribute '{}': a scale entry checks one configuration per target; expected one value, got {}",
                             a.name, a.values.size()));
        attrs.set(a.name, a.values.front());
      }
      try {
        scale::require_restrictable(scale::supported_target(t.name), attrs, 0, 0, "");  // what the graph does not decide: dropout, source degrees
      } catch (const InputError& err) {
        refuse(err.what());
      }
    }
  }

  std::string rerun_line(const Task& t, const RunContext& run) const override {
    const GraphFamily& f = *t.graphs;
    // The command's flags say the width attributes, heads and norm; anything else (or a tolerance
    // override) leaves the entry's own `gnncheck run` line as the re-run line.
    ScaleCommandLine line{.system_flag = run.systems.find(t.label.system).command_line_flag, .target = t.label.target,
                          .graph = f.scale_graph, .rows = f.scale_rows, .seed = t.seed, .magnitude = f.scale_magnitude,
                          .expect_caught = t.expect == reports::Expectation::caught};
    if (f.scale_hub_edges) line.hub_edges = *f.scale_hub_edges;
    if (f.scale_hub_sources) line.hub_sources = *f.scale_hub_sources;
    const std::map<std::string, std::optional<std::string>*> flags = {
        {"features", &line.features},         {"in_features", &line.features}, {"hidden_features", &line.hidden_features},
        {"out_features", &line.out_features}, {"heads", &line.heads},          {"norm", &line.norm}};
    bool expressible = !t.entry->tolerance;
    for (const auto& a : t.attributes) {
      const AttrValue& v = a.values.front();
      if (const auto it = flags.find(a.name); it != flags.end())
        *it->second = to_plain_string(v);
      else
        expressible = false;
    }
    return expressible ? scale_command_line(line) : run.rerun_command({t.label.entry});
  }

  void run(const Task& t, System* system, const RunContext& run, ResultRecord& r) const override {
    const GraphFamily& f = *t.graphs;
    const auto& spec = t.target->spec;
    scale::ScaleOptions o;
    o.target = t.target;
    for (const auto& a : t.attributes) o.attributes.set(a.name, a.values.front());
    o.attributes = oracle::with_defaults(spec, o.attributes);
    o.rows = f.scale_rows;
    o.seed = t.seed;
    o.input_magnitude = f.scale_magnitude;
    if (f.scale_hub_edges) o.hub_edge_budget = *f.scale_hub_edges;
    if (f.scale_hub_sources) o.hub_source_budget = *f.scale_hub_sources;
    o.tolerance = run.check_options(t).tolerance;
    o.tolerance.concurrent_evaluations = scale::default_oracle_evaluations();  // as the command's default
    o.graph_description = f.scale_graph;

    o.rerun_command = run.rerun_task(t);

    // Built where the system runs, as the printed `gnncheck scale` line builds it.
    const scale::ScaleResult result = run_scale_where_system_runs(*system, scale::parse_graph_spec(f.scale_graph), o).result;
    ResultRecord rec = scale::to_result_record(result);
    r.outcome = rec.outcome;
    r.metric_name = rec.metric_name;
    r.metric = rec.metric;
    r.bound = rec.bound;
    r.tolerance_model = rec.tolerance_model;
    r.cases = rec.cases;
    r.conclusive = rec.conclusive;
    r.error_vs_bound = rec.error_vs_bound;
    r.message = rec.message;
    r.error_not_of_the_system = result.nothing_compared;
    // A failure's message names its worst element; a pass says where it came closest, with both values
    // (the record's fields hold only their difference).
    if (result.worst && r.message.empty())
      r.message = fmt::format("worst: {} [{}] {} — actual {:.17g}, exact {:.17g}, bound {:.6g}",
                               result.worst->tensor, fmt::join(result.worst->index, ", "), result.worst->where, result.worst->actual,
                               result.worst->expected, result.worst->bound);
    r.message += fmt::format("{}graph {}: {}; {} rows sampled, {} elements compared, {} held to exactly 0", r.message.empty() ? "" : "\n",
                             f.scale_graph,
                             result.graph_summary, result.rows.size(), result.compared_elements, result.zero_checked_elements);
  }
};

}  // namespace

std::unique_ptr<TaskKind> scale_task_kind() { return std::make_unique<ScaleTask>(); }

}  // namespace gnncheck::suites
