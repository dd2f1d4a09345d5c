// gnncheck/suites/cli/check_command.h — `gnncheck check`: one target of one system, ad hoc.
//
//   gnncheck check --system cpu_float32 --target gat --check adjoint --cases 50
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "suites/cli/command_support.h"
#include "suites/system_registry.h"

namespace gnncheck::suites {

struct CheckCommandArgs {
  SystemFlags systems;
  std::string target;
  std::vector<std::string> checks;  // empty: every check but selfcheck
  std::string graphs = "small";
  std::int64_t cases = 20;
  std::uint64_t seed = 1;
  std::string report;
};

CLI::App* add_check_command(CLI::App& app, CheckCommandArgs& args);
// Throws InputError for bad arguments (the caller maps it to exit code 2).
int run_check_command(const CheckCommandArgs& args, SystemRegistry& registry);

}  // namespace gnncheck::suites
