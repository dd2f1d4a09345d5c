// The runner's one case loop end to end: a system with a failure planted at case k of N (a fixed
// family) and a bug replica on the random (shrinking) family each give one failing result whose
// counts stop at the failure, exactly one counterexample directory (case.json + system.json) that
// loads back and still fails, and a record that keeps the tolerance model — as do passing results.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "checks/checks.h"
#include "oracle/cpu_systems.h"
#include "properties/counterexample.h"
#include "reports/writers.h"
#include "suites/runner.h"
#include "suites/suite.h"

namespace gnncheck::suites {
namespace {

namespace fs = std::filesystem;

// The oracle, with every output off by one on the k-th distinct case seed it is given. The seeds
// seen are shared by every instance, so the saved case also fails on the fresh instance the runner
// re-runs it on.
struct PlantedSeeds {
  std::mutex mutex;
  std::vector<std::uint64_t> seen;
  int k = 0;
};
PlantedSeeds& planted() {
  static PlantedSeeds p;
  return p;
}

class PlantedAtCaseK final : public System {
 public:
  std::string name() const override { return "planted_at_case_k"; }
  bool supports(const std::string& target) const override { return oracle_->supports(target); }
  Precision precision(const std::string& target) const override { return oracle_->precision(target); }
  Result evaluate(const Case& c) override {
    Result r = oracle_->evaluate(c);
    std::lock_guard lock(planted().mutex);
    auto& seen = planted().seen;
    if (std::find(seen.begin(), seen.end(), c.seed) == seen.end()) seen.push_back(c.seed);
    const bool planted_case = seen.size() >= static_cast<std::size_t>(planted().k) && seen[planted().k - 1] == c.seed;
    if (planted_case)
      for (auto& [name, t] : r.outputs)
        for (index_t i = 0; i < t.size(); ++i) t.data()[i] += 1.0;
    return r;
  }

