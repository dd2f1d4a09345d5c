#include "suites/task.h"

#include <chrono>
#include <csignal>

#include <fmt/format.h>

#include "core/error.h"

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

namespace {

// The command's own line for `scope`, or "" where it gives none.
std::string commands_own(const RunOptions& options, const RerunScope& scope) {
  return options.rerun ? options.rerun(scope) : std::string();
}

}  // namespace

std::string RunContext::rerun_task(const Task& t) const {
  std::string own = commands_own(options, {.entry = t.label.entry, .system = t.label.system, .check = t.label.check});
  return own.empty() ? t.kind->rerun_line(t, *this) : own;
}

std::string RunContext::rerun_failure(const Task& t, const std::filesystem::path& saved, bool whole_run) const {
  std::string own = commands_own(options, {.entry = t.label.entry,
                                           .system = t.label.system,
                                           .check = t.label.check,
                                           .counterexample = saved,
                                           .whole_run = whole_run});
  if (!own.empty()) return own;
  if (whole_run) return rerun_command({}) + " --jobs 1";
  if (saved.empty()) return t.kind->rerun_line(t, *this);
  std::string line = fmt::format("gnncheck repro {}", shell_quote(saved.string()));
  const SystemEntry& entry = systems.find(t.label.system);
  if (runs_as_process(entry.kind))
    for (const std::string& flag : limit_flags(entry.limits)) line += " " + flag;
  return line;
}

std::string RunContext::rerun_sanitizer(const Task& t, const std::string& tool) const {
  std::string own = commands_own(options, {.entry = t.label.entry, .system = t.label.system, .check = t.label.check, .sanitizer = tool});
  if (!own.empty()) return own;
  const SystemEntry& entry = systems.find(t.label.system);
  return fmt::format("gnncheck run {} --entry {}{} --sanitize {}", shell_quote(options.suite_argument),
                     shell_quote(t.label.entry), t.overridden ? " " + entry.command_line_flag : "", tool);
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
  r.precision = t.precision;
  return r;
}

reports::ResultRecord not_run_record(const Task& t, const RunContext& run, const std::string& why) {
  reports::ResultRecord r = result_record(t);
  r.outcome = reports::Outcome::not_tested;
  r.expectation_held = false;
  r.message = why;
  r.repro = run.rerun_task(t);
  return r;
}

reports::ResultRecord decided_record(const Task& t, const RunContext& run) {
  reports::ResultRecord r = *t.decided;
  if (!r.expectation_held && r.repro.empty()) r.repro = run.rerun_task(t);
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

const TaskKind* kind_checking_alone(const GraphFamily& family) {
  for (const auto& kind : task_kinds())
    if (kind->checks_alone(family)) return kind.get();
  return nullptr;
}

std::vector<std::string> known_check_names() {
  std::vector<std::string> out;
  for (const auto& kind : task_kinds()) out.push_back(kind->name());
  return out;
}

reports::ResultRecord run_task(const Task& t, const RunContext& run, std::map<std::string, std::unique_ptr<System>>& instances) {
  const auto start = std::chrono::steady_clock::now();
  reports::ResultRecord r = result_record(t);
  r.repro = run.rerun_task(t);
  try {
    System* sys = nullptr;
    if (t.kind->runs_on_systems()) {
      const SystemEntry& entry = run.systems.find(t.label.system);
      std::unique_ptr<System> fresh;
      if (entry.instance) {
        sys = entry.instance.get();
      } else if (entry.kind == SystemKind::builtin || entry.kind == SystemKind::replica) {
        fresh = entry.make();
        sys = fresh.get();
      } else {
        auto& slot = instances[t.label.system];
        if (!slot) slot = entry.make();
        sys = slot.get();
      }
      t.kind->run(t, sys, run, r);
    } else {
      t.kind->run(t, nullptr, run, r);
    }
  } catch (const InputError& e) {
    // The case could not be built (the family's parameters, a dataset that is missing): a
    // problem of the suite or of this machine, reported on this result rather than ending the run.
    r.outcome = reports::Outcome::error;
    r.error_not_of_the_system = true;
    r.message = fmt::format("{}: could not run: {}", t.entry->location.where(), e.what());
  } catch (const std::exception& e) {
    r.outcome = reports::Outcome::error;
    r.error_not_of_the_system = true;
    r.message = fmt::format("internal error while running: {}", e.what());
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.expectation_held = reports::expectation_held(r.expectation, r.outcome);
  std::string notes = t.coverage_note;
  if (t.entry->tolerance && t.kind->runs_on_systems()) {
    // A loosened bound is never silent: every result it applied to says so, and why.
    const std::string note = fmt::format("bounds multiplied by {} by the suite ({}): {}", t.entry->tolerance->factor,
                                         t.entry->location.where(), t.entry->tolerance->reason);
    notes = notes.empty() ? note : notes + "\n" + note;
  }
  if (!notes.empty()) r.message = r.message.empty() ? notes : r.message + "\n" + notes;
  if (r.chunked) r.chunked->notes = notes;  // the merge rebuilds the message from the chunks, then adds them
  return r;
}

}  // namespace gnncheck::suites
