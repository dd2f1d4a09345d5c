// gnncheck_train_benchmark — times one training run of a model recipe on a dataset through a system
// and prints the figures docs/benchmarks.md records.
//
//   build/training/gnncheck_train_benchmark --model gcn --dataset cora --system oracle
//   OMP_NUM_THREADS=2 build/training/gnncheck_train_benchmark --model gat --heads 8 --hidden 8
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <omp.h>

#include "oracle/cpu_systems.h"
#include "training/driver.h"
#include "platform/process_heap.h"

int main(int argc, char** argv) {
  gnncheck::retain_freed_memory_in_process();  // many evaluations of large tensors (platform/process_heap.h)
  using namespace gnncheck;
  using namespace gnncheck::training;
  CLI::App app{"Time one training run of a model recipe through a system"};
  std::string model = "gcn", dataset = "cora", system_name = "oracle";
  int epochs = 200;
  index_t heads = 0, hidden = 0;  // 0: the recipe's
  std::uint64_t seed = 1;
  const std::vector<std::string> trained = trained_targets();
  app.add_option("--model", model, fmt::format("{}", fmt::join(trained, " | ")))->check(CLI::IsMember(trained));
  app.add_option("--dataset", dataset, "a folder of the datasets directory (cora, citeseer)");
  app.add_option("--system", system_name, "oracle | cpu_float32")->check(CLI::IsMember({"oracle", "cpu_float32"}));
  app.add_option("--epochs", epochs, "training epochs")->check(CLI::PositiveNumber);
  app.add_option("--heads", heads, "heads of the hidden layer, for a layer with heads (default: the recipe's)")
      ->check(CLI::PositiveNumber);
  app.add_option("--hidden", hidden, "channels of the hidden layer, per head (default: the recipe's)")
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", seed, "seed of the initial parameters and dropout masks");
  CLI11_PARSE(app, argc, argv);
  try {
    const NodeClassificationTask task = NodeClassificationTask::from_dataset(load_dataset(dataset));
    TrainingRecipe recipe = *recipe_for(model, task, heads > 0 ? std::optional<index_t>(heads) : std::nullopt,
                                        hidden > 0 ? std::optional<index_t>(hidden) : std::nullopt);
    recipe.config.epochs = epochs;
    recipe.config.seed = seed;
    auto system = system_name == "oracle" ? make_oracle_system() : make_cpu_float32_system();
    const TrainingHistory h = train(*system, recipe.model, task, recipe.config);
    if (!h.ok()) {
      fmt::print(stderr, "training failed: {}\n", h.message);
      return 1;
    }
    fmt::print("{} on {} through {}: {} epochs, {} threads, {:.2f} s wall ({:.2f} s in the system), final loss {:.4f}, "
               "test accuracy {:.1f}% (val {:.1f}%)\n",
               recipe.model.name, task.name, h.system, epochs, omp_get_max_threads(), h.seconds, h.system_seconds,
               h.epochs.back().train_loss, 100 * h.final_test_accuracy, 100 * h.final_val_accuracy);
  } catch (const InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
  return 0;
}
