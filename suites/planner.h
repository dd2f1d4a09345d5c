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

}  // namespace gnncheck::suites
