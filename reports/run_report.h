// gnncheck/reports/run_report.h — what one `gnncheck run` found, in the form every report writer reads.
//
// A RunReport is the run's header (suite, seed, versions, the systems and whether they could run
// here) plus one ResultRecord per (system, target, check) the suite asked for. The writers in
// reports/writers.h turn it into report.json, junit.xml, summary.md and index.html; they depend on
// nothing but this header, so the runner, the checks and the writers can change independently.
//
//   gnncheck::reports::RunReport run;
//   run.suite_name = "default";
//   run.results.push_back({.system = "oracle", .target = "spmm", .check = "gradient",
//                          .outcome = gnncheck::reports::Outcome::pass});
//   gnncheck::reports::write_all(run, "out/");
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gnncheck::reports {

// The version of report.json's layout (reports/SCHEMA.md). Bumped on any incompatible change.
inline constexpr int kReportSchemaVersion = 1;

// What a check concluded about one (system, target, check).
enum class Outcome {
  pass,         // every case stayed within the bound
  fail,         // some case exceeded the bound (or broke a property): a counterexample was saved
  error,        // the system errored, crashed, timed out or answered with invalid tensors
  skipped,      // not run here: the system is unavailable or does not support the target
};
std::string_view to_string(Outcome o);
Outcome parse_outcome(std::string_view name);  // throws InputError on an unknown name

// What the suite expected: a correct system passes; a bug replica is caught (fail or error).
enum class Expectation { pass, caught };
std::string_view to_string(Expectation e);
Expectation parse_expectation(std::string_view name);  // throws InputError on an unknown name

// True when `outcome` satisfies `expected`. A skipped result satisfies either unless the system
// was required (the runner turns a skip of a required system into an error before this point).
bool expectation_held(Expectation expected, Outcome outcome);

// One point of an error-vs-bound plot: the largest error a case showed and the bound it was held to.
struct ErrorPoint {
  double metric = 0.0;
  double bound = 0.0;
};

// A named curve (e.g. training loss per epoch) for the loss-curve plots of accuracy gates.
struct Curve {
  std::string name;  // "oracle", "gpu", …
  std::vector<double> values;
};

struct ResultRecord {
  std::string system{};
  std::string target{};
  std::string check{};
  Outcome outcome = Outcome::pass;
  Expectation expectation = Expectation::pass;
  bool expectation_held = true;
  std::string precision{};        // the system's declared precision for this target ("float32", …)
  std::string metric_name{};      // what `metric` measures, e.g. "max |error| / bound"
  std::optional<double> metric{};  // the worst value measured over the cases
  std::optional<double> bound{};   // the bound the metric was held to
  std::uint64_t seed = 0;        // re-running with this seed repeats the result exactly
  std::int64_t cases = 0;        // how many cases were evaluated
  std::string message{};           // why it failed, errored or was skipped; empty on a plain pass
  std::string counterexample{};    // directory of the saved failing case, relative to the report dir
  std::string repro{};             // a command line that re-runs exactly this result
  double seconds = 0.0;
  std::vector<ErrorPoint> error_vs_bound{};  // per case, for the plots (may be empty)
  std::vector<Curve> curves{};               // accuracy gates: loss per epoch, system and oracle
};

// A system as the run saw it.
struct SystemRecord {
  std::string name;
  std::string kind;  // builtin, gpu, replica, adapter, plugin
  bool available = true;
  std::string reason;  // why not available
  std::string bug;     // replicas: the bug it reproduces (empty otherwise)
};

struct RunReport {
  int schema_version = kReportSchemaVersion;
  std::string gnncheck_version;
  std::string suite_name;
  std::string suite_path;
  std::uint64_t seed = 0;
  std::string started_utc;  // ISO 8601
  double seconds = 0.0;
  std::vector<SystemRecord> systems;
  std::vector<ResultRecord> results;

  // Counts over `results`.
  struct Totals {
    std::int64_t results = 0, passed = 0, failed = 0, errors = 0, skipped = 0, expectations_unmet = 0;
  };
  Totals totals() const;
  bool all_expectations_held() const { return totals().expectations_unmet == 0; }
};

}  // namespace gnncheck::reports
