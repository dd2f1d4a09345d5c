// gnncheck/suites/failure_record.h — the record of a check task's failing case: its diagnosis (the
// target's known-wrong variants and its replicas), where it is saved with its system.json, and the
// one command that re-runs it.
//
//   record_failure(task, failure, system, run, record);
#pragma once

#include "checks/checks.h"
#include "core/system.h"
#include "properties/case_loop.h"
#include "reports/run_report.h"
#include "suites/task.h"

namespace gnncheck::suites {

// Fills `r` from the first decided failure of a task: outcome, measurements, diagnosis, message,
// counterexample and re-run line. A case that passes on a fresh instance of the system failed only
// because of what the system had evaluated before (a stateful bug): the saved case alone would not
// reproduce it, so the re-run line is then the whole run's sequence.
void record_failure(const Task& t, const properties::CaseFailure& failure, System& sys, const RunContext& run,
                    reports::ResultRecord& r);

// A verdict's measurements (metric, bound, tolerance model) on the record.
void fill_from_verdict(reports::ResultRecord& r, const checks::Verdict& v);

}  // namespace gnncheck::suites
