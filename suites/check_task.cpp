// The check task kinds: one per checks::CheckKind. A task draws its cases from the entry's graph
// family — the random family through RapidCheck, which shrinks a failing case (properties/driver.h),
// any other through suites/family_case_source.h — and runs them through the one case loop
// (properties/case_loop.h). The first decided failure is recorded by suites/failure_record.h; the
// chunks' records are combined by suites/check_chunks.cpp, whose tally decides the outcome otherwise.
#include <algorithm>
#include <cmath>
#include <mutex>

#include <fmt/format.h>

#include "oracle/targets.h"
#include "properties/case_loop.h"
#include "properties/driver.h"
#include "suites/failure_record.h"
#include "suites/family_case_source.h"
#include "suites/planner.h"
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
  std::optional<std::string> not_applicable(const oracle::TargetDef& target, Precision precision) const override {
    const auto& spec = target.spec;
    const bool has_differentiable = std::any_of(spec.inputs.begin(), spec.inputs.end(), [](const auto& s) { return s.differentiable; });
    auto edge_tensor = [](const oracle::TensorSlot& s) {
      return s.kind == oracle::TensorKind::edges || s.kind == oracle::TensorKind::edges_csc;
    };
    switch (kind_) {
      case checks::CheckKind::gradient:
        if (precision != Precision::float64)
          return fmt::format("finite differences need a float64 system; this one declares {} for '{}' (the adjoint check covers it)",
                             to_string(precision), target.spec.name);
        break;
      case checks::CheckKind::op_order:
        for (const auto& slot : spec.inputs)
          if (edge_tensor(slot))
            return fmt::format("target '{}' has the edge input '{}', which has no values for the edges op_order adds", target.spec.name, slot.name);
        for (const auto& slot : spec.outputs)
          if (edge_tensor(slot))
            return fmt::format("target '{}' has the edge output '{}', which has no values for the edges op_order adds", target.spec.name, slot.name);
        break;
      case checks::CheckKind::adjoint:
      case checks::CheckKind::metamorphic_linearity:
        if (!has_differentiable) return fmt::format("target '{}' has no differentiable input", target.spec.name);
        break;
      default: break;
    }
    return std::nullopt;
  }

  // Runs the task's chunks of this run in order, each from its own seed, and stops at the first
  // that ends the drawing (a failure, an error, a stop): what the whole run would count of them.
  void run(const Task& t, System* system, const RunContext& run, ResultRecord& r) const override {
    std::vector<ResultRecord> chunks;
    const std::int64_t of = chunk_count(t.entry->cases);
    for (std::int64_t j : t.chunks) {
      Task chunk = t;
      chunk.seed = chunk_seed(t.seed, j);
      ResultRecord c = r;
      c.chunked = reports::ChunkedCases{.of = of};
      run_check_task(chunk, std::min(kCasesPerChunk, t.entry->cases - j * kCasesPerChunk), *system, run, c);
      if (j >= kPlottedChunks) c.error_vs_bound.clear();  // the report's size stays bounded (suites/task.h)
      reports::CaseChunk& ran = c.chunked->ran.emplace_back();
      ran.index = j;
      ran.points = static_cast<std::int64_t>(c.error_vs_bound.size());
      chunk_tally(c, ran);
      if (c.chunked->worst_chunk >= 0) c.chunked->worst_chunk = j;
      const bool ended = c.chunked->end != reports::ChunkEnd::none;
      if (ended) c.chunked->ended_at = j;
      chunks.push_back(std::move(c));
      if (ended) break;
    }
    r = combine_chunks(chunks);
  }

 private:
  static void plot_point(ResultRecord& r, const checks::Verdict& v, double& worst_ratio) {
    r.error_vs_bound.push_back({v.metric, v.bound});
    const double ratio = v.bound > 0 ? v.metric / v.bound : (v.metric > 0 ? INFINITY : 0);
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      fill_from_verdict(r, v);
    }
  }

  // The tally of one chunk, as the chunk's record keeps it (chunked->ran and its first reasons).
  static void chunk_tally(ResultRecord& c, reports::CaseChunk& ran) {
    const properties::CaseTally& tally = last_tally();
    ran.drawn = tally.drawn;
    ran.conclusive = tally.conclusive;
    ran.unsupported = tally.unsupported;
    ran.not_applicable = tally.not_applicable;
    ran.inconclusive = tally.inconclusive;
    ran.moved = tally.moved;
    auto reason = [&](const std::string& text) {
      return text.empty() ? reports::ChunkReason{} : reports::ChunkReason{ran.index, text};
    };
    c.chunked->first_unsupported = reason(tally.first_unsupported);
    c.chunked->first_not_applicable = reason(tally.first_not_applicable);
    c.chunked->first_inconclusive = reason(tally.first_inconclusive);
    for (const auto& cause : tally.inconclusive_causes) c.chunked->inconclusive_causes.push_back({ran.index, cause.cases, cause.example});
  }

  // The tally of the chunk this thread ran last (run_cases leaves it here for chunk_tally).
  static properties::CaseTally& last_tally() {
    thread_local properties::CaseTally tally;
    return tally;
  }

  // The case source of a task's graph family: the random family shrinks (RapidCheck), the others do not.
  void run_check_task(const Task& t, std::int64_t cases, System& sys, const RunContext& run, ResultRecord& r) const {
    const checks::CheckKind kind = kind_;
    if (!t.graphs->shrinks()) {
      FamilyCaseSource source(*t.graphs, t.label.target, t.attributes, cases, t.seed);
      return run_cases(t, sys, source, run, r);
    }
    properties::PropertyOptions po;
    for (const auto& a : t.attributes) po.case_options.attribute_values[a.name] = a.values;
    po.cases = static_cast<int>(cases);
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
    last_tally() = out.tally;
    if (worst_ratio >= 0) r.chunked->worst_chunk = 0;  // set to the chunk's index by combine_chunks' caller
    if (out.stopped) {
      // Still not tested, but what it drew before the stop is kept: a campaign cut at its deadline
      // says how far each check got.
      interrupted(run, r);
      r.chunked->end = reports::ChunkEnd::stopped;
      r.chunked->end_text = r.message;
      return;
    }
    if (out.failure) {
      r.chunked->end = reports::ChunkEnd::failure;
      return record_failure(t, *out.failure, sys, run, r);
    }
    if (!out.source_error.empty()) {
      r.outcome = Outcome::error;
      r.error_not_of_the_system = true;
      r.chunked->end = reports::ChunkEnd::source_error;
      r.chunked->end_text = out.source_error;
      return;
    }
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
