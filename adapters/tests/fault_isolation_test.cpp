// A whole `gnncheck run` over adapters and a plugin that misbehave on purpose: every fault ends in
// its own verdict with the system's stderr tail in report.json, the run goes on to the end, and
// nothing is written outside the report directory — not in the working directory, not in $TMPDIR
// (where the case directories live while a case runs), not in $HOME, not next to the suite file.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "oracle/cpu_systems.h"
#include "adapters/process_system.h"
#include "adapters/tests/adapter_test_support.h"

namespace gnncheck {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TempDir;

std::vector<std::string> entries_of(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  return names;
}

// Everything under `dir`, as paths relative to it.
std::vector<std::string> tree_of(const fs::path& dir) {
  std::vector<std::string> paths;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) paths.push_back(fs::relative(entry.path(), dir).string());
  return paths;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(FaultIsolation, FaultyAdaptersAndPluginsEndInTheirVerdictsAndWriteOnlyTheReport) {
  TempDir root;
  const fs::path work = root.path() / "work", tmp = root.path() / "tmp", home = root.path() / "home",
                 suite_dir = root.path() / "suite";
  for (const auto& dir : {work, tmp, home, suite_dir}) fs::create_directories(dir);

  const std::string adapter =
      fmt::format("{} {}", testing::python(), (testing::source_dir() / "adapters/tests/faulty_adapter.py").string());
  const fs::path suite = suite_dir / "faults.yaml";
  std::ofstream(suite) << fmt::format(R"(name: faults
seed: 7
cases_per_property: 2
systems:
  - name: crashing
    adapter: "{0} --fault crash"
  - name: stderr_flood
    adapter: "{0} --fault stderr_flood"
  - name: growing_file
    adapter: "{0} --fault growing_file"
  - name: huge_header
    adapter: "{0} --fault huge_header"
  - name: nan
    adapter: "{0} --fault nan"
  - name: correct
    adapter: "{0} --fault correct"
  - name: faulty_plugin
    plugin: {1}
graphs:
  fixed:
    family: erdos_renyi
    params: {{n_dst: 9, n_src: 12, p: 0.3}}
entries:
  - name: faults
    systems: [crashing, stderr_flood, growing_file, huge_header, nan, correct, faulty_plugin]
    targets: [spmm]
    checks: differential
    graphs: fixed
)",
                                      adapter, GNNCHECK_TEST_FAULTY_PLUGIN);

  // No shell features beyond cd and the environment: TMPDIR and HOME point into the scratch tree so
  // that anything written there is seen. Python's bytecode caches are the interpreter's, not ours.
  const std::string command =
      fmt::format("cd '{}' && TMPDIR='{}' HOME='{}' PYTHONDONTWRITEBYTECODE=1 '{}' run '{}' --report report --jobs 2 2>&1",
                  work.string(), tmp.string(), home.string(), GNNCHECK_EXE, suite.string());
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  // 1: the faulty systems' expectations (pass) did not hold; the run itself went to the end.
  EXPECT_EQ(WEXITSTATUS(status), 1) << output;

  // Only the report directory was written.
  EXPECT_THAT(entries_of(work), ::testing::ElementsAre("report"));
  EXPECT_THAT(tree_of(tmp), ::testing::IsEmpty());
  EXPECT_THAT(tree_of(home), ::testing::IsEmpty());
  EXPECT_THAT(entries_of(suite_dir), ::testing::ElementsAre("faults.yaml"));

  const nlohmann::json report = nlohmann::json::parse(read_file(work / "report" / "report.json"));
  std::map<std::string, std::string> outcome_of, text_of;
  for (const auto& result : report.at("results")) {
    const std::string system = result.at("system").get<std::string>();
    outcome_of[system] = result.at("verdict").get<std::string>();
    text_of[system] = result.dump();
  }
  ASSERT_EQ(outcome_of.size(), 7u) << report.dump(1).substr(0, 4000);
  EXPECT_EQ(outcome_of["correct"], "pass");
  EXPECT_EQ(outcome_of["faulty_plugin"], "pass");  // random seeds: the plugin's faults need seeds 1-10
  for (const char* faulty : {"crashing", "stderr_flood", "growing_file", "huge_header"})
    EXPECT_EQ(outcome_of[faulty], "error") << faulty << ": " << text_of[faulty].substr(0, 2000);
  // A NaN where the exact result is finite is a wrong answer, not a broken system (PROTOCOL.md §5).
  EXPECT_EQ(outcome_of["nan"], "fail") << text_of["nan"].substr(0, 2000);
  EXPECT_THAT(text_of["crashing"], HasSubstr("signal 11"));
  EXPECT_THAT(text_of["crashing"], HasSubstr("about to dereference a null pointer"));  // the stderr tail
  EXPECT_THAT(text_of["stderr_flood"], HasSubstr("stderr flood: the adapter wrote more than 64.0 MiB"));
  EXPECT_THAT(text_of["stderr_flood"], HasSubstr("something is off"));
  EXPECT_LT(text_of["stderr_flood"].size(), 40'000u);  // the tail is bounded
  EXPECT_THAT(text_of["growing_file"], HasSubstr("output too large: the adapter wrote"));
  EXPECT_THAT(text_of["huge_header"], HasSubstr("output_y.npy"));
  EXPECT_THAT(text_of["nan"], HasSubstr("got nan"));
}

}  // namespace
}  // namespace gnncheck

// `gnncheck serve-system NAME` (what --sanitize starts under compute-sanitizer) answers over the
// protocol exactly what the built-in system answers in process; an unknown name never starts.
TEST(ServeSystem, ABuiltInSystemAnswersOverTheProtocolAsInProcess) {
  auto served = gnncheck::make_process_system(std::vector<std::string>{GNNCHECK_EXE, "serve-system", "cpu_float32"});
  ASSERT_TRUE(served->availability().available) << served->availability().reason;
  EXPECT_EQ(served->name(), "cpu_float32");
  EXPECT_TRUE(served->supports("spmm"));
  EXPECT_EQ(served->precision("spmm"), gnncheck::Precision::float32);
  const gnncheck::Case c = gnncheck::testing::revealing_case("spmm", 5);
  const gnncheck::Result over_protocol = served->evaluate(c);
  ASSERT_TRUE(over_protocol.ok()) << over_protocol.message;
  const gnncheck::Result in_process = gnncheck::make_cpu_float32_system()->evaluate(c);
  EXPECT_EQ(gnncheck::testing::max_abs_difference(over_protocol.outputs, in_process.outputs), 0.0);
  EXPECT_EQ(gnncheck::testing::max_abs_difference(over_protocol.gradients, in_process.gradients), 0.0);
  const auto end = gnncheck::stop_process_system(*served);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->exit_code, 0) << end->how;

  auto unknown = gnncheck::make_process_system(std::vector<std::string>{GNNCHECK_EXE, "serve-system", "no-such-system"});
  EXPECT_FALSE(unknown->availability().available);
  EXPECT_NE(unknown->availability().reason.find("unknown system"), std::string::npos) << unknown->availability().reason;
}
