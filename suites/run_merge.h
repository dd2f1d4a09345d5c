// gnncheck/suites/run_merge.h — what a whole run and the merge of its shards decide the same way:
// the expectations that depend on more than one result (a replica caught by some check of its entry,
// a system named on the command line that concluded nothing), and `gnncheck report merge`, which
// combines the reports of the shards of one run (`gnncheck run --share P/K`) into the whole run's.
//
//   std::vector<ShardReport> shards = {{"out/1", read_json_report("out/1/report.json")}, …};
//   reports::RunReport whole = merge_shard_reports(shards, "out/merged");  // also copies cases/
//   reports::write_all(whole, "out/merged");
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "reports/run_report.h"

namespace gnncheck::suites {

// Decides, over every result of a run, what no single result can: a result that expects `caught` is
// held when some check of its entry (of the run, for a system named on the command line: overridden
// true) failed on the replica; a system named on the command line (override_systems) that concluded
// nothing anywhere is `not tested`. `overridden[i]` belongs to results[i].
void settle_expectations(std::vector<reports::ResultRecord>& results, const std::vector<bool>& overridden,
                         const std::vector<std::string>& override_systems);

// What a shard decides alone: whether a replica was caught, and whether a named system concluded
// anything, are left to the merge (results that expect `caught` hold here unless decided already).
void settle_shard_expectations(std::vector<reports::ResultRecord>& results);

// One shard's report and the directory it was read from.
struct ShardReport {
  std::filesystem::path dir;
  reports::RunReport run;
};

// The whole run's report from the reports of its shards: every task of the plan once, its chunks
// combined as the whole run combines them (combine_chunks), counterexamples copied under
// `output`/cases/. Throws InputError, naming the reports, for shards of different suites, seeds,
// gnncheck versions, plans or shard counts, a shard given twice, or a report that is not a shard.
// A task whose needed units belong to a shard not given is `not tested`, naming the missing shards.
reports::RunReport merge_shard_reports(const std::vector<ShardReport>& shards, const std::filesystem::path& output);

}  // namespace gnncheck::suites
