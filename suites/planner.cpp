#include "suites/planner.h"

#include <algorithm>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/splitmix64.h"
#include "oracle/targets.h"

namespace gnncheck::suites {
namespace {

using reports::Expectation;
using reports::Outcome;
using reports::ResultRecord;

std::vector<std::string> targets_of(const std::string& selector) {
  std::vector<std::string> out;
  for (const auto& def : oracle::all_targets()) {
    const bool wanted = selector == "all" || (selector == "ops" && !def.spec.is_layer) || (selector == "layers" && def.spec.is_layer);
    if (wanted) out.push_back(def.spec.name);
  }
  return out;
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
  for (const auto& v : values) out.push_back(to_plain_string(v));
  return fmt::format("{{{}}}", fmt::join(out, ", "));
}

AttributeScope attribute_scope(const oracle::TargetSpec& spec, const std::vector<AttributeChoice>& pinned,
                               const ImplementedAttributes& declared, const std::string& system, bool own_system) {
  AttributeScope scope;
  // A system outside gnncheck that does not declare an opt-in attribute implements its default.
  // Choices added to an attribute later are asked of it only where it declares the attribute; a
  // pin or a drawn attribute is then held to the choices it had before (one that is neither keeps
  // its default, never an added choice).
  ImplementedAttributes implemented = declared;
  std::vector<std::string> opted_out, later_choices;
  const auto pinned_here = [&pinned](const std::string& name) {
    return std::any_of(pinned.begin(), pinned.end(), [&name](const AttributeChoice& c) { return c.name == name; });
  };
  if (!own_system)
    for (const auto& a : spec.attributes) {
      if (implemented.count(a.name)) continue;
      if (a.opt_in) {
        implemented[a.name] = {a.default_value};
        opted_out.push_back(a.name);
      } else if (!a.opt_in_choices.empty() && (a.drawn || pinned_here(a.name))) {
        std::vector<AttrValue> earlier;
        for (const auto& v : a.choices)
          if (std::find(a.opt_in_choices.begin(), a.opt_in_choices.end(), v) == a.opt_in_choices.end()) earlier.push_back(v);
        implemented[a.name] = std::move(earlier);
        std::vector<std::string> added;
        for (const auto& v : a.opt_in_choices) added.push_back(to_plain_string(v));
        later_choices.push_back(fmt::format("{} = {}", a.name, fmt::join(added, " and ")));
      }
    }
  std::string opt_in_note =
      opted_out.empty() ? std::string()
                        : fmt::format("; {} added to '{}' after systems were written against it: asked only the default "
                                      "unless '{}' declares {} (PROTOCOL.md §2)",
                                      fmt::join(opted_out, " and "), spec.name, system,
                                      opted_out.size() == 1 ? "it" : "them");
  if (!later_choices.empty())
    opt_in_note += fmt::format("; {} added to '{}' after systems were written against it: asked only where '{}' "
                               "declares the attribute (PROTOCOL.md §2)",
                               fmt::join(later_choices, "; "), spec.name, system);
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
    const oracle::AttributeSpec* attribute = spec.find_attribute(name);
    if (!attribute) continue;
    const std::vector<AttrValue> missing = oracle::values_not_implemented(*attribute, values);
    if (!missing.empty()) left_out.push_back(fmt::format("{} = {}", name, shown_values(missing)));
  }
  scope.coverage_note = fmt::format("cases drawn within what '{}' implements of '{}': {}{}{}", system, spec.name,
                                    oracle::describe(implemented),
                                    left_out.empty() ? std::string()
                                                     : fmt::format(" (not covered: {})", fmt::join(left_out, "; ")),
                                    opt_in_note);
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
      const bool oracle_only =
          std::none_of(entry.checks.begin(), entry.checks.end(), [](const auto& c) { return find_task_kind(c)->runs_on_systems(); });
      std::vector<std::string> system_names = entry.systems;
      if (!options_.override_systems.empty() && !oracle_only) {
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
    for (const auto& c : e.checks)
      if (!find_task_kind(c))
        throw InputError(fmt::format("{}: entry '{}': unknown check '{}'; known checks: {}", e.location.where(), e.name, c,
                                     fmt::join(known_check_names(), ", ")));
    for (const auto& [key, value] : e.options) {
      std::vector<std::string> takers, accepted;  // kinds that take options at all; the options of the entry's kinds
      for (const auto& name : known_check_names())
        if (!find_task_kind(name)->options().empty()) takers.push_back(name);
      std::string taker;
      for (const auto& c : e.checks)
        if (const auto options = find_task_kind(c)->options(); !options.empty()) {
          taker = c;
          accepted = options;
        }
      if (taker.empty())
        throw InputError(fmt::format("{}: entry '{}': options apply to the {} check only", e.location.where(), e.name,
                                     fmt::join(takers, ", ")));
      if (std::find(accepted.begin(), accepted.end(), key) == accepted.end())
        throw InputError(fmt::format("{}: entry '{}': unknown option '{}' of the {} check; expected one of: {}",
                                     e.location.where(), e.name, key, taker, fmt::join(accepted, ", ")));
    }
    // A graph family that one kind checks alone (scale) is validated by that kind, whatever the entry's checks say.
    const TaskKind* owner = kind_checking_alone(suite_.graphs.at(e.graphs));
    if (owner) owner->validate(e, suite_);
    for (const auto& c : e.checks)
      if (const TaskKind* kind = find_task_kind(c); kind != owner) kind->validate(e, suite_);
  }

