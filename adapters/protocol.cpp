// gnncheck/adapters/protocol.cpp — gnncheck's side of a case directory (PROTOCOL.md §3–5): a Case
// written as case.json and its tensors, and the adapter's answer read back with every check of §5.
// The hello and done lines: protocol_handshake.cpp; the adapter's side: protocol_adapter_side.cpp.
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

void write_case_tensor(const fs::path& path, const Tensor& t, NpyDType dtype) {
  if (dtype == NpyDType::float64) write_npy(path, t);
  else write_npy(path, cast<float>(t));
}

namespace {

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

}  // namespace

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
    write_case_tensor(dir / e.file, *t, dtype);
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
      write_case_tensor(dir / e.file, it->second, dtype);
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

}  // namespace gnncheck::protocol
