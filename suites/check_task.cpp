// The check task kinds: one per checks::CheckKind. A task draws its cases from the entry's graph
// family — the random family through RapidCheck, which shrinks a failing case (properties/driver.h),
// any other through suites/family_case_source.h — and runs them through the one case loop
// (properties/case_loop.h). The first decided failure is saved under <report dir>/cases/ with the
// one command that re-runs it; otherwise the tally decides the outcome.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "oracle/targets.h"
#include "properties/case_loop.h"
#include "properties/counterexample.h"
#include "properties/driver.h"
#include "reports/counterexample_case.h"
#include "suites/family_case_source.h"
#include "suites/task.h"

namespace gnncheck::suites {
namespace {

using reports::Outcome;
using reports::ResultRecord;

class CheckTask final : public TaskKind {
 public:
  explicit CheckTask(checks::CheckKind kind) : kind_(kind) {}

  std::string name() const override { return std::string(checks::to_string(kind_)); }
  bool draws_within_declarations() const override { return true; }

  // Properties of the check's design, decided before anything runs.
  std::optional<std::string> not_applicable(const std::string& target, Precision precision) const override {
  const auto& spec = oracle::find_target(target).spec;
  const bool has_differentiable = std::any_of(spec.inputs.begin(), spec.inputs.end(), [](const auto& s) { return s.differentiable; });
  auto edge_tensor = [](const oracle::TensorSlot& s) {
    return s.kind == oracle::TensorKind::edges || s.kind == oracle::TensorKind::edges_csc;
  };
  switch (kind_) {
    case checks::CheckKind::gradient:
      if (precision != Precision::float64)
        return fmt::format("finite differences need a float64 system; this one declares {} for '{}' (the adjoint check covers it)",
                           to_string(precision), target);
      break;
    case checks::CheckKind::op_order:
      for (const auto& slot : spec.inputs)
        if (edge_tensor(slot))
          return fmt::format("target '{}' has the edge input '{}', which has no values for the edges op_order adds", target, slot.name);
      for (const auto& slot : spec.outputs)
        if (edge_tensor(slot))
          return fmt::format("target '{}' has the edge output '{}', which has no values for the edges op_order adds", target, slot.name);
      break;
    case checks::CheckKind::adjoint:
    case checks::CheckKind::metamorphic_linearity:
      if (!has_differentiable) return fmt::format("target '{}' has no differentiable input", target);
      break;
    default: break;
  }
  return std::nullopt;
}

  void run(const Task& t, System* system, const RunContext& run, ResultRecord& r) const override {
    run_check_task(t, *system, run, r);
  }

