// The case loop's contract (properties/case_loop.h), on fake sources and a fake check: every drawn
// case is counted by what it came to, drawing ends a bounded look-ahead after the first decided
// failure and the clearest failure leads, a source's
// shrinking attempts are checked but not counted, a stop ends the loop with no failure, and a tally
// with no failure maps onto one conclusion.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>
#include <vector>

#include "core/graph.h"
#include "oracle/cpu_systems.h"
#include "oracle/random_case.h"
#include "properties/case_loop.h"
#include "properties/driver.h"

namespace gnncheck::properties {
namespace {

using checks::Conclusion;

// Case i: an spmm case on one edge with seed i (the fake check reads only the seed).
Case case_with_seed(std::uint64_t seed) {
  const std::vector<index_t> one = {0};
  auto graph = std::make_shared<const Graph>(Graph::from_edges(1, 1, one, one));
  return oracle::make_random_case(oracle::find_target("spmm"), graph, {}, seed);
}

// Yields cases 1..n; after `failed`, tries the candidates `shrinks` (through recheck) and hands
// back the last one that still failed.
class FakeSource final : public CaseSource {
 public:
  explicit FakeSource(int n, std::vector<std::uint64_t> shrinks = {}) : n_(n), shrinks_(std::move(shrinks)) {}

  std::optional<CaseFailure> draw(CaseJudge& judge) override {
    for (int i = 1; i <= n_; ++i) {
      const Case c = case_with_seed(static_cast<std::uint64_t>(i));
      ++drawn;
      checks::Verdict v;
      const CaseAnswer answer = judge.judge(c, v);
      if (answer == CaseAnswer::stop || answer == CaseAnswer::failed_earlier) return std::nullopt;
      if (answer == CaseAnswer::go_on) continue;
      CaseFailure failure{.c = c, .verdict = v, .how_found = "", .provenance = {}};
      for (std::uint64_t seed : shrinks_) {
        const Case smaller = case_with_seed(seed);
        const std::optional<checks::Verdict> again = judge.recheck(smaller);
        if (again && is_decided_failure(*again)) failure = {.c = smaller, .verdict = *again, .how_found = "shrunk", .provenance = {}};
      }
      return failure;
    }
    return std::nullopt;
  }

  int drawn = 0;

 private:
  int n_;
  std::vector<std::uint64_t> shrinks_;
};

// A check whose verdict is planted per case seed: fail at `failing` seeds, `kinds` for others, pass otherwise.
struct PlantedCheck {
  std::vector<std::uint64_t> failing;
  std::map<std::uint64_t, Conclusion> kinds;
  std::map<std::uint64_t, double> metrics;  // by seed; 0.5 otherwise
  int calls = 0;

