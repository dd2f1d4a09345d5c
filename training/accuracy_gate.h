// gnncheck/training/accuracy_gate.h — does training with a system follow training with the oracle?
//
// The gate trains the same model on the same task from the same initial parameters and dropout
// masks three times through the System interface: with the oracle (float64), with the oracle's own
// code in float32 (cpu_float32, the reference for rounding), and with the system under test. It
// passes when
//   1. the training-loss curves agree at every epoch:  |L_sys(e) − L_oracle(e)| ≤ bound(e), and
//   2. the final test accuracies differ by at most max_accuracy_difference (1 point).
// It reports the first epoch where the curves diverge: a wrong backward shows there (usually epoch 1,
// right after the first update) long before it costs accuracy.
//
// The bound (why): a correct implementation differs from the oracle only by rounding, and rounding
// errors in training propagate through every later epoch. Rather than guess how much they grow, the
// gate measures it on this very run: the float32 reference is a correct implementation whose only
// difference from the oracle is rounding at unit roundoff u32, so
//   R(e) = max_{e' ≤ e} |L_ref(e') − L_oracle(e')|
// is what correct float32 arithmetic does to this loss curve up to epoch e (the running maximum
// keeps an epoch where the reference happened to land close from tightening the bound). To first
// order the deviation scales with the unit roundoff, so a system declaring precision p is allowed
//   bound(e) = factor · max( (u_p / u32) · R(e),  u_p · |L_oracle(e)| )
// with factor = 10 for summation orders, blockings and atomics that differ from the reference's; the
// second term keeps the bound above the rounding of the loss value itself. A backward that is wrong
// (A for Aᵀ, a missing term) moves the parameters by O(learning rate) in the wrong direction at the
// first update, which is orders of magnitude above this bound.
//
//   auto sut = gnncheck::make_cpu_float32_system();
//   AccuracyGateReport r = run_accuracy_gate(*sut, recipe.model, task, recipe.config);
//   if (!r.passed) fmt::print("{}\n", r.summary());   // names the first divergent epoch
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "training/driver.h"

namespace gnncheck::training {

struct AccuracyGateOptions {
  double bound_factor = 10.0;               // see the header comment
  double max_accuracy_difference = 0.01;    // final test accuracy, as a fraction (0.01 = 1 point)
};

struct AccuracyGateReport {
  std::string system;
  std::string model;
  std::string task;
  Precision precision = Precision::float32;  // the coarsest precision the system declares for the model's layers
  TrainingHistory oracle;     // float64 ground truth
  TrainingHistory reference;  // cpu_float32: the rounding reference
  TrainingHistory tested;     // the system under test
  std::vector<double> loss_deviation;  // |L_tested(e) − L_oracle(e)| per epoch the tested run completed
  std::vector<double> loss_bound;      // bound(e) per epoch of the oracle run
  std::optional<int> first_divergent_epoch;  // first e with deviation > bound, or where the tested run failed
  double worst_ratio = 0.0;                  // max_e deviation / bound
  int worst_epoch = 0;
  double accuracy_difference = 0.0;          // |final test accuracy tested − oracle|
  bool curves_agree = false;
  bool accuracy_agrees = false;
  bool passed = false;
  std::string bound_rule;  // the rule with the numbers used, for reports

  // Two or three lines: verdict, divergence epoch or worst ratio, both accuracies.
  std::string summary() const;
};

// Throws InputError for an invalid model, task or configuration; a failing system is a failed gate.
AccuracyGateReport run_accuracy_gate(System& tested, const ModelSpec& model, const NodeClassificationTask& task,
                                     const TrainingConfig& config, const AccuracyGateOptions& options = {});

}  // namespace gnncheck::training
