// gnncheck/suites/cli/check_command.h — `gnncheck check`: one target of one system, ad hoc.
//
//   gnncheck check --system cpu_float32 --target gat --check adjoint --cases 50
//   gnncheck check --system gpu-replica-racy --target spmm --check differential --sanitize racecheck
#pragma once

#include <cstdint>
#include <filesystem>
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
  std::string sanitize;  // empty, or memcheck | racecheck | initcheck (adapters/PROTOCOL.md §7)
};

CLI::App* add_check_command(CLI::App& app, CheckCommandArgs& args);
// Throws InputError for bad arguments (the caller maps it to exit code 2).
// `executable_dir`: where this gnncheck is (the built-in GPU systems run as `gnncheck serve-system`
// processes under --sanitize).
int run_check_command(const CheckCommandArgs& args, SystemRegistry& registry, const std::filesystem::path& executable_dir);

}  // namespace gnncheck::suites
