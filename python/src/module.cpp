// gnncheck/python/src/module.cpp — the `gnncheck._core` extension module: the engine, in process.
//
// The Python package (python/gnncheck/) is the public API; this module gives it the catalogue of
// targets, the suite lookup of the `gnncheck` command, a suite run on a Python system
// (session.h) and the re-run of a saved counterexample. Every engine call that evaluates cases runs
// with the GIL released; the Python system takes it back for each evaluation.
//
//   from gnncheck import _core
//   run = _core.run_suite(suite_path, "spmm", system, seed=None, report_dir="out")
//   scale = _core.run_scale(system, "spmm", "rmat:14", rows=200, seed=1, rerun="…", report_dir="out")
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <fmt/format.h>

#include "adapters/protocol.h"
#include "checks/checks.h"
#include "core/error.h"
#include "oracle/target_listing.h"
#include "oracle/targets.h"
#include "properties/counterexample.h"
#include "python_system.h"
#include "scale/neighbourhood.h"
#include "scale_session.h"
#include "session.h"
#include "suites/runner.h"
#include "suites/suite.h"

namespace py = pybind11;
using namespace gnncheck;

namespace {

py::object optional_number(const std::optional<double>& v) { return v ? py::cast(*v) : py::none(); }

py::object attribute_value(const AttrValue& v) {
  return std::visit([](const auto& x) -> py::object { return py::cast(x); }, v);
}

py::dict slot_dict(const oracle::TensorSlot& s) {
  py::dict d;
  d["name"] = s.name;
  d["kind"] = std::string(oracle::to_string(s.kind));
  d["differentiable"] = s.differentiable;
  d["index_range"] = s.index_range;  // an index tensor's bound attribute ("relations"); empty for a value tensor
  return d;
}

py::dict target_dict(const oracle::TargetDef& def) {
  const auto& spec = def.spec;
  py::dict d;
  d["name"] = spec.name;
  d["is_layer"] = spec.is_layer;
  d["summary"] = spec.summary;
  d["needs_square_graph"] = spec.needs_square_graph;
  py::list inputs, parameters, outputs, attributes;
  for (const auto& s : spec.inputs) (s.kind == oracle::TensorKind::parameter ? parameters : inputs).append(slot_dict(s));
  for (const auto& s : spec.outputs) outputs.append(slot_dict(s));
  for (const auto& a : spec.attributes) {
    py::dict ad;
    ad["name"] = a.name;
    ad["default"] = attribute_value(a.default_value);
    ad["help"] = a.help;
    attributes.append(ad);
  }
  d["inputs"] = inputs;
  d["parameters"] = parameters;
  d["outputs"] = outputs;
  d["attributes"] = attributes;
  d["formula"] = spec.formula;
  d["conventions"] = spec.conventions;
  return d;
}

// The Python system: {name, targets: {target: precision}, evaluate, live_bytes, implemented, on_device,
// accumulation: {target: precision} or None}.
std::shared_ptr<python::CallableState> callable_state(const py::dict& system) {
  python::CallableSpec spec;
  spec.name = system["name"].cast<std::string>();
  for (const auto& [target, precision] : system["targets"].cast<py::dict>())
    spec.targets[target.cast<std::string>()] = parse_precision(precision.cast<std::string>());
  // {target: {attribute: [values]}}: read by the protocol's one parser, as an adapter's hello is.
  if (system.contains("implemented") && !system["implemented"].is_none())
    for (const auto& [target, declared] : system["implemented"].cast<py::dict>()) {
      const std::string name = target.cast<std::string>();
      const std::string json_text = py::module_::import("json").attr("dumps")(declared).cast<std::string>();
      spec.implemented[name] = protocol::parse_implemented_attributes(name, json_text);
    }
  if (system.contains("accumulation") && !system["accumulation"].is_none())
    for (const auto& [target, accumulation] : system["accumulation"].cast<py::dict>()) {
      const std::string name = target.cast<std::string>();
      const Precision a = parse_precision(accumulation.cast<std::string>());
      if (!spec.targets.count(name) || !accumulation_fits(spec.targets.at(name), a))
        throw InputError(fmt::format("target '{}': accumulation {} is coarser than its precision, or the target is "
                                     "not declared", name, to_string(a)));
      spec.accumulation[name] = a;
    }
  spec.evaluate = system["evaluate"];
  spec.live_bytes = system.contains("live_bytes") ? py::object(system["live_bytes"]) : py::object(py::none());
  spec.on_device = system.contains("on_device") && system["on_device"].cast<bool>();
  return std::make_shared<python::CallableState>(std::move(spec));
}

py::dict result_dict(const reports::ResultRecord& r, const std::filesystem::path& report_dir) {
  py::dict d;
  d["entry"] = r.entry;
  d["system"] = r.system;
  d["target"] = r.target;
  d["check"] = r.check;
  d["outcome"] = std::string(reports::to_string(r.outcome));
  d["expectation_held"] = r.expectation_held;
  d["precision"] = r.precision;
  d["metric_name"] = r.metric_name;
  d["metric"] = optional_number(r.metric);
  d["bound"] = optional_number(r.bound);
  d["tolerance_model"] = r.tolerance_model;
  d["seed"] = r.seed;
  d["cases"] = r.cases;
  d["conclusive_cases"] = r.conclusive;
  d["message"] = r.message;
  d["counterexample"] = r.counterexample.empty() ? py::object(py::none())
                                                 : py::cast((report_dir / r.counterexample).lexically_normal().string());
  d["engine_repro"] = r.repro;
  d["seconds"] = r.seconds;
  return d;
}

// A run's report as run_suite and merge_reports return it: the run's fields and its results.
py::dict run_dict(const reports::RunReport& report, const std::filesystem::path& report_dir) {
  py::dict d;
  d["suite_name"] = report.suite_name;
  d["suite_path"] = report.suite_path;
  d["seed"] = report.seed;
  d["seconds"] = report.seconds;
  d["interrupted_by"] = report.interrupted_by;
  d["share"] = report.share ? py::object(py::make_tuple(report.share->part, report.share->of)) : py::object(py::none());
  py::list results;
  for (const auto& r : report.results) results.append(result_dict(r, report_dir));
  d["results"] = results;
  return d;
}

py::dict run_suite(const std::filesystem::path& suite_path, const std::string& target, const py::dict& system,
                   std::optional<std::uint64_t> seed, const std::filesystem::path& report_dir, bool write_reports,
                   const std::vector<std::string>& only, const std::string& suite_argument, const py::object& progress,
                   const py::object& rerun, const std::optional<std::pair<int, int>>& share) {
  auto state = callable_state(system);
  python::SessionRequest request;
  request.suite_path = suite_path;
  request.target = target;
  request.seed = seed;
  request.report_dir = report_dir;
  request.write_reports = write_reports;
  request.only = only;
  request.suite_argument = suite_argument;
  request.version = GNNCHECK_VERSION;
  if (share) request.share = suites::parse_case_share(fmt::format("{}/{}", share->first, share->second));
  if (!rerun.is_none()) {
    request.rerun = [&rerun](const std::string& entry, const std::string& check, const std::string& counterexample) {
      py::gil_scoped_acquire gil;
      return rerun(entry, check, counterexample.empty() ? py::object(py::none()) : py::cast(counterexample)).cast<std::string>();
    };
  }
  python::SessionProgress on_progress;
  if (!progress.is_none()) {
    on_progress = [&progress](const suites::TaskLabel& task, const reports::ResultRecord* result) {
      py::gil_scoped_acquire gil;
      py::dict label;
      label["entry"] = task.entry;
      label["system"] = task.system;
      label["target"] = task.target;
      label["check"] = task.check;
      py::object outcome = result ? py::cast(std::string(reports::to_string(result->outcome))) : py::object(py::none());
      try {
        progress(label, outcome);
      } catch (py::error_already_set& e) {
        e.discard_as_unraisable(progress);  // a broken progress printer must not stop the run
      }
    };
  }
  python::SessionResult out;
  {
    py::gil_scoped_release release;
    out = python::run_session(request, state, on_progress);
  }
  return run_dict(out.report, report_dir);
}

py::dict merge_reports(const std::vector<std::filesystem::path>& shard_dirs, const std::filesystem::path& output) {
  reports::RunReport merged;
  {
    py::gil_scoped_release release;
    merged = python::merge_session_reports(shard_dirs, output);
  }
  return run_dict(merged, output);
}

py::dict saved_case_dict(const properties::SavedCase& saved) {
  py::dict d;
  d["target"] = saved.c.target;
  d["system"] = saved.system;
  d["check"] = std::string(checks::to_string(saved.check));
  d["seed"] = saved.c.seed;
  d["n_dst"] = saved.c.graph->n_dst();
  d["n_src"] = saved.c.graph->n_src();
  d["num_edges"] = saved.c.graph->num_edges();
  d["graph"] = saved.c.graph->summary();
  py::dict attrs;
  for (const auto& [name, value] : saved.c.attributes.values()) attrs[py::str(name)] = attribute_value(value);
  d["attributes"] = attrs;
  d["verdict_message"] = saved.verdict_message;
  return d;
}

py::dict repro(const std::filesystem::path& case_dir, const py::dict& system) {
  const properties::SavedCase saved = properties::load_counterexample(case_dir);
  auto state = callable_state(system);
  if (!state->spec().targets.count(saved.c.target))
    throw InputError(fmt::format("{}: the case is of target '{}'; the callable was declared for {}", case_dir.string(),
                                 saved.c.target, state->spec().targets.begin()->first));
  auto sys = python::make_python_system(state);
  checks::Verdict v;
  {
    py::gil_scoped_release release;
    v = checks::run_check(saved.check, *sys, saved.c);
  }
  py::dict d = saved_case_dict(saved);
  d["system"] = v.system;
  d["passed"] = v.passed();
  d["conclusion"] = std::string(checks::to_string(v.conclusion));
  d["precision"] = std::string(to_string(v.precision));
  d["tensor"] = v.tensor;
  d["metric_name"] = v.metric_name;
  d["metric"] = v.metric;
  d["bound"] = v.bound;
  d["system_status"] = std::string(to_string(v.system_status));
  d["one_line"] = checks::one_line(v);
  d["message"] = checks::failure_message(v);
  d["detail"] = v.detail;
  return d;
}

py::dict scale_result_dict(const python::ScaleSessionResult& out) {
  const scale::ScaleResult& r = out.result;
  py::dict d;
  d["system"] = r.system;
  d["target"] = r.target;
  d["graph"] = r.graph_description;
  d["graph_summary"] = r.graph_summary;
  d["precision"] = std::string(to_string(r.precision));
  d["outcome"] = std::string(reports::to_string(r.outcome));
  d["expectation_held"] = out.record.expectation_held;
  d["nothing_compared"] = r.nothing_compared;
  d["message"] = r.message;
  d["summary"] = scale::summary_text(r);
  d["tolerance_model"] = r.tolerance_model;
  d["seed"] = r.seed;
  d["metric_name"] = out.record.metric_name;
  d["metric"] = optional_number(out.record.metric);
  d["bound"] = optional_number(out.record.bound);
  py::list comparisons;
  for (const auto& c : r.comparisons) {
    py::dict cd;
    cd["tensor"] = c.tensor;
    cd["agrees"] = c.agrees();
    cd["elements"] = c.elements;
    cd["elements_over_bound"] = c.elements_over_bound;
    cd["worst_ratio"] = c.worst_ratio;
    comparisons.append(cd);
  }
  d["comparisons"] = comparisons;
  if (r.worst) {
    py::dict w;
    w["tensor"] = r.worst->tensor;
    w["index"] = r.worst->index;
    w["actual"] = r.worst->actual;
    w["expected"] = r.worst->expected;
    w["bound"] = r.worst->bound;
    w["ratio"] = r.worst->ratio;
    w["where"] = r.worst->where;
    d["worst"] = w;
  } else {
    d["worst"] = py::none();
  }
  d["compared_elements"] = r.compared_elements;
  d["zero_checked_elements"] = r.zero_checked_elements;
  py::list rows;
  for (const auto& row : r.rows) rows.append(py::make_tuple(row.row, std::string(scale::to_string(row.stratum)), row.in_degree));
  d["rows"] = rows;
  py::dict strata;
  for (const auto& [stratum, count] : scale::stratum_counts(r.rows)) strata[py::str(std::string(scale::to_string(stratum)))] = count;
  d["strata"] = strata;
  d["hub_edge_budget"] = r.hub_edge_budget;
  d["hub_source_budget"] = r.hub_source_budget;
  d["neighbourhood_edges"] = r.neighbourhood_edges;
  d["neighbourhood_sources"] = r.neighbourhood_sources;
  d["padding_edges"] = r.padding_edges;
  py::dict seconds;
  seconds["graph"] = out.graph_seconds;
  seconds["inputs"] = r.seconds.inputs;
  seconds["system"] = r.seconds.system;
  seconds["oracle"] = r.seconds.oracle;
  seconds["sampling"] = r.seconds.sampling;
  seconds["neighbourhood"] = r.seconds.neighbourhood;
  seconds["exact"] = r.seconds.exact;
  seconds["bounds"] = r.seconds.bounds;
  seconds["compare"] = r.seconds.compare;
  seconds["total"] = out.total_seconds;
  d["seconds"] = seconds;
  return d;
}

py::dict run_scale(const py::dict& system, const std::string& target, const std::string& graph, std::int64_t rows,
                   std::optional<std::int64_t> hub_edges, std::optional<std::int64_t> hub_sources, std::uint64_t seed,
                   double magnitude, std::optional<std::int64_t> features, std::optional<std::int64_t> hidden_features,
                   std::optional<std::int64_t> out_features, std::optional<std::int64_t> heads, std::optional<std::string> norm, const std::string& rerun,
                   const std::filesystem::path& report_dir) {
  auto state = callable_state(system);
  python::ScaleRequest request;
  request.target = target;
  request.graph = graph;
  request.widths = {.features = features, .hidden_features = hidden_features, .out_features = out_features, .heads = heads, .norm = norm};
  request.rows = rows;
  request.hub_edges = hub_edges;
  request.hub_sources = hub_sources;
  request.seed = seed;
  request.magnitude = magnitude;
  request.rerun_command = rerun;
  request.report_dir = report_dir;
  request.version = GNNCHECK_VERSION;
  python::validate_scale_request(request);  // with the GIL: a bad option is raised before anything runs
  python::ScaleSessionResult out;
  {
    py::gil_scoped_release release;
    out = python::run_scale_session(request, state);
  }
  return scale_result_dict(out);
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "gnncheck's engine (oracle, generators, checks, shrinking, runner), in process";
  m.attr("version") = GNNCHECK_VERSION;
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);

