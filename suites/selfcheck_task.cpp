// The `selfcheck` task kind: the oracle's backward of every target against central finite
// differences (oracle/selfcheck.h), one result for the whole catalogue.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "oracle/selfcheck.h"
#include "suites/task.h"

namespace gnncheck::suites {
namespace {

using reports::Outcome;

class SelfcheckTask final : public TaskKind {
 public:
  std::string name() const override { return "selfcheck"; }
  bool draws_cases() const override { return false; }
  bool runs_on_systems() const override { return false; }

  void validate(const Entry& e, const Suite& /*suite*/) const override {
    if (e.systems != std::vector<std::string>{"oracle"})
      throw InputError(fmt::format("{}: entry '{}': check 'selfcheck' verifies the oracle and needs systems: oracle",
                                   e.location.where(), e.name));
  }

  std::string rerun_line(const Task& t, const RunContext& /*run*/) const override {
    return fmt::format("gnncheck selfcheck --seed {}", t.seed);
  }

  void run(const Task& t, System* /*system*/, const RunContext& /*run*/, reports::ResultRecord& r) const override {
    oracle::SelfcheckOptions o;
    o.seed = t.seed;
    const auto report = oracle::run_selfcheck(o);
    r.metric_name = "worst relative error of the backward vs central finite differences";
    double worst_metric = 0.0, worst_bound = 0.0;  // the line closest to its bound
    std::vector<std::string> failures;
    for (const auto& line : report.lines) {
      const double worst = std::max(line.full_worst_error, line.directions_worst_error);
      r.error_vs_bound.push_back({worst, line.bound});
      if (worst / std::max(line.bound, 1e-300) > worst_metric / std::max(worst_bound, 1e-300)) {
        worst_metric = worst;
        worst_bound = line.bound;
      }
      r.cases += line.full_cases + line.directions;
      if (!line.passed)
        failures.push_back(fmt::format("{} / {}: {}", line.target, line.input,
                                       line.failure.empty()
                                           ? fmt::format("error {:.3g} > bound {:.3g} at {}", worst, line.bound,
                                                         line.directions_worst_error > line.full_worst_error
                                                             ? line.directions_worst_where
                                                             : line.full_worst_where)
                                           : line.failure));
    }
    r.metric = worst_metric;
    r.bound = worst_bound;
    r.conclusive = r.cases;  // every finite-difference comparison the selfcheck makes decides
    r.outcome = report.all_passed ? Outcome::pass : Outcome::fail;
    if (!failures.empty())
      r.message = fmt::format("{} of {} inputs failed: {}", failures.size(), report.lines.size(), fmt::join(failures, "; "));
  }
};

}  // namespace

std::unique_ptr<TaskKind> selfcheck_task_kind() { return std::make_unique<SelfcheckTask>(); }

}  // namespace gnncheck::suites
