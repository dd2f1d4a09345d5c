#include "suites/runner.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
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

}  // namespace

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
  run.started_utc = reports::utc_timestamp();

  std::vector<Task> tasks = plan_tasks(suite, systems, options, seed);
  for (const auto& s : systems.entries()) {
    const bool used = std::any_of(tasks.begin(), tasks.end(), [&](const Task& t) { return t.label.system == s.name; });
    if (used) run.systems.push_back({s.name, system_kind_name(s.kind), s.availability.available, s.availability.reason, s.bug});
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
        r = decided_record(t, context);
      } else if (stop != 0) {
        r = not_run_record(t, context, fmt::format("not run: interrupted by {}", signal_name(stop)));
      } else if (budget > 0 && elapsed > budget) {
        // A suite that did not finish has not verified what it promised: an unmet expectation.
        r = not_run_record(t, context,
                           fmt::format("not run: the time budget of {} s ({}) was used up before this task started; give a "
                                       "slower system or a loaded machine more with --time-budget SECONDS (0: no limit) or "
                                       "the suite's time_budget_s (adapter and plugin start-up is not counted)",
                                       budget, options.time_budget_seconds ? "--time-budget" : "the suite's time_budget_s"));
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
            if (tasks[i].decided) {
              rs[i] = decided_record(tasks[i], context);
              continue;
            }
            rs[i] = not_run_record(tasks[i], context,
                                   state[i] == TaskState::running
                                       ? fmt::format("interrupted by {}: stopped at once by a second interrupt while it ran", signal)
                                       : fmt::format("not run: interrupted by {}", signal));
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
  add_sanitizer_results(context, tasks, results);
  complete(run, std::move(results));
  return run;
}

}  // namespace gnncheck::suites
