#include "adapters/protocol.h"

#include <cmath>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "oracle/targets.h"

namespace gnncheck::protocol {
namespace fs = std::filesystem;
using nlohmann::json;

NpyDType case_dtype(Precision precision) {
  return precision == Precision::float64 ? NpyDType::float64 : NpyDType::float32;
}

std::string_view adapter_status_name(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::unsupported: return "unsupported";
    default: return "error";
  }
}

namespace {

void write_tensor(const fs::path& path, const Tensor& t, NpyDType dtype) {
  if (dtype == NpyDType::float64) write_npy(path, t);
  else write_npy(path, cast<float>(t));
}

json entry_json(const TensorEntry& e, bool with_kind) {
  json j = {{"name", e.name}, {"file", e.file}, {"shape", e.shape}, {"dtype", std::string(to_string(e.dtype))}};
  if (with_kind) {
    j["kind"] = e.kind;
    j["differentiable"] = e.differentiable;
    if (!e.index_range.empty()) j["index_range"] = e.index_range;
  }
  return j;
}

json attributes_json(const Attributes& attrs) {
  json j = json::object();
  for (const auto& [name, value] : attrs.values())
    std::visit([&, &name = name](const auto& v) { j[name] = v; }, value);
  return j;
}

const Tensor* find_input(const Case& c, const std::string& name) {
  if (auto it = c.inputs.find(name); it != c.inputs.end()) return &it->second;
  if (auto it = c.parameters.find(name); it != c.parameters.end()) return &it->second;
  return nullptr;
}

Result invalid(std::string message) {
  Result r;
  r.status = Status::invalid_output;
  r.message = std::move(message);
  return r;
}

// Reads one answered tensor; an empty string means it is readable and stored in `out`. Its values
// are not judged here: a NaN or Inf where the exact result is finite is a wrong answer, which the
// check comparing it reports as a failure with the element (PROTOCOL.md §5), not an unreadable one.
std::string read_answer_tensor(const fs::path& dir, const TensorEntry& e, const char* what, Tensor& out) {
  const fs::path path = dir / e.file;
  if (!fs::exists(path)) return fmt::format("{} '{}': the adapter did not write {}", what, e.name, e.file);
  NpyArray array;
  try {
    array = read_npy(path);
  } catch (const InputError& err) {
    return fmt::format("{} '{}': {}", what, e.name, err.what());
  }
  if (array.dtype() != e.dtype)
    return fmt::format("{} '{}': {} holds {} values; the case asked for {}", what, e.name, e.file,
                       to_string(array.dtype()), to_string(e.dtype));
  if (array.shape() != e.shape)
    return fmt::format("{} '{}': {} has shape {}; expected {}", what, e.name, e.file, array.shape(), e.shape);
  out = e.dtype == NpyDType::float64 ? std::get<Tensor>(array.tensor) : cast<double>(std::get<TensorF>(array.tensor));
  return {};
}

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

namespace {

std::string_view without_carriage_return(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

std::optional<std::string_view> payload_after_last(std::string_view line, std::string_view token) {
  line = without_carriage_return(line);
  const size_t at = line.rfind(token);
  if (at == std::string_view::npos) return std::nullopt;
  return line.substr(at + token.size());
}

}  // namespace

std::optional<std::string_view> hello_payload(std::string_view line) { return payload_after_last(line, kHelloPrefix); }

std::optional<std::string_view> done_payload(std::string_view line) { return payload_after_last(line, kDonePrefix); }

bool is_done_line_for(std::string_view line, std::string_view dir) {
  line = without_carriage_return(line);
  if (!line.ends_with(dir)) return false;
  line.remove_suffix(dir.size());
  return line.ends_with(kDonePrefix);
}

namespace {

ImplementedAttributes implemented_from_json(const std::string& target, const json& attributes) {
  if (!attributes.is_object())
    throw InputError("'attributes' must be an object: attribute name -> the values implemented (a list, or one value)");
  ImplementedAttributes declared;
  for (const auto& [name, values] : attributes.items()) {
    std::vector<AttrValue>& into = declared[name];
    for (const json& v : values.is_array() ? values : json::array({values})) {
      if (v.is_boolean()) into.emplace_back(v.get<bool>());
      else if (v.is_number_integer()) into.emplace_back(v.get<std::int64_t>());
      else if (v.is_number()) into.emplace_back(v.get<double>());
      else if (v.is_string()) into.emplace_back(v.get<std::string>());
      else throw InputError(fmt::format("attribute '{}': expected booleans, numbers or strings, got {}", name, v.dump()));
    }
  }
  return oracle::validated_implemented_attributes(oracle::find_target(target).spec, declared);
}

}  // namespace

ImplementedAttributes parse_implemented_attributes(const std::string& target, std::string_view json_text) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {
    throw InputError(fmt::format("the attribute declaration of target '{}' is not valid JSON: {}", target, e.what()));
  }
  return implemented_from_json(target, j);
}

Hello parse_hello(std::string_view text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(fmt::format("the hello line is not valid JSON: {}", e.what()));
  }
  if (!j.is_object() || !j.contains("protocol") || !j["protocol"].is_number_integer())
    throw InputError("the hello line has no integer field 'protocol'");
  if (j["protocol"].get<std::int64_t>() != kVersion)
    throw InputError(
        fmt::format("the adapter speaks protocol {}; gnncheck speaks {}", j["protocol"].get<std::int64_t>(), kVersion));
  Hello hello;
  if (j.contains("name") && j["name"].is_string()) hello.name = j["name"].get<std::string>();
  if (!j.contains("targets") || !j["targets"].is_object())
    throw InputError("the hello line has no object field 'targets' (target name -> precision)");
  for (const auto& [target, declaration] : j["targets"].items()) {
    try {
      oracle::find_target(target);
    } catch (const InputError& e) {
      throw InputError(fmt::format("the hello line declares {}", e.what()));
    }
    // "spmm": "float32", or "gcn": {"precision": "float32", "attributes": {"source_degree": ["in"]}},
    // or "spmm": {"precision": "float16", "accumulation": "float32"}.
    const bool detailed = declaration.is_object();
    const json& precision = detailed && declaration.contains("precision") ? declaration["precision"] : declaration;
    if (detailed)
      for (const auto& [key, value] : declaration.items())
        if (key != "precision" && key != "accumulation" && key != "attributes")
          throw InputError(fmt::format("the hello line: target '{}': unknown key '{}'; expected precision, "
                                       "accumulation and attributes",
                                       target, key));
    if (detailed && declaration.contains("accumulation") && !declaration.contains("precision"))
      throw InputError(fmt::format("the hello line: target '{}': 'accumulation' without 'precision': declare the "
                                   "storage precision beside it",
                                   target));
    if (!precision.is_string())
      throw InputError(fmt::format("the hello line: target '{}': expected a precision string or an object "
                                   "{{\"precision\": …, \"attributes\": {{name: [values]}}}}",
                                   target));
    try {
      hello.targets[target] = parse_precision(precision.get<std::string>());
      if (detailed && declaration.contains("accumulation")) {
        const json& accumulation = declaration["accumulation"];
        if (!accumulation.is_string())
          throw InputError("field 'accumulation': expected a precision name (float64, float32, tf32, bfloat16, float16)");
        Precision a;
        try {
          a = parse_precision(accumulation.get<std::string>());
        } catch (const InputError& e) {
          throw InputError(fmt::format("field 'accumulation': {}", e.what()));
        }
        if (!accumulation_fits(hello.targets[target], a))
          throw InputError(fmt::format("field 'accumulation': {} is coarser than the precision {} (sums must be "
                                       "computed at least as finely, and with at least the range, as the values are "
                                       "stored)",
                                       to_string(a), to_string(hello.targets[target])));
        if (a != hello.targets[target]) hello.accumulation[target] = a;
      }
      if (detailed && declaration.contains("attributes"))
        hello.implemented[target] = implemented_from_json(target, declaration["attributes"]);
    } catch (const InputError& e) {
      throw InputError(fmt::format("the hello line: target '{}': {}", target, e.what()));
    }
  }
  if (hello.targets.empty())
    throw InputError("the hello line declares no targets: the adapter computes nothing that gnncheck could check");
  return hello;
}

