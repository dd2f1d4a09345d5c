// gnncheck/properties/driver.h — running a check as a property over many random cases.
//
// RandomCaseSource is the random shrinking family as a CaseSource (properties/case_loop.h):
// RapidCheck draws `cases` cases of one target from arbitrary_case(), each goes to the case loop,
// and on the first failure RapidCheck shrinks it (graph first, then attributes and values) to a
// minimal case that still fails, which the source hands back with RapidCheck's "Falsifiable after
// N tests and M shrinks" story, the seed and the reproduce string. Cases the system declares
// unsupported are discarded (RapidCheck draws another and gives up after too many).
//
// run_property() is that source run through the case loop, for a check outside a suite: its
// outcome counts the cases by conclusion and its `conclusion` is pass only when no case failed and
// at least one case was conclusive ("k of n cases conclusive" is conclusive of cases). Saving a
// counterexample is the caller's (the suite runner's record of a failure; write_counterexample).
//
//   auto sys = gnncheck::make_cpu_float32_system();
//   gnncheck::properties::PropertyOptions opts;
//   opts.cases = 200;  opts.seed = 42;
//   auto out = gnncheck::properties::run_property(gnncheck::checks::CheckKind::adjoint, *sys, "spmm", opts);
//   if (!out.passed()) std::cerr << out.report << "\n";   // verdict, shrunk case, seed, reproduce
//   fmt::print("{} of {} cases conclusive\n", out.conclusive, out.cases);
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/system.h"
#include "checks/checks.h"
#include "properties/case_loop.h"
#include "properties/generators.h"
#include "properties/rapidcheck_runner.h"

namespace gnncheck::properties {

struct PropertyOptions {
  int cases = 100;            // successful cases required to pass
  std::uint64_t seed = 1;     // RapidCheck's seed: the same seed draws the same cases
  int max_size = 100;         // RapidCheck's size ramps from 0 to this over the run
  std::string reproduce;      // a reproduce string from an earlier failure: re-runs exactly that case
  CaseOptions case_options;
  checks::CheckOptions check_options;
  // Called with the verdict of every generated case before the first failure (not with the failing
  // case or the shrinking attempts), e.g. to plot every case's error against its bound.
  std::function<void(const checks::Verdict&)> on_verdict;
};

// The random shrinking family of one target as a case source.
class RandomCaseSource final : public CaseSource {
 public:
  RandomCaseSource(std::string id, const std::string& target, const PropertyOptions& options);
  std::optional<CaseFailure> draw(CaseJudge& judge) override;
  std::string source_error() const override { return source_error_; }

  // After draw(): RapidCheck's account of the run, and the minimal failing case's spec.
  const RapidcheckRun& run() const { return run_; }
  const std::optional<CaseSpec>& minimal() const { return minimal_; }

 private:
  std::string id_;
  std::string target_;
  const PropertyOptions& options_;
  RapidcheckRun run_;
  std::optional<CaseSpec> minimal_;
  std::string source_error_;
};

struct PropertyOutcome {
  // pass: no case failed and at least one was conclusive; fail: a case failed (its verdict said
  // fail); error: a case's verdict said error, the check threw, or RapidCheck reported an error;
  // unsupported: RapidCheck gave up (too many unsupported cases) before any case failed;
  // not_applicable: every case was not applicable; inconclusive: no case was conclusive otherwise.
  checks::Conclusion conclusion = checks::Conclusion::fail;
  bool passed() const { return conclusion == checks::Conclusion::pass; }
  bool gave_up = false;         // too many discarded (unsupported) cases
  int cases = 0;                // cases evaluated and counted (every non-discarded case, the failing one included)
  int conclusive = 0;           // cases whose verdict was pass
  int not_applicable = 0;       // cases the check said nothing about
  int inconclusive = 0;         // cases the check ran on but could not decide
  int unsupported = 0;          // cases the system declared unsupported (discarded)
  int cases_passed = 0;         // cases that did not fail before the failure (or all of them): RapidCheck's successes
  int shrinks = 0;              // shrink steps to the minimal case
  double worst_passing_ratio = 0.0;  // max over passing cases of metric / bound (how close correct answers came)
  std::uint64_t seed = 0;
  std::string reproduce;        // RC_PARAMS reproduce string for the failure
  std::optional<checks::Verdict> failure;  // the verdict on the minimal case
  std::optional<CaseSpec> minimal;         // the minimal case's spec
  std::optional<Case> minimal_case;        // and the case itself, e.g. for write_counterexample
  std::string report;           // the whole story, ready to print
};

PropertyOutcome run_property(checks::CheckKind check, System& system, const std::string& target,
                             const PropertyOptions& options = {});

// "<check> <system> <target>": the property's id, which its reproduce string names.
std::string property_id(checks::CheckKind check, const std::string& system, const std::string& target);

// "<system>-<target>-<check>-<seed>": the directory name of a counterexample under a report's cases/.
std::string counterexample_name(const std::string& system, const std::string& target, checks::CheckKind check,
                                std::uint64_t seed);

}  // namespace gnncheck::properties
