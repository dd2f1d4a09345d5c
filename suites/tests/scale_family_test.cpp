// The scale graph family: a suite entry that runs the scale check (scale/scale_check.h) gives one
// result per (system, target) — a correct system passes, the A-for-Aᵀ replica is caught — its fields
// are refused before anything runs with file:line:key, and its printed re-run line repeats exactly
// that result.
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "suites/runner.h"
#include "suites/suite.h"
#include "suites/system_registry.h"
#include "suites/tests/command_runner.h"

namespace gnncheck::suites {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using reports::Outcome;

// rmat:10 has 1,024 nodes and about 16,000 edges: a scale check of it takes well under a second.
const char* kSuite = R"(name: scale-family
seed: 5
graphs:
  big: {family: scale, graph: "rmat:10", rows: 64}
  big_logits: {family: scale, graph: "rmat:10,8", rows: 40, hub_edges: 2000, hub_sources: 600, magnitude: 3}
entries:
  - name: correct
    systems: cpu_float32
    checks: scale
    graphs: big
    targets: [spmm, gcn, {name: gat, attributes: {heads: 2, out_features: 3}}]
  - name: logits
    systems: cpu_float32
    checks: [scale]
    graphs: big_logits
    targets: [edge_softmax]
  - name: replica
    systems: tcgnn_backward_uses_A
    checks: scale
    graphs: big
    targets: [spmm]
    expect: caught
)";

struct SuiteRun {
  reports::RunReport report;
  fs::path suite_file;
};

