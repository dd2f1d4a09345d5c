// The training driver: loss and optimizer pieces, determinism, dropout masks, errors, and that a
// system's failure is reported with the epoch and layer where it happened.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "oracle/cpu_systems.h"
#include "training/adam.h"
#include "training/driver.h"
#include "training/tests/synthetic_task.h"

namespace gnncheck::training {
namespace {

using ::testing::HasSubstr;

TEST(CrossEntropy, GradientMatchesFiniteDifferences) {
  Tensor logits({3, 4}, std::vector<double>{0.1, -0.3, 2.0, 0.5, 1.0, 1.0, 1.0, 1.0, -2.0, 0.0, 3.0, 0.25});
  const std::vector<index_t> labels{2, 0, -1};
  const std::vector<index_t> nodes{0, 1, 2};
  const LossAndGradient l = cross_entropy(logits, labels, nodes);
  EXPECT_NEAR(l.loss, cross_entropy_loss(logits, labels, nodes), 1e-15);
  for (index_t k = 0; k < logits.size(); ++k) {
    Tensor plus = logits, minus = logits;
    plus[k] += 1e-6;
    minus[k] -= 1e-6;
    const double numerical =
        (cross_entropy_loss(plus, labels, nodes) - cross_entropy_loss(minus, labels, nodes)) / 2e-6;
    EXPECT_NEAR(l.grad_logits[k], numerical, 1e-8) << "element " << k;
  }
  for (index_t c = 0; c < 4; ++c) EXPECT_EQ(l.grad_logits.at(2, c), 0.0);  // unlabeled row
}

TEST(CrossEntropy, LargeLogitsStayFinite) {
  Tensor logits({1, 2}, std::vector<double>{1000.0, -1000.0});
  EXPECT_NEAR(cross_entropy_loss(logits, {1}, {0}), 2000.0, 1e-9);
}

TEST(Accuracy, CountsOnlyLabeledNodes) {
  Tensor logits({3, 2}, std::vector<double>{1, 0, 0, 1, 0, 1});
  EXPECT_DOUBLE_EQ(accuracy(logits, {0, 0, -1}, {0, 1, 2}), 0.5);
}

TEST(Adam, FirstStepMovesEachParameterByTheLearningRate) {
  Adam opt({.learning_rate = 0.1});
  TensorMap params{{"w", Tensor({2}, std::vector<double>{1.0, -1.0})}};
  opt.step(params, {{"w", Tensor({2}, std::vector<double>{3.0, -0.001})}});
  // m̂ / √v̂ = g / |g| on the first step.
  EXPECT_NEAR(params["w"][0], 0.9, 1e-6);
  EXPECT_NEAR(params["w"][1], -0.9, 1e-4);
}

TEST(Adam, WeightDecayIsAddedToTheGradientAndFrozenParametersStay) {
  Adam opt({.learning_rate = 0.1, .weight_decay = 1.0});
  TensorMap params{{"w", Tensor({1}, std::vector<double>{2.0})}, {"eps", Tensor({1}, std::vector<double>{0.5})}};
  opt.step(params, {{"w", Tensor({1}, std::vector<double>{-1.0})}}, {"eps"});
  EXPECT_NEAR(params["w"][0], 1.9, 1e-6);  // g = -1 + 1·2 > 0: moves down
  EXPECT_EQ(params["eps"][0], 0.5);
}

TEST(Adam, MissingGradientIsNamed) {
  Adam opt({});
  TensorMap params{{"bias", Tensor({1})}};
  EXPECT_THROW(
      {
        try {
          opt.step(params, {});
        } catch (const InputError& e) {
          EXPECT_THAT(e.what(), HasSubstr("'bias'"));
          throw;
        }
      },
      InputError);
}

TEST(Model, InitialParametersAreGlorotAndDeterministic) {
  const ModelSpec m = gcn_model(100, 16, 7);
  const ModelParameters a = initial_parameters(m, 3), b = initial_parameters(m, 3), c = initial_parameters(m, 4);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  const double limit = std::sqrt(6.0 / 116.0);
  double largest = 0;
  for (double v : a[0].at("weight").values()) largest = std::max(largest, std::abs(v));
  EXPECT_LE(largest, limit);
  EXPECT_GT(largest, 0.9 * limit);
  for (double v : a[0].at("bias").values()) EXPECT_EQ(v, 0.0);
}

TEST(Model, PresetsHaveConsistentWidths) {
  for (const ModelSpec& m : {gcn_model(10, 16, 3), gat_model(10, 8, 8, 3), gat_model(10, 16, 3, 3),
                             gin_model(10, 64, 3), sage_model(10, 16, 3)}) {
    EXPECT_NO_THROW(validate_model(m)) << m.name;
    EXPECT_EQ(layer_output_width(m.layers.back()), 3) << m.name;
  }
  EXPECT_EQ(layer_input_width(gat_model(10, 8, 8, 3).layers[1]), 64);
  EXPECT_EQ(gin_model(10, 64, 3).layers[0].frozen, std::set<std::string>{"eps"});
}

TEST(Model, WidthMismatchIsAnErrorNamingBothLayers) {
  ModelSpec m = gcn_model(10, 16, 3);
  m.layers[1].attributes.set("in_features", std::int64_t{15});
  try {
    validate_model(m);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("layer 1 (gcn) takes 15 features but layer 0 (gcn) gives 16"));
  }
}

TEST(Driver, OracleLearnsTheSyntheticTaskAndLossDecreases) {
  const auto task = tests::synthetic_task();
  TrainingConfig config;
  config.epochs = 60;
  auto oracle = make_oracle_system();
  const TrainingHistory h = train(*oracle, gcn_model(task.num_features(), 16, task.num_classes), task, config);
  ASSERT_TRUE(h.ok()) << h.message;
  ASSERT_EQ(h.epochs.size(), 60u);
  EXPECT_LT(h.epochs.back().train_loss, 0.5 * h.epochs.front().train_loss);
  EXPECT_GT(h.final_test_accuracy, 0.8);
  EXPECT_EQ(h.system, "oracle");
}

TEST(Driver, ModelSelectionPicksTheEarliestBestValidationEvaluation) {
  const auto task = tests::synthetic_task();
  TrainingConfig config;
  config.epochs = 25;
  config.input_dropout = config.hidden_dropout = 0.5;
  auto oracle = make_oracle_system();
  const TrainingHistory h = train(*oracle, gcn_model(task.num_features(), 16, task.num_classes), task, config);
  ASSERT_TRUE(h.ok()) << h.message;
  double best = h.final_val_accuracy;
  for (const auto& e : h.epochs) best = std::max(best, e.val_accuracy);
  EXPECT_EQ(h.best_val_accuracy, best);
  if (h.best_val_epoch < 25) {
    const EpochRecord& chosen = h.epochs[static_cast<size_t>(h.best_val_epoch)];
    EXPECT_EQ(chosen.val_accuracy, best);
    EXPECT_EQ(h.test_accuracy_at_best_val, chosen.test_accuracy);
    for (int e = 0; e < h.best_val_epoch; ++e) EXPECT_LT(h.epochs[static_cast<size_t>(e)].val_accuracy, best);
  } else {
    EXPECT_EQ(h.test_accuracy_at_best_val, h.final_test_accuracy);
  }
}

TEST(Driver, EveryModelTrainsThroughTheOracle) {
  const auto task = tests::synthetic_task();
  TrainingConfig config;
  config.epochs = 30;
  auto oracle = make_oracle_system();
  for (const ModelSpec& m : {gat_model(task.num_features(), 4, 3, task.num_classes), gin_model(task.num_features(), 16, task.num_classes, true),
                             sage_model(task.num_features(), 16, task.num_classes)}) {
    const TrainingHistory h = train(*oracle, m, task, config);
    ASSERT_TRUE(h.ok()) << m.name << ": " << h.message;
    EXPECT_LT(h.epochs.back().train_loss, h.epochs.front().train_loss) << m.name;
  }
}

TEST(Driver, DeterministicForASeedWithDropout) {
  const auto task = tests::synthetic_task();
  TrainingRecipe r = gat_recipe(task, 2, 4);
  r.config.epochs = 15;
  auto oracle = make_oracle_system();
  const TrainingHistory a = train(*oracle, r.model, task, r.config);
  const TrainingHistory b = train(*oracle, r.model, task, r.config);
  ASSERT_TRUE(a.ok() && b.ok()) << a.message << b.message;
  EXPECT_EQ(a.train_losses(), b.train_losses());
  r.config.seed = 2;
  const TrainingHistory c = train(*oracle, r.model, task, r.config);
  EXPECT_NE(a.train_losses(), c.train_losses());
}

TEST(Driver, DropoutChangesTheTrainingLossButNotTheFirstEvaluation) {
  const auto task = tests::synthetic_task();
  TrainingConfig plain;
  plain.epochs = 1;
  TrainingConfig dropped = plain;
  dropped.input_dropout = dropped.hidden_dropout = 0.5;
  auto oracle = make_oracle_system();
  const ModelSpec m = gcn_model(task.num_features(), 16, task.num_classes);
  const TrainingHistory a = train(*oracle, m, task, plain), b = train(*oracle, m, task, dropped);
  EXPECT_NE(a.epochs[0].train_loss, b.epochs[0].train_loss);
  EXPECT_EQ(a.epochs[0].val_loss, b.epochs[0].val_loss);  // same parameters, evaluation mode
}

// A system that fails on the backward of layer 1 from epoch 2 on.
class FailingSystem final : public System {
 public:
  std::string name() const override { return "failing"; }
  bool supports(const std::string& t) const override { return inner_->supports(t); }
  Precision precision(const std::string& t) const override { return inner_->precision(t); }
  Result evaluate(const Case& c) override {
    if (!c.grad_outputs.empty() && c.inputs.at("x").row_size() == 16 && ++backward_calls_ > 2) {
      Result r;
      r.status = Status::error;
      r.message = "kernel launch failed";
      return r;
    }
    return inner_->evaluate(c);
  }

 private:
  std::unique_ptr<System> inner_ = make_oracle_system();
  int backward_calls_ = 0;
};

TEST(Driver, SystemFailureIsRecordedWithEpochLayerAndPass) {
  const auto task = tests::synthetic_task();
  TrainingConfig config;
  config.epochs = 10;
  FailingSystem failing;
  const TrainingHistory h = train(failing, gcn_model(task.num_features(), 16, task.num_classes), task, config);
  EXPECT_EQ(h.status, Status::error);
  EXPECT_THAT(h.message, HasSubstr("epoch 2, layer 1 (gcn) backward: error: kernel launch failed"));
  EXPECT_EQ(h.epochs.size(), 3u);
}

TEST(Driver, ConfigurationErrorsAreThrown) {
  const auto task = tests::synthetic_task();
  auto oracle = make_oracle_system();
  TrainingConfig config;
  config.hidden_dropout = 1.0;
  EXPECT_THROW(train(*oracle, gcn_model(task.num_features(), 16, task.num_classes), task, config), InputError);
  EXPECT_THROW(train(*oracle, gcn_model(task.num_features() + 1, 16, task.num_classes), task, TrainingConfig{}),
               InputError);
}

}  // namespace
}  // namespace gnncheck::training
