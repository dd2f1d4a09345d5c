// gnncheck/suites/runner.h — runs a suite: plans (entry × system × target × check) tasks, runs them
// on a pool of threads, and collects one ResultRecord per task into a RunReport.
//
// Each task has its own seed, derived from the suite's seed and the task's names (not from its
// position), so a task gives the same result whether it runs alone (`--entry`), in parallel
// (`--jobs`), or in the whole suite. Checks come from checks/checks.h and run in one case loop
// (properties/case_loop.h) over a case source: the `random` graph family (RapidCheck, which shrinks
// a failing case; properties/driver.h) or any other family (suites/family_case_source.h). A failing
// case is saved under <report dir>/cases/. Two checks are the runner's
// own: `selfcheck` (oracle/selfcheck.h, the oracle against finite differences) and `accuracy` (an
// accuracy gate: training/driver.h with the system and with the oracle from one initialization).
//
//   auto registry = gnncheck::suites::SystemRegistry::with_builtins();
//   gnncheck::suites::RunOptions options;
//   options.report_dir = "out";
//   gnncheck::reports::RunReport run = gnncheck::suites::run_suite(suite, registry, options, nullptr);
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "reports/run_report.h"
#include "suites/run_share.h"
#include "suites/suite.h"
#include "suites/system_registry.h"

namespace gnncheck::suites {

// What one re-run line re-runs, as RunOptions::rerun is asked for it: one task (entry, system and
// check; a sanitizer's result has check `sanitize_TOOL`), the saved case of a failure
// (`counterexample`), or, for a failure that needs the evaluations before it, the run's whole
// sequence of that system (`whole_run`).
struct RerunScope {
  std::string entry, system, check;
  std::filesystem::path counterexample;  // empty: none saved
  bool whole_run = false;
  std::string sanitizer;                 // the tool, for a sanitizer's result
};

struct RunOptions {
  std::optional<std::uint64_t> seed;       // replaces the suite's seed
  CaseShare share;                         // the shard of the run's units to run (default: all)
  bool sharded = false;                    // --share was given (even 1/1): the report records the plan
  int jobs = 1;                            // tasks run in parallel (each thread has its own systems)
  // Replaces the suite's time_budget_s (0: no limit): `gnncheck run --time-budget SECONDS`.
  std::optional<double> time_budget_seconds;
  std::filesystem::path report_dir;        // failing cases go to report_dir/cases/ (empty: not saved)
  // Systems named on the command line (already in the registry). When present they replace the
  // systems of every entry that expects `pass` (except `selfcheck` entries, which verify the oracle),
  // and entries that expect `caught` (bug replicas) are not run.
  std::vector<std::string> override_systems;
  // What the override systems must do in the entries they replace: `pass`, or `caught` for a system
  // with a planted bug (then some check of the run must fail on it; an error — crash, timeout,
  // unreadable answer — catches nothing, and a system that did not run is never caught).
  reports::Expectation override_expectation = reports::Expectation::pass;
  std::vector<std::string> only_entries;   // run just these entries (empty: all)
  // Run just these targets (empty: all): every entry's target list is narrowed to them (a selector
  // such as `ops` keeps those of them it covers); an entry left with no target is not run.
  std::vector<std::string> only_targets;
  std::string suite_argument;              // how the suite was named on the command line, for re-run lines
  // The command's own re-run line of a part of the run, where the command that started it is not
  // `gnncheck run SUITE` (`gnncheck check` repeats itself, a Python session its test); "" or unset:
  // the run's (RunContext::rerun_task and its siblings, suites/task.h, the one place lines are made).
  std::function<std::string(const RerunScope&)> rerun;
  // The flags that name override_systems on a command line ("--plugin /abs/lib.so", "--system gpu"),
  // in order, for re-run lines; empty: `--system NAME` for each.
  std::vector<std::string> override_system_flags;
  // Polled between tasks and between cases: nonzero (the signal number) stops the run; the results
  // not finished are `not_tested` and the report records the signal. Unset: never stops.
  std::function<int()> stop_requested;
  // Readable once a stop was requested (the run then tells its progress sink what it is finishing),
  // and once it was asked to stop at once (a second interrupt); -1: none.
  int stop_wake_fd = -1;
  int stop_now_wake_fd = -1;
  // Called on a second interrupt, from a thread of the run, with the report of what finished (the
  // tasks in progress and those not started `not_tested`): writes it and ends the process. It must
  // not return; the tasks in progress are abandoned where they are.
  std::function<void(reports::RunReport)> stop_now;
};

// What one task is about, for progress lines before it has a result.
struct TaskLabel {
  std::string entry;
  std::string system;
  std::string target;
  std::string check;
};

// Receives progress from the worker threads (calls are serialized by the runner).
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  virtual void planned(std::size_t /*tasks*/) {}
  virtual void started(const TaskLabel& /*task*/) {}
  virtual void finished(const TaskLabel& /*task*/, const reports::ResultRecord& /*result*/) {}
  // A stop was requested (signal: "SIGINT"): the tasks in progress finish, the others are not run.
  // `stop_now_offered`: a second interrupt stops at once and still writes the report.
  virtual void stopping(const std::string& /*signal*/, const std::vector<TaskLabel>& /*in_progress*/,
                        std::size_t /*not_started*/, bool /*stop_now_offered*/) {}
};

// The names `checks:` accepts: every checks::CheckKind, plus selfcheck, accuracy and scale.
std::vector<std::string> known_check_names();

// Plans and runs the suite. Throws InputError for a suite that names an unknown system, target or
// check (with the entry's file:line) before anything runs; problems of the systems under test end
// up in the results, never thrown.
reports::RunReport run_suite(const Suite& suite, const SystemRegistry& systems, const RunOptions& options,
                             ProgressSink* progress);

}  // namespace gnncheck::suites
