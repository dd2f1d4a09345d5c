#include "properties/case_loop.h"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gnncheck::properties {

CaseKind case_kind(const checks::Verdict& v) {
  switch (v.conclusion) {
    case checks::Conclusion::unsupported: return CaseKind::unsupported;
    case checks::Conclusion::not_applicable: return CaseKind::not_applicable;
    case checks::Conclusion::inconclusive: return CaseKind::inconclusive;
    default: return CaseKind::decided;  // pass, fail, and an error (which fails)
  }
}

bool is_decided_failure(const checks::Verdict& v) { return !v.passed() && case_kind(v) == CaseKind::decided; }

checks::Conclusion conclusion_without_failure(const CaseTally& tally) {
  if (tally.conclusive > 0) return checks::Conclusion::pass;
  if (tally.drawn == 0 || tally.unsupported == tally.drawn) return checks::Conclusion::unsupported;
  if (tally.inconclusive > 0) return checks::Conclusion::inconclusive;
  return checks::Conclusion::not_applicable;
}

std::string describe_tally(const CaseTally& tally) {
  std::vector<std::string> rest;
  if (tally.unsupported) rest.push_back(fmt::format("{} unsupported by the system", tally.unsupported));
  if (tally.not_applicable) rest.push_back(fmt::format("{} not applicable to the check", tally.not_applicable));
  if (tally.inconclusive) rest.push_back(fmt::format("{} inconclusive", tally.inconclusive));
  return fmt::format("{} of {} cases conclusive{}{}", tally.conclusive, tally.drawn, rest.empty() ? "" : ": ",
                     fmt::join(rest, ", "));
}

checks::Verdict check_case(checks::CheckKind check, System& system, const Case& c, const checks::CheckOptions& options) {
  try {
    return checks::run_check(check, system, c, options);
  } catch (const std::exception& e) {
    checks::Verdict v;
    v.check = check;
    v.system = system.name();
    v.target = c.target;
    v.seed = c.seed;
    v.conclusion = checks::Conclusion::error;
    v.message = fmt::format("{} check raised an error on this case: {}", to_string(check), e.what());
    return v;
  }
}

namespace {

// Counts what the source draws; remembers the first decided failure.
class CountingJudge final : public CaseJudge {
 public:
  explicit CountingJudge(const CaseLoopOptions& options) : options_(options) {}

  CaseAnswer judge(const Case& c, checks::Verdict& verdict) override {
    if (stopping()) return CaseAnswer::stop;
    verdict = options_.check(c);
    if (stopping()) return CaseAnswer::stop;  // an answer cut short by the stop is no result of the system
    ++tally.drawn;
    switch (case_kind(verdict)) {
      case CaseKind::unsupported: note(tally.unsupported, tally.first_unsupported, verdict.detail); break;
      case CaseKind::not_applicable: note(tally.not_applicable, tally.first_not_applicable, verdict.detail); break;
      case CaseKind::inconclusive: note(tally.inconclusive, tally.first_inconclusive, verdict.detail); break;
      case CaseKind::decided:
        ++tally.conclusive;
        if (!verdict.passed()) return CaseAnswer::failed;
        break;
    }
    if (options_.on_counted) options_.on_counted(verdict);
    return CaseAnswer::go_on;
  }

  void not_applicable(const std::string& why) override {
    ++tally.drawn;
    note(tally.not_applicable, tally.first_not_applicable, why);
  }

  std::optional<checks::Verdict> recheck(const Case& c) override {
    if (stopping()) return std::nullopt;
    return options_.check(c);
  }

  bool stopping() const { return options_.stopping && options_.stopping(); }

  CaseTally tally;

 private:
  // Keeps the first non-empty reason of a kind, for the result's message.
  static void note(std::int64_t& count, std::string& first, const std::string& why) {
    ++count;
    if (first.empty()) first = why;
  }

  const CaseLoopOptions& options_;
};

}  // namespace

CaseLoopResult run_case_loop(CaseSource& source, const CaseLoopOptions& options) {
  CountingJudge judge(options);
  CaseLoopResult out;
  out.failure = source.draw(judge);
  out.tally = judge.tally;
  out.stopped = judge.stopping();
  out.source_error = source.source_error();
  if (out.stopped) out.failure.reset();  // a failure the stop cut short is no failure of the system
  return out;
}

}  // namespace gnncheck::properties
