#include "suites/runner.h"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <fstream>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "adapters/process_system.h"
#include "adapters/sanitizer.h"
#include "checks/checks.h"
#include "fixtures/dataset.h"
#include "fixtures/generators.h"
#include "core/error.h"
#include "core/splitmix64.h"
#include "oracle/selfcheck.h"
#include "oracle/targets.h"
#include "properties/case_loop.h"
#include "properties/counterexample.h"
#include "properties/driver.h"
#include "reports/counterexample_case.h"
#include "scale/graph_spec.h"
#include "scale/neighbourhood.h"
#include "scale/scale_check.h"
#include "suites/scale_where_system_runs.h"
#include "suites/family_case_source.h"
#include "training/accuracy_gate.h"
#include "training/task.h"

namespace gnncheck::suites {
namespace {

using reports::Expectation;
using reports::Outcome;
using reports::ResultRecord;
using Clock = std::chrono::steady_clock;

constexpr const char* kSelfcheck = "selfcheck";
constexpr const char* kAccuracy = "accuracy";
constexpr const char* kScale = "scale";  // a scale graph family's one check (scale/scale_check.h)
// Options an entry may give the accuracy check (the only check that takes options).
const std::vector<std::string> kAccuracyOptions = {"epochs", "bound_factor", "max_accuracy_difference"};

std::uint64_t fnv1a(std::uint64_t h, const std::string& s) {
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h ^ 0xff;  // separates "ab","c" from "a","bc"
}

// One unit of work: one check of one system on one target (or on every target, for selfcheck).
struct Task {
  TaskLabel label;
  const Entry* entry = nullptr;
  const GraphFamily* graphs = nullptr;
  std::vector<AttributeChoice> attributes;
  std::uint64_t seed = 0;
  reports::Expectation expect = reports::Expectation::pass;  // the entry's, or the override systems'
  bool overridden = false;  // a system named on the command line in place of the entry's own
  // What the cases were drawn within when the system declares fewer attribute values than the
  // target has ("within what 'pyg' implements: …"), shown with the result; empty otherwise.
  std::string coverage_note;
  // Set when the task is decided without running anything (unavailable system, unsupported target).
  std::optional<ResultRecord> decided;
};

bool is_check_kind(const std::string& name) {
  for (auto kind : checks::all_check_kinds())
    if (checks::to_string(kind) == name) return true;
  return false;
}

std::vector<std::string> targets_of(const std::string& selector) {
  std::vector<std::string> out;
  for (const auto& def : oracle::all_targets()) {
    const bool wanted = selector == "all" || (selector == "ops" && !def.spec.is_layer) || (selector == "layers" && def.spec.is_layer);
    if (wanted) out.push_back(def.spec.name);
  }
  return out;
}

ResultRecord skeleton(const Task& t) {
  ResultRecord r;
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

// ---- planning ----

// Why `check` can conclude nothing on any case of `target` for a system of `precision`, or nullopt.
// These are properties of the check's design, decided before anything runs.
std::optional<std::string> structurally_not_applicable(checks::CheckKind check, const std::string& target, Precision precision) {
  const auto& spec = oracle::find_target(target).spec;
  const bool has_differentiable = std::any_of(spec.inputs.begin(), spec.inputs.end(), [](const auto& s) { return s.differentiable; });
  auto edge_tensor = [](const oracle::TensorSlot& s) {
    return s.kind == oracle::TensorKind::edges || s.kind == oracle::TensorKind::edges_csc;
  };
  switch (check) {
    case checks::CheckKind::gradient:
      if (precision != Precision::float64)
        return fmt::format("finite differences need a float64 system; this one declares {} for '{}' (the adjoint check covers it)",
                           to_string(precision), target);
      break;
    case checks::CheckKind::op_order:
      for (const auto& slot : spec.inputs)
        if (edge_tensor(slot))
          return fmt::format("target '{}' has the edge input '{}', which has no values for the edges op_order adds", target, slot.name);
      for (const auto& slot : spec.outputs)
        if (edge_tensor(slot))
          return fmt::format("target '{}' has the edge output '{}', which has no values for the edges op_order adds", target, slot.name);
      break;
    case checks::CheckKind::adjoint:
    case checks::CheckKind::metamorphic_linearity:
      if (!has_differentiable) return fmt::format("target '{}' has no differentiable input", target);
      break;
    default: break;
  }
  return std::nullopt;
}

// The attribute values a check task draws from: the entry's pins, within what the system implements
// (core/system.h), and the system's declared values for what the entry leaves open. `nothing_left`
// says why no case can be drawn: a pinned attribute none of whose values the system implements.
struct AttributeScope {
  std::vector<AttributeChoice> choices;
  std::string coverage_note;
  std::optional<std::string> nothing_left;
};

std::string shown_values(const std::vector<AttrValue>& values) {
  std::vector<std::string> out;
  for (const auto& v : values) out.push_back(std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : to_string(v));
  return fmt::format("{{{}}}", fmt::join(out, ", "));
}

AttributeScope attribute_scope(const oracle::TargetSpec& spec, const std::vector<AttributeChoice>& pinned,
                               const ImplementedAttributes& implemented, const std::string& system) {
  AttributeScope scope;
  if (implemented.empty()) {
    scope.choices = pinned;
    return scope;
  }
  std::vector<std::string> left_out;
  std::set<std::string> seen;
  for (const AttributeChoice& choice : pinned) {
    seen.insert(choice.name);
    const auto declared = implemented.find(choice.name);
    if (declared == implemented.end()) {
      scope.choices.push_back(choice);
      continue;
    }
    // The pins typed like the declaration (an integer pin of a number attribute is that number).
    const std::vector<AttrValue> asked =
        oracle::validated_implemented_attributes(spec, {{choice.name, choice.values}}).at(choice.name);
    AttributeChoice kept{choice.name, {}};
    std::vector<AttrValue> dropped;
    for (const auto& v : asked)
      (std::find(declared->second.begin(), declared->second.end(), v) != declared->second.end() ? kept.values : dropped)
          .push_back(v);
    if (kept.values.empty()) {
      scope.nothing_left = fmt::format("system '{}' implements {} {} of target '{}'; this entry asks {}: no case to draw",
                                       system, choice.name, shown_values(declared->second), spec.name, shown_values(asked));
      return scope;
    }
    if (!dropped.empty()) left_out.push_back(fmt::format("{} = {}", choice.name, shown_values(dropped)));
    scope.choices.push_back(std::move(kept));
  }
  for (const auto& [name, values] : implemented) {
    if (seen.count(name)) continue;
    scope.choices.push_back({name, values});
    const auto attribute =
        std::find_if(spec.attributes.begin(), spec.attributes.end(), [&](const auto& a) { return a.name == name; });
    if (attribute == spec.attributes.end()) continue;
    const std::vector<AttrValue> missing = oracle::values_not_implemented(*attribute, values);
    if (!missing.empty()) left_out.push_back(fmt::format("{} = {}", name, shown_values(missing)));
  }
  scope.coverage_note = fmt::format("cases drawn within what '{}' implements of '{}': {}{}", system, spec.name,
                                    oracle::describe(implemented),
                                    left_out.empty() ? std::string()
                                                     : fmt::format(" (not covered: {})", fmt::join(left_out, "; ")));
  return scope;
}

class Planner {
 public:
  Planner(const Suite& suite, const SystemRegistry& systems, const RunOptions& options, std::uint64_t seed)
      : suite_(suite), systems_(systems), options_(options), seed_(seed) {}

  std::vector<Task> plan() {
    for (const auto& name : options_.only_entries) {
      bool found = false;
      for (const auto& e : suite_.entries) found = found || e.name == name;
      if (!found) {
        std::vector<std::string> names;
        for (const auto& e : suite_.entries) names.push_back(e.name);
        throw InputError(fmt::format("{}: no entry named '{}'; its entries: {}", suite_.path, name, fmt::join(names, ", ")));
      }
    }
    std::vector<Task> tasks;
    for (const auto& entry : suite_.entries) {
      if (!options_.only_entries.empty() &&
          std::find(options_.only_entries.begin(), options_.only_entries.end(), entry.name) == options_.only_entries.end())
        continue;
      validate_checks(entry);
      if (!options_.share.whole()) validate_shared_entry(entry);
      const bool selfcheck_only = std::all_of(entry.checks.begin(), entry.checks.end(), [](const auto& c) { return c == kSelfcheck; });
      std::vector<std::string> system_names = entry.systems;
      if (!options_.override_systems.empty() && !selfcheck_only) {
        if (entry.expect == Expectation::caught) continue;  // replica entries are about the replicas
        system_names = options_.override_systems;
      }
      const bool overridden = system_names == options_.override_systems && !options_.override_systems.empty();
      for (const auto& system : expand_systems(entry, system_names)) plan_system(entry, system, tasks, overridden);
    }
    return tasks;
  }

 private:
  void validate_checks(const Entry& e) {
    const bool has_accuracy = std::find(e.checks.begin(), e.checks.end(), kAccuracy) != e.checks.end();
    for (const auto& [key, value] : e.options) {
      if (!has_accuracy)
        throw InputError(fmt::format("{}: entry '{}': options apply to the accuracy check only", e.location.where(), e.name));
      if (std::find(kAccuracyOptions.begin(), kAccuracyOptions.end(), key) == kAccuracyOptions.end())
        throw InputError(fmt::format("{}: entry '{}': unknown option '{}' of the accuracy check; expected one of: {}",
                                     e.location.where(), e.name, key, fmt::join(kAccuracyOptions, ", ")));
    }
    const bool scale_family = suite_.graphs.at(e.graphs).family == "scale";
    if (scale_family || std::find(e.checks.begin(), e.checks.end(), kScale) != e.checks.end()) validate_scale_entry(e);
    for (const auto& c : e.checks) {
      if (c == kScale) continue;
      if (c == kAccuracy) {
        for (const auto& t : e.targets)
          if (t.name != "gcn" && t.name != "gat" && t.name != "gin" && t.name != "sage")
            throw InputError(fmt::format("{}: entry '{}': the accuracy check trains gcn, gat, gin or sage models; list them "
                                         "under targets (got '{}')",
                                         t.location.where(), e.name, t.name));
        const auto& family = suite_.graphs.at(e.graphs).family;
        if (family != "dataset" && family != "csbm")
          throw InputError(fmt::format("{}: entry '{}': the accuracy check trains on a labelled data set: graphs must be of "
                                       "family dataset or csbm, not '{}'",
                                       e.location.where(), e.name, family));
        continue;
      }
      if (c == kSelfcheck) {
        if (e.systems != std::vector<std::string>{"oracle"})
          throw InputError(fmt::format("{}: entry '{}': check 'selfcheck' verifies the oracle and needs systems: oracle",
                                       e.location.where(), e.name));
        continue;
      }
      if (c != kAccuracy && !is_check_kind(c))
        throw InputError(fmt::format("{}: entry '{}': unknown check '{}'; known checks: {}", e.location.where(), e.name, c,
                                     fmt::join(known_check_names(), ", ")));
    }
  }

  // --share splits the drawn cases of checks; a check that draws none (the oracle's selfcheck, an
  // accuracy gate, a scale check — the only check of a scale family) would run whole in every part.
  void validate_shared_entry(const Entry& e) {
    for (const auto& c : e.checks)
      if (c == kSelfcheck || c == kAccuracy || c == kScale)
        throw InputError(fmt::format("{}: entry '{}': --share {}/{} splits the cases a check draws; its check '{}' draws "
                                     "none (run this entry without --share)",
                                     e.location.where(), e.name, options_.share.part, options_.share.of, c));
  }

  // The scale check and the scale graph family go together; its targets are named, supported by the
  // scale check, and fixed to one value per attribute (one result per target, no case loop).
  void validate_scale_entry(const Entry& e) {
    const GraphFamily& family = suite_.graphs.at(e.graphs);
    if (family.family != "scale")
      throw InputError(fmt::format("{}: entry '{}': the scale check runs on a graph family of family scale (graphs: {} is '{}')",
                                   e.location.where(), e.name, e.graphs, family.family));
    if (e.checks != std::vector<std::string>{kScale})
      throw InputError(fmt::format("{}: entry '{}': checks: a scale graph family ('{}') is checked by the scale check alone; "
                                   "expected checks: scale, got {}",
                                   e.location.where(), e.name, e.graphs, fmt::join(e.checks, ", ")));
    for (std::size_t i = 0; i < e.targets.size(); ++i) {
      const TargetChoice& t = e.targets[i];
      auto refuse = [&](const std::string& what) {
        throw InputError(fmt::format("{}: entry '{}': targets[{}]: {}", t.location.where(), e.name, i, what));
      };
      if (!scale::is_supported_target(t.name))
        refuse(fmt::format("the scale check supports the targets {}; got '{}'{}", fmt::join(scale::supported_targets(), ", "), t.name,
                           t.name == "all" || t.name == "ops" || t.name == "layers" ? " (a scale entry names its targets)" : ""));
      Attributes attrs;
      for (const auto& a : t.attributes) {
        if (a.values.size() != 1)
          refuse(fmt::format("attribute '{}': a scale entry checks one configuration per target; expected one value, got {}",
                             a.name, a.values.size()));
        attrs.set(a.name, a.values.front());
      }
      try {
        scale::require_restrictable(t.name, attrs, 0, 0, "");  // what the graph does not decide: dropout, source degrees
      } catch (const InputError& err) {
        refuse(err.what());
      }
    }
  }

  std::vector<std::string> expand_systems(const Entry& e, const std::vector<std::string>& names) {
    std::vector<std::string> out;
    for (const auto& n : names) {
      if (n == "replicas") {
        for (const auto& s : systems_.entries())
          if (s.kind == "replica") out.push_back(s.name);
        continue;
      }
      if (!systems_.contains(n)) {
        try {
          systems_.find(n);
        } catch (const InputError& err) {
          throw InputError(fmt::format("{}: entry '{}': {}", e.location.where(), e.name, err.what()));
        }
      }
      out.push_back(n);
    }
    return out;
  }

  // A system the user named on the command line is required; so is every system of an entry that
  // expects `pass`, unless the suite declares it `required: false`; a replica (`caught`) only when
  // declared `required: true`.
  bool required(const Entry& entry, const std::string& system) const {
    if (std::find(options_.override_systems.begin(), options_.override_systems.end(), system) != options_.override_systems.end())
      return true;
    for (const auto& d : suite_.systems)
      if (d.name == system && d.required) return *d.required;
    return entry.expect == Expectation::pass;
  }

  bool target_wanted(const std::string& target) const {
    return options_.only_targets.empty() ||
           std::find(options_.only_targets.begin(), options_.only_targets.end(), target) != options_.only_targets.end();
  }

  std::vector<const TargetChoice*> target_choices(const Entry& e) {
    std::vector<const TargetChoice*> out;
    for (const auto& t : e.targets) {
      if (t.name != "all" && t.name != "ops" && t.name != "layers") {
        try {
          oracle::find_target(t.name);
        } catch (const InputError& err) {
          throw InputError(fmt::format("{}: entry '{}': {}", t.location.where(), e.name, err.what()));
        }
        // Catch misspelled attributes before anything runs.
        const auto& spec = oracle::find_target(t.name).spec;
        for (const auto& a : t.attributes) {
          try {
            // Known attribute, values of its type, within an enumerated attribute's values.
            oracle::validated_implemented_attributes(spec, {{a.name, a.values}});
          } catch (const InputError& err) {
            throw InputError(fmt::format("{}: entry '{}': {}", t.location.where(), e.name, err.what()));
          }
        }
      } else if (!t.attributes.empty()) {
        throw InputError(fmt::format("{}: entry '{}': attributes need one named target, not '{}'", t.location.where(), e.name, t.name));
      }
      out.push_back(&t);
    }
    return out;
  }

  void plan_system(const Entry& entry, const std::string& system_name, std::vector<Task>& tasks, bool overridden) {
    const SystemEntry& sys = systems_.find(system_name);
    const GraphFamily* graphs = &suite_.graphs.at(entry.graphs);
    auto task_for = [&](const std::string& target, const std::string& check) {
      Task t;
      t.label = {entry.name, system_name, target, check};
      t.entry = &entry;
      t.expect = overridden ? options_.override_expectation : entry.expect;
      t.overridden = overridden;
      t.graphs = graphs;
      t.seed = task_seed(seed_, entry.name, target, check);
      if (!options_.share.whole()) t.seed = share_seed(t.seed, options_.share.part);
      return t;
    };
    std::unique_ptr<System> probe;  // asked which targets it supports; made once per entry and system
    for (const auto& check : entry.checks) {
      if (check == kSelfcheck) {
        tasks.push_back(task_for("all", check));
        continue;
      }
      if (!sys.availability.available || !sys.make) {
        const bool needed = required(entry, system_name) || (overridden && options_.override_expectation == Expectation::caught);
        Task t = task_for("all", check);
        ResultRecord r = skeleton(t);
        r.outcome = needed ? Outcome::not_tested : Outcome::skipped;
        r.message = fmt::format("system '{}' is not available here: {}", system_name, sys.availability.reason);
        r.message += needed ? " (required: nothing of this entry was tested)" : " (optional: required: false)";
        r.expectation_held = !needed;
        t.decided = r;
        tasks.push_back(std::move(t));
        continue;
      }
      if (!probe) probe = sys.instance ? nullptr : sys.make();
      System& asked = sys.instance ? *sys.instance : *probe;
      for (const TargetChoice* choice : target_choices(entry)) {
        const bool selector = choice->name == "all" || choice->name == "ops" || choice->name == "layers";
        const std::vector<std::string> names = selector ? targets_of(choice->name) : std::vector<std::string>{choice->name};
        int supported = 0, wanted = 0;
        for (const auto& target : names) {
          if (!target_wanted(target)) continue;
          ++wanted;
          if (!asked.supports(target)) {
            if (selector) continue;  // a selector means "those of them the system supports"
            Task t = task_for(target, check);
            ResultRecord r = skeleton(t);
            r.outcome = Outcome::skipped;
            r.message = fmt::format("system '{}' does not support target '{}'", system_name, target);
            t.decided = r;
            tasks.push_back(std::move(t));
            continue;
          }
          ++supported;
          Task t = task_for(target, check);
          t.attributes = choice->attributes;
          if (is_check_kind(check)) {
            const AttributeScope scope =
                attribute_scope(oracle::find_target(target).spec, choice->attributes, asked.implemented_attributes(target),
                                system_name);
            t.attributes = scope.choices;
            t.coverage_note = scope.coverage_note;
            if (scope.nothing_left) {
              ResultRecord r = skeleton(t);
              r.outcome = Outcome::skipped;
              r.precision = std::string(to_string(asked.precision(target)));
              r.message = *scope.nothing_left;
              t.decided = r;
              tasks.push_back(std::move(t));
              continue;
            }
            // A check that cannot say anything about this target or precision, whatever the case:
            // shown as such, never as a pass.
            if (auto why = structurally_not_applicable(checks::parse_check_kind(check), target, asked.precision(target))) {
              ResultRecord r = skeleton(t);
              r.outcome = Outcome::not_applicable;
              r.precision = std::string(to_string(asked.precision(target)));
              r.message = *why;
              t.decided = r;
            }
          }
          tasks.push_back(std::move(t));
        }
        if (selector && supported == 0 && wanted > 0) {
          Task t = task_for(choice->name, check);
          ResultRecord r = skeleton(t);
          r.outcome = Outcome::skipped;
          r.message = fmt::format("system '{}' supports none of the {} targets", system_name, choice->name);
          t.decided = r;
          tasks.push_back(std::move(t));
        }
      }
    }
  }

  const Suite& suite_;
  const SystemRegistry& systems_;
  const RunOptions& options_;
  std::uint64_t seed_;
};

// ---- executing ----

class Executor {
 public:
  Executor(const Suite& suite, const SystemRegistry& systems, const RunOptions& options, std::uint64_t seed)
      : suite_(suite), systems_(systems), options_(options), seed_(seed) {}

  ResultRecord run(const Task& t, std::map<std::string, std::unique_ptr<System>>& instances) {
    const auto start = Clock::now();
    ResultRecord r = skeleton(t);
    r.repro = rerun_line(t);
    try {
      if (t.label.check == kSelfcheck) {
        run_selfcheck_task(t, r);
      } else {
        // In-process systems are cheap to make: a fresh one per task keeps one task's state from
        // reaching the next, so results do not depend on --jobs or task order. GPU contexts are
        // kept per thread; an adapter or plugin is one process for the whole run (the registry's
        // instance, its calls serialized), started before the run so its start-up costs no budget.
        const SystemEntry& entry = systems_.find(t.label.system);
        std::unique_ptr<System> fresh;
        System* sys = nullptr;
        if (entry.instance) {
          sys = entry.instance.get();
        } else if (entry.kind == "builtin" || entry.kind == "replica") {
          fresh = entry.make();
          sys = fresh.get();
        } else {
          auto& slot = instances[t.label.system];
          if (!slot) slot = entry.make();
          sys = slot.get();
        }
        r.precision = std::string(to_string(sys->precision(t.label.target)));
        if (t.label.check == kAccuracy)
          run_accuracy_task(t, *sys, r);
        else if (t.label.check == kScale)
          run_scale_task(t, *sys, r);
        else
          run_check_task(t, *sys, r);
      }
    } catch (const InputError& e) {
      // The case could not be built (the family's parameters, a dataset that is missing): a
      // problem of the suite or of this machine, reported on this result rather than ending the run.
      r.outcome = Outcome::error;
      r.error_not_of_the_system = true;
      r.message = fmt::format("{}: could not run: {}", t.entry->location.where(), e.what());
    } catch (const std::exception& e) {
      r.outcome = Outcome::error;
      r.error_not_of_the_system = true;
      r.message = fmt::format("internal error while running: {}", e.what());
    }
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    r.expectation_held = reports::expectation_held(r.expectation, r.outcome);
    if (!t.coverage_note.empty()) r.message = r.message.empty() ? t.coverage_note : r.message + "\n" + t.coverage_note;
    if (t.entry->tolerance && t.label.check != kSelfcheck) {
      // A loosened bound is never silent: every result it applied to says so, and why.
      const std::string note = fmt::format("bounds multiplied by {} by the suite ({}): {}", t.entry->tolerance->factor,
                                           t.entry->location.where(), t.entry->tolerance->reason);
      r.message = r.message.empty() ? note : r.message + "\n" + note;
    }
    return r;
  }

 private:
  // The command that re-runs this task's entry with the same seed and the same systems. A suite
  // named by a path keeps that path; systems named on the command line keep their flags.
  std::string rerun_line(const Task& t) const { return rerun_command({t.label.entry}); }

  // `gnncheck run` of `entries` (empty: those the run was asked for) with this run's seed, systems,
  // targets and expectation.
  std::string rerun_command(const std::vector<std::string>& entries) const {
    std::string line = fmt::format("gnncheck run {}", shell_quote(options_.suite_argument));
    for (const auto& e : entries.empty() ? options_.only_entries : entries) line += " --entry " + shell_quote(e);
    line += fmt::format(" --seed {}", seed_);
    if (!options_.share.whole()) line += fmt::format(" --share {}/{}", options_.share.part, options_.share.of);
    if (!options_.override_system_flags.empty()) {
      for (const auto& f : options_.override_system_flags) line += " " + f;
    } else {
      for (const auto& s : options_.override_systems) line += " --system " + shell_quote(s);
    }
    if (options_.override_expectation == Expectation::caught && !options_.override_systems.empty()) line += " --expect caught";
    for (const auto& target : options_.only_targets) line += " --target " + shell_quote(target);
    return line;
  }

  // The one record of a failing case: where it is saved (through the one counterexample writer),
  // and the one command that re-runs it. A case that passes on a fresh system failed only because of
  // what the system had evaluated before (a stateful bug): the saved case alone would not reproduce
  // it, so the re-run line is the whole entry's sequence.
  void record_failure(const Task& t, const properties::CaseFailure& failure, ResultRecord& r) {
    checks::Verdict v = failure.verdict;
    const Case& failing = failure.c;
    const bool system_answered = v.system_status == Status::ok && v.conclusion == checks::Conclusion::fail;
    r.outcome = system_answered ? Outcome::fail : Outcome::error;
    fill_from_verdict(r, v);
    std::string note;
    bool reproduces_fresh = true;
    const SystemEntry& entry = systems_.find(t.label.system);
    if (entry.make && system_answered && !stopping()) {
      // The saved case alone on a new instance (a new process for an adapter or plugin).
      std::unique_ptr<System> fresh = entry.make();
      const checks::Verdict again = properties::check_case(v.check, *fresh, failing, check_options(t));
      reproduces_fresh = !again.passed();
      if (!reproduces_fresh)
        note = "The saved case passes on a fresh instance of the system: the failure needs the evaluations that came "
               "before it (state kept between calls). The re-run line repeats the run's whole sequence in one order.";
    }
    std::string rerun = reproduces_fresh ? rerun_line(t) : rerun_command({}) + " --jobs 1";
    if (!cases_root().empty()) {
      const std::filesystem::path dir =
          cases_root() / properties::counterexample_name(t.label.system, t.label.target, v.check, t.seed);
      if (reproduces_fresh) rerun = fmt::format("gnncheck repro {}", shell_quote(dir.string()));
      properties::CounterexampleProvenance provenance = failure.provenance;
      provenance.rerun = rerun;
      properties::write_counterexample(dir, failing, v, provenance);
      write_system_record(dir, entry, rerun);
      r.counterexample = std::filesystem::relative(dir, options_.report_dir).string();
    }
    r.repro = rerun;
    if (failing.graph) {  // the graph and the worst element, for the reports' drawing of the case
      std::optional<reports::CounterexampleElement> worst;
      if (v.worst)
        worst = reports::CounterexampleElement{.tensor = v.tensor, .index = v.worst->index, .got = v.worst->actual,
                                               .expected = v.worst->expected, .bound = v.worst->bound};
      r.counterexample_case = reports::describe_counterexample(*failing.graph, failing.target, worst);
    }
    // The record carries the counterexample and the one re-run line; the message does not repeat them.
    v.rerun_command.clear();
    v.counterexample_path.clear();
    r.message = failure.how_found.empty() ? checks::failure_message(v) : failure.how_found + "\n" + checks::failure_message(v);
    if (!note.empty()) r.message += "\n" + note;
  }

  // DIR/system.json: which system failed and how to start it again, for `gnncheck repro DIR`.
  static void write_system_record(const std::filesystem::path& dir, const SystemEntry& entry, const std::string& rerun) {
    nlohmann::ordered_json j;
    j["name"] = entry.name;
    j["kind"] = entry.kind;
    if (!entry.adapter_command.empty()) j["adapter"] = entry.adapter_command;
    if (!entry.plugin_library.empty()) j["plugin"] = entry.plugin_library;
    j["rerun"] = rerun;
    std::ofstream out(dir / "system.json");
    out << j.dump(2) << "\n";
    if (!out) throw InputError(fmt::format("{}: cannot write", (dir / "system.json").string()));
  }

  checks::CheckOptions check_options(const Task& t) const {
    checks::CheckOptions o;
    if (t.entry->tolerance) {
      o.tolerance.safety_factor *= t.entry->tolerance->factor;
      o.tolerance.measured_multiple *= t.entry->tolerance->factor;
    }
    return o;
  }

  std::filesystem::path cases_root() const {
    return options_.report_dir.empty() ? std::filesystem::path() : options_.report_dir / "cases";
  }

  void run_selfcheck_task(const Task& t, ResultRecord& r) {
    oracle::SelfcheckOptions o;
    o.seed = t.seed;
    auto report = oracle::run_selfcheck(o);
    r.precision = "float64";
    r.metric_name = "worst relative error of the backward vs central finite differences";
    r.bound = 0.0;
    r.metric = 0.0;
    std::vector<std::string> failures;
    for (const auto& line : report.lines) {
      const double worst = std::max(line.full_worst_error, line.directions_worst_error);
      r.error_vs_bound.push_back({worst, line.bound});
      if (!r.metric || worst / std::max(line.bound, 1e-300) > *r.metric / std::max(*r.bound, 1e-300)) {
        r.metric = worst;
        r.bound = line.bound;
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
    r.conclusive = r.cases;  // every finite-difference comparison the selfcheck makes decides
    r.outcome = report.all_passed ? Outcome::pass : Outcome::fail;
    if (!failures.empty()) r.message = fmt::format("{} of {} inputs failed: {}", failures.size(), report.lines.size(), fmt::join(failures, "; "));
    r.repro = fmt::format("gnncheck selfcheck --seed {}", t.seed);
  }

  // Trains the target's model with the system, the oracle and the float32 reference from one
  // initialization (training/accuracy_gate.h) and records the loss curves.
  void run_accuracy_task(const Task& t, System& sys, ResultRecord& r) {
    const GraphFamily& f = *t.graphs;
    Dataset data;
    if (f.family == "dataset") {
      data = load_dataset(f.dataset);
    } else {
      Attributes params;
      for (const auto& [k, v] : f.params) params.set(k, v);
      data = make_csbm(csbm_params_from(params), t.seed);
    }
    const auto task = training::NodeClassificationTask::from_dataset(data);
    training::TrainingRecipe recipe;
    if (t.label.target == "gcn") recipe = training::gcn_recipe(task);
    else if (t.label.target == "gat") recipe = training::gat_recipe(task);
    else if (t.label.target == "gin") recipe = training::gin_recipe(task);
    else if (t.label.target == "sage") recipe = training::sage_recipe(task);
    else throw InputError(fmt::format("the accuracy check trains gcn, gat, gin or sage models, not '{}'", t.label.target));
    Attributes options;
    for (const auto& [k, v] : t.entry->options) options.set(k, v);
    recipe.config.epochs = static_cast<int>(options.get_int("epochs", recipe.config.epochs));
    recipe.config.seed = t.seed;
    training::AccuracyGateOptions gate;
    gate.bound_factor = options.get_double("bound_factor", gate.bound_factor);
    gate.max_accuracy_difference = options.get_double("max_accuracy_difference", gate.max_accuracy_difference);
    if (t.entry->tolerance) gate.bound_factor *= t.entry->tolerance->factor;

    const training::AccuracyGateReport report = training::run_accuracy_gate(sys, recipe.model, task, recipe.config, gate);
    r.cases = 1;
    r.conclusive = report.tested.ok() ? 1 : 0;  // a training run the system completed decides
    r.precision = std::string(to_string(report.precision));
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

  // The scale check (scale/scale_check.h) of one system and target on the family's one big graph,
  // seeded by the task: the same record `gnncheck scale --report` writes, under this entry. Its
  // re-run line is that `gnncheck scale` command whenever the command's flags can say everything
  // the task set (targets' attributes among the width flags, --heads and --norm; no tolerance
  // override), else the entry's `gnncheck run` line.
  void run_scale_task(const Task& t, System& sys, ResultRecord& r) {
    const GraphFamily& f = *t.graphs;
    const auto& spec = oracle::find_target(t.label.target).spec;
    scale::ScaleOptions o;
    o.target = t.label.target;
    for (const auto& a : t.attributes) o.attributes.set(a.name, a.values.front());
    o.attributes = oracle::with_defaults(spec, o.attributes);
    o.rows = f.scale_rows;
    o.seed = t.seed;
    o.input_magnitude = f.scale_magnitude;
    if (f.scale_hub_edges) o.hub_edge_budget = *f.scale_hub_edges;
    if (f.scale_hub_sources) o.hub_source_budget = *f.scale_hub_sources;
    o.tolerance = check_options(t).tolerance;
    o.tolerance.concurrent_evaluations = scale::default_oracle_evaluations();  // as the command's default
    o.graph_description = f.scale_graph;

    // The command's flags say the width attributes, heads and norm; anything else (or a tolerance
    // override) leaves the entry's own `gnncheck run` line as the re-run line.
    ScaleCommandLine line{.system_flag = systems_.find(t.label.system).command_line_flag, .target = t.label.target,
                          .graph = f.scale_graph, .rows = f.scale_rows, .seed = t.seed, .magnitude = f.scale_magnitude,
                          .expect_caught = t.expect == Expectation::caught};
    if (f.scale_hub_edges) line.hub_edges = *f.scale_hub_edges;
    if (f.scale_hub_sources) line.hub_sources = *f.scale_hub_sources;
    const std::map<std::string, std::optional<std::string>*> flags = {
        {"features", &line.features},         {"in_features", &line.features}, {"hidden_features", &line.hidden_features},
        {"out_features", &line.out_features}, {"heads", &line.heads},          {"norm", &line.norm}};
    bool expressible = !t.entry->tolerance;
    for (const auto& a : t.attributes) {
      const AttrValue& v = a.values.front();
      if (const auto it = flags.find(a.name); it != flags.end())
        *it->second = std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : to_string(v);
      else
        expressible = false;
    }
    const std::string command = scale_command_line(line);
    if (expressible) r.repro = command;
    o.rerun_command = r.repro;

    // Built where the system runs, as the printed `gnncheck scale` line builds it.
    const scale::ScaleResult result = run_scale_where_system_runs(sys, scale::parse_graph_spec(f.scale_graph), o).result;
    ResultRecord rec = scale::to_result_record(result);
    r.outcome = rec.outcome;
    r.precision = rec.precision;
    r.metric_name = rec.metric_name;
    r.metric = rec.metric;
    r.bound = rec.bound;
    r.tolerance_model = rec.tolerance_model;
    r.cases = rec.cases;
    r.conclusive = rec.conclusive;
    r.error_vs_bound = rec.error_vs_bound;
    r.message = rec.message;
    r.error_not_of_the_system = result.nothing_compared;
    // A failure's message names its worst element; a pass says where it came closest, with both values
    // (the record's fields hold only their difference).
    if (result.worst && r.message.empty())
      r.message = fmt::format("worst: {} [{}] {} — actual {:.17g}, exact {:.17g}, bound {:.6g}",
                               result.worst->tensor, fmt::join(result.worst->index, ", "), result.worst->where, result.worst->actual,
                               result.worst->expected, result.worst->bound);
    r.message += fmt::format("{}graph {}: {}; {} rows sampled, {} elements compared, {} held to exactly 0", r.message.empty() ? "" : "\n",
                             f.scale_graph,
                             result.graph_summary, result.rows.size(), result.compared_elements, result.zero_checked_elements);
  }

  static void fill_from_verdict(ResultRecord& r, const checks::Verdict& v) {
    r.metric_name = v.metric_name;
    r.metric = v.metric;
    r.bound = v.bound;
    r.tolerance_model = v.tolerance_model;
    r.precision = std::string(to_string(v.precision));
  }

  // The outcome of a task none of whose cases failed: only a task with a conclusive case passes.
  static void decide(const properties::CaseTally& tally, const std::string& target, ResultRecord& r) {
    r.cases = tally.drawn;
    r.conclusive = tally.conclusive;
    const std::string counts = properties::describe_tally(tally);
    switch (properties::conclusion_without_failure(tally)) {
      case checks::Conclusion::pass:
        r.outcome = Outcome::pass;
        r.message = counts;
        break;
      case checks::Conclusion::unsupported:
        r.outcome = Outcome::not_tested;
        r.message = fmt::format("{} — the system lists target '{}' as supported but answered none of its cases ({})", counts,
                                target, tally.first_unsupported.empty() ? "no case was drawn" : tally.first_unsupported);
        break;
      case checks::Conclusion::inconclusive:
        r.outcome = Outcome::inconclusive;
        r.message = fmt::format("{} — nothing was verified (first: {})", counts, tally.first_inconclusive);
        break;
      default:
        r.outcome = Outcome::not_applicable;
        r.message = fmt::format("{} — {}", counts, tally.first_not_applicable);
    }
  }

  static void plot_point(ResultRecord& r, const checks::Verdict& v, double& worst_ratio) {
    r.error_vs_bound.push_back({v.metric, v.bound});
    const double ratio = v.bound > 0 ? v.metric / v.bound : (v.metric > 0 ? INFINITY : 0);
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      fill_from_verdict(r, v);
    }
  }

  bool stopping() const { return options_.stop_requested && options_.stop_requested() != 0; }

  // The cases a check task draws: the entry's, or this run's share of them.
  std::int64_t cases_of(const Task& t) const {
    return (t.entry->cases + options_.share.of - 1) / options_.share.of;
  }

  // The case source of a task's graph family: the random family shrinks (RapidCheck), the others do not.
  void run_check_task(const Task& t, System& sys, ResultRecord& r) {
    const checks::CheckKind kind = checks::parse_check_kind(t.label.check);
    if (!t.graphs->shrinks()) {
      FamilyCaseSource source(*t.graphs, t.label.target, t.attributes, cases_of(t), t.seed);
      return run_cases(t, sys, source, r);
    }
    properties::PropertyOptions po;
    for (const auto& a : t.attributes) po.case_options.attribute_values[a.name] = a.values;
    po.cases = static_cast<int>(cases_of(t));
    po.seed = t.seed;
    po.case_options.graph.max_nodes = t.graphs->max_nodes;
    po.case_options.graph.max_average_degree = t.graphs->max_avg_degree;
    po.case_options.graph.square_only = t.graphs->square_only;
    properties::RandomCaseSource source(properties::property_id(kind, sys.name(), t.label.target), t.label.target, po);
    // RapidCheck keeps its generation state in process-wide globals, so two properties generating
    // at once corrupt each other (a double free under AddressSanitizer with --jobs 2, and reports
    // that differ between --jobs values). Properties run one at a time; other checks stay parallel.
    static std::mutex rapidcheck_mutex;
    const std::lock_guard rapidcheck_lock(rapidcheck_mutex);
    run_cases(t, sys, source, r);
  }

  // The one case loop of a check task (properties/case_loop.h): every drawn case is checked and
  // counted, a conclusive one plotted; the first decided failure, shrunk when the source can, is
  // recorded with its counterexample; otherwise the tally decides the outcome.
  void run_cases(const Task& t, System& sys, properties::CaseSource& source, ResultRecord& r) {
    const checks::CheckKind kind = checks::parse_check_kind(t.label.check);
    const checks::CheckOptions copts = check_options(t);
    double worst_ratio = -1;
    const properties::CaseLoopResult out = properties::run_case_loop(
        source, {.check = [&](const Case& c) { return properties::check_case(kind, sys, c, copts); },
                 .stopping = [this] { return stopping(); },
                 .on_counted =
                     [&](const checks::Verdict& v) {
                       if (properties::case_kind(v) == properties::CaseKind::decided) plot_point(r, v, worst_ratio);
                     }});
    r.cases = out.tally.drawn;
    r.conclusive = out.tally.conclusive;
    if (out.stopped) {
      // Still not tested, but what it drew before the stop is kept: a campaign cut at its deadline
      // says how far each check got.
      interrupted(r);
      r.message += fmt::format(" ({} before the stop)", properties::describe_tally(out.tally));
      return;
    }
    if (out.failure) return record_failure(t, *out.failure, r);
    if (!out.source_error.empty()) {
      r.outcome = Outcome::error;
      r.error_not_of_the_system = true;
      r.message = fmt::format("{}; {}", out.source_error, properties::describe_tally(out.tally));
      return;
    }
    decide(out.tally, t.label.target, r);
  }

  void interrupted(ResultRecord& r) const {
    r.outcome = Outcome::not_tested;
    r.message = fmt::format("interrupted by {} before this check finished", signal_name(options_.stop_requested()));
  }

  const Suite& suite_;
  const SystemRegistry& systems_;
  const RunOptions& options_;
  std::uint64_t seed_;
};


}  // namespace

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::uint64_t task_seed(std::uint64_t suite_seed, const std::string& entry, const std::string& target, const std::string& check) {
  std::uint64_t h = 1469598103934665603ull;
  for (const auto* s : {&entry, &target, &check}) h = fnv1a(h, *s);
  // Keep seeds below 2^53 so that every JSON reader holds them exactly.
  return splitmix64(h ^ splitmix64(suite_seed)) >> 11;
}

std::uint64_t share_seed(std::uint64_t task_seed, int part) {
  return splitmix64(task_seed ^ splitmix64(0x5368617265ull + static_cast<std::uint64_t>(part))) >> 11;
}

CaseShare parse_case_share(const std::string& text) {
  const auto slash = text.find('/');
  auto number = [&](const std::string& s) -> int {
    if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), [](unsigned char ch) { return std::isdigit(ch); }))
      return 0;
    return std::stoi(s);
  };
  const int part = slash == std::string::npos ? 0 : number(text.substr(0, slash));
  const int of = slash == std::string::npos ? 0 : number(text.substr(slash + 1));
  if (part < 1 || of < 1 || part > of)
    throw InputError(fmt::format("--share '{}': expected PART/OF with 1 <= PART <= OF (e.g. 3/8: the third of eight "
                                 "disjoint parts of every check's cases)",
                                 text));
  return {part, of};
}

std::string scale_command_line(const ScaleCommandLine& c) {
  std::string line = fmt::format("gnncheck scale {} --target {} --graph {} --rows {} --seed {}", c.system_flag, c.target,
                                 shell_quote(c.graph), c.rows, c.seed);
  if (c.hub_edges != scale::kDefaultHubEdgeBudget) line += fmt::format(" --hub-edges {}", c.hub_edges);
  if (c.hub_sources != scale::kDefaultHubSourceBudget) line += fmt::format(" --hub-sources {}", c.hub_sources);
  if (c.magnitude != 1.0) line += fmt::format(" --magnitude {}", c.magnitude);
  for (const auto& [flag, value] : {std::pair{"--features", &c.features}, std::pair{"--hidden-features", &c.hidden_features},
                                    std::pair{"--out-features", &c.out_features}, std::pair{"--heads", &c.heads},
                                    std::pair{"--norm", &c.norm}})
    if (*value) line += fmt::format(" {} {}", flag, shell_quote(**value));
  if (c.expect_caught) line += " --expect caught";
  return line;
}

std::vector<std::string> entry_labels(const Suite& suite, const Entry& entry) {
  std::vector<std::string> labels = {"e2e"};
  auto add = [&](const std::string& l) {
    if (std::find(labels.begin(), labels.end(), l) == labels.end()) labels.push_back(l);
  };
  const bool gpu = std::any_of(entry.systems.begin(), entry.systems.end(), [](const auto& s) { return s == "gpu" || s == "cusparse"; });
  add(gpu ? "gpu" : "cpu");
  if (suite.graphs.count(entry.graphs) && suite.graphs.at(entry.graphs).family == "dataset") add("dataset");
  if (std::find(entry.checks.begin(), entry.checks.end(), kAccuracy) != entry.checks.end()) add("slow");
  for (const auto& l : entry.labels) add(l);
  return labels;
}

std::vector<std::string> known_check_names() {
  std::vector<std::string> out;
  for (auto kind : checks::all_check_kinds()) out.emplace_back(checks::to_string(kind));
  out.emplace_back(kSelfcheck);
  out.emplace_back(kAccuracy);
  out.emplace_back(kScale);
  return out;
}

// Under --sanitize: ends each sanitized system's process (the sanitizer writes its summary on exit),
// reads its logs, and adds one result per (entry, system) that ran it — check `sanitize_<tool>`,
// target "every target" — so that the entry's expectation covers what the sanitizer found.
static void add_sanitizer_results(const SystemRegistry& systems, const RunOptions& options, std::vector<Task>& tasks,
                                  std::vector<ResultRecord>& results) {
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
    ResultRecord r = skeleton(t);
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
    r.repro = fmt::format("gnncheck run {} --entry {}{} --sanitize {}", shell_quote(options.suite_argument),
                          shell_quote(t.label.entry), t.overridden ? " " + e.command_line_flag : "", e.sanitizer_tool);
    tasks.push_back(std::move(t));
    results.push_back(std::move(r));
  }
}

