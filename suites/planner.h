// gnncheck/suites/planner.h — a suite and a run's options become the run's tasks (suites/task.h):
// one per (entry, system, target, check) the run asks for, each with its own seed (task_seed), the
// attribute values it draws from (the entry's pins within what the system declares) and, where
// nothing needs to run (a system that is not available, a target it does not support, a check that
// can say nothing about it), its result decided already.
//
//   std::vector<Task> tasks = plan_tasks(suite, registry, options, seed);
#pragma once

#include <cstdint>
#include <vector>

#include "suites/runner.h"
#include "suites/system_registry.h"
#include "suites/task.h"

namespace gnncheck::suites {

// Throws InputError, naming the entry's file:line, for a suite that names an unknown system, target,
// attribute value or check, or asks a check for what it cannot run, before anything runs.
std::vector<Task> plan_tasks(const Suite& suite, const SystemRegistry& systems, const RunOptions& options, std::uint64_t seed);

// The units of the plan this run runs (RunOptions::share): each chunk of a check task's cases, and
// each task that draws none; unit u falls to part u mod OF + 1. Tasks with no unit here drop out; a
// shard's report (`run`) records the whole plan, so that the shards' reports merge into the run's.
std::vector<Task> units_of_this_run(std::vector<Task> tasks, const RunOptions& options, reports::RunReport& run);

// The seed of one task: a hash of the suite seed, the entry, the target and the check (stable across
// releases). The system is deliberately not part of it: every system of an entry is given the same
// cases, so a verdict never depends on the name a system is registered under.
std::uint64_t task_seed(std::uint64_t suite_seed, const std::string& entry, const std::string& target, const std::string& check);

// The seed of chunk `chunk` of a task's cases: the task seed itself for chunk 0 (so a task of at most
// kCasesPerChunk cases draws what it drew before chunks existed), a hash of both after.
std::uint64_t chunk_seed(std::uint64_t task_seed, std::int64_t chunk);

// The ctest labels of an entry: its own `labels`, plus e2e, and cpu or gpu by its systems (gpu when
// every one is a built-in GPU system of `systems`, SystemEntry::runs_on_gpu: an entry that also
// checks a CPU system means something on a machine without a device), dataset when it reads
// ../shared/datasets, slow for the accuracy check.
std::vector<std::string> entry_labels(const Suite& suite, const Entry& entry, const SystemRegistry& systems);

}  // namespace gnncheck::suites
