#include "suites/cli/list_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include "oracle/error.h"
#include "oracle/targets.h"

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
  for (const auto& e : systems.entries()) {
    if ((e.kind == "replica") != replicas) continue;
    const std::string state = e.availability.available ? "available" : "unavailable: " + e.availability.reason;
    fmt::print(out, "  {:<22} {:<8} {}\n", e.name, e.kind, state);
    fmt::print(out, "  {:<22} {:<8} {}\n", "", "", replicas ? e.bug : e.summary);
    ++shown;
  }
  if (shown == 0) fmt::print(out, "  (none in this build)\n");
}

}  // namespace

void print_list(std::ostream& out, const SystemRegistry& systems, const std::string& section) {
  const std::vector<std::string> sections = {"ops", "layers", "systems", "replicas"};
  if (!section.empty() && section != "targets" && std::find(sections.begin(), sections.end(), section) == sections.end())
    throw InputError(fmt::format("gnncheck list: unknown section '{}'; expected one of: targets, {}", section,
                                 fmt::join(sections, ", ")));
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
}

}  // namespace gnncheck::suites
