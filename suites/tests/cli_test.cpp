// The gnncheck command as a user meets it: exit codes, error messages for bad flags and bad suites,
// the final table, the report files, determinism for one seed, and repro of a saved failure.
#include <sys/wait.h>

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

CommandResult gnncheck(const std::string& args) {
  return ::gnncheck::testing::run_command(fmt::format("'{}' {} 2>&1", GNNCHECK_EXE, args));
}

fs::path scratch(const std::string& name) { return ::gnncheck::testing::scratch_folder("cli-test", name); }

std::string read_file(const fs::path& p) { return ::gnncheck::testing::file_text(p); }

// A suite of correct and buggy systems on one small target, fast enough for a unit test.
const char* kSuite = R"(name: clitest
seed: 5
cases_per_property: 6
entries:
  - name: correct
    systems: cpu_float32
    targets: [spmm, spmm_ve]
    checks: [differential, adjoint]
  - name: caught
    systems: tcgnn_backward_uses_A
    targets: [spmm]
    checks: [differential, adjoint]
    graphs: skewed
    expect: caught
  - name: loosened
    systems: cpu_float32
    targets: [spmm]
    checks: differential
    tolerance: {factor: 4, reason: "demonstrates that overrides are reported"}
  - name: wrongly-expected-to-pass
    systems: missing_eshuffle
    targets: [spmm_ve]
    checks: differential
    graphs: skewed
)";

fs::path write_suite(const fs::path& dir, const std::string& text = kSuite) {
  std::ofstream(dir / "clitest.yaml") << text;
  return dir / "clitest.yaml";
}

TEST(CliTest, HelpAndVersionExitZero) {
  for (const char* args : {"--help", "run --help", "list --help", "check --help", "repro --help", "selfcheck --help"}) {
    const CommandResult r = gnncheck(args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr("Usage:")) << args;
  }
  EXPECT_THAT(gnncheck("--version").output, HasSubstr("gnncheck "));
}

TEST(CliTest, UsageErrorsExitTwoWithAClearMessage) {
  CommandResult r = gnncheck("run --jobs zero");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--jobs"));
  // A value out of range names the flag and echoes the value, not a range up to the largest double.
  for (const char* bad : {"--cases 0", "--cases abc", "--cases 3 --case-timeout 0", "--cases 3 --startup-timeout -1"}) {
    r = gnncheck(std::string("check --system cpu_float32 --target spmm --check adjoint ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr("expected a number above 0, got '")) << bad;
    EXPECT_THAT(r.output, Not(HasSubstr("1797693"))) << bad;
  }
  // A negative seed is refused, not read as 2^64 - 1 and run.
  for (const char* bad : {"check --system cpu_float32 --target spmm --seed -1", "run ci --seed -1", "selfcheck --seed -1",
                          "scale --system cpu_float32 --target spmm --graph rmat:6 --seed -1",
                          "check --system cpu_float32 --target spmm --seed 18446744073709551616"}) {
    r = gnncheck(bad);
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr("--seed: expected a non-negative integer below 2^64, got '")) << bad;
  }
  r = gnncheck("frobnicate");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = gnncheck("run no_such_suite");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("suite 'no_such_suite' not found; looked for:"));
  r = gnncheck("check --system nonesuch --target spmm");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("unknown system 'nonesuch'; known systems: oracle, cpu_float32"));
  r = gnncheck("check --system oracle --target nonesuch");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("unknown target 'nonesuch'"));
}

TEST(CliTest, AnEmptyArgumentIsAUsageErrorNamingTheField) {
  // An empty suite name was an internal error ("cannot make absolute path", exit 3); an empty
  // --share ran every case as if it had not been given.
  for (const char* bad : {"run ''", "entries ''"}) {
    const CommandResult r = gnncheck(bad);
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr("suite: an empty name")) << bad;
    EXPECT_THAT(r.output, Not(HasSubstr("internal error"))) << bad;
  }
  const CommandResult r = gnncheck("run ci --share '' --report ''");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--share '': expected PART/OF"));
}

TEST(CliTest, BadSuiteNamesFileLineAndKey) {
  const auto dir = scratch("bad-suite");
  const auto path = write_suite(dir, "name: x\nentries:\n  - name: e\n    systems: oracle\n    checks: [adjoint]\n    cases: lots\n");
  const CommandResult r = gnncheck(fmt::format("run '{}' --report ''", path.string()));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr(fmt::format("{}:6: entries[0].cases: expected a positive integer, got 'lots'", path.string())));
  const auto path2 = write_suite(dir, "name: x\nentries:\n  - name: e\n    systems: oracle\n    checks: [adjiont]\n");
  const CommandResult r2 = gnncheck(fmt::format("run '{}' --report ''", path2.string()));
  EXPECT_EQ(r2.exit_code, 2) << r2.output;
  EXPECT_THAT(r2.output, HasSubstr(":3: entry 'e': unknown check 'adjiont'; known checks: differential"));
  fs::remove_all(dir);
}

