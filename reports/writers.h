// gnncheck/reports/writers.h — turn a RunReport into the files a run leaves behind.
//
//   DIR/report.json   machine-readable, versioned (reports/SCHEMA.md, reports/report.schema.json)
//   DIR/junit.xml     one <testsuite> per suite entry's system, one <testcase> per target × check
//   DIR/summary.md    the system × target × check matrix, the replica catch table, each counterexample as text
//   DIR/index.html    one self-contained page: the matrix, margin plots, loss curves, counterexamples drawn (inline SVG)
// The writers are pure functions of the report: the same report gives the same bytes.
//
//   gnncheck::reports::write_all(run, "out");   // creates out/ if needed
//   std::string md = gnncheck::reports::markdown_summary(run);
#pragma once

#include <filesystem>
#include <string>

#include "reports/run_report.h"

namespace gnncheck::reports {

std::string json_report(const RunReport& run);
std::string junit_xml(const RunReport& run);
std::string markdown_summary(const RunReport& run);
std::string html_report(const RunReport& run);

// Writes all four files into `dir` (created when missing). Throws InputError when it cannot write.
void write_all(const RunReport& run, const std::filesystem::path& dir);

// Reads a report.json back (for `gnncheck repro` and the tests). Throws InputError naming the file
// and the field when it is not a report of this schema version.
RunReport read_json_report(const std::filesystem::path& path);

// The cell text of the matrix for one result: "pass", "FAIL", "error", "skip", "caught", "MISSED".
std::string matrix_cell(const ResultRecord& r);

}  // namespace gnncheck::reports
