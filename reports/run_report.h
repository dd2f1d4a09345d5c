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
#include <utility>
#include <vector>

namespace gnncheck::reports {

// The version of report.json's layout (reports/SCHEMA.md). Bumped on any incompatible change.
inline constexpr int kReportSchemaVersion = 2;

// What a check concluded about one (system, target, check). Only `pass` passes: every other
// outcome says why nothing was verified, and a result whose expectation is `pass` holds only with
// `pass` — or with `not_applicable` / `skipped`, which are neutral (see expectation_held).
enum class Outcome {
  pass,            // every conclusive case stayed within its bound, and there was at least one
  fail,            // some case exceeded its bound (or broke a property): a counterexample was saved
  error,           // the system errored, crashed, timed out or answered with invalid tensors
  not_applicable,  // the check says nothing about this target or system (e.g. finite differences of a
                   // float32 system; op_order on a target without degree normalization)
  inconclusive,    // cases ran, but none could decide (e.g. a kink on every probed input)
  not_tested,      // a required system did not start, or answered no case of the entry
  skipped,         // not run here: an optional system is unavailable, or the system does not implement
                   // a target the entry names
};
std::string_view to_string(Outcome o);
Outcome parse_outcome(std::string_view name);  // throws InputError on an unknown name

// The current time as ISO 8601 UTC ("2026-12-01T12:00:00Z"), as reports record it.
std::string utc_timestamp();
const std::vector<Outcome>& all_outcomes();

// What the suite expected: a correct system passes; a bug replica is caught (a check fails on it;
// an error — crash, timeout, unreadable answer — is a broken system and catches nothing).
enum class Expectation { pass, caught };
std::string_view to_string(Expectation e);
Expectation parse_expectation(std::string_view name);  // throws InputError on an unknown name

// True when `outcome` satisfies `expected`. `pass` is met by pass, and by the neutral not_applicable
// and skipped; never by inconclusive or not_tested. `caught` is met by fail only (a replica that
// could not run at all is decided by the runner, which knows whether the system was available).
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

// Where the element that broke its bound sits on the counterexample's graph.
enum class ElementPlace {
  none,         // a parameter's element, or a scalar the check formed over the whole case (adjoint)
  destination,  // row `mark` of a [n_dst, …] node tensor
  source,       // row `mark` of a [n_src, …] node tensor
  edge,         // edge id `mark` of an edge tensor (an eShuffled tensor's position already mapped to its edge id)
};
std::string_view to_string(ElementPlace p);
ElementPlace parse_element_place(std::string_view name);  // throws InputError on an unknown name

// The element of a counterexample that broke its bound, and where it sits on the graph.
struct CounterexampleElement {
  std::string tensor{};               // the element's tensor, as the verdict names it ("gradient x")
  std::vector<std::int64_t> index{};  // its multi-index over the tensor's shape ([] for a scalar)
  ElementPlace place = ElementPlace::none;
  std::int64_t mark = -1;             // the node or edge id `place` refers to (-1 for none)
  double got = 0.0;                   // the system's value
  double expected = 0.0;              // the reference value
  double bound = 0.0;                 // the element's bound
};

// A saved failing case as the reports show it without reading the case directory: the graph and
// the worst element (reports/counterexample_case.h builds it from the case's graph and the verdict).
struct CounterexampleCase {
  // Graphs with more edges than this keep only their sizes here; graph.mtx in the case directory has them all.
  static constexpr std::int64_t kMaxRecordedEdges = 256;

  std::int64_t n_dst = 0;
  std::int64_t n_src = 0;
  std::int64_t n_edges = 0;
  // (destination, source) of every edge in edge-id order; empty when n_edges > kMaxRecordedEdges.
  std::vector<std::pair<std::int64_t, std::int64_t>> edges{};
  std::optional<CounterexampleElement> element{};  // absent when the verdict named none (the system errored, …)

