#include "suites/run_merge.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "suites/system_registry.h"
#include "suites/task.h"

namespace gnncheck::suites {
namespace {

using reports::Expectation;
using reports::Outcome;
using reports::ResultRecord;
using Key = std::tuple<std::string, std::string, std::string, std::string>;

Key key_of(const ResultRecord& r) { return {r.entry, r.system, r.target, r.check}; }
Key key_of(const reports::PlannedTask& t) { return {t.entry, t.system, t.target, t.check}; }

std::string where(const ShardReport& s) { return (s.dir / "report.json").string(); }

// Refuses shards that are not parts of one run, naming the two reports that differ and how.
void check_same_run(const std::vector<ShardReport>& shards) {
  if (shards.empty()) throw InputError("report merge: no shard reports given");
  for (const auto& s : shards)
    if (!s.run.share)
      throw InputError(fmt::format("{}: not a shard's report (it was not run with --share PART/OF, "
                                   "GTEST_SHARD_INDEX or TEST_SHARD_INDEX); only shards of one run are merged",
                                   where(s)));
  const ShardReport& a = shards.front();
  for (const auto& b : shards) {
    auto differ = [&](const char* what, const std::string& x, const std::string& y) {
      if (x != y)
        throw InputError(fmt::format("report merge: shards of different runs: {} has {} {}, {} has {} {}", where(a), what,
                                     x, where(b), what, y));
    };
    differ("suite", a.run.suite_name, b.run.suite_name);
    differ("seed", std::to_string(a.run.seed), std::to_string(b.run.seed));
    differ("gnncheck version", a.run.gnncheck_version, b.run.gnncheck_version);
    differ("shard count", std::to_string(a.run.share->of), std::to_string(b.run.share->of));
    differ("systems named on the command line", fmt::format("[{}]", fmt::join(a.run.override_systems, ", ")),
           fmt::format("[{}]", fmt::join(b.run.override_systems, ", ")));
    const bool same_plan = a.run.plan.size() == b.run.plan.size() &&
                           std::equal(a.run.plan.begin(), a.run.plan.end(), b.run.plan.begin(), [](const auto& x, const auto& y) {
                             return key_of(x) == key_of(y) && x.units == y.units && x.overridden == y.overridden &&
                                    x.expectation == y.expectation && x.seed == y.seed;
                           });
    if (!same_plan)
      throw InputError(fmt::format("report merge: shards of different runs: {} and {} planned different tasks (other "
                                   "entries, targets, systems or case counts)",
                                   where(a), where(b)));
  }
  std::map<int, const ShardReport*> parts;
  for (const auto& s : shards)
    if (auto [it, fresh] = parts.emplace(s.run.share->part, &s); !fresh)
      throw InputError(fmt::format("report merge: shard {}/{} given twice: {} and {}", s.run.share->part, s.run.share->of,
                                   where(*it->second), where(s)));
}

std::string shard_list(const std::set<int>& parts, int of) {
  std::vector<std::string> names;
  for (int p : parts) names.push_back(fmt::format("{}/{}", p, of));
  return fmt::format("{}", fmt::join(names, ", "));
}

ResultRecord not_tested(const reports::PlannedTask& t, const std::set<int>& missing, int of) {
  ResultRecord r;
  r.entry = t.entry;
  r.system = t.system;
  r.target = t.target;
  r.check = t.check;
  r.expectation = t.expectation;
  r.seed = t.seed;
  r.outcome = Outcome::not_tested;
  r.expectation_held = false;
  r.message = fmt::format("not tested: shard{} {} of this run {} not merged (no report given), and {} units of this task",
                          missing.size() == 1 ? "" : "s", shard_list(missing, of), missing.size() == 1 ? "was" : "were",
                          missing.size() == 1 ? "it holds" : "they hold");
  return r;
}

// A shard's counterexample copied under the merged report, its re-run line pointing there.
void adopt_counterexample(ResultRecord& r, const std::filesystem::path& shard_dir, const std::filesystem::path& output) {
  if (r.counterexample.empty()) return;
  const std::filesystem::path from = shard_dir / r.counterexample, to = output / r.counterexample;
  std::error_code ec;
  std::filesystem::create_directories(to.parent_path(), ec);
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) throw InputError(fmt::format("report merge: cannot copy {} to {}: {}", from.string(), to.string(), ec.message()));
  if (r.repro.rfind("gnncheck repro ", 0) == 0) r.repro = "gnncheck repro " + shell_quote(to.string());
}

}  // namespace

void settle_expectations(std::vector<ResultRecord>& results, const std::vector<bool>& overridden,
                         const std::vector<std::string>& override_systems) {
  // A replica is caught where a check failed on it: within an entry for a suite's replica entries;
  // anywhere in the run for a planted bug named on the command line with `--expect caught`. An
  // `error` catches nothing, whoever's fault: a crash, a timeout or an unreadable answer is a broken
  // system, not a wrong answer found (and an error of the suite, the machine or gnncheck says
  // nothing about the replica at all). A check that does not catch it is no missed expectation by
  // itself; a bug that no check caught is, and then all of its results are marked (unless the
  // system could not run here at all).
  auto catch_key = [&](std::size_t i) { return std::pair{overridden[i] ? std::string() : results[i].entry, results[i].system}; };
  std::map<std::pair<std::string, std::string>, bool> caught;  // (entry, system)
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].expectation != Expectation::caught) continue;
    bool& c = caught[catch_key(i)];
    c = c || results[i].outcome == Outcome::fail;
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].expectation != Expectation::caught) continue;
    if (results[i].outcome == Outcome::not_tested || results[i].outcome == Outcome::skipped) continue;  // decided above
    const bool was_caught = caught.at(catch_key(i));
    results[i].expectation_held = was_caught;
    if (!was_caught && results[i].outcome != Outcome::pass)
      results[i].message += overridden[i] ? " — and no check of the run failed on the system"
                                          : " — and no other check of this entry caught the replica";
  }

  // A system the user named on the command line that concluded nothing anywhere in the run (every
  // target unsupported by it, every case declined) was not tested: never a success.
  for (const auto& name : override_systems) {
    bool any_conclusive = false, any_result = false;
    for (const auto& r : results)
      if (r.system == name) {
        any_result = true;
        any_conclusive = any_conclusive || r.conclusive > 0 || r.outcome == Outcome::fail || r.outcome == Outcome::error;
      }
    if (!any_result || any_conclusive) continue;
    for (auto& r : results)
      if (r.system == name && r.expectation_held) {
        r.message = fmt::format("system '{}' concluded nothing in this run ({}: {}), so it was not tested", name,
                                to_string(r.outcome), r.message);
        r.outcome = Outcome::not_tested;
        r.expectation_held = false;
      }
  }
}

