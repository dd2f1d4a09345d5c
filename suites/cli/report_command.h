// gnncheck/suites/cli/report_command.h — `gnncheck report`: rewrite junit.xml, summary.md and
// index.html of a report directory from its report.json.
//
//   gnncheck report gnncheck-report
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace gnncheck::suites {

struct ReportCommandArgs {
  std::string report_dir;
};

CLI::App* add_report_command(CLI::App& app, ReportCommandArgs& args);
// Exit 0 when every expectation of the saved run held, 1 otherwise.
int run_report_command(const ReportCommandArgs& args);

}  // namespace gnncheck::suites