  bool edges_recorded() const { return static_cast<std::int64_t>(edges.size()) == n_edges; }
  bool square() const { return n_dst == n_src; }
};

// What a failing system computed instead (checks/diagnosis.h): the known-wrong variant of the
// target that reproduces its answer on the counterexample, or — none matching — what the wrong
// elements share in graph terms. Present only on failures whose answer could be diagnosed.
struct DiagnosisRecord {
  bool matched = false;
  std::string variant{};                     // the simplest matching variant ("transposed_graph_in_backward")
  std::string bug_class{};                   // its class ("a_for_at")
  std::string description{};                 // the mistake in words
  std::vector<std::string> also_matching{};  // other matching variants, simplest first
  std::vector<std::string> matching_classes{};  // the bug classes of every matching variant, the named one first
  std::vector<std::string> shared{};         // none matched: what every wrong element shares
  std::int64_t variants_tried = 0;
  std::string text{};                        // the sentence the message carries
};

// What the cases of one chunk of a check task came to (suites/SCHEMA.md, "Splitting a run"): a
// task's cases are cut into chunks of a fixed size, each drawn from its own seed, so that a run split
// into shards and merged gives the answer of the whole run.
struct CaseChunk {
  std::int64_t index = 0;
  std::int64_t drawn = 0, conclusive = 0, unsupported = 0, not_applicable = 0, inconclusive = 0;
  std::int64_t points = 0;  // its entries of error_vs_bound, which hold the chunks' points in chunk order
  std::int64_t moved = 0;   // of the conclusive, compared moved within the softmax analysis
};

// A reason with the chunk it was first seen in (-1: none seen).
struct ChunkReason {
  std::int64_t chunk = -1;
  std::string text{};
};

// How many cases of one chunk one cause held back, and the first reason of that cause there.
struct ChunkCause {
  std::int64_t chunk = 0;
  std::int64_t cases = 0;
  std::string text{};
};

// How a chunk ended the drawing of its task's cases, when it did.
enum class ChunkEnd { none, failure, source_error, stopped };

// The chunks of one check task that one run (a shard) ran, enough for `gnncheck report merge` to
// combine shards exactly as the whole run combines chunks. Written to report.json by shards only.
struct ChunkedCases {
  std::int64_t of = 1;                // the task's chunks
  std::vector<CaseChunk> ran{};       // those run here, in chunk order
  std::int64_t ended_at = -1;         // the chunk that ended the drawing (failure, error, stop); -1: none
  ChunkEnd end = ChunkEnd::none;
  std::string end_text{};             // source_error / stopped: the reason, without the counts
  std::int64_t worst_chunk = -1;      // the chunk whose case set metric/bound (no failure); -1: none
  ChunkReason first_unsupported{}, first_not_applicable{}, first_inconclusive{};
  std::vector<ChunkCause> inconclusive_causes{};  // each chunk's causes of inconclusive cases
  std::string notes{};                // lines the runner adds to the message (coverage, loosened bounds)
};

struct ResultRecord {
  std::string entry{};            // the suite entry this result belongs to
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
  std::string tolerance_model{};   // how that bound was formed (checks' tolerance model, with its constants)
  std::uint64_t seed = 0;        // re-running with this seed repeats the result exactly
  std::int64_t cases = 0;        // how many cases were drawn
  std::int64_t conclusive = 0;   // of those, how many decided (the system answered and the check could judge)
  std::string message{};           // why it failed, errored or was skipped; empty on a plain pass
  // An `error` that is not the system's (the suite's case could not be built, the sanitizer's logs
  // are incomplete, a scale check compared nothing, gnncheck itself failed). No error catches a
  // replica (expectation_held); this says whose it was. Kept in memory; not written to report.json.
  bool error_not_of_the_system = false;
  std::string counterexample{};    // directory of the saved failing case, relative to the report dir
  std::string repro{};             // a command line that re-runs exactly this result
  double seconds = 0.0;
  std::vector<ErrorPoint> error_vs_bound{};  // per case, for the plots (may be empty)
  std::vector<Curve> curves{};               // accuracy gates: loss per epoch, system and oracle
  std::optional<CounterexampleCase> counterexample_case{};  // the saved case's graph and worst element
  std::optional<DiagnosisRecord> diagnosis{};  // a failure: which known-wrong variant the answer matches
  std::optional<ChunkedCases> chunked{};  // a shard's check task: the chunks it ran (absent in whole runs)
};

// A system as the run saw it.
struct SystemRecord {
  std::string name;
  std::string kind;  // builtin, gpu, replica, adapter, plugin, python
  bool available = true;
  std::string reason;  // why not available
  std::string bug;     // replicas: the bug it reproduces (empty otherwise)
};

// The part of a run's units a shard ran (`gnncheck run --share PART/OF`): unit u of the plan is run
// by part u mod OF + 1 (suites/SCHEMA.md, "Splitting a run").
struct RunShare {
  int part = 1, of = 1;
  bool whole() const { return of == 1; }
};

// One task of a shard's plan, as `gnncheck report merge` needs it: which result it is, how many units
// it has (its chunks of cases; 1 for a task that draws none) and whether its system was named on the
// command line in place of the entry's own.
struct PlannedTask {
  std::string entry, system, target, check;
  std::int64_t units = 1;
  bool overridden = false;
  Expectation expectation = Expectation::pass;
  std::uint64_t seed = 0;
};

struct RunReport {
  int schema_version = kReportSchemaVersion;
  std::string gnncheck_version;
  std::string suite_name;
  std::string suite_path;
  std::uint64_t seed = 0;
  std::optional<RunShare> share;  // set when the run was one shard of a split run
  // Shards only: every task of the run's plan in order (units numbered across it), and the systems
  // named on the command line, so that the merge can tell what each shard owed.
  std::vector<PlannedTask> plan;
  std::vector<std::string> override_systems;
  std::string started_utc;  // ISO 8601
  double seconds = 0.0;
  std::vector<SystemRecord> systems;
  std::vector<ResultRecord> results;
  // Set when the run was stopped by a signal (SIGINT, SIGTERM): the results are those finished before
  // it, the rest are `not_tested`, and the run never counts as a success.
  std::string interrupted_by;

  // Counts over `results`: outcomes of the results that expect `pass`; replicas' results only as
  // replica_results and the (entry, replica) pairs caught or missed.
  struct Totals {
    std::int64_t results = 0, passed = 0, failed = 0, errors = 0, not_applicable = 0, inconclusive = 0, not_tested = 0,
                 skipped = 0, expectations_unmet = 0;
    std::int64_t replica_results = 0;
    std::int64_t replicas_caught = 0, replicas_missed = 0;  // (entry, replica) pairs expected `caught`
  };
  Totals totals() const;
  bool all_expectations_held() const { return interrupted_by.empty() && totals().expectations_unmet == 0; }
};

}  // namespace gnncheck::reports
