// gnncheck — the command line tool: run suites, list what can run here, check one target ad hoc,
// re-run a saved counterexample, verify the oracle itself. Each subcommand is one file of this
// folder (<name>_command.h/.cpp: its flags and what it does); this file only dispatches.
//
// Exit codes: 0 every expectation held; 1 some expectation did not hold; 2 usage or input error
// (a bad flag, an unreadable or invalid suite, an unknown system or target); 3 internal error.
#include <exception>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "adapters/interrupt.h"
#include "adapters/process_system.h"
#include "adapters/sanitizer.h"
#include "adapters/system_server.h"
#include "checks/checks.h"
#include "core/error.h"
#include "platform/process_heap.h"
#include "oracle/selfcheck.h"
#include "oracle/targets.h"
#include "properties/counterexample.h"
#include "reports/writers.h"
#include "suites/cli/check_command.h"
#include "suites/cli/command_support.h"
#include "suites/cli/entries_command.h"
#include "suites/cli/final_table.h"
#include "suites/cli/list_command.h"
#include "suites/cli/report_command.h"
#include "suites/cli/repro_command.h"
#include "suites/cli/run_command.h"
#include "suites/cli/scale_command.h"
#include "suites/cli/selfcheck_command.h"
#include "suites/cli/skeleton_command.h"
#include "suites/runner.h"
#include "suites/suite.h"
#include "suites/system_registry.h"

int main(int argc, char** argv) {
  using namespace gnncheck;
  using namespace gnncheck::suites;
  install_interrupt_handlers();  // SIGINT/SIGTERM kill every adapter process group (adapters/interrupt.h)
  retain_freed_memory_in_process();  // many evaluations of large tensors (platform/process_heap.h)
  CLI::App app{"gnncheck " GNNCHECK_VERSION
               " — correctness suite for GNN sparse kernels and layers.\n"
               "Exit codes: 0 every expectation held; 1 some did not (a failure, an error, or something not tested);\n"
               "2 usage or input error; 3 internal error; 130/143 interrupted by SIGINT/SIGTERM (report written so far)."};
  app.set_version_flag("--version", std::string("gnncheck ") + GNNCHECK_VERSION);
  app.require_subcommand(1);

  RunCommandArgs run_args;
  CLI::App* run = add_run_command(app, run_args);
  ListCommandArgs list_args;
  CLI::App* list = add_list_command(app, list_args);
  CheckCommandArgs check_args;
  CLI::App* check = add_check_command(app, check_args);
  ReproCommandArgs repro_args;
  CLI::App* repro = add_repro_command(app, repro_args);
  SelfcheckCommandArgs selfcheck_args;
  CLI::App* selfcheck = add_selfcheck_command(app, selfcheck_args);
  EntriesCommandArgs entries_args;
  CLI::App* entries = add_entries_command(app, entries_args);
  ReportCommandArgs report_args;
  CLI::App* report = add_report_command(app, report_args);
  ScaleCommandArgs scale_args;
  CLI::App* scale = add_scale_command(app, scale_args);
  SkeletonCommandArgs skeleton_args;
  CLI::App* skeleton = add_skeleton_command(app, skeleton_args);
  // gnncheck serve-system NAME (not listed): a built-in system served over the adapter protocol, the
  // process `--sanitize` starts under compute-sanitizer.
  std::string serve_name;
  CLI::App* serve = app.add_subcommand("serve-system", "Serve a built-in system over the adapter protocol (used by --sanitize)");
  serve->group("");
  serve->add_option("name", serve_name, "The built-in system")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }

  try {
    auto registry = SystemRegistry::with_builtins();
    if (scale->parsed()) return run_scale_command(scale_args, registry);
    if (skeleton->parsed()) return run_skeleton_command(skeleton_args, executable_dir(argv[0]));
    if (serve->parsed()) {
      const auto& entry = registry.find(serve_name);
      if (!entry.make || entry.instance) throw InputError(fmt::format("serve-system {}: not a built-in system", serve_name));
      auto system = entry.make();
      return serve_system(*system, serve_name);
    }
    if (list->parsed()) return run_list_command(list_args, registry);
    if (entries->parsed()) return run_entries_command(entries_args, executable_dir(argv[0]));
    if (report->parsed()) return run_report_command(report_args);
    if (selfcheck->parsed()) return run_selfcheck_command(selfcheck_args);
    if (run->parsed()) return run_run_command(run_args, registry, executable_dir(argv[0]));
    if (check->parsed()) return run_check_command(check_args, registry, executable_dir(argv[0]));
    if (repro->parsed()) return run_repro_command(repro_args, registry);
  } catch (const InputError& e) {
    std::cerr << "gnncheck: error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "gnncheck: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
  return kExitOk;
}
