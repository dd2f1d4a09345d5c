// The accuracy gate on a small synthetic task: correct float32 systems pass (the oracle's float32
// twin, and one that sums every row's edges in the opposite order), and published bugs, replayed
// by the bug replicas, fail at the first epoch after the first update.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "oracle/cpu_systems.h"
#include "adapters/replicas/replicas.h"
#include "training/accuracy_gate.h"
#include "training/tests/synthetic_task.h"

namespace gnncheck::training {
namespace {

using ::testing::HasSubstr;

// A correct float32 system whose sums run in another order: every row's edges are reversed before
// the case reaches cpu_float32. Layers have no edge inputs, so the case means the same thing.
class ReversedRowOrderSystem final : public System {
 public:
  std::string name() const override { return "cpu_float32_reversed_rows"; }
  bool supports(const std::string& t) const override { return inner_->supports(t); }
  Precision precision(const std::string& t) const override { return inner_->precision(t); }
  Result evaluate(const Case& c) override {
    Case reversed = c;
    reversed.graph = reverse_rows(*c.graph);
    return inner_->evaluate(reversed);
  }

 private:
  std::shared_ptr<const Graph> reverse_rows(const Graph& g) {
    if (cached_source_ != &g) {
      std::vector<index_t> col_idx(g.col_idx().begin(), g.col_idx().end());
      for (index_t i = 0; i < g.n_dst(); ++i)
        std::reverse(col_idx.begin() + g.row_ptr()[i], col_idx.begin() + g.row_ptr()[i + 1]);
      cached_ = std::make_shared<const Graph>(Graph::from_csr(
          g.n_dst(), g.n_src(), std::vector<index_t>(g.row_ptr().begin(), g.row_ptr().end()), std::move(col_idx)));
      cached_source_ = &g;
    }
    return cached_;
  }
  std::unique_ptr<System> inner_ = make_cpu_float32_system();
  const Graph* cached_source_ = nullptr;
  std::shared_ptr<const Graph> cached_;
};

TrainingConfig short_run() {
  TrainingConfig c;
  c.epochs = 40;
  return c;
}

TEST(AccuracyGate, Float32TwinOfTheOraclePasses) {
  const auto task = tests::synthetic_task();
  auto sut = make_cpu_float32_system();
  const AccuracyGateReport r = run_accuracy_gate(*sut, gcn_model(task.num_features(), 16, task.num_classes), task, short_run());
  EXPECT_TRUE(r.passed) << r.summary();
  EXPECT_EQ(r.precision, Precision::float32);
  EXPECT_EQ(r.loss_deviation.size(), 40u);
  EXPECT_EQ(r.loss_bound.size(), 40u);
  EXPECT_FALSE(r.first_divergent_epoch);
  // The reference itself: its deviation never exceeds R(e), so the ratio is at most 1 / factor.
  EXPECT_LE(r.worst_ratio, 1.0 / 10 + 1e-12);
  EXPECT_THAT(r.summary(), HasSubstr("PASSED"));
}

TEST(AccuracyGate, CorrectSystemWithAnotherSummationOrderPasses) {
  const auto task = tests::synthetic_task(90, 3, 4, 5, /*symmetric=*/false);
  ReversedRowOrderSystem sut;
  for (const TrainingRecipe& recipe :
       {TrainingRecipe{gcn_model(task.num_features(), 16, task.num_classes), short_run()},
        TrainingRecipe{gat_model(task.num_features(), 4, 3, task.num_classes), short_run()},
        TrainingRecipe{gin_model(task.num_features(), 16, task.num_classes), short_run()},
        TrainingRecipe{sage_model(task.num_features(), 16, task.num_classes), short_run()}}) {
    const AccuracyGateReport r = run_accuracy_gate(sut, recipe.model, task, recipe.config);
    EXPECT_TRUE(r.passed) << r.summary();
    EXPECT_LT(r.worst_ratio, 1.0) << recipe.model.name;
    std::printf("%s: worst deviation %.3g of the bound (epoch %d)\n", recipe.model.name.c_str(), r.worst_ratio, r.worst_epoch);
    RecordProperty(recipe.model.name + "_worst_ratio", fmt::format("{:.3g}", r.worst_ratio));
  }
}

TEST(AccuracyGate, GcnBackwardWithAForATransposeFailsRightAfterTheFirstUpdate) {
  const auto task = tests::synthetic_task(90, 3, 4, 5, /*symmetric=*/false);
  auto sut = make_replica("tcgnn_backward_uses_A", make_cpu_float32_system());
  const AccuracyGateReport r =
      run_accuracy_gate(*sut, gcn_model(task.num_features(), 16, task.num_classes), task, short_run());
  EXPECT_FALSE(r.passed) << r.summary();
  ASSERT_TRUE(r.first_divergent_epoch);
  EXPECT_EQ(*r.first_divergent_epoch, 1) << r.summary();
  EXPECT_GT(r.loss_deviation[1], 100 * r.loss_bound[1]);
  EXPECT_THAT(r.summary(), HasSubstr("diverge first at epoch 1"));
}

TEST(AccuracyGate, SymmetricGraphHidesAForATransposeAndTheGatePassesIt) {
  // Why the paper's systems passed their own tests: with A = Aᵀ the bug computes the right thing.
  const auto task = tests::synthetic_task();
  ASSERT_TRUE(task.graph->is_symmetric());
  auto sut = make_replica("tcgnn_backward_uses_A", make_cpu_float32_system());
  const AccuracyGateReport r =
      run_accuracy_gate(*sut, gcn_model(task.num_features(), 16, task.num_classes), task, short_run());
  EXPECT_TRUE(r.passed) << r.summary();
}

TEST(AccuracyGate, GatWithoutAttentionGradientFails) {
  const auto task = tests::synthetic_task();
  auto sut = make_replica("tlpgnn_no_attention_grad", make_cpu_float32_system());
  const AccuracyGateReport r =
      run_accuracy_gate(*sut, gat_model(task.num_features(), 4, 3, task.num_classes), task, short_run());
  EXPECT_FALSE(r.passed) << r.summary();
  ASSERT_TRUE(r.first_divergent_epoch);
  EXPECT_EQ(*r.first_divergent_epoch, 1) << r.summary();
}

TEST(AccuracyGate, WrongDegreeNormalizationFailsAtTheFirstEpoch) {
  // A forward bug shows before any update: the very first loss differs.
  const auto task = tests::synthetic_task();
  auto sut = make_replica("gnnadvisor_sqrt_degree", make_cpu_float32_system());
  const AccuracyGateReport r =
      run_accuracy_gate(*sut, gcn_model(task.num_features(), 16, task.num_classes), task, short_run());
  EXPECT_FALSE(r.passed) << r.summary();
  EXPECT_EQ(r.first_divergent_epoch, 0) << r.summary();
}

TEST(AccuracyGate, AFailingSystemFailsTheGateAtTheEpochItFailed) {
  const auto task = tests::synthetic_task();
  class Unsupported final : public System {
   public:
    std::string name() const override { return "no_layers"; }
    bool supports(const std::string&) const override { return false; }
    Precision precision(const std::string&) const override { return Precision::float32; }
    Result evaluate(const Case&) override { return {}; }
  } none;
  const AccuracyGateReport r =
      run_accuracy_gate(none, gcn_model(task.num_features(), 16, task.num_classes), task, short_run());
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.first_divergent_epoch, 0);
  EXPECT_THAT(r.summary(), HasSubstr("does not support layer 'gcn'"));
}

}  // namespace
}  // namespace gnncheck::training
