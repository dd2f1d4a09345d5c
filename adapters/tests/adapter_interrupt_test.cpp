// SIGINT/SIGTERM (adapters/interrupt.h): the stop is recorded, every registered process group is
// killed and every registered case directory removed; a process system's evaluate() in flight returns
// at once with "interrupted by SIGINT", starts nothing afterwards, and leaves no process behind; and a
// whole `gnncheck run` interrupted with SIGINT leaves no adapter process and no case directory.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>
#include <thread>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/interrupt.h"
#include "adapters/process_system.h"
#include "adapters/tests/adapter_test_support.h"

extern char** environ;

namespace gnncheck {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::TempDir;
using Clock = std::chrono::steady_clock;

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1;
}

// Each test starts with handlers installed and no stop recorded, and leaves none behind.
class Interrupt : public ::testing::Test {
 protected:
  void SetUp() override {
    install_interrupt_handlers();
    reset_stop_request_for_testing();
  }
  void TearDown() override { reset_stop_request_for_testing(); }
};

TEST_F(Interrupt, SignalIsRecordedAndWakesPollers) {
  EXPECT_EQ(stop_requested(), 0);
  EXPECT_EQ(interrupt_message(), "");
  ASSERT_GE(stop_wake_fd(), 0);
  EXPECT_FALSE(readable(stop_wake_fd()));
  raise(SIGINT);
  EXPECT_EQ(stop_requested(), SIGINT);  // the runner exits 128 + 2 = 130
  EXPECT_EQ(interrupt_message(), "interrupted by SIGINT");
  EXPECT_TRUE(readable(stop_wake_fd()));
  EXPECT_TRUE(readable(stop_wake_fd()));  // stays readable for every poller
  reset_stop_request_for_testing();
  EXPECT_EQ(stop_requested(), 0);
  EXPECT_FALSE(readable(stop_wake_fd()));
  raise(SIGTERM);
  EXPECT_EQ(stop_requested(), SIGTERM);  // 143
  EXPECT_EQ(interrupt_message(), "interrupted by SIGTERM");
}

TEST(InterruptDeathTest, SecondSignalExitsAtOnce) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the watcher thread runs: re-execute, do not just fork
  EXPECT_EXIT(
      {
        install_interrupt_handlers();
        reset_stop_request_for_testing();
        raise(SIGINT);
        raise(SIGINT);
      },
      ::testing::ExitedWithCode(130), "");
}

TEST(InterruptDeathTest, ADeferredSecondSignalWakesTheCallerAndAThirdExits) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        install_interrupt_handlers();
        reset_stop_request_for_testing();
        defer_second_interrupt(true);
        raise(SIGINT);
        if (readable(stop_now_wake_fd())) _exit(1);
        raise(SIGINT);  // deferred: the caller writes its report
        if (!readable(stop_now_wake_fd())) _exit(2);
        raise(SIGINT);
        _exit(3);
      },
      ::testing::ExitedWithCode(130), "");
}

TEST_F(Interrupt, KillsRegisteredProcessGroupsAndRemovesRegisteredCaseDirectories) {
  TempDir work;
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  const char* argv[] = {"sleep", "60", nullptr};
  pid_t child = -1;
  ASSERT_EQ(posix_spawnp(&child, "sleep", nullptr, &attr, const_cast<char* const*>(argv), environ), 0);
  posix_spawnattr_destroy(&attr);
  ASSERT_TRUE(register_child_process_group(child));
  const fs::path dir = work.path() / "gnncheck-case-test";
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "sub" / "case.json") << "{}";
  register_case_directory(dir);

  raise(SIGINT);
  int status = 0;
  unregister_child_process_group(child);  // before reaping, as the process systems do
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  // The watcher thread removes the directory.
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (fs::exists(dir) && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(fs::exists(dir));
  unregister_case_directory(dir);
}

ProcessSystemOptions slow_options(const TempDir& work) {
  ProcessSystemOptions options;
  options.case_timeout = std::chrono::milliseconds(60000);
  options.startup_timeout = std::chrono::milliseconds(60000);
  options.work_dir = work.path();
  return options;
}

Case spmm_case(std::uint64_t seed) {
  return testing::random_case("spmm", testing::asymmetric_graph(), {{"features", std::int64_t{5}}}, seed);
}

