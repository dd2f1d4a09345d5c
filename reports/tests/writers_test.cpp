// Report writers: report.json round-trips and validates against its JSON Schema, every writer is a
// pure function of the report (same report, same bytes), and the tables say what happened.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
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
  caught.counterexample_case = CounterexampleCase{.n_dst = 2, .n_src = 3, .n_edges = 2, .edges = {{0, 2}, {1, 1}}};
  caught.counterexample_case->element = CounterexampleElement{.tensor = "gradient x", .index = {2, 0}, .place = ElementPlace::source,
                                                              .mark = 2, .got = -1, .expected = std::numeric_limits<double>::infinity(),
                                                              .bound = 1e-300};
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

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
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
  ASSERT_TRUE(back.results[2].counterexample_case);
  EXPECT_EQ(back.results[2].counterexample_case->edges, run.results[2].counterexample_case->edges);
  EXPECT_EQ(back.results[2].counterexample_case->element->place, ElementPlace::source);
  EXPECT_TRUE(std::isinf(back.results[2].counterexample_case->element->expected));
  EXPECT_FALSE(back.results[0].counterexample_case);
  std::filesystem::remove_all(dir);
}

TEST(WritersTest, AReportWrittenBeforeCounterexampleCaseStillReads) {
  // counterexample_case is optional in schema version 2: a report without it reads, and validates.
  const auto dir = scratch_dir("no-case");
  std::filesystem::create_directories(dir);
  std::string json = json_report(sample_report());
  for (std::size_t at; (at = json.find(",\n      \"counterexample_case\": null")) != std::string::npos;)
    json.erase(at, std::string(",\n      \"counterexample_case\": null").size());
  ASSERT_EQ(json.find("\"counterexample_case\": null"), std::string::npos);
  std::ofstream(dir / "report.json") << json;
  const RunReport back = read_json_report(dir / "report.json");
  EXPECT_FALSE(back.results[0].counterexample_case);
  EXPECT_TRUE(back.results[2].counterexample_case);
  const std::string cmd = fmt::format("python3 '{0}/reports/tests/validate_report.py' '{0}/reports/report.schema.json' '{1}' >/dev/null",
                                      GNNCHECK_TEST_SOURCE_DIR, (dir / "report.json").string());
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::filesystem::remove_all(dir);
}

// A bug replica run as the system under test (`--system tcgnn_backward_uses_A`): its results
// expect pass, so it gets a matrix and a margin plot, and each failure its counterexample as text.
RunReport replica_under_test() {
  RunReport run;
  run.suite_name = "ci";
  run.systems = {{"tcgnn_backward_uses_A", "replica", true, "", "A for Aᵀ"}};
  ResultRecord fail{.entry = "differential", .system = "tcgnn_backward_uses_A", .target = "spmm", .check = "differential",
                    .outcome = Outcome::fail, .expectation_held = false, .metric = 1.0, .bound = 1e-15, .cases = 5,
                    .message = "differential check FAILED", .counterexample = "cases/tcgnn_backward_uses_A-spmm-differential-7",
                    .repro = "gnncheck repro /tmp/r/cases/tcgnn_backward_uses_A-spmm-differential-7"};
  fail.error_vs_bound = {{0.0, 1e-12}, {1e-14, 1e-12}};
  fail.counterexample_case = CounterexampleCase{.n_dst = 2, .n_src = 2, .n_edges = 1, .edges = {{0, 1}}};
  fail.counterexample_case->element = CounterexampleElement{.tensor = "gradient x", .index = {0, 0}, .place = ElementPlace::source,
                                                            .mark = 0, .got = -1, .expected = 0, .bound = 9.88e-324};
  ResultRecord pass{.entry = "differential", .system = "tcgnn_backward_uses_A", .target = "spmm", .check = "adjoint", .metric = 0.1,
                    .bound = 1.0, .cases = 2};
  pass.error_vs_bound = {{0.1, 1.0}, {0.01, 1.0}};
  run.results = {fail, pass};
  return run;
}

TEST(WritersTest, MarkdownCarriesTheCounterexampleAsText) {
  const std::string md = markdown_summary(replica_under_test());
  EXPECT_THAT(md, HasSubstr("### tcgnn_backward_uses_A\n\n| target | differential | adjoint |\n|---|---|---|\n| spmm | FAIL | pass 0.1 |"));
  EXPECT_THAT(md, HasSubstr("  - graph: 2 × 2 (square), 1 edge; edges (destination ← source, in edge-id order): e0 0←1\n"));
  EXPECT_THAT(md, HasSubstr("  - failing element: gradient x [0, 0] at node 0: got -1, expected 0, bound 9.88e-324\n"));
  EXPECT_THAT(md, HasSubstr("  - re-run: `gnncheck repro /tmp/r/cases/tcgnn_backward_uses_A-spmm-differential-7`"));
}

