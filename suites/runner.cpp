#include "suites/runner.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/splitmix64.h"
#include "suites/planner.h"
#include "suites/run_merge.h"
#include "suites/sanitizer_results.h"
#include "suites/task.h"

namespace gnncheck::suites {
namespace {

using reports::Expectation;
using reports::Outcome;
using reports::ResultRecord;
using Clock = std::chrono::steady_clock;

// How long a second interrupt waits for the tasks in progress to return what they counted.
constexpr auto kStopNowGrace = std::chrono::seconds(2);

std::uint64_t fnv1a(std::uint64_t h, const std::string& s) {
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h ^ 0xff;  // separates "ab","c" from "a","bc"
}

// Runs one planned task through its kind. In-process systems are cheap to make: a fresh one per
// task keeps one task's state from reaching the next, so results do not depend on --jobs or task
// order. GPU contexts are kept per thread (`instances`); an adapter or plugin is one process for the
// whole run (the registry's instance, its calls serialized), started before the run so its start-up
// costs no budget. Every field the kind does not decide is written here, once.
ResultRecord run_task(const Task& t, const RunContext& run, std::map<std::string, std::unique_ptr<System>>& instances) {
  const auto start = Clock::now();
  ResultRecord r = result_record(t);
  r.repro = t.kind->rerun_line(t, run);
  r.precision = "float64";  // a kind that runs on no system verifies the float64 oracle
  try {
    System* sys = nullptr;
    if (t.kind->runs_on_systems()) {
      // In-process systems are cheap to make: a fresh one per task keeps one task's state from
      // reaching the next, so results do not depend on --jobs or task order. GPU contexts are
      // kept per thread; an adapter or plugin is one process for the whole run (the registry's
      // instance, its calls serialized), started before the run so its start-up costs no budget.
      const SystemEntry& entry = run.systems.find(t.label.system);
      std::unique_ptr<System> fresh;
      if (entry.instance) {
        sys = entry.instance.get();
      } else if (entry.kind == "builtin" || entry.kind == "replica") {
        fresh = entry.make();
        sys = fresh.get();
      } else {
        auto& slot = instances[t.label.system];
        if (!slot) slot = entry.make();
        sys = slot.get();
      }
      r.precision = std::string(to_string(sys->precision(t.label.target)));
      t.kind->run(t, sys, run, r);
    } else {
      t.kind->run(t, nullptr, run, r);
    }
  } catch (const InputError& e) {
    // The case could not be built (the family's parameters, a dataset that is missing): a
    // problem of the suite or of this machine, reported on this result rather than ending the run.
    r.outcome = Outcome::error;
    r.error_not_of_the_system = true;
    r.message = fmt::format("{}: could not run: {}", t.entry->location.where(), e.what());
  } catch (const std::exception& e) {
    r.outcome = Outcome::error;
    r.error_not_of_the_system = true;
    r.message = fmt::format("internal error while running: {}", e.what());
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.expectation_held = reports::expectation_held(r.expectation, r.outcome);
  std::string notes = t.coverage_note;
  if (t.entry->tolerance && t.kind->runs_on_systems()) {
    // A loosened bound is never silent: every result it applied to says so, and why.
    const std::string note = fmt::format("bounds multiplied by {} by the suite ({}): {}", t.entry->tolerance->factor,
                                         t.entry->location.where(), t.entry->tolerance->reason);
    notes = notes.empty() ? note : notes + "\n" + note;
  }
  if (!notes.empty()) r.message = r.message.empty() ? notes : r.message + "\n" + notes;
  if (r.chunked) r.chunked->notes = notes;  // the merge rebuilds the message from the chunks, then adds them
  return r;
}

// The units of the plan this run runs (RunOptions::share): a check task's chunks, or a task whole;
// unit u falls to part u mod OF + 1. A shard's report records the plan; tasks with no unit here drop out.
std::vector<Task> units_of_this_run(std::vector<Task> tasks, const RunOptions& options, reports::RunReport& run) {
  std::vector<Task> here;
  std::int64_t unit = 0;
  for (auto& t : tasks) {
    const bool chunked = !t.decided && t.kind->draws_cases();
    const std::int64_t units = chunked ? chunk_count(t.entry->cases) : 1;
    if (run.share)
      run.plan.push_back({t.label.entry, t.label.system, t.label.target, t.label.check, units, t.overridden, t.expect, t.seed});
    for (std::int64_t j = 0; j < units; ++j)
      if ((unit + j) % options.share.of == options.share.part - 1) t.chunks.push_back(j);
    unit += units;
    if (!t.chunks.empty()) here.push_back(std::move(t));
  }
  if (run.share) run.override_systems = options.override_systems;
  return here;
}

}  // namespace

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::uint64_t task_seed(std::uint64_t suite_seed, const std::string& entry, const std::string& target, const std::string& check) {
  std::uint64_t h = 1469598103934665603ull;
  for (const auto* s : {&entry, &target, &check}) h = fnv1a(h, *s);
  // Keep seeds below 2^53 so that every JSON reader holds them exactly.
  return splitmix64(h ^ splitmix64(suite_seed)) >> 11;
}

std::uint64_t chunk_seed(std::uint64_t task_seed, std::int64_t chunk) {
  if (chunk == 0) return task_seed;
  return splitmix64(task_seed ^ splitmix64(0x4368756e6bull + static_cast<std::uint64_t>(chunk))) >> 11;
}

CaseShare parse_case_share(const std::string& text) {
  const auto slash = text.find('/');
  auto number = [&](const std::string& s) -> int {
    if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), [](unsigned char ch) { return std::isdigit(ch); }))
      return 0;
    return std::stoi(s);
  };
  const int part = slash == std::string::npos ? 0 : number(text.substr(0, slash));
  const int of = slash == std::string::npos ? 0 : number(text.substr(slash + 1));
  if (part < 1 || of < 1 || part > of)
    throw InputError(fmt::format("--share '{}': expected PART/OF with 1 <= PART <= OF (e.g. 3/8: the third of eight "
                                 "disjoint parts of every check's cases)",
                                 text));
  return {part, of};
}