// Sends `sig` to this process from another thread (as a terminal would) once `ready()` holds — an
// event of the test's own, never a guess at how long the machine takes to get there — and sets `sent`
// to when it did. If it never holds, the signal goes after a minute anyway and the test's expectations
// say what was missing.
std::thread signal_when(int sig, std::function<bool()> ready, Clock::time_point& sent) {
  return std::thread([sig, ready = std::move(ready), &sent] {
    const auto give_up = Clock::now() + std::chrono::seconds(60);
    while (!ready() && Clock::now() < give_up) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    sent = Clock::now();
    kill(getpid(), sig);
  });
}

// "At once": well within the adapter's 60 s timeouts (slow_options), which is what it would take
// if the stop were not seen — a bound no load of the machine comes near.
constexpr auto kAtOnce = std::chrono::seconds(20);

TEST_F(Interrupt, EvaluateInFlightReturnsAtOnceAndLeavesNothingBehind) {
  TempDir work, scratch;
  const fs::path pid_file = scratch.path() / "pids";
  auto adapter = make_process_system({testing::python(), (testing::source_dir() / "adapters/tests/faulty_adapter.py").string(),
                                      "--pid-file", pid_file.string(), "--with-child"},
                                     slow_options(work));
  ASSERT_TRUE(adapter->availability().available) << adapter->availability().reason;
  const std::vector<pid_t> started = testing::read_pids(pid_file);
  ASSERT_EQ(started.size(), 2u);  // the adapter and its child, in the adapter's process group

  // Signalled once the case is in flight: its directory is written.
  Clock::time_point sent;
  std::thread interrupter = signal_when(SIGINT, [&] { return !fs::is_empty(work.path()); }, sent);
  const Result r = adapter->evaluate(spmm_case(2));  // hangs: only the interrupt ends it
  interrupter.join();
  EXPECT_LT(Clock::now() - sent, kAtOnce);
  EXPECT_EQ(r.status, Status::error);
  EXPECT_THAT(r.message, StartsWith("interrupted by SIGINT"));
  for (pid_t pid : started) EXPECT_TRUE(testing::process_gone(pid)) << pid;
  EXPECT_TRUE(fs::is_empty(work.path()));  // the case directory is removed

  // After the stop nothing new is started: a further case is answered at once.
  const Result next = adapter->evaluate(spmm_case(0));
  EXPECT_EQ(next.status, Status::error);
  EXPECT_THAT(next.message, StartsWith("interrupted by SIGINT"));
  EXPECT_EQ(testing::read_pids(pid_file).size(), 2u);
  EXPECT_TRUE(fs::is_empty(work.path()));

  // A cleared stop (tests only) lets the system start a fresh adapter: the interrupt did not make it
  // unavailable.
  reset_stop_request_for_testing();
  EXPECT_EQ(adapter->evaluate(spmm_case(0)).status, Status::ok);
  EXPECT_EQ(testing::read_pids(pid_file).size(), 4u);
}

TEST_F(Interrupt, StartUpInFlightReturnsAtOnce) {
  TempDir work, scratch;
  const fs::path pid_file = scratch.path() / "pids";
  auto adapter = make_process_system({testing::python(), (testing::source_dir() / "adapters/tests/faulty_adapter.py").string(),
                                      "--pid-file", pid_file.string(), "--startup-delay", "60"},
                                     slow_options(work));
  // Signalled once the adapter is running (it wrote its pid), 60 s before its hello line would come.
  Clock::time_point sent;
  std::thread interrupter = signal_when(SIGTERM, [&] { return !testing::read_pids(pid_file).empty(); }, sent);
  const Availability a = adapter->availability();
  interrupter.join();
  EXPECT_LT(Clock::now() - sent, kAtOnce);
  EXPECT_FALSE(a.available);
  EXPECT_THAT(a.reason, HasSubstr("not started: interrupted by SIGTERM"));
  const std::vector<pid_t> started = testing::read_pids(pid_file);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_TRUE(testing::process_gone(started[0]));
}

// Processes whose command line contains `marker` and that are not zombies.
std::vector<pid_t> live_processes_with(const std::string& marker) {
  std::vector<pid_t> found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = testing::read_text(entry.path() / "cmdline");
    if (cmdline.find(marker) == std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (!testing::process_gone(pid, std::chrono::milliseconds(0))) found.push_back(pid);
  }
  return found;
}