TEST(WritersTest, HtmlDrawsTheCounterexampleAndLinksTheFailingCellToIt) {
  const RunReport run = replica_under_test();
  const std::string html = html_report(run);
  EXPECT_THAT(html, HasSubstr("<div class='failure' id='result-0'>"));
  EXPECT_THAT(html, HasSubstr("<td class='c-fail' title='"));
  EXPECT_THAT(html, HasSubstr("'><a href='#result-0'>FAIL</a></td>"));
  EXPECT_THAT(html, HasSubstr("<svg class='graph'"));
  EXPECT_THAT(html, HasSubstr("<a href='cases/tcgnn_backward_uses_A-spmm-differential-7/graph.mtx'>graph.mtx</a>"));
  EXPECT_THAT(html, HasSubstr("class='plot margin-plot'")) << "a replica under test gets its margin plot";
  EXPECT_THAT(html, HasSubstr("<td class='c-pass' title='pass (metric 0.1, bound 1) \n'>pass 0.1</td>"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  // Every table scrolls inside its own box rather than widening the page.
  EXPECT_EQ(count_of(html, "<table"), count_of(html, "<div class='tablebox'><table"));
}

TEST(WritersTest, HtmlGivesEveryOutcomeItsOwnStyleAndExplainsItInTheLegend) {
  RunReport run;
  std::map<std::string, Outcome> by_class = {{"c-pass", Outcome::pass},           {"c-fail", Outcome::fail},
                                             {"c-error", Outcome::error},         {"c-na", Outcome::not_applicable},
                                             {"c-inconclusive", Outcome::inconclusive}, {"c-not-tested", Outcome::not_tested},
                                             {"c-skip", Outcome::skipped}};
  for (const auto& [cls, outcome] : by_class)
    run.results.push_back({.system = "oracle", .target = std::string(to_string(outcome)), .check = "differential", .outcome = outcome,
                           .expectation_held = expectation_held(Expectation::pass, outcome)});
  const std::string html = html_report(run);
  std::set<std::string> rules;
  for (const auto& [cls, outcome] : by_class) {
    EXPECT_THAT(html, HasSubstr(fmt::format("<td class='{}'", cls))) << cls;
    EXPECT_THAT(html, HasSubstr(fmt::format("<span class='chip {}'>", cls))) << "the legend line shows " << cls;
    // Each class has its own CSS rule (the pass style is shared only with a replica's "caught").
    const std::size_t at = html.find("." + cls + "{");
    const std::size_t shared = html.find("." + cls + ",");
    ASSERT_TRUE(at != std::string::npos || shared != std::string::npos) << cls;
    const std::size_t from = at != std::string::npos ? at : shared;
    rules.insert(html.substr(html.find('{', from), html.find('}', from) - html.find('{', from)));
  }
  EXPECT_EQ(rules.size(), by_class.size()) << "no two outcomes look alike";
}

TEST(WritersTest, JsonValidatesAgainstItsSchema) {
  const auto dir = scratch_dir("schema");
  write_all(sample_report(), dir);
  const std::string cmd = fmt::format("python3 '{0}/reports/tests/validate_report.py' '{0}/reports/report.schema.json' '{1}'",
                                      GNNCHECK_TEST_SOURCE_DIR, (dir / "report.json").string());
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::filesystem::remove_all(dir);
}

TEST(WritersTest, AShareOfTheCasesIsNamedEverywhereAndValidates) {
  RunReport run = sample_report();
  run.share = RunShare{3, 8};
  const auto dir = scratch_dir("share");
  write_all(run, dir);
  const RunReport back = read_json_report(dir / "report.json");
  ASSERT_TRUE(back.share);
  EXPECT_EQ(back.share->part, 3);
  EXPECT_EQ(back.share->of, 8);
  EXPECT_EQ(json_report(back), json_report(run));
  const std::string seed = fmt::format("seed {}, share 3/8", run.seed);
  EXPECT_NE(read_file(dir / "summary.md").find(seed), std::string::npos) << read_file(dir / "summary.md");
  EXPECT_NE(read_file(dir / "index.html").find(seed), std::string::npos);
  EXPECT_EQ(read_file(dir / "report.json").find("\"share\":null"), std::string::npos);
  const auto whole = scratch_dir("noshare");
  write_all(sample_report(), whole);
  EXPECT_FALSE(read_json_report(whole / "report.json").share);
  EXPECT_EQ(read_file(whole / "summary.md").find("share"), std::string::npos);
  std::filesystem::remove_all(whole);
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

TEST(WritersTest, AReplicaThatCouldNotRunOrCrashedCaughtNothing) {
  // A required replica unavailable here: the runner records an error whose expectation is not met.
  // It is "not run" in the replica table, never "caught". An error a replica produced by running —
  // a crash, an unreadable answer — is a broken system: it ran, and caught nothing.
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
      EXPECT_TRUE(row.ran);
      EXPECT_FALSE(row.caught) << "a crash is no wrong answer found";
    }
  }
  EXPECT_THAT(markdown_summary(run), HasSubstr("| gpu-replica-8 | softmax without the row maximum | — | not run |"));
}

// `--expect caught` marks every result of the named system met once any entry caught it; the
// headline counts only the entries where a check failed on it. It used to count entries whose
// results only passed or errored as caught ("9 of 9 caught" for a bug two entries errored on).
TEST(WritersTest, TotalsCountAReplicaCaughtOnlyInEntriesWhereACheckFailed) {
  RunReport run;
  auto result = [](std::string entry, Outcome outcome) {
    return ResultRecord{.entry = std::move(entry), .system = "planted", .target = "spmm", .check = "differential",
                        .outcome = outcome, .expectation = Expectation::caught, .expectation_held = true};
  };
  run.results = {result("differential", Outcome::fail), result("differential", Outcome::pass),
                 result("state", Outcome::error), result("metamorphic", Outcome::pass)};
  const auto t = run.totals();
  EXPECT_EQ(t.replicas_caught, 1);
  EXPECT_EQ(t.replicas_missed, 2);
  EXPECT_THAT(totals_sentence(t), HasSubstr("bug replicas: 1 of 3 caught"));
  EXPECT_FALSE(expectation_held(Expectation::caught, Outcome::error)) << "an error catches nothing";
  EXPECT_TRUE(expectation_held(Expectation::caught, Outcome::fail));
}

// A GPU replica on a machine without a GPU is skipped in each entry it is listed in: the headline
// counted those entries as caught ("24 of 24" where 5 had only been skipped). Counts never include
// what did not run.
TEST(WritersTest, TotalsLeaveOutReplicaEntriesThatWereOnlySkipped) {
  RunReport run;
  auto result = [](std::string system, std::string entry, Outcome outcome) {
    return ResultRecord{.entry = std::move(entry), .system = std::move(system), .target = "spmm",
                        .check = "differential", .outcome = outcome, .expectation = Expectation::caught,
                        .expectation_held = true};
  };
  run.results = {result("tcgnn_backward_uses_A", "replicas-caught", Outcome::fail),
                 result("gpu-replica-1", "replicas-caught-gpu", Outcome::skipped),
                 result("gpu-replica-5", "replicas-caught-gpu", Outcome::skipped),
                 result("gpu-replica-5", "replicas-caught-gpu", Outcome::not_applicable)};
  const auto t = run.totals();
  EXPECT_EQ(t.replicas_caught, 1);
  EXPECT_EQ(t.replicas_missed, 0);
  EXPECT_THAT(totals_sentence(t), HasSubstr("bug replicas: 1 of 1 caught"));
}

TEST(WritersTest, AReplicaExpectedToPassIsNotJudgedAsCaughtOrMissed) {
  // A replica whose fault no check can see (a race only a sanitizer shows) runs in an entry that
  // expects pass, to prove exactly that: the replica table, which says caught or MISSED, leaves it out.
  RunReport run = sample_report();
  run.systems.push_back({"gpu-replica-racy", "replica", true, "", "shared-memory reduction without __syncwarp"});
  run.results.push_back({.system = "gpu-replica-racy", .target = "spmm", .check = "differential", .outcome = Outcome::pass,
                         .expectation = Expectation::pass, .expectation_held = true});
  for (const ReplicaRow& row : replica_rows(run)) EXPECT_NE(row.name, "gpu-replica-racy");
  EXPECT_THAT(markdown_summary(run), Not(HasSubstr("| gpu-replica-racy | shared-memory reduction")));
  run.results.push_back({.system = "gpu-replica-racy", .target = "every target", .check = "sanitize_racecheck",
                         .outcome = Outcome::fail, .expectation = Expectation::caught, .expectation_held = true});
  bool listed = false;
  for (const ReplicaRow& row : replica_rows(run))
    if (row.name == "gpu-replica-racy") {
      listed = true;
      EXPECT_TRUE(row.caught);
      EXPECT_EQ(row.caught_by, std::vector<std::string>{"sanitize_racecheck"});
    }
  EXPECT_TRUE(listed) << "an entry that expects it caught judges it";
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