 private:
  // The one record of a failing case: where it is saved (through the one counterexample writer),
  // and the one command that re-runs it. A case that passes on a fresh system failed only because of
  // what the system had evaluated before (a stateful bug): the saved case alone would not reproduce
  // it, so the re-run line is the whole entry's sequence.
  void record_failure(const Task& t, const properties::CaseFailure& failure, const RunContext& run, ResultRecord& r) const {
    checks::Verdict v = failure.verdict;
    const Case& failing = failure.c;
    const bool system_answered = v.system_status == Status::ok && v.conclusion == checks::Conclusion::fail;
    r.outcome = system_answered ? Outcome::fail : Outcome::error;
    fill_from_verdict(r, v);
    std::string note;
    bool reproduces_fresh = true;
    const SystemEntry& entry = run.systems.find(t.label.system);
    if (entry.make && system_answered && !run.stopping()) {
      // The saved case alone on a new instance (a new process for an adapter or plugin).
      std::unique_ptr<System> fresh = entry.make();
      const checks::Verdict again = properties::check_case(v.check, *fresh, failing, run.check_options(t));
      reproduces_fresh = !again.passed();
      if (!reproduces_fresh)
        note = "The saved case passes on a fresh instance of the system: the failure needs the evaluations that came "
               "before it (state kept between calls). The re-run line repeats the run's whole sequence in one order.";
    }
    std::string rerun = reproduces_fresh ? rerun_line(t, run) : run.rerun_command({}) + " --jobs 1";
    if (!run.cases_root().empty()) {
      const std::filesystem::path dir =
          run.cases_root() / properties::counterexample_name(t.label.system, t.label.target, v.check, t.seed);
      if (reproduces_fresh) rerun = fmt::format("gnncheck repro {}", shell_quote(dir.string()));
      properties::CounterexampleProvenance provenance = failure.provenance;
      provenance.rerun = rerun;
      properties::write_counterexample(dir, failing, v, provenance);
      write_system_record(dir, entry, rerun);
      r.counterexample = std::filesystem::relative(dir, run.options.report_dir).string();
    }
    r.repro = rerun;
    if (failing.graph) {  // the graph and the worst element, for the reports' drawing of the case
      std::optional<reports::CounterexampleElement> worst;
      if (v.worst)
        worst = reports::CounterexampleElement{.tensor = v.tensor, .index = v.worst->index, .got = v.worst->actual,
                                               .expected = v.worst->expected, .bound = v.worst->bound};
      r.counterexample_case = reports::describe_counterexample(*failing.graph, failing.target, worst);
    }
    // The record carries the counterexample and the one re-run line; the message does not repeat them.
    v.rerun_command.clear();
    v.counterexample_path.clear();
    r.message = failure.how_found.empty() ? checks::failure_message(v) : failure.how_found + "\n" + checks::failure_message(v);
    if (!note.empty()) r.message += "\n" + note;
  }

  // DIR/system.json: which system failed and how to start it again, for `gnncheck repro DIR`.
  static void write_system_record(const std::filesystem::path& dir, const SystemEntry& entry, const std::string& rerun) {
    nlohmann::ordered_json j;
    j["name"] = entry.name;
    j["kind"] = entry.kind;
    if (!entry.adapter_command.empty()) j["adapter"] = entry.adapter_command;
    if (!entry.plugin_library.empty()) j["plugin"] = entry.plugin_library;
    j["rerun"] = rerun;
    std::ofstream out(dir / "system.json");
    out << j.dump(2) << "\n";
    if (!out) throw InputError(fmt::format("{}: cannot write", (dir / "system.json").string()));
  }

  static void fill_from_verdict(ResultRecord& r, const checks::Verdict& v) {
    r.metric_name = v.metric_name;
    r.metric = v.metric;
    r.bound = v.bound;
    r.tolerance_model = v.tolerance_model;
  }

  // The outcome of a task none of whose cases failed: only a task with a conclusive case passes.
  static void decide(const properties::CaseTally& tally, const std::string& target, ResultRecord& r) {
    r.cases = tally.drawn;
    r.conclusive = tally.conclusive;
    const std::string counts = properties::describe_tally(tally);
    switch (properties::conclusion_without_failure(tally)) {
      case checks::Conclusion::pass:
        r.outcome = Outcome::pass;
        r.message = counts;
        break;
      case checks::Conclusion::unsupported:
        r.outcome = Outcome::not_tested;
        r.message = fmt::format("{} — the system lists target '{}' as supported but answered none of its cases ({})", counts,
                                target, tally.first_unsupported.empty() ? "no case was drawn" : tally.first_unsupported);
        break;
      case checks::Conclusion::inconclusive:
        r.outcome = Outcome::inconclusive;
        r.message = fmt::format("{} — nothing was verified (first: {})", counts, tally.first_inconclusive);
        break;
      default:
        r.outcome = Outcome::not_applicable;
        r.message = fmt::format("{} — {}", counts, tally.first_not_applicable);
    }
  }

  static void plot_point(ResultRecord& r, const checks::Verdict& v, double& worst_ratio) {
    r.error_vs_bound.push_back({v.metric, v.bound});
    const double ratio = v.bound > 0 ? v.metric / v.bound : (v.metric > 0 ? INFINITY : 0);
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      fill_from_verdict(r, v);
    }
  }

