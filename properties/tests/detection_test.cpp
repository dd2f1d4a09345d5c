// Detection: deliberately wrong implementations are caught by the property driver, shrunk to small
// counterexamples, saved, and the saved case fails again when re-run.
#include <gtest/gtest.h>

#include <filesystem>

#include "oracle/cpu_systems.h"
#include "adapters/replicas/replicas.h"
#include "properties/counterexample.h"
#include "properties/driver.h"
#include "properties/tests/wrong_systems.h"

namespace gnncheck::properties {
namespace {

using checks::CheckKind;

PropertyOptions property_options(int cases = 100) {
  PropertyOptions o;
  o.cases = cases;
  o.seed = 20261129;
  return o;
}

// Runs the property and expects a failure; prints the story either way.
PropertyOutcome expect_caught(CheckKind check, System& system, const std::string& target, const PropertyOptions& o) {
  PropertyOutcome out = run_property(check, system, target, o);
  EXPECT_EQ(out.conclusion, checks::Conclusion::fail) << out.report;
  EXPECT_FALSE(out.gave_up) << out.report;
  std::cout << out.report << "\n";
  return out;
}

TEST(Detection, AForATransposeShrinksToAtMostFourNodesAndReplays) {
  auto wrong = make_replica("tcgnn_backward_uses_A", make_cpu_float32_system());
  const PropertyOptions o = property_options();
  for (CheckKind check : {CheckKind::adjoint, CheckKind::differential}) {
    const PropertyOutcome out = expect_caught(check, *wrong, "spmm", o);
    ASSERT_TRUE(out.minimal && out.failure);
    EXPECT_LE(out.minimal->graph.n_dst, 4) << out.report;
    EXPECT_LE(out.minimal->graph.n_src, 4) << out.report;
    EXPECT_EQ(out.failure->tensor.rfind("gradient x", 0), 0u) << out.failure->tensor;
    EXPECT_FALSE(out.reproduce.empty());
    // The minimal case, saved and loaded back, fails the same check again; a correct system passes it.
    ASSERT_TRUE(out.minimal_case);
    const auto dir = std::filesystem::temp_directory_path() / ("gnncheck-detection-a-for-at-" + std::string(to_string(check)));
    std::filesystem::remove_all(dir);
    write_counterexample(dir, *out.minimal_case, *out.failure, {o.seed, out.reproduce, ""});
    const SavedCase saved = load_counterexample(dir);
    EXPECT_EQ(saved.check, check);
    EXPECT_EQ(saved.system, "tcgnn_backward_uses_A");
    EXPECT_EQ(checks::run_check(saved.check, *wrong, saved.c).conclusion, checks::Conclusion::fail);
    auto correct = make_cpu_float32_system();
    EXPECT_TRUE(checks::run_check(saved.check, *correct, saved.c).passed());
    // The reproduce string re-runs exactly the minimal case.
    PropertyOptions again = o;
    again.reproduce = out.reproduce;
    const PropertyOutcome reproduced = run_property(check, *wrong, "spmm", again);
    ASSERT_TRUE(reproduced.minimal);
    EXPECT_EQ(reproduced.minimal->graph.dst, out.minimal->graph.dst);
    EXPECT_EQ(reproduced.minimal->graph.src, out.minimal->graph.src);
  }
}

TEST(Detection, NormalizationOnTheWrongSideIsCaughtByOpOrder) {
  auto wrong = make_replica("gnnadvisor_norm_backward_order", make_cpu_float32_system());
  const PropertyOutcome out = expect_caught(CheckKind::op_order, *wrong, "normalized_spmm", property_options());
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->tensor.find("gradient x") != std::string::npos, true) << out.failure->tensor;
}

TEST(Detection, SoftmaxOverSourceInsteadOfDestinationIsCaught) {
  testing::SoftmaxOverSource wrong;
  const PropertyOutcome out =
      expect_caught(CheckKind::differential, wrong, "edge_softmax", property_options());
  ASSERT_TRUE(out.minimal);
  EXPECT_LE(out.minimal->graph.n_dst, 4) << out.report;
}

TEST(Detection, DroppedGradientTermsAreCaught) {
  testing::SoftmaxBackwardDropsSum dropped;
  expect_caught(CheckKind::differential, dropped, "edge_softmax", property_options());
  expect_caught(CheckKind::adjoint, dropped, "edge_softmax", property_options());
  auto no_attention = make_replica("tlpgnn_no_attention_grad", make_cpu_float32_system());
  expect_caught(CheckKind::adjoint, *no_attention, "spmm_ve", property_options());
  auto no_bias = make_replica("missing_bias_grad", make_cpu_float32_system());
  expect_caught(CheckKind::differential, *no_bias, "gcn", property_options(30));
}

TEST(Detection, StateNumericsAndResourceBugsAreCaught) {
  auto stale = make_replica("shared_edge_buffer", make_cpu_float32_system());
  expect_caught(CheckKind::state_interleaved, *stale, "edge_softmax", property_options());
  auto no_max = make_replica("fusegnn_softmax_no_max", make_cpu_float32_system());
  expect_caught(CheckKind::numerics, *no_max, "edge_softmax", property_options());
  auto leak = make_replica("dgnn_memory_growth", make_cpu_float32_system());
  expect_caught(CheckKind::resources, *leak, "spmm", property_options(5));
}

TEST(Detection, UntransposedAttentionIsCaughtWithoutTheOracle) {
  auto wrong = make_replica("gat_backward_untransposed_attention", make_cpu_float32_system());
  expect_caught(CheckKind::adjoint, *wrong, "spmm_ve", property_options());
}

}  // namespace
}  // namespace gnncheck::properties