  m.def("targets", [] {
    py::list out;
    for (const auto& def : oracle::all_targets()) out.append(target_dict(def));
    return out;
  }, "The catalogue: every op and layer with its inputs, parameters, outputs and attributes.");
  m.def("describe_target", [](const std::string& name) { return oracle::describe_target(oracle::find_target(name)); },
        py::arg("target"), "The text of `gnncheck list TARGET`: formula, conventions, tensors with shapes, attributes.");
  m.def("check_names", &suites::known_check_names, "The names a suite's `checks:` accepts.");
  m.def("precisions", [] {
    std::vector<std::string> out;
    for (auto p : {Precision::float64, Precision::float32, Precision::tf32, Precision::bfloat16, Precision::float16})
      out.emplace_back(to_string(p));
    return out;
  });
  m.def("accumulation_fits", [](const std::string& storage, const std::string& accumulation) {
    return accumulation_fits(parse_precision(storage), parse_precision(accumulation));
  });
  m.def("resolve_suite", [](const std::string& name, const std::filesystem::path& executable_dir) {
    return suites::resolve_suite(name, executable_dir).string();
  }, py::arg("name"), py::arg("executable_dir"),
        "The `gnncheck` command's suite lookup: a path, or a shipped name (ci, default, full, …).");
  m.def("suite_info", [](const std::filesystem::path& path) {
    const suites::Suite s = suites::load_suite(path);
    py::dict d;
    d["name"] = s.name;
    d["path"] = s.path;
    d["seed"] = s.seed;
    std::vector<std::string> entries;
    for (const auto& e : s.entries) entries.push_back(e.name);
    d["entries"] = entries;
    return d;
  }, py::arg("path"));
  m.def("run_suite", &run_suite, py::arg("suite_path"), py::arg("target"), py::arg("system"), py::arg("seed") = py::none(),
        py::arg("report_dir") = std::filesystem::path(), py::arg("write_reports") = true,
        py::arg("only") = std::vector<std::string>{}, py::arg("suite_argument") = "", py::arg("progress") = py::none(),
        py::arg("rerun") = py::none(), py::arg("share") = py::none(),
        "Runs a suite, narrowed to `target`, on the Python system {name, targets, evaluate, live_bytes}; with "
        "share=(part, of), only that shard of the run (gnncheck run --share PART/OF).");
  m.def("merge_reports", &merge_reports, py::arg("shard_dirs"), py::arg("output"),
        "Merges the reports of a run's shards (run_suite with share=) into the whole run's, written to `output` as "
        "`gnncheck report merge` writes it; returns it as run_suite does.");
  m.def("load_counterexample", [](const std::filesystem::path& dir) { return saved_case_dict(properties::load_counterexample(dir)); },
        py::arg("case_dir"));
  m.def("scale_targets", [] { return scale::supported_targets(); },
        "The targets a scale check supports (`gnncheck scale` lists the same).");
  m.def("run_scale", &run_scale, py::arg("system"), py::arg("target"), py::arg("graph"), py::arg("rows"), py::arg("hub_edges"),
        py::arg("hub_sources"), py::arg("seed"), py::arg("magnitude"), py::arg("features"), py::arg("hidden_features"),
        py::arg("out_features"), py::arg("heads"), py::arg("norm"), py::arg("rerun"), py::arg("report_dir"),
        "`gnncheck scale` on the Python system {name, targets, evaluate, live_bytes}: the graph built on the host, the "
        "sampled rows held to the exact oracle; returns the result as a dict.");
  m.def("repro", &repro, py::arg("case_dir"), py::arg("system"),
        "Re-runs the saved check on a saved counterexample with the Python system; returns the verdict.");
}
