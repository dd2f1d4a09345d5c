#include "suites/cli/run_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "adapters/interrupt.h"
#include "core/error.h"
#include "oracle/targets.h"
#include "reports/run_report.h"

namespace gnncheck::suites {
namespace {

void register_suite_systems(const Suite& suite, SystemRegistry& registry) {
  for (const auto& d : suite.systems) {
    try {
      if (!d.adapter.empty()) {
        // A suite's adapter starts in the suite file's folder: its relative paths are relative to it,
        // as a plugin's path is.
        registry.add_adapter(d.adapter, d.name, std::filesystem::path(suite.path).parent_path());
      } else if (!d.plugin.empty()) {
        registry.add_plugin(std::filesystem::absolute(d.plugin).lexically_normal().string(), d.name);  // resolved and checked by load_suite
      } else {
        registry.find(d.name);  // a built-in system, listed to mark it required
      }
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: systems: {}", d.location.where(), e.what()));
    }
  }
}

}  // namespace

CLI::App* add_run_command(CLI::App& app, RunCommandArgs& args) {
  // Tasks are independent (each has its own seed and, in process, its own system instance).
  args.jobs = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
  CLI::App* run = app.add_subcommand("run", "Run a suite and write its report (exit 0 when every expectation held)");
  run->add_option("suite", args.suite, "A suite file, or the name of a shipped suite (default, ci, full, gpu, accuracy)")
      ->capture_default_str();
  args.systems.add_to(run);
  run->add_option("--seed", args.seed, "Replace the suite's seed (every random choice derives from it)")->check(kSeedValue);
  run->add_option("--share", args.share,
                  "Run shard PART of OF of the run: every check's cases are cut into chunks of 64, and the chunks (and "
                  "the tasks that draw no cases) are dealt out to the OF shards; `gnncheck report merge` of the OF "
                  "reports gives the whole run's answer");
  run->add_option("--jobs,-j", args.jobs, "Tasks to run in parallel (default: the number of cores, at most 8)")->check(CLI::Range(1, 256))->capture_default_str();
  run->add_option("--time-budget", args.time_budget,
                  "Seconds after which no new task starts, in place of the suite's time_budget_s (0: no limit); give a "
                  "slower system or a loaded machine more")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--report", args.report, "Directory for report.json, junit.xml, summary.md, index.html and cases/ "
                                           "(an empty string writes no report)")
      ->capture_default_str();
  run->add_option("--entry", args.entries, "Run only this entry of the suite; repeatable");
  run->add_option("--target", args.targets, "Run only this target (op or layer) in every entry; repeatable");
  run->add_option("--expect", args.expect,
                  "What the systems named here must do: pass (a correct system), or caught (a planted bug: exit 0 only when "
                  "some check of the run fails on it; an error - a crash, a timeout, an unreadable answer - catches nothing)")
      ->check(CLI::IsMember({"pass", "caught"}))
      ->capture_default_str();
  run->add_option("--progress", args.progress, "Progress display: auto (a live line on a terminal), terminal, plain")
      ->check(CLI::IsMember({"auto", "terminal", "plain"}))
      ->capture_default_str();
  add_sanitize_option(run, args.sanitize);
  return run;
}

int run_run_command(const RunCommandArgs& args, SystemRegistry& registry, const std::filesystem::path& executable_dir) {
  const auto path = resolve_suite(args.suite, executable_dir);
  const Suite suite = load_suite(path);
  for (const auto& target : args.targets) oracle::find_target(target);  // an unknown name is a usage error
  if (args.expect == "caught" && args.systems.empty())
    throw InputError("--expect caught: name the system with the planted bug (--system, --adapter or --plugin)");
  registry.set_process_limits(args.systems.limits(&suite));
  if (!args.sanitize.empty()) start_sanitizing(args.sanitize, args.report, registry, executable_dir);
  register_suite_systems(suite, registry);
  RunOptions options;
  options.seed = args.seed;
  std::optional<CaseShare> share;
  if (args.share) share = parse_case_share(*args.share);  // an empty one is refused, not read as all
  // A test runner's sharding variables (ctest/CI with GoogleTest's, Bazel's) ask for a shard too.
  if (auto from_environment = share_from_environment([](const char* name) { return std::getenv(name); }, share))
    share = from_environment;
  if (share) {
    options.share = *share;
    options.sharded = true;
  }
  options.jobs = args.jobs;
  options.time_budget_seconds = args.time_budget;
  options.report_dir = args.report;
  options.override_systems = args.systems.resolve(registry, &options.override_system_flags);
  options.override_expectation = reports::parse_expectation(args.expect);
  options.only_entries = args.entries;
  options.only_targets = args.targets;
  options.suite_argument = args.suite;
  options.stop_requested = stop_requested;
  // A second interrupt stops at once yet still writes the report of what finished; a third exits.
  options.stop_wake_fd = stop_wake_fd();
  options.stop_now_wake_fd = stop_now_wake_fd();
  options.stop_now = [&args](reports::RunReport now) {
    now.gnncheck_version = GNNCHECK_VERSION;
    std::cout << "\n";
    const int code = finish_run(now, args.report);
    std::cout.flush();
    std::fflush(nullptr);
    _exit(code);  // the tasks in progress are abandoned: their threads are never joined
  };
  defer_second_interrupt(true);
  const auto report = run_with_progress(suite, registry, options, args.progress);
  defer_second_interrupt(false);
  return finish_run(report, args.report);
}

}  // namespace gnncheck::suites
