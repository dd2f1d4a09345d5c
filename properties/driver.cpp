#include "properties/driver.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>
#include <rapidcheck.h>

#include "core/error.h"
#include "properties/counterexample.h"
#include "properties/rapidcheck_runner.h"

namespace gnncheck::properties {

std::string counterexample_name(const std::string& system, const std::string& target, checks::CheckKind check,
                                std::uint64_t seed) {
  return fmt::format("{}-{}-{}-{}", system, target, to_string(check), seed);
}

namespace {

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
  const auto property = [&] {
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
  };
  const RapidcheckRun run = run_rapidcheck(
      property, id, {.seed = options.seed, .max_success = options.cases, .max_size = options.max_size, .reproduce = options.reproduce});

  out.conclusive = conclusive;
  out.not_applicable = not_applicable;
  out.inconclusive = inconclusive;
  out.unsupported = unsupported;
  out.cases = conclusive + not_applicable + inconclusive + (last_failure ? 1 : 0);
  out.worst_passing_ratio = worst_passing_ratio;
  const std::string counts = fmt::format("{} of {} cases conclusive ({} not applicable, {} inconclusive, {} unsupported "
                                         "and discarded)",
                                         conclusive, out.cases, not_applicable, inconclusive, unsupported);
  auto no_failure_conclusion = [&] {
    if (conclusive > 0) return checks::Conclusion::pass;
    if (not_applicable > 0 && inconclusive == 0) return checks::Conclusion::not_applicable;
    return checks::Conclusion::inconclusive;
  };
  if (run.outcome == RapidcheckOutcome::success) {
    out.conclusion = no_failure_conclusion();
    out.cases_passed = run.num_success;
    out.report = fmt::format("{} {}: {}, worst error {:.3g} of its bound, seed {}",
                             out.passed() ? "OK" : fmt::format("{}", to_string(out.conclusion)), id, counts,
                             worst_passing_ratio, options.seed);
    return out;
  }
  if (run.outcome == RapidcheckOutcome::gave_up) {
    out.gave_up = true;
    out.conclusion = checks::Conclusion::unsupported;
    out.cases_passed = run.num_success;
    out.report = fmt::format("GAVE UP {} after {} cases: {} (the system declares too many cases unsupported); {}, seed {}",
                             id, run.num_success, run.description, counts, options.seed);
    return out;
  }
  if (run.outcome == RapidcheckOutcome::error) {
    out.conclusion = checks::Conclusion::error;
    out.report = fmt::format("ERROR {}: {}", id, run.description);
    return out;
  }
  out.conclusion = last_failure && last_failure->second.conclusion == checks::Conclusion::error
                       ? checks::Conclusion::error
                       : checks::Conclusion::fail;
  out.cases_passed = run.num_success;
  out.shrinks = run.shrinks;
  out.reproduce = run.reproduce;
  std::string story = fmt::format("FAILED {}: falsifiable after {} tests and {} shrinks (seed {}); before it {}.\n", id,
                                  run.num_success + 1, out.shrinks, options.seed, counts);
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
    story += run.description + "\n";
  }
  story += fmt::format("Reproduce with: RC_PARAMS=\"reproduce={}\"", out.reproduce);
  out.report = story;
  return out;
}

}  // namespace gnncheck::properties
