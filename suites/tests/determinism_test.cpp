// Determinism of a whole run: the shipped `ci` suite with one seed gives the same report.json
// (timings aside) run after run, with 1 or 2 OpenMP threads per system, and with 1, 2 or 3 jobs
// (tasks in parallel). This is what makes a report reproducible by anyone who has its seed.
//
// The suite's time budget is turned off: a budget stops starting new cases when the clock runs
// out, which on a loaded machine would legitimately change the number of cases evaluated.
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <csignal>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"

#include "oracle/cpu_systems.h"
#include "reports/writers.h"
#include "suites/runner.h"
#include "suites/suite.h"
#include "suites/system_registry.h"

namespace gnncheck::suites {
namespace {

// Entries of ci.yaml that together cover random (shrinking) graphs, a fixtures family and every
// check kind of the suite except the state checks, and run in seconds.
const std::vector<std::string> kEntries = {"differential", "bipartite", "metamorphic", "op-order"};

// report.json with the fields that measure time removed (reports/SCHEMA.md: the same seed gives the
// same report except for `started_utc` and the `seconds` fields).
nlohmann::json without_timings(nlohmann::json j) {
  if (j.is_object()) {
    j.erase("seconds");
    j.erase("started_utc");
    for (auto& [key, value] : j.items()) value = without_timings(value);
  } else if (j.is_array()) {
    for (auto& value : j) value = without_timings(value);
  }
  return j;
}

struct RunSettings {
  int jobs = 1;
  int omp_threads = 1;
  std::optional<std::uint64_t> seed;
  CaseShare share;
};

nlohmann::json run_ci(const RunSettings& settings) {
  Suite suite = load_suite(std::string(GNNCHECK_TEST_SUITES_DIR) + "/ci.yaml");
  suite.time_budget_seconds = 0.0;
  RunOptions options;
  options.jobs = settings.jobs;
  options.only_entries = kEntries;
  options.seed = settings.seed;
  options.share = settings.share;
  options.suite_argument = "ci";
  const int previous_threads = omp_get_max_threads();
  omp_set_num_threads(settings.omp_threads);
  const reports::RunReport run = run_suite(suite, SystemRegistry::with_builtins(), options, nullptr);
  omp_set_num_threads(previous_threads);
  return without_timings(nlohmann::json::parse(reports::json_report(run)));
}

TEST(Determinism, SameSeedSameReportAcrossRunsThreadsAndJobs) {
  const nlohmann::json first = run_ci({});
  ASSERT_TRUE(first.contains("results"));
  ASSERT_GE(first["results"].size(), 10u) << "the entries above should plan many tasks";
  EXPECT_EQ(first["totals"]["results"], first["results"].size());

  EXPECT_EQ(run_ci({}), first) << "a second identical run";
  EXPECT_EQ(run_ci({.jobs = 1, .omp_threads = 2, .seed = {}}), first) << "2 OpenMP threads";
  EXPECT_EQ(run_ci({.jobs = 2, .omp_threads = 1, .seed = {}}), first) << "--jobs 2";
  EXPECT_EQ(run_ci({.jobs = 3, .omp_threads = 2, .seed = {}}), first) << "--jobs 3 with 2 OpenMP threads each";
}

TEST(Determinism, AnotherSeedDrawsOtherCases) {
  // Guards the test above against a report that does not depend on the seed at all.
  const nlohmann::json seed1 = run_ci({.jobs = 1, .omp_threads = 1, .seed = 1});
  const nlohmann::json seed2 = run_ci({.jobs = 1, .omp_threads = 1, .seed = 2});
  // Compared on the measured errors, not on the seeds and re-run lines that name the seed.
  auto errors = [](const nlohmann::json& report) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& r : report["results"]) all.push_back(r["error_vs_bound"]);
    return all;
  };
  ASSERT_EQ(seed1["results"].size(), seed2["results"].size());
  EXPECT_NE(errors(seed1), errors(seed2));
}

TEST(Determinism, AShardRepeatsExactlyAndItsRerunLinesRepeatTheWholeTask) {
  // `--share P/OF` runs a part of the run's units (suites/run_merge_test.cpp: merged, they are the
  // whole run); a shard repeats exactly, names itself in the report, and keeps each task's own seed.
  const nlohmann::json whole = run_ci({});
  const nlohmann::json part = run_ci({.share = {2, 3}});
  EXPECT_TRUE(whole["share"].is_null());
  EXPECT_EQ(part["share"]["part"], 2);
  EXPECT_EQ(part["share"]["of"], 3);
  EXPECT_EQ(part["share"]["plan"].size(), whole["results"].size()) << "a shard records the whole plan";
  ASSERT_GT(part["results"].size(), 0u);
  EXPECT_LT(part["results"].size(), whole["results"].size());
  for (const auto& r : part["results"]) {
    EXPECT_EQ(r["repro"].get<std::string>().find("--share"), std::string::npos) << r["repro"];
    const auto same = std::find_if(whole["results"].begin(), whole["results"].end(), [&](const auto& w) {
      return w["entry"] == r["entry"] && w["target"] == r["target"] && w["check"] == r["check"];
    });
    ASSERT_NE(same, whole["results"].end());
    EXPECT_EQ((*same)["seed"], r["seed"]);
  }
  EXPECT_EQ(run_ci({.share = {2, 3}}), part) << "a shard repeats exactly";
}