TEST(CliTest, ListSaysWhatCanRunHere) {
  const CommandResult r = gnncheck("list");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* s : {"Ops:", "Layers:", "Systems:", "Replicas", "Checks:", "spmm_ve", "gat", "cpu_float32", "tcgnn_backward_uses_A"})
    EXPECT_THAT(r.output, HasSubstr(s));
  // Every system line says available or why not.
  EXPECT_THAT(r.output, ::testing::ContainsRegex("gpu +gpu +(available|unavailable: .+)"));
  EXPECT_EQ(gnncheck("list nonsense").exit_code, 2);
}

TEST(CliTest, ListOfATargetNamesEveryTensorWithItsShape) {
  const CommandResult r = gnncheck("list gat");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("x        input      [n_src, in_features]"));
  EXPECT_THAT(r.output, HasSubstr("weight   parameter  [in_features, out_features·heads]"));
  EXPECT_THAT(r.output, HasSubstr("y        output     [n_dst, out_features·heads]"));
  EXPECT_THAT(r.output, HasSubstr("negative_slope"));
  const CommandResult e = gnncheck("list spmm_ve");
  EXPECT_THAT(e.output, HasSubstr("edge_values  input      [E, heads]"));
  const CommandResult bad = gnncheck("list gatt");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.output, HasSubstr("'gatt' is neither a section"));
}

TEST(CliTest, GpuReplicasAreKnownInEveryBuild) {
  // A build without CUDA (or a machine without a device) knows the GPU replicas by name and says
  // why they cannot run; their suite then fails with that reason, and none of them counts as caught.
  const CommandResult list = gnncheck("list");
  EXPECT_THAT(list.output, ::testing::ContainsRegex("gpu-replica-5 +replica +(available|unavailable: .+)"));
  if (!std::regex_search(list.output, std::regex("gpu-replica-5 +replica +unavailable"))) return;  // runs on the device: gpu_replicas.yaml's own ctest entries
  const CommandResult r =
      gnncheck(fmt::format("run '{}/suites/gpu_replicas.yaml' --report '' --progress plain", GNNCHECK_TEST_SOURCE_DIR));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("unknown system")));
  EXPECT_THAT(r.output, HasSubstr("system 'gpu-replica-5' is not available here: "));
  EXPECT_THAT(r.output, ::testing::ContainsRegex("gpu-replica-5 +— +not run"));
  EXPECT_THAT(r.output, HasSubstr("0 of 0 replicas caught"));
}

TEST(CliTest, FileGraphLimitsReachTheLoaders) {
  // The suite's max_dimension and num_nodes are the loaders' options: a limit below the file's size
  // line, or a node count below its ids, is the loader's error, named with the graph and its line.
  const auto dir = scratch("file-limits");
  std::ofstream(dir / "g.mtx") << "%%MatrixMarket matrix coordinate pattern general\n4 4 2\n1 2\n3 4\n";
  std::ofstream(dir / "e.txt") << "0 1\n2 3\n";
  auto run_with = [&](const std::string& graph) {
    std::ofstream(dir / "s.yaml") << "name: limits\ngraphs:\n  g: " << graph
                                  << "\nentries:\n  - name: e\n    systems: oracle\n    targets: spmm\n"
                                     "    checks: differential\n    graphs: g\n    cases: 1\n";
    return gnncheck(fmt::format("run '{}' --report '' --progress plain", (dir / "s.yaml").string()));
  };
  CommandResult r = run_with("{family: file, path: g.mtx, max_dimension: 3}");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("limit of 3 given by MatrixMarketOptions::max_dimension")) << r.output;
  r = run_with("{family: file, path: e.txt, num_nodes: 3}");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the graph has 3")) << r.output;
  for (const char* ok : {"{family: file, path: g.mtx, max_dimension: 4}", "{family: file, path: e.txt, num_nodes: 6}"}) {
    r = run_with(ok);
    EXPECT_EQ(r.exit_code, 0) << ok << "\n" << r.output;
  }
  fs::remove_all(dir);
}

