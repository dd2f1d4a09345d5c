// The selfcheck covers every target and differentiable input of the catalogue, prints one line for
// each, and passes on the oracle.
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "oracle/selfcheck.h"

namespace gnncheck::oracle {
namespace {

using ::testing::HasSubstr;

TEST(Selfcheck, EveryTargetAndInputPassesAndIsPrinted) {
  std::ostringstream out;
  SelfcheckOptions options;
  options.out = &out;
  options.large_edges = 100'000;
  options.gradcheck.directions = 1;  // the ops' own tests check more directions
  const SelfcheckReport report = run_selfcheck(options);
  EXPECT_TRUE(report.all_passed) << out.str();
  size_t expected_lines = 0;
  for (const TargetDef& def : all_targets()) expected_lines += differentiable_inputs(def.spec).size();
  EXPECT_EQ(report.lines.size(), expected_lines);
  for (const SelfcheckLine& line : report.lines) {
    EXPECT_GT(line.full_cases, 0) << line.target << " " << line.input;
    EXPECT_EQ(line.directions, 1) << line.target << " " << line.input;
    EXPECT_LE(line.full_worst_error, line.bound);
  }
  EXPECT_THAT(out.str(), HasSubstr("spmm_ve              edge_values"));
  EXPECT_THAT(out.str(), HasSubstr("PASSED:"));
}

TEST(Selfcheck, SelectedTargetsOnly) {
  SelfcheckOptions options;
  options.targets = {"edge_softmax"};
  options.include_large = false;
  const SelfcheckReport report = run_selfcheck(options);
  ASSERT_EQ(report.lines.size(), 1u);
  EXPECT_EQ(report.lines[0].input, "logits");
  EXPECT_EQ(report.lines[0].directions, 0);
  EXPECT_TRUE(report.all_passed);
  options.targets = {"no_such_op"};
  EXPECT_THROW(run_selfcheck(options), InputError);
}

TEST(Selfcheck, SkewedGraphIsReproducibleAndSkewed) {
  const Graph a = make_skewed_graph(1'000, 800, 20'000, 3), b = make_skewed_graph(1'000, 800, 20'000, 3);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.num_edges(), 20'000);
  EXPECT_GT(a.in_degree(0), 10 * 20);    // hubs at low ids: far above the mean in-degree of 20
  EXPECT_GT(a.out_degree(0), 10 * 25);   // and the mean out-degree of 25
  EXPECT_THROW(make_skewed_graph(0, 5, 10, 1), InputError);
}

}  // namespace
}  // namespace gnncheck::oracle
