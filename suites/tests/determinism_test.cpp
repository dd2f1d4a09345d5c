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
#include <stdexcept>
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
  EXPECT_EQ(run_ci({.jobs = 1, .omp_threads = 2, .seed = {}, .share = {}}), first) << "2 OpenMP threads";
  EXPECT_EQ(run_ci({.jobs = 2, .omp_threads = 1, .seed = {}, .share = {}}), first) << "--jobs 2";
  EXPECT_EQ(run_ci({.jobs = 3, .omp_threads = 2, .seed = {}, .share = {}}), first) << "--jobs 3 with 2 OpenMP threads each";
}

TEST(Determinism, AnotherSeedDrawsOtherCases) {
  // Guards the test above against a report that does not depend on the seed at all.
  const nlohmann::json seed1 = run_ci({.jobs = 1, .omp_threads = 1, .seed = 1, .share = {}});
  const nlohmann::json seed2 = run_ci({.jobs = 1, .omp_threads = 1, .seed = 2, .share = {}});
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
  const nlohmann::json part = run_ci({.jobs = 1, .omp_threads = 1, .seed = {}, .share = {2, 3}});
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
  EXPECT_EQ(run_ci({.jobs = 1, .omp_threads = 1, .seed = {}, .share = {2, 3}}), part) << "a shard repeats exactly";
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

// `ci`'s differential entry on HeldSystem, run in a thread with the interrupt's wake-up pipes in the
// test's hands: signal() is the first interrupt, stop_now() the second. Evaluations after the first
// `free_evaluations` are held until release().
class InterruptedRun {
 public:
  explicit InterruptedRun(int free_evaluations) {
    suite_.time_budget_seconds = 0.0;
    SystemEntry held;
    held.name = "held";
    held.kind = SystemKind::builtin;
    held.summary = "cpu_float32, held on request";
    held.make = [this, free_evaluations] { return std::make_unique<HeldSystem>(hold_, entered_, free_evaluations); };
    registry_.add(std::move(held));
    if (pipe(stop_pipe_) != 0 || pipe(now_pipe_) != 0) throw std::runtime_error("pipe() failed");
    options_.only_entries = {"differential"};
    options_.override_systems = {"held"};
    options_.jobs = 1;
    options_.stop_requested = [this] { return signal_.load(); };
    options_.stop_wake_fd = stop_pipe_[0];
    options_.stop_now_wake_fd = now_pipe_[0];
    // A real caller exits here; the test lets the held task end instead.
    options_.stop_now = [this](reports::RunReport now) {
      handed_.set_value(std::move(now));
      release();
    };
  }
  ~InterruptedRun() {
    release();
    if (done_.valid()) done_.wait();
    for (int fd : {stop_pipe_[0], stop_pipe_[1], now_pipe_[0], now_pipe_[1]}) close(fd);
  }
  // Starts the run; true once it has made more than `evaluations` evaluations (within 20 s).
  bool start(ProgressSink* progress, int evaluations) {
    done_ = std::async(std::launch::async, [this, progress] { return run_suite(suite_, registry_, options_, progress); });
    for (int i = 0; i < 4000 && entered_.load() <= evaluations; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return entered_.load() > evaluations;
  }
  void signal(int sig) {
    signal_ = sig;
    if (write(stop_pipe_[1], "x", 1) != 1) throw std::runtime_error("write() failed");
  }
  void stop_now() {
    if (write(now_pipe_[1], "x", 1) != 1) throw std::runtime_error("write() failed");
  }
  void release() { hold_ = false; }
  // The report the second interrupt handed over, within 20 s.
  std::optional<reports::RunReport> handed() {
    std::future<reports::RunReport> f = handed_.get_future();
    if (f.wait_for(std::chrono::seconds(20)) != std::future_status::ready) return std::nullopt;
    return f.get();
  }

 private:
  Suite suite_ = load_suite(std::string(GNNCHECK_TEST_SUITES_DIR) + "/ci.yaml");
  std::atomic<bool> hold_{true};
  std::atomic<int> entered_{0}, signal_{0};
  SystemRegistry registry_ = SystemRegistry::with_builtins();
  int stop_pipe_[2] = {-1, -1}, now_pipe_[2] = {-1, -1};
  RunOptions options_;
  std::promise<reports::RunReport> handed_;
  std::future<reports::RunReport> done_;
};

// The first interrupt: the run says at once what it is finishing. The second: the report of what
// finished is handed over while a task is still in progress, which is `not tested`, never a pass.
TEST(Determinism, AnInterruptSaysWhatItFinishesAndASecondOneStillGetsAReport) {
  InterruptedRun run(/*free_evaluations=*/0);  // the first task is in progress when the stop comes
  StopListener listener;
  ASSERT_TRUE(run.start(&listener, 0)) << "the run never evaluated";
  run.signal(SIGINT);
  // Said at once; waited for up to 20 s so that a loaded machine cannot fail it.
  for (int i = 0; i < 4000 && listener.what_was_said().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const std::string said = listener.what_was_said();
  EXPECT_EQ(said.rfind("SIGINT 1 ", 0), 0u) << said;
  EXPECT_NE(said.find(" true held/"), std::string::npos) << said;
  run.stop_now();
  const std::optional<reports::RunReport> now = run.handed();
  ASSERT_TRUE(now) << "no report within 20 s of the second interrupt";
  EXPECT_EQ(now->interrupted_by, "SIGINT");
  ASSERT_FALSE(now->results.empty());
  int stopped_while_running = 0;
  for (const reports::ResultRecord& r : now->results) {
    EXPECT_NE(r.outcome, reports::Outcome::pass) << r.target << " " << r.check;
    if (r.message.find("stopped at once by a second interrupt") != std::string::npos) ++stopped_while_running;
  }
  EXPECT_EQ(stopped_while_running, 1);
  EXPECT_FALSE(now->all_expectations_held());
}

// Two signals at once (`timeout` sends its signal to the command and to its process group): the
// task in progress still returns at its next case with what it counted, inside the grace a second
// interrupt gives, so the report keeps its cases.
TEST(Determinism, TwoInterruptsAtOnceKeepWhatTheTaskInProgressCounted) {
  // Held at its 7th evaluation (each case evaluates the system once or more): cases before it counted.
  InterruptedRun run(/*free_evaluations=*/6);
  ASSERT_TRUE(run.start(nullptr, 6)) << "the run never reached its 7th evaluation";
  run.signal(SIGTERM);
  run.stop_now();
  run.release();  // the evaluation in flight returns; the check stops before its next case
  const std::optional<reports::RunReport> now = run.handed();
  ASSERT_TRUE(now) << "no report within 20 s of the second interrupt";
  ASSERT_FALSE(now->results.empty());
  const reports::ResultRecord& first = now->results.front();
  EXPECT_EQ(first.outcome, reports::Outcome::not_tested);
  EXPECT_GT(first.cases, 0) << first.message;
  EXPECT_NE(first.message.find("interrupted by SIGTERM before this check finished"), std::string::npos)
      << first.message;
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
