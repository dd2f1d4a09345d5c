// The gnncheck command never passes what it did not test, and every failure's one re-run line works
// as printed. Each test is a way a real run used to end "All expectations held." with nothing
// verified, or printed a command that did not run.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "suites/tests/command_runner.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

using ::gnncheck::testing::CommandResult;

// Runs a shell command line in `dir` with the built gnncheck first on PATH, as a user's shell would.
CommandResult shell(const std::string& line, const fs::path& dir) {
  return ::gnncheck::testing::run_as_user(line, dir, GNNCHECK_EXE);
}

fs::path scratch(const std::string& name) { return ::gnncheck::testing::scratch_folder("fail-closed", name); }

std::string read_file(const fs::path& p) { return ::gnncheck::testing::file_text(p); }

std::string faulty_adapter(const std::string& fault) {
  return fmt::format("{} {}/adapters/tests/faulty_adapter.py --fault {}", GNNCHECK_TEST_PYTHON, GNNCHECK_TEST_SOURCE_DIR, fault);
}

// The one re-run line printed for the first unmet expectation.
std::string first_rerun_line(const std::string& output) {
  std::smatch m;
  if (!std::regex_search(output, m, std::regex("\n    re-run: ([^\n]+)"))) return {};
  return m[1];
}

TEST(FailClosedTest, TheCauseOfAPluginThatDoesNotLoadIsPrintedOnce) {
  const auto dir = scratch("corrupt-once");
  std::ofstream(dir / "lib.so") << "not an ELF file";
  const CommandResult r = shell("gnncheck run ci --plugin ./lib.so --report out", dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string cause = "is not available here";
  std::size_t count = 0;
  for (std::size_t at = r.output.find(cause); at != std::string::npos; at = r.output.find(cause, at + 1)) ++count;
  // Once as it happens (the progress line) and once in the list of unmet expectations: 18 results share it.
  EXPECT_EQ(count, 2u) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the same message as differential: "));
  EXPECT_THAT(r.output, HasSubstr("— the same as above"));
  // Every result in the report still carries it.
  const std::string json = read_file(dir / "out" / "report.json");
  std::size_t in_json = 0;
  for (std::size_t at = json.find(cause); at != std::string::npos; at = json.find(cause, at + 1)) ++in_json;
  EXPECT_GT(in_json, 1u);
  fs::remove_all(dir);
}

TEST(FailClosedTest, APluginThatDoesNotLoadIsNotTested) {
  const auto dir = scratch("corrupt");
  std::ofstream(dir / "lib.so") << "not an ELF file";
  const CommandResult r = shell("gnncheck run ci --plugin ./lib.so --progress plain --report out", dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("not tested"));
  EXPECT_THAT(r.output, Not(HasSubstr("All expectations held")));
  const std::string json = read_file(dir / "out" / "report.json");
  EXPECT_THAT(json, HasSubstr("\"verdict\": \"not tested\""));
  EXPECT_THAT(json, HasSubstr("\"all_expectations_held\": false"));
  EXPECT_THAT(read_file(dir / "out" / "junit.xml"), HasSubstr("<failure message=\"not tested\""));
  fs::remove_all(dir);
}

TEST(FailClosedTest, AnAdapterProgramThatDoesNotExistIsAUsageError) {
  const auto dir = scratch("nosuchprog");
  const CommandResult r = shell("gnncheck run ci --adapter nosuchprog_gnncheck_test --report out", dir);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--adapter nosuchprog_gnncheck_test: adapter command 'nosuchprog_gnncheck_test': program 'nosuchprog_gnncheck_test' was not found on PATH"));
  fs::remove_all(dir);
}

TEST(FailClosedTest, AnAdapterThatDiesBeforeHelloIsNotTestedAndQuotesItsStderr) {
  const auto dir = scratch("import");
  std::ofstream(dir / "broken.py") << "import gnncheck_no_such_module_for_the_test\n";
  const CommandResult r =
      shell(fmt::format("gnncheck run ci --adapter '{} broken.py' --progress plain --report out", GNNCHECK_TEST_PYTHON), dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("not tested"));
  EXPECT_THAT(r.output, HasSubstr("gnncheck_no_such_module_for_the_test")) << "the reason quotes the adapter's stderr";
  fs::remove_all(dir);
}

// A dead adapter's re-run line keeps the startup timeout it ran with, so it is `not tested` again
// after as long, not after the default 120 s.
TEST(FailClosedTest, ADeadAdaptersRerunLineKeepsItsStartupTimeout) {
  const auto dir = scratch("dead-adapter");
  const CommandResult r =
      shell("gnncheck check --adapter 'sleep 1000' --startup-timeout 2 --target spmm --check differential", dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("not tested"));
  const std::string rerun = first_rerun_line(r.output);
  ASSERT_THAT(rerun, HasSubstr("--adapter 'sleep 1000' --startup-timeout 2 --target spmm")) << r.output;
  const CommandResult again = shell(rerun, dir);
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_THAT(again.output, HasSubstr("within 2 s (the startup timeout")) << again.output;
  fs::remove_all(dir);
}

// A hung adapter's saved case re-runs under the case timeout it ran with: the printed `gnncheck repro`
// line carries it, and system.json records it for a bare `gnncheck repro DIR`.
TEST(FailClosedTest, AHungAdaptersSavedCaseKeepsItsCaseTimeout) {
  const auto dir = scratch("hung-adapter");
  const CommandResult r = shell(fmt::format("gnncheck check --adapter '{}' --case-timeout 2 --target spmm --check differential "
                                            "--cases 2 --report out",
                                            faulty_adapter("hang")),
                                dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string rerun = first_rerun_line(r.output);
  ASSERT_THAT(rerun, HasSubstr("gnncheck repro ")) << r.output;
  EXPECT_THAT(rerun, HasSubstr(" --case-timeout 2")) << r.output;
  const CommandResult again = shell(rerun, dir);
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_THAT(again.output, HasSubstr("2 s")) << again.output;
  EXPECT_THAT(again.output, Not(HasSubstr("60 s"))) << again.output;
  // The bare line, without the flag: the record supplies it.
  const std::string bare = rerun.substr(0, rerun.find(" --case-timeout"));
  const CommandResult recorded = shell(bare, dir);
  EXPECT_EQ(recorded.exit_code, 1) << recorded.output;
  EXPECT_THAT(recorded.output, HasSubstr("2 s")) << recorded.output;
  EXPECT_THAT(recorded.output, Not(HasSubstr("60 s"))) << recorded.output;
  fs::remove_all(dir);
}

TEST(FailClosedTest, AnAdapterThatDeclinesEveryCaseIsNotTested) {
  const auto dir = scratch("unsupported");
  const CommandResult r =
      shell(fmt::format("gnncheck run ci --entry differential --adapter '{}' --progress plain --report out", faulty_adapter("unsupported")),
            dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("not tested"));
  EXPECT_THAT(r.output, HasSubstr("answered none of its cases"));
  fs::remove_all(dir);
}

TEST(FailClosedTest, ACheckThatCannotApplyIsNeverAPass) {
  const auto dir = scratch("gradient");
  // Finite differences need float64; the float32 system gets "not applicable", and with nothing else
  // run it was not tested at all.
  const CommandResult r = shell("gnncheck check --system cpu_float32 --target spmm --check gradient --cases 3", dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("NOT TESTED"));
  EXPECT_THAT(r.output, HasSubstr("finite differences need a float64 system"));
  EXPECT_THAT(r.output, Not(HasSubstr("spmm    pass")));
  fs::remove_all(dir);
}

TEST(FailClosedTest, ARequiredSystemThatIsUnavailableFailsTheRun) {
  const auto dir = scratch("gpu");
  const CommandResult list = shell("gnncheck list systems", dir);
  if (list.output.find("gpu ") != std::string::npos && list.output.find("no CUDA") == std::string::npos &&
      list.output.find("not available") == std::string::npos)
    GTEST_SKIP() << "this machine has a CUDA device: the gpu system is available";
  const CommandResult r = shell("gnncheck run ci --system gpu --progress plain --report out", dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("not tested"));
  // In `default` the gpu entry's system is optional (required: false): a visible skip, not a failure.
  const CommandResult d = shell("gnncheck run default --entry gpu --progress plain --report out2", dir);
  EXPECT_EQ(d.exit_code, 0) << d.output;
  EXPECT_THAT(d.output, HasSubstr("skip"));
  fs::remove_all(dir);
}

TEST(FailClosedTest, APlantedBugIsCaughtAndItsRerunLineReproducesIt) {
  const auto dir = scratch("planted");
  const std::string plugin = GNNCHECK_TEST_PLANTED_BUG_PLUGIN;
  const CommandResult r = shell(fmt::format("gnncheck run ci --plugin '{}' --progress plain --report out", plugin), dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string rerun = first_rerun_line(r.output);
  ASSERT_FALSE(rerun.empty()) << r.output;
  EXPECT_THAT(rerun, HasSubstr("gnncheck repro out/cases/"));
  EXPECT_THAT(r.output, Not(HasSubstr("gnncheck-replay")));
  EXPECT_THAT(r.output, Not(HasSubstr("RC_PARAMS")));
  EXPECT_THAT(r.output, HasSubstr("Case seed "));
  const CommandResult again = shell(rerun, dir);
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_THAT(again.output, HasSubstr("The case still fails."));
  // The same system declared as a planted bug: catching it is success, a correct plugin is not caught.
  const CommandResult caught = shell(fmt::format("gnncheck run ci --plugin '{}' --expect caught --progress plain --report out3", plugin), dir);
  EXPECT_EQ(caught.exit_code, 0) << caught.output;
  const CommandResult correct = shell(
      fmt::format("gnncheck run ci --plugin '{}' --expect caught --progress plain --report out4", GNNCHECK_TEST_EXAMPLE_PLUGIN), dir);
  EXPECT_EQ(correct.exit_code, 1) << correct.output;
  const CommandResult usage = shell("gnncheck run ci --plugin ./none.so --expect caught", dir);
  EXPECT_EQ(usage.exit_code, 2) << "a usage error is never 'caught'";
  fs::remove_all(dir);
}

TEST(FailClosedTest, AnAdaptersRerunLineStartsTheAdapterAgain) {
  const auto dir = scratch("adapter-rerun");
  const CommandResult r = shell(
      fmt::format("gnncheck run ci --entry differential --adapter '{}' --progress plain --report out", faulty_adapter("nan")), dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string rerun = first_rerun_line(r.output);
  ASSERT_THAT(rerun, HasSubstr("gnncheck repro out/cases/")) << r.output;
  EXPECT_THAT(read_file(dir / "out" / "cases" / rerun.substr(rerun.find("cases/") + 6) / "system.json"), HasSubstr("\"adapter\""));
  const CommandResult again = shell(rerun, dir);
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_THAT(again.output, HasSubstr("The case still fails."));
  fs::remove_all(dir);
}

// A NaN answer where the exact result is finite (here: a plugin's spmm that writes 0/0 into empty
// rows) is a wrong answer: each check that compared it fails with the element and saves a shrunk
// counterexample. It used to be `invalid_output`, so the run showed only errors and no failure.
TEST(FailClosedTest, ANanAnswerToFiniteInputsIsAFailOfEachCheckNotAnError) {
  const auto dir = scratch("nan-fails");
  const CommandResult r = shell(fmt::format("gnncheck run ci --entry differential --entry state --plugin '{}' "
                                            "--progress plain --report out",
                                            GNNCHECK_TEST_NAN_PLUGIN),
                                dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string report = read_file(dir / "out" / "report.json");
  for (const char* check : {"differential", "adjoint", "state_interleaved", "state_repeat"})
    EXPECT_THAT(r.output, ::testing::ContainsRegex(fmt::format("\\] fail +UNMET [a-z]+: planted_bug_spmm/spmm/{} \\(", check)))
        << check << "\n" << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("] error ")));
  EXPECT_THAT(report, ::testing::ContainsRegex("got -?nan, expected 0"));
  EXPECT_THAT(report, Not(HasSubstr("invalid_output")));
  EXPECT_TRUE(fs::exists(dir / "out" / "cases")) << "no counterexample saved";
  fs::remove_all(dir);
}

// `--expect caught` is met only where a check failed on the system: an error (here: a crash on
// every case) is a broken system, not a caught bug, and the headline counts only entries where a
// check failed. The run used to exit 0 with "2 of 2 caught".
TEST(FailClosedTest, ExpectCaughtIsMetOnlyWhereACheckFailed) {
  const auto dir = scratch("expect-caught");
  const CommandResult crash = shell(fmt::format("gnncheck run ci --entry differential --entry state --adapter '{}' "
                                                "--expect caught --progress plain --report out",
                                                faulty_adapter("crash")),
                                    dir);
  EXPECT_EQ(crash.exit_code, 1) << crash.output;
  EXPECT_THAT(crash.output, HasSubstr("bug replicas: 0 of 2 caught"));
  // Caught in one entry (differential fails on the NaN), not in the other (op_order does not apply
  // to spmm): the run is met, and the headline says one entry of two.
  const CommandResult nan = shell(fmt::format("gnncheck run ci --entry differential --entry op-order --plugin '{}' "
                                              "--expect caught --progress plain --report out",
                                              GNNCHECK_TEST_NAN_PLUGIN),
                                  dir);
  EXPECT_EQ(nan.exit_code, 0) << nan.output;
  EXPECT_THAT(nan.output, HasSubstr("bug replicas: 1 of 2 caught"));
  fs::remove_all(dir);
}

// A suite that runs out of its time budget says how to give a slower system more: the tasks not
// started are `not tested` and name --time-budget, which replaces the suite's time_budget_s.
TEST(FailClosedTest, AUsedUpTimeBudgetSaysHowToRaiseIt) {
  const auto dir = scratch("budget");
  const CommandResult r = shell("gnncheck run ci --entry differential --time-budget 0.000001 --jobs 1 --progress plain "
                                "--report out",
                                dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("not tested"));
  EXPECT_THAT(r.output, HasSubstr("the time budget of 1e-06 s (--time-budget) was used up"));
  EXPECT_THAT(r.output, HasSubstr("more with --time-budget SECONDS (0: no limit)"));
  // Each task not run prints the one command that runs it, as an interrupted one does.
  EXPECT_THAT(r.output, HasSubstr("re-run: gnncheck run ci --entry differential --seed 1"));
  const CommandResult unlimited = shell("gnncheck run ci --entry differential --time-budget 0 --progress plain --report out", dir);
  EXPECT_EQ(unlimited.exit_code, 0) << unlimited.output;
  fs::remove_all(dir);
}

// An adapter whose gradients are wrong from its 13th call on: a bug that needs earlier calls.
void write_drifting_adapter(const fs::path& dir) {
  std::ofstream(dir / "drifting.py") << fmt::format(R"(import sys
sys.path.insert(0, "{}/adapters/python")
import numpy as np
import gnncheck_adapter as kit

calls = [0]

def spmm(case):
    calls[0] += 1
    A = case.graph.to_scipy()
    out = {{"outputs": {{"y": np.asarray(A @ case.inputs["x"])}}}}
    if case.wants_gradients:
        scale = 2.0 if calls[0] > 12 else 1.0
        out["gradients"] = {{"x": scale * np.asarray(A.T @ case.grad_outputs["y"])}}
    return out

kit.serve(name="drifting", targets={{"spmm": ("float64", spmm)}})
)",
                                                     GNNCHECK_TEST_SOURCE_DIR);
}

// The shrunk case of such a bug passes on a fresh process; the report says so and re-runs the
// whole sequence instead.
TEST(FailClosedTest, AStatefulFailureIsReRunAsTheWholeSequence) {
  const auto dir = scratch("stateful");
  write_drifting_adapter(dir);
  const std::string run = fmt::format("gnncheck run ci --entry differential --adapter '{} drifting.py' --progress plain --report out",
                                      GNNCHECK_TEST_PYTHON);
  const CommandResult r = shell(run, dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("passes on a fresh instance of the system"));
  const std::string rerun = first_rerun_line(r.output);
  EXPECT_THAT(rerun, HasSubstr("gnncheck run ci --entry differential --seed 1 --adapter")) << r.output;
  EXPECT_THAT(rerun, HasSubstr("--jobs 1"));
  const CommandResult again = shell(rerun + " --report out2", dir);
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_THAT(again.output, HasSubstr("passes on a fresh instance of the system"));
  fs::remove_all(dir);
}

// `gnncheck check` has no suite to name: its whole sequence is the same command again, in the
// report, the saved case and the printed line alike.
TEST(FailClosedTest, AStatefulFailureOfACheckCommandIsReRunAsThatCommand) {
  const auto dir = scratch("stateful-check");
  write_drifting_adapter(dir);
  const std::string run = fmt::format("gnncheck check --adapter '{} drifting.py' --target spmm --check differential --cases 30 "
                                      "--seed 4 --report out",
                                      GNNCHECK_TEST_PYTHON);
  const CommandResult r = shell(run, dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("passes on a fresh instance of the system"));
  const std::string rerun = first_rerun_line(r.output);
  EXPECT_THAT(rerun, HasSubstr("gnncheck check --adapter")) << r.output;
  EXPECT_THAT(rerun, HasSubstr("--target spmm --check differential --graphs small --cases 30 --seed 4")) << r.output;
  EXPECT_THAT(read_file(dir / "out" / "report.json"), Not(HasSubstr("gnncheck run check")));
  const CommandResult again = shell(rerun + " --report out2", dir);
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_THAT(again.output, HasSubstr("passes on a fresh instance of the system"));
  fs::remove_all(dir);
}

TEST(FailClosedTest, TheCasesDoNotDependOnTheSystemsName) {
  const auto dir = scratch("names");
  const std::string adapter = fmt::format("{} {}/adapters/python/scipy_adapter.py", GNNCHECK_TEST_PYTHON, GNNCHECK_TEST_SOURCE_DIR);
  std::ofstream(dir / "two.yaml") << fmt::format(
      "name: two\nseed: 3\ncases_per_property: 5\nsystems:\n  - {{name: first, adapter: '{0}'}}\n  - {{name: second_name, adapter: "
      "'{0}'}}\nentries:\n  - name: e\n    systems: [first, second_name]\n    targets: spmm\n    checks: [differential, adjoint]\n",
      adapter);
  const CommandResult r = shell("gnncheck run two.yaml --progress plain --report out", dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string json = read_file(dir / "out" / "report.json");
  std::regex metric("\"system\": \"(first|second_name)\",[^}]*?\"check\": \"(\\w+)\"[^}]*?\"metric\": ([^,]+),");
  std::map<std::string, std::map<std::string, std::string>> by_system;
  for (auto it = std::sregex_iterator(json.begin(), json.end(), metric); it != std::sregex_iterator(); ++it)
    by_system[(*it)[1]][(*it)[2]] = (*it)[3];
  ASSERT_EQ(by_system["first"].size(), 2u) << json;
  EXPECT_EQ(by_system["first"], by_system["second_name"]) << "the same cases, so the same worst errors";
  fs::remove_all(dir);
}

TEST(FailClosedTest, ANewRunNeverKeepsAnOlderRunsCases) {
  const auto dir = scratch("stale");
  fs::create_directories(dir / "out" / "cases" / "old-case");
  const CommandResult r = shell("gnncheck run ci --entry op-order --progress plain --report out", dir);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(dir / "out" / "cases" / "old-case"));
  fs::remove_all(dir);
}

TEST(FailClosedTest, AFolderNamedLikeAShippedSuiteIsNotReadAsOne) {
  const auto dir = scratch("folder");
  fs::create_directories(dir / "ci");
  const CommandResult r = shell("gnncheck run ci --entry op-order --progress plain --report out", dir);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const CommandResult d = shell("gnncheck run ./ci", dir);
  EXPECT_EQ(d.exit_code, 2) << d.output;
  EXPECT_THAT(d.output, HasSubstr("is a directory, not a suite file"));
  fs::remove_all(dir);
}

TEST(FailClosedTest, ReplicaProgressSaysCaughtNotUnmet) {
  const auto dir = scratch("replica");
  const CommandResult r = shell("gnncheck run default --entry replicas-caught-layers --progress plain --report out", dir);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("UNMET")));
  EXPECT_THAT(r.output, HasSubstr("bug replicas: 3 of 3 caught"));
  EXPECT_THAT(r.output, Not(HasSubstr(" failed, ")));
  fs::remove_all(dir);
}

}  // namespace
