#include "properties/case_attributes.h"

#include <algorithm>
#include <cstdint>

#include "properties/draws.h"

namespace gnncheck::properties {

DrawnAttributes draw_attributes(const oracle::TargetSpec& spec, const CaseOptions& options) {
  std::vector<std::int64_t> widths;
  for (std::int64_t w : {1, 2, 3, 5, 7, 8, 16, 31, 33, 40, 64})
    if (w <= options.max_width) widths.push_back(w);
  const auto open = [&](const std::string& name) { return !options.attribute_values.count(name); };
  const std::vector<std::string> width_names = oracle::width_attributes(spec);
  const auto is_width = [&](const std::string& name) {
    return std::find(width_names.begin(), width_names.end(), name) != width_names.end();
  };
  DrawnAttributes out;
  bool has_heads = false, has_bias = false;
  for (const auto& a : spec.attributes) {
    if (is_width(a.name) && open(a.name)) out.open_widths.push_back(a.name);
    has_heads = has_heads || a.name == "heads";
    has_bias = has_bias || a.name == "bias";
    if (const auto fixed = options.attribute_values.find(a.name); fixed != options.attribute_values.end()) {
      out.attributes.set(a.name, pick(fixed->second));
    } else if (a.name == "heads") {
      // 1 head in 1/4 of the cases, 2 up to max_heads in the rest.
      const bool one = options.max_heads < 2 || fixed_fraction_draw(4) == 0;
      out.attributes.set(a.name, one ? std::int64_t{1} : *rc::gen::inRange<std::int64_t>(2, options.max_heads + 1));
    } else if (is_width(a.name)) {
      out.attributes.set(a.name, pick(widths));
    } else if (a.name == "norm") {
      out.attributes.set(a.name, pick(std::vector<std::string>{"symmetric", "row_mean"}));
    } else if (a.name == "source_degree") {
      out.attributes.set(a.name, pick(std::vector<std::string>{"out", "in"}));
    } else if (a.name == "negative_slope") {  // PyG's default, a small and a large slope, no kink at all
      out.attributes.set(a.name, pick(std::vector<double>{0.2, 0.01, 0.5, 1.0}));
    } else if (a.name == "attn_dropout") {  // off in half the cases (the evaluation mode)
      out.attributes.set(a.name, pick(std::vector<double>{0.0, 0.0, 0.3, 0.6}));
    } else if (a.name == "relations" || a.name == "node_types") {  // one type, and up to 4 (an empty one is drawn with the types)
      out.attributes.set(a.name, *rc::gen::inRange<std::int64_t>(1, 5));
    } else if (a.name == "bases") {  // R-GCN: one weight per relation, or 1–2 shared bases
      out.attributes.set(a.name, *rc::gen::inRange<std::int64_t>(0, 3));
    } else if (a.name == "root_weight") {
      out.attributes.set(a.name, *rc::gen::arbitrary<bool>());
    } else if (a.name == "dropout_seed") {
      out.attributes.set(a.name, *rc::gen::inRange<std::int64_t>(0, 1000));
    } else if (a.name == "self_loops" || a.name == "concat" || a.name == "bias") {
      out.attributes.set(a.name, *rc::gen::arbitrary<bool>());
    } else if (a.drawn && !a.choices.empty()) {
      out.attributes.set(a.name, pick(a.choices));
    }
  }
  out.free_heads = has_heads && open("heads") && options.max_heads >= 2;
  out.bias_open = has_bias && open("bias");
  return out;
}

}  // namespace gnncheck::properties
