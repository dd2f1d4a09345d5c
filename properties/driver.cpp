#include "properties/driver.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>
#include <rapidcheck.h>

#include "core/error.h"
#include "properties/counterexample.h"

namespace rc::detail {
// Exported by librapidcheck (used by its own configuration parser) but not declared in its headers.
std::string reproduceMapToString(const std::unordered_map<std::string, Reproduce>& reproduceMap);
std::unordered_map<std::string, Reproduce> stringToReproduceMap(const std::string& str);
}  // namespace rc::detail

namespace gnncheck::properties {

std::string counterexample_name(const std::string& system, const std::string& target, checks::CheckKind check,
                                std::uint64_t seed) {
  return fmt::format("{}-{}-{}-{}", system, target, to_string(check), seed);
}

namespace {

// Counts the shrinks RapidCheck accepted; prints nothing (the outcome's report tells the story).
class ShrinkCounter final : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override { accepted_ += accepted ? 1 : 0; }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
  int accepted() const { return accepted_; }

 private:
  int accepted_ = 0;
};

std::string show_case(const CaseSpec& spec) {
  std::ostringstream os;
  showValue(spec, os);
  return os.str();
}

}  // namespace

PropertyOutcome run_property(checks::CheckKind check, System& system, const std::string& target,
                             const PropertyOptions& options) {
  PropertyOutcome out;
  out.seed = options.seed;
  const rc::Gen<CaseSpec> cases = arbitrary_case(target, options.case_options);
  const std::string id = fmt::format("{} {} {}", to_string(check), system.name(), target);

  // RapidCheck evaluates the minimal counterexample last among the failing cases it tries, so the
  // last failure recorded here is the shrunk one.
  std::optional<std::pair<CaseSpec, checks::Verdict>> last_failure;
  std::optional<Case> last_failing_case;
  // Counts over the generated cases up to the first failure (not over shrinking attempts).
  int conclusive = 0, not_applicable = 0, inconclusive = 0, unsupported = 0;
  double worst_passing_ratio = 0.0;
  const auto property = rc::detail::toProperty([&] {
    const CaseSpec spec = *cases;
    const Case c = build_case(spec);
    checks::Verdict v;
    try {
      v = checks::run_check(check, system, c, options.check_options);
    } catch (const std::exception& e) {
      v.check = check;
      v.system = system.name();
      v.target = target;
      v.seed = c.seed;
      v.conclusion = checks::Conclusion::error;
      v.message = fmt::format("{} check raised an error on this case: {}", to_string(check), e.what());
    }
    const bool counting = !last_failure;  // a shrinking attempt is not one of the drawn cases
    if (v.conclusion == checks::Conclusion::unsupported) {
      if (counting) ++unsupported;
      RC_DISCARD(v.detail);
    }
    if (options.on_verdict && counting) options.on_verdict(v);
    const bool failed = v.conclusion == checks::Conclusion::fail || v.conclusion == checks::Conclusion::error;
    if (counting) {
      conclusive += v.passed() ? 1 : 0;
      not_applicable += v.conclusion == checks::Conclusion::not_applicable ? 1 : 0;
      inconclusive += v.conclusion == checks::Conclusion::inconclusive ? 1 : 0;
    }
    if (counting && v.passed() && v.bound > 0) worst_passing_ratio = std::max(worst_passing_ratio, v.metric / v.bound);
    if (failed) {
      last_failure.emplace(spec, v);
      last_failing_case = c;
    }
    RC_ASSERT(!failed);
  });

  rc::detail::TestParams params;
  params.seed = options.seed;
  params.maxSuccess = options.cases;
  params.maxSize = options.max_size;
  rc::detail::TestMetadata metadata{id, id};
  std::unordered_map<std::string, rc::detail::Reproduce> reproduce;
  if (!options.reproduce.empty()) reproduce = rc::detail::stringToReproduceMap(options.reproduce);
  ShrinkCounter listener;
  const rc::detail::TestResult result = rc::detail::checkProperty(property, metadata, params, listener, reproduce);

  out.conclusive = conclusive;
  out.not_applicable = not_applicable;
  out.inconclusive = inconclusive;
  out.unsupported = unsupported;
  out.cases = conclusive + not_applicable + inconclusive + (last_failure ? 1 : 0);
  out.worst_passing_ratio = worst_passing_ratio;
  const std::string counts = fmt::format("{} of {} cases conclusive ({} not applicable, {} inconclusive, {} unsupported "
                                         "and discarded)",
                                         conclusive, out.cases, not_applicable, inconclusive, unsupported);
  rc::detail::SuccessResult success;
  rc::detail::FailureResult failure;
  rc::detail::GaveUpResult gave_up;
  rc::detail::Error error;
  auto no_failure_conclusion = [&] {
    if (conclusive > 0) return checks::Conclusion::pass;
    if (not_applicable > 0 && inconclusive == 0) return checks::Conclusion::not_applicable;
    return checks::Conclusion::inconclusive;
  };
  if (result.match(success)) {
    out.conclusion = no_failure_conclusion();
    out.cases_passed = success.numSuccess;
    out.report = fmt::format("{} {}: {}, worst error {:.3g} of its bound, seed {}",
                             out.passed() ? "OK" : fmt::format("{}", to_string(out.conclusion)), id, counts,
                             worst_passing_ratio, options.seed);
    return out;
  }
  if (result.match(gave_up)) {
    out.gave_up = true;
    out.conclusion = checks::Conclusion::unsupported;
    out.cases_passed = gave_up.numSuccess;
    out.report = fmt::format("GAVE UP {} after {} cases: {} (the system declares too many cases unsupported); {}, seed {}",
                             id, gave_up.numSuccess, gave_up.description, counts, options.seed);
    return out;
  }
  if (result.match(error)) {
    out.conclusion = checks::Conclusion::error;
    out.report = fmt::format("ERROR {}: {}", id, error.description);
    return out;
  }
  result.match(failure);
  out.conclusion = last_failure && last_failure->second.conclusion == checks::Conclusion::error
                       ? checks::Conclusion::error
                       : checks::Conclusion::fail;
  out.cases_passed = failure.numSuccess;
  out.shrinks = static_cast<int>(failure.reproduce.shrinkPath.size());
  out.reproduce = rc::detail::reproduceMapToString({{id, failure.reproduce}});
  std::string story = fmt::format("FAILED {}: falsifiable after {} tests and {} shrinks (seed {}); before it {}.\n", id,
                                  failure.numSuccess + 1, out.shrinks, options.seed, counts);
  if (last_failure) {
    auto& [spec, verdict] = *last_failure;
    out.minimal = spec;
    if (!options.counterexample_root.empty() && last_failing_case) {
      const auto dir = options.counterexample_root / counterexample_name(system.name(), target, check, options.seed);
      verdict.counterexample_path = dir.string();
      verdict.rerun_command = replay_command(dir);
      verdict.message = checks::failure_message(verdict);
      write_counterexample(dir, *last_failing_case, verdict, {options.seed, out.reproduce, verdict.rerun_command});
      out.counterexample_path = dir.string();
    }
    story += fmt::format("Minimal case: {}\n{}\n", show_case(spec), verdict.message);
    out.failure = verdict;
  } else {
    story += failure.description + "\n";
  }
  story += fmt::format("Reproduce with: RC_PARAMS=\"reproduce={}\"", out.reproduce);
  out.report = story;
  return out;
}

}  // namespace gnncheck::properties
