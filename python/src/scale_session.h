// gnncheck/python/src/scale_session.h — one `gnncheck.check_scale(...)` call: `gnncheck scale` on a
// Python system, in process.
//
// The same check as the command (scale/scale_check.h) on the same PythonSystem that
// `gnncheck.check` uses (python_system.h): the options are validated first, in the Python call's
// spelling (`hub_edges`, not `--hub-edges`), then the command's own dispatch
// (suites/scale_where_system_runs.h) builds the graph on the host with the command's generators
// (scale/graph_spec.h: the same graph spec and seed give the same graph), the system is evaluated
// once on the whole graph and its sampled rows are held to the exact oracle.
// The caller releases the GIL around run_scale_session(); the system takes it for its evaluation.
//
//   gnncheck::python::ScaleRequest request{.target = "spmm", .graph = "rmat:14", .rows = 200};
//   gnncheck::python::ScaleSessionResult out = gnncheck::python::run_scale_session(request, state);
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "python_system.h"
#include "scale/scale_check.h"
#include "scale/scale_entry.h"

namespace gnncheck::python {

struct ScaleRequest {
  std::string target;
  std::string graph;  // kronecker:SCALE | rmat:SCALE[,EDGE_FACTOR] | FILE
  scale::TargetOptions widths;
  std::int64_t rows = 1000;
  std::optional<std::int64_t> hub_edges;    // default: scale::kDefaultHubEdgeBudget
  std::optional<std::int64_t> hub_sources;  // default: scale::kDefaultHubSourceBudget
  std::uint64_t seed = 1;
  double magnitude = 1.0;
  std::string rerun_command;          // the Python side's one re-run line, printed in the summary
  std::filesystem::path report_dir;   // report.json, junit.xml, summary.md, index.html, scale_rows.json; empty: none
  std::string version;                // gnncheck's version, for the report
};

struct ScaleSessionResult {
  scale::ScaleResult result;
  reports::ResultRecord record;  // as written to report.json (check "scale", entry "scale")
  double graph_seconds = 0.0;    // building the graph on the host
  double total_seconds = 0.0;    // graph, check and reports
};

// Throws InputError, in the Python call's spelling, for bad options — before the graph is built —
// and for a graph file that cannot be read. Never throws for a fault of the system (the result's
// outcome is error, with the reason).
void validate_scale_request(const ScaleRequest& request);
ScaleSessionResult run_scale_session(const ScaleRequest& request, const std::shared_ptr<CallableState>& state);

// An InputError's message with a leading command-line flag in the Python call's spelling
// ("--hub-edges must be …" → "hub_edges must be …"): the scale check's own messages name the flags
// of `gnncheck scale`.
std::string in_python_spelling(const std::string& message);

}  // namespace gnncheck::python