SuiteRun run_text(const std::string& name, const std::string& yaml) {
  const fs::path dir = fs::temp_directory_path() / ("gnncheck-scale-family-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "suite.yaml";
  std::ofstream(file) << yaml;
  const Suite suite = load_suite(file);
  RunOptions options;
  options.suite_argument = file.string();
  return {run_suite(suite, SystemRegistry::with_builtins(), options, nullptr), file};
}

const reports::ResultRecord& result_of(const reports::RunReport& run, const std::string& entry, const std::string& target) {
  for (const auto& r : run.results)
    if (r.entry == entry && r.target == target) return r;
  throw std::runtime_error(fmt::format("no result for {} / {}", entry, target));
}

TEST(ScaleFamilyTest, CorrectSystemPassesAndTheReplicaIsCaught) {
  const SuiteRun run = run_text("run", kSuite);
  ASSERT_EQ(run.report.results.size(), 5u);
  for (const auto& r : run.report.results) {
    SCOPED_TRACE(r.entry + " / " + r.system + " / " + r.target + ": " + r.message);
    EXPECT_EQ(r.check, "scale");
    EXPECT_TRUE(r.expectation_held);
    EXPECT_EQ(r.cases, 1);
    ASSERT_TRUE(r.metric.has_value());
    ASSERT_TRUE(r.bound.has_value());
    EXPECT_FALSE(r.tolerance_model.empty());
    EXPECT_NE(r.seed, 0u);
    EXPECT_THAT(r.message, HasSubstr(r.outcome == Outcome::pass ? "worst: " : "system "));  // the worst element's values
    EXPECT_THAT(r.message, HasSubstr("exact "));
    EXPECT_THAT(r.message, HasSubstr("rows sampled"));
    EXPECT_THAT(r.repro, HasSubstr("gnncheck scale --system " + r.system + " --target " + r.target));
    EXPECT_THAT(r.repro, HasSubstr(fmt::format("--seed {}", r.seed)));
  }
  for (const char* target : {"spmm", "gcn", "gat"}) {
    const auto& r = result_of(run.report, "correct", target);
    EXPECT_EQ(r.outcome, Outcome::pass) << r.message;
    EXPECT_LE(*r.metric, *r.bound);
    EXPECT_EQ(r.conclusive, 1);
  }
  EXPECT_THAT(result_of(run.report, "correct", "gat").repro, HasSubstr("--out-features 3 --heads 2"));
  EXPECT_THAT(result_of(run.report, "logits", "edge_softmax").repro, HasSubstr("--hub-edges 2000 --hub-sources 600 --magnitude 3"));
  const auto& caught = result_of(run.report, "replica", "spmm");
  EXPECT_EQ(caught.outcome, Outcome::fail) << caught.message;
  EXPECT_GT(*caught.metric, *caught.bound);
  EXPECT_THAT(caught.repro, HasSubstr("--expect caught"));
}

// A replica is caught only by its own fault: a scale check that could not run on the suite's graph
// (a layer on a graph with more destinations than sources) is an error of the suite, not a catch.
TEST(ScaleFamilyTest, AnErrorOfTheSuiteCatchesNoReplica) {
  const fs::path dir = fs::temp_directory_path() / "gnncheck-scale-family-tall";
  fs::create_directories(dir);
  std::ofstream(dir / "tall.mtx") << "%%MatrixMarket matrix coordinate pattern general\n5 3 3\n1 1\n4 2\n5 3\n";
  const SuiteRun run = run_text("suite-error", R"(name: scale-suite-error
seed: 5
graphs:
  tall: {family: scale, graph: ")" + (dir / "tall.mtx").string() + R"(", rows: 5}
entries:
  - name: replica
    systems: tcgnn_backward_uses_A
    checks: scale
    graphs: tall
    targets: [gcn]
    expect: caught
)");
  ASSERT_EQ(run.report.results.size(), 1u);
  const auto& r = run.report.results[0];
  EXPECT_EQ(r.outcome, Outcome::error) << r.message;
  EXPECT_TRUE(r.error_not_of_the_system) << r.message;
  EXPECT_FALSE(r.expectation_held) << r.message;
  EXPECT_FALSE(run.report.all_expectations_held());
}

// The printed line, run as printed, repeats the same check: the same verdict, worst difference and bound.
TEST(ScaleFamilyTest, TheRerunLineRepeatsExactlyThatResult) {
  const SuiteRun run = run_text("rerun", kSuite);
  for (const auto& [entry, target] : {std::pair{"correct", "gat"}, std::pair{"replica", "spmm"}}) {
    const auto& r = result_of(run.report, entry, target);
    ASSERT_EQ(r.repro.rfind("gnncheck ", 0), 0u) << r.repro;
    const fs::path report = fs::temp_directory_path() / fmt::format("gnncheck-scale-family-rerun-{}", entry);
    fs::remove_all(report);
    const std::string line = fmt::format("'{}' {} --report '{}' 2>&1", GNNCHECK_EXE, r.repro.substr(9), report.string());
    const testing::CommandResult out = testing::run_command(line);
    EXPECT_EQ(out.exit_code, 0) << line << "\n" << out.output;  // the expectation held, as in the suite
    std::ifstream in(report / "report.json");
    ASSERT_TRUE(in) << out.output;
    const nlohmann::json j = nlohmann::json::parse(in);
    ASSERT_EQ(j.at("results").size(), 1u);
    const auto& again = j.at("results")[0];
    EXPECT_EQ(again.at("verdict").get<std::string>(), std::string(reports::to_string(r.outcome)));
    EXPECT_EQ(again.at("seed").get<std::uint64_t>(), r.seed);
    EXPECT_EQ(again.at("metric").get<double>(), *r.metric);  // exactly: the same case
    EXPECT_EQ(again.at("bound").get<double>(), *r.bound);
    EXPECT_EQ(again.at("repro").get<std::string>(), r.repro);
  }
}

// A GPU system on a Kronecker graph: the suite generates the graph on the device, as the printed
// `gnncheck scale` line does (suites/scale_where_system_runs.h), so the line repeats the result.
TEST(ScaleFamilyTest, AGpuSystemOnKroneckerRunsWhereItsRerunLineRuns) {
  const auto registry = SystemRegistry::with_builtins();
  if (!registry.contains("gpu") || !registry.find("gpu").availability.available)
    GTEST_SKIP() << "needs the `gpu` system (a CUDA build and a device): "
                 << (registry.contains("gpu") ? registry.find("gpu").availability.reason : "not built with CUDA");
  const SuiteRun run = run_text("gpu", R"(name: scale-family-gpu
seed: 9
graphs:
  kron: {family: scale, graph: "kronecker:12", rows: 64}
entries:
  - {name: gpu, systems: gpu, checks: scale, graphs: kron, targets: [spmm, gcn]}
)");
  for (const char* target : {"spmm", "gcn"}) {
    const auto& r = result_of(run.report, "gpu", target);
    EXPECT_EQ(r.outcome, Outcome::pass) << r.message;
    // The device path's graph summary ("N × N, E edges"; a host graph says "Graph N×N, …").
    EXPECT_THAT(r.message, HasSubstr("graph kronecker:12: 4096 × 4096, ")) << r.message;
    const std::string line = fmt::format("'{}' {} 2>&1", GNNCHECK_EXE, r.repro.substr(9));
    const testing::CommandResult out = testing::run_command(line);
    EXPECT_EQ(out.exit_code, 0) << line << "\n" << out.output;
    EXPECT_THAT(out.output, HasSubstr("generated on the device")) << out.output;
  }
}

// Each mistake is refused before anything runs, naming the file, the line and the key.
TEST(ScaleFamilyTest, BadFieldsAreNamed) {
  auto refused = [](const std::string& graphs, const std::string& entry) {
    const std::string yaml = fmt::format("name: bad\ngraphs:\n{}entries:\n{}", graphs, entry);
    try {
      run_text("bad", yaml);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  const std::string ok_graph = "  big: {family: scale, graph: \"rmat:8\"}\n";
  const std::string ok_entry = "  - {name: e, systems: cpu_float32, checks: scale, graphs: big, targets: [spmm]}\n";
  EXPECT_THAT(refused("  big: {family: scale, graph: \"rmat:x\"}\n", ok_entry), HasSubstr("suite.yaml:3: graphs.big.graph: --graph 'rmat:x'"));
  EXPECT_THAT(refused("  big: {family: scale, graph: no_such.mtx}\n", ok_entry), HasSubstr("suite.yaml:3: graphs.big.graph: --graph"));
  EXPECT_THAT(refused("  big: {family: scale}\n", ok_entry), HasSubstr("suite.yaml:3: graphs.big: family 'scale' needs 'graph'"));
  EXPECT_THAT(refused("  big: {family: scale, graph: \"rmat:8\", rows: 0}\n", ok_entry),
              HasSubstr("suite.yaml:3: graphs.big.rows: expected a positive integer, got '0'"));
  EXPECT_THAT(refused("  big: {family: scale, graph: \"rmat:8\", hub_sources: 0}\n", ok_entry),
              HasSubstr("suite.yaml:3: graphs.big.hub_sources: expected a positive integer"));
  EXPECT_THAT(refused("  big: {family: rmat, hub_sources: 9}\n", ok_entry),
              HasSubstr("graphs.big.hub_sources: 'hub_sources' applies to family scale only"));
  EXPECT_THAT(refused("  big: {family: scale, graph: \"rmat:8\", magnitude: -1}\n", ok_entry),
              HasSubstr("suite.yaml:3: graphs.big.magnitude: expected a positive finite number"));
  EXPECT_THAT(refused("  big: {family: scale, graph: \"rmat:8\", max_nodes: 9}\n", ok_entry),
              HasSubstr("suite.yaml:3: graphs.big.max_nodes: 'max_nodes' does not apply to family scale"));
  EXPECT_THAT(refused("  big: {family: rmat, rows: 9}\n", ok_entry), HasSubstr("graphs.big.rows: 'rows' applies to family scale only"));
  EXPECT_THAT(refused(ok_graph, "  - {name: e, systems: cpu_float32, checks: scale, graphs: big, targets: [eshuffle]}\n"),
              HasSubstr("suite.yaml:5: entry 'e': targets[0]: the scale check supports the targets spmm,"));
  EXPECT_THAT(refused(ok_graph, "  - {name: e, systems: cpu_float32, checks: scale, graphs: big}\n"),
              HasSubstr("targets[0]: the scale check supports the targets spmm, spmm_ve, sddmm_dot, sddmm_add, edge_softmax, "
                        "normalized_spmm, attention, sddmm_spmm, gcn, gin, gat, sage, agnn, gine, gatv2; got 'all' (a scale entry names its targets)"));
  EXPECT_THAT(refused(ok_graph, "  - {name: e, systems: cpu_float32, checks: scale, graphs: big,\n"
                                "     targets: [{name: gat, attributes: {attn_dropout: 0.5}}]}\n"),
              HasSubstr("suite.yaml:6: entry 'e': targets[0]: target 'gat' with attn_dropout > 0"));
  EXPECT_THAT(refused(ok_graph, "  - {name: e, systems: cpu_float32, checks: scale, graphs: big,\n"
                                "     targets: [{name: gat, attributes: {heads: [1, 2]}}]}\n"),
              HasSubstr("attribute 'heads': a scale entry checks one configuration per target; expected one value, got 2"));
  EXPECT_THAT(refused(ok_graph, "  - {name: e, systems: cpu_float32, checks: [scale, adjoint], graphs: big, targets: [spmm]}\n"),
              HasSubstr("suite.yaml:5: entry 'e': checks: a scale graph family ('big') is checked by the scale check alone"));
  EXPECT_THAT(refused(ok_graph, "  - {name: e, systems: cpu_float32, checks: scale, graphs: small, targets: [spmm]}\n"),
              HasSubstr("suite.yaml:5: entry 'e': the scale check runs on a graph family of family scale (graphs: small is 'random')"));
}

}  // namespace
}  // namespace gnncheck::suites
