// gnncheck/adapters/protocol_adapter_side.cpp — the adapter's side of a case directory
// (PROTOCOL.md §3–5): case.json and its tensors read back into a Case, with errors naming the file
// and the field, and a Result written as result.json and its tensors. The C plugin host uses it;
// any C++ adapter may.
#include "adapters/protocol.h"

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "oracle/targets.h"

namespace gnncheck::protocol {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Typed access to case.json fields with errors naming the file and the field.
struct JsonReader {
  fs::path file;

  const json& field(const json& j, const std::string& name, const std::string& where) const {
    if (!j.is_object() || !j.contains(name))
      throw InputError(fmt::format("{}: {}field '{}' is missing", file.string(), where, name));
    return j.at(name);
  }
  std::string string(const json& j, const std::string& name, const std::string& where = "") const {
    const json& v = field(j, name, where);
    if (!v.is_string()) throw InputError(fmt::format("{}: {}field '{}' must be a string", file.string(), where, name));
    return v.get<std::string>();
  }
  std::int64_t integer(const json& j, const std::string& name, const std::string& where = "") const {
    const json& v = field(j, name, where);
    if (!v.is_number_integer())
      throw InputError(fmt::format("{}: {}field '{}' must be an integer", file.string(), where, name));
    return v.get<std::int64_t>();
  }
  std::vector<TensorEntry> entries(const json& j, const std::string& name) const {
    const json& list = field(j, name, "");
    if (!list.is_array()) throw InputError(fmt::format("{}: field '{}' must be a list", file.string(), name));
    std::vector<TensorEntry> out;
    for (size_t k = 0; k < list.size(); ++k) {
      const std::string where = fmt::format("{}[{}]: ", name, k);
      TensorEntry e;
      e.name = string(list[k], "name", where);
      e.file = string(list[k], "file", where);
      if (e.file.find('/') != std::string::npos || e.file == ".." || e.file.empty())
        throw InputError(fmt::format("{}: {}file '{}' must be a plain file name", file.string(), where, e.file));
      const json& shape = field(list[k], "shape", where);
      if (!shape.is_array()) throw InputError(fmt::format("{}: {}field 'shape' must be a list", file.string(), where));
      for (const auto& d : shape) {
        if (!d.is_number_integer() || d.get<std::int64_t>() < 0)
          throw InputError(fmt::format("{}: {}shape entries must be non-negative integers", file.string(), where));
        e.shape.push_back(d.get<std::int64_t>());
      }
      const std::string dtype = string(list[k], "dtype", where);
      if (dtype == "float64") e.dtype = NpyDType::float64;
      else if (dtype == "float32") e.dtype = NpyDType::float32;
      else throw InputError(fmt::format("{}: {}dtype '{}': expected float64 or float32", file.string(), where, dtype));
      if (list[k].contains("kind")) e.kind = string(list[k], "kind", where);
      if (list[k].contains("differentiable")) {
        if (!list[k].at("differentiable").is_boolean())
          throw InputError(fmt::format("{}: {}field 'differentiable' must be true or false", file.string(), where));
        e.differentiable = list[k].at("differentiable").get<bool>();
      }
      if (list[k].contains("index_range")) e.index_range = string(list[k], "index_range", where);
      out.push_back(std::move(e));
    }
    return out;
  }
};

std::vector<index_t> to_index_vector(const TensorI64& t) { return t.values(); }

}  // namespace

