#include "suites/cli/list_command.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "fixtures/generators.h"
#include "oracle/target_listing.h"
#include "oracle/targets.h"
#include "suites/runner.h"
#include "suites/suite.h"

namespace gnncheck::suites {
namespace {

void print_targets(std::ostream& out, bool layers) {
  fmt::print(out, "{}:\n", layers ? "Layers" : "Ops");
  int shown = 0;
  for (const auto& def : oracle::all_targets()) {
    if (def.spec.is_layer != layers) continue;
    std::vector<std::string> attrs;
    for (const auto& a : def.spec.attributes) attrs.push_back(fmt::format("{}={}", a.name, to_string(a.default_value)));
    fmt::print(out, "  {:<22} {}\n", def.spec.name, def.spec.summary);
    if (!attrs.empty()) fmt::print(out, "  {:<22} attributes: {}\n", "", fmt::join(attrs, " "));
    ++shown;
  }
  if (shown == 0) fmt::print(out, "  (none in this build's catalogue)\n");
}

void print_systems(std::ostream& out, const SystemRegistry& systems, bool replicas) {
  fmt::print(out, "{}:\n", replicas ? "Replicas (systems with a known bug; a suite expects them to be caught)" : "Systems");
  int shown = 0;
  std::size_t width = 0;
  for (const auto& e : systems.entries())
    if ((e.kind == SystemKind::replica) == replicas) width = std::max(width, e.name.size());
  for (const auto& e : systems.entries()) {
    if ((e.kind == SystemKind::replica) != replicas) continue;
    const std::string state = e.availability.available ? "available" : "unavailable: " + e.availability.reason;
    fmt::print(out, "  {:<{}}  {:<8} {}\n", e.name, width, system_kind_name(e.kind), state);
    fmt::print(out, "  {:<{}}  {:<8} {}\n", "", width, "", replicas ? e.bug : e.summary);
    ++shown;
  }
  if (shown == 0) fmt::print(out, "  (none in this build)\n");
}

const std::map<std::string, std::string> kCheckHelp = {
    {"differential", "system vs the float64 oracle: every output and every gradient, element-wise bounds"},
    {"gradient", "the system's backward vs central finite differences of its own forward (float64 systems)"},
    {"adjoint", "<ȳ, J·u> = <Jᵀȳ, u> from the system's own forward and backward: catches A for Aᵀ"},
    {"op_order", "normalize+aggregate on graphs whose in- and out-degrees differ"},
    {"metamorphic_relabel", "relabeling nodes permutes outputs and gradients"},
    {"metamorphic_edge_order", "reordering edges within a row changes nothing"},
    {"metamorphic_linearity", "backward is linear in the output gradient"},
    {"state_interleaved", "forward A, forward B, backward A still gives A's gradient"},
    {"state_repeat", "evaluating twice agrees within the non-determinism tolerance"},
    {"numerics", "no NaN/Inf on large logits where the exact result is finite"},
    {"resources", "memory does not grow across repeated evaluations"},
    {"accuracy", "accuracy gate: train with the system and the oracle from one initialization; loss curves and test accuracy agree"},
    {"scale", "a big graph (graph family `scale`) against the exact oracle on sampled rows and every gradient (scale/README.md)"},
    {"selfcheck", "the oracle's backward of every target against finite differences (systems: oracle)"},
};

void print_checks(std::ostream& out) {
  fmt::print(out, "Checks:\n");
  for (const auto& name : known_check_names()) {
    auto it = kCheckHelp.find(name);
    fmt::print(out, "  {:<24} {}\n", name, it == kCheckHelp.end() ? "" : it->second);
  }
}

void print_graphs(std::ostream& out) {
  fmt::print(out, "Graph families built into every suite (`graphs:` in a suite defines more):\n");
  for (const auto& [name, g] : builtin_graph_families()) {
    std::string what = g.family;
    if (g.kind() == GraphFamily::Kind::random) what = fmt::format("random, shrinking (max_nodes {}, max_avg_degree {})", g.max_nodes, g.max_avg_degree);
    if (g.kind() == GraphFamily::Kind::dataset) what = "dataset " + g.dataset;
    if (!g.params.empty()) {
      std::vector<std::string> ps;
      for (const auto& [k, v] : g.params) ps.push_back(fmt::format("{}={}", k, to_string(v)));
      what += fmt::format(" ({})", fmt::join(ps, ", "));
    }
    fmt::print(out, "  {:<24} {}\n", name, what);
  }
  fmt::print(out, "Generator families for `family:`: random, dataset, csbm, file");
  for (const auto& info : graph_families()) fmt::print(out, ", {}", info.name);
  fmt::print(out, "\n");
}

}  // namespace

void print_declarations(std::ostream& out, const SystemRegistry& systems, const std::vector<std::string>& names,
                        const std::string& section) {
  // With systems named, the list is what they declare per target: a section narrows it to ops,
  // layers or one target; the other sections do not speak of a system's declarations.
  const bool kind_section = section == "targets" || section == "ops" || section == "layers";
  if (!section.empty() && !kind_section && !oracle::lookup_target(section)) {
    std::vector<std::string> targets;
    for (const auto& def : oracle::all_targets()) targets.push_back(def.spec.name);
    throw InputError(fmt::format(
        "gnncheck list with --system, --adapter or --plugin shows what those systems declare per target: its section "
        "may be targets, ops, layers or a target ({}); got '{}'{}",
        fmt::join(targets, ", "), section,
        section == "systems" ? " (`gnncheck list systems` without them lists every system)" : ""));
  }
  auto shown_target = [&](const oracle::TargetDef& def) {
    if (section.empty() || section == "targets") return true;
    if (section == "ops" || section == "layers") return def.spec.is_layer == (section == "layers");
    return def.spec.name == section;
  };
  for (const auto& name : names) {
    const SystemEntry& entry = systems.find(name);
    fmt::print(out, "System '{}' ({}):\n", entry.name, system_kind_name(entry.kind));
    std::unique_ptr<System> made;
    System* system = entry.instance.get();
    if (!system && entry.make && entry.availability.available) system = (made = entry.make()).get();
    const Availability availability = system ? system->availability() : entry.availability;
    if (!system || !availability.available) {
      fmt::print(out, "  unavailable: {}\n", availability.reason);
      continue;
    }
    int shown = 0;
    for (const auto& def : oracle::all_targets()) {
      const std::string& target = def.spec.name;
      if (!shown_target(def) || !system->supports(target)) continue;
      ++shown;
      const ImplementedAttributes implemented = system->implemented_attributes(target);
      fmt::print(out, "  {:<22} {:<9} {}\n", target, precision_text(system->precision(target), system->accumulation(target)),
                 implemented.empty() ? std::string("every value of every attribute") : "implements " + oracle::describe(implemented));
      std::vector<std::string> uncovered;
      for (const auto& [attribute, values] : implemented)
        for (const auto& a : def.spec.attributes)
          if (a.name == attribute)
            for (const auto& v : oracle::values_not_implemented(a, values))
              uncovered.push_back(fmt::format("{} = {}", attribute, to_plain_string(v)));
      if (!uncovered.empty()) fmt::print(out, "  {:<22} {:<9} not covered: {}\n", "", "", fmt::join(uncovered, ", "));
    }
    if (shown == 0)
      fmt::print(out, "  {}\n", section.empty() || kind_section ? fmt::format("(no {})", section.empty() ? "target" : section)
                                                                 : fmt::format("does not compute '{}'", section));
  }
}

void print_targets_markdown(std::ostream& out, const std::string& section) {
  if (!section.empty())
    throw InputError(fmt::format("gnncheck list --markdown prints every target (adapters/PROTOCOL.md §10); got a section '{}' as well",
                                 section));
  out << oracle::targets_markdown();
}

void print_list(std::ostream& out, const SystemRegistry& systems, const std::string& section) {
  const std::vector<std::string> sections = {"ops", "layers", "systems", "replicas", "checks", "graphs"};
  if (!section.empty() && section != "targets" && std::find(sections.begin(), sections.end(), section) == sections.end()) {
    for (const auto& def : oracle::all_targets())
      if (def.spec.name == section) {
        out << oracle::describe_target(def);
        return;
      }
    std::vector<std::string> targets;
    for (const auto& def : oracle::all_targets()) targets.push_back(def.spec.name);
    throw InputError(fmt::format("gnncheck list: '{}' is neither a section (targets, {}) nor a target ({})", section,
                                 fmt::join(sections, ", "), fmt::join(targets, ", ")));
  }
  bool first = true;
  auto want = [&](const std::string& s) {
    bool yes = section.empty() || section == s || (section == "targets" && (s == "ops" || s == "layers"));
    if (yes && !first) out << "\n";
    if (yes) first = false;
    return yes;
  };
  if (want("ops")) print_targets(out, false);
  if (want("layers")) print_targets(out, true);
  if (want("systems")) print_systems(out, systems, false);
  if (want("replicas")) print_systems(out, systems, true);
  if (want("checks")) print_checks(out);
  if (want("graphs")) print_graphs(out);
}

CLI::App* add_list_command(CLI::App& app, ListCommandArgs& args) {
  CLI::App* list = app.add_subcommand("list", "List ops, layers, systems (with availability and why not), replicas, checks and graph families");
  list->add_option("section", args.section,
                   "Only this section (targets, ops, layers, systems, replicas, checks, graphs), or one target's tensors, "
                   "shapes and attributes (e.g. `gnncheck list gat`)");
  list->add_flag("--markdown", args.markdown, "Every target as Markdown (formula, conventions, tensors): adapters/PROTOCOL.md §10");
  args.systems.add_to(list);
  return list;
}

int run_list_command(const ListCommandArgs& args, SystemRegistry& systems) {
  if (!args.systems.empty()) {
    if (args.markdown) throw InputError("gnncheck list --markdown lists the catalogue; it takes no --system, --adapter or --plugin");
    print_declarations(std::cout, systems, args.systems.resolve(systems), args.section);
    return 0;
  }
  if (args.markdown)
    print_targets_markdown(std::cout, args.section);
  else
    print_list(std::cout, systems, args.section);
  return 0;
}

}  // namespace gnncheck::suites
