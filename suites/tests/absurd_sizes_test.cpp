// A suite asking for absurd random graphs is refused when it is read, with the file, line and key,
// before any case is drawn. (Absurd parameters of the generator families are refused by the
// generators themselves: fixtures/tests/absurd_sizes_test.cpp.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "suites/suite.h"

namespace gnncheck::suites {
namespace {

using ::testing::HasSubstr;

std::string refusal(const std::string& yaml) {
  try {
    parse_suite(yaml, "absurd.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

std::string suite_with_random_graphs(const std::string& settings) {
  return "name: absurd\ngraphs:\n  huge:\n    family: random\n" + settings +
         "entries:\n  - name: e\n    systems: cpu_float32\n    checks: differential\n    graphs: huge\n";
}

TEST(AbsurdSizes, RandomGraphOfTenToTheFifteenNodesIsRefused) {
  EXPECT_THAT(refusal(suite_with_random_graphs("    max_nodes: 1000000000000000\n")),
              HasSubstr("absurd.yaml:5: graphs.huge.max_nodes: 1000000000000000 nodes per side is absurd"));
  EXPECT_THAT(refusal(suite_with_random_graphs("    max_nodes: 65537\n")), HasSubstr("expected at most 65536"));
}

TEST(AbsurdSizes, RandomGraphDegreeIsBounded) {
  EXPECT_THAT(refusal(suite_with_random_graphs("    max_avg_degree: 1e12\n")),
              HasSubstr("expected an average degree of at most 256"));
}

TEST(AbsurdSizes, TheLimitsThemselvesAreAccepted) {
  const Suite s = parse_suite(suite_with_random_graphs("    max_nodes: 65536\n    max_avg_degree: 256\n"), "ok.yaml");
  EXPECT_EQ(s.graphs.at("huge").max_nodes, 65536);
  EXPECT_EQ(s.graphs.at("huge").max_avg_degree, 256.0);
}

}  // namespace
}  // namespace gnncheck::suites
