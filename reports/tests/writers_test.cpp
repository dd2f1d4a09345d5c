// Report writers: report.json round-trips and validates against its JSON Schema, every writer is a
// pure function of the report (same report, same bytes), and the tables say what happened.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "oracle/error.h"
#include "reports/report_tables.h"
#include "reports/writers.h"

namespace gnncheck::reports {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

RunReport sample_report() {
  RunReport run;
  run.gnncheck_version = "0.1.0";
  run.suite_name = "demo";
  run.suite_path = "suites/demo.yaml";
  run.seed = 18446744073709551557ull;  // near 2^64: seeds must survive JSON exactly
  run.started_utc = "2026-01-02T03:04:05Z";
  run.seconds = 1.25;
  run.systems = {{"oracle", "builtin", true, "", ""},
                 {"gpu", "gpu", false, "no CUDA device", ""},
                 {"tcgnn_backward_uses_A", "replica", true, "", "spmm backward computes A·ḡ instead of Aᵀ·ḡ"},
                 {"stale_attention", "replica", true, "", "reads the previous forward's softmax"}};
  ResultRecord pass{.system = "oracle", .target = "spmm", .check = "gradient", .precision = "float64",
                    .metric_name = "max |error| / bound", .metric = 0.02, .bound = 1.0, .seed = 7, .cases = 10,
                    .repro = "gnncheck check --system oracle --target spmm --check gradient --seed 7", .seconds = 0.5};
  pass.error_vs_bound = {{1e-15, 1e-13}, {0.0, 1e-12}, {3e-14, 2e-13}};
  ResultRecord skipped{.system = "gpu", .target = "spmm", .check = "differential", .outcome = Outcome::skipped,
                       .message = "system unavailable: no CUDA device"};
  ResultRecord caught{.system = "tcgnn_backward_uses_A", .target = "spmm", .check = "adjoint", .outcome = Outcome::fail,
                      .expectation = Expectation::caught, .precision = "float64", .metric_name = "relative adjoint gap",
                      .metric = std::numeric_limits<double>::infinity(), .bound = 1e-10, .seed = 9, .cases = 1,
                      .message = "⟨ȳ, J·u⟩ = 1.5 but ⟨Jᵀȳ, u⟩ = -0.25 <bad> & \"quoted\"",
                      .counterexample = "cases/tcgnn_backward_uses_A-spmm-adjoint"};
  ResultRecord missed{.system = "stale_attention", .target = "gat", .check = "differential", .outcome = Outcome::pass,
                      .expectation = Expectation::caught, .expectation_held = false, .metric = std::nan(""), .cases = 3};
  ResultRecord gate{.system = "oracle", .target = "gcn", .check = "accuracy", .outcome = Outcome::pass, .cases = 1};
  gate.curves = {{"oracle", {1.9, 1.5, 1.1, 0.8}}, {"cpu_float32", {1.9, 1.5, 1.1, 0.81}}};
  run.results = {pass, skipped, caught, missed, gate};
  return run;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::filesystem::path scratch_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / fmt::format("gnncheck-reports-test-{}-{}", name, ::getpid());
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(WritersTest, JsonRoundTripsEveryField) {
  const RunReport run = sample_report();
  const auto dir = scratch_dir("roundtrip");
  write_all(run, dir);
  const RunReport back = read_json_report(dir / "report.json");
  EXPECT_EQ(back.seed, run.seed);
  EXPECT_EQ(back.systems.size(), run.systems.size());
  ASSERT_EQ(back.results.size(), run.results.size());
  EXPECT_EQ(json_report(back), json_report(run)) << "reading and writing again gives the same document";
  EXPECT_TRUE(std::isinf(*back.results[2].metric));
  EXPECT_TRUE(std::isnan(*back.results[3].metric));
  EXPECT_EQ(back.results[4].curves[1].values[3], 0.81);
  std::filesystem::remove_all(dir);
}

TEST(WritersTest, JsonValidatesAgainstItsSchema) {
  const auto dir = scratch_dir("schema");
  write_all(sample_report(), dir);
  const std::string cmd = fmt::format("python3 '{0}/reports/tests/validate_report.py' '{0}/reports/report.schema.json' '{1}'",
                                      GNNCHECK_TEST_SOURCE_DIR, (dir / "report.json").string());
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::filesystem::remove_all(dir);
}

TEST(WritersTest, SchemaRejectsAReportMissingAField) {
  // The validator is not vacuous: drop a required field and it must refuse the file.
  const auto dir = scratch_dir("schema-neg");
  std::filesystem::create_directories(dir);
  std::string json = json_report(sample_report());
  const auto at = json.find("\"verdict\": \"pass\",");
  ASSERT_NE(at, std::string::npos);
  json.erase(at, std::string("\"verdict\": \"pass\",").size());
  std::ofstream(dir / "report.json") << json;
  const std::string cmd = fmt::format("python3 '{0}/reports/tests/validate_report.py' '{0}/reports/report.schema.json' '{1}' >/dev/null",
                                      GNNCHECK_TEST_SOURCE_DIR, (dir / "report.json").string());
  EXPECT_NE(std::system(cmd.c_str()), 0);
  std::filesystem::remove_all(dir);
}

TEST(WritersTest, SameReportSameBytes) {
  const auto a = scratch_dir("det-a"), b = scratch_dir("det-b");
  write_all(sample_report(), a);
  write_all(sample_report(), b);
  for (const char* f : {"report.json", "junit.xml", "summary.md", "index.html"}) EXPECT_EQ(read_file(a / f), read_file(b / f)) << f;
  std::filesystem::remove_all(a);
  std::filesystem::remove_all(b);
}

TEST(WritersTest, AReplicaThatCouldNotRunCaughtNothing) {
  // A required replica unavailable here: the runner records an error whose expectation is not met.
  // It is "not run" in the replica table, never "caught" (an error a replica produced by running —
  // a crash, an invalid answer — is still caught).
  RunReport run = sample_report();
  run.systems.push_back({"gpu-replica-8", "replica", false, "this build has no CUDA", "softmax without the row maximum"});
  run.results.push_back({.system = "gpu-replica-8", .target = "all", .check = "numerics", .outcome = Outcome::not_tested,
                         .expectation = Expectation::caught, .expectation_held = false,
                         .message = "system 'gpu-replica-8' is not available here: this build has no CUDA (required: nothing of "
                                    "this entry was tested)"});
  run.results.push_back({.system = "stale_attention", .target = "gat", .check = "state", .outcome = Outcome::error,
                         .expectation = Expectation::caught, .message = "the system crashed (SIGSEGV)"});
  for (const ReplicaRow& row : replica_rows(run)) {
    if (row.name == "gpu-replica-8") {
      EXPECT_FALSE(row.ran);
      EXPECT_FALSE(row.caught);
    }
    if (row.name == "stale_attention") {
      EXPECT_TRUE(row.caught) << "a crash is caught";
    }
  }
  EXPECT_THAT(markdown_summary(run), HasSubstr("| gpu-replica-8 | softmax without the row maximum | — | not run |"));
}

TEST(WritersTest, MarkdownHasTheMatrixAndTheReplicaTable) {
  const std::string md = markdown_summary(sample_report());
  EXPECT_THAT(md, HasSubstr("**1 expectation(s) not met**"));
  EXPECT_THAT(md, HasSubstr("### oracle\n\n| target | gradient | accuracy |\n|---|---|---|\n| spmm | pass 0.02 |  |\n| gcn |  | pass |"));
  EXPECT_THAT(md, HasSubstr("| tcgnn_backward_uses_A | spmm backward computes A·ḡ instead of Aᵀ·ḡ | adjoint | caught |"));
  EXPECT_THAT(md, HasSubstr("| stale_attention | reads the previous forward's softmax | — | **MISSED** |"));
  EXPECT_THAT(md, HasSubstr("1 of 2 replicas run were caught."));
  EXPECT_THAT(md, HasSubstr("| gpu | gpu | no: no CUDA device |"));
}

TEST(WritersTest, JunitCountsUnmetExpectationsAsFailuresAndEscapes) {
  const std::string xml = junit_xml(sample_report());
  EXPECT_THAT(xml, HasSubstr("<testsuites name=\"gnncheck demo\" tests=\"5\" failures=\"1\" skipped=\"1\""));
  EXPECT_THAT(xml, HasSubstr("<skipped message=\"skipped: system unavailable: no CUDA device\"/>"));
  EXPECT_THAT(xml, HasSubstr("<failure message=\"bug replica not caught\""));
  EXPECT_THAT(xml, HasSubstr("&lt;bad&gt; &amp; &quot;quoted&quot;"));
  EXPECT_THAT(xml, Not(HasSubstr("<bad>")));
}

// Nothing untested is green: every outcome but pass reads as what it is, in every writer, and
// only neutral ones (not applicable, skipped) keep the run's verdict.
TEST(WritersTest, EveryOutcomeIsShownAndOnlyPassPasses) {
  RunReport run = sample_report();
  run.results.clear();
  const std::vector<std::pair<Outcome, const char*>> outcomes = {
      {Outcome::pass, "pass"},           {Outcome::fail, "FAIL"},         {Outcome::error, "ERROR"},
      {Outcome::not_applicable, "n/a"}, {Outcome::inconclusive, "INCONCLUSIVE"}, {Outcome::not_tested, "NOT TESTED"},
      {Outcome::skipped, "skip"}};
  for (const auto& [outcome, cell] : outcomes) {
    ResultRecord r{.entry = "e", .system = "oracle", .target = std::string(to_string(outcome)), .check = "differential",
                   .outcome = outcome, .message = "why"};
    r.expectation_held = expectation_held(Expectation::pass, outcome);
    EXPECT_EQ(matrix_cell(r), cell);
    run.results.push_back(r);
  }
  EXPECT_TRUE(expectation_held(Expectation::pass, Outcome::pass));
  EXPECT_TRUE(expectation_held(Expectation::pass, Outcome::not_applicable));
  EXPECT_TRUE(expectation_held(Expectation::pass, Outcome::skipped));
  for (Outcome o : {Outcome::fail, Outcome::error, Outcome::inconclusive, Outcome::not_tested})
    EXPECT_FALSE(expectation_held(Expectation::pass, o)) << to_string(o);
  EXPECT_FALSE(expectation_held(Expectation::caught, Outcome::not_tested)) << "a replica that did not run caught nothing";
  const auto t = run.totals();
  EXPECT_EQ(t.expectations_unmet, 4);
  EXPECT_EQ(t.not_tested, 1);
  EXPECT_EQ(t.inconclusive, 1);
  EXPECT_EQ(t.not_applicable, 1);
  EXPECT_FALSE(run.all_expectations_held());
  const std::string md = markdown_summary(run);
  EXPECT_THAT(md, HasSubstr("| not tested | NOT TESTED |"));
  EXPECT_THAT(md, HasSubstr("1 inconclusive, 1 not tested, 1 not applicable, 1 skipped"));
  const std::string xml = junit_xml(run);
  EXPECT_THAT(xml, HasSubstr("<failure message=\"not tested\" type=\"not tested\">"));
  EXPECT_THAT(xml, HasSubstr("<failure message=\"inconclusive\" type=\"inconclusive\">"));
  EXPECT_THAT(xml, HasSubstr("<skipped message=\"not applicable: why\"/>"));
  for (Outcome o : all_outcomes()) EXPECT_EQ(parse_outcome(to_string(o)), o);
  const auto dir = scratch_dir("outcomes");
  write_all(run, dir);
  EXPECT_EQ(json_report(read_json_report(dir / "report.json")), json_report(run));
  std::filesystem::remove_all(dir);
}

TEST(WritersTest, AnInterruptedRunNeverHolds) {
  RunReport run = sample_report();
  run.results.resize(1);
  ASSERT_TRUE(run.all_expectations_held());
  run.interrupted_by = "SIGINT";
  EXPECT_FALSE(run.all_expectations_held());
  EXPECT_THAT(markdown_summary(run), HasSubstr("**Interrupted by SIGINT**"));
  EXPECT_THAT(html_report(run), HasSubstr("Interrupted by SIGINT"));
  EXPECT_THAT(json_report(run), HasSubstr("\"interrupted_by\": \"SIGINT\""));
}

// The same target and check in two entries are two test cases a CI dashboard keeps apart.
TEST(WritersTest, JunitNamesAreUniquePerEntry) {
  RunReport run = sample_report();
  run.results = {{.entry = "square", .system = "cpu_float32", .target = "spmm", .check = "differential"},
                 {.entry = "bipartite", .system = "cpu_float32", .target = "spmm", .check = "differential",
                  .outcome = Outcome::fail, .expectation_held = false}};
  const std::string xml = junit_xml(run);
  EXPECT_THAT(xml, HasSubstr("<testcase classname=\"demo.square.cpu_float32\" name=\"spmm.differential\""));
  EXPECT_THAT(xml, HasSubstr("<testcase classname=\"demo.bipartite.cpu_float32\" name=\"spmm.differential\""));
  const auto matrices = build_matrices(run);
  ASSERT_EQ(matrices.size(), 1u);
  EXPECT_EQ(matrices[0].targets, (std::vector<std::string>{"square · spmm", "bipartite · spmm"}));
}

TEST(WritersTest, HtmlIsSelfContainedWithPlots) {
  const std::string html = html_report(sample_report());
  EXPECT_THAT(html, HasSubstr("<svg"));
  EXPECT_THAT(html, HasSubstr("Accuracy gates: loss curves"));
  EXPECT_THAT(html, HasSubstr("class='plot margin-plot'"));
  EXPECT_THAT(html, HasSubstr("MISSED"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("http://cdn")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
}

TEST(WritersTest, MarkupEscapeCoversBothQuoteStylesAndControlCharacters) {
  // The HTML writer quotes attributes with ' (title='...'), JUnit with ": both must be escaped.
  EXPECT_EQ(markup_escape("a'b\"c<d>&e"), "a&apos;b&quot;c&lt;d&gt;&amp;e");
  EXPECT_EQ(markup_escape(std::string("x\x01y\tz")), "x?y\tz");
}

TEST(WritersTest, ReadingABadReportNamesTheField) {
  const auto dir = scratch_dir("bad");
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "report.json") << R"({"schema_version": 2, "gnncheck_version": 3})";
  try {
    read_json_report(dir / "report.json");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("report.json: gnncheck_version:"));
  }
  std::ofstream(dir / "report.json") << R"({"schema_version": 99})";
  EXPECT_THROW(read_json_report(dir / "report.json"), InputError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gnncheck::reports