CaseManifest write_case(const Case& c, NpyDType dtype, const fs::path& dir) {
  if (!c.graph) throw InputError("case has no graph");
  const oracle::TargetDef& def = oracle::entry_of(c);
  const Graph& g = *c.graph;
  CaseManifest m;
  m.target = c.target;
  m.seed = c.seed;
  m.dtype = dtype;
  m.attributes = oracle::validate_case(def, c);  // the oracle's and the GPU systems' validation
  m.n_dst = g.n_dst();
  m.n_src = g.n_src();
  m.num_edges = g.num_edges();
  m.measure_resources = c.memory_figures == MemoryFigures::read;
  const auto input_shapes = def.input_shapes(g, m.attributes);
  const auto output_shapes = def.output_shapes(g, m.attributes);
  const bool backward = !c.grad_outputs.empty();

  write_npy(dir / m.row_ptr_file, TensorI64({g.n_dst() + 1}, std::vector<index_t>(g.row_ptr().begin(), g.row_ptr().end())));
  write_npy(dir / m.col_idx_file, TensorI64({g.num_edges()}, std::vector<index_t>(g.col_idx().begin(), g.col_idx().end())));

  for (const auto& slot : def.spec.inputs) {
    if (!input_shapes.count(slot.name)) continue;  // optional and off for these attributes (bias = false)
    const Tensor* t = find_input(c, slot.name);
    const bool is_parameter = slot.kind == oracle::TensorKind::parameter;
    TensorEntry e{slot.name, std::string(oracle::to_string(slot.kind)), slot.differentiable,
                  fmt::format("{}_{}.npy", is_parameter ? "parameter" : "input", slot.name), t->shape(), dtype,
                  slot.index_range};
    write_tensor(dir / e.file, *t, dtype);
    (is_parameter ? m.parameters : m.inputs).push_back(e);
    if (backward && slot.differentiable)
      m.gradients.push_back({slot.name, e.kind, true, fmt::format("gradient_{}.npy", slot.name), t->shape(), dtype});
  }
  for (const auto& slot : def.spec.outputs) {
    const auto& shape = output_shapes.at(slot.name);
    m.outputs.push_back({slot.name, std::string(oracle::to_string(slot.kind)), slot.differentiable,
                         fmt::format("output_{}.npy", slot.name), shape, dtype});
    if (backward) {
      const auto it = c.grad_outputs.find(slot.name);
      TensorEntry e{slot.name, "", true, fmt::format("grad_output_{}.npy", slot.name), shape, dtype};
      write_tensor(dir / e.file, it->second, dtype);
      m.grad_outputs.push_back(e);
    }
  }

  json j = {{"protocol", kVersion},
            {"target", m.target},
            {"seed", m.seed},
            {"dtype", std::string(to_string(dtype))},
            {"attributes", attributes_json(m.attributes)},
            {"graph",
             {{"n_dst", m.n_dst}, {"n_src", m.n_src}, {"num_edges", m.num_edges}, {"row_ptr", m.row_ptr_file},
              {"col_idx", m.col_idx_file}}},
            {"result", m.result_file},
            {"measure_resources", m.measure_resources}};
  for (const auto& [key, list, with_kind] :
       {std::tuple{"inputs", &m.inputs, true}, std::tuple{"parameters", &m.parameters, true},
        std::tuple{"grad_outputs", &m.grad_outputs, false}, std::tuple{"outputs", &m.outputs, false},
        std::tuple{"gradients", &m.gradients, false}}) {
    j[key] = json::array();
    for (const auto& e : *list) j[key].push_back(entry_json(e, with_kind));
  }
  std::ofstream out(dir / "case.json");
  // Strings that are not UTF-8 (an attribute, a message from a plugin) are written with U+FFFD in
  // place of the bad bytes instead of making dump() throw.
  out << j.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
  if (!out) throw InputError(fmt::format("cannot write {}", (dir / "case.json").string()));
  return m;
}

