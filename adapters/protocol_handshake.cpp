// gnncheck/adapters/protocol_handshake.cpp — the protocol's lines on an adapter's stdout
// (PROTOCOL.md §1–2): the hello line with its targets, precisions and attribute declarations, and
// the done line that answers a case.
#include "adapters/protocol.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "oracle/targets.h"

namespace gnncheck::protocol {
using nlohmann::json;

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

}  // namespace gnncheck::protocol