TEST(CliTest, RunWritesReportsAndExitsOneOnUnmetExpectations) {
  const auto dir = scratch("run");
  const auto suite = write_suite(dir);
  const CommandResult r = gnncheck(fmt::format("run '{}' --report '{}' --progress plain", suite.string(), (dir / "out").string()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("cpu_float32\n  target "));
  EXPECT_THAT(r.output, HasSubstr("  correct · spmm     pass "));
  EXPECT_THAT(r.output, HasSubstr("tcgnn_backward_uses_A"));
  EXPECT_THAT(r.output, HasSubstr("missing_eshuffle/spmm_ve/differential: fail (expected pass)"));
  EXPECT_THAT(r.output, HasSubstr("re-run: gnncheck repro"));
  for (const char* f : {"report.json", "junit.xml", "summary.md", "index.html"}) EXPECT_TRUE(fs::exists(dir / "out" / f)) << f;
  // The failing case was saved, and repro re-runs it (it still fails: exit 1).
  const std::string json = read_file(dir / "out" / "report.json");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(json, m, std::regex("\"counterexample\": \"(cases/missing_eshuffle[^\"]+)\"")));
  const CommandResult again = gnncheck(fmt::format("repro '{}'", (dir / "out" / m[1].str()).string()));
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_THAT(again.output, HasSubstr("The case still fails."));
  // The correct system passes the same saved case.
  const CommandResult correct = gnncheck(fmt::format("repro '{}' --system cpu_float32", (dir / "out" / m[1].str()).string()));
  EXPECT_EQ(correct.exit_code, 0) << correct.output;
  // A system that reaches no verdict on it (here: it does not implement the target) neither passes
  // it nor still fails it, and repro says so rather than "still fails".
  const CommandResult none =
      gnncheck(fmt::format("repro '{}' --system half_logits_rounded_before_max", (dir / "out" / m[1].str()).string()));
  EXPECT_EQ(none.exit_code, 1) << none.output;
  EXPECT_THAT(none.output, HasSubstr("The case no longer fails, but reaches no verdict now")) << none.output;

  const std::string cmd = fmt::format("python3 '{0}/reports/tests/validate_report.py' '{0}/reports/report.schema.json' '{1}' >/dev/null",
                                      GNNCHECK_TEST_SOURCE_DIR, (dir / "out" / "report.json").string());
  EXPECT_EQ(std::system(cmd.c_str()), 0) << "report.json does not validate against its schema";
  fs::remove_all(dir);
}

TEST(CliTest, ToleranceOverridesAreReportedWithTheirReason) {
  const auto dir = scratch("tolerance");
  const auto suite = write_suite(dir);
  const CommandResult r = gnncheck(fmt::format("run '{}' --entry loosened --report '{}' --progress plain", suite.string(), (dir / "out").string()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(read_file(dir / "out" / "report.json"),
              HasSubstr("bounds multiplied by 4 by the suite (" + suite.string() + ":15): demonstrates that overrides are reported"));
  fs::remove_all(dir);
}

TEST(CliTest, EntriesThatHoldExitZero) {
  const auto dir = scratch("pass");
  const auto suite = write_suite(dir);
  const CommandResult r = gnncheck(fmt::format("run '{}' --entry correct --entry caught --report '' --progress plain", suite.string()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("All expectations held."));
  EXPECT_THAT(r.output, HasSubstr("1 of 1 replicas caught"));
  fs::remove_all(dir);
}

// The report minus what legitimately differs between two runs: timings, the start time, and the
// report directory's own path inside messages and re-run lines.
std::string without_timings(std::string json, const std::string& report_dir) {
  for (auto at = json.find(report_dir); at != std::string::npos; at = json.find(report_dir)) json.replace(at, report_dir.size(), "DIR");
  json = std::regex_replace(json, std::regex("\"seconds\": [0-9.e+-]+"), "\"seconds\": 0");
  return std::regex_replace(json, std::regex("\"started_utc\": \"[^\"]*\""), "\"started_utc\": \"\"");
}

TEST(CliTest, SameSeedSameReport) {
  const auto dir = scratch("determinism");
  const auto suite = write_suite(dir);
  for (const char* out : {"run-a", "run-b"})
    gnncheck(fmt::format("run '{}' --report '{}' --progress plain", suite.string(), (dir / out).string()));
  // Parallel jobs must not change anything either.
  gnncheck(fmt::format("run '{}' --report '{}' --progress plain --jobs 2", suite.string(), (dir / "run-c").string()));
  auto normalized = [&](const char* out) { return without_timings(read_file(dir / out / "report.json"), (dir / out).string()); };
  const std::string a = normalized("run-a");
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, normalized("run-b"));
  EXPECT_EQ(a, normalized("run-c"));
  // A different seed draws different cases.
  gnncheck(fmt::format("run '{}' --report '{}' --progress plain --seed 6", suite.string(), (dir / "run-d").string()));
  EXPECT_NE(a, normalized("run-d"));
  fs::remove_all(dir);
}

}  // namespace
