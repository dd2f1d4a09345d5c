// The shipped suites catch the replicas of issue 15's blind spots and of the shapes where kernels
// change path (23–25): `ci` (as a downstream project
// runs it, `gnncheck run ci --system R --expect caught`) over many seeds, the TF32 edge-value
// gradient by `adjoint` alone and the unrepeatable forward by `state_repeat` alone; and `default`
// names every replica of both catalogues in an entry that expects `caught`.
//
// GNNCHECK_CATCH_SEEDS seeds (2 in CI; the slow twin runs 100, the figure in
// docs/replicas.md).
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "adapters/replicas/gpu/gpu_replicas.h"
#include "adapters/replicas/replicas.h"
#include "suites/runner.h"
#include "suites/suite.h"

#ifndef GNNCHECK_CATCH_SEEDS
#define GNNCHECK_CATCH_SEEDS 2
#endif

namespace gnncheck::suites {
namespace {

Suite shipped(const std::string& name) {
  Suite suite = load_suite(std::string(GNNCHECK_TEST_SUITES_DIR) + "/" + name + ".yaml");
  suite.time_budget_seconds = 0.0;  // a loaded machine must not cut a run short
  return suite;
}

// `ci` with `replica` in place of its systems and `caught` expected, at `seed`; only `checks` when
// given. Returns the results of the run.
reports::RunReport run_ci_against(const std::string& replica, std::uint64_t seed, const std::vector<std::string>& checks = {}) {
  Suite suite = shipped("ci");
  if (!checks.empty())
    for (Entry& e : suite.entries) {
      std::vector<std::string> kept;
      for (const auto& c : e.checks)
        if (std::find(checks.begin(), checks.end(), c) != checks.end()) kept.push_back(c);
      e.checks = kept;
    }
  suite.entries.erase(std::remove_if(suite.entries.begin(), suite.entries.end(), [](const Entry& e) { return e.checks.empty(); }),
                      suite.entries.end());
  RunOptions options;
  options.seed = seed;
  options.override_systems = {replica};
  options.override_expectation = reports::Expectation::caught;
  return run_suite(suite, SystemRegistry::with_builtins(), options, nullptr);
}

bool caught(const reports::RunReport& run, const std::string& check = "") {
  return std::any_of(run.results.begin(), run.results.end(), [&](const reports::ResultRecord& r) {
    return (check.empty() || r.check == check) &&
           r.outcome == reports::Outcome::fail;  // an error catches nothing
  });
}

class CiCatches : public testing::TestWithParam<std::string> {};

TEST_P(CiCatches, EveryBlindSpotReplicaOnEverySeed) {
  std::vector<int> missed;
  for (int seed = 1; seed <= GNNCHECK_CATCH_SEEDS; ++seed) {
    const reports::RunReport run = run_ci_against(GetParam(), static_cast<std::uint64_t>(seed));
    if (!caught(run)) missed.push_back(seed);
  }
  const int caught_seeds = GNNCHECK_CATCH_SEEDS - static_cast<int>(missed.size());
  RecordProperty("caught_seeds", caught_seeds);
  std::cout << fmt::format("{}: caught by ci in {} of {} seeds\n", GetParam(), caught_seeds, GNNCHECK_CATCH_SEEDS);
  // At least 99 in 100 (issue 15); with 2 seeds, every one.
  EXPECT_GE(caught_seeds * 100, 99 * GNNCHECK_CATCH_SEEDS) << "missed seeds: " << fmt::format("{}", fmt::join(missed, ", "));
}

INSTANTIATE_TEST_SUITE_P(BlindSpots, CiCatches,
                         testing::Values("backward_assumes_square", "hub_row_race", "tf32_edge_value_grad",
                                         "forward_not_repeatable", "wide_rows_partial_tile_dropped",
                                         "square_features_read_transposed", "heads_and_features_swapped",
                                         // a two-format fault that only cases every half format stores
                                         // exactly reveal (checks/tolerance.md, "Storage and accumulation")
                                         "half_logits_rounded_before_max"));

TEST(CiCatches, TheTf32EdgeValueGradientByAdjointAlone) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const reports::RunReport run = run_ci_against("tf32_edge_value_grad", seed, {"adjoint"});
    EXPECT_TRUE(caught(run, "adjoint")) << "seed " << seed;
    for (const auto& r : run.results)
      if (r.outcome == reports::Outcome::fail) {
        EXPECT_EQ(r.precision, "tf32") << r.entry << " " << r.target;
        EXPECT_NE(r.message.find("edge_values"), std::string::npos) << r.message;  // the wrong gradient is named
      }
  }
}

TEST(CiCatches, TheUnrepeatableForwardByStateRepeatAlone) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    EXPECT_TRUE(caught(run_ci_against("forward_not_repeatable", seed, {"state_repeat"}), "state_repeat")) << "seed " << seed;
}

TEST(CiCatches, NoCorrectCpuSystemIsFlagged) {
  // The new entries (hub graphs, more destinations than sources) pass on the oracle; the suite's own
  // ctest entries, gnncheck.ci.*, run all of it on cpu_float32.
  for (const std::string system : {"oracle"}) {
    Suite suite = shipped("ci");
    RunOptions options;
    options.override_systems = {system};
    options.only_entries = {"bipartite-tall", "multi-head", "hubs-multigraph", "hubs-star"};
    const reports::RunReport run = run_suite(suite, SystemRegistry::with_builtins(), options, nullptr);
    for (const auto& r : run.results)
      EXPECT_TRUE(r.expectation_held) << system << " " << r.entry << " " << r.target << " " << r.check << ": " << r.message;
    const bool layer_not_applicable_on_tall = std::any_of(run.results.begin(), run.results.end(), [](const auto& r) {
      return r.entry == "bipartite-tall" && r.target == "gat" && r.outcome == reports::Outcome::not_applicable &&
             r.message.find("n_dst <= n_src") != std::string::npos;
    });
    EXPECT_TRUE(layer_not_applicable_on_tall) << system << ": a layer on n_dst > n_src must be `not applicable`, with the reason";
  }
}

TEST(DefaultSuite, NamesEveryReplicaInAnEntryThatExpectsCaught) {
  const Suite suite = shipped("default");
  std::set<std::string> named;
  for (const Entry& e : suite.entries)
    if (e.expect == reports::Expectation::caught) named.insert(e.systems.begin(), e.systems.end());
  for (const ReplicaInfo& info : replica_catalogue()) EXPECT_TRUE(named.count(info.name)) << info.name;
  for (const GpuReplicaInfo& info : gpu_replica_catalogue()) EXPECT_TRUE(named.count(info.name)) << info.name;
}

}  // namespace
}  // namespace gnncheck::suites
