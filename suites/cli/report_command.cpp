#include "suites/cli/report_command.h"

#include <filesystem>
#include <iostream>

#include "reports/writers.h"
#include "suites/cli/command_support.h"
#include "suites/cli/final_table.h"

namespace gnncheck::suites {

CLI::App* add_report_command(CLI::App& app, ReportCommandArgs& args) {
  CLI::App* report = app.add_subcommand("report", "Rewrite junit.xml, summary.md and index.html of a report directory from its report.json");
  report->add_option("report_dir", args.report_dir, "A directory written by `gnncheck run --report`")->required();
  return report;
}

int run_report_command(const ReportCommandArgs& args) {
  const reports::RunReport saved = reports::read_json_report(std::filesystem::path(args.report_dir) / "report.json");
  reports::write_all(saved, args.report_dir);
  print_final_table(std::cout, saved, args.report_dir);
  return saved.all_expectations_held() ? kExitOk : kExitUnmet;
}

}  // namespace gnncheck::suites
