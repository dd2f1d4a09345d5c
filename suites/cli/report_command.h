// gnncheck/suites/cli/report_command.h — `gnncheck report`: rewrite junit.xml, summary.md and
// index.html of a report directory from its report.json; `gnncheck report merge`: the reports of the
// shards of one run (`gnncheck run --share P/K`) merged into the whole run's (suites/run_merge.h).
//
//   gnncheck report gnncheck-report
//   gnncheck report merge out/shard-1 out/shard-2 out/shard-3 --output out/merged
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace gnncheck::suites {

struct ReportCommandArgs {
  std::string report_dir;
  std::vector<std::string> shard_dirs;  // report merge DIR…
  std::string output;                   // report merge --output DIR
  CLI::App* merge = nullptr;
};

CLI::App* add_report_command(CLI::App& app, ReportCommandArgs& args);
// Exit 0 when every expectation of the saved (or merged) run held, 1 otherwise; 2 for shards that
// are not parts of one run.
int run_report_command(const ReportCommandArgs& args);

}  // namespace gnncheck::suites