  // The cases a check task draws: the entry's, or this run's share of them.
  static std::int64_t cases_of(const Task& t, const RunContext& run) {
    return (t.entry->cases + run.options.share.of - 1) / run.options.share.of;
  }

  // The case source of a task's graph family: the random family shrinks (RapidCheck), the others do not.
  void run_check_task(const Task& t, System& sys, const RunContext& run, ResultRecord& r) const {
    const checks::CheckKind kind = kind_;
    if (!t.graphs->shrinks()) {
      FamilyCaseSource source(*t.graphs, t.label.target, t.attributes, cases_of(t, run), t.seed);
      return run_cases(t, sys, source, run, r);
    }
    properties::PropertyOptions po;
    for (const auto& a : t.attributes) po.case_options.attribute_values[a.name] = a.values;
    po.cases = static_cast<int>(cases_of(t, run));
    po.seed = t.seed;
    po.case_options.graph.max_nodes = t.graphs->max_nodes;
    po.case_options.graph.max_average_degree = t.graphs->max_avg_degree;
    po.case_options.graph.square_only = t.graphs->square_only;
    properties::RandomCaseSource source(properties::property_id(kind, sys.name(), t.label.target), t.label.target, po);
    // RapidCheck keeps its generation state in process-wide globals, so two properties generating
    // at once corrupt each other (a double free under AddressSanitizer with --jobs 2, and reports
    // that differ between --jobs values). Properties run one at a time; other checks stay parallel.
    static std::mutex rapidcheck_mutex;
    const std::lock_guard rapidcheck_lock(rapidcheck_mutex);
    run_cases(t, sys, source, run, r);
  }

  // The one case loop of a check task (properties/case_loop.h): every drawn case is checked and
  // counted, a conclusive one plotted; the first decided failure, shrunk when the source can, is
  // recorded with its counterexample; otherwise the tally decides the outcome.
  void run_cases(const Task& t, System& sys, properties::CaseSource& source, const RunContext& run, ResultRecord& r) const {
    const checks::CheckKind kind = kind_;
    const checks::CheckOptions copts = run.check_options(t);
    double worst_ratio = -1;
    const properties::CaseLoopResult out = properties::run_case_loop(
        source, {.check = [&](const Case& c) { return properties::check_case(kind, sys, c, copts); },
                 .stopping = [&run] { return run.stopping(); },
                 .on_counted =
                     [&](const checks::Verdict& v) {
                       if (properties::case_kind(v) == properties::CaseKind::decided) plot_point(r, v, worst_ratio);
                     }});
    r.cases = out.tally.drawn;
    r.conclusive = out.tally.conclusive;
    if (out.stopped) {
      // Still not tested, but what it drew before the stop is kept: a campaign cut at its deadline
      // says how far each check got.
      interrupted(run, r);
      r.message += fmt::format(" ({} before the stop)", properties::describe_tally(out.tally));
      return;
    }
    if (out.failure) return record_failure(t, *out.failure, run, r);
    if (!out.source_error.empty()) {
      r.outcome = Outcome::error;
      r.error_not_of_the_system = true;
      r.message = fmt::format("{}; {}", out.source_error, properties::describe_tally(out.tally));
      return;
    }
    decide(out.tally, t.label.target, r);
  }

  static void interrupted(const RunContext& run, ResultRecord& r) {
    r.outcome = Outcome::not_tested;
    r.message = fmt::format("interrupted by {} before this check finished", run.stop_signal_name());
  }

  checks::CheckKind kind_;
};

}  // namespace

std::vector<std::unique_ptr<TaskKind>> check_task_kinds() {
  std::vector<std::unique_ptr<TaskKind>> out;
  for (auto kind : checks::all_check_kinds()) out.push_back(std::make_unique<CheckTask>(kind));
  return out;
}

}  // namespace gnncheck::suites
