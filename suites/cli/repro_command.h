// gnncheck/suites/cli/repro_command.h — `gnncheck repro`: re-run one saved counterexample.
//
//   gnncheck repro gnncheck-report/cases/<name>            # on the system it was recorded for
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "suites/cli/command_support.h"
#include "suites/system_registry.h"

namespace gnncheck::suites {

struct ReproCommandArgs {
  std::string case_dir;
  SystemFlags systems;  // none: the system recorded with the case
};

CLI::App* add_repro_command(CLI::App& app, ReproCommandArgs& args);
// Exit 0 when the case passes now, 1 when it still fails or reaches no verdict (said apart); throws
// InputError for bad arguments.
int run_repro_command(const ReproCommandArgs& args, SystemRegistry& registry);

}  // namespace gnncheck::suites