namespace {

// result.json's byte count `field`, where it is a non-negative integer.
std::optional<std::int64_t> byte_count(const json& j, const char* field) {
  if (j.is_object() && j.contains(field) && j[field].is_number_integer() && j[field].get<std::int64_t>() >= 0)
    return j[field].get<std::int64_t>();
  return std::nullopt;
}

// result.json parsed; nullopt with `problem` set when it is missing or not JSON.
std::optional<json> read_result_json(const fs::path& dir, const CaseManifest& m, std::string& problem) {
  std::ifstream in(dir / m.result_file);
  if (!in) {
    problem = fmt::format("the adapter wrote no {}", m.result_file);
    return std::nullopt;
  }
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    problem = fmt::format("{} is not valid JSON: {}", m.result_file, e.what());
    return std::nullopt;
  }
}

// The answer of a parsed result.json.
Result result_of(const json& j, const fs::path& dir, const CaseManifest& m) {
  if (!j.is_object() || !j.contains("status") || !j["status"].is_string())
    return invalid(fmt::format("{} has no string field 'status' (expected ok, unsupported or error)", m.result_file));
  const std::string status = j["status"].get<std::string>();
  Result r;
  if (j.contains("message") && !j["message"].is_string())
    return invalid(fmt::format("{}: field 'message' must be a string", m.result_file));
  r.message = j.value("message", std::string());
  if (j.contains("seconds")) {
    if (!j["seconds"].is_number() || j["seconds"].get<double>() < 0)
      return invalid(fmt::format("{}: field 'seconds' must be a non-negative number", m.result_file));
    r.seconds = j["seconds"].get<double>();
  }
  if (j.contains("peak_bytes")) {
    if (!j["peak_bytes"].is_number_integer() || j["peak_bytes"].get<std::int64_t>() < 0)
      return invalid(fmt::format("{}: field 'peak_bytes' must be a non-negative integer", m.result_file));
    r.peak_bytes = j["peak_bytes"].get<std::int64_t>();
  }
  for (const char* field : {"live_bytes", "device_bytes"})
    if (j.contains(field) && (!j[field].is_number_integer() || j[field].get<std::int64_t>() < 0))
      return invalid(fmt::format("{}: field '{}' must be a non-negative integer", m.result_file, field));
  if (status == "unsupported" || status == "error") {
    r.status = status == "error" ? Status::error : Status::unsupported;
    if (r.message.empty()) r.message = fmt::format("the adapter answered '{}' without a message", status);
    return r;
  }
  if (status != "ok")
    return invalid(fmt::format("{}: status '{}' is not one of ok, unsupported, error", m.result_file, status));
  for (const auto& [what, entries, target] :
       {std::tuple{"output", &m.outputs, &r.outputs}, std::tuple{"gradient", &m.gradients, &r.gradients}}) {
    for (const auto& e : *entries) {
      Tensor t;
      if (std::string problem = read_answer_tensor(dir, e, what, t); !problem.empty())
        return invalid(std::move(problem));
      target->emplace(e.name, std::move(t));
    }
  }
  return r;
}

}  // namespace

Answer read_answer(const fs::path& dir, const CaseManifest& m) {
  std::string problem;
  const std::optional<json> j = read_result_json(dir, m, problem);
  if (!j) return {invalid(std::move(problem)), std::nullopt, std::nullopt};
  return {result_of(*j, dir, m), byte_count(*j, "live_bytes"), byte_count(*j, "device_bytes")};
}

Result read_result(const fs::path& dir, const CaseManifest& m) {
  return read_answer(dir, m).result;
}

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
  c.target = m.target;
  if (const oracle::TargetDef* def = oracle::lookup_target(m.target)) oracle::set_target(c, *def);
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
        write_tensor(dir / e.file, it->second, e.dtype);
      }
    }
  }
  std::ofstream out(dir / m.result_file);
  out << j.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
  if (!out) throw InputError(fmt::format("cannot write {}", (dir / m.result_file).string()));
}

}  // namespace gnncheck::protocol
