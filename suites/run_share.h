// gnncheck/suites/run_share.h — which shard of a run this process runs: `gnncheck run --share PART/OF`,
// or the shard a test runner asks for through its environment (GoogleTest, Bazel).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "reports/run_report.h"

namespace gnncheck::suites {

// One of `of` shards of a run (`gnncheck run --share PART/OF`): the run's units — each chunk of a
// check task's cases, and each task that draws none — are numbered in plan order, and part p runs
// those whose number is p − 1 mod `of`. The shards' reports merged (`gnncheck report merge`) are the
// whole run's report. The same struct the report records (reports::RunShare).
using CaseShare = reports::RunShare;

// "P/OF" as given on the command line (1 <= P <= OF); throws InputError naming what was expected.
CaseShare parse_case_share(const std::string& text);

// The shard the environment asks for, in the protocols test runners speak: GoogleTest's
// GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX and Bazel's TEST_TOTAL_SHARDS / TEST_SHARD_INDEX (0-based
// index: index i of N is --share i+1/N); nullopt when neither is set. Touches the file named by
// TEST_SHARD_STATUS_FILE, which tells Bazel the test honours sharding. Throws InputError, naming the
// variables, for half a pair, values that are not 0 <= index < total, or pairs (or `given`, an
// explicit --share) that disagree. `lookup` is getenv or a stand-in.
std::optional<CaseShare> share_from_environment(const std::function<const char*(const char*)>& lookup,
                                                const std::optional<CaseShare>& given);

}  // namespace gnncheck::suites