std::optional<CaseShare> share_from_environment(const std::function<const char*(const char*)>& lookup,
                                                const std::optional<CaseShare>& given) {
  struct Found {
    std::string names;
    CaseShare share;
  };
  std::vector<Found> found;
  for (const auto& [total_name, index_name] : {std::pair{"GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX"},
                                                std::pair{"TEST_TOTAL_SHARDS", "TEST_SHARD_INDEX"}}) {
    const char* total = lookup(total_name);
    const char* index = lookup(index_name);
    if (!total && !index) continue;
    if (!total || !index)
      throw InputError(fmt::format("{} is set but {} is not: a test runner sets both to run one shard", total ? total_name : index_name,
                                   total ? index_name : total_name));
    auto number = [](const std::string& s) -> long {
      if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), [](unsigned char ch) { return std::isdigit(ch); })) return -1;
      return std::stol(s);
    };
    const long n = number(total), i = number(index);
    if (n < 1 || i < 0 || i >= n)
      throw InputError(fmt::format("{}='{}' and {}='{}': expected 0 <= index < total", total_name, total, index_name, index));
    found.push_back({fmt::format("{}={} {}={}", total_name, total, index_name, index), {static_cast<int>(i) + 1, static_cast<int>(n)}});
  }
  if (found.empty()) return std::nullopt;
  for (const auto& f : found) {
    const CaseShare& a = found.front().share;
    if (f.share.part != a.part || f.share.of != a.of)
      throw InputError(fmt::format("{} and {} ask for different shards", found.front().names, f.names));
    if (given && (given->part != f.share.part || given->of != f.share.of))
      throw InputError(fmt::format("--share {}/{} and {} (shard {}/{}) disagree", given->part, given->of, f.names, f.share.part,
                                   f.share.of));
  }
  if (const char* status = lookup("TEST_SHARD_STATUS_FILE"); status && *status) {
    std::ofstream touch(status, std::ios::app);
    if (!touch) throw InputError(fmt::format("TEST_SHARD_STATUS_FILE='{}': cannot write it", status));
  }
  return found.front().share;
}

