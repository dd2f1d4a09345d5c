// The check task kinds: one per checks::CheckKind. A task draws its cases from the entry's graph
// family — the random family through RapidCheck, which shrinks a failing case (properties/driver.h),
// any other through suites/family_case_source.h — and runs them through the one case loop
// (properties/case_loop.h). The clearest decided failure is saved under <report dir>/cases/ with the
// one command that re-runs it; otherwise the tally decides the outcome.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <fstream>
#include <mutex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "adapters/replicas/replicas.h"
#include "checks/diagnosis.h"
#include "oracle/targets.h"
#include "properties/case_loop.h"
#include "properties/counterexample.h"
#include "properties/driver.h"
#include "reports/counterexample_case.h"
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

  // combine_chunks (suites/task.h): the parts' chunks up to the first that ended the drawing.
  static ResultRecord combine(const std::vector<ResultRecord>& parts) {
    if (parts.empty() || !std::all_of(parts.begin(), parts.end(), [](const ResultRecord& p) { return p.chunked.has_value(); }))
      throw std::logic_error("combine_chunks: every part needs its chunks");
    const ResultRecord* lead = nullptr;  // the part holding the chunk that ended the drawing first
    for (const auto& p : parts)
      if (p.chunked->ended_at >= 0 && (!lead || p.chunked->ended_at < lead->chunked->ended_at)) lead = &p;
    const std::int64_t last = lead ? lead->chunked->ended_at : std::numeric_limits<std::int64_t>::max();
    const reports::ChunkedCases& first = *parts.front().chunked;
    ResultRecord r = lead ? *lead : parts.front();
    r.error_vs_bound.clear();
    r.seconds = 0;
    reports::ChunkedCases c{.of = first.of, .notes = first.notes};

    struct Piece {
      reports::CaseChunk chunk;
      const ResultRecord* from;
      std::size_t offset;  // its first point in from->error_vs_bound
    };
    std::vector<Piece> pieces;
    for (const auto& p : parts) {
      r.seconds += p.seconds;
      std::size_t offset = 0;
      for (const auto& k : p.chunked->ran) {
        pieces.push_back({k, &p, offset});
        offset += static_cast<std::size_t>(k.points);
      }
    }
    std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.chunk.index < b.chunk.index; });
    properties::CaseTally tally;
    for (const auto& piece : pieces) {
      if (piece.chunk.index > last) break;
      if (!c.ran.empty() && c.ran.back().index == piece.chunk.index)
        throw InputError(fmt::format("chunk {} of {} {} {} was run twice", piece.chunk.index, r.system, r.target, r.check));
      c.ran.push_back(piece.chunk);
      tally.drawn += piece.chunk.drawn;
      tally.conclusive += piece.chunk.conclusive;
      tally.unsupported += piece.chunk.unsupported;
      tally.not_applicable += piece.chunk.not_applicable;
      tally.inconclusive += piece.chunk.inconclusive;
      const auto& points = piece.from->error_vs_bound;
      r.error_vs_bound.insert(r.error_vs_bound.end(), points.begin() + static_cast<std::ptrdiff_t>(piece.offset),
                              points.begin() + static_cast<std::ptrdiff_t>(piece.offset + piece.chunk.points));
    }
    // The first reason of each kind among the chunks counted.
    auto first_reason = [&](reports::ChunkReason reports::ChunkedCases::*field) {
      reports::ChunkReason best;
      for (const auto& p : parts) {
        const reports::ChunkReason& reason = (*p.chunked).*field;
        if (reason.chunk >= 0 && reason.chunk <= last && (best.chunk < 0 || reason.chunk < best.chunk)) best = reason;
      }
      return best;
    };
    c.first_unsupported = first_reason(&reports::ChunkedCases::first_unsupported);
    c.first_not_applicable = first_reason(&reports::ChunkedCases::first_not_applicable);
    c.first_inconclusive = first_reason(&reports::ChunkedCases::first_inconclusive);
    tally.first_unsupported = c.first_unsupported.text;
    tally.first_not_applicable = c.first_not_applicable.text;
    tally.first_inconclusive = c.first_inconclusive.text;

    if (lead) {
      // An ended task shows the chunk that ended it: its failure (and counterexample), error or stop.
      c.ended_at = last;
      c.end = lead->chunked->end;
      c.end_text = lead->chunked->end_text;
      c.worst_chunk = lead->chunked->worst_chunk;
      if (c.end == reports::ChunkEnd::failure) {
        r.message = without_notes(lead->message, c.notes);
      } else if (c.end == reports::ChunkEnd::source_error) {
        r.outcome = Outcome::error;
        r.error_not_of_the_system = true;
        r.message = fmt::format("{}; {}", c.end_text, properties::describe_tally(tally));
      } else {
        r.outcome = Outcome::not_tested;
        r.message = fmt::format("{} ({} before the stop)", c.end_text, properties::describe_tally(tally));
      }
    } else {
      // The worst case over every chunk: the largest error/bound, the earliest chunk on a tie.
      const ResultRecord* worst = nullptr;
      double worst_ratio = -1;
      for (const auto& p : parts) {
        if (p.chunked->worst_chunk < 0 || !p.metric || !p.bound) continue;
        const double ratio = *p.bound > 0 ? *p.metric / *p.bound : (*p.metric > 0 ? INFINITY : 0);
        if (!worst || ratio > worst_ratio || (ratio == worst_ratio && p.chunked->worst_chunk < worst->chunked->worst_chunk)) {
          worst = &p;
          worst_ratio = ratio;
        }
      }
      r.metric_name.clear();
      r.metric.reset();
      r.bound.reset();
      r.tolerance_model.clear();
      if (worst) {
        fill_from_record(r, *worst);
        c.worst_chunk = worst->chunked->worst_chunk;
      }
      r.counterexample.clear();
      r.counterexample_case.reset();
      decide(tally, r.target, r);
    }
    r.cases = tally.drawn;
    r.conclusive = tally.conclusive;
    if (!c.notes.empty()) r.message = r.message.empty() ? c.notes : r.message + "\n" + c.notes;
    r.expectation_held = reports::expectation_held(r.expectation, r.outcome);
    r.chunked = std::move(c);
    return r;
  }

 private:
  // The one record of a failing case: where it is saved (through the one counterexample writer),
  // and the one command that re-runs it. A case that passes on a fresh system failed only because of
  // what the system had evaluated before (a stateful bug): the saved case alone would not reproduce
  // it, so the re-run line is the whole entry's sequence.
  // The diagnosis (checks/diagnosis.h) is made here, once per failure, on the shrunk case: the
  // system's answer to it against the target's known-wrong variants and its replicas (the case as
  // drawn decides among several that fit).
  void record_failure(const Task& t, const properties::CaseFailure& failure, System& sys, const RunContext& run,
                      ResultRecord& r) const {
    checks::Verdict v = failure.verdict;
    const Case& failing = failure.c;
    const bool system_answered = v.system_status == Status::ok && v.conclusion == checks::Conclusion::fail;
    r.outcome = system_answered ? Outcome::fail : Outcome::error;
    std::string note;
    bool reproduces_fresh = true;
    const SystemEntry& entry = run.systems.find(t.label.system);
    std::unique_ptr<System> fresh;
    if (entry.make && system_answered && !run.stopping()) {
      // The saved case alone on a new instance (a new process for an adapter or plugin).
      fresh = entry.make();
      const checks::Verdict again = properties::check_case(v.check, *fresh, failing, run.check_options(t));
      reproduces_fresh = !again.passed();
      if (!reproduces_fresh)
        note = "The saved case passes on a fresh instance of the system: the failure needs the evaluations that came "
               "before it (state kept between calls). The re-run line repeats the run's whole sequence in one order.";
    }
    if (system_answered && !run.stopping()) {
      if (const auto d = diagnose(v.check, fresh ? *fresh : sys, failing, failure.as_drawn, run.check_options(t))) {
        r.diagnosis = *d;
        v.detail = v.detail.empty() ? d->text : v.detail + " " + d->text;
      }
    }
    fill_from_verdict(r, v);
    std::string rerun = reproduces_fresh ? rerun_line(t, run) : run.rerun_command({}) + " --jobs 1";
    if (!run.cases_root().empty()) {
      const std::filesystem::path dir =
          run.cases_root() / properties::counterexample_name(t.label.system, t.label.target, v.check, t.seed);
      if (reproduces_fresh) {
        rerun = fmt::format("gnncheck repro {}", shell_quote(dir.string()));
        if (entry.kind == "adapter" || entry.kind == "plugin")
          for (const std::string& flag : limit_flags(entry.limits)) rerun += " " + flag;
      }
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

  static std::optional<reports::DiagnosisRecord> diagnose(checks::CheckKind kind, System& system, const Case& c,
                                                          const std::optional<Case>& as_drawn,
                                                          const checks::CheckOptions& options) {
    std::optional<checks::Diagnosis> d;
    try {
      d = checks::diagnose_failure(kind, system, c, replica_variants(c.target), options, as_drawn);
    } catch (const std::exception&) {  // the diagnosis adds to a failure; it never turns it into an error
      return std::nullopt;
    }
    if (!d) return std::nullopt;
    return reports::DiagnosisRecord{.matched = d->matched, .variant = d->variant, .bug_class = d->bug_class,
                                    .description = d->description, .also_matching = d->also_matching,
                                    .matching_classes = d->matching_classes,
                                    .shared = d->shared, .variants_tried = d->variants_tried, .text = d->text};
  }

  // DIR/system.json: which system failed and how to start it again, for `gnncheck repro DIR`.
  static void write_system_record(const std::filesystem::path& dir, const SystemEntry& entry, const std::string& rerun) {
    nlohmann::ordered_json j;
    j["name"] = entry.name;
    j["kind"] = entry.kind;
    if (!entry.adapter_command.empty()) j["adapter"] = entry.adapter_command;
    if (!entry.plugin_library.empty()) j["plugin"] = entry.plugin_library;
    if (entry.limits.case_timeout_s) j["case_timeout_s"] = *entry.limits.case_timeout_s;
    if (entry.limits.startup_timeout_s) j["startup_timeout_s"] = *entry.limits.startup_timeout_s;
    j["rerun"] = rerun;
    std::ofstream out(dir / "system.json");
    out << j.dump(2) << "\n";
    if (!out) throw InputError(fmt::format("{}: cannot write", (dir / "system.json").string()));
  }

  static void fill_from_record(ResultRecord& r, const ResultRecord& from) {
    r.metric_name = from.metric_name;
    r.metric = from.metric;
    r.bound = from.bound;
    r.tolerance_model = from.tolerance_model;
  }

  // A message with the runner's notes (the last lines) taken off.
  static std::string without_notes(const std::string& message, const std::string& notes) {
    if (notes.empty()) return message;
    if (message == notes) return {};
    const std::string tail = "\n" + notes;
    if (message.size() >= tail.size() && message.compare(message.size() - tail.size(), tail.size(), tail) == 0)
      return message.substr(0, message.size() - tail.size());
    return message;
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

  // The tally of one chunk, as the chunk's record keeps it (chunked->ran and its first reasons).
  static void chunk_tally(ResultRecord& c, reports::CaseChunk& ran) {
    const properties::CaseTally& tally = last_tally();
    ran.drawn = tally.drawn;
    ran.conclusive = tally.conclusive;
    ran.unsupported = tally.unsupported;
    ran.not_applicable = tally.not_applicable;
    ran.inconclusive = tally.inconclusive;
    auto reason = [&](const std::string& text) {
      return text.empty() ? reports::ChunkReason{} : reports::ChunkReason{ran.index, text};
    };
    c.chunked->first_unsupported = reason(tally.first_unsupported);
    c.chunked->first_not_applicable = reason(tally.first_not_applicable);
    c.chunked->first_inconclusive = reason(tally.first_inconclusive);
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

reports::ResultRecord combine_chunks(const std::vector<reports::ResultRecord>& parts) { return CheckTask::combine(parts); }

std::int64_t chunk_count(std::int64_t cases) { return std::max<std::int64_t>(1, (cases + kCasesPerChunk - 1) / kCasesPerChunk); }

std::vector<std::unique_ptr<TaskKind>> check_task_kinds() {
  std::vector<std::unique_ptr<TaskKind>> out;
  for (auto kind : checks::all_check_kinds()) out.push_back(std::make_unique<CheckTask>(kind));
  return out;
}

}  // namespace gnncheck::suites
