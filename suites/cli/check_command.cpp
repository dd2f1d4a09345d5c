#include "suites/cli/check_command.h"

#include <fmt/format.h>

#include "adapters/interrupt.h"
#include "checks/checks.h"
#include "core/error.h"

namespace gnncheck::suites {

CLI::App* add_check_command(CLI::App& app, CheckCommandArgs& args) {
  CLI::App* check = app.add_subcommand("check", "Check one target of one system ad hoc (all checks unless --check)");
  args.systems.add_to(check);
  check->add_option("--target", args.target, "The op or layer to check (see `gnncheck list targets`)")->required();
  check->add_option("--check", args.checks, "A check to run (see `gnncheck list checks`); repeatable; default: all but selfcheck");
  check->add_option("--graphs", args.graphs, "A built-in graph family (see `gnncheck list graphs`)")->capture_default_str();
  check->add_option("--cases", args.cases, "Cases per check")->check(kAboveZero)->capture_default_str();
  check->add_option("--seed", args.seed, "Seed of the cases")->check(kSeedValue)->capture_default_str();
  check->add_option("--report", args.report, "Also write a report (and failing cases) to this directory");
  add_sanitize_option(check, args.sanitize);
  return check;
}

namespace {

// Under --sanitize every system named must be able to run GPU kernels: a built-in GPU system, an
// adapter or a plugin (their processes run under the sanitizer whatever they do). A CPU built-in
// would be checked without the sanitizer ever seeing it.
void require_gpu_systems(const CheckCommandArgs& args, const SystemRegistry& registry) {
  for (const std::string& name : args.systems.names) {
    const SystemEntry& e = registry.find(name);
    if (!e.runs_on_gpu)
      throw InputError(fmt::format("--sanitize {}: system '{}' ({}) runs no GPU kernels, so compute-sanitizer has "
                                   "nothing to check; name a GPU system (`gnncheck list systems`: gpu, cusparse, the "
                                   "gpu-replica-* systems), an --adapter or a --plugin",
                                   args.sanitize, e.name, system_kind_name(e.kind)));
  }
}

}  // namespace

int run_check_command(const CheckCommandArgs& args, SystemRegistry& registry, const std::filesystem::path& executable_dir) {
  if (args.systems.empty()) throw InputError("gnncheck check: name the system with --system, --adapter or --plugin");
  registry.set_process_limits(args.systems.limits());
  if (!args.sanitize.empty()) {
    require_gpu_systems(args, registry);
    start_sanitizing(args.sanitize, args.report, registry, executable_dir);  // before adapters and plugins start
  }
  Suite suite;
  suite.name = "check";
  suite.path = "(command line)";
  suite.seed = args.seed;
  suite.graphs = builtin_graph_families();
  if (!suite.graphs.count(args.graphs))
    throw InputError(fmt::format("--graphs {}: not a built-in graph family (see `gnncheck list graphs`)", args.graphs));
  Entry entry;
  entry.name = "check";
  RunOptions options;
  entry.systems = args.systems.resolve(registry, &options.override_system_flags);
  options.override_systems = entry.systems;
  entry.targets = {{args.target, {}, {"command line", 0}}};
  entry.checks = args.checks;
  if (entry.checks.empty())
    for (auto kind : checks::all_check_kinds()) entry.checks.emplace_back(checks::to_string(kind));
  entry.graphs = args.graphs;
  entry.cases = args.cases;
  entry.location = {"command line", 0};
  suite.entries.push_back(entry);
  options.report_dir = args.report;
  options.suite_argument = "check";
  options.stop_requested = stop_requested;
  // An ad-hoc check has no suite file to re-run: its lines repeat this command for the one system.
  // A saved case keeps `gnncheck repro DIR`; the run's whole sequence and the sanitizer's result
  // (which covers every check) repeat every check this command ran.
  options.rerun = [&args, &registry](const RerunScope& scope) -> std::string {
    if (!scope.counterexample.empty() && !scope.whole_run) return {};
    const SystemEntry& system = registry.find(scope.system);
    std::string line = "gnncheck check " + system.command_line_flag;
    if (runs_as_process(system.kind))
      for (const auto& f : args.systems.limit_flags()) line += " " + f;
    line += " --target " + args.target;
    if (scope.whole_run || !scope.sanitizer.empty()) {
      for (const std::string& c : args.checks) line += " --check " + c;
    } else {
      line += " --check " + scope.check;
    }
    line += fmt::format(" --graphs {} --cases {} --seed {}", args.graphs, args.cases, args.seed);
    if (!scope.sanitizer.empty()) line += " --sanitize " + scope.sanitizer;
    return line;
  };
  auto report = run_with_progress(suite, registry, options, "auto");
  return finish_run(report, args.report);
}

}  // namespace gnncheck::suites
