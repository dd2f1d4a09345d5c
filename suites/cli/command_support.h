// gnncheck/suites/cli/command_support.h — what the `gnncheck` subcommands share: exit codes, the
// --system/--adapter/--plugin flags, and running a suite with progress and the final table.
//
//   SystemFlags systems;  systems.add_to(sub);   // after parsing:
//   options.override_systems = systems.resolve(registry, &options.override_system_flags);
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "reports/run_report.h"
#include "suites/runner.h"
#include "suites/suite.h"
#include "suites/system_registry.h"

namespace gnncheck::suites {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUnmet = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInternal = 3;
inline constexpr int kExitInterrupted = 130;  // 128 + SIGINT, as shells report it
inline constexpr int kExitTerminated = 143;   // 128 + SIGTERM

// For a numeric flag that must be above 0 (--cases, --case-timeout, …): says so and echoes the value,
// where CLI::PositiveNumber prints a range up to the largest double.
extern const CLI::Validator kAboveZero;
// For --seed: digits only, below 2^64 (CLI11 would read "-1" as 2^64 - 1 and run that seed).
extern const CLI::Validator kSeedValue;

// Systems named on the command line: --system NAME, --adapter CMD, --plugin SO (any number of each).
struct SystemFlags {
  std::vector<std::string> names, adapters, plugins;
  std::optional<double> case_timeout_s, startup_timeout_s;

  void add_to(CLI::App* app);
  bool empty() const { return names.empty() && adapters.empty() && plugins.empty(); }
  // The limits for adapters and plugins: these flags over the suite's keys.
  ProcessLimits limits(const Suite* suite = nullptr) const;
  // Registers adapters and plugins and returns every system named, in flag order per kind; `flags`
  // receives how to name each on a command line again (for re-run lines), then limit_flags() where
  // an adapter or plugin is named.
  std::vector<std::string> resolve(SystemRegistry& registry, std::vector<std::string>* flags = nullptr) const;
  // The limits given on the command line, as flags for a re-run line ("--startup-timeout 3"): a dead
  // adapter's re-run line then waits as long as its run did.
  std::vector<std::string> limit_flags() const;
};

// `--sanitize memcheck|racecheck|initcheck` on a subcommand (adapters/PROTOCOL.md §7).
void add_sanitize_option(CLI::App* app, std::string& tool);
// For `--sanitize TOOL`, before any adapter or plugin is registered: finds compute-sanitizer and a
// usable NVIDIA device (InputError with the reason otherwise) and makes every GPU system of
// `registry` run under TOOL from now on, each process's logs under REPORT_DIR/sanitizer/ (a
// temporary folder when `report_dir` is empty). Built-in GPU systems run as `gnncheck serve-system`,
// the executable in `executable_dir`.
void start_sanitizing(const std::string& tool, const std::string& report_dir, SystemRegistry& registry,
                      const std::filesystem::path& executable_dir);

// The folder the running gnncheck executable is in (where shipped suites are looked up first).
std::filesystem::path executable_dir(const char* argv0);

// Runs the suite, showing progress ("auto": a live line on a terminal, "terminal", "plain").
reports::RunReport run_with_progress(const Suite& suite, const SystemRegistry& registry, const RunOptions& options,
                                     const std::string& progress_mode);
// Writes the report (unless report_dir is empty), prints the final table, returns the exit code.
int finish_run(const reports::RunReport& run, const std::filesystem::path& report_dir);

}  // namespace gnncheck::suites
