// gnncheck/properties/case_loop.h — the one case loop of a check: a CaseSource draws cases, the
// loop checks and counts each, and after the first decided failure the source shrinks the clearest
// failure (when it can) and hands back the minimal failing case.
//
// The clearest, not the first: after a first wrong answer the loop checks up to `look_ahead` more
// drawn cases (8 by default, so a failing check costs at most 8 more cases) and leads with the
// failure of the largest error/bound ratio — a bug found at 2.65× its bound on one case and 10⁴× on
// another is shown at 10⁴×. An error (a crash, a timeout, an unreadable answer) ends the drawing at
// once, and one from a system that has answered no case of the check understandably is not shrunk
// either: every smaller case would cost another timeout and show nothing new.
//
//   MyCaseSource source;                                   // any CaseSource: drawn cases, shrinking optional
//   CaseLoopResult out = run_case_loop(source, {.check = [&](const Case& c) { return check_case(kind, sys, c, {}); }});
//   if (out.failure) save(out.failure->c, out.failure->verdict);    // else: conclusion_without_failure(out.tally)
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checks/checks.h"
#include "checks/verdict.h"
#include "core/case.h"
#include "core/system.h"
#include "properties/counterexample.h"

namespace gnncheck::properties {

// What one case came to.
enum class CaseKind {
  decided,         // the system answered and the check judged it: passed or failed
  unsupported,     // the system declined the case
  not_applicable,  // the check has nothing to say about this case
  inconclusive,    // the check ran but could not decide (e.g. a kink on every probed input)
};

CaseKind case_kind(const checks::Verdict& v);

// A decided verdict that did not pass (fail, or error).
bool is_decided_failure(const checks::Verdict& v);

// How far over its bound a failing verdict is: metric / bound (infinite for a zero bound or a NaN).
double failure_ratio(const checks::Verdict& v);

// One cause of inconclusive cases: reasons that differ only in their numbers are one cause
// (cause_key), the first of them stands for it, and `cases` counts the cases it held back.
struct InconclusiveCause {
  std::string example;
  std::int64_t cases = 0;
  std::string key;  // cause_key(example), kept so that counting a case compares and does not re-derive
};

// A reason with every number in it replaced by '#': "the logits reach |s| = 41.2" and "… |s| = 97"
// are one cause.
std::string cause_key(std::string_view reason);

// The distinct reasons of one inconclusive verdict: those of its inconclusive comparisons (a case
// can be held back by two at once), or its detail where no comparison has one.
std::vector<std::string> inconclusive_reasons(const checks::Verdict& v);

// Counts `cases` more cases of `reason` in `causes`, grouped by cause_key, in first-seen order.
void add_cause(std::vector<InconclusiveCause>& causes, const std::string& reason, std::int64_t cases);

// The drawn cases of one check, by what they came to (shrinking attempts are not drawn cases).
struct CaseTally {
  std::int64_t drawn = 0, conclusive = 0, unsupported = 0, not_applicable = 0, inconclusive = 0;
  std::int64_t moved = 0;  // of the conclusive ones, those compared moved within the softmax analysis
  std::string first_unsupported, first_not_applicable, first_inconclusive;  // the first one's reason
  std::vector<InconclusiveCause> inconclusive_causes;  // why the inconclusive cases were, by cause
};

// The conclusion of cases none of which failed — the one mapping of a tally onto an outcome: pass
// when any case was conclusive; unsupported when none was drawn or the system declined every one;
// inconclusive when some could not be decided; not_applicable otherwise.
checks::Conclusion conclusion_without_failure(const CaseTally& tally);

// "k of n cases conclusive: u unsupported by the system, …" for a tally; the inconclusive cases
// with their most frequent causes, so that a reader sees what holds the verdicts back.
std::string describe_tally(const CaseTally& tally);

// What the loop tells a source about a drawn case.
enum class CaseAnswer {
  go_on,           // counted: draw the next one (also for a failure while the loop looks ahead)
  failed,          // this case is the failure to return: shrink it if you can, then return it
  failed_earlier,  // drawing is over and the failure to return is an earlier drawn case: CaseJudge::chosen()
  stop,            // the run is stopping: the case was not checked; return at once
};

// A failing case as the source hands it back: the minimal one when the source shrinks.
struct CaseFailure {
  Case c;
  checks::Verdict verdict;
  std::string how_found;                 // how the source reached it ("Falsifiable after …"); "" when it did not shrink
  CounterexampleProvenance provenance;   // RapidCheck's seed and reproduce string, for a source that has them
  // The failing case as drawn, before shrinking (unset when `c` is it): a larger witness the
  // diagnosis reads where the minimal case fits several mistakes.
  std::optional<Case> as_drawn = {};
};

// The loop's side, as a source sees it.
class CaseJudge {
 public:
  virtual ~CaseJudge() = default;
  // Checks and counts a drawn case; `verdict` receives its verdict (unset when the answer is stop).
  virtual CaseAnswer judge(const Case& c, checks::Verdict& verdict) = 0;
  // Counts a drawn case that has nothing to check by design (why).
  virtual void not_applicable(const std::string& why) = 0;
  // Checks a shrinking candidate without counting it; nullopt when the run is stopping.
  virtual std::optional<checks::Verdict> recheck(const Case& c) = 0;
  // The failure the loop leads with, once one was seen: its case, verdict and its number among the
  // judged cases (0 for the first judge() call that was not answered `stop`).
  struct Chosen {
    Case c;
    checks::Verdict verdict;
    std::int64_t draw = 0;
  };
  virtual const std::optional<Chosen>& chosen() const = 0;
  // Why the failure just answered `failed` is not worth shrinking; empty when it is.
  virtual std::string why_not_shrunk() const { return {}; }
};

// Where the cases of one check come from: the random shrinking family (properties/driver.h), a
// fixed or generator family (suites/family_case_source.h), or any other.
class CaseSource {
 public:
  virtual ~CaseSource() = default;
  // Draws cases and hands each to `judge` until it answers `failed`, `failed_earlier` or `stop`, or
  // the source has no more. After `failed` a source that shrinks looks for a smaller case that still
  // fails (through `judge.recheck`) and returns the smallest, unless judge.why_not_shrunk() says
  // why not; one that does not shrink returns the failing case as drawn. After `failed_earlier`, or
  // when it runs out while judge.chosen() holds a failure, a source that shrinks shrinks that one
  // (drawing it again: the random family replays its draws); one that does not returns nullopt and
  // the loop returns judge.chosen(). Returns nullopt when no case failed (or the run stopped).
  virtual std::optional<CaseFailure> draw(CaseJudge& judge) = 0;
  // Why the source could not draw its cases (e.g. RapidCheck reported an error); "" when it could.
  virtual std::string source_error() const { return {}; }
};

// The verdict of `check` of `system` on one case; a check that throws gives an error verdict
// (the case is then a counterexample like any other).
checks::Verdict check_case(checks::CheckKind check, System& system, const Case& c, const checks::CheckOptions& options);

struct CaseLoopOptions {
  std::function<checks::Verdict(const Case&)> check;  // the check of one case, e.g. check_case
  std::function<bool()> stopping;                      // unset: never stops
  // Called with the verdict of every drawn, non-failing case that was counted (not the shrinking
  // attempts), e.g. to plot its error against its bound.
  std::function<void(const checks::Verdict&)> on_counted;
  // Drawn cases checked after the first wrong answer, to lead with the clearest failure; 0: the first.
  int look_ahead = 8;
};

struct CaseLoopResult {
  CaseTally tally;                     // the failing case counted as conclusive
  std::optional<CaseFailure> failure;  // the (minimal) clearest decided failure
  bool stopped = false;                // the run was stopped: nothing here is a result of the system
  std::string source_error;            // the source could not draw its cases
};

// The loop: draw → check → count → after the first decided failure, look ahead, shrink the clearest
// (the source) → return it.
CaseLoopResult run_case_loop(CaseSource& source, const CaseLoopOptions& options);

}  // namespace gnncheck::properties
