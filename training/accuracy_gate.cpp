#include "training/accuracy_gate.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "oracle/cpu_systems.h"

namespace gnncheck::training {

namespace {

// The precision with the largest unit roundoff among the model's layers.
Precision coarsest_precision(System& system, const ModelSpec& model) {
  Precision coarsest = Precision::float64;
  for (const auto& layer : model.layers) {
    const Precision p = system.precision(layer.target);
    if (unit_roundoff(p) > unit_roundoff(coarsest)) coarsest = p;
  }
  return coarsest;
}

}  // namespace

std::string AccuracyGateReport::summary() const {
  std::string verdict = fmt::format("accuracy gate {}: {} on {} through {} ({}) vs oracle", passed ? "PASSED" : "FAILED",
                                    model, task, system, to_string(precision));
  std::string curves;
  if (!tested.ok()) {
    curves = fmt::format("the system's training failed at epoch {}: {}", first_divergent_epoch.value_or(0), tested.message);
  } else if (first_divergent_epoch) {
    const auto e = static_cast<size_t>(*first_divergent_epoch);
    curves = fmt::format("loss curves diverge first at epoch {}: |{:.9g} − {:.9g}| = {:.3g} > bound {:.3g}; worst {:.3g}× the "
                         "bound at epoch {}",
                         e, tested.epochs[e].train_loss, oracle.epochs[e].train_loss, loss_deviation[e], loss_bound[e],
                         worst_ratio, worst_epoch);
  } else {
    curves = fmt::format("loss curves agree at all {} epochs (worst {:.3g}× the bound, at epoch {})", loss_deviation.size(),
                         worst_ratio, worst_epoch);
  }
  const std::string accuracy =
      tested.ok() ? fmt::format("final test accuracy {:.1f}% vs oracle {:.1f}% ({:.2f} points, limit {})",
                                100 * tested.final_test_accuracy, 100 * oracle.final_test_accuracy,
                                100 * accuracy_difference, accuracy_agrees ? "met" : "exceeded")
                  : std::string("no final accuracy");
  return fmt::format("{}\n  {}\n  {}", verdict, curves, accuracy);
}

AccuracyGateReport run_accuracy_gate(System& tested, const ModelSpec& model, const NodeClassificationTask& task,
                                     const TrainingConfig& config, const AccuracyGateOptions& options) {
  if (!(options.bound_factor > 0) || !(options.max_accuracy_difference >= 0))
    throw InputError(fmt::format("accuracy gate: bound_factor must be > 0 and max_accuracy_difference ≥ 0, got {} and {}",
                                 options.bound_factor, options.max_accuracy_difference));
  const ModelParameters initial = initial_parameters(model, config.seed);
  AccuracyGateReport report;
  report.system = tested.name();
  report.model = model.name;
  report.task = task.name;
  report.precision = coarsest_precision(tested, model);

  auto oracle = make_oracle_system();
  auto reference = make_cpu_float32_system();
  report.oracle = train(*oracle, model, task, config, initial);
  report.reference = train(*reference, model, task, config, initial);
  if (!report.oracle.ok() || !report.reference.ok())
    throw InternalError(fmt::format("accuracy gate: the oracle's own training failed: {}{}", report.oracle.message,
                                    report.reference.message));
  report.tested = train(tested, model, task, config, initial);

  const double u32 = unit_roundoff(Precision::float32);
  const double u = unit_roundoff(report.precision);
  report.bound_rule = fmt::format(
      "bound(e) = {} · max(({:.3g} / {:.3g}) · max_{{e' ≤ e}} |L_cpu_float32(e') − L_oracle(e')|, {:.3g} · |L_oracle(e)|)",
      options.bound_factor, u, u32, u);
  double reference_deviation = 0.0;
  for (const auto& epoch : report.oracle.epochs) {
    const auto e = static_cast<size_t>(epoch.epoch);
    reference_deviation = std::max(reference_deviation, std::abs(report.reference.epochs[e].train_loss - epoch.train_loss));
    report.loss_bound.push_back(options.bound_factor *
                                std::max(u / u32 * reference_deviation, u * std::abs(epoch.train_loss)));
  }
  for (const auto& epoch : report.tested.epochs) {
    const auto e = static_cast<size_t>(epoch.epoch);
    double deviation = std::abs(epoch.train_loss - report.oracle.epochs[e].train_loss);
    if (std::isnan(deviation)) deviation = INFINITY;
    report.loss_deviation.push_back(deviation);
    const double ratio = deviation / report.loss_bound[e];
    if (e == 0 || ratio > report.worst_ratio) {
      report.worst_ratio = ratio;
      report.worst_epoch = static_cast<int>(e);
    }
    if (deviation > report.loss_bound[e] && !report.first_divergent_epoch) report.first_divergent_epoch = static_cast<int>(e);
  }
  if (!report.tested.ok() && !report.first_divergent_epoch)
    report.first_divergent_epoch = static_cast<int>(report.tested.epochs.size());
  report.curves_agree = report.tested.ok() && !report.first_divergent_epoch;
  report.accuracy_difference = std::abs(report.tested.final_test_accuracy - report.oracle.final_test_accuracy);
  report.accuracy_agrees = report.tested.ok() && report.accuracy_difference <= options.max_accuracy_difference + 1e-12;
  report.passed = report.curves_agree && report.accuracy_agrees;
  return report;
}

}  // namespace gnncheck::training
