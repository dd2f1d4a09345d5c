// gnncheck/python/src/session.h — one `gnncheck.check(...)` call: a suite run on one Python system.
//
// The suite is narrowed to what concerns a system under test and one target (narrow_suite), the
// Python system is registered next to the built-in ones and named as the override system (as
// `gnncheck run SUITE --adapter …` does), and suites::run_suite runs it with jobs = 1 on the calling
// thread. The caller releases the GIL around run_session(); the system takes it per evaluation.
//
//   gnncheck::python::SessionRequest request{.suite_path = "suites/ci.yaml", .target = "spmm"};
//   gnncheck::python::SessionResult out = gnncheck::python::run_session(request, state, nullptr);
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "python_system.h"
#include "reports/run_report.h"
#include "suites/runner.h"
#include "suites/suite.h"

namespace gnncheck::python {

struct SessionRequest {
  std::filesystem::path suite_path;
  std::string target;
  std::optional<std::uint64_t> seed;  // replaces the suite's seed
  std::filesystem::path report_dir;   // failing cases under report_dir/cases; empty: not saved
  bool write_reports = true;          // report.json, junit.xml, summary.md, index.html in report_dir
  std::vector<std::string> only;      // "entry" or "entry/check": run just these (empty: all)
  // Run only this shard of the run (`gnncheck run --share PART/OF`): its report is a shard's, which
  // merge_session_reports combines with the other shards' into the whole run's. Unset: the whole run.
  std::optional<suites::CaseShare> share;
  std::string suite_argument;         // how the suite was named, for the report
  std::string version;                // gnncheck's version, for the report
  // The re-run line that works for the callable (the same test or script again, narrowed), for a
  // result's entry, check and saved counterexample (absolute; empty: none). It stands for the
  // engine's `gnncheck run/repro` lines, which cannot reach a Python callable, wherever a line is
  // written (RunOptions::rerun): report.json, summary.md, index.html and each counterexample's
  // case.json and system.json. Unset: the engine's.
  std::function<std::string(const std::string& entry, const std::string& check, const std::string& counterexample)> rerun;
};

struct SessionResult {
  reports::RunReport report;
};

// Keeps what a system under test is checked with, for `target`: entries expecting `caught` (bug
// replicas) and the `selfcheck` check (it verifies the oracle) go; each entry's targets become the
// named target where it lists it (with its attributes) or `target` alone where a selector (all,
// ops, layers) covers it; entries with neither go. `only` then keeps the named entries and checks.
// Throws InputError naming the suite when nothing is left or `only` names something unknown.
void narrow_suite(suites::Suite& suite, const std::string& target, const std::vector<std::string>& only);


// Called before each task (result == nullptr) and after it (with its result), on the running thread.
using SessionProgress = std::function<void(const suites::TaskLabel& task, const reports::ResultRecord* result)>;

SessionResult run_session(const SessionRequest& request, const std::shared_ptr<CallableState>& state,
                          const SessionProgress& progress);

// The whole run's report from the reports of its shards' sessions (report.json in each of
// `shard_dirs`), written to `output` as `gnncheck report merge` writes it (suites/run_merge.h): a
// shard not given leaves its tasks `not tested`. Throws InputError for shards of different runs.
reports::RunReport merge_session_reports(const std::vector<std::filesystem::path>& shard_dirs,
                                         const std::filesystem::path& output);

}  // namespace gnncheck::python