  checks::Verdict operator()(const Case& c) {
    ++calls;
    checks::Verdict v;
    v.target = c.target;
    v.seed = c.seed;
    v.conclusion = Conclusion::pass;
    v.metric = 0.5;
    v.bound = 1.0;
    v.tolerance_model = "planted";
    if (kinds.count(c.seed)) {
      v.conclusion = kinds.at(c.seed);
      v.detail = "planted " + std::string(checks::to_string(v.conclusion)) + " at " + std::to_string(c.seed);
    }
    if (std::find(failing.begin(), failing.end(), c.seed) != failing.end()) v.conclusion = Conclusion::fail;
    if (metrics.count(c.seed)) v.metric = metrics.at(c.seed);
    return v;
  }
};

TEST(CaseLoop, PlantedFailureAtCaseKEndsTheDrawingAfterTheLookAheadAndIsCountedOnce) {
  for (int k : {1, 4, 10}) {
    FakeSource source(20);
    PlantedCheck check{.failing = {static_cast<std::uint64_t>(k)}, .kinds = {}};
    int counted = 0;
    const CaseLoopResult out = run_case_loop(
        source, {.check = std::ref(check), .stopping = {}, .on_counted = [&](const checks::Verdict&) { ++counted; }});
    EXPECT_EQ(source.drawn, k + 8) << "8 cases are drawn after the first failure, no more";
    EXPECT_EQ(out.tally.drawn, k + 8);
    EXPECT_EQ(out.tally.conclusive, k + 8) << "the failing case is conclusive";
    EXPECT_EQ(counted, k - 1 + 8) << "on_counted sees the cases that did not fail";
    ASSERT_TRUE(out.failure);
    EXPECT_EQ(out.failure->c.seed, static_cast<std::uint64_t>(k));
    EXPECT_EQ(out.failure->verdict.conclusion, Conclusion::fail);
    EXPECT_FALSE(out.stopped);
    EXPECT_TRUE(out.source_error.empty());
  }
}

TEST(CaseLoop, ShrinkingAttemptsAreCheckedButNotCounted) {
  FakeSource source(10, /*shrinks=*/{100, 101, 102});
  PlantedCheck check{.failing = {3, 100, 102}, .kinds = {}};
  const CaseLoopResult out =
      run_case_loop(source, {.check = std::ref(check), .stopping = {}, .on_counted = {}, .look_ahead = 0});
  EXPECT_EQ(check.calls, 3 + 3);
  EXPECT_EQ(out.tally.drawn, 3);
  EXPECT_EQ(out.tally.conclusive, 3);
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->c.seed, 102u) << "the source's smallest failing case";
  EXPECT_EQ(out.failure->how_found, "shrunk");
}

// A bug found at 2.65× its bound on one case and at 10⁴× on another led with the first. The loop
// checks a bounded number of cases after the first failure and leads with the largest error/bound.
TEST(CaseLoop, TheClearestFailureLeadsNotTheFirst) {
  FakeSource source(30);
  PlantedCheck check{.failing = {3, 6, 9}, .kinds = {}, .metrics = {{3, 2.65}, {6, 1e4}, {9, 40.0}}};
  const CaseLoopResult out = run_case_loop(source, {.check = std::ref(check), .stopping = {}, .on_counted = {}});
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->c.seed, 6u);
  EXPECT_EQ(out.failure->verdict.metric, 1e4);
  EXPECT_EQ(source.drawn, 3 + 8) << "the look-ahead is bounded";
  EXPECT_EQ(out.failure->how_found, "Led by the clearest of 3 failing cases: case 6 at 1e+04× its bound; the first "
                                    "failure, case 3, was at 2.65× (the 8 cases drawn after it were checked too).");
}

// The same on the random family, which shrinks: the drawing is replayed up to the clearest case,
// which is checked again and shrunk, not the first failure.
TEST(CaseLoop, TheRandomFamilyShrinksTheClearestFailure) {
  PropertyOptions options;
  options.cases = 40;
  options.seed = 11;
  RandomCaseSource source("clearest spmm", "spmm", options);
  std::vector<double> metrics;  // of every check, drawn cases first
  std::vector<bool> failed;
  const CaseLoopResult out = run_case_loop(
      source, {.check =
                   [&](const Case& c) {
                     checks::Verdict v;
                     v.target = c.target;
                     v.bound = 1.0;
                     v.metric = 1.0 + static_cast<double>(c.seed % 997);  // how clear: varies from case to case
                     v.conclusion = c.graph->num_edges() >= 2 ? Conclusion::fail : Conclusion::pass;
                     metrics.push_back(v.metric);
                     failed.push_back(v.conclusion == Conclusion::fail);
                     return v;
                   },
               .stopping = {},
               .on_counted = {}});
  ASSERT_TRUE(out.failure);
  const auto drawn = static_cast<std::size_t>(out.tally.drawn);
  ASSERT_GT(metrics.size(), drawn);
  double clearest = 0;  // of the drawn cases that failed
  for (std::size_t k = 0; k < drawn; ++k)
    if (failed[k]) clearest = std::max(clearest, metrics[k]);
  EXPECT_EQ(metrics[drawn], clearest) << "the first case checked after the drawing is the clearest, drawn again";
  EXPECT_THAT(out.failure->how_found, ::testing::StartsWith("Falsifiable after "));
  EXPECT_THAT(out.failure->how_found, ::testing::HasSubstr("Led by the clearest of "));
  EXPECT_EQ(out.failure->c.graph->num_edges(), 2) << "shrunk from there to the smallest failing case";
  ASSERT_TRUE(out.failure->as_drawn) << "the case it was shrunk from is kept for the diagnosis";
  EXPECT_EQ(1.0 + static_cast<double>(out.failure->as_drawn->seed % 997), clearest);
}

