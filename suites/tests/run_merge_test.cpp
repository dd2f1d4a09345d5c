// A run split into shards (`gnncheck run --share P/K`) and merged (`gnncheck report merge`) gives
// the whole run's report: the same results, counts, worst errors, verdicts, failures and
// counterexamples. And a merge never hides what is missing or mixes runs.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "reports/writers.h"
#include "suites/planner.h"
#include "suites/run_merge.h"
#include "suites/runner.h"
#include "suites/suite.h"
#include "suites/task.h"

namespace gnncheck::suites {
namespace {

namespace fs = std::filesystem;

// Tasks of 1 to 4 chunks on random (shrinking) and fixed families, a replica whose failure ends its
// task's drawing, tasks decided before running (not applicable) and one whose inconclusive cases
// fall in several chunks (their causes are merged): every way a unit can fall.
constexpr const char* kSplitSuite = R"(name: split
seed: 3
cases_per_property: 8
entries:
  - name: long-checks
    systems: cpu_float32
    targets: [spmm, gcn, spmm_ve]
    checks: [differential, adjoint, op_order]
    graphs: tiny
    cases: 150
  - name: replica
    systems: tcgnn_backward_uses_A
    targets: [spmm]
    checks: [adjoint, differential]
    graphs: tiny
    cases: 200
    expect: caught
  - name: fixed-family
    systems: cpu_float32
    targets: [spmm]
    checks: differential
    graphs: skewed
    cases: 70
  - name: inconclusive-cases
    systems: cpu_float16_float32_sums
    targets: [sddmm_dot]
    checks: adjoint
    cases: 200
  - name: moved-cases
    systems: cpu_bfloat16_float32_sums
    targets: [gat]
    checks: differential
    cases: 200
)";

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("gnncheck-run-merge-{}-{}", ::getpid(), name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

Suite split_suite(const fs::path& dir) {
  const fs::path path = dir / "split.yaml";
  std::ofstream(path) << kSplitSuite;
  Suite suite = load_suite(path.string());
  suite.time_budget_seconds = 0.0;
  return suite;
}

// Runs the suite (one shard of it when share is set) and writes its report to `report`, as the command does.
reports::RunReport run_to(const Suite& suite, const fs::path& report, std::optional<CaseShare> share) {
  RunOptions options;
  options.report_dir = report;
  options.suite_argument = "split";
  options.jobs = 2;
  if (share) {
    options.share = *share;
    options.sharded = true;
  }
  reports::RunReport run = run_suite(suite, SystemRegistry::with_builtins(), options, nullptr);
  reports::write_all(run, report);
  return reports::read_json_report(report / "report.json");  // the merge reads shards back from disk
}

// report.json without timings, with the report directory's path written as DIR.
nlohmann::json comparable(const reports::RunReport& run, const fs::path& dir) {
  std::string text = reports::json_report(run);
  for (auto at = text.find(dir.string()); at != std::string::npos; at = text.find(dir.string()))
    text.replace(at, dir.string().size(), "DIR");
  nlohmann::json j = nlohmann::json::parse(text);
  j.erase("seconds");
  j.erase("started_utc");
  for (auto& r : j["results"]) r.erase("seconds");
  return j;
}

TEST(RunMerge, SplitIntoOneThreeOrSevenShardsAndMergedGivesTheWholeRun) {
  const fs::path dir = scratch("same");
  const Suite suite = split_suite(dir);
  const reports::RunReport whole = run_to(suite, dir / "whole", std::nullopt);
  const nlohmann::json expected = comparable(whole, dir / "whole");
  ASSERT_GE(whole.results.size(), 10u);
  EXPECT_TRUE(whole.all_expectations_held());
  EXPECT_TRUE(std::any_of(whole.results.begin(), whole.results.end(), [](const auto& r) { return r.cases > kCasesPerChunk; }))
      << "some task should span chunks";
  EXPECT_TRUE(std::any_of(whole.results.begin(), whole.results.end(), [](const auto& r) { return !r.counterexample.empty(); }))
      << "the replica should leave a counterexample";
  EXPECT_TRUE(std::any_of(whole.results.begin(), whole.results.end(),
                          [](const auto& r) { return r.message.find(" inconclusive (") != std::string::npos; }))
      << "some task should have inconclusive cases, listed by cause";
  EXPECT_TRUE(std::any_of(whole.results.begin(), whole.results.end(), [](const auto& r) {
    return r.message.find(" with the logits scaled within the softmax analysis)") != std::string::npos;
  })) << "some task should have cases compared moved within the softmax analysis, counted";
  for (int of : {1, 3, 7}) {
    std::vector<ShardReport> shards;
    for (int part = 1; part <= of; ++part) {
      const fs::path shard = dir / fmt::format("shard-{}-of-{}", part, of);
      shards.push_back({shard, run_to(suite, shard, CaseShare{part, of})});
    }
    const fs::path merged_dir = dir / fmt::format("merged-{}", of);
    const reports::RunReport merged = merge_shard_reports(shards, merged_dir);
    EXPECT_EQ(comparable(merged, merged_dir), expected) << of << " shards";
    for (const auto& r : merged.results) {
      if (!r.counterexample.empty()) {
        EXPECT_TRUE(fs::exists(merged_dir / r.counterexample / "case.json")) << r.counterexample;
      }
    }
  }
  fs::remove_all(dir);
}

TEST(RunMerge, PlotPointsStopAfterTheFirstPlottedChunksWhateverTheCaseCountSplitOrWhole) {
  const fs::path dir = scratch("plotted");
  const fs::path path = dir / "many.yaml";
  std::ofstream(path) << "name: many\nseed: 4\nentries:\n  - {name: many, systems: cpu_float32, targets: [spmm], checks: "
                         "[differential], graphs: tiny, cases: 1200}\n";
  Suite suite = load_suite(path.string());
  suite.time_budget_seconds = 0.0;
  const reports::RunReport whole = run_to(suite, dir / "whole", std::nullopt);
  ASSERT_EQ(whole.results.size(), 1u);
  EXPECT_EQ(whole.results[0].cases, 1200);
  // One point per conclusive case of the first chunks (a tiny graph may leave a case without one).
  EXPECT_LE(whole.results[0].error_vs_bound.size(), static_cast<std::size_t>(kPlottedChunks * kCasesPerChunk))
      << "a report plots the first chunks' cases only, so its size does not grow with the case count";
  EXPECT_GT(whole.results[0].error_vs_bound.size(), static_cast<std::size_t>((kPlottedChunks - 1) * kCasesPerChunk));
  std::vector<ShardReport> shards;
  for (int part = 1; part <= 3; ++part) {
    const fs::path shard = dir / fmt::format("shard-{}", part);
    shards.push_back({shard, run_to(suite, shard, CaseShare{part, 3})});
  }
  EXPECT_EQ(comparable(merge_shard_reports(shards, dir / "merged"), dir / "merged"), comparable(whole, dir / "whole"));
  fs::remove_all(dir);
}

TEST(RunMerge, AMissingShardLeavesWhatItHeldNotTestedNamingItAndDropsNothing) {
  const fs::path dir = scratch("missing");
  const Suite suite = split_suite(dir);
  std::vector<ShardReport> shards;
  for (int part : {1, 3}) shards.push_back({dir / std::to_string(part), run_to(suite, dir / std::to_string(part), CaseShare{part, 3})});
  const reports::RunReport merged = merge_shard_reports(shards, dir / "merged");
  const reports::RunReport whole = run_to(suite, dir / "whole", std::nullopt);
  ASSERT_EQ(merged.results.size(), whole.results.size()) << "every task of the plan is in the merged report";
  int missing = 0;
  for (const auto& r : merged.results)
    if (r.outcome == reports::Outcome::not_tested) {
      ++missing;
      EXPECT_NE(r.message.find("shard 2/3"), std::string::npos) << r.message;
    }
  EXPECT_GT(missing, 0);
  EXPECT_FALSE(merged.all_expectations_held());
  fs::remove_all(dir);
}

TEST(RunMerge, ShardsOfDifferentSeedsOrShardCountsOrOneGivenTwiceAreRefusedNamingThem) {
  const fs::path dir = scratch("refused");
  const Suite suite = split_suite(dir);
  const reports::RunReport a = run_to(suite, dir / "a", CaseShare{1, 2});
  reports::RunReport b = run_to(suite, dir / "b", CaseShare{2, 2});
  auto refusal = [&](const std::vector<ShardReport>& shards) {
    try {
      merge_shard_reports(shards, dir / "merged");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("merged");
  };
  reports::RunReport other_seed = b;
  other_seed.seed = 4;
  EXPECT_NE(refusal({{dir / "a", a}, {dir / "b", other_seed}}).find("seed 3"), std::string::npos);
  EXPECT_NE(refusal({{dir / "a", a}, {dir / "b", other_seed}}).find((dir / "b" / "report.json").string()), std::string::npos);
  reports::RunReport other_version = b;
  other_version.gnncheck_version = "0.0.0-other";
  EXPECT_NE(refusal({{dir / "a", a}, {dir / "b", other_version}}).find("gnncheck version"), std::string::npos);
  reports::RunReport other_suite = b;
  other_suite.suite_name = "another";
  EXPECT_NE(refusal({{dir / "a", a}, {dir / "b", other_suite}}).find("suite"), std::string::npos);
  EXPECT_NE(refusal({{dir / "a", a}, {dir / "a2", a}}).find("shard 1/2 given twice"), std::string::npos);
  reports::RunReport whole = b;
  whole.share.reset();
  EXPECT_NE(refusal({{dir / "a", a}, {dir / "w", whole}}).find("not a shard"), std::string::npos);
  fs::remove_all(dir);
}

// A record of one task (entry e, system s) cut into `of` chunks, none of them run yet.
reports::ResultRecord chunked_record(const std::string& target, const std::string& check, std::int64_t of) {
  reports::ResultRecord r;
  r.entry = "e";
  r.system = "s";
  r.target = target;
  r.check = check;
  r.chunked = reports::ChunkedCases{.of = of};
  return r;
}

// A failure in a later chunk leads; chunks after it are not counted, whichever shard ran them.
TEST(RunMerge, TheFirstChunkThatEndsTheDrawingLeadsAndLaterChunksAreNotCounted) {
  auto part = [](std::vector<std::int64_t> chunks, std::int64_t ended_at) {
    reports::ResultRecord r = chunked_record("spmm", "differential", 4);
    for (auto j : chunks) {
      r.chunked->ran.push_back({.index = j, .drawn = 64, .conclusive = 64, .points = 1});
      r.error_vs_bound.push_back({static_cast<double>(j), 10.0});
    }
    if (ended_at >= 0) {
      r.chunked->ended_at = ended_at;
      r.chunked->end = reports::ChunkEnd::failure;
      r.outcome = reports::Outcome::fail;
      r.message = fmt::format("failed in chunk {}", ended_at);
      r.metric = 99;
      r.bound = 1;
    } else {
      r.chunked->worst_chunk = chunks.back();
      r.metric = static_cast<double>(chunks.back());
      r.bound = 10;
    }
    return r;
  };
  // Shard A ran chunks 0 and 2 and failed in 2; shard B ran 1 and 3, both passing.
  const reports::ResultRecord r = combine_chunks({part({0, 2}, 2), part({1, 3}, -1)});
  EXPECT_EQ(r.outcome, reports::Outcome::fail);
  EXPECT_EQ(r.message, "failed in chunk 2");
  EXPECT_EQ(r.cases, 3 * 64) << "chunks 0, 1 and 2; not 3";
  ASSERT_EQ(r.error_vs_bound.size(), 3u);
  EXPECT_EQ(r.error_vs_bound[1].metric, 1.0) << "points in chunk order";
  EXPECT_EQ(*r.metric, 99.0);
  const reports::ResultRecord passing = combine_chunks({part({0, 2}, -1), part({1, 3}, -1)});
  EXPECT_EQ(passing.outcome, reports::Outcome::pass);
  EXPECT_EQ(passing.cases, 4 * 64);
  EXPECT_EQ(*passing.metric, 3.0) << "the worst over every chunk";
  EXPECT_EQ(passing.message, "256 of 256 cases conclusive");
}

// Nothing conclusive: the message counts the causes once; only a shard of an earlier version, without
// causes, names its first reason instead.
TEST(RunMerge, AllInconclusiveChunksNameTheirCausesOnce) {
  auto part = [](std::int64_t chunk, bool with_causes) {
    reports::ResultRecord r = chunked_record("gat", "adjoint", 2);
    r.chunked->ran.push_back({.index = chunk, .drawn = 64, .inconclusive = 64});
    r.chunked->first_inconclusive = {chunk, fmt::format("rows past the analysis, |s| = {}", 30 + chunk)};
    if (with_causes) r.chunked->inconclusive_causes.push_back({chunk, 64, fmt::format("rows past the analysis, |s| = {}", 30 + chunk)});
    return r;
  };
  const reports::ResultRecord r = combine_chunks({part(0, true), part(1, true)});
  EXPECT_EQ(r.outcome, reports::Outcome::inconclusive);
  EXPECT_EQ(r.message, "0 of 128 cases conclusive: 128 inconclusive (128: rows past the analysis, |s| = 30) — nothing was verified");
  const reports::ResultRecord old = combine_chunks({part(0, false), part(1, false)});
  EXPECT_EQ(old.message, "0 of 128 cases conclusive: 128 inconclusive — nothing was verified (first: rows past the analysis, |s| = 30)");
}

// The cases compared moved within the softmax analysis are summed over the chunks counted; a shard
// of an earlier version, whose rows have no such column, counts none.
TEST(RunMerge, CasesComparedMovedAreSummedOverChunksAndShardsOfEarlierVersionsCountNone) {
  auto part = [](std::int64_t chunk, std::int64_t moved) {
    reports::ResultRecord r = chunked_record("gat", "differential", 2);
    r.chunked->ran.push_back({.index = chunk, .drawn = 64, .conclusive = 64, .moved = moved});
    return r;
  };
  EXPECT_EQ(combine_chunks({part(0, 5), part(1, 7)}).message,
            "128 of 128 cases conclusive (12 with the logits scaled within the softmax analysis)");
  EXPECT_EQ(combine_chunks({part(0, 0), part(1, 0)}).message, "128 of 128 cases conclusive");

  const fs::path dir = scratch("moved-columns");
  reports::RunReport run;
  run.suite_name = "moved";
  run.results.push_back(part(1, 7));
  reports::write_all(run, dir);
  EXPECT_EQ(reports::read_json_report(dir / "report.json").results.at(0).chunked->ran.at(0).moved, 7);
  nlohmann::json j = nlohmann::json::parse(std::ifstream(dir / "report.json"));
  for (auto& r : j["results"])
    for (auto& row : r["chunks"]["ran"]) row.erase(row.size() - 1);  // the 7 columns of earlier versions
  std::ofstream(dir / "report.json") << j.dump();
  const reports::RunReport earlier = reports::read_json_report(dir / "report.json");
  EXPECT_EQ(earlier.results.at(0).chunked->ran.at(0).moved, 0);
  EXPECT_EQ(earlier.results.at(0).chunked->ran.at(0).conclusive, 64);
  fs::remove_all(dir);
}

TEST(RunMerge, ChunkZeroKeepsTheTaskSeedAndLaterChunksHaveTheirOwn) {
  EXPECT_EQ(chunk_seed(12345, 0), 12345u);
  EXPECT_NE(chunk_seed(12345, 1), 12345u);
  EXPECT_NE(chunk_seed(12345, 1), chunk_seed(12345, 2));
  EXPECT_LT(chunk_seed(12345, 7), 1ull << 53) << "seeds stay exact in JSON";
  EXPECT_EQ(chunk_count(1), 1);
  EXPECT_EQ(chunk_count(kCasesPerChunk), 1);
  EXPECT_EQ(chunk_count(kCasesPerChunk + 1), 2);
}

// The environment as a map, for share_from_environment.
std::function<const char*(const char*)> environment(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

std::string refusal_of(const std::map<std::string, std::string>& vars, std::optional<CaseShare> given = std::nullopt) {
  try {
    share_from_environment(environment(vars), given);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ShardEnvironment, GoogleTestAndBazelShardVariablesAskForTheShareTheyName) {
  EXPECT_FALSE(share_from_environment(environment({}), std::nullopt));
  const auto gtest = share_from_environment(environment({{"GTEST_TOTAL_SHARDS", "7"}, {"GTEST_SHARD_INDEX", "0"}}), std::nullopt);
  ASSERT_TRUE(gtest);
  EXPECT_EQ(gtest->part, 1);
  EXPECT_EQ(gtest->of, 7);
  const auto bazel = share_from_environment(environment({{"TEST_TOTAL_SHARDS", "3"}, {"TEST_SHARD_INDEX", "2"}}), CaseShare{3, 3});
  ASSERT_TRUE(bazel);
  EXPECT_EQ(bazel->part, 3);
  EXPECT_EQ(bazel->of, 3);
  const auto both = share_from_environment(
      environment({{"TEST_TOTAL_SHARDS", "4"}, {"TEST_SHARD_INDEX", "1"}, {"GTEST_TOTAL_SHARDS", "4"}, {"GTEST_SHARD_INDEX", "1"}}),
      std::nullopt);
  ASSERT_TRUE(both);
  EXPECT_EQ(both->part, 2);
}

TEST(ShardEnvironment, BazelsShardStatusFileIsTouched) {
  const fs::path dir = scratch("status");
  const fs::path status = dir / "shard-status";
  share_from_environment(environment({{"TEST_TOTAL_SHARDS", "2"}, {"TEST_SHARD_INDEX", "1"}, {"TEST_SHARD_STATUS_FILE", status.string()}}),
                         std::nullopt);
  EXPECT_TRUE(fs::exists(status));
  fs::remove_all(dir);
}

TEST(ShardEnvironment, InconsistentShardVariablesAreRefusedNamingThem) {
  EXPECT_NE(refusal_of({{"GTEST_TOTAL_SHARDS", "3"}}).find("GTEST_SHARD_INDEX is not"), std::string::npos);
  EXPECT_NE(refusal_of({{"TEST_SHARD_INDEX", "0"}}).find("TEST_TOTAL_SHARDS is not"), std::string::npos);
  EXPECT_NE(refusal_of({{"GTEST_TOTAL_SHARDS", "3"}, {"GTEST_SHARD_INDEX", "3"}}).find("0 <= index < total"), std::string::npos);
  EXPECT_NE(refusal_of({{"GTEST_TOTAL_SHARDS", "x"}, {"GTEST_SHARD_INDEX", "0"}}).find("GTEST_TOTAL_SHARDS='x'"), std::string::npos);
  EXPECT_NE(refusal_of({{"GTEST_TOTAL_SHARDS", "0"}, {"GTEST_SHARD_INDEX", "0"}}).find("expected"), std::string::npos);
  EXPECT_NE(refusal_of({{"GTEST_TOTAL_SHARDS", "3"}, {"GTEST_SHARD_INDEX", "0"}, {"TEST_TOTAL_SHARDS", "3"}, {"TEST_SHARD_INDEX", "1"}})
                .find("ask for different shards"),
            std::string::npos);
  EXPECT_NE(refusal_of({{"GTEST_TOTAL_SHARDS", "3"}, {"GTEST_SHARD_INDEX", "0"}}, CaseShare{2, 3}).find("--share 2/3 and GTEST_TOTAL_SHARDS=3"),
            std::string::npos);
}

}  // namespace
}  // namespace gnncheck::suites
