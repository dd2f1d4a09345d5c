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
  check->add_option("--cases", args.cases, "Cases per check")->check(CLI::PositiveNumber)->capture_default_str();
  check->add_option("--seed", args.seed, "Seed of the cases")->capture_default_str();
  check->add_option("--report", args.report, "Also write a report (and failing cases) to this directory");
  return check;
}

int run_check_command(const CheckCommandArgs& args, SystemRegistry& registry) {
  if (args.systems.empty()) throw InputError("gnncheck check: name the system with --system, --adapter or --plugin");
  registry.set_process_limits(args.systems.limits());
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
  auto report = run_with_progress(suite, registry, options, "auto");
  // An ad-hoc check has no suite file to re-run; point at the same command instead.
  for (auto& r : report.results)
    if (r.counterexample.empty())
      r.repro = fmt::format("gnncheck check {} --target {} --check {} --graphs {} --cases {} --seed {}",
                            registry.find(r.system).command_line_flag, r.target, r.check, args.graphs, args.cases,
                            args.seed);
  return finish_run(report, args.report);
}

}  // namespace gnncheck::suites