void settle_shard_expectations(std::vector<ResultRecord>& results) {
  for (auto& r : results)
    if (r.expectation == Expectation::caught && r.outcome != Outcome::not_tested && r.outcome != Outcome::skipped)
      r.expectation_held = true;
}

reports::RunReport merge_shard_reports(const std::vector<ShardReport>& shards, const std::filesystem::path& output) {
  check_same_run(shards);
  const reports::RunReport& first = shards.front().run;
  const int of = first.share->of;
  std::set<int> present, missing;
  for (const auto& s : shards) present.insert(s.run.share->part);
  for (int p = 1; p <= of; ++p)
    if (!present.count(p)) missing.insert(p);

  reports::RunReport run;
  run.gnncheck_version = first.gnncheck_version;
  run.suite_name = first.suite_name;
  run.suite_path = first.suite_path;
  run.seed = first.seed;
  run.started_utc = first.started_utc;
  for (const auto& s : shards) {
    run.seconds += s.run.seconds;  // the shards' seconds together
    run.started_utc = std::min(run.started_utc, s.run.started_utc);
    if (run.interrupted_by.empty()) run.interrupted_by = s.run.interrupted_by;
    for (const auto& sys : s.run.systems)
      if (std::none_of(run.systems.begin(), run.systems.end(), [&](const auto& x) { return x.name == sys.name; }))
        run.systems.push_back(sys);
  }

  // Each shard's records by task, with the shard they came from.
  std::map<Key, std::vector<std::pair<const ShardReport*, const ResultRecord*>>> by_task;
  std::set<Key> planned;
  for (const auto& t : first.plan) planned.insert(key_of(t));
  for (const auto& s : shards)
    for (const auto& r : s.run.results) by_task[key_of(r)].push_back({&s, &r});

  std::vector<bool> overridden;
  std::int64_t unit = 0;  // the task's first unit
  for (const auto& t : first.plan) {
    const std::int64_t first_unit = unit;
    unit += t.units;
    auto owner = [&](std::int64_t j) { return static_cast<int>((first_unit + j) % of) + 1; };
    const auto& parts = by_task[key_of(t)];
    overridden.push_back(t.overridden);
    std::set<int> owed;  // missing shards holding units this result needs
    ResultRecord r;
    const bool chunked = !parts.empty() && std::all_of(parts.begin(), parts.end(), [](const auto& p) { return p.second->chunked.has_value(); });
    if (chunked) {
      std::vector<ResultRecord> records;
      for (const auto& p : parts) records.push_back(*p.second);
      r = combine_chunks(records);
      const std::int64_t needed = r.chunked->ended_at >= 0 ? r.chunked->ended_at + 1 : t.units;
      std::set<std::int64_t> ran;
      for (const auto& k : r.chunked->ran) ran.insert(k.index);
      for (std::int64_t j = 0; j < needed; ++j)
        if (!ran.count(j)) owed.insert(owner(j));
      for (const auto& p : parts)
        if (p.second->chunked->ended_at == r.chunked->ended_at && r.chunked->ended_at >= 0) adopt_counterexample(r, p.first->dir, output);
    } else if (!parts.empty()) {
      // A task that draws no cases, was decided before running, or was not run (a stop, the time
      // budget): its one record.
      const auto& one = *std::find_if(parts.begin(), parts.end(), [](const auto& p) { return !p.second->chunked; });
      r = *one.second;
      adopt_counterexample(r, one.first->dir, output);
    } else {
      for (std::int64_t j = 0; j < t.units; ++j) owed.insert(owner(j));
    }
    std::set<int> owed_missing;
    for (int p : owed)
      if (missing.count(p)) owed_missing.insert(p);
    if (!owed.empty()) {
      const std::int64_t cases = r.cases, conclusive = r.conclusive;
      r = not_tested(t, owed_missing.empty() ? owed : owed_missing, of);
      if (owed_missing.empty())
        r.message = fmt::format("not tested: shard {} of this run has no result for its units of this task", shard_list(owed, of));
      r.cases = cases;
      r.conclusive = conclusive;
    }
    r.chunked.reset();
    run.results.push_back(std::move(r));
  }
  // Results outside the plan (a sanitizer's, one per entry and system) as each shard made them.
  for (const auto& s : shards)
    for (const auto& r : s.run.results)
      if (!planned.count(key_of(r))) {
        run.results.push_back(r);
        overridden.push_back(std::find(first.override_systems.begin(), first.override_systems.end(), r.system) !=
                             first.override_systems.end());
      }
  settle_expectations(run.results, overridden, first.override_systems);
  return run;
}

}  // namespace gnncheck::suites