// `gnncheck ARGS…` in a child process, its stdout and stderr into `log`, run in `cwd` (empty: this
// directory) with `env` ("NAME=value") set.
pid_t start_gnncheck(const std::vector<std::string>& args, const fs::path& log, const fs::path& cwd = {},
                     const std::vector<std::string>& env = {}) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(fd, 1);
  dup2(fd, 2);
  if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(99);
  for (const std::string& e : env) putenv(strdup(e.c_str()));
  std::vector<char*> argv = {const_cast<char*>(GNNCHECK_EXE)};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(GNNCHECK_EXE, argv.data());
  _exit(98);
}

// The child's wait status once it has ended, or nullopt when it is still running after `limit`.
std::optional<int> wait_for_exit(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  int status = 0;
  pid_t r = 0;
  while ((r = waitpid(pid, &status, WNOHANG)) == 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (r == 0) return std::nullopt;
  return status;
}

// The whole command: `gnncheck run` on an adapter that hangs in its case (with a child of its own),
// interrupted by SIGINT. No process of the adapter survives, no case directory is left, and gnncheck
// ends promptly without a pass.
TEST(InterruptEndToEnd, SigintToGnncheckLeavesNoAdapterProcess) {
  TempDir root;
  const fs::path work = root.path() / "work", tmp = root.path() / "tmp";
  fs::create_directories(work);
  fs::create_directories(tmp);
  const fs::path pid_file = root.path() / "adapter-pids";
  const fs::path suite = root.path() / "hang.yaml";
  std::ofstream(suite) << fmt::format(R"(name: hang
seed: 7
cases_per_property: 2
systems:
  - name: hanging
    adapter: "{} {} --fault hang --with-child --pid-file {}"
graphs:
  fixed:
    family: erdos_renyi
    params: {{n_dst: 9, n_src: 12, p: 0.3}}
entries:
  - name: hang
    systems: [hanging]
    targets: [spmm]
    checks: differential
    graphs: fixed
)",
                                      testing::python(), (testing::source_dir() / "adapters/tests/faulty_adapter.py").string(),
                                      pid_file.string());
  const fs::path log = root.path() / "gnncheck.log";
  const pid_t gnncheck = start_gnncheck({"run", suite.string(), "--report", "report", "--jobs", "1", "--progress", "plain"},
                                        log, work, {"TMPDIR=" + tmp.string(), "PYTHONDONTWRITEBYTECODE=1"});
  ASSERT_GE(gnncheck, 0);
  // The registry starts the adapter once for the whole run (the adapter and its child: two pids);
  // then the case hangs.
  const auto started_deadline = Clock::now() + std::chrono::seconds(60);
  while (testing::read_pids(pid_file).size() < 2 && Clock::now() < started_deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_GE(testing::read_pids(pid_file).size(), 2u) << testing::read_text(log);
  // The case is under way once its directory exists (gnncheck writes it under TMPDIR before
  // sending it).
  while (fs::is_empty(tmp) && Clock::now() < started_deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_FALSE(fs::is_empty(tmp)) << "no case directory within 60 s\n" << testing::read_text(log);

  kill(gnncheck, SIGINT);
  const std::optional<int> ended = wait_for_exit(gnncheck, std::chrono::seconds(20));
  int status = ended.value_or(0);
  if (!ended) {  // still running: force it (the second signal) so that the test cleans up
    kill(gnncheck, SIGINT);
    waitpid(gnncheck, &status, 0);
    ADD_FAILURE() << "gnncheck did not end within 20 s of SIGINT\n" << testing::read_text(log);
  }
  // Exits (not killed by the signal) with 130: the runner stops at stop_requested(), writes the
  // report so far marked interrupted, and an interrupted run never passes.
  EXPECT_TRUE(WIFEXITED(status)) << "wait status " << status << "\n" << testing::read_text(log);
  if (WIFEXITED(status)) {
    EXPECT_EQ(WEXITSTATUS(status), 130) << testing::read_text(log);
  }

  for (pid_t pid : testing::read_pids(pid_file)) EXPECT_TRUE(testing::process_gone(pid)) << pid;
  const std::vector<pid_t> survivors = live_processes_with(pid_file.string());
  EXPECT_THAT(survivors, ::testing::IsEmpty());
  for (pid_t pid : survivors) kill(pid, SIGKILL);  // a failing run leaves nothing behind either
  EXPECT_THAT(testing::read_text(log), ::testing::Not(HasSubstr("no answer within")));
  std::vector<std::string> left;
  for (const auto& entry : fs::recursive_directory_iterator(tmp)) left.push_back(entry.path().string());
  EXPECT_THAT(left, ::testing::IsEmpty());
  ASSERT_TRUE(fs::exists(work / "report" / "report.json")) << "the report so far is written";
  const std::string report = testing::read_text(work / "report" / "report.json");
  EXPECT_THAT(report, HasSubstr("\"interrupted_by\": \"SIGINT\""));
  EXPECT_THAT(report, HasSubstr("interrupted by SIGINT"));
  EXPECT_FALSE(fs::exists(work / "report" / "cases") && !fs::is_empty(work / "report" / "cases"))
      << "no counterexample is saved for an answer the stop cut short";
}

// A second SIGINT while an in-process task is still working on a large case: gnncheck says at the
// first what it is finishing, stops at the second at once, and still writes the report, the task
// `not tested` with its re-run line.
TEST(InterruptEndToEnd, ASecondSigintStopsAtOnceAndStillWritesTheReport) {
  TempDir root;
  const fs::path suite = root.path() / "large.yaml", report = root.path() / "report", log = root.path() / "log";
  std::ofstream(suite) << R"(name: large
seed: 7
cases_per_property: 3
systems:
  - {name: cpu_float32}
graphs:
  small:
    family: erdos_renyi
    params: {n_dst: 6, n_src: 6, p: 0.5}
  large:
    family: erdos_renyi
    params: {n_dst: 12000, n_src: 12000, p: 0.03}
entries:
  - name: small
    systems: [cpu_float32]
    targets: [gin]
    checks: [differential]
    graphs: small
  - name: large
    systems: [cpu_float32]
    targets: [{name: gin, attributes: {in_features: 64, hidden_features: 64, out_features: 64}}]
    checks: [differential]
    graphs: large
)";
  const pid_t gnncheck =
      start_gnncheck({"run", suite.string(), "--report", report.string(), "--progress", "plain", "--jobs", "1"}, log);
  ASSERT_GE(gnncheck, 0);
  // With one job the large entry starts when the small one has finished (its progress line).
  const auto started = Clock::now() + std::chrono::seconds(60);
  while (testing::read_text(log).find("[1/2]") == std::string::npos && Clock::now() < started)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_NE(testing::read_text(log).find("[1/2]"), std::string::npos) << testing::read_text(log);
  kill(gnncheck, SIGINT);
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (testing::read_text(log).find("stopping") == std::string::npos && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::string first = testing::read_text(log);
  EXPECT_THAT(first, HasSubstr("SIGINT: stopping. finishing the task in progress (its cases so far are kept): large: "
                               "cpu_float32/gin/differential"));
  EXPECT_THAT(first, HasSubstr("Interrupt again to stop at once: the report still gets what has finished."));
  kill(gnncheck, SIGINT);
  const std::optional<int> ended = wait_for_exit(gnncheck, std::chrono::seconds(120));
  int status = ended.value_or(0);
  if (!ended) {
    kill(gnncheck, SIGKILL);
    waitpid(gnncheck, &status, 0);
    FAIL() << "gnncheck did not end within 120 s of the second SIGINT\n" << testing::read_text(log);
  }
  ASSERT_TRUE(WIFEXITED(status)) << testing::read_text(log);
  EXPECT_EQ(WEXITSTATUS(status), 130) << testing::read_text(log);
  ASSERT_TRUE(fs::exists(report / "report.json")) << testing::read_text(log);
  const std::string json = testing::read_text(report / "report.json");
  EXPECT_THAT(json, HasSubstr("\"interrupted_by\": \"SIGINT\""));
  // At once: the task in progress gets 2 s to return what it counted (suites/runner.cpp), then it
  // is abandoned. Its one case (gin, 64 wide, on 4.3 million edges) took 93 s on a 2-core
  // machine with a build beside it (30 s at width 32), far past that grace: had the run waited for the task, its
  // record would say "interrupted by SIGINT before this check finished" instead.
  EXPECT_THAT(json, HasSubstr("\"verdict\": \"not tested\""));
  EXPECT_THAT(json, HasSubstr("stopped at once by a second interrupt while it ran"));
  EXPECT_THAT(json, HasSubstr("--entry large"));  // the re-run line
  EXPECT_THAT(testing::read_text(log), HasSubstr("Interrupted by SIGINT"));
}

}  // namespace
}  // namespace gnncheck
