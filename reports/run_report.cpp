#include "reports/run_report.h"

#include <ctime>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace gnncheck::reports {

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string_view to_string(Outcome o) {
  switch (o) {
    case Outcome::pass: return "pass";
    case Outcome::fail: return "fail";
    case Outcome::error: return "error";
    case Outcome::not_applicable: return "not applicable";
    case Outcome::inconclusive: return "inconclusive";
    case Outcome::not_tested: return "not tested";
    case Outcome::skipped: return "skipped";
  }
  return "unknown";
}

const std::vector<Outcome>& all_outcomes() {
  static const std::vector<Outcome> all = {Outcome::pass,         Outcome::fail,       Outcome::error,  Outcome::not_applicable,
                                           Outcome::inconclusive, Outcome::not_tested, Outcome::skipped};
  return all;
}

Outcome parse_outcome(std::string_view name) {
  std::vector<std::string> names;
  for (Outcome o : all_outcomes()) {
    if (to_string(o) == name) return o;
    names.emplace_back(to_string(o));
  }
  throw InputError(fmt::format("unknown outcome '{}'; expected one of: {}", name, fmt::join(names, ", ")));
}

std::string_view to_string(Expectation e) { return e == Expectation::pass ? "pass" : "caught"; }

Expectation parse_expectation(std::string_view name) {
  if (name == "pass") return Expectation::pass;
  if (name == "caught") return Expectation::caught;
  throw InputError(fmt::format("unknown expectation '{}'; expected pass or caught", name));
}

std::string_view to_string(ElementPlace p) {
  switch (p) {
    case ElementPlace::none: return "none";
    case ElementPlace::destination: return "destination";
    case ElementPlace::source: return "source";
    case ElementPlace::edge: return "edge";
  }
  return "none";
}

ElementPlace parse_element_place(std::string_view name) {
  for (ElementPlace p : {ElementPlace::none, ElementPlace::destination, ElementPlace::source, ElementPlace::edge})
    if (to_string(p) == name) return p;
  throw InputError(fmt::format("unknown element place '{}'; expected none, destination, source or edge", name));
}

bool expectation_held(Expectation expected, Outcome outcome) {
  if (expected == Expectation::pass)
    return outcome == Outcome::pass || outcome == Outcome::not_applicable || outcome == Outcome::skipped;
  return outcome == Outcome::fail;  // an error (crash, timeout, unreadable answer) found no wrong answer
}

RunReport::Totals RunReport::totals() const {
  Totals t;
  for (const auto& r : results) {
    ++t.results;
    if (!r.expectation_held) ++t.expectations_unmet;
    // A replica's results say whether it was caught, not whether it "failed": counted below.
    if (r.expectation == Expectation::caught) {
      ++t.replica_results;
      continue;
    }
    switch (r.outcome) {
      case Outcome::pass: ++t.passed; break;
      case Outcome::fail: ++t.failed; break;
      case Outcome::error: ++t.errors; break;
      case Outcome::not_applicable: ++t.not_applicable; break;
      case Outcome::inconclusive: ++t.inconclusive; break;
      case Outcome::not_tested: ++t.not_tested; break;
      case Outcome::skipped: ++t.skipped; break;
    }
  }
  // A replica is caught in an entry where a check failed on it there. Not "no result unmet": a
  // system named with `--expect caught` has every result met once any entry of the run catches it,
  // and an entry whose results only passed or errored has caught nothing. An entry where every
  // result is neutral (skipped: the bug cannot be expressed on its targets; not applicable) tried
  // nothing and is not counted; one the replica could not run in (not tested) is missed.
  struct EntryCatch {
    bool judged = false, caught = false;
  };
  std::map<std::pair<std::string, std::string>, EntryCatch> replica_entries;
  for (const auto& r : results)
    if (r.expectation == Expectation::caught) {
      EntryCatch& e = replica_entries[{r.entry, r.system}];
      e.judged = e.judged || (r.outcome != Outcome::skipped && r.outcome != Outcome::not_applicable);
      e.caught = e.caught || r.outcome == Outcome::fail;
    }
  for (const auto& [key, e] : replica_entries)
    if (e.judged) ++(e.caught ? t.replicas_caught : t.replicas_missed);
  return t;
}

}  // namespace gnncheck::reports
