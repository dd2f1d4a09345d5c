// gnncheck/suites/task.h — one unit of a suite run, and the table of task kinds that run units.
//
// The planner (suites/planner.h) turns a suite into Tasks; the runner (suites/runner.h) runs them on
// a pool of threads, each through the kind its entry's `checks:` names. A kind is found in one table
// by that name and knows how to validate an entry and run a task; the runner knows nothing else of it:
//
//   kind           file                 what one task is
//   <check>        check_task.cpp       a checks::CheckKind over the case loop of the entry's graph family
//                  (check_chunks.cpp combines its chunks; failure_record.cpp records its failing case)
//   selfcheck      selfcheck_task.cpp   the oracle against finite differences, every target at once
//   accuracy       accuracy_task.cpp    an accuracy gate: a model trained with the system and the oracle
//   scale          scale_task.cpp       a scale graph family's one check on sampled rows
//
//   const TaskKind& kind = task_kind("adjoint");
//   kind.run(task, system, run, record);
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checks/checks.h"
#include "core/system.h"
#include "oracle/targets.h"
#include "reports/run_report.h"
#include "suites/runner.h"
#include "suites/suite.h"
#include "suites/system_registry.h"

namespace gnncheck::suites {

class TaskKind;

// One unit of work: one kind of one system on one target (or on every target, for selfcheck).
struct Task {
  TaskLabel label;
  // The catalogue entry of label.target, resolved once when planned; null where the task stands for
  // every target (a kind that runs on no system, a system that is not available: target "all").
  const oracle::TargetDef* target = nullptr;
  const TaskKind* kind = nullptr;
  const Entry* entry = nullptr;
  const GraphFamily* graphs = nullptr;
  std::vector<AttributeChoice> attributes;
  std::uint64_t seed = 0;
  // The precision its result records: the system's declaration for the target (precision_text), or
  // float64 for a kind that verifies the oracle itself; empty where no system was asked (one not
  // available here, a target it does not support).
  std::string precision;
  reports::Expectation expect = reports::Expectation::pass;  // the entry's, or the override systems'
  bool overridden = false;  // a system named on the command line in place of the entry's own
  // What the cases were drawn within when the system declares fewer attribute values than the
  // target has ("within what 'pyg' implements: …"), shown with the result; empty otherwise.
  std::string coverage_note;
  // Set when the task is decided without running anything (unavailable system, unsupported target).
  std::optional<reports::ResultRecord> decided;
  // The chunks of its cases this run runs, in order (all of them unless the run is a shard); a kind
  // that draws no cases runs whole and ignores them.
  std::vector<std::int64_t> chunks;
};

// A check task's cases are cut into chunks of this many, whatever the split: chunk 0 is drawn from the
// task's seed, chunk j > 0 from chunk_seed(task seed, j) (suites/SCHEMA.md, "Splitting a run").
inline constexpr std::int64_t kCasesPerChunk = 64;

// A check result plots (error_vs_bound) the cases of its first this many chunks only — 1,024 cases —
// so a report's size does not grow with the case count (a 10^6-case campaign writes what a 10^3 one
// does); its worst case is the result's metric and bound whatever chunk it came from. A chunk's
// points depend on its index alone, so a split run merged still equals the whole run.
inline constexpr std::int64_t kPlottedChunks = 16;

// The chunks of a task that draws `cases` cases (at least 1).
std::int64_t chunk_count(std::int64_t cases);

// Combines records of one check task that each hold some of its chunks (ResultRecord::chunked) into
// the record of those chunks together, as the whole run would have made it: counts summed over the
// chunks up to and including the first that ended the drawing (a failure, an error, a stop), whose
// message, counterexample and measurements then lead; otherwise the worst case over every chunk and
// the outcome its tally decides. The runner (a task's chunks) and `gnncheck report merge` (the shards'
// records of a task) both combine with it, so a split run merged equals the whole run.
reports::ResultRecord combine_chunks(const std::vector<reports::ResultRecord>& parts);

// What a task may use of the run it belongs to.
class RunContext {
 public:
  RunContext(const Suite& suite, const SystemRegistry& systems, const RunOptions& options, std::uint64_t seed)
      : suite(suite), systems(systems), options(options), seed(seed) {}

  const Suite& suite;
  const SystemRegistry& systems;
  const RunOptions& options;
  const std::uint64_t seed;

