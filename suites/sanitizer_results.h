// gnncheck/suites/sanitizer_results.h — what compute-sanitizer found, as results of the run
// (`gnncheck run --sanitize TOOL`, adapters/sanitizer.h).
#pragma once

#include <vector>

#include "reports/run_report.h"
#include "suites/runner.h"
#include "suites/system_registry.h"
#include "suites/task.h"

namespace gnncheck::suites {

// Ends each sanitized system's process (the sanitizer writes its summary on exit), reads its logs,
// and adds one result per (entry, system) that ran it — check `sanitize_<tool>`, target "every
// target" — so that the entry's expectation covers what the sanitizer found.
void add_sanitizer_results(const RunContext& run, std::vector<Task>& tasks, std::vector<reports::ResultRecord>& results);

}  // namespace gnncheck::suites