TEST(Determinism, AStoppedCheckIsNotTestedAndSaysHowFarItGot) {
  // The stop comes between cases of the first check: the result stays `not tested` (never pass) and
  // keeps the cases it drew before the stop.
  Suite suite = load_suite(std::string(GNNCHECK_TEST_SUITES_DIR) + "/ci.yaml");
  suite.time_budget_seconds = 0.0;
  RunOptions options;
  options.only_entries = {"differential"};
  options.only_targets = {"spmm"};
  int polls = 0;
  options.stop_requested = [&polls] { return ++polls > 5 ? SIGTERM : 0; };
  const reports::RunReport run = run_suite(suite, SystemRegistry::with_builtins(), options, nullptr);
  EXPECT_EQ(run.interrupted_by, "SIGTERM");
  ASSERT_FALSE(run.results.empty());
  const reports::ResultRecord& first = run.results.front();
  EXPECT_EQ(first.outcome, reports::Outcome::not_tested);
  EXPECT_GT(first.cases, 0);
  EXPECT_NE(first.message.find(fmt::format("{} of {} cases conclusive before the stop", first.conclusive, first.cases)),
            std::string::npos)
      << first.message;
  EXPECT_FALSE(run.all_expectations_held());
}

// cpu_float32 under another name whose evaluations wait while `hold` is set: a task that goes on
// after a stop was requested (an in-process kernel does not poll for one).
class HeldSystem final : public System {
 public:
  // Evaluations after the first `free_evaluations` wait while `hold` is set.
  HeldSystem(std::atomic<bool>& hold, std::atomic<int>& entered, int free_evaluations = 0)
      : base_(make_cpu_float32_system()), hold_(hold), entered_(entered), free_(free_evaluations) {}
  std::string name() const override { return "held"; }
  bool supports(const std::string& target) const override { return base_->supports(target); }
  Precision precision(const std::string& target) const override { return base_->precision(target); }
  Result evaluate(const Case& c) override {
    if (++entered_ > free_)
      while (hold_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return base_->evaluate(c);
  }

 private:
  std::unique_ptr<System> base_;
  std::atomic<bool>& hold_;
  std::atomic<int>& entered_;
  int free_;
};

// Records what the run says on a stop.
struct StopListener final : ProgressSink {
  void stopping(const std::string& signal, const std::vector<TaskLabel>& in_progress, std::size_t not_started,
                bool offered) override {
    std::lock_guard lock(mutex);
    said = fmt::format("{} {} {} {}", signal, in_progress.size(), not_started, offered);
    for (const TaskLabel& t : in_progress) said += " " + t.system + "/" + t.target + "/" + t.check;
  }
  std::string what_was_said() {
    std::lock_guard lock(mutex);
    return said;
  }
  std::mutex mutex;
  std::string said;
};

// The first interrupt: the run says at once what it is finishing. The second: the report of what
// finished is handed over while a task is still in progress, which is `not tested`, never a pass.
TEST(Determinism, AnInterruptSaysWhatItFinishesAndASecondOneStillGetsAReport) {
  Suite suite = load_suite(std::string(GNNCHECK_TEST_SUITES_DIR) + "/ci.yaml");
  suite.time_budget_seconds = 0.0;
  std::atomic<bool> hold{false};
  std::atomic<int> entered{0}, signal{0};
  SystemRegistry registry = SystemRegistry::with_builtins();
  registry.add({.name = "held", .kind = "builtin", .summary = "cpu_float32, held on request", .bug = {},
                .availability = {}, .make = [&] { return std::make_unique<HeldSystem>(hold, entered); }});
  int stop_pipe[2], now_pipe[2];
  ASSERT_EQ(pipe(stop_pipe), 0);
  ASSERT_EQ(pipe(now_pipe), 0);
  RunOptions options;
  options.only_entries = {"differential"};
  options.override_systems = {"held"};
  options.jobs = 1;
  options.stop_requested = [&] { return signal.load(); };
  options.stop_wake_fd = stop_pipe[0];
  options.stop_now_wake_fd = now_pipe[0];
  std::promise<reports::RunReport> handed;
  options.stop_now = [&](reports::RunReport now) {
    handed.set_value(std::move(now));
    hold = false;  // a real caller exits here; the test lets the held task end instead
  };
  StopListener listener;
  // Held from the first evaluation on: the first task is in progress when the stop comes.
  hold = true;
  std::future<reports::RunReport> done = std::async(std::launch::async, [&] {
    return run_suite(suite, registry, options, &listener);
  });
  for (int i = 0; i < 4000 && entered.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_GT(entered.load(), 0) << "the run never evaluated";
  signal = SIGINT;
  ASSERT_EQ(write(stop_pipe[1], "x", 1), 1);
  for (int i = 0; i < 400 && listener.what_was_said().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const std::string said = listener.what_was_said();
  EXPECT_EQ(said.rfind("SIGINT 1 ", 0), 0u) << said;
  EXPECT_NE(said.find(" true held/"), std::string::npos) << said;
  ASSERT_EQ(write(now_pipe[1], "x", 1), 1);
  std::future<reports::RunReport> handed_future = handed.get_future();
  ASSERT_EQ(handed_future.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  const reports::RunReport now = handed_future.get();
  EXPECT_EQ(now.interrupted_by, "SIGINT");
  ASSERT_FALSE(now.results.empty());
  int stopped_while_running = 0;
  for (const reports::ResultRecord& r : now.results) {
    EXPECT_NE(r.outcome, reports::Outcome::pass) << r.target << " " << r.check;
    if (r.message.find("stopped at once by a second interrupt") != std::string::npos) ++stopped_while_running;
  }
  EXPECT_EQ(stopped_while_running, 1);
  EXPECT_FALSE(now.all_expectations_held());
  done.get();
  for (int fd : {stop_pipe[0], stop_pipe[1], now_pipe[0], now_pipe[1]}) close(fd);
}

// Two signals at once (`timeout` sends its signal to the command and to its process group): the
// task in progress still returns at its next case with what it counted, inside the grace a second
// interrupt gives, so the report keeps its cases.
TEST(Determinism, TwoInterruptsAtOnceKeepWhatTheTaskInProgressCounted) {
  Suite suite = load_suite(std::string(GNNCHECK_TEST_SUITES_DIR) + "/ci.yaml");
  suite.time_budget_seconds = 0.0;
  std::atomic<bool> hold{true};
  std::atomic<int> entered{0}, signal{0};
  SystemRegistry registry = SystemRegistry::with_builtins();
  registry.add({.name = "held", .kind = "builtin", .summary = "cpu_float32, held on request", .bug = {},
                .availability = {}, .make = [&] { return std::make_unique<HeldSystem>(hold, entered, 6); }});
  int stop_pipe[2], now_pipe[2];
  ASSERT_EQ(pipe(stop_pipe), 0);
  ASSERT_EQ(pipe(now_pipe), 0);
  RunOptions options;
  options.only_entries = {"differential"};
  options.override_systems = {"held"};
  options.jobs = 1;
  options.stop_requested = [&] { return signal.load(); };
  options.stop_wake_fd = stop_pipe[0];
  options.stop_now_wake_fd = now_pipe[0];
  std::promise<reports::RunReport> handed;
  options.stop_now = [&](reports::RunReport now) { handed.set_value(std::move(now)); };
  std::future<reports::RunReport> done =
      std::async(std::launch::async, [&] { return run_suite(suite, registry, options, nullptr); });
  // Held at its 7th evaluation (each case evaluates the system once or more): cases before it counted.
  for (int i = 0; i < 4000 && entered.load() <= 6; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_GT(entered.load(), 6) << "the run never reached its 7th evaluation";
  signal = SIGTERM;
  ASSERT_EQ(write(stop_pipe[1], "x", 1), 1);
  ASSERT_EQ(write(now_pipe[1], "x", 1), 1);
  hold = false;  // the evaluation in flight returns; the check stops before its next case
  std::future<reports::RunReport> handed_future = handed.get_future();
  ASSERT_EQ(handed_future.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  const reports::RunReport now = handed_future.get();
  ASSERT_FALSE(now.results.empty());
  const reports::ResultRecord& first = now.results.front();
  EXPECT_EQ(first.outcome, reports::Outcome::not_tested);
  EXPECT_GT(first.cases, 0) << first.message;
  EXPECT_NE(first.message.find("interrupted by SIGTERM before this check finished"), std::string::npos)
      << first.message;
  done.get();
  for (int fd : {stop_pipe[0], stop_pipe[1], now_pipe[0], now_pipe[1]}) close(fd);
}

TEST(Determinism, ATaskThatDrawsNoCasesRunsWholeInExactlyOneShard) {
  Suite suite = load_suite(std::string(GNNCHECK_TEST_SUITES_DIR) + "/default.yaml");
  int ran = 0;
  for (int part = 1; part <= 2; ++part) {
    RunOptions options;
    options.only_entries = {"oracle-selfcheck"};
    options.share = {part, 2};
    options.sharded = true;
    ran += static_cast<int>(run_suite(suite, SystemRegistry::with_builtins(), options, nullptr).results.size());
  }
  EXPECT_EQ(ran, 1);
  for (const char* bad : {"0/2", "3/2", "2", "a/b", "1/", "/4", "1/2/3", "-1/2"})
    EXPECT_THROW(parse_case_share(bad), InputError) << bad;
  EXPECT_EQ(parse_case_share("7/8").part, 7);
  EXPECT_EQ(parse_case_share("7/8").of, 8);
}

}  // namespace
}  // namespace gnncheck::suites
