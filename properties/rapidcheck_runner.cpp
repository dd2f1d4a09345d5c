#include "properties/rapidcheck_runner.h"

#include <unordered_map>

#include <rapidcheck.h>

namespace rc::detail {
// Exported by librapidcheck (used by its own configuration parser) but not declared in its headers.
std::string reproduceMapToString(const std::unordered_map<std::string, Reproduce>& reproduceMap);
std::unordered_map<std::string, Reproduce> stringToReproduceMap(const std::string& str);
}  // namespace rc::detail

namespace gnncheck::properties {
namespace {

// RapidCheck reports through a listener; the outcome is read from its result instead.
class SilentListener final : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

}  // namespace

RapidcheckRun run_rapidcheck(const std::function<void()>& property, const std::string& id, const RapidcheckParams& params) {
  const auto rc_property = rc::detail::toProperty([&property] { property(); });
  rc::detail::TestParams test_params;
  test_params.seed = params.seed;
  test_params.maxSuccess = params.max_success;
  test_params.maxSize = params.max_size;
  rc::detail::TestMetadata metadata{id, id};
  std::unordered_map<std::string, rc::detail::Reproduce> reproduce;
  if (!params.reproduce.empty()) reproduce = rc::detail::stringToReproduceMap(params.reproduce);
  SilentListener listener;
  const rc::detail::TestResult result = rc::detail::checkProperty(rc_property, metadata, test_params, listener, reproduce);

  RapidcheckRun run;
  rc::detail::SuccessResult success;
  rc::detail::FailureResult failure;
  rc::detail::GaveUpResult gave_up;
  rc::detail::Error error;
  if (result.match(success)) {
    run.outcome = RapidcheckOutcome::success;
    run.num_success = success.numSuccess;
  } else if (result.match(gave_up)) {
    run.outcome = RapidcheckOutcome::gave_up;
    run.num_success = gave_up.numSuccess;
    run.description = gave_up.description;
  } else if (result.match(error)) {
    run.outcome = RapidcheckOutcome::error;
    run.description = error.description;
  } else {
    result.match(failure);
    run.outcome = RapidcheckOutcome::failure;
    run.num_success = failure.numSuccess;
    run.shrinks = static_cast<int>(failure.reproduce.shrinkPath.size());
    run.reproduce = rc::detail::reproduceMapToString({{id, failure.reproduce}});
    run.description = failure.description;
  }
  return run;
}

}  // namespace gnncheck::properties