LoadedCase read_case(const fs::path& dir) {
  const fs::path file = dir / "case.json";
  JsonReader reader{file};
  json j;
  try {
    std::ifstream in(file);
    if (!in) throw InputError(fmt::format("{}: cannot be opened", file.string()));
    j = json::parse(in);
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: not valid JSON: {}", file.string(), e.what()));
  }
  LoadedCase out;
  CaseManifest& m = out.manifest;
  m.protocol = static_cast<int>(reader.integer(j, "protocol"));
  if (m.protocol != kVersion)
    throw InputError(fmt::format("{}: protocol {} is not supported (this reader speaks {})", file.string(), m.protocol, kVersion));
  m.target = reader.string(j, "target");
  // Checked before get<>: nlohmann's own type_error must not escape as something other than InputError.
  const json& seed = reader.field(j, "seed", "");
  if (!seed.is_number_unsigned()) throw InputError(fmt::format("{}: field 'seed' must be a non-negative integer", file.string()));
  m.seed = seed.get<std::uint64_t>();
  const std::string dtype = reader.string(j, "dtype");
  if (dtype != "float64" && dtype != "float32")
    throw InputError(fmt::format("{}: dtype '{}': expected float64 or float32", file.string(), dtype));
  m.dtype = dtype == "float64" ? NpyDType::float64 : NpyDType::float32;
  const json& attrs = reader.field(j, "attributes", "");
  if (!attrs.is_object()) throw InputError(fmt::format("{}: field 'attributes' must be an object", file.string()));
  for (const auto& [name, v] : attrs.items()) {
    if (v.is_boolean()) m.attributes.set(name, v.get<bool>());
    else if (v.is_number_integer()) m.attributes.set(name, v.get<std::int64_t>());
    else if (v.is_number()) m.attributes.set(name, v.get<double>());
    else if (v.is_string()) m.attributes.set(name, v.get<std::string>());
    else throw InputError(fmt::format("{}: attribute '{}' must be a boolean, number or string", file.string(), name));
  }
  const json& graph = reader.field(j, "graph", "");
  m.n_dst = reader.integer(graph, "n_dst", "graph: ");
  m.n_src = reader.integer(graph, "n_src", "graph: ");
  m.num_edges = reader.integer(graph, "num_edges", "graph: ");
  m.row_ptr_file = reader.string(graph, "row_ptr", "graph: ");
  m.col_idx_file = reader.string(graph, "col_idx", "graph: ");
  m.inputs = reader.entries(j, "inputs");
  m.parameters = reader.entries(j, "parameters");
  m.grad_outputs = reader.entries(j, "grad_outputs");
  m.outputs = reader.entries(j, "outputs");
  m.gradients = reader.entries(j, "gradients");
  m.result_file = reader.string(j, "result");
  if (j.contains("measure_resources")) {  // optional: a case of an older gnncheck measures everything
    if (!j["measure_resources"].is_boolean())
      throw InputError(fmt::format("{}: field 'measure_resources' must be true or false", file.string()));
    m.measure_resources = j["measure_resources"].get<bool>();
  }

  Case& c = out.c;
  oracle::set_target_by_name(c, m.target);
  c.seed = m.seed;
  c.memory_figures = m.measure_resources ? MemoryFigures::read : MemoryFigures::unread;
  c.attributes = m.attributes;
  std::vector<index_t> row_ptr = to_index_vector(read_npy_i64(dir / m.row_ptr_file));
  std::vector<index_t> col_idx = to_index_vector(read_npy_i64(dir / m.col_idx_file));
  if (static_cast<index_t>(col_idx.size()) != m.num_edges)
    throw InputError(fmt::format("{}: graph says num_edges = {} but {} holds {}", file.string(), m.num_edges,
                                 m.col_idx_file, col_idx.size()));
  c.graph = std::make_shared<const Graph>(Graph::from_csr(m.n_dst, m.n_src, std::move(row_ptr), std::move(col_idx)));
  for (const auto& [entries, target] : {std::pair{&m.inputs, &c.inputs}, std::pair{&m.parameters, &c.parameters},
                                        std::pair{&m.grad_outputs, &c.grad_outputs}}) {
    for (const auto& e : *entries) {
      Tensor t = read_npy_f64(dir / e.file);
      require_shape(t, e.shape, fmt::format("{}: tensor '{}' ({})", file.string(), e.name, e.file));
      target->emplace(e.name, std::move(t));
    }
  }
  return out;
}

void write_result(const fs::path& dir, const CaseManifest& m, const Result& r) {
  json j = {{"status", std::string(adapter_status_name(r.status))}, {"message", r.message}, {"seconds", r.seconds}};
  if (r.peak_bytes) j["peak_bytes"] = *r.peak_bytes;
  if (r.ok()) {
    for (const auto& [entries, source] : {std::pair{&m.outputs, &r.outputs}, std::pair{&m.gradients, &r.gradients}}) {
      for (const auto& e : *entries) {
        auto it = source->find(e.name);
        if (it == source->end())
          throw InternalError(fmt::format("write_result: the result has no tensor '{}' for {}", e.name, e.file));
        write_case_tensor(dir / e.file, it->second, e.dtype);
      }
    }
  }
  std::ofstream out(dir / m.result_file);
  out << j.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
  if (!out) throw InputError(fmt::format("cannot write {}", (dir / m.result_file).string()));
}

}  // namespace gnncheck::protocol
