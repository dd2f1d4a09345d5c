// gpu/benchmarks/accuracy_gate.cpp — the accuracy gate for the `gpu` system on a real dataset.
//
// Usage: gnncheck_gpu_accuracy_gate [DATASET] [EPOCHS]   (default: cora 200)
// Trains GCN and GAT (the papers' recipes, training/driver.h) three times from one seed: with the
// float64 oracle, with `cpu_float32` (the oracle's code in float32: what a correct float32
// implementation drifts by) and with `gpu`. The loss curves pass when every epoch's
// |loss_gpu − loss_oracle| ≤ 8 · max(max_epochs |loss_f32 − loss_oracle|, 2^-24 · loss_oracle) — the
// measured-error bound of DESIGN.md applied to the curve — and the final test accuracies within
// 1 point. Prints one line per model; exit code 0 only if both pass.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "oracle/cpu_systems.h"
#include "fixtures/dataset.h"
#include "gpu/context.h"
#include "gpu/gpu_systems.h"
#include "training/driver.h"
#include "platform/process_heap.h"

namespace {

using namespace gnncheck;
using namespace gnncheck::training;

bool gate(const std::string& model, const TrainingRecipe& recipe, const NodeClassificationTask& task) {
  auto oracle = make_oracle_system();
  auto f32 = make_cpu_float32_system();
  auto gpu = make_gpu_system();
  const TrainingHistory h64 = train(*oracle, recipe.model, task, recipe.config);
  const TrainingHistory h32 = train(*f32, recipe.model, task, recipe.config);
  const TrainingHistory hg = train(*gpu, recipe.model, task, recipe.config);
  if (!h64.ok() || !h32.ok() || !hg.ok()) {
    std::printf("%s: a run failed: oracle '%s' cpu_float32 '%s' gpu '%s'\n", model.c_str(), h64.message.c_str(),
                h32.message.c_str(), hg.message.c_str());
    return false;
  }
  double f32_drift = 0, gpu_drift = 0, worst_ratio = 0;
  int worst_epoch = 0;
  for (std::size_t e = 0; e < h64.epochs.size(); ++e)
    f32_drift = std::max(f32_drift, std::fabs(h32.epochs[e].train_loss - h64.epochs[e].train_loss));
  bool curves_ok = true;
  for (std::size_t e = 0; e < h64.epochs.size(); ++e) {
    const double bound = 8.0 * std::max(f32_drift, std::ldexp(h64.epochs[e].train_loss, -24));
    const double diff = std::fabs(hg.epochs[e].train_loss - h64.epochs[e].train_loss);
    gpu_drift = std::max(gpu_drift, diff);
    if (diff / bound > worst_ratio) {
      worst_ratio = diff / bound;
      worst_epoch = static_cast<int>(e);
    }
    curves_ok = curves_ok && diff <= bound;
  }
  const double acc_diff = 100.0 * std::fabs(hg.final_test_accuracy - h64.final_test_accuracy);
  const bool pass = curves_ok && acc_diff <= 1.0;
  std::printf("%s: %zu epochs; final test accuracy oracle %.2f%% cpu_float32 %.2f%% gpu %.2f%% (|Δ| %.2f points, "
              "limit 1); max |Δloss| gpu %.3g, cpu_float32 %.3g, bound 8·max(%.3g, u·loss); worst epoch %d at "
              "%.2f of its bound; gpu %.1f s in the system of %.1f s total, oracle %.1f s: %s\n",
              model.c_str(), h64.epochs.size(), 100 * h64.final_test_accuracy, 100 * h32.final_test_accuracy,
              100 * hg.final_test_accuracy, acc_diff, gpu_drift, f32_drift, f32_drift, worst_epoch, worst_ratio,
              hg.system_seconds, hg.seconds, h64.seconds, pass ? "PASS" : "FAIL");
  return pass;
}

}  // namespace

int main(int argc, char** argv) {
  gnncheck::retain_freed_memory_in_process();  // many evaluations of large tensors (platform/process_heap.h)
  if (!gpu::probe_device().available) {
    std::printf("skipped: no CUDA device\n");
    return 0;
  }
  const std::string dataset = argc > 1 ? argv[1] : "cora";
  const int epochs = argc > 2 ? std::atoi(argv[2]) : 200;
  try {
    const NodeClassificationTask task = NodeClassificationTask::from_dataset(load_dataset(dataset));
    TrainingRecipe gcn = gcn_recipe(task);
    TrainingRecipe gat = gat_recipe(task);
    gcn.config.epochs = epochs;
    gat.config.epochs = epochs;
    const bool gcn_ok = gate("gcn", gcn, task);
    const bool gat_ok = gate("gat", gat, task);
    return gcn_ok && gat_ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 2;
  }
}