reports::RunReport run_suite(const Suite& suite, const SystemRegistry& systems, const RunOptions& options, ProgressSink* progress) {
  const auto start = Clock::now();
  const std::uint64_t seed = options.seed.value_or(suite.seed);
  reports::RunReport run;
  if (!options.report_dir.empty()) {
    // Counterexamples of an earlier run in the same report directory would read as this run's.
    std::error_code ec;
    std::filesystem::remove_all(options.report_dir / "cases", ec);
    if (ec) throw InputError(fmt::format("{}: cannot remove the previous run's cases/: {}", options.report_dir.string(), ec.message()));
  }
  run.suite_name = suite.name;
  run.suite_path = suite.path;
  run.seed = seed;
  if (!options.share.whole()) run.share = options.share;
  run.started_utc = utc_timestamp();

  std::vector<Task> tasks = Planner(suite, systems, options, seed).plan();
  for (const auto& s : systems.entries()) {
    const bool used = std::any_of(tasks.begin(), tasks.end(), [&](const Task& t) { return t.label.system == s.name; });
    if (used) run.systems.push_back({s.name, s.kind, s.availability.available, s.availability.reason, s.bug});
  }

  if (progress) progress->planned(tasks.size());
  std::vector<ResultRecord> results(tasks.size());
  std::atomic<std::size_t> next{0};
  std::mutex progress_mutex;
  const double budget = options.time_budget_seconds.value_or(suite.time_budget_seconds);
  Executor executor(suite, systems, options, seed);

  auto worker = [&] {
    std::map<std::string, std::unique_ptr<System>> instances;  // GPU systems: one instance per thread
    for (std::size_t i = next++; i < tasks.size(); i = next++) {
      const Task& t = tasks[i];
      ResultRecord r;
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      const int stop = options.stop_requested ? options.stop_requested() : 0;
      if (t.decided) {
        r = *t.decided;
      } else if (stop != 0) {
        r = skeleton(t);
        r.outcome = Outcome::not_tested;
        r.expectation_held = false;
        r.message = fmt::format("not run: interrupted by {}", signal_name(stop));
      } else if (budget > 0 && elapsed > budget) {
        // A suite that did not finish has not verified what it promised: an unmet expectation.
        r = skeleton(t);
        r.outcome = Outcome::not_tested;
        r.expectation_held = false;
        r.message = fmt::format("not run: the time budget of {} s ({}) was used up before this task started; give a "
                                "slower system or a loaded machine more with --time-budget SECONDS (0: no limit) or "
                                "the suite's time_budget_s (adapter and plugin start-up is not counted)",
                                budget, options.time_budget_seconds ? "--time-budget" : "the suite's time_budget_s");
      } else {
        {
          std::lock_guard lock(progress_mutex);
          if (progress) progress->started(t.label);
        }
        r = executor.run(t, instances);
      }
      results[i] = std::move(r);
      std::lock_guard lock(progress_mutex);
      if (progress) progress->finished(t.label, results[i]);
    }
  };
  const int jobs = std::max(1, options.jobs);
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (auto& th : threads) th.join();
  if (options.stop_requested && options.stop_requested() != 0) run.interrupted_by = signal_name(options.stop_requested());
  add_sanitizer_results(systems, options, tasks, results);

  // A replica is caught where a check failed on it: within an entry for a suite's replica entries;
  // anywhere in the run for a planted bug named on the command line with `--expect caught`. An
  // `error` catches nothing, whoever's fault: a crash, a timeout or an unreadable answer is a broken
  // system, not a wrong answer found (and an error of the suite, the machine or gnncheck says
  // nothing about the replica at all). A check that does not catch it is no missed expectation by
  // itself; a bug that no check caught is, and then all of its results are marked (unless the
  // system could not run here at all).
  auto catch_key = [&](const Task& t) { return std::pair{t.overridden ? std::string() : t.label.entry, t.label.system}; };
  std::map<std::pair<std::string, std::string>, bool> caught;  // (entry, system)
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].expect != Expectation::caught) continue;
    bool& c = caught[catch_key(tasks[i])];
    c = c || results[i].outcome == Outcome::fail;
  }
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].expect != Expectation::caught) continue;
    if (results[i].outcome == Outcome::not_tested || results[i].outcome == Outcome::skipped) continue;  // decided above
    const bool was_caught = caught.at(catch_key(tasks[i]));
    results[i].expectation_held = was_caught;
    if (!was_caught && results[i].outcome != Outcome::pass)
      results[i].message += tasks[i].overridden ? " — and no check of the run failed on the system"
                                                : " — and no other check of this entry caught the replica";
  }

  // A system the user named on the command line that concluded nothing anywhere in the run (every
  // target unsupported by it, every case declined) was not tested: never a success.
  for (const auto& name : options.override_systems) {
    bool any_conclusive = false, any_result = false;
    for (const auto& r : results)
      if (r.system == name) {
        any_result = true;
        any_conclusive = any_conclusive || r.conclusive > 0 || r.outcome == Outcome::fail || r.outcome == Outcome::error;
      }
    if (!any_result || any_conclusive) continue;
    for (auto& r : results)
      if (r.system == name && r.expectation_held) {
        r.message = fmt::format("system '{}' concluded nothing in this run ({}: {}), so it was not tested", name,
                                to_string(r.outcome), r.message);
        r.outcome = Outcome::not_tested;
        r.expectation_held = false;
      }
  }

  run.results = std::move(results);
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return run;
}

}  // namespace gnncheck::suites
