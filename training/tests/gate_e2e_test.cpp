// The accuracy gate on real data: the float32 CPU system passes against the oracle on Cora with the
// full GCN recipe (dropout on, 200 epochs), and bug replicas fail it — a wrong degree normalization
// at epoch 0 on Cora, and a backward with A for Aᵀ at epoch 1 on a directed version of the CSBM graph
// (on a symmetric graph such as Cora that bug computes the right thing).
#include <gtest/gtest.h>

#include "oracle/cpu_systems.h"
#include "adapters/replicas/replicas.h"
#include "fixtures/generators.h"
#include "training/tests/e2e_support.h"

namespace gnncheck::training {
namespace {

TEST(GateE2E, Float32CpuSystemPassesOnCora) {
  const auto task = tests::load_task("cora");
  const TrainingRecipe r = gcn_recipe(task);
  auto sut = make_cpu_float32_system();
  const AccuracyGateReport report = run_accuracy_gate(*sut, r.model, task, r.config);
  fmt::print("{}\n", report.summary());
  EXPECT_TRUE(report.passed) << report.summary();
  EXPECT_EQ(report.loss_deviation.size(), 200u);
}

TEST(GateE2E, WrongDegreeNormalizationFailsOnCoraAtEpochZero) {
  const auto task = tests::load_task("cora");
  TrainingRecipe r = gcn_recipe(task);
  r.config.epochs = 20;  // the verdict is decided at epoch 0; a short run keeps the test cheap
  auto sut = make_replica("gnnadvisor_sqrt_degree", make_cpu_float32_system());
  const AccuracyGateReport report = run_accuracy_gate(*sut, r.model, task, r.config);
  fmt::print("{}\n", report.summary());
  EXPECT_FALSE(report.passed);
  EXPECT_EQ(report.first_divergent_epoch, 0) << report.summary();
}

// The CSBM graph with each undirected edge kept in one direction only (from the lower node id to
// the higher), so A ≠ Aᵀ and in- and out-degrees differ.
NodeClassificationTask directed_csbm() {
  Dataset d = make_csbm({}, 7);
  std::vector<index_t> dst, src;
  for (index_t i = 0; i < d.graph.n_dst(); ++i)
    for (index_t k = d.graph.row_ptr()[i]; k < d.graph.row_ptr()[i + 1]; ++k)
      if (d.graph.col_idx()[k] < i) {
        dst.push_back(i);
        src.push_back(d.graph.col_idx()[k]);
      }
  d.graph = Graph::from_edges(d.graph.n_dst(), d.graph.n_src(), dst, src);
  d.name = "csbm-directed";
  return NodeClassificationTask::from_dataset(d, /*row_normalize=*/false);
}

TEST(GateE2E, BackwardWithAForATransposeFailsOnADirectedGraphAtEpochOne) {
  const auto task = directed_csbm();
  ASSERT_FALSE(task.graph->is_symmetric());
  const TrainingRecipe r = gcn_recipe(task);
  auto sut = make_replica("tcgnn_backward_uses_A", make_cpu_float32_system());
  const AccuracyGateReport report = run_accuracy_gate(*sut, r.model, task, r.config);
  fmt::print("{}\n", report.summary());
  EXPECT_FALSE(report.passed);
  EXPECT_EQ(report.first_divergent_epoch, 1) << report.summary();
  // The correct float32 system passes the same gate on the same graph.
  auto correct = make_cpu_float32_system();
  const AccuracyGateReport ok = run_accuracy_gate(*correct, r.model, task, r.config);
  EXPECT_TRUE(ok.passed) << ok.summary();
}

}  // namespace
}  // namespace gnncheck::training
