#include "suites/sanitizer_results.h"

#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "adapters/process_system.h"
#include "adapters/sanitizer.h"

namespace gnncheck::suites {

using reports::Outcome;
using reports::ResultRecord;

// Under --sanitize: ends each sanitized system's process (the sanitizer writes its summary on exit),
// reads its logs, and adds one result per (entry, system) that ran it — check `sanitize_<tool>`,
// target "every target" — so that the entry's expectation covers what the sanitizer found.
void add_sanitizer_results(const RunContext& run, std::vector<Task>& tasks, std::vector<ResultRecord>& results) {
  const SystemRegistry& systems = run.systems;
  std::map<std::string, sanitizer::SystemFindings> findings;  // by system
  std::map<std::pair<std::string, std::string>, std::size_t> first_task;  // (entry, system) → a task of it
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const SystemEntry& e = systems.find(tasks[i].label.system);
    if (e.sanitizer_log_dir.empty() || tasks[i].decided) continue;
    first_task.emplace(std::pair{tasks[i].label.entry, e.name}, i);
    if (findings.count(e.name)) continue;
    const std::optional<ProcessEnd> end = e.instance ? stop_process_system(*e.instance) : std::nullopt;
    sanitizer::SystemFindings f =
        sanitizer::read_logs(e.sanitizer_log_dir, sanitizer::parse_tool(e.sanitizer_tool), end ? end->exit_code : std::nullopt);
    if (end) f.details = fmt::format("\nthe sanitized process {} at the end of the run{}", end->how, f.details);
    findings.emplace(e.name, std::move(f));
  }
  for (const auto& [key, index] : first_task) {
    const SystemEntry& e = systems.find(key.second);
    const sanitizer::SystemFindings& f = findings.at(key.second);
    Task t = tasks[index];
    t.label.target = "every target";
    t.label.check = "sanitize_" + e.sanitizer_tool;
    t.precision.clear();  // of every target the run gave it
    ResultRecord r = result_record(t);
    r.metric_name = "findings of compute-sanitizer in the system's own kernels";
    r.metric = static_cast<double>(f.own + f.unattributed);
    r.bound = 0;
    r.tolerance_model = fmt::format("compute-sanitizer --tool {} over every case the run gave this system; none allowed "
                                    "in its own kernels; findings inside vendor libraries are listed, not counted",
                                    e.sanitizer_tool);
    r.cases = f.logs;
    r.conclusive = f.problems.empty() ? f.logs : 0;
    const std::string where = fmt::format("(logs: {})", e.sanitizer_log_dir.string());
    if (!f.problems.empty()) {
      r.outcome = Outcome::error;
      r.error_not_of_the_system = true;
      r.message = fmt::format("the sanitizer's findings are not complete: {} {}{}", fmt::join(f.problems, "; "), where, f.details);
    } else if (f.own + f.unattributed > 0) {
      r.outcome = Outcome::fail;
      r.message = fmt::format("compute-sanitizer {} found {} problem(s) in the system's own kernels{} {}{}", e.sanitizer_tool,
                              f.own + f.unattributed,
                              f.unattributed ? fmt::format(" ({} over the print limit, not attributed)", f.unattributed) : "",
                              where, f.details);
    } else {
      r.outcome = Outcome::pass;
      r.message = f.vendor ? fmt::format("no finding in the system's own kernels {}{}", where, f.details) : std::string();
    }
    r.expectation_held = reports::expectation_held(t.expect, r.outcome);
    r.repro = run.rerun_sanitizer(t, e.sanitizer_tool);
    tasks.push_back(std::move(t));
    results.push_back(std::move(r));
  }
}

}  // namespace gnncheck::suites
