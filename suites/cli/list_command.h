// gnncheck/suites/cli/list_command.h — `gnncheck list`: what can be checked here, and why not.
//
//   gnncheck list              # ops, layers, systems with availability, replicas, checks, graph families
//   gnncheck list systems      # one section only
//   gnncheck list gat          # one target: formula, conventions, tensors with shapes, attributes
//   gnncheck list --markdown   # every target as Markdown: adapters/PROTOCOL.md §8
//   gnncheck list --adapter "python3 mine.py"   # what that system declares: targets, precisions and
//                                               # the attribute values it implements (gcn: only the listed system's targets)
#pragma once

#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "suites/cli/command_support.h"
#include "suites/system_registry.h"

namespace gnncheck::suites {

// Prints the named section ("targets", "ops", "layers", "systems", "checks", "replicas") or all of
// them when `section` is empty ("checks", "graphs" too). An unknown section is an InputError naming the accepted ones.
void print_list(std::ostream& out, const SystemRegistry& systems, const std::string& section);

struct ListCommandArgs {
  std::string section;  // empty: every section
  bool markdown = false;  // every target as Markdown (adapters/PROTOCOL.md §10)
  SystemFlags systems;    // --system/--adapter/--plugin: list what these declare instead
};
CLI::App* add_list_command(CLI::App& app, ListCommandArgs& args);
int run_list_command(const ListCommandArgs& args, SystemRegistry& systems);

// What each named system declares: every target it computes with its precision and the attribute
// values it implements where fewer than all, and what that leaves uncovered; `section` empty or one
// target's name. A system that cannot start says why.
void print_declarations(std::ostream& out, const SystemRegistry& systems, const std::vector<std::string>& names,
                        const std::string& section);

// `gnncheck list --markdown`: the catalogue's targets as Markdown (oracle::targets_markdown()). A
// section as well is an InputError.
void print_targets_markdown(std::ostream& out, const std::string& section);

}  // namespace gnncheck::suites
