// gnncheck-replica-accuracy: trains a model on a data set with the correct system and with bug
// replicas from the same initialization and prints their final test accuracies side by side — the
// pitfalls paper's accuracy experiment, reproduced through the System interface.
//
//   gnncheck-replica-accuracy [--dataset cora] [--epochs 200] [--seed 1] [--model gcn|gat|all]
//                             [--replica NAME]... [--skip-correct] [--norm symmetric|row_mean]
//                             [--gat-heads H] [--gat-hidden C]
//
// Rows: GCN (Kipf & Welling recipe) with the oracle, tcgnn_backward_uses_A, gnnadvisor_sqrt_degree
// and gnnadvisor_norm_backward_order; GAT (8 heads × 8, Veličković recipe) with the oracle,
// gat_backward_untransposed_attention, tlpgnn_no_attention_grad and missing_eshuffle. --model keeps
// one model's rows; --replica (repeatable) keeps the correct row and those replicas' rows;
// --skip-correct drops the correct row (the difference column is then empty); --norm sets the GCN
// layers' normalization (Kipf & Welling: symmetric); --gat-heads and --gat-hidden set the GAT's
// first layer (default 8 × 8, Veličković's Cora model; the pitfalls paper's GAT is 1 × 16 and 3 × 16).
// Output: a Markdown table on stdout.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "oracle/cpu_systems.h"
#include "adapters/replicas/replicas.h"
#include "fixtures/dataset.h"
#include "training/driver.h"
#include "platform/process_heap.h"

int main(int argc, char** argv) {
  gnncheck::retain_freed_memory_in_process();  // many evaluations of large tensors (platform/process_heap.h)
  using namespace gnncheck;
  std::string dataset = "cora";
  int epochs = 200;
  std::uint64_t seed = 1;
  std::string only = "all";
  std::vector<std::string> only_replicas;
  bool skip_correct = false;
  std::string norm = "symmetric";
  index_t gat_heads = 8, gat_hidden = 8;
  const char* usage =
      "usage: gnncheck-replica-accuracy [--dataset NAME] [--epochs N] [--seed S] [--model gcn|gat|all]\n"
      "                                 [--replica NAME]... [--skip-correct] [--norm symmetric|row_mean]\n"
      "                                 [--gat-heads H] [--gat-hidden C]\n";
  int k = 1;
  for (; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "--skip-correct") {
      skip_correct = true;
      continue;
    }
    if (k + 1 >= argc) break;
    const char* value = argv[++k];
    if (arg == "--dataset") dataset = value;
    else if (arg == "--epochs") epochs = std::atoi(value);
    else if (arg == "--seed") seed = std::strtoull(value, nullptr, 10);
    else if (arg == "--model") only = value;
    else if (arg == "--replica") only_replicas.push_back(value);
    else if (arg == "--norm") norm = value;
    else if (arg == "--gat-heads") gat_heads = std::atoi(value);
    else if (arg == "--gat-hidden") gat_hidden = std::atoi(value);
    else {
      std::cerr << usage;
      return 2;
    }
  }
  if (k != argc || epochs < 1 || gat_heads < 1 || gat_hidden < 1 || (only != "all" && only != "gcn" && only != "gat")) {
    std::cerr << usage;
    return 2;
  }
  try {
    for (const auto& name : only_replicas) find_replica(name);  // an unknown name is an InputError
    const auto task = training::NodeClassificationTask::from_dataset(load_dataset(dataset));
    struct Row {
      std::string model, replica;
    };
    const Row rows[] = {{"gcn", ""},
                        {"gcn", "tcgnn_backward_uses_A"},
                        {"gcn", "gnnadvisor_sqrt_degree"},
                        {"gcn", "gnnadvisor_norm_backward_order"},
                        {"gat", ""},
                        {"gat", "gat_backward_untransposed_attention"},
                        {"gat", "tlpgnn_no_attention_grad"},
                        {"gat", "missing_eshuffle"}};
    fmt::print("| model | system | final test accuracy | difference to the correct system | final train loss | seconds |\n"
               "|---|---|---|---|---|---|\n");
    std::optional<double> correct_accuracy;
    for (const Row& row : rows) {
      if (only != "all" && row.model != only) continue;
      if (row.replica.empty() && skip_correct) continue;
      if (!row.replica.empty() && !only_replicas.empty() &&
          std::find(only_replicas.begin(), only_replicas.end(), row.replica) == only_replicas.end())
        continue;
      training::TrainingRecipe recipe =
          row.model == "gcn" ? training::gcn_recipe(task) : training::gat_recipe(task, gat_heads, gat_hidden);
      recipe.config.epochs = epochs;
      recipe.config.seed = seed;
      if (row.model == "gcn")
        for (auto& layer : recipe.model.layers) layer.attributes.set("norm", norm);
      std::unique_ptr<System> system = make_oracle_system();
      if (!row.replica.empty()) system = make_replica(row.replica, std::move(system));
      const training::TrainingHistory h = training::train(*system, recipe.model, task, recipe.config);
      if (!h.ok()) {
        fmt::print("| {} | {} | failed: {} | | | |\n", row.model, system->name(), h.message);
        continue;
      }
      if (row.replica.empty()) correct_accuracy = h.final_test_accuracy;
      const std::string variant = row.model == "gcn" ? (norm != "symmetric" ? fmt::format(" ({})", norm) : "")
                                                     : fmt::format(" {}×{}", gat_heads, gat_hidden);
      fmt::print("| {}{} | {} | {:.1f}% | {} | {:.4f} | {:.1f} |\n", row.model, variant, system->name(),
                 100 * h.final_test_accuracy,
                 row.replica.empty() || !correct_accuracy
                     ? std::string("–")
                     : fmt::format("{:+.1f} points", 100 * (h.final_test_accuracy - *correct_accuracy)),
                 h.epochs.empty() ? 0.0 : h.epochs.back().train_loss, h.seconds);
      std::fflush(stdout);
    }
    fmt::print("\n{} ({} nodes), {} epochs, seed {}.\n", dataset, task.graph->n_dst(), epochs, seed);
  } catch (const InputError& e) {
    std::cerr << "gnncheck-replica-accuracy: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
