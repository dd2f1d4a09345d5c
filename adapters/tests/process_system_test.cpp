// The external-process system against adapters that misbehave on purpose (faulty_adapter.py): every
// fault gets its own status and message, and the run goes on with the next case.
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
      {2, Status::timeout, "no answer within 3 s"},
      {0, Status::ok, ""},
      {3, Status::crashed, "exited with code 3"},
      {4, Status::invalid_output, "output 'y'"},
      {5, Status::invalid_output, "output 'y'"},
      {6, Status::invalid_output, "did not write output_y.npy"},
      {7, Status::invalid_output, "has shape [5, 4]; expected [5, 5]"},
      {8, Status::invalid_output, "holds float32 values; the case asked for float64"},
      {9, Status::invalid_output, "value nan at [1, 2]"},
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

// Resource faults: each is stopped with its own message (the fault's name, what was measured, the
// limit) and a bounded stderr tail; the next case gets a fresh adapter; no case directory is left.
TEST(ProcessSystem, ResourceFaultsAreStoppedWithTheirOwnVerdict) {
  TempDir work;
  auto adapter = faulty_adapter(work);
  const std::vector<Expected> sequence = {
      {17, Status::invalid_output, "output_y.npy"},  // header claims 50 GB: refused before reading
      {0, Status::ok, ""},
      {18, Status::invalid_output, "output too large: the adapter wrote"},
      {0, Status::ok, ""},
      {19, Status::crashed, "stderr flood: the adapter wrote more than 64.0 MiB to stderr"},
      {0, Status::ok, ""},
      {20, Status::crashed, "stdout flood: the adapter printed more than 64.0 MiB"},
      {0, Status::ok, ""},
  };
  for (const auto& step : sequence) {
    const auto start = std::chrono::steady_clock::now();
    const Result r = adapter->evaluate(spmm_case(step.seed));
    EXPECT_EQ(r.status, step.status) << "seed " << step.seed << ": " << r.message.substr(0, 2000);
    EXPECT_THAT(r.message, HasSubstr(step.message_part)) << "seed " << step.seed;
    // The stderr tail is bounded (4000 bytes by default) whatever the adapter wrote.
    EXPECT_LT(r.message.size(), 6000u) << "seed " << step.seed;
    // Stopped long before the 3 s case timeout would have.
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2500)) << "seed " << step.seed;
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
  auto adapter = make_process_system(
      {testing::python(), (testing::source_dir() / "adapters/tests/faulty_adapter.py").string()}, options);
  const Result r = adapter->evaluate(spmm_case(22));
  EXPECT_EQ(r.status, Status::crashed) << r.message;
  EXPECT_THAT(r.message, HasSubstr("memory limit: the adapter's resident memory reached"));
  EXPECT_THAT(r.message, HasSubstr("the limit is 256.0 MiB (max_rss_bytes)"));
  EXPECT_THAT(r.message, HasSubstr("allocating without bound"));
  EXPECT_EQ(adapter->evaluate(spmm_case(0)).status, Status::ok);
}

// A leak too slow for any limit: the adapter's resident memory is its live_bytes(), so the resources
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
  EXPECT_THAT(a.reason, HasSubstr("No such file or directory"));
  const Result r = missing->evaluate(spmm_case(0));
  EXPECT_EQ(r.status, Status::crashed);
  EXPECT_THAT(r.message, HasSubstr("could not be started"));
}

TEST(ProcessSystem, AdapterThatExitsBeforeHelloIsUnavailable) {
  TempDir work;
  auto early = make_process_system(
      {testing::python(), "-c", "import sys; sys.stderr.write('ImportError: no module named torch\\n'); sys.exit(4)"},
      fast_options(work));
  const Availability a = early->availability();
  EXPECT_FALSE(a.available);
  EXPECT_THAT(a.reason, HasSubstr("exited with code 4 before its hello line"));
  EXPECT_THAT(a.reason, HasSubstr("no module named torch"));
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
  options.max_failed_starts = 1;
  auto silent = make_process_system({testing::python(), "-c", "import time; time.sleep(60)"}, options);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(silent->availability().available);
  EXPECT_THAT(silent->availability().reason, HasSubstr("within 0.5 s"));
  // After max_failed_starts the system does not try again: no second wait.
  EXPECT_EQ(silent->evaluate(spmm_case(0)).status, Status::crashed);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace gnncheck
