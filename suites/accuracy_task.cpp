// The `accuracy` task kind: an accuracy gate (training/accuracy_gate.h). The target's model is
// trained with the system, with the oracle and with the float32 reference from one initialization,
// and the loss curves and final accuracies must agree.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fixtures/dataset.h"
#include "fixtures/generators.h"
#include "training/accuracy_gate.h"
#include "training/driver.h"
#include "training/task.h"
#include "suites/task.h"

namespace gnncheck::suites {
namespace {

using reports::Outcome;

class AccuracyTask final : public TaskKind {
 public:
  std::string name() const override { return "accuracy"; }
  std::vector<std::string> options() const override { return {"epochs", "bound_factor", "max_accuracy_difference"}; }
  bool draws_cases() const override { return false; }
  bool slow() const override { return true; }

  void validate(const Entry& e, const Suite& suite) const override {
    const std::vector<std::string> trained = training::trained_targets();
    for (const auto& t : e.targets)
      if (std::find(trained.begin(), trained.end(), t.name) == trained.end())
        throw InputError(fmt::format("{}: entry '{}': the accuracy check trains {} models; list them under targets (got '{}')",
                                     t.location.where(), e.name, models(trained), t.name));
    const GraphFamily& graphs = suite.graphs.at(e.graphs);
    if (graphs.kind() != GraphFamily::Kind::dataset && graphs.kind() != GraphFamily::Kind::csbm)
      throw InputError(fmt::format("{}: entry '{}': the accuracy check trains on a labelled data set: graphs must be of "
                                   "family dataset or csbm, not '{}'",
                                   e.location.where(), e.name, graphs.family));
  }

  void run(const Task& t, System* system, const RunContext& /*run*/, reports::ResultRecord& r) const override {
    const auto task = training::NodeClassificationTask::from_dataset(dataset(*t.graphs, t.seed));
    std::optional<training::TrainingRecipe> recipe = training::recipe_for(t.label.target, task);
    if (!recipe)
      throw InputError(fmt::format("the accuracy check trains {} models, not '{}'", models(training::trained_targets()),
                                   t.label.target));
    Attributes options;
    for (const auto& [k, v] : t.entry->options) options.set(k, v);
    recipe->config.epochs = static_cast<int>(options.get_int("epochs", recipe->config.epochs));
    recipe->config.seed = t.seed;
    training::AccuracyGateOptions gate;
    gate.bound_factor = options.get_double("bound_factor", gate.bound_factor);
    gate.max_accuracy_difference = options.get_double("max_accuracy_difference", gate.max_accuracy_difference);
    if (t.entry->tolerance) gate.bound_factor *= t.entry->tolerance->factor;

    const training::AccuracyGateReport report = training::run_accuracy_gate(*system, recipe->model, task, recipe->config, gate);
    r.cases = 1;
    r.conclusive = report.tested.ok() ? 1 : 0;  // a training run the system completed decides
    r.metric_name = "worst epoch |loss − oracle loss| / bound";
    r.metric = report.worst_ratio;
    r.bound = 1.0;
    r.message = report.summary();
    if (!report.bound_rule.empty()) r.message += "\n" + report.bound_rule;
    for (std::size_t e = 0; e < report.loss_deviation.size() && e < report.loss_bound.size(); ++e)
      r.error_vs_bound.push_back({report.loss_deviation[e], report.loss_bound[e]});
    r.curves.push_back({"oracle (float64)", report.oracle.train_losses()});
    r.curves.push_back({report.system, report.tested.train_losses()});
    r.curves.push_back({"cpu_float32 (rounding reference)", report.reference.train_losses()});
    if (report.passed) r.outcome = Outcome::pass;
    else r.outcome = report.tested.ok() ? Outcome::fail : Outcome::error;
  }

 private:
  // "gcn, gat, gin or sage".
  static std::string models(std::vector<std::string> names) {
    if (names.size() < 2) return fmt::format("{}", fmt::join(names, ""));
    const std::string last = names.back();
    names.pop_back();
    return fmt::format("{} or {}", fmt::join(names, ", "), last);
  }

  static Dataset dataset(const GraphFamily& f, std::uint64_t seed) {
    if (f.kind() == GraphFamily::Kind::dataset) return load_dataset(f.dataset);
    Attributes params;
    for (const auto& [k, v] : f.params) params.set(k, v);
    return make_csbm(csbm_params_from(params), seed);
  }
};

}  // namespace

std::unique_ptr<TaskKind> accuracy_task_kind() { return std::make_unique<AccuracyTask>(); }

}  // namespace gnncheck::suites
