#include "properties/driver.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>
#include <rapidcheck.h>

#include "core/error.h"

namespace gnncheck::properties {

std::string counterexample_name(const std::string& system, const std::string& target, checks::CheckKind check,
                                std::uint64_t seed) {
  return fmt::format("{}-{}-{}-{}", system, target, to_string(check), seed);
}

std::string property_id(checks::CheckKind check, const std::string& system, const std::string& target) {
  return fmt::format("{} {} {}", to_string(check), system, target);
}

namespace {

std::string show_case(const CaseSpec& spec) {
  std::ostringstream os;
  showValue(spec, os);
  return os.str();
}

}  // namespace

RandomCaseSource::RandomCaseSource(std::string id, const std::string& target, const PropertyOptions& options)
    : id_(std::move(id)), target_(target), options_(options) {}

std::optional<CaseFailure> RandomCaseSource::draw(CaseJudge& judge) {
  const rc::Gen<CaseSpec> cases = arbitrary_case(target_, options_.case_options);
  // RapidCheck evaluates the minimal counterexample last among the failing cases it tries, so the
  // last failure recorded here is the shrunk one. Every RapidCheck call below (one draw, a discard,
  // one assertion) is what shrinking depends on: the same seed shrinks to the same minimal case.
  std::optional<CaseFailure> last_failure;
  std::optional<CaseSpec> last_spec;
  // A stop fails the property at once (RapidCheck has no other way to end early) and discards every
  // shrinking attempt after it unchecked, so the run ends within one round of shrink candidates. The
  // same ends the drawing when the failure to shrink is an earlier case (`failed_earlier`), or one
  // not worth shrinking.
  bool stopping = false, ended = false, no_shrink = false;
  // Which judged draws were discarded (unsupported), to replay the drawing up to an earlier case.
  std::vector<bool> discarded;
  // Replaying: the draw to check again and shrink; the draws before it are generated, not checked.
  std::optional<std::int64_t> replay_to;
  std::int64_t replayed = 0;
  const auto property = [&] {
    const CaseSpec spec = *cases;
    if (stopping || ended || no_shrink) RC_DISCARD("the drawing is over");
    if (replay_to && replayed < *replay_to) {  // the same draws as before, with the same answers
      if (discarded[static_cast<std::size_t>(replayed++)]) RC_DISCARD("unsupported, as when it was drawn");
      return;
    }
    const Case c = build_case(spec);
    checks::Verdict v;
    const bool drawn = !last_failure && !replay_to;
    const bool replayed_choice = replay_to && !last_failure;  // the chosen case, drawn again
    if (drawn) {  // a drawn case: the loop checks and counts it
      const CaseAnswer answer = judge.judge(c, v);
      if (answer == CaseAnswer::stop) {
        stopping = true;
        RC_FAIL("the run is stopping");
      }
      discarded.push_back(v.conclusion == checks::Conclusion::unsupported);
      if (answer == CaseAnswer::failed_earlier) {
        ended = true;
        RC_FAIL("the clearest failure is an earlier case");
      }
      // A failure while the loop looks ahead is not shrunk yet; a reproduce string replays one case.
      if (answer == CaseAnswer::go_on && (options_.reproduce.empty() || !is_decided_failure(v))) {
        if (v.conclusion == checks::Conclusion::unsupported) RC_DISCARD(v.detail);
        return;
      }
    } else {  // a shrinking attempt, or the replayed chosen case
      std::optional<checks::Verdict> again = judge.recheck(c);
      if (!again) {
        stopping = true;
        RC_DISCARD("the run is stopping");
      }
      v = std::move(*again);
      if (replayed_choice && !(is_decided_failure(v) && v.conclusion == judge.chosen()->verdict.conclusion)) {
        ended = true;  // it did not fail again as it did: the loop returns it as drawn, unshrunk
        RC_DISCARD("the chosen case passed when checked again");
      }
    }
    if (v.conclusion == checks::Conclusion::unsupported) RC_DISCARD(v.detail);
    // A smaller case still fails only with the same kind of failure: a wrong answer (`fail`) that
    // shrinks to a case the system crashes on (`error`) is another finding, and the counterexample
    // would no longer show the wrong answer that was found.
    const bool failed =
        is_decided_failure(v) && (!last_failure || last_failure->verdict.conclusion == v.conclusion);
    if (failed) {
      last_failure = CaseFailure{.c = c, .verdict = v, .how_found = "", .provenance = {}};
      last_spec = spec;
      if (drawn && !judge.why_not_shrunk().empty()) no_shrink = true;
    }
    RC_ASSERT(!failed);
  };
  const RapidcheckParams params{.seed = options_.seed, .max_success = options_.cases, .max_size = options_.max_size,
                                .reproduce = options_.reproduce};
  run_ = run_rapidcheck(property, id_, params);
  if (run_.outcome == RapidcheckOutcome::error) source_error_ = fmt::format("RapidCheck reported an error: {}", run_.description);
  if (stopping) return std::nullopt;
  if (!last_failure && judge.chosen() && options_.reproduce.empty()) {
    // The clearest failure is an earlier draw (or the drawing ran out while the loop looked ahead):
    // the same seed draws the same cases, so replay the draws before it unchecked and shrink it.
    replay_to = judge.chosen()->draw;
    ended = false;
    run_ = run_rapidcheck(property, id_, params);
    if (stopping) return std::nullopt;
    if (!last_failure) return std::nullopt;  // it passed when checked again: the loop returns it as drawn
  }
  if (run_.outcome != RapidcheckOutcome::failure) return std::nullopt;
  if (!last_failure) {  // RapidCheck failed outside the check (a generator threw)
    source_error_ = fmt::format("RapidCheck reported a failure outside the check: {}", run_.description);
    return std::nullopt;
  }
  minimal_ = last_spec;
  last_failure->how_found = fmt::format("Falsifiable after {} cases and {} shrinks. Minimal case: {}", run_.num_success + 1,
                                        run_.shrinks, show_case(*last_spec));
  last_failure->provenance = {.rapidcheck_seed = options_.seed, .reproduce = run_.reproduce, .rerun = ""};
  return last_failure;
}

PropertyOutcome run_property(checks::CheckKind check, System& system, const std::string& target,
                             const PropertyOptions& options) {
  PropertyOutcome out;
  out.seed = options.seed;
  const std::string id = property_id(check, system.name(), target);
  RandomCaseSource source(id, target, options);
  double worst_passing_ratio = 0.0;
  const CaseLoopResult loop = run_case_loop(
      source, {.check = [&](const Case& c) { return check_case(check, system, c, options.check_options); },
               .stopping = {},
               .on_counted =
                   [&](const checks::Verdict& v) {
                     if (v.passed() && v.bound > 0 && std::isfinite(v.metric)) worst_passing_ratio = std::max(worst_passing_ratio, v.metric / v.bound);
                     if (options.on_verdict) options.on_verdict(v);
                   }});
  const RapidcheckRun& run = source.run();
  const CaseTally& tally = loop.tally;
  out.conclusive = static_cast<int>(tally.conclusive) - (loop.failure ? 1 : 0);  // the cases that passed
  out.not_applicable = static_cast<int>(tally.not_applicable);
  out.inconclusive = static_cast<int>(tally.inconclusive);
  out.unsupported = static_cast<int>(tally.unsupported);
  out.cases = static_cast<int>(tally.drawn - tally.unsupported);
  out.worst_passing_ratio = worst_passing_ratio;
  out.cases_passed = run.num_success;
  const std::string counts = fmt::format(
      "{} of {} cases conclusive ({}{} not applicable, {} inconclusive, {} unsupported and discarded)", out.conclusive,
      out.cases, tally.moved ? fmt::format("{} with the logits scaled within the softmax analysis, ", tally.moved) : "",
      out.not_applicable, out.inconclusive, out.unsupported);
  if (run.outcome == RapidcheckOutcome::success) {
    out.conclusion = conclusion_without_failure(tally);
    out.report = fmt::format("{} {}: {}, worst error {:.3g} of its bound, seed {}",
                             out.passed() ? "OK" : fmt::format("{}", to_string(out.conclusion)), id, counts,
                             worst_passing_ratio, options.seed);
    return out;
  }
  if (run.outcome == RapidcheckOutcome::gave_up) {
    out.gave_up = true;
    out.conclusion = checks::Conclusion::unsupported;
    out.report = fmt::format("GAVE UP {} after {} cases: {} (the system declares too many cases unsupported); {}, seed {}",
                             id, run.num_success, run.description, counts, options.seed);
    return out;
  }
  if (run.outcome == RapidcheckOutcome::error) {
    out.conclusion = checks::Conclusion::error;
    out.report = fmt::format("ERROR {}: {}", id, run.description);
    return out;
  }
  out.conclusion = loop.failure && loop.failure->verdict.conclusion == checks::Conclusion::error ? checks::Conclusion::error
                                                                                                  : checks::Conclusion::fail;
  out.shrinks = run.shrinks;
  out.reproduce = run.reproduce;
  std::string story = fmt::format("FAILED {}: falsifiable after {} tests and {} shrinks (seed {}); before it {}.\n", id,
                                  run.num_success + 1, out.shrinks, options.seed, counts);
  if (loop.failure) {
    out.minimal = source.minimal();
    out.minimal_case = loop.failure->c;
    out.failure = loop.failure->verdict;
    story += fmt::format("Minimal case: {}\n{}\n", show_case(*out.minimal), loop.failure->verdict.message);
  } else {
    story += run.description + "\n";
  }
  story += fmt::format("Reproduce with: RC_PARAMS=\"reproduce={}\"", out.reproduce);
  out.report = story;
  return out;
}

}  // namespace gnncheck::properties
