// gnncheck/suites/cli/final_table.h — the table `gnncheck run` ends with.
//
// One block per system: targets down, checks across, each cell pass / FAIL / ERROR / skip (for a
// bug replica: caught / ·). Then the replica catch table, every unmet expectation with its message
// and re-run command, the totals, and where the report was written.
//
//   gnncheck::suites::print_final_table(std::cout, run, "gnncheck-report");
#pragma once

#include <filesystem>
#include <ostream>

#include "reports/run_report.h"

namespace gnncheck::suites {

void print_final_table(std::ostream& out, const reports::RunReport& run, const std::filesystem::path& report_dir);

}  // namespace gnncheck::suites
