#include "session.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "oracle/targets.h"
#include "reports/writers.h"
#include "suites/run_merge.h"
#include "suites/system_registry.h"

namespace gnncheck::python {
namespace {

bool selector_covers(const std::string& selector, const oracle::TargetDef& def) {
  return selector == "all" || (selector == "ops" && !def.spec.is_layer) || (selector == "layers" && def.spec.is_layer);
}

std::vector<std::string> entry_names(const suites::Suite& suite) {
  std::vector<std::string> names;
  for (const auto& e : suite.entries) names.push_back(e.name);
  return names;
}

// Applies `only` ("entry" or "entry/check") to the suite as written, so that names are checked
// against the file the user knows.
void keep_only(suites::Suite& suite, const std::vector<std::string>& only) {
  if (only.empty()) return;
  std::map<std::string, std::vector<std::string>> wanted;  // entry -> checks (empty: all)
  std::set<std::string> whole;                              // entries named without a check
  for (const auto& item : only) {
    const auto slash = item.find('/');
    const std::string entry = item.substr(0, slash);
    const std::string check = slash == std::string::npos ? std::string() : item.substr(slash + 1);
    const auto it = std::find_if(suite.entries.begin(), suite.entries.end(), [&](const auto& e) { return e.name == entry; });
    if (it == suite.entries.end())
      throw InputError(fmt::format("{}: no entry named '{}'; its entries: {}", suite.path, entry, fmt::join(entry_names(suite), ", ")));
    auto& checks = wanted[entry];
    if (check.empty()) {
      whole.insert(entry);
      continue;
    }
    if (std::find(it->checks.begin(), it->checks.end(), check) == it->checks.end())
      throw InputError(fmt::format("{}: entry '{}' has no check '{}'; its checks: {}", suite.path, entry, check,
                                   fmt::join(it->checks, ", ")));
    checks.push_back(check);
  }
  std::vector<suites::Entry> kept;
  for (auto& e : suite.entries) {
    auto it = wanted.find(e.name);
    if (it == wanted.end()) continue;
    if (!whole.count(e.name)) e.checks = it->second;
    kept.push_back(std::move(e));
  }
  suite.entries = std::move(kept);
}

}  // namespace

void narrow_suite(suites::Suite& suite, const std::string& target, const std::vector<std::string>& only) {
  const oracle::TargetDef& def = oracle::find_target(target);  // InputError listing the known targets
  keep_only(suite, only);
  std::vector<suites::Entry> kept;
  for (auto& e : suite.entries) {
    if (e.expect == reports::Expectation::caught) continue;
    std::erase(e.checks, std::string("selfcheck"));
    if (e.checks.empty()) continue;
    std::vector<suites::TargetChoice> choices;
    for (const auto& t : e.targets)
      if (t.name == target) choices.push_back(t);
    if (choices.empty()) {
      for (const auto& t : e.targets) {
        if (!selector_covers(t.name, def)) continue;
        choices.push_back({target, {}, t.location});
        break;
      }
    }
    if (choices.empty()) continue;
    e.targets = std::move(choices);
    kept.push_back(std::move(e));
  }
  if (kept.empty())
    throw InputError(fmt::format("{}: no entry of suite '{}' checks target '{}' on a system under test{} (entries: {})", suite.path,
                                 suite.name, target, only.empty() ? "" : fmt::format(" among {}", fmt::join(only, ", ")),
                                 fmt::join(entry_names(suite), ", ")));
  suite.entries = std::move(kept);
}

namespace {

// Passes the runner's progress on to the Python side.
class SessionSink final : public suites::ProgressSink {
 public:
  explicit SessionSink(const SessionProgress& progress) : progress_(progress) {}
  void started(const suites::TaskLabel& task) override {
    if (progress_) progress_(task, nullptr);
  }
  void finished(const suites::TaskLabel& task, const reports::ResultRecord& result) override {
    if (progress_) progress_(task, &result);
  }

 private:
  const SessionProgress& progress_;
};

}  // namespace

SessionResult run_session(const SessionRequest& request, const std::shared_ptr<CallableState>& state,
                          const SessionProgress& progress) {
  suites::Suite suite = suites::load_suite(request.suite_path);
  narrow_suite(suite, request.target, request.only);

  auto registry = suites::SystemRegistry::with_builtins();
  const std::string name = state->spec().name;
  // Fields assigned one by one: SystemEntry grows, and the defaults of new fields are right here.
  suites::SystemEntry entry;
  entry.name = name;
  // A system checked inside the calling process, which neither `gnncheck run` nor `gnncheck repro`
  // can start (its system.json's `rerun` says what re-runs it).
  entry.kind = suites::SystemKind::python;
  entry.summary = fmt::format("Python callable '{}', in process", name);
  entry.make = [state] { return make_python_system(state); };
  registry.add(std::move(entry));

  suites::RunOptions options;
  options.seed = request.seed;
  options.jobs = 1;  // the callable runs under the GIL: one task at a time, on this thread
  options.report_dir = request.report_dir;
  options.override_systems = {name};
  options.only_targets = {request.target};
  options.suite_argument = request.suite_argument;
  options.stop_requested = [state] { return state->stop_signal(); };
  if (request.rerun)
    options.rerun = [&request](const suites::RerunScope& scope) {
      return request.rerun(scope.entry, scope.check, scope.counterexample.lexically_normal().string());
    };
  if (request.share) {
    options.share = *request.share;
    options.sharded = true;
  }

  SessionSink sink(progress);
  SessionResult out;
  out.report = suites::run_suite(suite, registry, options, &sink);
  out.report.gnncheck_version = request.version;
  if (request.write_reports && !request.report_dir.empty()) reports::write_all(out.report, request.report_dir);
  return out;
}

reports::RunReport merge_session_reports(const std::vector<std::filesystem::path>& shard_dirs,
                                         const std::filesystem::path& output) {
  std::vector<suites::ShardReport> shards;
  for (const auto& dir : shard_dirs) shards.push_back({dir, reports::read_json_report(dir / "report.json")});
  std::filesystem::create_directories(output);
  std::error_code ec;
  std::filesystem::remove_all(output / "cases", ec);  // an earlier run's counterexamples would read as this one's
  reports::RunReport merged = suites::merge_shard_reports(shards, output);
  reports::write_all(merged, output);
  return merged;
}

}  // namespace gnncheck::python
