#include "suites/cli/skeleton.h"

#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "oracle/target_listing.h"

namespace gnncheck::suites {
namespace {

// The input tensors a case carries for these attributes, on a small graph every target accepts.
std::set<std::string> present_inputs(const oracle::TargetDef& def, const Attributes& attrs) {
  static const Graph probe = Graph::from_csr(3, 3, {0, 1, 2, 3}, {1, 2, 0});
  std::set<std::string> names;
  for (const auto& [name, shape] : def.input_shapes(probe, attrs)) names.insert(name);
  return names;
}

}  // namespace

Skeleton make_skeleton(const oracle::TargetDef& def) {
  Skeleton s;
  s.def = &def;
  for (const auto& t : oracle::list_tensors(def)) s.tensors.push_back({t.name, t.role, t.lives, t.shape, t.differentiable, "", ""});
  for (const auto& slot : def.spec.inputs)
    for (auto& t : s.tensors)
      if (t.name == slot.name && t.role != "output") t.index_range = slot.index_range;
  // A tensor is optional when some value of one boolean or enumerated attribute, the others at their
  // defaults, leaves it out (bias = false; gspmm's e with message = copy_u, gsddmm's lhs_v with lhs = u or e).
  const Attributes defaults = oracle::with_defaults(def.spec, {});
  std::map<std::string, std::vector<std::string>> absent_with;  // tensor -> "attribute = values" where it is absent
  for (const auto& a : def.spec.attributes) {
    std::vector<AttrValue> values = a.choices;
    if (std::holds_alternative<bool>(a.default_value)) values = {AttrValue{false}, AttrValue{true}};
    if (values.empty()) continue;
    std::map<std::string, std::vector<std::string>> absent_values;
    for (const AttrValue& value : values) {
      Attributes varied = defaults;
      varied.set(a.name, value);
      std::set<std::string> present;
      try {
        present = present_inputs(def, varied);
      } catch (const InputError&) {
        continue;  // not a valid combination on the probe graph: it says nothing about optional tensors
      }
      for (const auto& t : s.tensors)
        if (t.role != "output" && !present.count(t.name)) absent_values[t.name].push_back(to_plain_string(value));
    }
    for (const auto& [tensor, absent] : absent_values) {
      if (absent.size() == values.size()) continue;  // absent whatever this attribute says: another one decides
      std::string listed = absent.back();
      if (absent.size() > 1)
        listed = fmt::format("{} or {}", fmt::join(absent.begin(), absent.end() - 1, ", "), absent.back());
      absent_with[tensor].push_back(fmt::format("{} = {}", a.name, listed));
    }
  }
  const std::set<std::string> at_defaults = present_inputs(def, defaults);
  for (auto& t : s.tensors) {
    if (t.role == "output") continue;
    if (absent_with.count(t.name)) t.absent_when = fmt::format("{}", fmt::join(absent_with.at(t.name), " or "));
    else if (!at_defaults.count(t.name)) t.absent_when = "the attributes do not read it";
  }
  std::set<std::string> tensor_names;
  for (const auto& t : s.tensors) tensor_names.insert(t.name);
  for (const auto& a : def.spec.attributes)
    s.attributes.push_back({a.name, tensor_names.count(a.name) ? a.name + "_attribute" : a.name,
                            static_cast<int>(a.default_value.index()), gnncheck::to_string(a.default_value), a.help});
  return s;
}

std::string prefixed(const std::string& text, const std::string& prefix) {
  std::string out, line;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '\n') {
      if (i == text.size() && line.empty()) break;
      std::string full = prefix + line;
      while (!full.empty() && full.back() == ' ') full.pop_back();
      out += full + "\n";
      line.clear();
    } else {
      line += text[i];
    }
  }
  return out;
}

std::string not_implemented_message(const std::string& target) {
  return fmt::format("{} is not implemented yet: this is the stub that `gnncheck skeleton` wrote", target);
}

std::string tensor_comment(const SkeletonTensor& t, bool as_int64) {
  std::string c = t.lives == "parameter" ? fmt::format("{}, a parameter", t.shape) : fmt::format("{} on {}", t.shape, t.lives);
  if (!t.index_range.empty())
    c += as_int64 ? fmt::format("; an index tensor: int64 in [0, {}), no gradient", t.index_range)
                  : fmt::format("; an index tensor: integers in [0, {}) stored as numbers (convert to int64), no gradient",
                                t.index_range);
  if (!t.absent_when.empty()) c += fmt::format("; absent when {}", t.absent_when);
  return c;
}

std::pair<std::string, std::string> example_declaration(const oracle::TargetSpec& spec) {
  for (const auto& a : spec.attributes)
    if (!a.choices.empty()) return {a.name, std::get<std::string>(a.default_value)};
  if (spec.attributes.empty()) return {};
  const auto& a = spec.attributes.front();
  return {a.name, to_plain_string(a.default_value)};
}

}  // namespace gnncheck::suites