 private:
  std::unique_ptr<System> oracle_ = make_oracle_system();
};

struct SuiteRun {
  reports::RunReport report;
  fs::path dir;
};

SuiteRun run_suite_text(const std::string& name, const std::string& yaml, const SystemRegistry& registry) {
  const fs::path dir = fs::temp_directory_path() / ("gnncheck-case-loop-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  Suite suite = parse_suite(yaml, (dir / "suite.yaml").string());
  RunOptions options;
  options.report_dir = dir / "report";
  options.suite_argument = (dir / "suite.yaml").string();
  return {run_suite(suite, registry, options, nullptr), dir / "report"};
}

std::vector<fs::path> case_dirs(const fs::path& report) {
  std::vector<fs::path> out;
  if (!fs::exists(report / "cases")) return out;
  for (const auto& e : fs::directory_iterator(report / "cases")) out.push_back(e.path());
  return out;
}

TEST(CaseLoopRunner, PlantedFailureAtCaseKOfAFixedFamily) {
  constexpr int kCases = 8;
  for (int k : {1, 5}) {
    {
      std::lock_guard lock(planted().mutex);
      planted().seen.clear();
      planted().k = k;
    }
    SystemRegistry registry = SystemRegistry::with_builtins();
    SystemEntry entry;
    entry.name = "planted_at_case_k";
    entry.kind = SystemKind::builtin;
    entry.summary = "the oracle, wrong on its k-th case";
    entry.make = [] { return std::make_unique<PlantedAtCaseK>(); };
    entry.command_line_flag = "--system planted_at_case_k";
    registry.add(std::move(entry));
    const SuiteRun run = run_suite_text(fmt::format("fixed-{}", k), fmt::format(R"(name: planted
seed: 11
graphs:
  block:
    family: erdos_renyi
    params: {{n_dst: 6, n_src: 9, p: 0.4}}
entries:
  - name: planted
    systems: [planted_at_case_k, cpu_float32]
    targets: [spmm]
    checks: differential
    graphs: block
    cases: {}
)",
                                                                                  kCases),
                                   registry);
    ASSERT_EQ(run.report.results.size(), 2u);
    const reports::ResultRecord& failed = run.report.results[0];
    const reports::ResultRecord& passed = run.report.results[1];
    ASSERT_EQ(failed.system, "planted_at_case_k");
    EXPECT_EQ(failed.outcome, reports::Outcome::fail) << failed.message;
    // After the first failure the loop looks 8 cases ahead for a clearer one (properties/case_loop.h),
    // here to the family's end; the one failure leads.
    const int drawn = std::min(kCases, k + 8);
    EXPECT_EQ(failed.cases, drawn) << "the drawing ends 8 cases after the first failure, or at the family's end";
    EXPECT_EQ(failed.conclusive, drawn);
    EXPECT_EQ(failed.error_vs_bound.size(), static_cast<std::size_t>(drawn - 1)) << "the passing cases are plotted";
    EXPECT_FALSE(failed.tolerance_model.empty()) << "a failing record keeps how its bound was formed";
    EXPECT_EQ(passed.outcome, reports::Outcome::pass) << passed.message;
    EXPECT_EQ(passed.cases, kCases);
    EXPECT_FALSE(passed.tolerance_model.empty()) << "a passing record keeps how its bound was formed";
    // report.json says it for both.
    const nlohmann::json report = nlohmann::json::parse(reports::json_report(run.report));
    ASSERT_EQ(report["results"].size(), 2u);
    for (const auto& result : report["results"]) {
      EXPECT_TRUE(result["tolerance_model"].is_string());
      EXPECT_FALSE(result["tolerance_model"].get<std::string>().empty()) << result["verdict"];
    }

    const std::vector<fs::path> dirs = case_dirs(run.dir);
    ASSERT_EQ(dirs.size(), 1u) << "exactly one counterexample, for the failing result";
    EXPECT_EQ(fs::path(failed.counterexample).filename(), dirs[0].filename());
    EXPECT_TRUE(fs::exists(dirs[0] / "system.json"));
    EXPECT_EQ(failed.repro, fmt::format("gnncheck repro {}", dirs[0].string()));
    const properties::SavedCase saved = properties::load_counterexample(dirs[0]);
    EXPECT_EQ(saved.system, "planted_at_case_k");
    EXPECT_EQ(saved.provenance.rerun, failed.repro);
    PlantedAtCaseK again;
    EXPECT_EQ(checks::run_check(saved.check, again, saved.c).conclusion, checks::Conclusion::fail);
  }
}

TEST(CaseLoopRunner, AShrunkFailureOfTheRandomFamily) {
  const SuiteRun run = run_suite_text("random", R"(name: random
seed: 3
entries:
  - name: caught
    systems: [tcgnn_backward_uses_A]
    targets: [spmm]
    checks: [adjoint, differential]
    graphs: tiny
    cases: 30
    expect: caught
)",
                                 SystemRegistry::with_builtins());
  ASSERT_EQ(run.report.results.size(), 2u);
  std::set<std::string> recorded;
  for (const auto& r : run.report.results) {
    EXPECT_EQ(r.outcome, reports::Outcome::fail) << r.message;
    EXPECT_FALSE(r.tolerance_model.empty());
    EXPECT_EQ(r.message.rfind("Falsifiable after ", 0), 0u) << r.message;
    EXPECT_GE(r.cases, r.conclusive);
    recorded.insert(fs::path(r.counterexample).filename().string());
  }
  const std::vector<fs::path> dirs = case_dirs(run.dir);
  ASSERT_EQ(dirs.size(), 2u) << "one counterexample per failing result";
  for (const auto& dir : dirs) {
    EXPECT_TRUE(recorded.count(dir.filename().string())) << dir;
    const properties::SavedCase saved = properties::load_counterexample(dir);
    EXPECT_FALSE(saved.provenance.reproduce.empty()) << "RapidCheck's reproduce string is kept";
    EXPECT_EQ(saved.provenance.rerun, fmt::format("gnncheck repro {}", dir.string()));
    EXPECT_LE(saved.c.graph->n_dst(), 4) << "shrunk";
  }
}

}  // namespace
}  // namespace gnncheck::suites
