// What run_rapidcheck relies on in RapidCheck's internal API (rc::detail), pinned for the version
// this tree builds against (Debian's librapidcheck 0~1033-08b5058): a failure is shrunk to its
// minimal case and its shrink path counted; its reproduce string replays the failure along that path;
// the same seed gives the same run; a property that discards everything gives up; success counts
// every case. A RapidCheck whose internals changed fails here, not somewhere in the property driver.
#include "properties/rapidcheck_runner.h"

#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>

namespace gnncheck::properties {
namespace {

TEST(RapidcheckRunner, FailureIsShrunkAndReproducible) {
  std::vector<int> seen;
  auto property = [&] {
    const int x = *rc::gen::inRange(0, 1000);
    seen.push_back(x);
    RC_ASSERT(x < 10);
  };
  const RapidcheckRun run = run_rapidcheck(property, "x < 10", {.seed = 3, .max_success = 200});
  ASSERT_EQ(run.outcome, RapidcheckOutcome::failure) << run.description;
  EXPECT_GT(run.shrinks, 0);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), 10) << "RapidCheck evaluates the minimal counterexample last";
  ASSERT_FALSE(run.reproduce.empty());

  seen.clear();
  const RapidcheckRun replay = run_rapidcheck(property, "x < 10", {.seed = 3, .max_success = 200, .reproduce = run.reproduce});
  ASSERT_EQ(replay.outcome, RapidcheckOutcome::failure);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), 10) << "the reproduce string replays the failure down to the minimal case";
  EXPECT_LT(seen.size(), 3u + static_cast<size_t>(run.shrinks)) << "a replay follows the shrink path, no search";

  seen.clear();
  const RapidcheckRun again = run_rapidcheck(property, "x < 10", {.seed = 3, .max_success = 200});
  EXPECT_EQ(again.reproduce, run.reproduce) << "the same seed gives the same run";
  EXPECT_EQ(again.num_success, run.num_success);
}

TEST(RapidcheckRunner, SuccessCountsEveryCase) {
  const RapidcheckRun run = run_rapidcheck([] { RC_ASSERT(*rc::gen::inRange(0, 10) < 10); }, "in range", {.seed = 1, .max_success = 37});
  EXPECT_EQ(run.outcome, RapidcheckOutcome::success);
  EXPECT_EQ(run.num_success, 37);
}

TEST(RapidcheckRunner, DiscardingEverythingGivesUp) {
  const RapidcheckRun run = run_rapidcheck([] { RC_DISCARD("never applicable"); }, "discards", {.seed = 1, .max_success = 20});
  EXPECT_EQ(run.outcome, RapidcheckOutcome::gave_up);
  EXPECT_EQ(run.num_success, 0);
}

}  // namespace
}  // namespace gnncheck::properties
