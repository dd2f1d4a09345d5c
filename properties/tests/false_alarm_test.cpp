// False alarms: correct implementations pass. cpu_float32 (the oracle's code in float32, a second
// correct implementation) passes the differential check on GNNCHECK_FALSE_ALARM_CASES random cases
// of every op and layer, with the tolerance model unchanged (every other check: campaign_test.cpp).
// GNNCHECK_PROPERTY_CASES (environment) overrides the case count, GNNCHECK_PROPERTY_SEED the seed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "oracle/cpu_systems.h"
#include "oracle/targets.h"
#include "properties/counterexample.h"
#include "properties/driver.h"
#include "properties/tests/wrong_systems.h"

#ifndef GNNCHECK_FALSE_ALARM_CASES
#define GNNCHECK_FALSE_ALARM_CASES 300
#endif

namespace gnncheck::properties {
namespace {

using checks::CheckKind;

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::stoi(v) : fallback;
}

class EveryTarget : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryTarget, Float32PassesTheDifferentialCheck) {
  auto system = make_cpu_float32_system();
  PropertyOptions o;
  o.cases = env_int("GNNCHECK_PROPERTY_CASES", GNNCHECK_FALSE_ALARM_CASES);
  o.seed = static_cast<std::uint64_t>(env_int("GNNCHECK_PROPERTY_SEED", 424242));
  // Larger graphs than the detection tests (which want small counterexamples): up to 40 nodes per
  // side and average degree 8, heavy-tailed families included.
  o.case_options.graph.max_nodes = 40;
  o.case_options.graph.max_average_degree = 8;
  const PropertyOutcome out = run_property(CheckKind::differential, *system, GetParam(), o);
  EXPECT_TRUE(out.passed()) << out.report;
  EXPECT_EQ(out.cases_passed, o.cases);
  std::cout << out.report << "\n";
}

// A correct float32 implementation in a summation order the tolerance model never measured.
TEST_P(EveryTarget, ShuffledOrderFloat32PassesTheDifferentialCheck) {
  testing::ShuffledOrderFloat32 system;
  PropertyOptions o;
  o.cases = env_int("GNNCHECK_PROPERTY_CASES", GNNCHECK_FALSE_ALARM_CASES);
  o.seed = static_cast<std::uint64_t>(env_int("GNNCHECK_PROPERTY_SEED", 424242)) + 1;
  o.case_options.graph.max_nodes = 40;
  o.case_options.graph.max_average_degree = 8;
  const PropertyOutcome out = run_property(CheckKind::differential, system, GetParam(), o);
  EXPECT_TRUE(out.passed()) << out.report;
  std::cout << out.report << "\n";
}

// Regression: with 300 cases per check (seed 777) the oracle failed metamorphic_linearity on GAT after
// 187 cases (1.5× the bound on an att_src gradient of ~6e-11: float64's softmax-backward rounding on
// a near one-hot row, multiplied by |h| ~ 700; checks/README.md, "Known limits"). The shrunk case as it was saved.
TEST(Regression, OracleGatLinearityOnANearOneHotRowWithLargeInputs) {
  // The data folder by absolute path: __FILE__ is relative to the build folder when the compiler
  // cache rewrites paths, and the test runs from the project's root.
  const auto dir = std::filesystem::path(GNNCHECK_PROPERTIES_TEST_DATA) / "oracle-gat-metamorphic_linearity-777";
  const SavedCase saved = load_counterexample(dir);
  auto oracle_system = make_oracle_system();
  const checks::Verdict v = checks::run_check(CheckKind::metamorphic_linearity, *oracle_system, saved.c);
  EXPECT_TRUE(v.passed()) << v.message;
  EXPECT_EQ(v.system_status, Status::ok);
}

// Regression: `gnncheck check --system oracle --target gspmm --check differential --cases 3000 --seed 1`
// failed the oracle after 52 cases: at 122 ties (max of sub messages, 127 features) its own gradient
// was "1.25× the bound" of 4.4e-16 from the nearest valid one, the tie solver's rounding in bound
// units (checks/subgradient_set.cpp). The shrunk case as it was saved.
TEST(Regression, OracleGspmmAtTiesAtBoundsOfFloat64Rounding) {
  const auto dir = std::filesystem::path(GNNCHECK_PROPERTIES_TEST_DATA) / "oracle-gspmm-differential-tie-rounding";
  const SavedCase saved = load_counterexample(dir);
  auto oracle_system = make_oracle_system();
  const checks::Verdict v = checks::run_check(CheckKind::differential, *oracle_system, saved.c);
  EXPECT_TRUE(v.passed()) << v.message;
  // The gradients were held to the set of valid ones: the case ties.
  const auto& def = oracle::find_target("gspmm");
  EXPECT_GT(def.subgradients(saved.c, unit_roundoff(Precision::float64)).groups.size(), 100u);
}

// Regression: `gnncheck check --system oracle --target T --check gradient --cases 2000 --seed 1` failed
// the oracle's own gradient on gin, gspmm and segment_reduce (4.5 against 9.0, −1.01 against 0, 0.5
// against 1): small integers moved off their kinks on the grid every half format holds kept a ReLU
// argument or a max's tie exactly at its kink, where central differences average the two sides. The
// float64 check stores nothing in a half format, so its jitter is the continuous one
// (checks/gradient.cpp). The shrunk cases as they were saved.
TEST(Regression, OracleGradientAtSmallIntegersMovesOffTheKinksOffTheHalfGrid) {
  auto oracle_system = make_oracle_system();
  for (const char* target : {"gin", "gspmm", "segment_reduce"}) {
    const auto dir = std::filesystem::path(GNNCHECK_PROPERTIES_TEST_DATA) /
                     (std::string("oracle-") + target + "-gradient-on-the-half-grid");
    const SavedCase saved = load_counterexample(dir);
    const checks::Verdict v = checks::run_check(CheckKind::gradient, *oracle_system, saved.c);
    EXPECT_TRUE(v.passed()) << target << ": " << v.message;
  }
}

std::vector<std::string> target_names() {
  std::vector<std::string> names;
  for (const auto& def : oracle::all_targets()) names.push_back(def.spec.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllTargets, EveryTarget, ::testing::ValuesIn(target_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace gnncheck::properties