  // Whether an interrupt asked the run to stop (polled between cases), and its name ("SIGINT").
  bool stopping() const;
  std::string stop_signal_name() const;
  // `gnncheck run` of `entries` (empty: those the run was asked for) with this run's seed, systems,
  // targets and expectation. Never `--share`: a shard's result of a task is part of the whole run's,
  // which the line repeats.
  std::string rerun_command(const std::vector<std::string>& entries) const;
  // The one re-run line of each kind of result; each is the command's own (RunOptions::rerun) where
  // it gives one. A task: its kind's line (TaskKind::rerun_line). A failure: `gnncheck repro DIR` of
  // its saved case, or where the saved case passes on a fresh system, the run's whole sequence on
  // one thread. A sanitizer's result: the entry under `--sanitize TOOL`.
  std::string rerun_task(const Task& t) const;
  std::string rerun_failure(const Task& t, const std::filesystem::path& saved, bool whole_run) const;
  std::string rerun_sanitizer(const Task& t, const std::string& tool) const;
  // Where failing cases are saved (<report dir>/cases); empty when the run saves none.
  std::filesystem::path cases_root() const;
  // The check options of a task: the entry's tolerance override applied.
  checks::CheckOptions check_options(const Task& t) const;
};

// The one record a task's result starts from: its labels, expectation, seed and precision. Each
// field the task's kind decides is written by that kind alone; run_task adds time and notes.
reports::ResultRecord result_record(const Task& t);
// The record of a task that was not run (an interrupt, a used-up time budget): not tested, with why,
// and the one command that runs it.
reports::ResultRecord not_run_record(const Task& t, const RunContext& run, const std::string& why);
// The record of a task decided before running (Task::decided), with the re-run line of one whose
// expectation it does not meet (a required system that is not available here).
reports::ResultRecord decided_record(const Task& t, const RunContext& run);

// Runs one planned task through its kind and returns its whole record: what the kind decides, plus
// precision, time and notes, each written once. In-process systems are made fresh for the task, so
// that one task's state never reaches the next (results do not depend on --jobs or task order); GPU
// contexts are kept per thread in `instances`; an adapter or plugin is the registry's one process.
reports::ResultRecord run_task(const Task& t, const RunContext& run, std::map<std::string, std::unique_ptr<System>>& instances);

// "SIGINT", "SIGTERM" or "signal N".
std::string signal_name(int signal);

class TaskKind {
 public:
  virtual ~TaskKind() = default;
  // The name an entry's `checks:` gives.
  virtual std::string name() const = 0;
  // Refuses, with the entry's file:line, an entry this kind cannot run (its targets, graph family).
  virtual void validate(const Entry& /*entry*/, const Suite& /*suite*/) const {}
  // The options an entry may give this kind (`options:`); empty: none.
  virtual std::vector<std::string> options() const { return {}; }
  // Whether its cases are cut into chunks that shards of a run split (a kind that draws none runs
  // whole, in the one shard its unit falls to).
  virtual bool draws_cases() const { return true; }
  // Whether it runs on the entry's systems; false: it verifies the oracle itself (target "all").
  virtual bool runs_on_systems() const { return true; }
  // Whether its ctest test belongs to the `slow` label whatever the entry says.
  virtual bool slow() const { return false; }
  // Why it can conclude nothing on any case of `target` for a system of `precision` — a property
  // of its design, decided before anything runs — or nullopt.
  virtual std::optional<std::string> not_applicable(const oracle::TargetDef& /*target*/, Precision /*precision*/) const {
    return std::nullopt;
  }
  // Whether a graph family is this kind's alone: an entry on it is validated by this kind, whatever
  // its checks say (the scale check's one big graph).
  virtual bool checks_alone(const GraphFamily& /*family*/) const { return false; }
  // Whether it draws its cases from the task's attribute choices, within what the system declares
  // (core/system.h); kinds that run one fixed configuration do not.
  virtual bool draws_within_declarations() const { return false; }
  // The one command that re-runs the task as it ran (a failure may name a narrower one: a saved case).
  virtual std::string rerun_line(const Task& t, const RunContext& run) const { return run.rerun_command({t.label.entry}); }
  // Runs one task on `system` (nullptr when runs_on_systems() is false) and fills the record's
  // outcome, measurements and message. An InputError is a problem of the suite or the machine,
  // which the runner reports on this result.
  virtual void run(const Task& t, System* system, const RunContext& run, reports::ResultRecord& r) const = 0;
};

// The kind an entry's `checks:` name names, or nullptr.
const TaskKind* find_task_kind(const std::string& name);
// The kind that checks `family` alone (TaskKind::checks_alone), or nullptr.
const TaskKind* kind_checking_alone(const GraphFamily& family);

// The kinds of each file, which the table assembles.
std::vector<std::unique_ptr<TaskKind>> check_task_kinds();
std::unique_ptr<TaskKind> selfcheck_task_kind();
std::unique_ptr<TaskKind> accuracy_task_kind();
std::unique_ptr<TaskKind> scale_task_kind();

}  // namespace gnncheck::suites
