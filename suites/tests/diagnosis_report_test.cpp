// The diagnosis of a failure as a user and a CI meet it: `gnncheck run` writes it into report.json
// (field `diagnosis`), summary.md, index.html and the failure message; a passing result has none.
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "suites/tests/command_runner.h"

namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

const char* kSuite = R"(name: diagnosis
seed: 3
cases_per_property: 6
entries:
  - name: correct
    systems: cpu_float32
    targets: [spmm]
    checks: differential
  - name: a-for-at
    systems: tcgnn_backward_uses_A
    targets: [spmm, gcn]
    checks: [differential, adjoint]
    graphs: skewed
    expect: caught
  - name: wrongly-expected-to-pass
    description: a failure the run does not expect, which summary.md and index.html report in full
    systems: missing_eshuffle
    targets: [spmm_ve]
    checks: differential
    graphs: skewed
)";

TEST(DiagnosisReport, ReportJsonSummaryAndIndexCarryTheDiagnosisOfEveryFailure) {
  const fs::path dir = ::gnncheck::testing::scratch_folder("diagnosis-report-test", "run");
  {
    std::ofstream(dir / "suite.yaml") << kSuite;
  }
  const auto run = ::gnncheck::testing::run_command(
      fmt::format("'{}' run '{}' --report '{}' --progress plain 2>&1", GNNCHECK_EXE, (dir / "suite.yaml").string(),
                  (dir / "report").string()));
  const nlohmann::json report = nlohmann::json::parse(::gnncheck::testing::file_text(dir / "report" / "report.json"));
  int failures = 0, named = 0;
  for (const auto& r : report.at("results")) {
    ASSERT_TRUE(r.contains("diagnosis")) << r.dump();
    if (r.at("verdict") != "fail") {
      EXPECT_TRUE(r.at("diagnosis").is_null()) << r.dump();
      continue;
    }
    ++failures;
    const auto& d = r.at("diagnosis");
    ASSERT_FALSE(d.is_null()) << r.dump();
    EXPECT_EQ(d.at("matched"), true) << d.dump();
    EXPECT_EQ(d.at("bug_class"), r.at("system") == "missing_eshuffle" ? "missing_eshuffle" : "a_for_at") << d.dump();
    EXPECT_THAT(r.at("message").get<std::string>(), HasSubstr(d.at("text").get<std::string>()));
    named += d.at("matched").get<bool>() ? 1 : 0;
  }
  EXPECT_GE(failures, 5);
  EXPECT_EQ(named, failures);
  EXPECT_EQ(run.exit_code, 1) << run.output;  // the unexpected failure
  EXPECT_THAT(run.output, HasSubstr("Diagnosis: matches: edge values read in CSR order"));
  const std::string summary = ::gnncheck::testing::file_text(dir / "report" / "summary.md");
  EXPECT_THAT(summary, HasSubstr("| diagnosis |"));
  EXPECT_THAT(summary, HasSubstr("a_for_at ("));
  EXPECT_THAT(summary, HasSubstr("  - diagnosis: Diagnosis: matches: edge values read in CSR order"));
  const std::string html = ::gnncheck::testing::file_text(dir / "report" / "index.html");
  EXPECT_THAT(html, HasSubstr("<th>diagnosis</th>"));
  EXPECT_THAT(html, HasSubstr("a_for_at ("));
  EXPECT_THAT(html, HasSubstr("<p class='diagnosis'>Diagnosis: matches: edge values read in CSR order"));
  fs::remove_all(dir);
}

}  // namespace
