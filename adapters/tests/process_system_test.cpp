// The external-process system against adapters that misbehave on purpose (faulty_adapter.py): every
// fault gets its own status and message, and the run goes on with the next case.
#include <cstdlib>
#include <fstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/process_system.h"
#include "adapters/protocol.h"
#include "adapters/tests/adapter_test_support.h"
#include "checks/checks.h"

namespace gnncheck {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

TEST(SplitCommandLine, SplitsOnBlanksWithoutAShell) {
  EXPECT_EQ(split_command_line("  /usr/bin/python3   a.py\t--x=1 "),
            (std::vector<std::string>{"/usr/bin/python3", "a.py", "--x=1"}));
  EXPECT_EQ(split_command_line("run 'my adapter.py' \"say \\\"hi\\\" \\\\\" a\\ b $HOME *"),
            (std::vector<std::string>{"run", "my adapter.py", "say \"hi\" \\", "a b", "$HOME", "*"}));
  EXPECT_EQ(split_command_line("x ''"), (std::vector<std::string>{"x", ""}));
}

TEST(SplitCommandLine, RefusesUnterminatedQuotesAndEmptyCommands) {
  EXPECT_THROW(split_command_line("python 'oops"), InputError);
  EXPECT_THROW(split_command_line("python \"oops"), InputError);
  EXPECT_THROW(split_command_line("   "), InputError);
}

ProcessSystemOptions fast_options(const TempDir& work) {
  ProcessSystemOptions options;
  options.case_timeout = std::chrono::milliseconds(3000);
  options.startup_timeout = std::chrono::milliseconds(20000);
  options.work_dir = work.path();
  return options;
}

std::unique_ptr<System> faulty_adapter(const TempDir& work) {
  return make_process_system(
      {testing::python(), (testing::source_dir() / "adapters/tests/faulty_adapter.py").string()}, fast_options(work));
}

Case spmm_case(std::uint64_t seed) {
  return testing::random_case("spmm", testing::asymmetric_graph(), {{"features", std::int64_t{5}}}, seed);
}

struct Expected {
  std::uint64_t seed;
  Status status;
  std::string message_part;
};

TEST(ProcessSystem, EveryFaultGetsItsOwnStatusAndTheRunGoesOn) {
  TempDir work;
  auto adapter = faulty_adapter(work);
  ASSERT_TRUE(adapter->availability().available) << adapter->availability().reason;
  EXPECT_EQ(adapter->name(), "faulty");
  EXPECT_TRUE(adapter->supports("spmm"));
  EXPECT_FALSE(adapter->supports("sddmm_dot"));

  const std::vector<Expected> sequence = {
      {0, Status::ok, ""},
      {1, Status::crashed, "signal 11"},
      {0, Status::ok, ""},
      {2, Status::timeout, "no answer within 3 s (the case timeout: --case-timeout, case_timeout_s)"},
      {0, Status::ok, ""},
      {3, Status::crashed, "exited with code 3"},
      {4, Status::invalid_output, "output 'y'"},
      {5, Status::invalid_output, "output 'y'"},
      {6, Status::invalid_output, "did not write output_y.npy"},
      {7, Status::invalid_output, "has shape [5, 4]; expected [5, 5]"},
      {8, Status::invalid_output, "holds float32 values; the case asked for float64"},
      {10, Status::invalid_output, "wrote no result.json"},
      {11, Status::invalid_output, "result.json is not valid JSON"},
      {12, Status::error, "out of device memory (simulated)"},
      {13, Status::unsupported, "no kernel for this width"},
      {14, Status::ok, ""},
      {15, Status::invalid_output, "answered for"},
      {16, Status::invalid_output, "status 'fine' is not one of ok, unsupported, error"},
      {0, Status::ok, ""},
  };
  for (const auto& step : sequence) {
    const Case c = spmm_case(step.seed);
    const Result r = adapter->evaluate(c);
    EXPECT_EQ(r.status, step.status) << "seed " << step.seed << ": " << r.message;
    EXPECT_THAT(r.message, HasSubstr(step.message_part)) << "seed " << step.seed;
    if (r.ok()) {
      const Result want = oracle::evaluate(c);
      EXPECT_LE(testing::max_abs_difference(r.outputs, want.outputs), 1e-12) << "seed " << step.seed;
      EXPECT_LE(testing::max_abs_difference(r.gradients, want.gradients), 1e-12) << "seed " << step.seed;
    }
  }
  // Every case directory was removed.
  EXPECT_TRUE(std::filesystem::is_empty(work.path()));
}

// PROTOCOL.md §5: NaN in an answer to finite inputs is an answer (the checks compare it with the
// exact result and fail there), not invalid output; the adapter keeps running.
TEST(ProcessSystem, ANanAnswerToFiniteInputsIsReadAsAnsweredForTheChecks) {
  TempDir work;
  auto adapter = faulty_adapter(work);
  const Result r = adapter->evaluate(spmm_case(9));  // the adapter writes NaN into y[1, 2]
  ASSERT_EQ(r.status, Status::ok) << r.message;
  EXPECT_TRUE(std::isnan(r.outputs.at("y").at(1, 2)));
  EXPECT_EQ(adapter->evaluate(spmm_case(0)).status, Status::ok);
  EXPECT_TRUE(std::filesystem::is_empty(work.path()));
}

// Resource faults: each is stopped with its own message (the fault's name, what was measured, the
// limit) and a bounded stderr tail; the next case gets a fresh adapter; no case directory is left.
TEST(ProcessSystem, ResourceFaultsAreStoppedWithTheirOwnVerdict) {
  TempDir work;
  // Each fault must be stopped by its own limit, never by the case timeout, whatever the machine's
  // load: the timeout is far beyond any of them (a sanitizer build on a loaded machine took over 3 s
  // to read 64 MiB of lines), so a status other than the fault's own is the failure, not a race.
  ProcessSystemOptions options = fast_options(work);
  options.case_timeout = std::chrono::seconds(120);
  options.max_stderr_bytes_per_case = std::int64_t{8} << 20;
  auto adapter = make_process_system(
      {testing::python(), (testing::source_dir() / "adapters/tests/faulty_adapter.py").string()}, options);
  const std::vector<Expected> sequence = {
      {17, Status::invalid_output, "output_y.npy"},  // header claims 50 GB: refused before reading
      {0, Status::ok, ""},
      {18, Status::invalid_output, "output too large: the adapter wrote"},
      {0, Status::ok, ""},
      {19, Status::crashed, "stderr flood: the adapter wrote more than 8.0 MiB to stderr"},
      {0, Status::ok, ""},
      {20, Status::crashed, "stdout flood: the adapter printed more than 8.0 MiB"},
      {0, Status::ok, ""},
  };
  for (const auto& step : sequence) {
    const Result r = adapter->evaluate(spmm_case(step.seed));
    EXPECT_EQ(r.status, step.status) << "seed " << step.seed << ": " << r.message.substr(0, 2000);
    EXPECT_THAT(r.message, HasSubstr(step.message_part)) << "seed " << step.seed;
    // The stderr tail is bounded (4000 bytes by default) whatever the adapter wrote.
    EXPECT_LT(r.message.size(), 6000u) << "seed " << step.seed;
  }
  const Result flooded = adapter->evaluate(spmm_case(19));
  EXPECT_THAT(flooded.message, HasSubstr("--- adapter stderr (tail) ---"));
  EXPECT_THAT(flooded.message, HasSubstr("faulty adapter: warning: something is off"));
  const Result grown = adapter->evaluate(spmm_case(18));
  EXPECT_THAT(grown.message, HasSubstr("an answer to this case may take 64.0 MiB (4 × its tensors' size + 64 MiB)"));
  EXPECT_THAT(grown.message, HasSubstr("was stopped (was killed by signal 9"));
  EXPECT_TRUE(std::filesystem::is_empty(work.path()));
}

TEST(ProcessSystem, MemoryLimitStopsAnAdapterThatAllocatesWithoutBound) {
  TempDir work;
  ProcessSystemOptions options = fast_options(work);
  options.max_rss_bytes = std::int64_t{256} << 20;
  // Only the memory limit may end this case: a case timeout far beyond how long 256 MiB takes to
  // touch on any machine, so a loaded one cannot make the timeout win the race.
  options.case_timeout = std::chrono::milliseconds(300000);
  auto adapter = make_process_system(
      {testing::python(), (testing::source_dir() / "adapters/tests/faulty_adapter.py").string()}, options);
  const Result r = adapter->evaluate(spmm_case(22));
  EXPECT_EQ(r.status, Status::crashed) << r.message;
  EXPECT_THAT(r.message, HasSubstr("memory limit: the adapter's resident memory reached"));
  EXPECT_THAT(r.message, HasSubstr("the limit is 256.0 MiB (max_rss_bytes)"));
  EXPECT_THAT(r.message, HasSubstr("allocating without bound"));
  EXPECT_EQ(adapter->evaluate(spmm_case(0)).status, Status::ok);
}

// A leak too slow for any limit: gnncheck reads the adapter's resident memory (measured_host_bytes()), so the resources
// check sees it grow across evaluations of one case, while a correct adapter's stays flat.
TEST(ProcessSystem, LeakingAdapterFailsTheResourcesCheck) {
  TempDir work;
  auto leaking = faulty_adapter(work);
  const checks::Verdict leak = checks::resources(*leaking, spmm_case(21));
  EXPECT_TRUE(leak.conclusion != checks::Conclusion::not_applicable) << leak.detail;
  EXPECT_FALSE(leak.passed());
  EXPECT_THAT(leak.message, HasSubstr("memory grew by"));
  EXPECT_GE(leak.metric, 3.0 * (8 << 20));  // 3 evaluations after the warm-up, 8 MiB each

  auto correct = faulty_adapter(work);
  const checks::Verdict flat = checks::resources(*correct, spmm_case(0));
  EXPECT_TRUE(flat.conclusion != checks::Conclusion::not_applicable) << flat.detail;
  EXPECT_TRUE(flat.passed()) << flat.message;
}

// The RSS is compared within each case's series, never against a baseline kept from earlier cases:
// an adapter whose resident memory creeps by 96 KiB a call (288 KiB over a short series' 3 calls,
// under the 1 MiB allowance) passes case after case. A baseline held across cases (the dead band it
// had) let 8.4 MiB of creep over these 15 cases come out as 1 MiB steps inside some case's series.
TEST(ProcessSystem, HostMemoryIsComparedWithinEachCaseNotAcrossCases) {
  TempDir work;
  auto creeping = faulty_adapter(work);
  for (int k = 0; k < 15; ++k) {
    const checks::Verdict v = checks::resources(*creeping, spmm_case(26));
    ASSERT_TRUE(v.passed()) << "case " << k << ": " << v.message << v.detail;
    ASSERT_NE(v.tolerance_model.find("resident host memory"), std::string::npos) << v.tolerance_model;
  }
}

// Device memory is invisible to the adapter's RSS: the live_bytes an answer reports is part of
// live_bytes(), so a device leak fails the resources check and steady device memory does not.
TEST(ProcessSystem, ReportedDeviceMemoryLeakFailsTheResourcesCheck) {
  TempDir work;
  auto leaking = faulty_adapter(work);
  const checks::Verdict leak = checks::resources(*leaking, spmm_case(24));
  EXPECT_FALSE(leak.passed());
  EXPECT_THAT(leak.message, HasSubstr("memory grew by"));
  EXPECT_GE(leak.metric, 3.0 * (8 << 20));
  const checks::Verdict steady = checks::resources(*faulty_adapter(work), spmm_case(25));
  EXPECT_TRUE(steady.passed()) << steady.message;
}

TEST(ProcessSystem, CrashMessageQuotesTheAdaptersStderr) {
  TempDir work;
  auto adapter = faulty_adapter(work);
  const Result crashed = adapter->evaluate(spmm_case(1));
  EXPECT_EQ(crashed.status, Status::crashed);
  EXPECT_THAT(crashed.message, HasSubstr("about to dereference a null pointer"));
  const Result exited = adapter->evaluate(spmm_case(3));
  EXPECT_THAT(exited.message, HasSubstr("giving up"));
}

TEST(ProcessSystem, ForwardOnlyCasesAskForNoGradients) {
  TempDir work;
  auto adapter = faulty_adapter(work);
  const Case c = testing::random_case("spmm", testing::bipartite_graph(), {{"features", std::int64_t{3}}}, 0, false);
  const Result r = adapter->evaluate(c);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_TRUE(r.gradients.empty());
  EXPECT_LE(testing::max_abs_difference(r.outputs, oracle::evaluate(c).outputs), 1e-12);
}

TEST(ProcessSystem, UndeclaredTargetIsUnsupported) {
  TempDir work;
  auto adapter = faulty_adapter(work);
  const Case c = testing::random_case("sddmm_dot", testing::asymmetric_graph(), {}, 0);
  const Result r = adapter->evaluate(c);
  EXPECT_EQ(r.status, Status::unsupported);
  EXPECT_THAT(r.message, HasSubstr("does not declare target 'sddmm_dot'"));
}

TEST(ProcessSystem, KeptCaseDirectoryIsAValidCase) {
  TempDir work;
  ProcessSystemOptions options = fast_options(work);
  options.keep_case_dirs = true;
  auto adapter = make_process_system(
      {testing::python(), (testing::source_dir() / "adapters/tests/faulty_adapter.py").string()}, options);
  const Case c = spmm_case(7);  // wrong shape: kept and named in the message
  const Result r = adapter->evaluate(c);
  EXPECT_EQ(r.status, Status::invalid_output);
  EXPECT_THAT(r.message, HasSubstr("case directory kept"));
  std::vector<std::filesystem::path> dirs(std::filesystem::directory_iterator(work.path()), {});
  ASSERT_EQ(dirs.size(), 1u);
  const protocol::LoadedCase loaded = protocol::read_case(dirs[0]);
  EXPECT_EQ(loaded.c.target, "spmm");
  EXPECT_EQ(*loaded.c.graph, *c.graph);
  EXPECT_EQ(loaded.c.inputs.at("x"), c.inputs.at("x"));
  EXPECT_EQ(loaded.c.grad_outputs.at("y"), c.grad_outputs.at("y"));
}

// The Python kit keeps protocol lines intact whatever the system prints, and maps Unsupported and
// other exceptions to their statuses.
TEST(ProcessSystem, PythonKitSurvivesChatterAndMapsExceptions) {
  TempDir work;
  auto chatty = make_process_system(
      {testing::python(), (testing::source_dir() / "adapters/tests/chatty_adapter.py").string()}, fast_options(work));
  ASSERT_TRUE(chatty->availability().available) << chatty->availability().reason;
  EXPECT_EQ(chatty->name(), "chatty");
  for (std::uint64_t seed : {1, 2}) {
    const Case c = spmm_case(seed);
    const Result r = chatty->evaluate(c);
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_LE(testing::max_abs_difference(r.gradients, oracle::evaluate(c).gradients), 1e-12);
    EXPECT_GT(r.seconds, 0.0);
  }
  const Result unsupported = chatty->evaluate(spmm_case(5));
  EXPECT_EQ(unsupported.status, Status::unsupported);
  EXPECT_THAT(unsupported.message, HasSubstr("outside this system's scope"));
  const Result failed = chatty->evaluate(spmm_case(6));
  EXPECT_EQ(failed.status, Status::error);
  EXPECT_THAT(failed.message, HasSubstr("MemoryError: simulated allocation failure"));
  EXPECT_THAT(failed.message, HasSubstr("Traceback"));  // the kit prints it on stderr, gnncheck quotes it
}

TEST(ProcessSystem, ProgramThatCannotStartIsUnavailableWithTheReason) {
  TempDir work;
  auto missing = make_process_system(std::vector<std::string>{"/nonexistent/adapter"}, fast_options(work));
  const Availability a = missing->availability();
  EXPECT_FALSE(a.available);
  EXPECT_THAT(a.reason, HasSubstr("adapter '/nonexistent/adapter': cannot start '/nonexistent/adapter': "
                                  "'/nonexistent/adapter' does not exist"));
  // Unavailable for good: evaluate() does not try again, it says why the case was not evaluated.
  const Result r = missing->evaluate(spmm_case(0));
  EXPECT_EQ(r.status, Status::error);
  EXPECT_THAT(r.message, HasSubstr("not evaluated: the system is unavailable: adapter '/nonexistent/adapter'"));
}

TEST(ProcessSystem, ProgramNotOnPathIsUnavailableNamingPath) {
  TempDir work;
  auto missing = make_process_system("gnncheck-no-such-adapter --flag", fast_options(work));
  const Availability a = missing->availability();
  EXPECT_FALSE(a.available);
  EXPECT_THAT(a.reason, HasSubstr("adapter 'gnncheck-no-such-adapter --flag': cannot start 'gnncheck-no-such-adapter': "
                                  "program 'gnncheck-no-such-adapter' was not found on PATH ("));
  EXPECT_THAT(a.reason, HasSubstr(std::getenv("PATH")));
}

// The pre-flight check says why a command cannot run, without starting anything.
TEST(AdapterCommandProblem, NamesEveryReasonACommandCannotRun) {
  TempDir work;
  EXPECT_EQ(adapter_command_problem(testing::python() + " -c pass"), std::nullopt);
  EXPECT_EQ(adapter_command_problem("sh -c true"), std::nullopt);  // found on PATH
  EXPECT_THAT(adapter_command_problem("   ").value_or(""), HasSubstr("adapter command is empty"));
  EXPECT_THAT(adapter_command_problem("python3 'my adapter.py").value_or(""), HasSubstr("is never closed"));
  EXPECT_THAT(adapter_command_problem("nosuchprog-gnncheck a b").value_or(""),
              HasSubstr("adapter command 'nosuchprog-gnncheck a b': program 'nosuchprog-gnncheck' was not found on PATH"));
  EXPECT_THAT(adapter_command_problem("/nonexistent/bin/adapter").value_or(""),
              HasSubstr("'/nonexistent/bin/adapter' does not exist"));
  EXPECT_THAT(adapter_command_problem(work.path().string()).value_or(""), HasSubstr("is a directory, not a program"));
  const std::filesystem::path plain = work.path() / "adapter.py";
  std::ofstream(plain) << "print('hello')\n";
  EXPECT_THAT(adapter_command_problem(plain.string()).value_or(""), HasSubstr("is not executable"));
  const std::filesystem::path script = work.path() / "adapter";
  std::ofstream(script) << "#!/nonexistent/python9 -u\nprint('hello')\n";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  EXPECT_THAT(adapter_command_problem(script.string()).value_or(""),
              HasSubstr("is a script for '/nonexistent/python9', which does not exist"));
  // What make_process_system reports when it is started anyway is as precise.
  auto started = make_process_system(std::vector<std::string>{script.string()}, fast_options(work));
  EXPECT_THAT(started->availability().reason, HasSubstr("is a script for '/nonexistent/python9', which does not exist"));
}

// A failing import: the reason names the command, how it ended, and quotes the error in its first
// line as well as the whole stderr tail. It is started once, not once per case.
TEST(ProcessSystem, AdapterThatExitsBeforeHelloIsUnavailable) {
  TempDir work;
  const std::filesystem::path starts = work.path() / "starts";
  auto early = make_process_system(
      {testing::python(), "-c",
       fmt::format("open('{}', 'a').write('x'); import gnncheck_no_such_module", starts.string())},
      fast_options(work));
  const Availability a = early->availability();
  EXPECT_FALSE(a.available);
  EXPECT_THAT(a.reason, HasSubstr(fmt::format("adapter '{} -c", testing::python())));
  EXPECT_THAT(a.reason, HasSubstr("it exited with code 1 before its hello line: ModuleNotFoundError: No module named "
                                  "'gnncheck_no_such_module'"));
  EXPECT_THAT(a.reason, HasSubstr("--- adapter stderr (tail) ---\nTraceback"));
  for (std::uint64_t seed : {0, 1, 2}) {
    const Result r = early->evaluate(spmm_case(seed));
    EXPECT_EQ(r.status, Status::error);
    EXPECT_THAT(r.message, HasSubstr("not evaluated: the system is unavailable"));
    EXPECT_THAT(r.message, HasSubstr("No module named 'gnncheck_no_such_module'"));
  }
  EXPECT_FALSE(early->supports("spmm"));
  EXPECT_EQ(testing::read_text(starts), "x");  // one start in all
}

TEST(ProcessSystem, AdapterOfAnotherProtocolVersionIsRefused) {
  TempDir work;
  auto other = make_process_system(
      {testing::python(), "-c",
       "print('gnncheck-hello {\"protocol\": 2, \"name\": \"future\", \"targets\": {}}', flush=True); input()"},
      fast_options(work));
  const Availability a = other->availability();
  EXPECT_FALSE(a.available);
  EXPECT_THAT(a.reason, HasSubstr("speaks protocol 2; gnncheck speaks 1"));
}

TEST(ProcessSystem, SilentAdapterTimesOutAtStartup) {
  TempDir work;
  ProcessSystemOptions options = fast_options(work);
  options.startup_timeout = std::chrono::milliseconds(500);
  const std::filesystem::path pids = work.path() / "pids";
  auto silent = make_process_system(
      {testing::python(), "-c",
       fmt::format("import os, sys, time; open('{}', 'a').write('%d\\n' % os.getpid()); print('warming up', flush=True); "
                   "sys.stderr.write('loading weights\\n'); sys.stderr.flush(); time.sleep(60)",
                   pids.string())},
      options);
  const Availability a = silent->availability();
  EXPECT_FALSE(a.available);
  EXPECT_THAT(a.reason, HasSubstr("no hello line ('gnncheck-hello {…}') within 0.5 s (the startup timeout: "
                                  "--startup-timeout, startup_timeout_s); the last thing it printed on stdout: "
                                  "'warming up'; it was stopped (was killed by signal 9"));
  EXPECT_THAT(a.reason, HasSubstr("--- adapter stderr (tail) ---\nloading weights"));
  EXPECT_GE(silent->startup_seconds(), 0.5);
  // Never started: unavailable for good, so no second wait, no second process.
  const Result r = silent->evaluate(spmm_case(0));
  EXPECT_EQ(r.status, Status::error);
  EXPECT_THAT(r.message, HasSubstr("not evaluated: the system is unavailable"));
  // One process: a second start would have written a second pid.
  const std::vector<pid_t> started = testing::read_pids(pids);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_TRUE(testing::process_gone(started[0]));
}

TEST(ProcessSystem, MisspelledHelloTokenIsNamedInTheReason) {
  TempDir work;
  ProcessSystemOptions options = fast_options(work);
  options.startup_timeout = std::chrono::milliseconds(500);
  auto misspelled = make_process_system(
      {testing::python(), "-c",
       "import time; print('gnncheck-helo {\"protocol\": 1, \"targets\": {\"spmm\": \"float64\"}}', flush=True); "
       "time.sleep(60)"},
      options);
  EXPECT_THAT(misspelled->availability().reason,
              HasSubstr("the last thing it printed on stdout: 'gnncheck-helo {\"protocol\": 1"));
}

// A hello that names a target gnncheck does not know (a typo) would make every case of the real
// target "unsupported": the adapter is refused, naming the name and the known targets.
TEST(ProcessSystem, HelloWithAnUnknownTargetOrPrecisionIsRefused) {
  TempDir work;
  const auto hello_adapter = [&](const std::string& targets) {
    return make_process_system(
        {testing::python(), "-c",
         fmt::format("print('gnncheck-hello {{\"protocol\": 1, \"name\": \"typo\", \"targets\": {}}}', flush=True); "
                     "input()",
                     targets)},
        fast_options(work));
  };
  auto typo = hello_adapter("{\"spmm\": \"float64\", \"sddmm_dott\": \"float32\"}");
  const Availability a = typo->availability();
  EXPECT_FALSE(a.available);
  EXPECT_THAT(a.reason, HasSubstr("the hello line declares unknown target 'sddmm_dott'; known targets: spmm, "));
  EXPECT_THAT(a.reason, HasSubstr("sddmm_dot"));
  EXPECT_FALSE(typo->supports("spmm"));
  EXPECT_EQ(typo->evaluate(spmm_case(0)).status, Status::error);

  auto precision = hello_adapter("{\"spmm\": \"fp32\"}");
  EXPECT_THAT(precision->availability().reason,
              HasSubstr("target 'spmm': unknown precision 'fp32': expected float64, float32, tf32, bfloat16 or float16"));
  auto nothing = hello_adapter("{}");
  EXPECT_THAT(nothing->availability().reason, HasSubstr("the hello line declares no targets"));
}

// An adapter that prints something else in place of its done line is not seen only as a timeout:
// the message quotes the last lines it printed that were not protocol lines.
TEST(ProcessSystem, ATimeoutQuotesTheLinesTheAdapterPrintedInPlaceOfAnAnswer) {
  TempDir work;
  ProcessSystemOptions options = fast_options(work);
  options.case_timeout = std::chrono::milliseconds(1000);
  auto garbage = make_process_system(
      {testing::python(), "-c",
       "import sys\n"
       "print('gnncheck-hello {\"protocol\": 1, \"name\": \"garbage\", \"targets\": {\"spmm\": \"float64\"}}', "
       "flush=True)\n"
       "for line in sys.stdin:\n"
       "    print('result: 3.14159', flush=True)\n"
       "    print('answer=[[1, 2], [3, 4]]', flush=True)\n"},
      options);
  ASSERT_TRUE(garbage->availability().available) << garbage->availability().reason;
  const Result r = garbage->evaluate(spmm_case(0));
  EXPECT_EQ(r.status, Status::timeout) << r.message;
  EXPECT_THAT(r.message, HasSubstr("it printed lines on stdout that are not a protocol line"));
  EXPECT_THAT(r.message, HasSubstr("--- adapter stdout, not protocol lines (last 2) ---\nresult: 3.14159\n"
                                   "answer=[[1, 2], [3, 4]]"));
}

// A hand-written adapter that prints without newlines glues its hello and done lines to that text;
// both are still recognised at once (not after the startup or case timeout).
TEST(ProcessSystem, ProtocolLinesGluedToEarlierOutputAreRecognised) {
  TempDir work;
  ProcessSystemOptions options = fast_options(work);
  options.startup_timeout = std::chrono::milliseconds(10000);
  auto glued = make_process_system(
      {testing::python(), (testing::source_dir() / "adapters/tests/chatty_adapter.py").string(), "--glued"}, options);
  ASSERT_TRUE(glued->availability().available) << glued->availability().reason;
  EXPECT_EQ(glued->name(), "glued");
  for (std::uint64_t seed : {1, 2}) {
    const Case c = spmm_case(seed);
    const Result r = glued->evaluate(c);
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_LE(testing::max_abs_difference(r.outputs, oracle::evaluate(c).outputs), 1e-12);
  }
  // Recognised, not waited out: a glued line missed would end the start at its 10 s timeout
  // (unavailable) and a case at its own (Status::timeout), so the statuses above are the verdict.
}

// The startup timeout covers only the start (every restart too) and the case timeout only the case:
// an adapter that takes longer to start than a case may take still answers every case, and the time
// it spent starting is startup_seconds(), not part of any case's seconds.
TEST(ProcessSystem, StartupTimeIsSeparateFromCaseTime) {
  TempDir work;
  ProcessSystemOptions options = fast_options(work);
  options.case_timeout = std::chrono::milliseconds(1000);
  options.startup_timeout = std::chrono::milliseconds(10000);
  auto slow_start = make_process_system(
      {testing::python(), (testing::source_dir() / "adapters/tests/faulty_adapter.py").string(), "--startup-delay", "1.5"},
      options);
  ASSERT_TRUE(slow_start->availability().available) << slow_start->availability().reason;
  const double first_start = slow_start->startup_seconds();
  EXPECT_GE(first_start, 1.5);
  EXPECT_EQ(slow_start->evaluate(spmm_case(0)).status, Status::ok);
  // Exits after answering: the next case finds it gone and restarts it (1.5 s) before the case.
  EXPECT_EQ(slow_start->evaluate(spmm_case(23)).status, Status::ok);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const Result after_restart = slow_start->evaluate(spmm_case(0));
  EXPECT_EQ(after_restart.status, Status::ok) << after_restart.message;
  EXPECT_LT(after_restart.seconds, 1.5);  // the 1.5 s start is not part of the case
  // Killed by the case timeout: the next case restarts it at the start of evaluate().
  EXPECT_EQ(slow_start->evaluate(spmm_case(2)).status, Status::timeout);
  const Result after_timeout = slow_start->evaluate(spmm_case(0));
  EXPECT_EQ(after_timeout.status, Status::ok) << after_timeout.message;
  EXPECT_GE(slow_start->startup_seconds(), first_start + 3.0);  // two restarts of 1.5 s each
}

// max_failed_starts counts restarts in a row that fail, after the adapter ran: each failed restart
// costs one case (crashed, with the reason); then the system is unavailable and says so.
TEST(ProcessSystem, AdapterThatCannotBeRestartedBecomesUnavailable) {
  TempDir work;
  ProcessSystemOptions options = fast_options(work);
  options.max_failed_starts = 2;
  auto once = make_process_system({testing::python(), (testing::source_dir() / "adapters/tests/faulty_adapter.py").string(),
                                   "--fail-restarts", (work.path() / "started").string()},
                                  options);
  ASSERT_TRUE(once->availability().available) << once->availability().reason;
  EXPECT_EQ(once->evaluate(spmm_case(0)).status, Status::ok);
  EXPECT_EQ(once->evaluate(spmm_case(1)).status, Status::crashed);  // SIGSEGV: needs a restart
  const Result first = once->evaluate(spmm_case(0));                  // restart 1 fails
  EXPECT_EQ(first.status, Status::crashed) << first.message;
  EXPECT_THAT(first.message, HasSubstr("the adapter could not be restarted: "));
  EXPECT_THAT(first.message, HasSubstr("it exited with code 5 before its hello line: faulty adapter: refusing to start "
                                       "a second time"));
  EXPECT_TRUE(std::filesystem::exists(work.path() / "started"));
  for (int after = 0; after < 2; ++after) {  // restart 2 fails: unavailable from then on, no more attempts
    const Result r = once->evaluate(spmm_case(0));
    EXPECT_EQ(r.status, Status::error) << r.message;
    EXPECT_THAT(r.message, HasSubstr("not evaluated: the system is unavailable: adapter '"));
    EXPECT_THAT(r.message, HasSubstr("could not be restarted 2 times in a row (max_failed_starts); the last attempt: it "
                                     "exited with code 5 before its hello line: faulty adapter: refusing"));
  }
  const Availability a = once->availability();
  EXPECT_FALSE(a.available);
  EXPECT_THAT(a.reason, HasSubstr("could not be restarted 2 times in a row (max_failed_starts)"));
}

}  // namespace
}  // namespace gnncheck
