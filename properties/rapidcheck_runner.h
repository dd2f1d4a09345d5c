// gnncheck/properties/rapidcheck_runner.h — one property run through RapidCheck, with a given seed,
// case count and size, optionally replaying a `reproduce=` string; the one place that uses
// RapidCheck's internal API (rc::detail), so a RapidCheck upgrade touches this file only
// (rapidcheck_runner_test pins the behaviour it relies on).
//
//   RapidcheckRun r = run_rapidcheck([&] { RC_ASSERT(*gen::inRange(0, 10) < 10); }, "my property", {.seed = 7});
//   if (r.outcome == RapidcheckOutcome::failure) fmt::print("{} shrinks; RC_PARAMS=\"reproduce={}\"", r.shrinks, r.reproduce);
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace gnncheck::properties {

struct RapidcheckParams {
  std::uint64_t seed = 0;
  int max_success = 100;  // cases that must pass
  int max_size = 100;
  std::string reproduce;  // a `reproduce=` string of an earlier failure: replay exactly that case
};

enum class RapidcheckOutcome { success, failure, gave_up, error };

struct RapidcheckRun {
  RapidcheckOutcome outcome = RapidcheckOutcome::error;
  int num_success = 0;      // cases that passed (before the failure, for a failure)
  int shrinks = 0;          // accepted shrinking steps of a failure
  std::string reproduce;    // for a failure: the string RC_PARAMS="reproduce=…" replays
  std::string description;  // RapidCheck's own words (a failure's message, why it gave up, the error)
};

// Runs `property` (a body using RapidCheck's generators, RC_ASSERT and RC_DISCARD) under the id `id`.
RapidcheckRun run_rapidcheck(const std::function<void()>& property, const std::string& id, const RapidcheckParams& params);

}  // namespace gnncheck::properties
