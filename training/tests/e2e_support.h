// gnncheck/training/tests/e2e_support.h — loading the shared datasets for the end-to-end tests.
//
// The datasets live in ../shared/datasets (fixtures/dataset.h finds them). When they are missing the
// test fails with the loader's message, which lists every place it looked: an accuracy test that
// silently skipped would hide exactly the regressions it exists for.
#pragma once

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "platform/process_heap.h"
#include "oracle/cpu_systems.h"
#include "training/accuracy_gate.h"

namespace gnncheck::training::tests {

inline NodeClassificationTask load_task(const std::string& name) {
  retain_freed_memory_in_process();  // as the programs that train do (platform/process_heap.h)
  try {
    return NodeClassificationTask::from_dataset(load_dataset(name));
  } catch (const InputError& e) {
    ADD_FAILURE() << "dataset '" << name << "' could not be loaded (these tests need ../shared/datasets): " << e.what();
    throw;
  }
}

// One line per run in the test log, and the figure as a test property (ctest's XML output keeps it).
inline void record_run(const std::string& key, const TrainingHistory& h) {
  const std::string line = fmt::format(
      "{} on {} through {}: test accuracy {:.1f}% (val {:.1f}%) after the last epoch, {:.1f}% at the best validation "
      "accuracy {:.1f}% (epoch {}), final loss {:.4f}, {} epochs in {:.1f} s",
      h.model, h.task, h.system, 100 * h.final_test_accuracy, 100 * h.final_val_accuracy,
      100 * h.test_accuracy_at_best_val, 100 * h.best_val_accuracy, h.best_val_epoch,
      h.epochs.empty() ? 0.0 : h.epochs.back().train_loss, h.epochs.size(), h.seconds);
  fmt::print("{}\n", line);
  ::testing::Test::RecordProperty(key, fmt::format("{:.1f}", 100 * h.final_test_accuracy));
}

// Trains `recipe` with the oracle system on `task`, records the run under `key` and returns it. A run
// that stops early (non-finite loss, system error) is a test failure with the driver's message.
inline TrainingHistory train_oracle_and_record(const NodeClassificationTask& task, const TrainingRecipe& recipe,
                                              const std::string& key) {
  auto oracle = make_oracle_system();
  TrainingHistory h = train(*oracle, recipe.model, task, recipe.config);
  EXPECT_TRUE(h.ok()) << h.message;
  record_run(key, h);
  return h;
}

}  // namespace gnncheck::training::tests
