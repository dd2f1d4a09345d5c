#include "suites/cli/command_support.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "adapters/process_system.h"
#include "adapters/sanitizer.h"
#include "core/error.h"
#include "reports/writers.h"
#include "suites/cli/final_table.h"
#include "suites/cli/progress.h"

namespace gnncheck::suites {

const CLI::Validator kAboveZero(
    [](std::string& text) -> std::string {
      char* end = nullptr;
      const double value = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value) || value <= 0)
        return fmt::format("expected a number above 0, got '{}'", text);
      return {};
    },
    "POSITIVE");

const CLI::Validator kSeedValue(
    [](std::string& text) -> std::string {
      const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
      errno = 0;
      if (digits) static_cast<void>(std::strtoull(text.c_str(), nullptr, 10));
      if (!digits || errno == ERANGE)
        return fmt::format("expected a non-negative integer below 2^64, got '{}'", text);
      return {};
    },
    "SEED");

void SystemFlags::add_to(CLI::App* app) {
  app->add_option("--system", names, "A system to test by name (see `gnncheck list systems`); repeatable");
  app->add_option("--adapter", adapters, "An external adapter command to test (adapters/PROTOCOL.md); repeatable");
  app->add_option("--plugin", plugins, "A C plugin library (.so, gnncheck/plugin.h) to test; repeatable");
  app->add_option("--case-timeout", case_timeout_s, "Seconds an adapter or plugin may take for one case (default 60)")
      ->check(kAboveZero);
  app->add_option("--startup-timeout", startup_timeout_s,
                  "Seconds an adapter or plugin may take to start and say hello (default 120; not charged to any time budget)")
      ->check(kAboveZero);
}

ProcessLimits SystemFlags::limits(const Suite* suite) const {
  ProcessLimits l;
  if (suite) {
    l.case_timeout_s = suite->case_timeout_seconds;
    l.startup_timeout_s = suite->startup_timeout_seconds;
  }
  if (case_timeout_s) l.case_timeout_s = case_timeout_s;
  if (startup_timeout_s) l.startup_timeout_s = startup_timeout_s;
  return l;
}

std::vector<std::string> SystemFlags::resolve(SystemRegistry& registry, std::vector<std::string>* flags) const {
  std::vector<std::string> out;
  for (const auto& n : names) out.push_back(registry.find(n).name);
  for (const auto& a : adapters) {
    if (auto problem = adapter_command_problem(a)) throw InputError(fmt::format("--adapter {}: {}", a, *problem));
    out.push_back(registry.add_adapter(a));
  }
  for (const auto& p : plugins) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(p, ec)) throw InputError(fmt::format("--plugin {}: no such file", p));
    out.push_back(registry.add_plugin(std::filesystem::absolute(p).lexically_normal().string()));
  }
  if (flags) {
    for (const auto& name : out) flags->push_back(registry.find(name).command_line_flag);
    if (!adapters.empty() || !plugins.empty())
      for (const auto& f : limit_flags()) flags->push_back(f);
  }
  return out;
}

std::vector<std::string> SystemFlags::limit_flags() const { return suites::limit_flags(limits()); }

void add_sanitize_option(CLI::App* app, std::string& tool) {
  app->add_option("--sanitize", tool,
                  "Run every GPU system under NVIDIA compute-sanitizer with this tool and fail on its findings in the "
                  "systems' own kernels (adapters/PROTOCOL.md §7)")
      ->check(CLI::IsMember({"memcheck", "racecheck", "initcheck"}));
}

void start_sanitizing(const std::string& tool, const std::string& report_dir, SystemRegistry& registry,
                      const std::filesystem::path& executable_dir) {
  const auto program = sanitizer::find_program();
  sanitizer::require_device();
  const auto log_root = std::filesystem::absolute(report_dir.empty()
                                                      ? std::filesystem::temp_directory_path() / "gnncheck-sanitizer"
                                                      : std::filesystem::path(report_dir) / "sanitizer");
  registry.sanitize({tool, program, log_root, executable_dir / "gnncheck"});
}

std::filesystem::path executable_dir(const char* argv0) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) self = std::filesystem::absolute(argv0);
  return self.parent_path();
}

reports::RunReport run_with_progress(const Suite& suite, const SystemRegistry& registry, const RunOptions& options,
                                     const std::string& progress_mode) {
  const bool interactive = progress_mode == "terminal" || (progress_mode == "auto" && isatty(STDOUT_FILENO));
  auto progress = make_progress(std::cout, interactive);
  reports::RunReport run = run_suite(suite, registry, options, progress.get());
  progress.reset();  // clears the status line before the table
  run.gnncheck_version = GNNCHECK_VERSION;
  return run;
}

int finish_run(const reports::RunReport& run, const std::filesystem::path& report_dir) {
  if (!report_dir.empty()) reports::write_all(run, report_dir);
  print_final_table(std::cout, run, report_dir);
  if (run.interrupted_by == "SIGINT") return kExitInterrupted;
  if (run.interrupted_by == "SIGTERM") return kExitTerminated;
  return run.all_expectations_held() ? kExitOk : kExitUnmet;
}

}  // namespace gnncheck::suites
