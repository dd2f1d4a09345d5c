// gnncheck/suites/cli/run_command.h — `gnncheck run`: run a suite and write its report.
//
//   gnncheck run ci --plugin build/libmy_kernel.so --seed 7 --report out/
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "suites/cli/command_support.h"
#include "suites/system_registry.h"

namespace gnncheck::suites {

struct RunCommandArgs {
  std::string suite = "default";
  SystemFlags systems;
  std::optional<std::uint64_t> seed;
  int jobs = 1;  // set by add_run_command: the number of cores, at most 8
  std::optional<double> time_budget;  // --time-budget: replaces the suite's time_budget_s (0: no limit)
  std::string report = "gnncheck-report";
  std::vector<std::string> entries, targets;
  std::string progress = "auto";
  std::string expect = "pass";
  std::string sanitize;  // empty, or memcheck | racecheck | initcheck (adapters/PROTOCOL.md §7)
  std::optional<std::string> share;  // PART/OF (RunOptions::share) when given
};

CLI::App* add_run_command(CLI::App& app, RunCommandArgs& args);
// Throws InputError for bad arguments (the caller maps it to exit code 2).
int run_run_command(const RunCommandArgs& args, SystemRegistry& registry, const std::filesystem::path& executable_dir);

}  // namespace gnncheck::suites