  std::vector<std::string> expand_systems(const Entry& e, const std::vector<std::string>& names) {
    std::vector<std::string> out;
    for (const auto& n : names) {
      if (n == "replicas") {
        for (const auto& s : systems_.entries())
          if (s.kind == SystemKind::replica) out.push_back(s.name);
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
      if (!t.is_selector()) {
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
      t.kind = find_task_kind(check);
      t.entry = &entry;
      t.expect = overridden ? options_.override_expectation : entry.expect;
      t.overridden = overridden;
      t.graphs = graphs;
      t.seed = task_seed(seed_, entry.name, target, check);
      t.target = oracle::lookup_target(target);
      return t;
    };
    std::unique_ptr<System> probe;  // asked which targets it supports; made once per entry and system
    for (const auto& check : entry.checks) {
      const TaskKind& kind = *find_task_kind(check);
      if (!kind.runs_on_systems()) {
        Task t = task_for("all", check);
        t.precision = "float64";  // it verifies the float64 oracle
        tasks.push_back(std::move(t));
        continue;
      }
      if (!sys.availability.available || !sys.make) {
        const bool needed = required(entry, system_name) || (overridden && options_.override_expectation == Expectation::caught);
        Task t = task_for("all", check);
        ResultRecord r = result_record(t);
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
        const bool selector = choice->is_selector();
        const std::vector<std::string> names = selector ? targets_of(choice->name) : std::vector<std::string>{choice->name};
        int supported = 0, wanted = 0;
        for (const auto& target : names) {
          if (!target_wanted(target)) continue;
          ++wanted;
          if (!asked.supports(target)) {
            if (selector) continue;  // a selector means "those of them the system supports"
            Task t = task_for(target, check);
            ResultRecord r = result_record(t);
            r.outcome = Outcome::skipped;
            r.message = fmt::format("system '{}' does not support target '{}'", system_name, target);
            t.decided = r;
            tasks.push_back(std::move(t));
            continue;
          }
          ++supported;
          Task t = task_for(target, check);
          t.precision = precision_text(asked.precision(target), asked.accumulation(target));
          t.attributes = choice->attributes;
          if (kind.draws_within_declarations()) {
            const AttributeScope scope =
                attribute_scope(t.target->spec, choice->attributes, asked.implemented_attributes(target),
                                system_name, is_own_system(sys.kind));
            t.attributes = scope.choices;
            t.coverage_note = scope.coverage_note;
            if (scope.nothing_left) {
              ResultRecord r = result_record(t);
              r.outcome = Outcome::skipped;
              r.message = *scope.nothing_left;
              t.decided = r;
              tasks.push_back(std::move(t));
              continue;
            }
          }
          // A check that cannot say anything about this target or precision, whatever the case:
          // shown as such, never as a pass.
          if (auto why = kind.not_applicable(*t.target, asked.precision(target))) {
            ResultRecord r = result_record(t);
            r.outcome = Outcome::not_applicable;
            r.message = *why;
            t.decided = r;
          }
          tasks.push_back(std::move(t));
        }
        if (selector && supported == 0 && wanted > 0) {
          Task t = task_for(choice->name, check);
          ResultRecord r = result_record(t);
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

}  // namespace

std::vector<Task> plan_tasks(const Suite& suite, const SystemRegistry& systems, const RunOptions& options, std::uint64_t seed) {
  return Planner(suite, systems, options, seed).plan();
}

namespace {

std::uint64_t fnv1a(std::uint64_t h, const std::string& s) {
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h ^ 0xff;  // separates "ab","c" from "a","bc"
}

}  // namespace

std::uint64_t task_seed(std::uint64_t suite_seed, const std::string& entry, const std::string& target, const std::string& check) {
  std::uint64_t h = 1469598103934665603ull;
  for (const auto* s : {&entry, &target, &check}) h = fnv1a(h, *s);
  // Keep seeds below 2^53 so that every JSON reader holds them exactly.
  return splitmix64(h ^ splitmix64(suite_seed)) >> 11;
}

std::uint64_t chunk_seed(std::uint64_t task_seed, std::int64_t chunk) {
  if (chunk == 0) return task_seed;
  return splitmix64(task_seed ^ splitmix64(0x4368756e6bull + static_cast<std::uint64_t>(chunk))) >> 11;
}

// The units of the plan this run runs (RunOptions::share): a check task's chunks, or a task whole;
// unit u falls to part u mod OF + 1. A shard's report records the plan; tasks with no unit here drop out.
std::vector<Task> units_of_this_run(std::vector<Task> tasks, const RunOptions& options, reports::RunReport& run) {
  std::vector<Task> here;
  std::int64_t unit = 0;
  for (auto& t : tasks) {
    const bool chunked = !t.decided && t.kind->draws_cases();
    const std::int64_t units = chunked ? chunk_count(t.entry->cases) : 1;
    if (run.share)
      run.plan.push_back({t.label.entry, t.label.system, t.label.target, t.label.check, units, t.overridden, t.expect, t.seed});
    for (std::int64_t j = 0; j < units; ++j)
      if ((unit + j) % options.share.of == options.share.part - 1) t.chunks.push_back(j);
    unit += units;
    if (!t.chunks.empty()) here.push_back(std::move(t));
  }
  if (run.share) run.override_systems = options.override_systems;
  return here;
}

std::vector<std::string> entry_labels(const Suite& suite, const Entry& entry, const SystemRegistry& systems) {
  std::vector<std::string> labels = {"e2e"};
  auto add = [&](const std::string& l) {
    if (std::find(labels.begin(), labels.end(), l) == labels.end()) labels.push_back(l);
  };
  const bool gpu = !entry.systems.empty() && std::all_of(entry.systems.begin(), entry.systems.end(), [&](const std::string& s) {
    return systems.contains(s) && systems.find(s).runs_on_gpu;
  });
  add(gpu ? "gpu" : "cpu");
  if (suite.graphs.count(entry.graphs) && suite.graphs.at(entry.graphs).kind() == GraphFamily::Kind::dataset) add("dataset");
  for (const auto& c : entry.checks)
    if (const TaskKind* kind = find_task_kind(c); kind && kind->slow()) add("slow");
  for (const auto& l : entry.labels) add(l);
  return labels;
}

}  // namespace gnncheck::suites
