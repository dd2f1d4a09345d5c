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

PropertyOptions options_with_root(const std::string& name, int cases = 100) {
  PropertyOptions o;
  o.cases = cases;
  o.seed = 20261129;
  o.counterexample_root = std::filesystem::temp_directory_path() / ("gnncheck-detection-" + name);
  std::filesystem::remove_all(o.counterexample_root);
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
  const PropertyOptions o = options_with_root("a-for-at");
  for (CheckKind check : {CheckKind::adjoint, CheckKind::differential}) {
    const PropertyOutcome out = expect_caught(check, *wrong, "spmm", o);
    ASSERT_TRUE(out.minimal && out.failure);
    EXPECT_LE(out.minimal->graph.n_dst, 4) << out.report;
    EXPECT_LE(out.minimal->graph.n_src, 4) << out.report;
    EXPECT_EQ(out.failure->tensor.rfind("gradient x", 0), 0u) << out.failure->tensor;
    EXPECT_FALSE(out.reproduce.empty());
    // The saved case loads back and fails the same check again; a correct system passes it.
    const SavedCase saved = load_counterexample(out.counterexample_path);
    EXPECT_EQ(saved.check, check);
    EXPECT_EQ(saved.system, "tcgnn_backward_uses_A");
    EXPECT_EQ(checks::run_check(saved.check, *wrong, saved.c).conclusion, checks::Conclusion::fail);
    auto correct = make_cpu_float32_system();
    EXPECT_TRUE(checks::run_check(saved.check, *correct, saved.c).passed());
    // The reproduce string re-runs exactly the minimal case.
    PropertyOptions again = o;
    again.reproduce = out.reproduce;
    again.counterexample_root.clear();
    const PropertyOutcome reproduced = run_property(check, *wrong, "spmm", again);
    ASSERT_TRUE(reproduced.minimal);
    EXPECT_EQ(reproduced.minimal->graph.dst, out.minimal->graph.dst);
    EXPECT_EQ(reproduced.minimal->graph.src, out.minimal->graph.src);
  }
}

TEST(Detection, NormalizationOnTheWrongSideIsCaughtByOpOrder) {
  auto wrong = make_replica("gnnadvisor_norm_backward_order", make_cpu_float32_system());
  const PropertyOutcome out = expect_caught(CheckKind::op_order, *wrong, "normalized_spmm", options_with_root("norm"));
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->tensor.find("gradient x") != std::string::npos, true) << out.failure->tensor;
}

TEST(Detection, SoftmaxOverSourceInsteadOfDestinationIsCaught) {
  testing::SoftmaxOverSource wrong;
  const PropertyOutcome out =
      expect_caught(CheckKind::differential, wrong, "edge_softmax", options_with_root("softmax-source"));
  ASSERT_TRUE(out.minimal);
  EXPECT_LE(out.minimal->graph.n_dst, 4) << out.report;
}

TEST(Detection, DroppedGradientTermsAreCaught) {
  testing::SoftmaxBackwardDropsSum dropped;
  expect_caught(CheckKind::differential, dropped, "edge_softmax", options_with_root("dropped-sum"));
  expect_caught(CheckKind::adjoint, dropped, "edge_softmax", options_with_root("dropped-sum-adjoint"));
  auto no_attention = make_replica("tlpgnn_no_attention_grad", make_cpu_float32_system());
  expect_caught(CheckKind::adjoint, *no_attention, "spmm_ve", options_with_root("no-attention-grad"));
  auto no_bias = make_replica("missing_bias_grad", make_cpu_float32_system());
  expect_caught(CheckKind::differential, *no_bias, "gcn", options_with_root("no-bias-grad", 30));
}

TEST(Detection, StateNumericsAndResourceBugsAreCaught) {
  auto stale = make_replica("shared_edge_buffer", make_cpu_float32_system());
  expect_caught(CheckKind::state_interleaved, *stale, "edge_softmax", options_with_root("stale"));
  auto no_max = make_replica("fusegnn_softmax_no_max", make_cpu_float32_system());
  expect_caught(CheckKind::numerics, *no_max, "edge_softmax", options_with_root("no-max"));
  auto leak = make_replica("dgnn_memory_growth", make_cpu_float32_system());
  expect_caught(CheckKind::resources, *leak, "spmm", options_with_root("leak", 5));
}

TEST(Detection, UntransposedAttentionIsCaughtWithoutTheOracle) {
  auto wrong = make_replica("gat_backward_untransposed_attention", make_cpu_float32_system());
  expect_caught(CheckKind::adjoint, *wrong, "spmm_ve", options_with_root("untransposed"));
}

}  // namespace
}  // namespace gnncheck::properties
