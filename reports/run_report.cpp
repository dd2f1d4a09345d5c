#include "reports/run_report.h"

#include <fmt/format.h>

#include "oracle/error.h"

namespace gnncheck::reports {

std::string_view to_string(Outcome o) {
  switch (o) {
    case Outcome::pass: return "pass";
    case Outcome::fail: return "fail";
    case Outcome::error: return "error";
    case Outcome::skipped: return "skipped";
  }
  return "unknown";
}

Outcome parse_outcome(std::string_view name) {
  for (Outcome o : {Outcome::pass, Outcome::fail, Outcome::error, Outcome::skipped})
    if (to_string(o) == name) return o;
  throw InputError(fmt::format("unknown outcome '{}'; expected pass, fail, error or skipped", name));
}

std::string_view to_string(Expectation e) { return e == Expectation::pass ? "pass" : "caught"; }

Expectation parse_expectation(std::string_view name) {
  if (name == "pass") return Expectation::pass;
  if (name == "caught") return Expectation::caught;
  throw InputError(fmt::format("unknown expectation '{}'; expected pass or caught", name));
}

bool expectation_held(Expectation expected, Outcome outcome) {
  if (outcome == Outcome::skipped) return true;
  if (expected == Expectation::pass) return outcome == Outcome::pass;
  return outcome == Outcome::fail || outcome == Outcome::error;
}

RunReport::Totals RunReport::totals() const {
  Totals t;
  for (const auto& r : results) {
    ++t.results;
    switch (r.outcome) {
      case Outcome::pass: ++t.passed; break;
      case Outcome::fail: ++t.failed; break;
      case Outcome::error: ++t.errors; break;
      case Outcome::skipped: ++t.skipped; break;
    }
    if (!r.expectation_held) ++t.expectations_unmet;
  }
  return t;
}

}  // namespace gnncheck::reports
