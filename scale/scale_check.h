// gnncheck/scale/scale_check.h — a big graph checked against the exact oracle on sampled rows.
//
// run_scale_check evaluates the system on the WHOLE graph, forward and backward, with an output
// gradient that is nonzero only on K sampled destination rows (scale/row_sampling.h). Each sampled
// output row and every gradient is then fixed by those rows' neighbourhood (scale/neighbourhood.h),
// which the float64 oracle evaluates exactly and checks' ToleranceModel bounds as it would any
// case; every gradient element outside the neighbourhood must be exactly 0. The cost beyond the
// system's own run grows with the sampled rows' edges, plus linear passes over the graph (sampling,
// gathering, the zero check), never with a full oracle evaluation.
//
//   auto sys = gnncheck::make_cpu_float32_system();
//   auto g = std::make_shared<const gnncheck::Graph>(gnncheck::rmat({.scale = 16}, 1));
//   gnncheck::scale::ScaleResult r = gnncheck::scale::run_scale_check(*sys, g, {.target = &gnncheck::scale::supported_target("spmm"), .rows = 1000});
//   std::cout << gnncheck::scale::summary_text(r);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/system.h"
#include "checks/tolerance.h"
#include "checks/verdict.h"
#include "reports/run_report.h"
#include "oracle/targets.h"
#include "scale/row_sampling.h"

namespace gnncheck::scale {

// How many of the tolerance model's evaluations of the neighbourhood a scale check runs side by side
// unless told (`--oracle-evaluations`): half the hardware threads, and at least the 3 of
// checks::ToleranceOptions. The evaluations are mostly serial work (fresh tensors' page faults, one
// thread's passes), so on many cores more of them at once is what shortens the oracle part
// (docs/scale-figures.md, "Oracle evaluations side by side"); values never change.
int default_oracle_evaluations();

struct ScaleOptions {
  // The target's catalogue entry (scale::supported_target resolves a name); required.
  const oracle::TargetDef* target = nullptr;
  Attributes attributes = {};  // the target's (features, heads, norm); unset ones take their defaults
  index_t rows = 1000;    // K
  std::uint64_t seed = 1;  // inputs, output gradient and row sampling (the graph is built by the caller)
  double input_magnitude = 1.0;  // inputs and output gradient uniform in [−M, M) (e.g. 1e3: large attention logits)
  index_t edge_offset_limit = index_t{1} << 31;
  index_t hub_edge_budget = kDefaultHubEdgeBudget;      // the highest in-degree rows' edges together (row_sampling.h)
  index_t hub_source_budget = kDefaultHubSourceBudget;  // … and the distinct sources they read together
  checks::ToleranceOptions tolerance = {.concurrent_evaluations = default_oracle_evaluations()};
  std::string graph_description = {};  // e.g. "rmat:20,10", for messages
  std::string rerun_command = {};      // the one command line that repeats this check
};

// The element that came closest to (or furthest past) its bound, in the big case's coordinates.
struct WorstElement {
  std::string tensor;               // "output y", "gradient x", "gradient x outside the neighbourhood"
  std::vector<index_t> index;       // into the big tensor
  double actual = 0.0, expected = 0.0, bound = 0.0;
  double ratio = 0.0;               // |actual − expected| / bound (∞ past a bound of 0)
  std::string where;                // "row 17 (highest in-degree)", "edge 93 of row 17 (random)", …
};

struct ScaleTimings {
  double graph = 0.0;    // building the graph where the system runs (device-resident checks; the command times a host graph itself)
  double inputs = 0.0;   // the big case's inputs and output gradient
  double system = 0.0;   // the system's evaluation of the whole graph
  double oracle = 0.0;   // sampling, the neighbourhood, its exact values and bounds: the four below
  double sampling = 0.0;       // choosing the rows (and, on a device, fetching the offsets)
  double neighbourhood = 0.0;  // its graph and its inputs, gathered from the big case
  double exact = 0.0;          // the float64 oracle's own evaluation of it (run beside the bounds' evaluations)
  double bounds = 0.0;         // the rest of that wall time: the tolerance model's own evaluations and bounds
  double compare = 0.0;  // gathering and comparing, the zero check outside
};

struct ScaleResult {
  std::string system, target, graph_description, graph_summary;
  Precision precision = Precision::float64;
  reports::Outcome outcome = reports::Outcome::error;
  std::string message;  // why it failed or errored; empty on a pass
  std::vector<checks::TensorComparison> comparisons;
  std::optional<WorstElement> worst;
  index_t compared_elements = 0;      // inside the neighbourhood (the zero check not counted)
  bool nothing_compared = false;      // the system answered, but no element could be compared: an error, never a catch
  index_t zero_checked_elements = 0;  // gradient elements outside it, held to exactly 0
  std::vector<SampledRow> rows;
  index_t hub_edge_budget = 0, hub_source_budget = 0;
  index_t neighbourhood_edges = 0, neighbourhood_sources = 0, padding_edges = 0;
  std::string tolerance_model;
  std::uint64_t seed = 0;
  std::string rerun_command;
  ScaleTimings seconds;
  std::int64_t device_peak_bytes = 0;  // device-resident checks: the allocator's peak over the whole check (0: not measured)
  std::int64_t system_peak_bytes = 0;  // … over the system's evaluation alone (what it holds then, inputs and graph included)
};

// Never throws for a fault of the system (an error, a missing or misshapen tensor: outcome error).
// Throws InputError for an unsupported target or bad options.
ScaleResult run_scale_check(System& system, std::shared_ptr<const Graph> graph, const ScaleOptions& options);

// What `gnncheck scale` prints: verdict, strata, worst element, bound, timings, re-run line.
std::string summary_text(const ScaleResult& r);
// The result as reports' record (check "scale"), for reports::write_all.
reports::ResultRecord to_result_record(const ScaleResult& r);

}  // namespace gnncheck::scale