std::vector<std::string> entry_labels(const Suite& suite, const Entry& entry) {
  std::vector<std::string> labels = {"e2e"};
  auto add = [&](const std::string& l) {
    if (std::find(labels.begin(), labels.end(), l) == labels.end()) labels.push_back(l);
  };
  const bool gpu = std::any_of(entry.systems.begin(), entry.systems.end(), [](const auto& s) { return s == "gpu" || s == "cusparse"; });
  add(gpu ? "gpu" : "cpu");
  if (suite.graphs.count(entry.graphs) && suite.graphs.at(entry.graphs).family == "dataset") add("dataset");
  for (const auto& c : entry.checks)
    if (const TaskKind* kind = find_task_kind(c); kind && kind->slow()) add("slow");
  for (const auto& l : entry.labels) add(l);
  return labels;
}

reports::RunReport run_suite(const Suite& suite, const SystemRegistry& systems, const RunOptions& options, ProgressSink* progress) {
  const auto start = Clock::now();
  const std::uint64_t seed = options.seed.value_or(suite.seed);
  reports::RunReport run;
  if (!options.report_dir.empty()) {
    // Counterexamples of an earlier run in the same report directory would read as this run's.
    std::error_code ec;
    std::filesystem::remove_all(options.report_dir / "cases", ec);
    if (ec) throw InputError(fmt::format("{}: cannot remove the previous run's cases/: {}", options.report_dir.string(), ec.message()));
  }
  run.suite_name = suite.name;
  run.suite_path = suite.path;
  run.seed = seed;
  if (options.sharded || !options.share.whole()) run.share = options.share;
  run.started_utc = utc_timestamp();

  std::vector<Task> tasks = plan_tasks(suite, systems, options, seed);
  for (const auto& s : systems.entries()) {
    const bool used = std::any_of(tasks.begin(), tasks.end(), [&](const Task& t) { return t.label.system == s.name; });
    if (used) run.systems.push_back({s.name, s.kind, s.availability.available, s.availability.reason, s.bug});
  }
  tasks = units_of_this_run(std::move(tasks), options, run);

  if (progress) progress->planned(tasks.size());
  std::vector<ResultRecord> results(tasks.size());
  std::atomic<std::size_t> next{0};
  std::mutex progress_mutex;  // serializes the progress sink, and guards `results` and `state`
  enum class TaskState : char { waiting, running, finished };
  std::vector<TaskState> state(tasks.size(), TaskState::waiting);
  std::condition_variable task_finished;
  const double budget = options.time_budget_seconds.value_or(suite.time_budget_seconds);
  const RunContext context(suite, systems, options, seed);

  auto worker = [&] {
    std::map<std::string, std::unique_ptr<System>> instances;  // GPU systems: one instance per thread
    for (std::size_t i = next++; i < tasks.size(); i = next++) {
      const Task& t = tasks[i];
      ResultRecord r;
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      const int stop = options.stop_requested ? options.stop_requested() : 0;
      if (t.decided) {
        r = *t.decided;
      } else if (stop != 0) {
        r = result_record(t);
        r.outcome = Outcome::not_tested;
        r.expectation_held = false;
        r.message = fmt::format("not run: interrupted by {}", signal_name(stop));
        r.repro = t.kind->rerun_line(t, context);
      } else if (budget > 0 && elapsed > budget) {
        // A suite that did not finish has not verified what it promised: an unmet expectation.
        r = result_record(t);
        r.outcome = Outcome::not_tested;
        r.expectation_held = false;
        r.message = fmt::format("not run: the time budget of {} s ({}) was used up before this task started; give a "
                                "slower system or a loaded machine more with --time-budget SECONDS (0: no limit) or "
                                "the suite's time_budget_s (adapter and plugin start-up is not counted)",
                                budget, options.time_budget_seconds ? "--time-budget" : "the suite's time_budget_s");
      } else {
        {
          std::lock_guard lock(progress_mutex);
          state[i] = TaskState::running;
          if (progress) progress->started(t.label);
        }
        r = run_task(t, context, instances);
      }
      std::lock_guard lock(progress_mutex);
      results[i] = std::move(r);
      state[i] = TaskState::finished;
      task_finished.notify_all();
      if (progress) progress->finished(t.label, results[i]);
    }
  };
  // Settles what the results mean (expectations, shards) and completes the report.
  const auto complete = [&](reports::RunReport& report, std::vector<ResultRecord> rs) {
    if (options.stop_requested && options.stop_requested() != 0)
      report.interrupted_by = signal_name(options.stop_requested());
    if (report.share) {
      settle_shard_expectations(rs);
    } else {
      std::vector<bool> overridden;
      for (const auto& t : tasks) overridden.push_back(t.overridden);
      for (auto& r : rs) r.chunked.reset();  // a whole run's report holds no chunks
      settle_expectations(rs, overridden, options.override_systems);
    }
    report.results = std::move(rs);
    report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  };
  // Watches for a stop while the tasks run: says what is finishing, and on a second interrupt hands
  // the report of what finished to options.stop_now.
  int run_done[2] = {-1, -1};
  std::thread stop_watcher;
  if (options.stop_wake_fd >= 0 && pipe2(run_done, O_CLOEXEC) == 0) {
    stop_watcher = std::thread([&] {
      bool told = false;
      int now_fd = options.stop_now ? options.stop_now_wake_fd : -1;
      while (true) {
        pollfd fds[3] = {{run_done[0], POLLIN, 0}, {told ? -1 : options.stop_wake_fd, POLLIN, 0}, {now_fd, POLLIN, 0}};
        if (poll(fds, 3, -1) < 0) continue;  // EINTR: the signal this thread watches for
        if (fds[0].revents != 0) return;
        // A descriptor that can never become readable (closed, invalid) is no longer watched, so
        // that poll() does not return at once forever.
        if (fds[1].revents != 0 && !(fds[1].revents & POLLIN)) told = true;
        if (fds[2].revents != 0 && !(fds[2].revents & POLLIN)) now_fd = -1;
        std::unique_lock lock(progress_mutex);
        const std::string signal = signal_name(options.stop_requested ? options.stop_requested() : 0);
        if (fds[2].revents & POLLIN) {
          // The tasks in progress were asked to stop at the first interrupt and return at their next
          // case with what they counted: a moment for that, then they are abandoned. (A signal often
          // comes twice at once: `timeout` sends it to the command and to its process group.)
          task_finished.wait_for(lock, kStopNowGrace, [&] {
            return std::none_of(state.begin(), state.end(), [](TaskState s) { return s == TaskState::running; });
          });
          std::vector<ResultRecord> rs(tasks.size());
          for (std::size_t i = 0; i < tasks.size(); ++i) {
            if (state[i] == TaskState::finished) {
              rs[i] = results[i];
              continue;
            }
            rs[i] = tasks[i].decided ? *tasks[i].decided : result_record(tasks[i]);
            if (tasks[i].decided) continue;
            rs[i].outcome = Outcome::not_tested;
            rs[i].expectation_held = false;
            rs[i].message = state[i] == TaskState::running
                                ? fmt::format("interrupted by {}: stopped at once by a second interrupt while it ran", signal)
                                : fmt::format("not run: interrupted by {}", signal);
            rs[i].repro = tasks[i].kind->rerun_line(tasks[i], context);
          }
          reports::RunReport now = run;
          complete(now, std::move(rs));
          options.stop_now(std::move(now));  // ends the process; a test's may return
          return;
        }
        if (fds[1].revents & POLLIN) {
          told = true;
          std::vector<TaskLabel> in_progress;
          std::size_t waiting = 0;
          for (std::size_t i = 0; i < tasks.size(); ++i) {
            if (state[i] == TaskState::running) in_progress.push_back(tasks[i].label);
            if (state[i] == TaskState::waiting && !tasks[i].decided) ++waiting;
          }
          if (progress) progress->stopping(signal, in_progress, waiting, options.stop_now && options.stop_now_wake_fd >= 0);
        }
      }
    });
  }
  const int jobs = std::max(1, options.jobs);
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (auto& th : threads) th.join();
  if (stop_watcher.joinable()) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t ignored = write(run_done[1], &byte, 1);
    stop_watcher.join();
    close(run_done[0]);
    close(run_done[1]);
  }
  add_sanitizer_results(systems, options, tasks, results);
  complete(run, std::move(results));
  return run;
}

}  // namespace gnncheck::suites
