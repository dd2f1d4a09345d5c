#include "suites/cli/report_command.h"

#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "core/error.h"
#include "reports/writers.h"
#include "suites/cli/command_support.h"
#include "suites/cli/final_table.h"
#include "suites/run_merge.h"

namespace gnncheck::suites {

CLI::App* add_report_command(CLI::App& app, ReportCommandArgs& args) {
  CLI::App* report = app.add_subcommand("report", "Rewrite junit.xml, summary.md and index.html of a report directory from its "
                                                  "report.json, or merge the reports of a run's shards (report merge)");
  report->add_option("report_dir", args.report_dir, "A directory written by `gnncheck run --report`");
  report->require_subcommand(0, 1);
  args.merge = report->add_subcommand(
      "merge", "Merge the reports of the shards of one run (gnncheck run --share P/K) into the whole run's report.json, "
               "junit.xml, summary.md and index.html; a shard not given leaves the tasks it held `not tested`");
  args.merge->add_option("shard_dirs", args.shard_dirs, "The shards' report directories")->required();
  args.merge->add_option("--output,-o", args.output, "Directory for the merged report (created)")->required();
  return report;
}

int run_report_command(const ReportCommandArgs& args) {
  if (args.merge && args.merge->parsed()) {
    std::vector<ShardReport> shards;
    for (const auto& dir : args.shard_dirs) shards.push_back({dir, reports::read_json_report(std::filesystem::path(dir) / "report.json")});
    std::filesystem::create_directories(args.output);
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(args.output) / "cases", ec);
    const reports::RunReport merged = merge_shard_reports(shards, args.output);
    reports::write_all(merged, args.output);
    print_final_table(std::cout, merged, args.output);
    return merged.all_expectations_held() ? kExitOk : kExitUnmet;
  }
  if (args.report_dir.empty()) throw InputError("report: give a report directory, or `report merge DIR… --output DIR`");
  const reports::RunReport saved = reports::read_json_report(std::filesystem::path(args.report_dir) / "report.json");
  reports::write_all(saved, args.report_dir);
  print_final_table(std::cout, saved, args.report_dir);
  return saved.all_expectations_held() ? kExitOk : kExitUnmet;
}

}  // namespace gnncheck::suites
