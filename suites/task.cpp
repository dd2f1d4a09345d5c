#include "suites/task.h"

#include <csignal>

#include <fmt/format.h>

namespace gnncheck::suites {

bool RunContext::stopping() const { return options.stop_requested && options.stop_requested() != 0; }

std::string RunContext::stop_signal_name() const {
  return signal_name(options.stop_requested ? options.stop_requested() : 0);
}

std::string RunContext::rerun_command(const std::vector<std::string>& entries) const {
  std::string line = fmt::format("gnncheck run {}", shell_quote(options.suite_argument));
  for (const auto& e : entries.empty() ? options.only_entries : entries) line += " --entry " + shell_quote(e);
  line += fmt::format(" --seed {}", seed);
  if (!options.override_system_flags.empty()) {
    for (const auto& f : options.override_system_flags) line += " " + f;
  } else {
    for (const auto& s : options.override_systems) line += " --system " + shell_quote(s);
  }
  if (options.override_expectation == reports::Expectation::caught && !options.override_systems.empty())
    line += " --expect caught";
  for (const auto& target : options.only_targets) line += " --target " + shell_quote(target);
  return line;
}

std::filesystem::path RunContext::cases_root() const {
  return options.report_dir.empty() ? std::filesystem::path() : options.report_dir / "cases";
}

checks::CheckOptions RunContext::check_options(const Task& t) const {
  checks::CheckOptions o;
  if (t.entry->tolerance) {
    o.tolerance.safety_factor *= t.entry->tolerance->factor;
    o.tolerance.measured_multiple *= t.entry->tolerance->factor;
  }
  return o;
}

reports::ResultRecord result_record(const Task& t) {
  reports::ResultRecord r;
  r.entry = t.label.entry;
  r.system = t.label.system;
  r.target = t.label.target;
  r.check = t.label.check;
  r.expectation = t.expect;
  r.seed = t.seed;
  return r;
}

std::string signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return fmt::format("signal {}", signal);
}

namespace {

// The table, in the order `gnncheck list checks` shows: every check, then selfcheck, accuracy, scale.
const std::vector<std::unique_ptr<TaskKind>>& task_kinds() {
  static const std::vector<std::unique_ptr<TaskKind>> kinds = [] {
    std::vector<std::unique_ptr<TaskKind>> out = check_task_kinds();
    out.push_back(selfcheck_task_kind());
    out.push_back(accuracy_task_kind());
    out.push_back(scale_task_kind());
    return out;
  }();
  return kinds;
}

}  // namespace

const TaskKind* find_task_kind(const std::string& name) {
  for (const auto& kind : task_kinds())
    if (kind->name() == name) return kind.get();
  return nullptr;
}

std::vector<std::string> known_check_names() {
  std::vector<std::string> out;
  for (const auto& kind : task_kinds()) out.push_back(kind->name());
  return out;
}

}  // namespace gnncheck::suites
