#include "scale_session.h"

#include "session.h"

#include <cctype>
#include <chrono>

#include <fmt/format.h>

#include "core/error.h"
#include "reports/writers.h"
#include "scale/graph_spec.h"
#include "scale/neighbourhood.h"
#include "scale/scale_compare.h"  // require_valid_options: the check's own rule for rows, magnitude, hub edges
#include "suites/runner.h"
#include "suites/scale_where_system_runs.h"

namespace gnncheck::python {
namespace {

using Clock = std::chrono::steady_clock;

scale::ScaleOptions scale_options(const ScaleRequest& request) {
  scale::ScaleOptions o;
  o.target = &scale::supported_target(request.target);
  o.attributes = scale::target_attributes(request.target, request.widths, scale::OptionSpelling::python);
  o.rows = request.rows;
  if (request.hub_edges) o.hub_edge_budget = *request.hub_edges;
  if (request.hub_sources) o.hub_source_budget = *request.hub_sources;
  o.seed = request.seed;
  o.input_magnitude = request.magnitude;
  o.graph_description = request.graph;
  o.rerun_command = request.rerun_command;
  return o;
}

template <class F>
auto with_python_spelling(F&& f) {
  try {
    return f();
  } catch (const InputError& e) {
    throw InputError(in_python_spelling(e.what()));
  }
}

}  // namespace

std::string in_python_spelling(const std::string& message) {
  if (message.rfind("--", 0) != 0) return message;
  std::size_t end = 2;
  while (end < message.size() && (std::islower(static_cast<unsigned char>(message[end])) || message[end] == '-')) ++end;
  std::string option = message.substr(2, end - 2);
  for (char& c : option)
    if (c == '-') c = '_';
  return option + message.substr(end);
}

void validate_scale_request(const ScaleRequest& request) {
  with_python_spelling([&] {
    scale::supported_target(request.target);
    scale::require_valid_options(scale_options(request));
    scale::parse_graph_spec(request.graph);
    return 0;
  });
}

ScaleSessionResult run_scale_session(const ScaleRequest& request, const std::shared_ptr<CallableState>& state) {
  validate_scale_request(request);
  const scale::ScaleOptions options = scale_options(request);
  const std::string started = reports::utc_timestamp();
  const auto t0 = Clock::now();
  const auto system = make_python_system(state);
  // The dispatch `gnncheck scale` and a suite's scale family use; a Python system's graph is built on the host.
  suites::ScaleRun run = with_python_spelling(
      [&] { return suites::run_scale_where_system_runs(*system, scale::parse_graph_spec(request.graph), options); });
  ScaleSessionResult out;
  out.graph_seconds = run.graph_seconds;
  out.result = std::move(run.result);
  out.record = scale::to_result_record(out.result);
  // A check that compared nothing is an error of the check, never a pass (nor a catch).
  out.record.expectation_held = reports::expectation_held(reports::Expectation::pass, out.result.outcome) && !out.result.nothing_compared;
  out.record.error_not_of_the_system = out.result.nothing_compared;

  if (!request.report_dir.empty()) {
    reports::RunReport run;
    run.gnncheck_version = request.version;
    run.suite_name = "scale";
    run.suite_path = "(gnncheck.check_scale)";
    run.seed = request.seed;
    run.started_utc = started;
    reports::SystemRecord system_record;  // recorded as gnncheck.check records its callable
    system_record.name = out.result.system;
    system_record.kind = suites::system_kind_name(suites::SystemKind::python);
    run.systems.push_back(std::move(system_record));
    run.results.push_back(out.record);
    run.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    reports::write_all(run, request.report_dir);
    scale::write_sampled_rows(out.result, request.report_dir / "scale_rows.json");
  }
  out.total_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

}  // namespace gnncheck::python