// A system that answers nothing understandable (an adapter printing garbage: every case a timeout)
// was shrunk case after case, each attempt another timeout. It ends at its first case, unshrunk.
TEST(CaseLoop, AnErrorOfASystemThatNeverAnsweredIsNotShrunk) {
  PropertyOptions options;
  options.cases = 40;
  options.seed = 3;
  RandomCaseSource source("silent spmm", "spmm", options);
  int calls = 0;
  const CaseLoopResult out = run_case_loop(source, {.check =
                                                        [&](const Case& c) {
                                                          ++calls;
                                                          checks::Verdict v;
                                                          v.target = c.target;
                                                          v.system_status = Status::timeout;
                                                          v.conclusion = Conclusion::error;
                                                          v.message = "no answer within 5 s";
                                                          return v;
                                                        },
                                                    .stopping = {},
                                                    .on_counted = {}});
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(calls, 1) << "no shrinking attempt, no look-ahead";
  EXPECT_EQ(out.tally.drawn, 1);
  EXPECT_THAT(out.failure->how_found,
              ::testing::HasSubstr("Not shrunk: the system gave no understandable answer to any case of this check (timeout)"));
}

TEST(CaseLoop, EveryKindOfCaseIsCountedWithItsFirstReason) {
  FakeSource source(6);
  PlantedCheck check{.failing = {},
                     .kinds = {{2, Conclusion::unsupported}, {3, Conclusion::not_applicable}, {4, Conclusion::inconclusive},
                               {5, Conclusion::inconclusive}}};
  std::vector<std::uint64_t> counted;
  const CaseLoopResult out = run_case_loop(source, {.check = std::ref(check), .stopping = {},
                                                    .on_counted = [&](const checks::Verdict& v) { counted.push_back(v.seed); }});
  EXPECT_FALSE(out.failure);
  EXPECT_EQ(out.tally.drawn, 6);
  EXPECT_EQ(out.tally.conclusive, 2);
  EXPECT_EQ(out.tally.unsupported, 1);
  EXPECT_EQ(out.tally.not_applicable, 1);
  EXPECT_EQ(out.tally.inconclusive, 2);
  EXPECT_EQ(out.tally.first_inconclusive, "planted inconclusive at 4");
  EXPECT_EQ(counted, (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(conclusion_without_failure(out.tally), Conclusion::pass);
  EXPECT_EQ(describe_tally(out.tally),
            "2 of 6 cases conclusive: 1 unsupported by the system, 1 not applicable to the check, 2 inconclusive "
            "(2: planted inconclusive at 4)")
      << "reasons that differ only in their numbers are one cause, shown by its first reason";
}

TEST(CaseLoop, InconclusiveCasesAreCountedByCauseTheMostFrequentFirst) {
  EXPECT_EQ(cause_key("on 2 of 13 rows the logits reach |s| = 41.25, past the analysis (rho = 1.5e-3)"),
            "on # of # rows the logits reach |s| = #, past the analysis (rho = #)");
  EXPECT_EQ(cause_key("no bound in bfloat16 for att_src2: -0.5 and +7"), "no bound in bfloat16 for att_src2: # and #")
      << "digits inside a word are part of a name, not a number";

  checks::Verdict v;
  v.conclusion = Conclusion::inconclusive;
  v.detail = "the verdict's own detail";
  auto comparison = [](std::string reason) {
    checks::TensorComparison tc;
    tc.agreement = checks::Agreement::inconclusive;
    tc.reason = std::move(reason);
    return tc;
  };
  EXPECT_EQ(inconclusive_reasons(v), std::vector<std::string>{"the verdict's own detail"}) << "no comparison: the detail";
  v.comparisons = {comparison("a kink at edge 3"), comparison("a kink at edge 7"), comparison("rows past the analysis")};
  EXPECT_EQ(inconclusive_reasons(v), (std::vector<std::string>{"a kink at edge 3", "rows past the analysis"}))
      << "one case counts once per cause";

  CaseTally t;
  t.drawn = 20;
  t.conclusive = 11;
  t.inconclusive = 9;
  for (const auto& [reason, n] : std::vector<std::pair<std::string, int>>{
           {"cause A 1", 1}, {"cause B 1", 3}, {"cause C 1", 2}, {"cause A 2", 1}, {"cause D", 1}, {"cause E", 1}})
    add_cause(t.inconclusive_causes, reason, n);
  EXPECT_EQ(describe_tally(t), "11 of 20 cases conclusive: 9 inconclusive (3: cause B 1; 2: cause A 1; 2: cause C 1; 2 more causes)");

  CaseTally long_reason = t;
  long_reason.inconclusive_causes = {};
  std::string text;
  while (text.size() < 400) text += "ρ·";  // two- and three-byte characters: the cut keeps them whole
  add_cause(long_reason.inconclusive_causes, text, 9);
  const std::string said = describe_tally(long_reason);
  EXPECT_THAT(said, ::testing::EndsWith("…)"));
  EXPECT_LT(said.size(), 320u);
  EXPECT_TRUE(std::string_view(said).find(text.substr(0, 200)) != std::string_view::npos);
}

CaseTally tally_of(std::int64_t drawn, std::int64_t conclusive, std::int64_t unsupported, std::int64_t not_applicable,
                   std::int64_t inconclusive) {
  CaseTally t;
  t.drawn = drawn;
  t.conclusive = conclusive;
  t.unsupported = unsupported;
  t.not_applicable = not_applicable;
  t.inconclusive = inconclusive;
  return t;
}

TEST(CaseLoop, ATallyWithNoFailureMapsOntoOneConclusion) {
  EXPECT_EQ(conclusion_without_failure({}), Conclusion::unsupported) << "no case drawn";
  EXPECT_EQ(conclusion_without_failure(tally_of(3, 0, 3, 0, 0)), Conclusion::unsupported);
  EXPECT_EQ(conclusion_without_failure(tally_of(3, 0, 1, 1, 1)), Conclusion::inconclusive);
  EXPECT_EQ(conclusion_without_failure(tally_of(3, 0, 1, 2, 0)), Conclusion::not_applicable);
  EXPECT_EQ(conclusion_without_failure(tally_of(3, 1, 0, 0, 2)), Conclusion::pass);
}

TEST(CaseLoop, AStopEndsTheLoopWithNoFailure) {
  FakeSource source(10);
  PlantedCheck check{.failing = {5}, .kinds = {}};
  const CaseLoopResult out = run_case_loop(source, {.check = std::ref(check), .stopping = [&] { return check.calls >= 3; },
                                                    .on_counted = {}});
  EXPECT_TRUE(out.stopped);
  EXPECT_FALSE(out.failure);
  EXPECT_EQ(check.calls, 3) << "nothing is checked once the stop is seen";
  EXPECT_EQ(out.tally.drawn, 2) << "the case whose answer the stop cut short is not counted";
}

TEST(CaseLoop, AStopEndsTheRandomFamilyAtOnce) {
  // RapidCheck would otherwise draw all 100,000 cases (or as many discards) before it returns.
  auto system = make_cpu_float32_system();
  PropertyOptions options;
  options.cases = 100000;
  options.seed = 5;
  RandomCaseSource source(property_id(checks::CheckKind::differential, system->name(), "spmm"), "spmm", options);
  int calls = 0;
  const CaseLoopResult out = run_case_loop(
      source, {.check =
                   [&](const Case& c) {
                     ++calls;
                     return check_case(checks::CheckKind::differential, *system, c, {});
                   },
               .stopping = [&] { return calls >= 3; },
               .on_counted = {}});
  EXPECT_TRUE(out.stopped);
  EXPECT_FALSE(out.failure);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(out.tally.drawn, 2);
}

TEST(CaseLoop, ACheckThatThrowsIsAnErrorVerdictOnThatCase) {
  class Throwing final : public System {
   public:
    std::string name() const override { return "throwing"; }
    bool supports(const std::string&) const override { return true; }
    Precision precision(const std::string&) const override { return Precision::float64; }
    Result evaluate(const Case&) override { throw std::runtime_error("planted"); }
  } system;
  const checks::Verdict v = check_case(checks::CheckKind::differential, system, case_with_seed(7), {});
  EXPECT_EQ(v.conclusion, Conclusion::error);
  EXPECT_TRUE(is_decided_failure(v));
  EXPECT_EQ(v.seed, 7u);
  EXPECT_NE(v.message.find("planted"), std::string::npos) << v.message;
}

}  // namespace
}  // namespace gnncheck::properties
