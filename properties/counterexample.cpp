#include "properties/counterexample.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fixtures/matrix_market.h"
#include "fixtures/npy.h"
#include "core/error.h"
#include "oracle/targets.h"

namespace gnncheck::properties {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json attribute_json(const AttrValue& v) {
  switch (v.index()) {
    case 0: return std::get<bool>(v);
    case 1: return std::get<std::int64_t>(v);
    case 2: return std::get<double>(v);
    default: return std::get<std::string>(v);
  }
}

// Non-finite numbers are not JSON; they are written as strings "inf", "-inf", "nan".
json number_json(double x) {
  if (std::isfinite(x)) return x;
  return std::isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf");
}

json tensors_json(const fs::path& dir, const std::string& group, const TensorMap& tensors) {
  json files = json::object();
  if (tensors.empty()) return files;
  fs::create_directories(dir / group);
  for (const auto& [name, t] : tensors) {
    const std::string file = group + "/" + name + ".npy";
    write_npy(dir / file, t);
    files[name] = file;
  }
  return files;
}

const json& field(const json& j, const std::string& name, const fs::path& file) {
  if (!j.is_object() || !j.contains(name))
    throw InputError(fmt::format("{}: missing field '{}'", file.string(), name));
  return j.at(name);
}

TensorMap load_tensors(const fs::path& dir, const json& files, const std::string& group, const fs::path& manifest) {
  TensorMap out;
  if (!files.is_object())
    throw InputError(fmt::format("{}: field 'files.{}' must be an object of name -> .npy path", manifest.string(), group));
  for (const auto& [name, path] : files.items()) {
    if (!path.is_string())
      throw InputError(fmt::format("{}: field 'files.{}.{}' must be a path string", manifest.string(), group, name));
    out.emplace(name, read_npy_f64(dir / path.get<std::string>()));
  }
  return out;
}

}  // namespace

std::string repro_command(const fs::path& dir) { return fmt::format("gnncheck repro {}", dir.string()); }

void write_counterexample(const fs::path& dir, const Case& c, const checks::Verdict& verdict,
                          const CounterexampleProvenance& provenance) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create the counterexample directory: {}", dir.string(), ec.message()));
  if (!c.graph) throw InternalError("write_counterexample: case has no graph");
  write_matrix_market(dir / "graph.mtx", *c.graph, nullptr,
                      fmt::format("gnncheck counterexample: {} check, system {}, target {}, seed {}",
                                  to_string(verdict.check), verdict.system, c.target, c.seed));
  json manifest;
  manifest["format"] = kCounterexampleFormat;
  manifest["target"] = c.target;
  manifest["seed"] = c.seed;
  manifest["system"] = verdict.system;
  manifest["check"] = std::string(to_string(verdict.check));
  json attrs = json::object();
  for (const auto& [name, value] : c.attributes.values()) attrs[name] = attribute_json(value);
  manifest["attributes"] = attrs;
  manifest["graph"] = {{"file", "graph.mtx"}, {"n_dst", c.graph->n_dst()}, {"n_src", c.graph->n_src()},
                       {"edges", c.graph->num_edges()}};
  manifest["files"] = {{"inputs", tensors_json(dir, "inputs", c.inputs)},
                       {"parameters", tensors_json(dir, "parameters", c.parameters)},
                       {"grad_outputs", tensors_json(dir, "grad_outputs", c.grad_outputs)}};
  json v;
  v["passed"] = verdict.passed();
  v["conclusion"] = std::string(checks::to_string(verdict.conclusion));
  v["tensor"] = verdict.tensor;
  v["precision"] = std::string(to_string(verdict.precision));
  v["tolerance"] = verdict.tolerance_model;
  v["metric_name"] = verdict.metric_name;
  v["metric"] = number_json(verdict.metric);
  v["bound"] = number_json(verdict.bound);
  v["system_status"] = std::string(to_string(verdict.system_status));
  if (verdict.worst)
    v["worst"] = {{"index", verdict.worst->index}, {"flat_index", verdict.worst->flat_index},
                  {"actual", number_json(verdict.worst->actual)}, {"expected", number_json(verdict.worst->expected)},
                  {"bound", number_json(verdict.worst->bound)}};
  v["message"] = verdict.message;
  manifest["verdict"] = v;
  manifest["rapidcheck"] = {{"seed", provenance.rapidcheck_seed}, {"reproduce", provenance.reproduce}};
  manifest["rerun"] = provenance.rerun.empty() ? repro_command(dir) : provenance.rerun;
  std::ofstream out(dir / "case.json");
  if (!out) throw InputError(fmt::format("{}: cannot write", (dir / "case.json").string()));
  out << manifest.dump(2) << "\n";
}

SavedCase load_counterexample(const fs::path& dir) {
  const fs::path manifest_path = dir / "case.json";
  std::ifstream in(manifest_path);
  if (!in) throw InputError(fmt::format("{}: cannot open (is {} a counterexample directory?)", manifest_path.string(),
                                        dir.string()));
  json m;
  try {
    m = json::parse(in);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON: {}", manifest_path.string(), e.what()));
  }
  const int format = field(m, "format", manifest_path).get<int>();
  if (format != kCounterexampleFormat)
    throw InputError(fmt::format("{}: field 'format' is {}, this gnncheck reads format {}", manifest_path.string(),
                                 format, kCounterexampleFormat));
  SavedCase saved;
  try {
    oracle::set_target_by_name(saved.c, field(m, "target", manifest_path).get<std::string>());
    saved.c.seed = field(m, "seed", manifest_path).get<std::uint64_t>();
    saved.system = field(m, "system", manifest_path).get<std::string>();
    saved.check = checks::parse_check_kind(field(m, "check", manifest_path).get<std::string>());
    for (const auto& [name, value] : field(m, "attributes", manifest_path).items()) {
      if (value.is_boolean()) saved.c.attributes.set(name, value.get<bool>());
      else if (value.is_number_integer()) saved.c.attributes.set(name, value.get<std::int64_t>());
      else if (value.is_number_float()) saved.c.attributes.set(name, value.get<double>());
      else if (value.is_string()) saved.c.attributes.set(name, value.get<std::string>());
      else
        throw InputError(fmt::format("{}: attribute '{}' must be a boolean, number or string", manifest_path.string(),
                                     name));
    }
    const json& graph = field(m, "graph", manifest_path);
    LoadedGraph loaded = read_matrix_market_graph(dir / field(graph, "file", manifest_path).get<std::string>());
    saved.c.graph = std::make_shared<const Graph>(std::move(loaded.graph));
    const json& files = field(m, "files", manifest_path);
    saved.c.inputs = load_tensors(dir, field(files, "inputs", manifest_path), "inputs", manifest_path);
    saved.c.parameters = load_tensors(dir, field(files, "parameters", manifest_path), "parameters", manifest_path);
    saved.c.grad_outputs = load_tensors(dir, field(files, "grad_outputs", manifest_path), "grad_outputs", manifest_path);
    if (m.contains("verdict") && m["verdict"].contains("message"))
      saved.verdict_message = m["verdict"]["message"].get<std::string>();
    if (m.contains("rapidcheck")) {
      saved.provenance.rapidcheck_seed = m["rapidcheck"].value("seed", std::uint64_t{0});
      saved.provenance.reproduce = m["rapidcheck"].value("reproduce", std::string());
    }
    saved.provenance.rerun = m.value("rerun", std::string());
  } catch (const json::type_error& e) {
    throw InputError(fmt::format("{}: a field has the wrong type: {}", manifest_path.string(), e.what()));
  }
  return saved;
}

}  // namespace gnncheck::properties
