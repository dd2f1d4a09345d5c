// gnncheck/training/driver.h — training a model through the System interface, everything else in float64.
//
// For every layer the driver builds a Case (the layer's target and attributes, the graph, the layer
// input "x", the layer's parameters) and asks the system for the forward; with the gradient of the
// layer's output it asks again for the backward (outputs + gradients of x and of every parameter).
// Activations, dropout, the softmax cross-entropy, Adam and all bookkeeping stay in the driver in
// float64, so the only thing that differs between two systems is how they evaluate the layers —
// and the oracle is simply one more system.
//
// Determinism: initial parameters (model.h) and every dropout mask are pure functions of
// config.seed (layers/dropout.h), so two runs with one seed see identical masks whatever the system.
// Per epoch the record holds the training loss of that epoch's forward (before its update) and the
// accuracies of the same parameters in evaluation mode (no dropout); the final accuracies are those
// after the last update.
//
// Memory: every epoch reallocates feature-sized tensors; a program that trains calls
// retain_freed_memory_in_process() (platform/process_heap.h) once, so they are not faulted in again.
//
//   auto task = NodeClassificationTask::from_dataset(load_dataset("cora"));
//   TrainingRecipe r = gcn_recipe(task);
//   auto oracle = make_oracle_system();
//   TrainingHistory h = train(*oracle, r.model, task, r.config);
//   fmt::print("test accuracy {:.1f}%\n", 100 * h.final_test_accuracy);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/system.h"
#include "training/model.h"
#include "training/task.h"

namespace gnncheck::training {

enum class DecayScope { all_layers, first_layer };

struct TrainingConfig {
  int epochs = 200;
  double learning_rate = 0.01;
  double weight_decay = 5e-4;
  DecayScope decay_scope = DecayScope::all_layers;
  double input_dropout = 0.0;      // on the input features (off by default)
  double hidden_dropout = 0.0;     // on the activations between layers
  double attention_dropout = 0.0;  // inside layers that take it (GAT's attn_dropout)
  std::uint64_t seed = 1;          // initial parameters and dropout masks
};

// A model with the training configuration its paper used.
struct TrainingRecipe {
  ModelSpec model;
  TrainingConfig config;
};

// The published recipe of `target`'s entry (oracle::AccuracyRecipe: the two-layer model and the
// paper's optimizer settings, 200 epochs), with the hidden layer's heads and channels where given;
// nullopt for a target whose entry has none. The targets that have one, in catalogue order.
std::optional<TrainingRecipe> recipe_for(const std::string& target, const NodeClassificationTask& task,
                                         std::optional<index_t> heads = std::nullopt,
                                         std::optional<index_t> hidden = std::nullopt);
std::vector<std::string> trained_targets();
// The recipes by name: Kipf & Welling's GCN (hidden 16), Veličković et al.'s GAT (heads × hidden;
// 8 × 8 is the Cora recipe), GIN-0 (hidden 64) and GraphSAGE-mean (hidden 16).
TrainingRecipe gcn_recipe(const NodeClassificationTask& task);
TrainingRecipe gat_recipe(const NodeClassificationTask& task, index_t heads = 8, index_t hidden = 8);
TrainingRecipe gin_recipe(const NodeClassificationTask& task);
TrainingRecipe sage_recipe(const NodeClassificationTask& task);

struct EpochRecord {
  int epoch = 0;
  double train_loss = 0.0;  // the loss the gradient was taken of (dropout applied when on)
  double val_loss = 0.0;    // evaluation mode
  double train_accuracy = 0.0;
  double val_accuracy = 0.0;
  double test_accuracy = 0.0;
};

struct TrainingHistory {
  std::string system;
  std::string model;
  std::string task;
  std::uint64_t seed = 0;
  std::vector<EpochRecord> epochs;  // the epochs completed
  double final_train_accuracy = 0.0;
  double final_val_accuracy = 0.0;
  double final_test_accuracy = 0.0;
  // Model selection on the validation set, as the GAT paper's early stopping does: the evaluation
  // with the highest validation accuracy (the earliest on ties; the final parameters count as epoch
  // `epochs.size()`), and the test accuracy of those parameters.
  int best_val_epoch = 0;
  double best_val_accuracy = 0.0;
  double test_accuracy_at_best_val = 0.0;
  Status status = Status::ok;  // not ok: the system failed or answered with bad tensors; see message
  std::string message;         // names the epoch, layer and pass that failed
  double seconds = 0.0;        // wall time of the whole run
  double system_seconds = 0.0; // the sum of the times the system reported for its evaluations

  bool ok() const { return status == Status::ok; }
  std::vector<double> train_losses() const;
};

// Throws InputError for an invalid model, task or configuration (model and task disagreeing on
// widths, dropout outside [0, 1), epochs < 1, …). Failures of the system are recorded in the
// returned history, never thrown.
TrainingHistory train(System& system, const ModelSpec& model, const NodeClassificationTask& task,
                      const TrainingConfig& config, const ModelParameters& initial);
// Same, from initial_parameters(model, config.seed).
TrainingHistory train(System& system, const ModelSpec& model, const NodeClassificationTask& task,
                      const TrainingConfig& config);

}  // namespace gnncheck::training
