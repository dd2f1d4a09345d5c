#include "scale/scale_entry.h"

#include <fstream>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace gnncheck::scale {
namespace {

std::string value_text(const AttrValue& v) {
  return std::visit([](const auto& x) { return fmt::format("{}", x); }, v);
}

// Why the target refuses `attrs`, or "" — from the oracle itself on a 2-node case, so that the rule
// lives where the target is defined.
std::string refusal(const oracle::TargetDef& def, const Attributes& attrs) {
  static const auto probe = std::make_shared<const Graph>(Graph::from_csr(2, 2, {0, 1, 2}, {1, 0}));
  try {
    const Case c = oracle::make_random_case(def, probe, attrs, 1);
    const Result r = oracle::evaluate(c);
    return r.status == Status::error ? r.message : "";
  } catch (const InputError& e) {
    return e.what();
  }
}

}  // namespace

std::string option_name(std::string_view option, OptionSpelling spelling) {
  if (spelling == OptionSpelling::python) return std::string(option);
  std::string flag = "--" + std::string(option);
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

Attributes target_attributes(const std::string& target, const TargetOptions& options, OptionSpelling spelling) {
  const auto& def = oracle::find_target(target);
  auto accepts = [&](const std::string& name) {
    for (const auto& a : def.spec.attributes)
      if (a.name == name) return true;
    return false;
  };
  struct Given {
    std::string option, attribute;
    AttrValue value;
  };
  std::vector<Given> given;
  auto add = [&](const char* option, const std::string& attribute, const auto& value) {
    if (!value) return;
    if (!accepts(attribute))
      throw InputError(fmt::format("{}: target {} has no '{}' attribute", option_name(option, spelling), target, attribute));
    given.push_back({option, attribute, AttrValue(*value)});
  };
  add("features", accepts("in_features") ? "in_features" : "features", options.features);
  add("hidden_features", "hidden_features", options.hidden_features);
  add("out_features", "out_features", options.out_features);
  add("heads", "heads", options.heads);
  add("norm", "norm", options.norm);

  Attributes attrs;
  for (const Given& g : given) {
    Attributes alone;
    alone.set(g.attribute, g.value);
    if (const std::string why = refusal(def, alone); !why.empty())
      throw InputError(fmt::format("{} {}: {}", option_name(g.option, spelling), value_text(g.value), why));
    attrs.set(g.attribute, g.value);
  }
  if (given.size() > 1)
    if (const std::string why = refusal(def, attrs); !why.empty()) {
      std::vector<std::string> named;
      for (const Given& g : given) named.push_back(fmt::format("{} {}", option_name(g.option, spelling), value_text(g.value)));
      throw InputError(fmt::format("{} together: {}", fmt::join(named, ", "), why));
    }
  oracle::with_defaults(def.spec, attrs);
  return attrs;
}

void write_sampled_rows(const ScaleResult& r, const std::filesystem::path& file) {
  nlohmann::json j;
  j["system"] = r.system;
  j["target"] = r.target;
  j["graph"] = r.graph_description;
  j["graph_summary"] = r.graph_summary;
  j["seed"] = r.seed;
  j["verdict"] = std::string(reports::to_string(r.outcome));
  nlohmann::json counts = nlohmann::json::object();
  for (const auto& [stratum, count] : stratum_counts(r.rows)) counts[std::string(to_string(stratum))] = count;
  j["strata"] = counts;
  j["hub_edge_budget"] = r.hub_edge_budget;
  j["hub_source_budget"] = r.hub_source_budget;
  j["neighbourhood"] = {{"edges", r.neighbourhood_edges}, {"sources", r.neighbourhood_sources}, {"padding_edges", r.padding_edges}};
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : r.rows)
    rows.push_back({{"row", row.row}, {"stratum", std::string(to_string(row.stratum))}, {"in_degree", row.in_degree}});
  j["rows"] = std::move(rows);
  if (r.worst)
    j["worst"] = {{"tensor", r.worst->tensor}, {"index", r.worst->index}, {"where", r.worst->where}, {"actual", r.worst->actual},
                  {"expected", r.worst->expected}, {"bound", r.worst->bound}};
  j["seconds"] = {{"inputs", r.seconds.inputs},
                  {"system", r.seconds.system},
                  {"oracle", r.seconds.oracle},
                  {"oracle_parts",
                   {{"sampling", r.seconds.sampling}, {"neighbourhood", r.seconds.neighbourhood}, {"exact", r.seconds.exact}, {"bounds", r.seconds.bounds}}},
                  {"compare", r.seconds.compare}};
  j["rerun"] = r.rerun_command;
  std::ofstream out(file);
  out << j.dump(1) << "\n";
  if (!out) throw InputError(fmt::format("cannot write {}", file.string()));
}

}  // namespace gnncheck::scale
